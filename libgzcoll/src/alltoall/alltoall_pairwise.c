/*
 * alltoall_pairwise.c - all-to-all by pairwise exchange of encoded integer
 * codes: each block is encoded once by its sender and decoded once by its
 * receiver.
 *
 * Algorithm
 *   In step s (s = 1 .. P-1) rank r sends block (r + s) mod P to that rank
 *   and receives block r from rank (r - s) mod P. Any P. The exchange of
 *   step s is in flight (Isend/Irecv) while the block of step s + 1 is
 *   encoded and the block of step s - 1 is decoded and dequantized (double
 *   buffers); the compressed size is learnt from the message (MPI_Get_count).
 *   Blocks whose bound exceeds the largest single message go through
 *   gz_xfer (in parts, without the overlap).
 *
 * Cost (n codes per block, D raw bytes per block, CR compression ratio)
 *   (P-1) (alpha + D / CR beta)
 *   compression: (P-1) encodes, (P-1) decodes + dequantizes of n, each
 *   overlapped with one exchange. Every element carries one quantization.
 *
 * Restrictions
 *   The own block is not touched (the caller copies it exactly).
 */
#include "coll_internal.h"

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  size_t cap = gz_codes_bound(a->count);
  (void)ctx;
  if (a->count && !cap)
    return SIZE_MAX;
  return gz_ws_add(gz_ws_add(0, 4, cap), a->count, sizeof(int64_t));
}

/* Decode a received block and write it, dequantized, into recvbuf. */
static gz_result_t land(gz_run_t *run, const unsigned char *buf, size_t size,
                        int64_t *tmp, void *recvbuf, int src, size_t count,
                        gz_dtype_t dtype, double eb) {
  char *dst = (char *)recvbuf + (size_t)src * count * gz_dtype_size(dtype);
  gz_result_t rc = gz_run_decode(run, buf, size, tmp, count);
  if (rc == GZ_OK)
    rc = gz_run_dequantize(run, dtype, tmp, count, eb, dst);
  return rc;
}

/* codes: P blocks of count codes, block d for rank d; block s from rank s
 * is decoded and dequantized (bound eb) into recvbuf + s * count. The
 * driver fills block r of recvbuf itself. */
static gz_result_t alltoall(gz_ctx_t ctx, const int64_t *codes, void *recvbuf,
                            size_t count, gz_dtype_t dtype, double eb, gz_run_t *run) {
  int P = ctx->size, r = ctx->rank;
  size_t cap = gz_codes_bound(count), ssize[2] = {0, 0}, rsize[2] = {0, 0};
  int rsrc[2] = {0, 0};
  unsigned char *sbuf[2], *rbuf[2];
  int64_t *tmp;
  gz_result_t rc = GZ_OK, local = GZ_OK, codec;
  MPI_Request req[2];
  MPI_Status st[2];

  sbuf[0] = gz_ws_take(ctx, 4, cap);
  tmp = gz_ws_take(ctx, count, sizeof(int64_t));
  if (!sbuf[0] || !tmp)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  sbuf[1] = sbuf[0] + cap;
  rbuf[0] = sbuf[1] + cap;
  rbuf[1] = rbuf[0] + cap;
  if (P == 1)
    goto fn_exit;

  if (cap > ctx->part_bytes) { /* huge blocks: one blocking exchange per step */
    for (int s = 1; s < P; s++) {
      int dst = (r + s) % P, src = (r - s + P) % P;
      size_t got = 0;
      codec =
          gz_run_encode(run, codes + (size_t)dst * count, count, sbuf[0], cap, &ssize[0]);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
      run->bytes_raw += count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_ALLTOALL, sbuf[0], ssize[0], dst, rbuf[0], cap, src, &got,
                   run);
      if (rc != GZ_OK)
        goto fn_exit;
      codec = land(run, rbuf[0], got, tmp, recvbuf, src, count, dtype, eb);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
    }
    rc = local;
    goto fn_exit;
  }

  /* double buffers: step s in flight while step s + 1 is encoded and step
   * s - 1 lands */
  local = gz_run_encode(run, codes + (size_t)((r + 1) % P) * count, count, sbuf[1], cap,
                        &ssize[1]);
  for (int s = 1; s < P; s++) {
    int dst = (r + s) % P, src = (r - s + P) % P, b = s & 1, bytes = 0;
    run->bytes_raw += count * run->esz;
    run->bytes_sent += ssize[b];
    if (MPI_Irecv(rbuf[b], (int)cap, MPI_BYTE, src, GZ_TAG_ALLTOALL, ctx->comm,
                  &req[0]) != MPI_SUCCESS ||
        MPI_Isend(sbuf[b], (int)ssize[b], MPI_BYTE, dst, GZ_TAG_ALLTOALL, ctx->comm,
                  &req[1]) != MPI_SUCCESS) {
      rc = GZ_ERR_MPI;
      goto fn_exit;
    }
    if (s + 1 < P) {
      codec = gz_run_encode(run, codes + (size_t)((r + s + 1) % P) * count, count,
                            sbuf[!b], cap, &ssize[!b]);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
    }
    if (s > 1) {
      codec = land(run, rbuf[!b], rsize[!b], tmp, recvbuf, rsrc[!b], count, dtype, eb);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
    }
    if (MPI_Waitall(2, req, st) != MPI_SUCCESS) {
      rc = GZ_ERR_MPI;
      goto fn_exit;
    }
    MPI_Get_count(&st[0], MPI_BYTE, &bytes);
    rsize[b] = (size_t)bytes;
    rsrc[b] = src;
  }
  codec = land(run, rbuf[(P - 1) & 1], rsize[(P - 1) & 1], tmp, recvbuf,
               rsrc[(P - 1) & 1], count, dtype, eb);
  if (codec != GZ_OK && local == GZ_OK)
    local = codec;
  rc = local;
fn_exit:
  return rc;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return alltoall(ctx, j->codes, j->a->recvbuf, j->a->count, j->a->dtype, j->eb, j->run);
}

static double cost(const gz_cost_t *c) {
  return 3 * c->g + c->P * c->n * c->t +
         (c->P - 1) * (c->alpha + c->C * c->beta + 3 * c->n * c->t);
}

const gz_algorithm_t gz_algo_alltoall_pairwise = {
    .name = "pairwise", .coll = GZ_COLL_ALLTOALL, .ws = ws, .run = run, .cost = cost};
