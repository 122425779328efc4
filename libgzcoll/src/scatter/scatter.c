/*
 * scatter.c - gz_scatter, described for the collective driver
 * (coll_driver.c): the checks, the root quantizes, the root's own block is
 * copied exactly. Algorithms: scatter_mpi.c, scatter_binomial.c (one
 * implementation for host and device buffers, on the backend table).
 *
 * The root quantizes the P blocks once (eb = e; REL: e times the range of
 * the root's whole send buffer); each other rank dequantizes its block once
 * (reported bound eb); the root copies its own block exactly (reported
 * bound 0). recvbuf == GZ_IN_PLACE at the root (MPI_IN_PLACE semantics):
 * the root's block stays where it is in sendbuf. Device buffers (a context
 * with cfg.device_pool_bytes): the device rows, scatter_mpi_device.c and
 * scatter_binomial.c's.
 */
#include "coll_internal.h"

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  size_t P = (size_t)ctx->size;
  int is_root = ctx->rank == a->root;
  if (!gz_dtype_size(a->dtype) || a->root < 0 || a->root >= ctx->size ||
      a->count > SIZE_MAX / 16 / P || (a->count && !a->recvbuf) ||
      (a->count && is_root && !a->sendbuf) || (a->recvbuf == GZ_IN_PLACE && !is_root))
    return GZ_ERR_ARG;
  a->total = a->count * P;
  a->in = a->sendbuf; /* the root: all P blocks */
  a->n_in = is_root ? a->total : 0;
  a->n_codes = is_root ? a->total : a->count;
  a->n_out = is_root ? 0 : a->count; /* a receiver: its block's codes */
  a->out = a->recvbuf;
  a->exact = is_root;
  return GZ_OK;
}

/* The root's own block never travels (IN_PLACE: it stays in sendbuf). */
static gz_result_t own(gz_ctx_t ctx, const gz_args_t *a) {
  size_t esz = gz_dtype_size(a->dtype);
  const char *mine = (const char *)a->sendbuf + (size_t)a->root * a->count * esz;
  gz_result_t rc = GZ_OK;
  if (ctx->rank != a->root || a->recvbuf == GZ_IN_PLACE)
    return GZ_OK;
  if (!a->ex) {
    gz_copy(a->dtype, a->recvbuf, mine, a->count);
    return GZ_OK;
  }
  rc = a->ex->be->memcpy(a->ex, a->recvbuf, mine, a->count * esz);
  return rc == GZ_OK ? a->ex->be->sync(a->ex) : rc;
}

static const gz_coll_desc_t scatter = {
    .coll = GZ_COLL_SCATTER, .rooted = 1, .check = check, .device = 1, .own = own};

gz_result_t gz_scatter(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                       gz_dtype_t dtype, int root, gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, count, dtype);
  a.root = root;
  return gz_coll_run(ctx, &scatter, &a, report);
}
