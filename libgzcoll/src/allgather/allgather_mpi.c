/*
 * allgather_mpi.c - the MPI library's own MPI_Allgather on the original
 * values, uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation, typically a ring: (P-1) alpha +
 * (P-1) D beta for D bytes per rank. Blocks above INT_MAX elements travel
 * as one derived datatype.
 */
#include "coll_internal.h"

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(a->dtype, a->count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (MPI_Allgather(a->sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : a->sendbuf, n, type,
                    a->recvbuf, n, type, ctx->comm) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  if (rc == GZ_OK)
    gz_run_plain(j->run, ctx->size - 1, a->count);
  return rc;
}

const gz_algorithm_t gz_algo_allgather_mpi = {
    .name = "mpi", .coll = GZ_COLL_ALLGATHER, .run = run, .cost = gz_cost_mpi_steps};
