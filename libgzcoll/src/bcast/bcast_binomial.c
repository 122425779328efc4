/*
 * bcast_binomial.c - broadcast by binomial tree of encoded integer codes:
 * compress once at the root, forward compressed bytes, decode once at every
 * other rank.
 *
 * Algorithm
 *   Ranks are numbered relative to the root (rr = (rank - root) mod P). A
 *   non-root rank receives from rr - m, m its lowest set bit, then forwards
 *   to rr + m' for every m' < m (largest first) with rr + m' < P, and only
 *   then decodes, so the tree is not held up by the codec. The compressed
 *   size is learnt from the message itself (MPI_Get_count, gz_xfer).
 *   Any P (the tree is simply cut at P).
 *
 * Cost (n codes, D raw bytes, CR compression ratio)
 *   ceil(log2 P) (alpha + D / CR beta) on the longest path
 *   compression: one encode(n) at the root, one decode(n) per rank; every
 *   rank's result carries exactly the root's one quantization (<= eb).
 *
 * Restrictions
 *   Whole buffer per message (gz_xfer splits messages above the part size).
 */
#include "coll_internal.h"

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  size_t cap = gz_codes_indexed_bound(a->count);
  (void)ctx;
  if (a->count && !cap)
    return SIZE_MAX;
  return gz_ws_add(0, cap, 1);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  int64_t *codes = j->codes;
  size_t count = j->a->count;
  int root = j->a->root;
  gz_run_t *run = j->run;
  int P = ctx->size, rr = (ctx->rank - root + P) % P, mask = 1;
  size_t cap = gz_codes_indexed_bound(count), size = 0;
  unsigned char *buf = gz_ws_take(ctx, cap, 1);
  gz_result_t rc = GZ_OK, local = GZ_OK;

  if (!buf)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  if (rr == 0) {
    local = gz_run_encode(run, codes, count, buf, cap, &size);
    while (mask < P)
      mask <<= 1;
  } else {
    while (mask < P && !(rr & mask))
      mask <<= 1;
    rc = gz_xfer(ctx, GZ_TAG_BCAST, NULL, 0, MPI_PROC_NULL, buf, cap,
                 (ctx->rank - mask + P) % P, &size, run);
    if (rc != GZ_OK)
      goto fn_exit;
  }
  /* forward first, decode after: the tree is not held up by the codec */
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rr + mask < P) {
      run->bytes_raw += count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_BCAST, buf, size, (ctx->rank + mask) % P, NULL, 0,
                   MPI_PROC_NULL, NULL, run);
      if (rc != GZ_OK)
        goto fn_exit;
    }
  }
  if (rr != 0)
    local = gz_run_decode(run, buf, size, codes, count);
  rc = local;
fn_exit:
  return rc;
}

static double cost(const gz_cost_t *c) {
  return 3 * c->g + 5 * c->n * c->t + c->L * (c->alpha + c->C * c->beta);
}

const gz_algorithm_t gz_algo_bcast_binomial = {
    .name = "binomial", .coll = GZ_COLL_BCAST, .ws = ws, .run = run, .cost = cost};
