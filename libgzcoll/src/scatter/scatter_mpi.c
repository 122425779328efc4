/*
 * scatter_mpi.c - the MPI library's own MPI_Scatter of the original values,
 * uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation, typically binomial:
 * ceil(log2 P) alpha + (P-1) D beta out of the root. Blocks above INT_MAX
 * elements travel as one derived datatype. recvbuf == GZ_IN_PLACE at the
 * root leaves the root's block in sendbuf (MPI_IN_PLACE).
 */
#include "coll_internal.h"

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(a->dtype, a->count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (MPI_Scatter(a->sendbuf, n, type,
                  a->recvbuf == GZ_IN_PLACE ? MPI_IN_PLACE : a->recvbuf, n, type, a->root,
                  ctx->comm) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  if (rc == GZ_OK && ctx->rank == a->root)
    gz_run_plain(j->run, ctx->size - 1, a->count);
  return rc;
}

static double cost(const gz_cost_t *c) {
  return c->g + c->L * c->alpha + (c->P - 1) * c->D * c->beta;
}

const gz_algorithm_t gz_algo_scatter_mpi = {
    .name = "mpi", .coll = GZ_COLL_SCATTER, .run = run, .cost = cost};
