/*
 * alltoall_mpi.c - the MPI library's own MPI_Alltoall of the original
 * values, uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation, typically pairwise or Bruck:
 * (P-1)(alpha + D beta) for D bytes per block. Blocks above INT_MAX
 * elements travel as one derived datatype. GZ_IN_PLACE maps to
 * MPI_IN_PLACE.
 */
#include "coll_internal.h"

static int call(gz_ctx_t ctx, const gz_args_t *a, int n, MPI_Datatype type) {
  if (a->sendbuf == GZ_IN_PLACE)
    return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a->recvbuf, n, type,
                        ctx->comm);
  return MPI_Alltoall(a->sendbuf, n, type, a->recvbuf, n, type, ctx->comm);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_mpi_blocks(ctx, j, call, ctx->size - 1);
}

const gz_algorithm_t gz_algo_alltoall_mpi = {
    .name = "mpi", .coll = GZ_COLL_ALLTOALL, .run = run, .cost = gz_cost_mpi_steps};
