/*
 * allgather_mpi.c - the MPI library's own MPI_Allgather on the original
 * values, uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation, typically a ring: (P-1) alpha +
 * (P-1) D beta for D bytes per rank. Blocks above INT_MAX elements travel
 * as one derived datatype.
 */
#include "coll_internal.h"

gz_result_t gz_allgather_mpi(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                             size_t count, gz_dtype_t dtype) {
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(dtype, count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (MPI_Allgather(sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : sendbuf, n, type, recvbuf, n,
                    type, ctx->comm) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  return rc;
}
