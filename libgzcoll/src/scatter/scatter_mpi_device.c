/*
 * scatter_mpi_device.c - the MPI path of a scatter on device buffers
 * (forced mpi, not worth compressing, escape values): point to point from
 * the root, GZ_DEV_PIECE / P elements of each block at a time, device
 * memory staged through pinned memory unless MPI is CUDA-aware; the root
 * copies its own block. A failed staging copy is agreed at the end.
 *
 * Cost: (P-1) messages per piece out of the root, (P-1) D beta in all.
 */
#include "coll_internal.h"

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_exec_t *ex = a->ex;
  int P = ctx->size, root = a->root, is_root = ctx->rank == root, dev = ex->be->on_device;
  size_t esz = gz_dtype_size(a->dtype), piece = GZ_DEV_PIECE / (size_t)P,
         count = a->count;
  gz_result_t local = GZ_OK;
  unsigned char *h = ctx->hstage.base;
  if (piece < 1)
    piece = 1;
  if (is_root && a->recvbuf != GZ_IN_PLACE && count &&
      (ex->be->memcpy(ex, a->recvbuf,
                      (const char *)a->sendbuf + (size_t)root * count * esz,
                      count * esz) != GZ_OK ||
       ex->be->sync(ex) != GZ_OK))
    local = GZ_ERR_UNSUPPORTED;
  for (size_t off = 0; off < count; off += piece) {
    size_t len = count - off < piece ? count - off : piece;
    for (int q = 0; q < P; q++) {
      if (q == root)
        continue;
      if (is_root) {
        const char *src = (const char *)a->sendbuf + ((size_t)q * count + off) * esz;
        if (dev && !ctx->cuda_aware) {
          if (ex->be->memcpy(ex, h, src, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK)
            local = GZ_ERR_UNSUPPORTED;
          src = (const char *)h;
        }
        if (MPI_Send(src, (int)len, gz_mpi_type(a->dtype), q, GZ_TAG_DEVICE, ctx->comm) !=
            MPI_SUCCESS)
          return GZ_ERR_MPI;
      } else if (ctx->rank == q) {
        char *dst = (char *)a->recvbuf + off * esz;
        void *to = dev && !ctx->cuda_aware ? (void *)h : (void *)dst;
        if (MPI_Recv(to, (int)len, gz_mpi_type(a->dtype), root, GZ_TAG_DEVICE, ctx->comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return GZ_ERR_MPI;
        if (to != (void *)dst &&
            (ex->be->memcpy(ex, dst, h, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK))
          local = GZ_ERR_UNSUPPORTED;
      }
    }
  }
  if (is_root)
    gz_run_plain(j->run, P - 1, count);
  return gz_agree_final(ctx, local, 1);
}

const gz_algorithm_t gz_algo_scatter_mpi_device = {
    .name = "mpi", .coll = GZ_COLL_SCATTER, .device = 1, .run = run};
