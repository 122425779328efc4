/*
 * allreduce_mpi_device.c - the MPI path of an allreduce on device buffers
 * (forced mpi, not worth compressing, escape values): MPI on the original
 * values, GZ_DEV_PIECE elements at a time on every rank, device memory
 * staged through pinned memory (host buffers of a device call go straight
 * to MPI). A failed staging copy is agreed at the end.
 *
 * Cost: that of allreduce_mpi.c plus two copies of D bytes over PCIe per
 * device rank.
 */
#include "coll_internal.h"

static MPI_Op mpi_op(gz_op_t op) {
  return op == GZ_OP_MAX ? MPI_MAX : op == GZ_OP_MIN ? MPI_MIN : MPI_SUM;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_exec_t *ex = a->ex;
  size_t esz = gz_dtype_size(a->dtype);
  const char *in = a->sendbuf == GZ_IN_PLACE ? a->recvbuf : a->sendbuf;
  gz_result_t local = GZ_OK;
  int P = ctx->size;
  for (size_t off = 0; off < a->count; off += GZ_DEV_PIECE) {
    size_t len = a->count - off < GZ_DEV_PIECE ? a->count - off : GZ_DEV_PIECE;
    char *out = (char *)a->recvbuf + off * esz;
    if (ex->be->on_device) {
      void *h = ctx->hstage.base;
      if (ex->be->memcpy(ex, h, in + off * esz, len * esz) != GZ_OK ||
          ex->be->sync(ex) != GZ_OK)
        local = GZ_ERR_UNSUPPORTED;
      if (MPI_Allreduce(MPI_IN_PLACE, h, (int)len, gz_mpi_type(a->dtype), mpi_op(a->op),
                        ctx->comm) != MPI_SUCCESS)
        return GZ_ERR_MPI;
      gz_scale(a->dtype, h, len, a->divisor);
      if (ex->be->memcpy(ex, out, h, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK)
        local = GZ_ERR_UNSUPPORTED;
    } else {
      if (MPI_Allreduce(a->sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : in + off * esz, out,
                        (int)len, gz_mpi_type(a->dtype), mpi_op(a->op),
                        ctx->comm) != MPI_SUCCESS)
        return GZ_ERR_MPI;
      gz_scale(a->dtype, out, len, a->divisor);
    }
  }
  gz_run_plain(j->run, 2.0 * (P - 1) / P, a->count);
  return gz_agree_final(ctx, local, 0);
}

const gz_algorithm_t gz_algo_allreduce_mpi_device = {
    .name = "mpi", .coll = GZ_COLL_ALLREDUCE, .device = 1, .run = run};
