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

static int call(gz_ctx_t ctx, const gz_args_t *a, int n, MPI_Datatype type) {
  return MPI_Scatter(a->sendbuf, n, type,
                     a->recvbuf == GZ_IN_PLACE ? MPI_IN_PLACE : a->recvbuf, n, type,
                     a->root, ctx->comm);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_mpi_blocks(ctx, j, call, ctx->rank == j->a->root ? ctx->size - 1 : 0);
}

static double cost(const gz_cost_t *c) {
  return c->g + c->L * c->alpha + (c->P - 1) * c->D * c->beta;
}

const gz_algorithm_t gz_algo_scatter_mpi = {
    .name = "mpi", .coll = GZ_COLL_SCATTER, .run = run, .cost = cost};
