/*
 * allgather.c - gz_allgather, described for the collective driver
 * (coll_driver.c): the checks and where the own block lies. Algorithms:
 * allgather_mpi.c, allgather_ring.c.
 *
 * Each rank quantizes its own block once (eb = e; REL: e times the range
 * over all blocks), the ring forwards compressed chunks, and every rank
 * dequantizes all P blocks, its own included, so every rank holds the same
 * bytes. Reported bound: eb. In place (GZ_IN_PLACE): the own block is read
 * from recvbuf + rank * count.
 */
#include "coll_internal.h"

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  size_t esz = gz_dtype_size(a->dtype), P = (size_t)ctx->size;
  a->in = a->sendbuf;
  if (!esz || a->count > SIZE_MAX / 8 / P || (a->count && !a->recvbuf))
    return GZ_ERR_ARG;
  if (a->sendbuf == GZ_IN_PLACE)
    a->in = (const char *)a->recvbuf + (size_t)ctx->rank * a->count * esz;
  if (a->count && !a->in)
    return GZ_ERR_ARG;
  a->n_in = a->count; /* the own block, quantized into its place */
  a->in_off = (size_t)ctx->rank * a->count;
  a->total = a->n_codes = a->n_out = a->count * P;
  a->out = a->recvbuf;
  return GZ_OK;
}

static const gz_coll_desc_t allgather = {.coll = GZ_COLL_ALLGATHER, .check = check};

gz_result_t gz_allgather(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, count, dtype);
  return gz_coll_run(ctx, &allgather, &a, report);
}
