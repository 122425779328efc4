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

gz_result_t gz_scatter_mpi(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                           gz_dtype_t dtype, int root) {
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(dtype, count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (MPI_Scatter(sendbuf, n, type, recvbuf == GZ_IN_PLACE ? MPI_IN_PLACE : recvbuf, n,
                  type, root, ctx->comm) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  return rc;
}
