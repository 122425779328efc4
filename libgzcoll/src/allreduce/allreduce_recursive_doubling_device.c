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
 *   Uncompressed (forced mpi, escape values): allreduce_mpi_device.c.
 *   Not yet: overlapping the kernels of step k with the transfer of step k
 *   (pipelining by segment).
 */
#include "coll_internal.h"

#include "gz_device.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct step_bufs {
  unsigned char *sbuf, *rbuf, *stage;
  size_t cap;
  size_t pre; /* sbuf holds acc encoded (the driver's fused quantize-encode) */
} step_bufs_t;

/* Encode acc, send to dest and/or receive from src, combine (or replace). */
static gz_result_t exchange(gz_ctx_t ctx, gz_exec_t *ex, int64_t *acc, size_t count,
                            int op, int dest, int src, step_bufs_t *b, gz_run_t *run,
                            gz_result_t *local) {
  size_t ssize = dest != MPI_PROC_NULL ? b->pre : 0, rsize = 0;
  gz_result_t rc = GZ_OK;
  b->pre = 0; /* acc changes below, or sbuf is reused */
  if (dest != MPI_PROC_NULL && !ssize) {
    double t = MPI_Wtime();
    rc = gz_exec_encode(ex, acc, count, b->sbuf, b->cap, &ssize);
    run->t_codec += MPI_Wtime() - t;
    run->passes += count;
  }
  if (dest != MPI_PROC_NULL) {
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
                          gz_op_t op, step_bufs_t *b, gz_run_t *run) {
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

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  const gz_backend_t *be = a->ex->be;
  size_t cap = be->encode_bound(a->count), ws;
  if (a->count && !cap)
    return SIZE_MAX;
  if (be->on_device && !ctx->cuda_aware &&
      gz_ws_add(gz_ws_add(0, cap, 1), cap, 1) > ctx->hstage.cap)
    return SIZE_MAX; /* the staging cannot hold one exchange: GZ_ERR_NOMEM */
  ws = gz_ws_add(0, cap, 1);
  return gz_ws_add(ws, cap, 1);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  gz_exec_t *ex = j->a->ex;
  int on_dev = ex->be->on_device;
  size_t count = j->a->count;
  step_bufs_t b = {NULL, NULL, ctx->hstage.base, ex->be->encode_bound(count), 0};
  b.sbuf = j->msg0 ? j->msg0 : gz_dev_take(ctx, on_dev, b.cap, 1);
  b.pre = j->msg0 ? j->msg0_size : 0;
  b.rbuf = gz_dev_take(ctx, on_dev, b.cap, 1);
  int other = j->chosen && strcmp(j->chosen->name, "redoub") != 0;
  snprintf(j->reason, sizeof j->reason, "device-centric redoub on %s%s%s%s", ex->be->name,
           other ? " (" : "", other ? j->chosen->name : "",
           other ? " has no device variant)" : "");
  if (!b.sbuf || !b.rbuf)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  return redoub(ctx, ex, j->codes, count, j->a->op, &b, j->run);
}

const gz_algorithm_t gz_algo_allreduce_recursive_doubling_device = {.name = "redoub",
                                                                    .coll =
                                                                        GZ_COLL_ALLREDUCE,
                                                                    .device = 1,
                                                                    .ws = ws,
                                                                    .run = run,
                                                                    .first_msg = 1};
