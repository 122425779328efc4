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

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(a->dtype, a->count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (a->sendbuf == GZ_IN_PLACE)
    rc = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a->recvbuf, n, type,
                      ctx->comm) == MPI_SUCCESS
             ? GZ_OK
             : GZ_ERR_MPI;
  else
    rc = MPI_Alltoall(a->sendbuf, n, type, a->recvbuf, n, type, ctx->comm) == MPI_SUCCESS
             ? GZ_OK
             : GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  if (rc == GZ_OK)
    gz_run_plain(j->run, ctx->size - 1, a->count);
  return rc;
}

const gz_algorithm_t gz_algo_alltoall_mpi = {
    .name = "mpi", .coll = GZ_COLL_ALLTOALL, .run = run, .cost = gz_cost_mpi_steps};
