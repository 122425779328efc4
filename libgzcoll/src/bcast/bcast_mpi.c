/*
 * bcast_mpi.c - the MPI library's own MPI_Bcast of the original values,
 * uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation: binomial, ceil(log2 P)(alpha +
 * D beta), or scatter + allgather for long messages. Counts above 2^30
 * elements are broadcast in segments.
 */
#include "coll_internal.h"

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  const size_t seg = (size_t)1 << 30, esz = gz_dtype_size(a->dtype);
  int P = ctx->size, rr = (ctx->rank - a->root + P) % P, children = 0;
  for (size_t off = 0; off < a->count; off += seg) {
    size_t n = a->count - off < seg ? a->count - off : seg;
    if (MPI_Bcast((char *)a->recvbuf + off * esz, (int)n, gz_mpi_type(a->dtype), a->root,
                  ctx->comm) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  for (int m = 1; m < P; m <<= 1) /* children in a binomial tree (model) */
    if (!(rr & (2 * m - 1)) && rr + m < P)
      children++;
  gz_run_plain(j->run, children, a->count);
  return GZ_OK;
}

static double cost(const gz_cost_t *c) {
  double x = c->L * (c->alpha + c->D * c->beta),
         y = (c->L + c->P - 1) * c->alpha + 2 * (c->P - 1) / c->P * c->D * c->beta;
  return c->g + (x < y ? x : y);
}

const gz_algorithm_t gz_algo_bcast_mpi = {
    .name = "mpi", .coll = GZ_COLL_BCAST, .run = run, .cost = cost};
