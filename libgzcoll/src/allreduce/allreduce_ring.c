/*
 * allreduce_ring.c - allreduce by ring (reduce-scatter then allgather) on
 * encoded integer codes, as in C-Coll but in the integer domain.
 *
 * Algorithm
 *   Stage 1, gz_reduce_scatter_ring: P-1 steps; blocks of n/P codes travel
 *   as pipelined chunks, each decoded and combined exactly on arrival and
 *   re-encoded at once for the next step (compression overlapped with
 *   communication, receives polled between chunk encodes). Rank r ends
 *   with block r reduced over all ranks.
 *   Stage 2, gz_allgather_ring: P-1 steps; rank r encodes its reduced block
 *   once, the compressed chunks are forwarded unchanged around the ring and
 *   each is decoded once where it lands.
 *
 * Fused passes (bytes per element: docs/performance-model.md)
 *   Step 0's message, block r-1, is encoded by the driver's quantization
 *   pass, part by part from L1 (the first hook); its codes are never
 *   written. Stage 2 decodes every block straight into the output values
 *   and dequantizes the own block chunk by chunk after encoding it, so the
 *   driver has no dequantize pass left (j->dequantized).
 *   The integer total is the same on every rank and the same as ReDoub's,
 *   so the dequantized result is bit-identical everywhere and independent of
 *   the algorithm.
 *
 * Any P (no power-of-two restriction) and any count: blocks are ragged
 * (gz_block_off), empty blocks send nothing.
 *
 * Cost (n codes, D raw bytes, CR compression ratio of the codes)
 *   2(P-1) alpha (times the chunks per block) + 2 (P-1)/P D / CR beta
 *   compression: (P-1) encode(n/P) + (P-1) decode-reduce(n/P) in stage 1,
 *   overlapped with the transfers; 1 encode(n/P) + (P-1) decode(n/P) in
 *   stage 2. Least bytes on the wire of the algorithms here.
 *
 * Restrictions
 *   Ops SUM, MAX, MIN. Local codec failures are remembered, the stages run
 *   to the end, the caller agrees on the outcome.
 */
#include "coll_internal.h"

/* The first message: block r - 1 in ring chunks, encoded while quantizing
 * (its codes are never written: step 0 sends it, stage 2 decodes its total
 * straight into the output). */
static void first(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f) {
  gz_ring_first(ctx, a->count, f);
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  size_t rs = gz_reduce_scatter_ring_ws(ctx, a->count, 1),
         ag = gz_allgather_ring_ws(ctx, a->count);
  /* the first message (the driver's) stays; the stages run one after the other */
  return gz_ring_first_ws(ctx, a->count, rs > ag ? rs : ag);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  size_t mark = gz_ws_mark(ctx);
  const gz_args_t *a = j->a;
  gz_values_t vals = {a->dtype, a->out, j->eb / a->divisor, 0};
  gz_result_t rs, ag;
  rs =
      gz_reduce_scatter_ring(ctx, j->codes, j->narrow, a->count, a->op, j->first, j->run);
  if (rs == GZ_ERR_MPI || rs == GZ_ERR_NOMEM)
    return rs;
  gz_ws_release(ctx, mark);
  /* the last decodes write the result's values (no dequantize pass) */
  j->dequantized = ctx->size > 1 && a->count > 0 && !a->ex && a->n_out == a->count;
  ag = gz_allgather_ring(ctx, j->codes, j->narrow, a->count,
                         j->dequantized ? &vals : NULL, j->run);
  j->amax = vals.amax;
  return rs != GZ_OK ? rs : ag;
}

static double cost(const gz_cost_t *c) {
  double P = c->P, n = c->n, t = c->t, cb = c->C * c->beta / P;
  return 3 * c->g + 2 * n * t +
         (P - 1) * (c->alpha + (cb > 2 * n * t / P ? cb : 2 * n * t / P)) + n * t / P +
         (P - 1) * (c->alpha + (cb > n * t / P ? cb : n * t / P));
}

const gz_algorithm_t gz_algo_allreduce_ring = {.name = "ring",
                                               .coll = GZ_COLL_ALLREDUCE,
                                               .ws = ws,
                                               .run = run,
                                               .cost = cost,
                                               .first = first};
