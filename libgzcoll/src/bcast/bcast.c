/*
 * bcast.c - gz_bcast, described for the collective driver (coll_driver.c):
 * the checks; only the root's values are quantized. Algorithms:
 * bcast_mpi.c, bcast_binomial.c.
 *
 * The root quantizes once (eb = e; REL: e times the range of the root's
 * data), the tree moves encoded codes, every rank dequantizes once. The root
 * too replaces its buffer by the dequantized values, so that every rank
 * holds the same bytes (each element within eb of the root's original).
 * Values that cannot be quantized (NaN, Inf, out of range) at the root send
 * the whole call through MPI_Bcast, exact.
 */
#include "coll_internal.h"

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  a->in = a->recvbuf; /* one buffer: the root's values in, everyone's out */
  a->n_in = a->n_codes = a->n_out = a->count;
  a->out = a->recvbuf;
  if (!gz_dtype_size(a->dtype) || a->root < 0 || a->root >= ctx->size ||
      (a->count && !a->recvbuf) || a->count > SIZE_MAX / 16)
    return GZ_ERR_ARG;
  return GZ_OK;
}

static const gz_coll_desc_t bcast = {.coll = GZ_COLL_BCAST, .rooted = 1, .check = check};

gz_result_t gz_bcast(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype, int root,
                     gz_report_t *report) {
  gz_args_t a = gz_args_of(NULL, buf, count, dtype);
  a.root = root;
  return gz_coll_run(ctx, &bcast, &a, report);
}
