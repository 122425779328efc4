/*
 * reduce_scatter_mpi.c - the MPI library's own MPI_Reduce_scatter_block on
 * the original values, uncompressed (forced, not worth compressing, or the
 * escape path for values that cannot be quantized).
 *
 * Cost: that of the MPI implementation, typically a ring or pairwise
 * exchange: (P-1) alpha + (P-1) D beta for D bytes per block.
 * Blocks above INT_MAX elements are reduced in segments: each segment of
 * every block is packed contiguously into the workspace first.
 */
#include "coll_internal.h"

#include <limits.h>
#include <string.h>

#define GZ_RS_SEG ((size_t)1 << 20)

static gz_result_t reduce_scatter(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                                  size_t recvcount, gz_dtype_t dtype, gz_op_t op) {
  MPI_Op mop = op == GZ_OP_SUM ? MPI_SUM : op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
  size_t esz = gz_dtype_size(dtype), P = (size_t)ctx->size;
  const char *in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  char *pack;
  gz_result_t rc;
  if (recvcount <= (size_t)INT_MAX) {
    const void *s = sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : sendbuf;
    if (MPI_Reduce_scatter_block(s, recvbuf, (int)recvcount, gz_mpi_type(dtype), mop,
                                 ctx->comm) != MPI_SUCCESS)
      return GZ_ERR_MPI;
    return GZ_OK;
  }
  /* huge blocks: segment j of every block, packed (the input is read before
   * the output overwrites it: output segment j lies in block 0, at or before
   * every input segment still to be read) */
  if ((rc = gz_ws_reserve(ctx, gz_ws_add(0, P * GZ_RS_SEG, esz))) != GZ_OK)
    return rc;
  pack = gz_ws_take(ctx, P * GZ_RS_SEG, esz);
  for (size_t off = 0; off < recvcount; off += GZ_RS_SEG) {
    size_t n = recvcount - off < GZ_RS_SEG ? recvcount - off : GZ_RS_SEG;
    for (size_t b = 0; b < P; b++)
      memcpy(pack + b * n * esz, in + (b * recvcount + off) * esz, n * esz);
    if (MPI_Reduce_scatter_block(MPI_IN_PLACE, pack, (int)n, gz_mpi_type(dtype), mop,
                                 ctx->comm) != MPI_SUCCESS)
      return GZ_ERR_MPI;
    memcpy((char *)recvbuf + off * esz, pack, n * esz);
  }
  return GZ_OK;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_result_t rc = reduce_scatter(ctx, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op);
  if (rc == GZ_OK)
    gz_run_plain(j->run, ctx->size - 1, a->count);
  return rc;
}

const gz_algorithm_t gz_algo_reduce_scatter_mpi = {
    .name = "mpi", .coll = GZ_COLL_REDUCE_SCATTER, .run = run, .cost = gz_cost_mpi_steps};
