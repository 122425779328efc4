/*
 * bcast_mpi.c - the MPI library's own MPI_Bcast of the original values,
 * uncompressed (forced, not worth compressing, or the escape path).
 *
 * Cost: that of the MPI implementation: binomial, ceil(log2 P)(alpha +
 * D beta), or scatter + allgather for long messages. Counts above 2^30
 * elements are broadcast in segments.
 */
#include "coll_internal.h"

gz_result_t gz_bcast_mpi(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype,
                         int root) {
  const size_t seg = (size_t)1 << 30, esz = gz_dtype_size(dtype);
  for (size_t off = 0; off < count; off += seg) {
    size_t n = count - off < seg ? count - off : seg;
    if (MPI_Bcast((char *)buf + off * esz, (int)n, gz_mpi_type(dtype), root, ctx->comm) !=
        MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  return GZ_OK;
}
