/*
 * allgather_mpi.c - the MPI library's own MPI_Allgather on the original
 * values, uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation, typically a ring: (P-1) alpha +
 * (P-1) D beta for D bytes per rank. Blocks above INT_MAX elements travel
 * as one derived datatype.
 */
#include "coll_internal.h"

static int call(gz_ctx_t ctx, const gz_args_t *a, int n, MPI_Datatype type) {
  return MPI_Allgather(a->sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : a->sendbuf, n, type,
                       a->recvbuf, n, type, ctx->comm);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_mpi_blocks(ctx, j, call, ctx->size - 1);
}

const gz_algorithm_t gz_algo_allgather_mpi = {
    .name = "mpi", .coll = GZ_COLL_ALLGATHER, .run = run, .cost = gz_cost_mpi_steps};
