/*
 * alltoall.c - gz_alltoall, described for the collective driver
 * (coll_driver.c): the checks, the own block copied exactly; the pairwise
 * exchange dequantizes what it receives. Algorithms: alltoall_mpi.c,
 * alltoall_pairwise.c.
 *
 * Every rank quantizes its P outgoing blocks once (eb = e; REL: e times the
 * range over all ranks' data); block s of recvbuf is rank s's block for
 * this rank, dequantized once (within eb); the own block is copied exactly.
 * In place (GZ_IN_PLACE): the blocks are read from recvbuf, which is safe
 * because everything is quantized before anything lands.
 * GZ_EB_PWREL: the blocks travel cast to a narrower format instead
 * (codec/cast.c, |x' - x| <= eb |x| for every element).
 */
#include "coll_internal.h"

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  size_t P = (size_t)ctx->size;
  a->in = a->sendbuf == GZ_IN_PLACE ? a->recvbuf : a->sendbuf;
  if (!gz_dtype_size(a->dtype) || a->count > SIZE_MAX / 16 / P ||
      (a->count && (!a->recvbuf || !a->in)))
    return GZ_ERR_ARG;
  a->total = a->n_in = a->n_codes = a->count * P; /* P outgoing blocks */
  return GZ_OK;
}

/* The own block travels nowhere (in place: it is already there). */
static gz_result_t own(gz_ctx_t ctx, const gz_args_t *a) {
  size_t off = (size_t)ctx->rank * a->count * gz_dtype_size(a->dtype);
  if (a->sendbuf != GZ_IN_PLACE)
    gz_copy(a->dtype, (char *)a->recvbuf + off, (const char *)a->sendbuf + off, a->count);
  return GZ_OK;
}

static const gz_coll_desc_t alltoall = {
    .coll = GZ_COLL_ALLTOALL, .check = check, .own = own, .casts = 1};

gz_result_t gz_alltoall(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                        gz_dtype_t dtype, gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, count, dtype);
  return gz_coll_run(ctx, &alltoall, &a, report);
}
