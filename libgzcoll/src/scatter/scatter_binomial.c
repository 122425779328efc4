/*
 * scatter_binomial.c - scatter by binomial tree with every destination's
 * block compressed on its own, once, at the root.
 *
 * Algorithm
 *   Ranks are numbered relative to the root (rr = (rank - root) mod P). The
 *   root encodes the block of every other rank separately and packs them in
 *   relative-rank order as records [u64 size][size bytes of codes], back to
 *   back. The subtree of relative rank rr is the range [rr, rr + m), m the
 *   lowest set bit of rr (the root's is [0, P)), so the records of any
 *   subtree are one contiguous byte range: each rank receives its subtree's
 *   records in one message (the sizes travel inside it), forwards the
 *   sub-range of each child without touching the payload (no recompression),
 *   then decodes its own record once.
 *
 * Cost (n codes per block, D raw bytes per block, CR compression ratio)
 *   ceil(log2 P) alpha + (P-1) D / CR beta out of the root, halving down
 *   the tree; compression: P-1 encodes of n at the root, one decode of n
 *   per rank; every element carries one quantization (<= eb).
 *
 * Restrictions
 *   The root's own block is not sent (the caller copies it exactly).
 *   Records are parsed defensively: a truncated or inconsistent message is
 *   GZ_ERR_CORRUPT (agreed on by the caller), never an out-of-bounds read.
 */
#include "coll_internal.h"

#include "gz_block_walk.h"

#include <string.h>

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  int P = ctx->size, rr = (ctx->rank - a->root + P) % P,
      span = gz_binomial_subtree(rr, P);
  size_t cap = gz_codes_bound(a->count);
  if (a->count && !cap)
    return SIZE_MAX;
  if (cap > SIZE_MAX - 8)
    return SIZE_MAX;
  return gz_ws_add(gz_ws_add(0, (size_t)span, cap + 8), (size_t)span + 1, sizeof(size_t));
}

/* Root: codes of the P blocks (count each, destination order); every other
 * rank receives its block's codes into mine (the root's own block is not
 * sent: the driver copies it exactly). */
static gz_result_t scatter(gz_ctx_t ctx, const int64_t *codes, int64_t *mine,
                           size_t count, int root, gz_run_t *run) {
  int P = ctx->size, rank = ctx->rank, rr = (rank - root + P) % P,
      span = gz_binomial_subtree(rr, P);
  size_t cap = gz_codes_bound(count), got = 0;
  unsigned char *buf = gz_ws_take(ctx, (size_t)span, cap + 8);
  size_t *off = gz_ws_take(ctx, (size_t)span + 1, sizeof(size_t));
  gz_result_t rc = GZ_OK, local = GZ_OK;
  int mask = 1;

  if (!buf || !off)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  if (rr == 0) {
    /* records for relative ranks 0 .. P-1; the root's own is empty */
    for (int j = 0; j < P; j++) {
      size_t size = 0;
      if (j > 0) {
        const int64_t *blk = codes + (size_t)((j + root) % P) * count;
        rc = gz_run_encode(run, blk, count, buf + got + 8, cap, &size);
        if (rc != GZ_OK && local == GZ_OK)
          local = rc;
      }
      gz_put_u64le(buf + got, size);
      got += 8 + size;
    }
    while (mask < P)
      mask <<= 1;
  } else {
    while (!(rr & mask))
      mask <<= 1;
    rc = gz_xfer(ctx, GZ_TAG_SCATTER, NULL, 0, MPI_PROC_NULL, buf,
                 (size_t)span * (cap + 8), (rank - mask + P) % P, &got, run);
    if (rc != GZ_OK)
      goto fn_exit;
  }

  /* where each record of the subtree starts (off[span] = end) */
  off[0] = 0;
  for (int j = 0; j < span; j++) {
    uint64_t size;
    if (local != GZ_OK || got - off[j] < 8 ||
        (size = gz_get_u64le(buf + off[j])) > got - off[j] - 8) {
      if (local == GZ_OK)
        local = GZ_ERR_CORRUPT;
      off[j + 1] = off[j]; /* forward empty ranges from here on */
      continue;
    }
    off[j + 1] = off[j] + 8 + (size_t)size;
  }

  /* forward each child's subtree, untouched */
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int c = rr + mask;
    if (c < P) {
      int end = c + gz_binomial_subtree(c, P) - rr;
      run->bytes_raw += (size_t)gz_binomial_subtree(c, P) * count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_SCATTER, buf + off[c - rr], off[end] - off[c - rr],
                   (rank + mask) % P, NULL, 0, MPI_PROC_NULL, NULL, run);
      if (rc != GZ_OK)
        goto fn_exit;
    }
  }

  if (rr != 0 && local == GZ_OK)
    local = gz_run_decode(run, buf + 8, off[1] - 8, mine, count);
  rc = local;
fn_exit:
  return rc;
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return scatter(ctx, j->codes, j->codes, j->a->count, j->a->root, j->run);
}

static double cost(const gz_cost_t *c) {
  return 3 * c->g + 2 * c->P * c->n * c->t + c->L * c->alpha +
         (c->P - 1) * c->C * c->beta;
}

const gz_algorithm_t gz_algo_scatter_binomial = {
    .name = "binomial", .coll = GZ_COLL_SCATTER, .ws = ws, .run = run, .cost = cost};
