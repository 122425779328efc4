/*
 * ring.c - the ring pipeline shared by the ring algorithms
 * (reduce_scatter_ring.c, allgather_ring.c): the step loop, the posting of
 * sends and receives, and the bookkeeping of chunks and slots. An algorithm
 * says which block rank r sends in step s and what it does with a chunk
 * that arrives (gz_ring_ops_t).
 *
 * Pipeline
 *   The count codes are split into P blocks (gz_block_off: ragged, empty
 *   blocks send nothing). In step s (s = 0 .. P-2) rank r sends block
 *   (r - s - lag) mod P to rank r + 1 and receives block (r - s - lag - 1)
 *   mod P from rank r - 1. Blocks travel as chunks of at most chunk codes
 *   (gz_ring_geometry), each encoded on its own. All receives of a step are
 *   posted at its start; a chunk is handed to ops->arrived as soon as it
 *   arrives (MPI_Waitsome), and since the block received in step s is the
 *   one sent in step s + 1, the algorithm sends it on at once: the codec of
 *   one chunk overlaps the transfer of the others, across steps. In step 0
 *   the first block is encoded chunk by chunk and the receives are polled
 *   (MPI_Testsome) between the chunks; with pre, the driver's quantization
 *   has encoded it already (allreduce_ring.c's first message), and with
 *   vals each of its chunks is dequantized right after its encode, while
 *   its codes are in cache.
 *
 * Slots and tags
 *   keep = 0: two send sets alternating by step parity and one receive set
 *   (3 x chunks slots; with pre, its message buffer is send set 0 and the
 *   workspace holds the other two); before step s posts its receives, the
 *   sends of step s - 1, whose set step s + 1 fills, are completed.
 *   keep = 1: one slot per (block, chunk), kept to the end, so a chunk can
 *   be forwarded from where it arrived and no slot is reused.
 *   Tags are GZ_TAG_RING + (tag_set + step parity) * chunks + chunk; MPI's
 *   non-overtaking order keeps steps s and s + 2 apart, and two ring stages
 *   that run one after the other use different tag sets.
 *
 * Failures
 *   Local codec failures are remembered (gz_ring_note) and the ring keeps
 *   going (an empty message stands for a chunk that could not be encoded);
 *   the caller agrees on the outcome. MPI failures return at once.
 */
#include "coll_internal.h"

static int mod(int a, int P) { return ((a % P) + P) % P; }

static size_t nslots(const gz_ring_ops_t *ops, size_t nch, int P, int pre) {
  return ops->keep ? nch * (size_t)P : (pre ? 2 : 3) * nch;
}

static size_t nsends(const gz_ring_ops_t *ops, size_t nch, int P) {
  return ops->keep ? nch * (size_t)P : 2 * nch;
}

void gz_ring_first(gz_ctx_t ctx, size_t count, gz_first_t *f) {
  int P = ctx->size, b = (ctx->rank + P - 1) % P;
  size_t nch;
  gz_ring_geometry(ctx, count, &f->piece, &nch);
  f->off = gz_block_off(count, P, b);
  f->len = P > 1 ? gz_block_len(count, P, b) : 0;
  f->stride = gz_codes_indexed_bound(f->piece);
  f->keep = 0;
}

size_t gz_ring_first_ws(gz_ctx_t ctx, size_t count, size_t ws) {
  size_t chunk, nch;
  gz_ring_geometry(ctx, count, &chunk, &nch);
  return gz_ws_add(gz_ws_add(ws, nch, gz_codes_indexed_bound(chunk)), nch,
                   sizeof(size_t));
}

size_t gz_ring_ws(gz_ctx_t ctx, const gz_ring_ops_t *ops, size_t count, int pre) {
  size_t chunk, nch, ws = 0;
  gz_ring_geometry(ctx, count, &chunk, &nch);
  ws = gz_ws_add(ws, nslots(ops, nch, ctx->size, pre), gz_codes_indexed_bound(chunk));
  ws = gz_ws_add(ws, nsends(ops, nch, ctx->size) + nch, sizeof(MPI_Request));
  ws = gz_ws_add(ws, nch, sizeof(int));        /* Waitsome indices */
  ws = gz_ws_add(ws, nch, sizeof(MPI_Status)); /* Waitsome statuses */
  return ws;
}

static size_t nchunks(const gz_ring_t *g, int b) {
  size_t len = gz_block_len(g->count, g->P, b);
  return (len + g->chunk - 1) / g->chunk;
}

size_t gz_ring_chunk_len(const gz_ring_t *g, int b, size_t k) {
  size_t len = gz_block_len(g->count, g->P, b) - k * g->chunk;
  return len < g->chunk ? len : g->chunk;
}

size_t gz_ring_off(const gz_ring_t *g, int b, size_t k) {
  return gz_block_off(g->count, g->P, b) + k * g->chunk;
}

void *gz_ring_codes(const gz_ring_t *g, int b, size_t k) {
  return gz_code_at(g->acc, g->narrow, gz_ring_off(g, b, k));
}

void gz_ring_note(gz_ring_t *g, gz_result_t rc) {
  if (rc != GZ_OK && g->local == GZ_OK)
    g->local = rc;
}

/* The request of chunk k of block b sent in step s. */
static size_t send_index(const gz_ring_t *g, int s, int b, size_t k) {
  return g->ops->keep ? (size_t)b * g->nch + k : (size_t)(s & 1) * g->nch + k;
}

/* Where chunk k of block b is sent from in step s. */
static unsigned char *send_slot(const gz_ring_t *g, int s, int b, size_t k) {
  return g->ops->keep ? g->slots + ((size_t)b * g->nch + k) * g->cap
                      : g->send_set[s & 1] + k * g->cap;
}

/* Where chunk k of block b lands. */
static unsigned char *recv_slot(const gz_ring_t *g, int b, size_t k) {
  return g->ops->keep ? g->slots + ((size_t)b * g->nch + k) * g->cap
                      : g->recv_set + k * g->cap;
}

/* The block that arrives in step s. */
static int recv_block(const gz_ring_t *g, int s) {
  return mod(g->r - s - g->ops->lag - 1, g->P);
}

static int tag(const gz_ring_t *g, int s, size_t k) {
  return GZ_TAG_RING + (int)(((size_t)g->ops->tag_set + (size_t)(s & 1)) * g->nch + k);
}

gz_result_t gz_ring_send(gz_ring_t *g, int s, int b, size_t k, size_t size) {
  size_t i = send_index(g, s, b, k);
  g->run->bytes_raw += gz_ring_chunk_len(g, b, k) * g->run->esz;
  g->run->bytes_sent += size;
  if (MPI_Isend(send_slot(g, s, b, k), (int)size, MPI_BYTE, g->right, tag(g, s, k),
                g->ctx->comm, &g->sreq[i]) != MPI_SUCCESS)
    return GZ_ERR_MPI;
  return GZ_OK;
}

gz_result_t gz_ring_encode_send(gz_ring_t *g, int s, int b, size_t k) {
  size_t size = 0;
  gz_ring_note(g, gz_run_encode_w(g->run, gz_ring_codes(g, b, k), g->narrow,
                                  gz_ring_chunk_len(g, b, k), send_slot(g, s, b, k),
                                  g->cap, &size));
  return gz_ring_send(g, s, b, k, size);
}

/* Step 0's chunk k of block b: send it as the driver encoded it (pre), or
 * encode it; with vals, dequantize it while its codes are in cache. */
static gz_result_t send_first(gz_ring_t *g, int b, size_t k) {
  size_t len = gz_ring_chunk_len(g, b, k);
  gz_result_t rc;
  if (g->pre) {
    g->run->code_elems += len;
    g->run->code_bytes += g->pre->sizes[k];
    rc = gz_ring_send(g, 0, b, k, g->pre->sizes[k]);
  } else {
    rc = gz_ring_encode_send(g, 0, b, k);
  }
  if (rc == GZ_OK && g->vals)
    gz_ring_note(g, gz_run_values(g->run, gz_ring_codes(g, b, k), g->narrow, g->vals,
                                  gz_ring_off(g, b, k), len));
  return rc;
}

static gz_result_t post_recvs(gz_ring_t *g, int s) {
  int b = recv_block(g, s);
  size_t n = nchunks(g, b);
  for (size_t k = 0; k < n; k++)
    if (MPI_Irecv(recv_slot(g, b, k), (int)g->cap, MPI_BYTE, g->left, tag(g, s, k),
                  g->ctx->comm, &g->rreq[k]) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  g->pending = n;
  return GZ_OK;
}

/* Hand the done chunks that arrived in step s to the algorithm. */
static gz_result_t process(gz_ring_t *g, int s, int done) {
  int b = recv_block(g, s);
  for (int i = 0; i < done; i++) {
    size_t k = (size_t)g->idx[i];
    int bytes = 0;
    gz_result_t rc;
    MPI_Get_count(&g->st[i], MPI_BYTE, &bytes);
    g->pending--;
    if ((rc = g->ops->arrived(g, s, b, k, recv_slot(g, b, k), (size_t)bytes,
                              s + 1 <= g->P - 2)) != GZ_OK)
      return rc;
  }
  return GZ_OK;
}

/* Wait for some receives of step s (poll: only test) and process them. */
static gz_result_t progress(gz_ring_t *g, int s, int poll) {
  int done = 0, ok;
  ok = poll ? MPI_Testsome((int)g->nch, g->rreq, &done, g->idx, g->st)
            : MPI_Waitsome((int)g->nch, g->rreq, &done, g->idx, g->st);
  if (ok != MPI_SUCCESS)
    return GZ_ERR_MPI;
  if (done == MPI_UNDEFINED) {
    g->pending = 0; /* nothing left to wait for */
    return GZ_OK;
  }
  return process(g, s, done);
}

gz_result_t gz_ring_run(gz_ctx_t ctx, const gz_ring_ops_t *ops, void *acc, int narrow,
                        size_t count, gz_op_t op, const gz_first_t *pre,
                        gz_values_t *vals, gz_run_t *run) {
  gz_ring_t g = {.ctx = ctx,
                 .ops = ops,
                 .acc = acc,
                 .narrow = narrow,
                 .count = count,
                 .op = op,
                 .pre = pre,
                 .vals = vals,
                 .P = ctx->size,
                 .r = ctx->rank,
                 .local = GZ_OK,
                 .run = run};
  gz_result_t rc = GZ_OK;
  size_t sends;
  int first;

  if (ctx->size == 1 || count == 0)
    return GZ_OK;
  g.left = mod(g.r - 1, g.P);
  g.right = mod(g.r + 1, g.P);
  gz_ring_geometry(ctx, count, &g.chunk, &g.nch);
  g.cap = gz_codes_indexed_bound(g.chunk);
  sends = nsends(ops, g.nch, g.P);
  g.slots = gz_ws_take(ctx, nslots(ops, g.nch, g.P, pre != NULL), g.cap);
  g.sreq = gz_ws_take(ctx, sends + g.nch, sizeof(MPI_Request));
  g.idx = gz_ws_take(ctx, g.nch, sizeof(int));
  g.st = gz_ws_take(ctx, g.nch, sizeof(MPI_Status));
  if (!g.slots || !g.sreq || !g.idx || !g.st ||
      (pre && (ops->keep || pre->stride != g.cap)))
    return GZ_ERR_NOMEM; /* reservation too small or pre not ring chunks: a bug */
  g.send_set[0] = pre ? pre->msg : g.slots;
  g.send_set[1] = pre ? g.slots : g.slots + g.nch * g.cap;
  g.recv_set = g.send_set[1] + g.nch * g.cap;
  g.rreq = g.sreq + sends;
  for (size_t i = 0; i < sends + g.nch; i++)
    g.sreq[i] = MPI_REQUEST_NULL;

  /* step 0: post the receives, then encode and send, polling in between */
  if ((rc = post_recvs(&g, 0)) != GZ_OK)
    goto fn_exit;
  first = mod(g.r - ops->lag, g.P);
  for (size_t k = 0; k < nchunks(&g, first); k++) {
    if ((rc = send_first(&g, first, k)) != GZ_OK || (rc = progress(&g, 0, 1)) != GZ_OK)
      goto fn_exit;
  }

  for (int s = 0; s <= g.P - 2; s++) {
    if (s > 0) {
      /* the sends of step s - 1 used the slots step s + 1 will fill */
      if (!ops->keep && MPI_Waitall((int)g.nch, g.sreq + (size_t)((s + 1) & 1) * g.nch,
                                    MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        rc = GZ_ERR_MPI;
        goto fn_exit;
      }
      if ((rc = post_recvs(&g, s)) != GZ_OK)
        goto fn_exit;
    }
    while (g.pending > 0)
      if ((rc = progress(&g, s, 0)) != GZ_OK)
        goto fn_exit;
  }
  if (MPI_Waitall((int)sends, g.sreq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto fn_exit;
  }
  rc = g.local;
fn_exit:
  return rc;
}
