/*
 * allreduce_mpi.c - the MPI library's own allreduce on the original values,
 * uncompressed. Used when forced, when auto finds that compression would not
 * pay, and as the escape path when some value cannot be quantized within the
 * bound (NaN, Inf, or too large for the code range): the result is then the
 * exact floating-point reduction, NaN and Inf propagating as MPI computes
 * them.
 *
 * Cost: that of the MPI implementation (typically recursive doubling for
 * short messages, Rabenseifner or ring for long ones: 2 (P-1)/P D beta).
 * Counts above 2^30 elements are reduced in segments (MPI counts are int).
 */
#include "coll_internal.h"

gz_result_t gz_allreduce_mpi(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                             size_t count, gz_dtype_t dtype, gz_op_t op) {
  const size_t seg = (size_t)1 << 30, esz = gz_dtype_size(dtype);
  MPI_Op mop = op == GZ_OP_SUM ? MPI_SUM : op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
  for (size_t off = 0; off < count; off += seg) {
    size_t n = count - off < seg ? count - off : seg;
    const void *s =
        sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : (const char *)sendbuf + off * esz;
    if (MPI_Allreduce(s, (char *)recvbuf + off * esz, (int)n, gz_mpi_type(dtype), mop,
                      ctx->comm) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  return GZ_OK;
}
