/*
 * allreduce_recursive_doubling.c - allreduce by recursive doubling on
 * encoded integer codes ("ReDoub", as in gZCCL), in the integer domain.
 * Written once against the backend table (device/backend.h): the host row
 * runs it with the CPU operations (int32 codes when the agreed range lets
 * every sum fit, gz_codes_fit32), the device row with the backend of the
 * rank's buffers (CUDA: the whole buffer stays on the GPU, in the
 * context's device pool; the CPU for a rank whose buffers are on the host,
 * or everywhere under GZCOLL_BACKEND=ops), so the CPU tests run the very
 * code the GPU runs.
 *
 * Algorithm
 *   Every rank holds its quantized contribution as integer codes. In step k
 *   (k = 0 .. log2(P') - 1) each rank encodes its whole partial result,
 *   exchanges it with the rank whose (new) rank differs in bit k, decodes the
 *   partner's codes and combines them exactly (add, max or min of integers).
 *   After log2(P') steps every rank holds the same integer total.
 *   Integer combination is exact and associative, so no error grows with
 *   the hops and every rank ends with the same codes, bit for bit, on
 *   either backend.
 *
 * Non-power-of-two P
 *   With P' = 2^floor(log2 P) and r = P - P', the first 2r ranks pair up
 *   before the doubling: each even rank sends its encoded codes to the odd
 *   rank above it and sits out; the odd ranks (new rank = rank / 2) and the
 *   ranks >= 2r (new rank = rank - r) run the doubling among P' ranks; at the
 *   end each odd rank < 2r sends the encoded total back to its even partner.
 *
 * Cost (n codes, D raw bytes, CR compression ratio of the codes)
 *   S = log2 P' steps (+ 2 when P is not a power of two), each moving the
 *   whole buffer:  S alpha + S D / CR beta, beta the slower of the
 *                  compressed path and the MPI path (cost, below); at
 *                  P = 2 the probed link's too (the probe's own step)
 *   compression:   S encode(n) + S decode-reduce(n) on the critical path
 *                  (plus the quantize and dequantize of the caller; the
 *                  first encode runs inside the quantization, from L1:
 *                  the host row's first hook, the device row's first_msg;
 *                  on the host a rank's last receive decodes, combines and
 *                  writes the values in one pass, so the caller does not
 *                  dequantize, except on the odd ranks < 2r, which send
 *                  the total after it).
 *   Few, large codec calls: good when per-call codec overhead is high or P
 *   is large relative to n. Messages of any size (gz_xfer splits them).
 *   On a GPU each step also waits once for the encoded size (MPI needs it)
 *   and, without CUDA-aware MPI, copies D / CR bytes each way through the
 *   pinned staging.
 *
 * Restrictions
 *   Ops SUM, MAX, MIN on integer codes (commutative). A local codec failure
 *   (overflow, corrupt input) is remembered and the exchange continues so
 *   no partner waits; the caller agrees on the outcome. Device buffers: the
 *   call's memory (codes 8 n, two encodings, the kernels' scratch) must fit
 *   cfg.device_pool_bytes, else GZ_ERR_NOMEM on every rank; the forced
 *   "ring" has no device variant and runs as this algorithm (the report
 *   says so). Not yet: overlapping the kernels of step k with its transfer.
 */
#include "coll_internal.h"

#include "gz_device.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct step {
  gz_ctx_t ctx;
  gz_exec_t *ex;
  void *acc; /* int64 codes, int32 with ex->narrow */
  size_t count;
  unsigned char *sbuf, *rbuf;
  size_t cap;
  size_t pre; /* sbuf already holds acc encoded (the driver's fused
                 quantize-encode, first_msg): bytes, 0 if not */
  gz_run_t *run;
  gz_result_t local; /* the first local failure */
  gz_values_t *vals; /* set for this rank's last receive (host row): it
                        writes the result's values, not acc */
} step_t;

/* Encode acc, send it to dest and/or receive from src, combine what arrived
 * into acc with op (GZ_DEV_OP_REPLACE: take it). */
static gz_result_t exchange(step_t *s, int op, int dest, int src) {
  gz_exec_t *ex = s->ex;
  size_t ssize = dest != MPI_PROC_NULL ? s->pre : 0, rsize = 0;
  double t;
  gz_result_t rc = GZ_OK;
  s->pre = 0; /* acc changes below, or sbuf is reused */
  if (dest != MPI_PROC_NULL && !ssize) {
    t = MPI_Wtime();
    rc = gz_exec_encode(ex, s->acc, s->count, s->sbuf, s->cap, &ssize);
    s->run->t_codec += MPI_Wtime() - t;
    s->run->passes += s->count;
  }
  if (dest != MPI_PROC_NULL) {
    if (rc == GZ_OK) {
      s->run->code_elems += s->count;
      s->run->code_bytes += ssize;
    } else if (s->local == GZ_OK) {
      s->local = rc;
    }
    s->run->bytes_raw += s->count * s->run->esz;
  }
  rc = gz_dev_xfer(s->ctx, ex, GZ_TAG_REDOUB, s->sbuf, ssize, dest, s->rbuf, s->cap, src,
                   &rsize, s->ctx->hstage.base, s->run);
  if (rc == GZ_ERR_MPI)
    return rc;
  if (rc != GZ_OK && s->local == GZ_OK)
    s->local = rc;
  if (src != MPI_PROC_NULL && s->vals) { /* the last decode: into the values */
    rc = op == GZ_DEV_OP_REPLACE
             ? gz_run_decode_values(s->run, s->rbuf, rsize, s->vals, 0, s->count)
             : gz_run_decode_reduce_values(s->run, (gz_op_t)op, s->rbuf, rsize, s->acc,
                                           ex->narrow, s->vals, 0, s->count);
    if (rc != GZ_OK && s->local == GZ_OK)
      s->local = rc;
  } else if (src != MPI_PROC_NULL) {
    t = MPI_Wtime();
    rc = ex->be->decode_reduce(ex, op, s->rbuf, rsize, s->acc, s->count);
    s->run->t_codec += MPI_Wtime() - t;
    s->run->passes += s->count;
    if (rc != GZ_OK && s->local == GZ_OK)
      s->local = rc;
  }
  return GZ_OK;
}

/* With s->vals, the rank's last receive writes the values; s->vals is left
 * set only if one did (a rank that sends after it keeps its codes). */
static gz_result_t redoub(step_t *s, int op) {
  int P = s->ctx->size, rank = s->ctx->rank, pof2 = 1, rem, newrank;
  gz_values_t *vals = s->vals;
  gz_result_t rc = GZ_OK;
  while (pof2 * 2 <= P)
    pof2 *= 2;
  rem = P - pof2;
  s->vals = NULL;

  /* fold the first 2r ranks into r */
  if (rank < 2 * rem) {
    newrank = rank % 2 ? rank / 2 : -1;
    rc = rank % 2 ? exchange(s, op, MPI_PROC_NULL, rank - 1)
                  : exchange(s, op, rank + 1, MPI_PROC_NULL);
  } else {
    newrank = rank - rem;
  }

  /* recursive doubling among pof2 ranks, whole buffer each step */
  for (int mask = 1; rc == GZ_OK && newrank >= 0 && mask < pof2; mask <<= 1) {
    int np = newrank ^ mask, partner = np < rem ? np * 2 + 1 : np + rem;
    if (mask * 2 >= pof2 && rank >= 2 * rem) /* the last step, nothing sent after */
      s->vals = vals;
    rc = exchange(s, op, partner, partner);
  }

  /* hand the total back to the ranks that sat out */
  if (rc == GZ_OK && rank < 2 * rem) {
    s->vals = rank % 2 ? NULL : vals; /* the even rank receives the total */
    rc = rank % 2 ? exchange(s, GZ_DEV_OP_REPLACE, rank - 1, MPI_PROC_NULL)
                  : exchange(s, GZ_DEV_OP_REPLACE, MPI_PROC_NULL, rank + 1);
  }
  if (rc != GZ_OK)
    return rc;
  rc = s->ex->be->sync(s->ex); /* deferred decode / overflow flags */
  return s->local != GZ_OK ? s->local : rc;
}

/* The call's backend: the device path's, else the CPU's. */
static const gz_backend_t *backend(const gz_args_t *a) {
  return a->ex ? a->ex->be : &gz_backend_cpu;
}

/* The host row's first message: the whole buffer, encoded while quantizing
 * (the codes are kept: every step combines into them). */
static void first(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f) {
  int P = ctx->size, pof2 = 1;
  while (pof2 * 2 <= P)
    pof2 *= 2;
  f->off = 0; /* none where the first step only receives (odd ranks < 2r) */
  f->len = P > 1 && !(ctx->rank < 2 * (P - pof2) && ctx->rank % 2) ? a->count : 0;
  f->piece = a->count;
  f->stride = gz_codes_indexed_bound(a->count);
  f->keep = 1;
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  const gz_backend_t *be = backend(a);
  size_t cap = be->encode_bound(a->count), two = gz_ws_add(gz_ws_add(0, cap, 1), cap, 1);
  if (a->count && !cap)
    return SIZE_MAX;
  if (be->on_device && !ctx->cuda_aware && two > ctx->hstage.cap)
    return SIZE_MAX; /* the staging cannot hold one exchange: GZ_ERR_NOMEM */
  return gz_ws_add(two, 1, sizeof(size_t)); /* + the first message's size */
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_exec_t cpu, *ex = a->ex;
  uint64_t size_slot = 0;
  gz_values_t vals = {a->dtype, a->out, j->eb / a->divisor, 0};
  step_t s = {.ctx = ctx, .acc = j->codes, .count = a->count, .run = j->run};
  gz_result_t rc;
  int on_dev;
  if (!ex) { /* the host row: the CPU operations, on int32 codes where they fit */
    gz_exec_make(ctx, 0, 0, &cpu);
    cpu.size_out = &size_slot;
    cpu.narrow = j->narrow;
    ex = &cpu;
  } else {
    int other = j->chosen && strcmp(j->chosen->name, "redoub") != 0;
    snprintf(j->reason, sizeof j->reason, "device-centric redoub on %s%s%s%s",
             ex->be->name, other ? " (" : "", other ? j->chosen->name : "",
             other ? " has no device variant)" : "");
  }
  on_dev = ex->be->on_device;
  s.ex = ex;
  s.cap = ex->be->encode_bound(s.count);
  s.sbuf = j->msg0 ? j->msg0 : gz_dev_take(ctx, on_dev, s.cap, 1);
  s.pre = j->msg0 ? j->msg0_size : 0;
  s.rbuf = gz_dev_take(ctx, on_dev, s.cap, 1);
  if (!s.sbuf || !s.rbuf)
    return GZ_ERR_NOMEM; /* reservation too small: a bug, caught in tests */
  /* the host row's last decode writes the result's values (no dequantize) */
  s.vals = !a->ex && a->count > 0 && a->n_out == a->count ? &vals : NULL;
  rc = redoub(&s, (int)a->op);
  j->dequantized = s.vals != NULL;
  j->amax = vals.amax;
  return rc;
}

/* Each step is one whole-buffer exchange (both directions at once, its codec
 * passes before and after it): at the slower of the compressed path and the
 * MPI path, whose allreduce moves its data the same way (select.c). At P = 2
 * the one exchange is the probe's own step, a blocking MPI_Sendrecv with the
 * one other rank (its ring neighbours on both sides), so the link that step
 * measured bounds it too; at P > 2 the probe's ring step is another pattern
 * (docs/performance-model.md, "Formulas"). */
static double cost(const gz_cost_t *c) {
  double k = floor(log2(c->P)), S = k + (ldexp(1.0, (int)k) != c->P ? 2 : 0);
  double b = fmax(c->beta, c->beta_x);
  if (c->P == 2)
    b = fmax(b, c->beta_link);
  return 3 * c->g + S * (c->alpha + c->C * b) + (2 + 2 * S) * c->n * c->t;
}

const gz_algorithm_t gz_algo_allreduce_recursive_doubling = {.name = "redoub",
                                                             .coll = GZ_COLL_ALLREDUCE,
                                                             .ws = ws,
                                                             .run = run,
                                                             .cost = cost,
                                                             .first = first};
const gz_algorithm_t gz_algo_allreduce_recursive_doubling_device = {.name = "redoub",
                                                                    .coll =
                                                                        GZ_COLL_ALLREDUCE,
                                                                    .device = 1,
                                                                    .ws = ws,
                                                                    .run = run,
                                                                    .first_msg = 1};
