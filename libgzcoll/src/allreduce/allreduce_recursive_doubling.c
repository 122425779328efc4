/*
 * allreduce_recursive_doubling.c - allreduce by recursive doubling on
 * encoded integer codes ("ReDoub", as in gZCCL), in the integer domain.
 *
 * Algorithm
 *   Every rank holds its quantized contribution as int64 codes. In step k
 *   (k = 0 .. log2(P') - 1) each rank encodes its whole partial result,
 *   exchanges it with the rank whose (new) rank differs in bit k, decodes the
 *   partner's codes and combines them exactly (add, max or min of integers).
 *   After log2(P') steps every rank holds the same integer total.
 *   Integer combination is exact and associative, so no error grows with
 *   the hops and every rank ends with the same codes, bit for bit.
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
 *   whole buffer:  S alpha + S D / CR beta
 *   compression:   S encode(n) + S decode-reduce(n) on the critical path
 *                  (plus the quantize and dequantize of the caller).
 *   Few, large codec calls: good when per-call codec overhead is high or P
 *   is large relative to n. Messages of any size (gz_xfer splits them).
 *
 * Restrictions
 *   Ops SUM, MAX, MIN on int64 codes (commutative). A local codec failure
 *   (overflow, corrupt input) is remembered and the exchange continues so
 *   no partner waits; the caller agrees on the outcome.
 */
#include "coll_internal.h"

#include <math.h>

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  size_t cap = gz_codes_bound(a->count);
  (void)ctx;
  if (a->count && !cap)
    return SIZE_MAX;
  return gz_ws_add(gz_ws_add(0, cap, 1), cap, 1);
}

/* Encode acc, send it to dest and/or receive from src, reduce (or, with
 * replace, decode) what arrived into acc. Codec failures go to *local. */
static gz_result_t exchange(gz_ctx_t ctx, void *acc, int narrow, size_t count, gz_op_t op,
                            int dest, int src, int replace, unsigned char *sbuf,
                            unsigned char *rbuf, size_t cap, gz_run_t *run,
                            gz_result_t *local) {
  size_t ssize = 0, rsize = 0;
  gz_result_t rc;
  if (dest != MPI_PROC_NULL) {
    rc = gz_run_encode_w(run, acc, narrow, count, sbuf, cap, &ssize);
    if (rc != GZ_OK && *local == GZ_OK)
      *local = rc;
    run->bytes_raw += count * run->esz;
  }
  rc = gz_xfer(ctx, GZ_TAG_REDOUB, sbuf, ssize, dest, rbuf, cap, src, &rsize, run);
  if (rc == GZ_OK && src != MPI_PROC_NULL) {
    gz_result_t codec =
        replace ? gz_run_decode_w(run, rbuf, rsize, acc, narrow, count)
                : gz_run_decode_reduce_w(run, op, rbuf, rsize, acc, narrow, count);
    if (codec != GZ_OK && *local == GZ_OK)
      *local = codec;
  }
  return rc;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  void *acc = j->codes;
  int narrow = j->narrow;
  size_t count = j->a->count;
  gz_op_t op = j->a->op;
  gz_run_t *run = j->run;
  int P = ctx->size, rank = ctx->rank, pof2 = 1, rem, newrank;
  size_t cap = gz_codes_bound(count);
  unsigned char *sbuf = gz_ws_take(ctx, cap, 1), *rbuf = gz_ws_take(ctx, cap, 1);
  gz_result_t rc = GZ_OK, local = GZ_OK;

  if (!sbuf || !rbuf)
    return GZ_ERR_NOMEM; /* reservation too small: a bug, caught in tests */
  while (pof2 * 2 <= P)
    pof2 *= 2;
  rem = P - pof2;

  /* fold the first 2r ranks into r */
  if (rank < 2 * rem) {
    if (rank % 2 == 0) {
      rc = exchange(ctx, acc, narrow, count, op, rank + 1, MPI_PROC_NULL, 0, sbuf, rbuf,
                    cap, run, &local);
      newrank = -1;
    } else {
      rc = exchange(ctx, acc, narrow, count, op, MPI_PROC_NULL, rank - 1, 0, sbuf, rbuf,
                    cap, run, &local);
      newrank = rank / 2;
    }
    if (rc != GZ_OK)
      goto fn_exit;
  } else {
    newrank = rank - rem;
  }

  /* recursive doubling among pof2 ranks, whole buffer each step */
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      int np = newrank ^ mask;
      int partner = np < rem ? np * 2 + 1 : np + rem;
      rc = exchange(ctx, acc, narrow, count, op, partner, partner, 0, sbuf, rbuf, cap,
                    run, &local);
      if (rc != GZ_OK)
        goto fn_exit;
    }
  }

  /* hand the total back to the ranks that sat out */
  if (rank < 2 * rem) {
    if (rank % 2)
      rc = exchange(ctx, acc, narrow, count, op, rank - 1, MPI_PROC_NULL, 1, sbuf, rbuf,
                    cap, run, &local);
    else
      rc = exchange(ctx, acc, narrow, count, op, MPI_PROC_NULL, rank + 1, 1, sbuf, rbuf,
                    cap, run, &local);
    if (rc != GZ_OK)
      goto fn_exit;
  }
  rc = local;
fn_exit:
  return rc;
}

static double cost(const gz_cost_t *c) {
  double k = floor(log2(c->P)), S = k + (ldexp(1.0, (int)k) != c->P ? 2 : 0);
  return 3 * c->g + S * (c->alpha + c->C * c->beta) + (2 + 2 * S) * c->n * c->t;
}

const gz_algorithm_t gz_algo_allreduce_recursive_doubling = {
    .name = "redoub", .coll = GZ_COLL_ALLREDUCE, .ws = ws, .run = run, .cost = cost};
