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

gz_result_t gz_alltoall_mpi(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                            size_t count, gz_dtype_t dtype) {
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(dtype, count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (sendbuf == GZ_IN_PLACE)
    rc = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, n, type, ctx->comm) ==
                 MPI_SUCCESS
             ? GZ_OK
             : GZ_ERR_MPI;
  else
    rc = MPI_Alltoall(sendbuf, n, type, recvbuf, n, type, ctx->comm) == MPI_SUCCESS
             ? GZ_OK
             : GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  return rc;
}
