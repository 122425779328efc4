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
 * Blocks are integer codes (gz_codes_encode), or under GZ_EB_PWREL the
 * values cast to a narrower format (a->cast, codec/cast.c): the same
 * exchange, only encode_block and land differ.
 *
 * Restrictions
 *   The own block is not touched (the caller copies it exactly).
 */
#include "coll_internal.h"

#include "codec/codec.h"

#include <string.h>

/* Largest encoding of one block. */
static size_t block_cap(const gz_args_t *a) {
  return a->cast ? gz_cast_bound(a->dtype, a->count) : gz_codes_indexed_bound(a->count);
}

/* Cast in place: the values are read while blocks land in the same buffer,
 * so they are copied first (codes were all taken before anything moved). */
static int cast_in_place(const gz_args_t *a) {
  return a->cast && a->sendbuf == GZ_IN_PLACE;
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  size_t cap = block_cap(a), esz = gz_dtype_size(a->dtype);
  (void)ctx;
  if (a->count && !cap)
    return SIZE_MAX;
  return gz_ws_add(
      gz_ws_add(gz_ws_add(0, 4, cap), a->cast ? 0 : a->count, sizeof(int64_t)),
      cast_in_place(a) ? a->total : 0, esz);
}

/* Encode the block for rank dst into out (a cast reads it from vals). */
static gz_result_t encode_block(const gz_job_t *j, const char *vals, int dst,
                                unsigned char *out, size_t cap, size_t *size) {
  const gz_args_t *a = j->a;
  size_t off = (size_t)dst * a->count;
  double t;
  gz_result_t rc;
  if (!a->cast)
    return gz_run_encode(j->run, j->codes + off, a->count, out, cap, size);
  t = MPI_Wtime();
  rc = gz_cast_encode(a->dtype, (gz_cast_t)a->cast, vals + off * j->run->esz, a->count,
                      out, cap, size);
  j->run->t_codec += MPI_Wtime() - t;
  return rc;
}

/* Decode the block received from rank src into its place in recvbuf
 * (codes: dequantized with bound j->eb, tmp holding the codes). */
static gz_result_t land(const gz_job_t *j, const unsigned char *buf, size_t size,
                        int64_t *tmp, int src) {
  const gz_args_t *a = j->a;
  char *dst = (char *)a->recvbuf + (size_t)src * a->count * j->run->esz;
  double t;
  gz_result_t rc;
  if (a->cast) {
    t = MPI_Wtime();
    rc = gz_cast_decode(a->dtype, (gz_cast_t)a->cast, buf, size, dst, a->count);
    j->run->t_codec += MPI_Wtime() - t;
    return rc;
  }
  rc = gz_run_decode(j->run, buf, size, tmp, a->count);
  if (rc == GZ_OK)
    rc = gz_run_dequantize(j->run, a->dtype, tmp, a->count, j->eb, dst);
  return rc;
}

/* Block d of the call goes to rank d; block s from rank s lands in recvbuf
 * + s * count. The driver fills block r of recvbuf itself. */
static gz_result_t alltoall(gz_ctx_t ctx, const gz_job_t *j) {
  int P = ctx->size, r = ctx->rank;
  size_t count = j->a->count, cap = block_cap(j->a), ssize[2] = {0, 0}, rsize[2] = {0, 0};
  int rsrc[2] = {0, 0};
  unsigned char *sbuf[2], *rbuf[2];
  int64_t *tmp;
  gz_result_t rc = GZ_OK, local = GZ_OK, codec;
  gz_run_t *run = j->run;
  const char *vals = j->a->in;
  MPI_Request req[2];
  MPI_Status st[2];

  sbuf[0] = gz_ws_take(ctx, 4, cap);
  tmp = gz_ws_take(ctx, j->a->cast ? 0 : count, sizeof(int64_t));
  if (cast_in_place(j->a)) {
    char *copy = gz_ws_take(ctx, j->a->total, run->esz);
    if (copy && j->a->total)
      memcpy(copy, vals, j->a->total * run->esz);
    vals = copy;
  }
  if (!sbuf[0] || (!tmp && !j->a->cast) || (!vals && j->a->total))
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
      codec = encode_block(j, vals, dst, sbuf[0], cap, &ssize[0]);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
      run->bytes_raw += count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_ALLTOALL, sbuf[0], ssize[0], dst, rbuf[0], cap, src, &got,
                   run);
      if (rc != GZ_OK)
        goto fn_exit;
      codec = land(j, rbuf[0], got, tmp, src);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
    }
    rc = local;
    goto fn_exit;
  }

  /* double buffers: step s in flight while step s + 1 is encoded and step
   * s - 1 lands */
  local = encode_block(j, vals, (r + 1) % P, sbuf[1], cap, &ssize[1]);
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
      codec = encode_block(j, vals, (r + s + 1) % P, sbuf[!b], cap, &ssize[!b]);
      if (codec != GZ_OK && local == GZ_OK)
        local = codec;
    }
    if (s > 1) {
      codec = land(j, rbuf[!b], rsize[!b], tmp, rsrc[!b]);
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
  codec = land(j, rbuf[(P - 1) & 1], rsize[(P - 1) & 1], tmp, rsrc[(P - 1) & 1]);
  if (codec != GZ_OK && local == GZ_OK)
    local = codec;
  rc = local;
fn_exit:
  return rc;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) { return alltoall(ctx, j); }

static double cost(const gz_cost_t *c) {
  return 3 * c->g + c->P * c->n * c->t +
         (c->P - 1) * (c->alpha + c->C * c->beta + 3 * c->n * c->t);
}

const gz_algorithm_t gz_algo_alltoall_pairwise = {
    .name = "pairwise", .coll = GZ_COLL_ALLTOALL, .ws = ws, .run = run, .cost = cost};
