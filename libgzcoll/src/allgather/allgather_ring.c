/*
 * allgather_ring.c - allgather by ring on encoded integer codes: each block
 * is encoded exactly once, by its owner, forwarded as compressed bytes and
 * decoded exactly once on every other rank. Also the second stage of
 * allreduce_ring.c. The step loop, the chunks and the posting of messages
 * are the ring pipeline's (ring.c).
 *
 * Algorithm
 *   The count codes are split into P blocks (gz_block_off); rank r owns
 *   block r. In step t (t = 0 .. P-2) rank r sends block (r - t) mod P to
 *   rank r + 1 and receives block (r - t - 1) mod P from rank r - 1. Rank r
 *   encodes its own block once (in chunks, polling the first receives
 *   between chunks); every other block arrives compressed, is forwarded as
 *   received (no re-encoding: no error, no codec time) and is then decoded
 *   once into its place. Each chunk is forwarded as soon as it arrives, so
 *   chunks of consecutive steps are in flight together, and decoding a
 *   chunk overlaps the transfer of the next ones. As allreduce_ring.c's
 *   second stage, blocks go straight into the output values instead
 *   (gz_values_t): the own block dequantized chunk by chunk after its
 *   encode, the others decoded into values.
 *
 * Cost (n codes in all, D raw bytes, CR compression ratio)
 *   (P-1) alpha per chunk round + (P-1)/P D / CR beta
 *   compression: one encode(n/P) per rank, (P-1) decode(n/P) overlapped with
 *   the transfers. Every element on every rank carries exactly the one
 *   quantization of its owner.
 *
 * Restrictions
 *   Blocks are those of gz_block_off (equal for allgather, ragged for the
 *   allreduce's second stage). Every compressed block is kept until the end
 *   (n / P * P chunk slots, ring.c keep = 1), so no slot is reused while a
 *   send is pending; its tags are the two sets after the reduce-scatter's.
 */
#include "coll_internal.h"

/* Forward a chunk that arrived as received, then decode it into place (or
 * straight into values). */
static gz_result_t arrived(gz_ring_t *g, int s, int b, size_t k, const unsigned char *in,
                           size_t bytes, int next) {
  gz_result_t rc = next ? gz_ring_send(g, s + 1, b, k, bytes) : GZ_OK;
  size_t len = gz_ring_chunk_len(g, b, k);
  if (rc == GZ_OK)
    gz_ring_note(g, g->vals ? gz_run_decode_values(g->run, in, bytes, g->vals,
                                                   gz_ring_off(g, b, k), len)
                            : gz_run_decode_w(g->run, in, bytes, gz_ring_codes(g, b, k),
                                              g->narrow, len));
  return rc;
}

static const gz_ring_ops_t ring_ag = {
    .lag = 0, .tag_set = 2, .keep = 1, .arrived = arrived};

size_t gz_allgather_ring_ws(gz_ctx_t ctx, size_t count) {
  return gz_ring_ws(ctx, &ring_ag, count, 0);
}

gz_result_t gz_allgather_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                              gz_values_t *vals, gz_run_t *run) {
  return gz_ring_run(ctx, &ring_ag, acc, narrow, count, GZ_OP_SUM, NULL, vals, run);
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  return gz_allgather_ring_ws(ctx, a->total);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_allgather_ring(ctx, j->codes, 0, j->a->total, NULL, j->run);
}

static double cost(const gz_cost_t *c) {
  double cb = c->C * c->beta, tt = 2 * c->n * c->t;
  return 3 * c->g + 2 * c->n * c->t + (c->P - 1) * (c->alpha + (cb > tt ? cb : tt));
}

const gz_algorithm_t gz_algo_allgather_ring = {
    .name = "ring", .coll = GZ_COLL_ALLGATHER, .ws = ws, .run = run, .cost = cost};
