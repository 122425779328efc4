/*
 * allreduce_recursive_doubling_device.c - device-centric ReDoub allreduce
 * (gZCCL's design): the whole buffer stays on the GPU; quantization, the
 * indexed encoding of the codes, decode-and-combine and dequantization are
 * kernels on the context's stream, in the context's preallocated device
 * pool. Written against the backend table (device/backend.h), so a rank
 * whose buffers are on the host runs the same algorithm with the CPU
 * operations, and GZCOLL_BACKEND=ops runs it entirely on the CPU (how the
 * CPU test suite covers this file).
 *
 * Algorithm
 *   As allreduce_recursive_doubling.c (same pairing, same non-power-of-two
 *   fold), in the quantized-integer domain: the integer total, hence every
 *   result byte, equals the CPU path's.
 *
 * Cost per step (n codes, D raw bytes, CR ratio)
 *   alpha + D / CR beta + encode(n) + decode-reduce(n) on the GPU, plus one
 *   stream synchronisation (the encoded size is needed by MPI) and, without
 *   CUDA-aware MPI, two staging copies of D / CR bytes over PCIe/NVLink-C2C.
 *   Per call: one range pass (SUM or REL), quantize, dequantize, max |code|,
 *   and the usual two small agreements plus one for the device decision.
 *
 * Restrictions
 *   SUM, MAX, MIN. sendbuf and recvbuf on the same side (both device or
 *   both host), else GZ_ERR_ARG. The call's memory (codes 8 n, two
 *   encodings, the kernels' scratch) must fit cfg.device_pool_bytes, else
 *   GZ_ERR_NOMEM on every rank: split larger buffers. The forced "ring" has
 *   no device variant and runs as this algorithm (the report says so).
 *   Uncompressed (forced mpi, escape values): MPI on pieces of GZ_DEV_PIECE
 *   elements staged through pinned memory.
 *   Not yet: overlapping the kernels of step k with the transfer of step k
 *   (pipelining by segment).
 */
#include "coll_internal.h"

#include "gz_device.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void scale(gz_dtype_t dtype, void *buf, size_t n, double divisor) {
  if (divisor == 1.0)
    return;
  if (dtype == GZ_FLOAT32) {
    float *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = (float)((double)x[i] / divisor);
  } else {
    double *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = x[i] / divisor;
  }
}

static MPI_Op mpi_op(gz_op_t op) {
  return op == GZ_OP_MAX ? MPI_MAX : op == GZ_OP_MIN ? MPI_MIN : MPI_SUM;
}

/* MPI on the original values, GZ_DEV_PIECE elements at a time on every rank
 * (device memory staged through pinned memory). */
static gz_result_t plain(gz_ctx_t ctx, gz_exec_t *ex, const void *sendbuf, void *recvbuf,
                         size_t count, gz_dtype_t dtype, gz_op_t op, double divisor) {
  size_t esz = gz_dtype_size(dtype);
  const char *in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  gz_result_t local = GZ_OK;
  for (size_t off = 0; off < count; off += GZ_DEV_PIECE) {
    size_t len = count - off < GZ_DEV_PIECE ? count - off : GZ_DEV_PIECE;
    char *out = (char *)recvbuf + off * esz;
    if (ex->be->on_device) {
      void *h = ctx->hstage.base;
      if (ex->be->memcpy(ex, h, in + off * esz, len * esz) != GZ_OK ||
          ex->be->sync(ex) != GZ_OK)
        local = GZ_ERR_UNSUPPORTED;
      if (MPI_Allreduce(MPI_IN_PLACE, h, (int)len, gz_mpi_type(dtype), mpi_op(op),
                        ctx->comm) != MPI_SUCCESS)
        return GZ_ERR_MPI;
      scale(dtype, h, len, divisor);
      if (ex->be->memcpy(ex, out, h, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK)
        local = GZ_ERR_UNSUPPORTED;
    } else {
      if (MPI_Allreduce(sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : in + off * esz, out,
                        (int)len, gz_mpi_type(dtype), mpi_op(op),
                        ctx->comm) != MPI_SUCCESS)
        return GZ_ERR_MPI;
      scale(dtype, out, len, divisor);
    }
  }
  return gz_agree_final(ctx, local);
}

typedef struct step_bufs {
  unsigned char *sbuf, *rbuf, *stage;
  size_t cap;
} step_bufs_t;

/* Encode acc, send to dest and/or receive from src, combine (or replace). */
static gz_result_t exchange(gz_ctx_t ctx, gz_exec_t *ex, int64_t *acc, size_t count,
                            int op, int dest, int src, const step_bufs_t *b,
                            gz_run_t *run, gz_result_t *local) {
  size_t ssize = 0, rsize = 0;
  gz_result_t rc;
  if (dest != MPI_PROC_NULL) {
    double t = MPI_Wtime();
    rc = gz_exec_encode(ex, acc, count, b->sbuf, b->cap, &ssize);
    run->t_codec += MPI_Wtime() - t;
    run->passes += count;
    if (rc == GZ_OK) {
      run->code_elems += count;
      run->code_bytes += ssize;
    } else if (*local == GZ_OK) {
      *local = rc;
    }
    run->bytes_raw += count * run->esz;
  }
  rc = gz_dev_xfer(ctx, ex, GZ_TAG_DEVICE, b->sbuf, ssize, dest, b->rbuf, b->cap, src,
                   &rsize, b->stage, run);
  if (rc == GZ_ERR_MPI)
    return rc;
  if (rc != GZ_OK && *local == GZ_OK)
    *local = rc;
  if (src != MPI_PROC_NULL) {
    gz_result_t codec = ex->be->decode_reduce(ex, op, b->rbuf, rsize, acc, count);
    run->passes += count;
    if (codec != GZ_OK && *local == GZ_OK)
      *local = codec;
  }
  return GZ_OK;
}

static gz_result_t redoub(gz_ctx_t ctx, gz_exec_t *ex, int64_t *acc, size_t count,
                          gz_op_t op, const step_bufs_t *b, gz_run_t *run) {
  int P = ctx->size, rank = ctx->rank, pof2 = 1, rem, newrank;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  while (pof2 * 2 <= P)
    pof2 *= 2;
  rem = P - pof2;
  if (rank < 2 * rem) {
    if (rank % 2 == 0) {
      rc = exchange(ctx, ex, acc, count, op, rank + 1, MPI_PROC_NULL, b, run, &local);
      newrank = -1;
    } else {
      rc = exchange(ctx, ex, acc, count, op, MPI_PROC_NULL, rank - 1, b, run, &local);
      newrank = rank / 2;
    }
    if (rc != GZ_OK)
      return rc;
  } else {
    newrank = rank - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      int np = newrank ^ mask, partner = np < rem ? np * 2 + 1 : np + rem;
      rc = exchange(ctx, ex, acc, count, op, partner, partner, b, run, &local);
      if (rc != GZ_OK)
        return rc;
    }
  }
  if (rank < 2 * rem) {
    if (rank % 2)
      rc = exchange(ctx, ex, acc, count, GZ_DEV_OP_REPLACE, rank - 1, MPI_PROC_NULL, b,
                    run, &local);
    else
      rc = exchange(ctx, ex, acc, count, GZ_DEV_OP_REPLACE, MPI_PROC_NULL, rank + 1, b,
                    run, &local);
    if (rc != GZ_OK)
      return rc;
  }
  rc = ex->be->sync(ex); /* deferred decode / overflow flags */
  return local != GZ_OK ? local : rc;
}

gz_result_t gz_allreduce_device(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                                size_t count, gz_dtype_t dtype, gz_op_t op,
                                double divisor, int local_dev, gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_exec_t ex;
  step_bufs_t b = {NULL, NULL, NULL, 0};
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const void *in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  const char *why = NULL;
  char reason[96];
  int64_t *codes = NULL, amax = 0;
  int P = ctx->size, agreed = 0, on_dev = local_dev > 0 && ctx->dev_ready;
  double rmax, rb, u = dtype == GZ_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  size_t ws;

  gz_run_begin(&run, dtype);
  gz_exec_make(ctx, on_dev, 0, &ex);
  if (local_dev < 0)
    local = GZ_ERR_ARG; /* one buffer on the device, the other on the host */
  else if (local_dev > 0 && !ctx->dev_ready)
    local = GZ_ERR_UNSUPPORTED;
  if (!gz_dtype_size(dtype) || (op != GZ_OP_SUM && op != GZ_OP_MAX && op != GZ_OP_MIN) ||
      (count && (!recvbuf || !in)) || !(divisor > 0) || !isfinite(divisor) ||
      count > (size_t)INT32_MAX * GZ_DEV_PIECE)
    local = GZ_ERR_ARG;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)((int)dtype * 4 + (int)op);
  ag.sig[3] = divisor;
  rc = gz_select(ctx, GZ_COLL_ALLREDUCE, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit;
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }
  snprintf(reason, sizeof reason, "device-centric redoub on %s%s", ex.be->name,
           ch.algo == GZ_ALGO_RING ? " (ring has no device variant)" : "");

  /* the call's memory, then the range (SUM bound, REL) */
  b.cap = ex.be->encode_bound(count);
  ws = gz_ws_add(0, count, sizeof(int64_t));
  ws = gz_ws_add(ws, b.cap, 1);
  ws = gz_ws_add(ws, b.cap, 1);
  ws = gz_ws_add(ws, ex.be->tmp_bytes(count), 1);
  if (count && !b.cap)
    ws = SIZE_MAX;
  local = gz_dev_reserve(ctx, on_dev, ws);
  if (local == GZ_OK && on_dev && !ctx->cuda_aware &&
      gz_ws_add(gz_ws_add(0, b.cap, 1), b.cap, 1) > ctx->hstage.cap)
    local = GZ_ERR_NOMEM;
  if (local == GZ_OK) {
    codes = gz_dev_take(ctx, on_dev, count, sizeof(int64_t));
    b.sbuf = gz_dev_take(ctx, on_dev, b.cap, 1);
    b.rbuf = gz_dev_take(ctx, on_dev, b.cap, 1);
    ex.tmp_bytes = ex.be->tmp_bytes(count);
    ex.tmp = gz_dev_take(ctx, on_dev, ex.tmp_bytes, 1);
    b.stage = ctx->hstage.base;
    if (!codes || !b.sbuf || !b.rbuf || !ex.tmp)
      local = GZ_ERR_NOMEM;
  }
  if (local == GZ_OK && (op == GZ_OP_SUM || ctx->cfg.eb_mode == GZ_EB_REL))
    local = ex.be->range(&ex, dtype, in, count, &ag.lo, &ag.hi, &ag.absmax);
  if (local != GZ_OK) {
    ag.err = local;
    why = "device path: setup failed";
    goto uncompressed;
  }
  rc = gz_plan_agreed(ctx, &ag, op == GZ_OP_SUM ? P : 1, op == GZ_OP_SUM ? divisor : 1.0,
                      &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  /* quantize once, agree (escape -> MPI) */
  {
    double t = MPI_Wtime();
    local = ex.be->quantize(&ex, dtype, in, count, plan.eb, plan.code_limit, codes);
    if (local == GZ_OK)
      local = ex.be->sync(&ex);
    run.t_codec += MPI_Wtime() - t;
    run.passes += count;
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  rc = redoub(ctx, &ex, codes, count, op, &b, &run);
  rc = gz_agree_final(ctx, rc);
  if (rc != GZ_OK)
    goto fn_exit;
  {
    double t = MPI_Wtime();
    rc = ex.be->dequantize(&ex, dtype, codes, count, plan.eb / divisor, recvbuf);
    if (rc == GZ_OK)
      rc = ex.be->absmax(&ex, codes, count, &amax); /* waits for the dequantize too */
    run.t_codec += MPI_Wtime() - t;
    run.passes += count;
  }
  if (rc != GZ_OK)
    goto fn_exit;
  rmax = 2.0 * plan.eb * (double)amax / divisor;
  rb = op == GZ_OP_SUM ? gz_sum_bound(dtype, P, plan.eb, ag.absmax, rmax, divisor)
                       : plan.eb + gz_round_slop(dtype, rmax);
  gz_run_report(ctx, &run, report, GZ_ALGO_REDOUB, 1, plan.eb, rb, reason);
  goto fn_exit;

uncompressed:
  if (!agreed)
    rc = gz_agree(ctx, &ag);
  if (rc == GZ_OK)
    rc = plain(ctx, &ex, sendbuf, recvbuf, count, dtype, op, divisor);
  if (rc != GZ_OK)
    goto fn_exit;
  rb = op == GZ_OP_SUM ? gz_mpi_sum_bound(dtype, P, ag.absmax) / divisor +
                             (divisor != 1.0 ? u * P * ag.absmax / divisor : 0.0)
                       : 0.0;
  run.bytes_raw = run.bytes_sent =
      (uint64_t)(2.0 * (P - 1) / P * (double)count * (double)run.esz);
  gz_run_report(ctx, &run, report, GZ_ALGO_MPI, 0, 0.0, rb, why);
fn_exit:
  return rc;
}
