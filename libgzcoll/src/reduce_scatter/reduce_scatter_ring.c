/*
 * reduce_scatter_ring.c - reduce-scatter by ring on encoded integer codes,
 * with the codec pipelined against communication (as in C-Coll). Also the
 * first stage of allreduce_ring.c. The step loop, the chunks and the
 * posting of messages are the ring pipeline's (ring.c).
 *
 * Algorithm
 *   The count codes are split into P blocks (gz_block_off: the first
 *   count % P blocks one longer, so any count works, 0 and count < P
 *   included; empty blocks send nothing). In step s (s = 0 .. P-2) rank r
 *   sends its partial of block (r - s - 1) mod P to rank r + 1 and receives
 *   the partial of block (r - s - 2) mod P from rank r - 1, which it decodes
 *   and combines exactly into its own codes. After P-1 steps rank r holds
 *   block r reduced over all ranks.
 *
 * Pipelining
 *   A chunk is decoded-and-reduced as soon as it arrives, and since the
 *   block received in step s is the block sent in step s + 1, that chunk is
 *   encoded and sent on at once: the codec of one chunk overlaps the
 *   transfer of the others, across steps. Send slots alternate between two
 *   sets by step parity (ring.c, keep = 0).
 *
 * Cost (n codes in all, D raw bytes, CR compression ratio)
 *   (P-1) alpha per chunk round + (P-1)/P D / CR beta
 *   compression: (P-1) encode(n/P) + (P-1) decode-reduce(n/P), overlapped
 *   with the transfers: per step max(D / (P CR) beta, codec(n/P)).
 *   Least bytes on the wire; many small codec calls.
 *
 * Restrictions
 *   Ops SUM, MAX, MIN on int64 or int32 codes. Local codec failures are
 *   remembered and the ring keeps going (an empty message stands for a
 *   chunk that could not be encoded); the caller agrees on the outcome.
 */
#include "coll_internal.h"

/* Reduce a chunk that arrived into the own partial, and pass it on. */
static gz_result_t arrived(gz_ring_t *g, int s, int b, size_t k, const unsigned char *in,
                           size_t bytes, int next) {
  gz_ring_note(g, gz_run_decode_reduce_w(g->run, g->op, in, bytes, gz_ring_codes(g, b, k),
                                         g->narrow, gz_ring_chunk_len(g, b, k)));
  return next ? gz_ring_encode_send(g, s + 1, b, k) : GZ_OK;
}

static const gz_ring_ops_t ring_rs = {
    .lag = 1, .tag_set = 0, .keep = 0, .arrived = arrived};

size_t gz_reduce_scatter_ring_ws(gz_ctx_t ctx, size_t count, int pre) {
  return gz_ring_ws(ctx, &ring_rs, count, pre);
}

gz_result_t gz_reduce_scatter_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                                   gz_op_t op, const gz_first_t *pre, gz_run_t *run) {
  return gz_ring_run(ctx, &ring_rs, acc, narrow, count, op, pre, NULL, run);
}

/* The first message: block r - 1, encoded by the driver's quantization
 * (its codes are never written: step 0 sends it, and rank r's result is
 * block r). */
static void first(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f) {
  gz_ring_first(ctx, a->total, f);
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  return gz_ring_first_ws(ctx, a->total, gz_reduce_scatter_ring_ws(ctx, a->total, 1));
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_reduce_scatter_ring(ctx, j->codes, j->narrow, j->a->total, j->a->op, j->first,
                                j->run);
}

static double cost(const gz_cost_t *c) {
  double cb = c->C * c->beta, tt = 2 * c->n * c->t;
  return 3 * c->g + (c->P + 1) * c->n * c->t +
         (c->P - 1) * (c->alpha + (cb > tt ? cb : tt));
}

const gz_algorithm_t gz_algo_reduce_scatter_ring = {.name = "ring",
                                                    .coll = GZ_COLL_REDUCE_SCATTER,
                                                    .ws = ws,
                                                    .run = run,
                                                    .cost = cost,
                                                    .first = first};
