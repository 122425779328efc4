/*
 * allgather_ring.c - allgather by ring on encoded integer codes: each block
 * is encoded exactly once, by its owner, forwarded as compressed bytes and
 * decoded exactly once on every other rank. Also the second stage of
 * allreduce_ring.c.
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
 *   chunk overlaps the transfer of the next ones.
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
 *   (n / P * P chunk slots), so no slot is reused while a send is pending.
 */
#include "coll_internal.h"

size_t gz_allgather_ring_ws(gz_ctx_t ctx, size_t count) {
  size_t chunk, nch, cap, slots, ws = 0;
  gz_ring_geometry(ctx, count, &chunk, &nch);
  cap = gz_codes_indexed_bound(chunk);
  slots = nch * (size_t)ctx->size;
  ws = gz_ws_add(ws, slots, cap);                 /* compressed chunks of every block */
  ws = gz_ws_add(ws, slots, sizeof(MPI_Request)); /* sends, per (block, chunk) */
  ws = gz_ws_add(ws, nch, sizeof(MPI_Request));   /* receives of one step */
  ws = gz_ws_add(ws, nch, sizeof(int));
  ws = gz_ws_add(ws, nch, sizeof(MPI_Status));
  return ws;
}

typedef struct ring_ag {
  gz_ctx_t ctx;
  void *acc;
  int narrow; /* int32 codes */
  size_t count, chunk, nch, cap;
  int P, r, left, right;
  unsigned char *slot; /* slot (b, k) at (b * nch + k) * cap */
  MPI_Request *sreq, *rreq;
  int *idx;
  MPI_Status *st;
  size_t pending;
  gz_values_t *vals; /* the blocks go there as values (may be NULL) */
  gz_result_t local;
  gz_run_t *run;
} ring_ag_t;

static int mod(int a, int P) { return ((a % P) + P) % P; }

static size_t nchunks(const ring_ag_t *g, int b) {
  size_t len = gz_block_len(g->count, g->P, b);
  return (len + g->chunk - 1) / g->chunk;
}

static size_t chunk_len(const ring_ag_t *g, int b, size_t k) {
  size_t len = gz_block_len(g->count, g->P, b) - k * g->chunk;
  return len < g->chunk ? len : g->chunk;
}

static unsigned char *slot(const ring_ag_t *g, int b, size_t k) {
  return g->slot + ((size_t)b * g->nch + k) * g->cap;
}

static int tag(const ring_ag_t *g, int t, size_t k) {
  return GZ_TAG_RING + (int)((2 + (size_t)(t & 1)) * g->nch + k);
}

static gz_result_t send_chunk(ring_ag_t *g, int t, int b, size_t k, size_t size) {
  g->run->bytes_raw += chunk_len(g, b, k) * g->run->esz;
  g->run->bytes_sent += size;
  if (MPI_Isend(slot(g, b, k), (int)size, MPI_BYTE, g->right, tag(g, t, k), g->ctx->comm,
                &g->sreq[(size_t)b * g->nch + k]) != MPI_SUCCESS)
    return GZ_ERR_MPI;
  return GZ_OK;
}

static gz_result_t post_recvs(ring_ag_t *g, int t) {
  int b = mod(g->r - t - 1, g->P);
  size_t n = nchunks(g, b);
  for (size_t k = 0; k < n; k++)
    if (MPI_Irecv(slot(g, b, k), (int)g->cap, MPI_BYTE, g->left, tag(g, t, k),
                  g->ctx->comm, &g->rreq[k]) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  g->pending = n;
  return GZ_OK;
}

/* Forward the chunks that arrived in step t, then decode them. */
static gz_result_t process(ring_ag_t *g, int t, int done) {
  int b = mod(g->r - t - 1, g->P);
  for (int i = 0; i < done; i++) {
    size_t k = (size_t)g->idx[i], off = gz_block_off(g->count, g->P, b) + k * g->chunk;
    int bytes = 0;
    gz_result_t rc;
    MPI_Get_count(&g->st[i], MPI_BYTE, &bytes);
    g->pending--;
    if (t + 1 <= g->P - 2 && (rc = send_chunk(g, t + 1, b, k, (size_t)bytes)) != GZ_OK)
      return rc;
    rc = g->vals ? gz_run_decode_values(g->run, slot(g, b, k), (size_t)bytes, g->vals,
                                        off, chunk_len(g, b, k))
                 : gz_run_decode_w(g->run, slot(g, b, k), (size_t)bytes,
                                   gz_code_at(g->acc, g->narrow, off), g->narrow,
                                   chunk_len(g, b, k));
    if (rc != GZ_OK && g->local == GZ_OK)
      g->local = rc;
  }
  return GZ_OK;
}

gz_result_t gz_allgather_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                              gz_values_t *vals, gz_run_t *run) {
  ring_ag_t g;
  gz_result_t rc = GZ_OK;
  size_t slots;
  int done = 0;

  if (ctx->size == 1 || count == 0)
    return GZ_OK;
  g.ctx = ctx;
  g.acc = acc;
  g.narrow = narrow;
  g.count = count;
  g.P = ctx->size;
  g.r = ctx->rank;
  g.left = mod(g.r - 1, g.P);
  g.right = mod(g.r + 1, g.P);
  g.local = GZ_OK;
  g.vals = vals;
  g.run = run;
  gz_ring_geometry(ctx, count, &g.chunk, &g.nch);
  g.cap = gz_codes_indexed_bound(g.chunk);
  slots = g.nch * (size_t)g.P;
  g.slot = gz_ws_take(ctx, slots, g.cap);
  g.sreq = gz_ws_take(ctx, slots, sizeof(MPI_Request));
  g.rreq = gz_ws_take(ctx, g.nch, sizeof(MPI_Request));
  g.idx = gz_ws_take(ctx, g.nch, sizeof(int));
  g.st = gz_ws_take(ctx, g.nch, sizeof(MPI_Status));
  if (!g.slot || !g.sreq || !g.rreq || !g.idx || !g.st)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  for (size_t i = 0; i < slots; i++)
    g.sreq[i] = MPI_REQUEST_NULL;
  for (size_t i = 0; i < g.nch; i++)
    g.rreq[i] = MPI_REQUEST_NULL;

  /* step 0: post the receives, encode the own block once, poll in between */
  if ((rc = post_recvs(&g, 0)) != GZ_OK)
    goto fn_exit;
  for (size_t k = 0; k < nchunks(&g, g.r); k++) {
    size_t off = gz_block_off(count, g.P, g.r) + k * g.chunk, size = 0;
    rc = gz_run_encode_w(run, gz_code_at(acc, narrow, off), narrow, chunk_len(&g, g.r, k),
                         slot(&g, g.r, k), g.cap, &size);
    if (rc != GZ_OK && g.local == GZ_OK)
      g.local = rc;
    if ((rc = send_chunk(&g, 0, g.r, k, size)) != GZ_OK)
      goto fn_exit;
    if (vals) /* while its codes are in cache */
      rc = gz_run_values(run, gz_code_at(acc, narrow, off), narrow, vals, off,
                         chunk_len(&g, g.r, k));
    if (rc != GZ_OK && g.local == GZ_OK)
      g.local = rc;
    if (MPI_Testsome((int)g.nch, g.rreq, &done, g.idx, g.st) != MPI_SUCCESS) {
      rc = GZ_ERR_MPI;
      goto fn_exit;
    }
    if (done != MPI_UNDEFINED && (rc = process(&g, 0, done)) != GZ_OK)
      goto fn_exit;
  }

  for (int t = 0; t <= g.P - 2; t++) {
    if (t > 0 && (rc = post_recvs(&g, t)) != GZ_OK)
      goto fn_exit;
    while (g.pending > 0) {
      if (MPI_Waitsome((int)g.nch, g.rreq, &done, g.idx, g.st) != MPI_SUCCESS) {
        rc = GZ_ERR_MPI;
        goto fn_exit;
      }
      if (done == MPI_UNDEFINED)
        break;
      if ((rc = process(&g, t, done)) != GZ_OK)
        goto fn_exit;
    }
  }
  if (MPI_Waitall((int)slots, g.sreq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto fn_exit;
  }
  rc = g.local;
fn_exit:
  return rc;
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
