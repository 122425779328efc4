/*
 * reduce_scatter_ring.c - reduce-scatter by ring on encoded integer codes,
 * with the codec pipelined against communication (as in C-Coll). Also the
 * first stage of allreduce_ring.c.
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
 *   Blocks travel as chunks of ctx->chunk_elems codes, each encoded on its
 *   own. All receives of a step are posted at its start. A chunk is
 *   decoded-and-reduced as soon as it arrives (MPI_Waitsome), and since the
 *   block received in step s is the block sent in step s + 1, that chunk is
 *   encoded and sent on at once: the codec of one chunk overlaps the
 *   transfer of the others, across steps. In step 0 the receives are polled
 *   (MPI_Testsome) between the encodes of the chunks sent. Send slots
 *   alternate between two sets by step parity; tags are (step parity,
 *   chunk), and MPI's non-overtaking order keeps steps s and s + 2 apart.
 *
 * Cost (n codes in all, D raw bytes, CR compression ratio)
 *   (P-1) alpha per chunk round + (P-1)/P D / CR beta
 *   compression: (P-1) encode(n/P) + (P-1) decode-reduce(n/P), overlapped
 *   with the transfers: per step max(D / (P CR) beta, codec(n/P)).
 *   Least bytes on the wire; many small codec calls.
 *
 * Restrictions
 *   Ops SUM, MAX, MIN on int64 codes. Local codec failures are remembered
 *   and the ring keeps going (an empty message stands for a chunk that
 *   could not be encoded); the caller agrees on the outcome.
 */
#include "coll_internal.h"

size_t gz_reduce_scatter_ring_ws(gz_ctx_t ctx, size_t count, int pre) {
  size_t chunk, nch, cap, ws = 0;
  gz_ring_geometry(ctx, count, &chunk, &nch);
  cap = gz_codes_indexed_bound(chunk);
  ws = gz_ws_add(ws, (pre ? 2 : 3) * nch, cap);     /* 2 send sets, 1 recv set */
  ws = gz_ws_add(ws, 3 * nch, sizeof(MPI_Request)); /* their requests */
  ws = gz_ws_add(ws, nch, sizeof(int));             /* Waitsome indices */
  ws = gz_ws_add(ws, nch, sizeof(MPI_Status));      /* Waitsome statuses */
  return ws;
}

typedef struct ring_rs {
  gz_ctx_t ctx;
  void *acc;
  int narrow; /* int32 codes */
  size_t count, chunk, nch, cap;
  gz_op_t op;
  int P, r, left, right;
  unsigned char *sslot[2], *rslot;
  MPI_Request *sreq[2], *rreq;
  int *idx;
  MPI_Status *st;
  size_t pending;        /* receives of the current step not yet processed */
  const gz_first_t *pre; /* step 0's chunks, encoded (sslot[0]; may be NULL) */
  gz_result_t local;
  gz_run_t *run;
} ring_rs_t;

static int mod(int a, int P) { return ((a % P) + P) % P; }

static size_t nchunks(const ring_rs_t *g, int b) {
  size_t len = gz_block_len(g->count, g->P, b);
  return (len + g->chunk - 1) / g->chunk;
}

static size_t chunk_len(const ring_rs_t *g, int b, size_t k) {
  size_t len = gz_block_len(g->count, g->P, b) - k * g->chunk;
  return len < g->chunk ? len : g->chunk;
}

static void *chunk_codes(const ring_rs_t *g, int b, size_t k) {
  return gz_code_at(g->acc, g->narrow, gz_block_off(g->count, g->P, b) + k * g->chunk);
}

static int tag(const ring_rs_t *g, int s, size_t k) {
  return GZ_TAG_RING + (int)((size_t)(s & 1) * g->nch + k);
}

/* Encode chunk k of block b and send it as step s. */
static gz_result_t send_chunk(ring_rs_t *g, int s, int b, size_t k) {
  unsigned char *slot = g->sslot[s & 1] + k * g->cap;
  size_t len = chunk_len(g, b, k), size = 0;
  gz_result_t rc = GZ_OK;
  if (s == 0 && g->pre) { /* encoded while quantizing */
    size = g->pre->sizes[k];
    g->run->code_elems += len;
    g->run->code_bytes += size;
  } else {
    rc = gz_run_encode_w(g->run, chunk_codes(g, b, k), g->narrow, len, slot, g->cap,
                         &size);
  }
  if (rc != GZ_OK && g->local == GZ_OK)
    g->local = rc;
  g->run->bytes_raw += len * g->run->esz;
  g->run->bytes_sent += size;
  if (MPI_Isend(slot, (int)size, MPI_BYTE, g->right, tag(g, s, k), g->ctx->comm,
                &g->sreq[s & 1][k]) != MPI_SUCCESS)
    return GZ_ERR_MPI;
  return GZ_OK;
}

static gz_result_t post_recvs(ring_rs_t *g, int s) {
  int b = mod(g->r - s - 2, g->P);
  size_t n = nchunks(g, b);
  for (size_t k = 0; k < n; k++)
    if (MPI_Irecv(g->rslot + k * g->cap, (int)g->cap, MPI_BYTE, g->left, tag(g, s, k),
                  g->ctx->comm, &g->rreq[k]) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  g->pending = n;
  return GZ_OK;
}

/* Reduce the chunks that arrived in step s and pass them on to step s + 1. */
static gz_result_t process(ring_rs_t *g, int s, int done) {
  int b = mod(g->r - s - 2, g->P);
  for (int i = 0; i < done; i++) {
    size_t k = (size_t)g->idx[i];
    int bytes = 0;
    gz_result_t rc;
    MPI_Get_count(&g->st[i], MPI_BYTE, &bytes);
    rc = gz_run_decode_reduce_w(g->run, g->op, g->rslot + k * g->cap, (size_t)bytes,
                                chunk_codes(g, b, k), g->narrow, chunk_len(g, b, k));
    if (rc != GZ_OK && g->local == GZ_OK)
      g->local = rc;
    g->pending--;
    if (s + 1 <= g->P - 2 && (rc = send_chunk(g, s + 1, b, k)) != GZ_OK)
      return rc;
  }
  return GZ_OK;
}

gz_result_t gz_reduce_scatter_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                                   gz_op_t op, const gz_first_t *pre, gz_run_t *run) {
  ring_rs_t g;
  gz_result_t rc = GZ_OK;
  int done = 0;

  if (ctx->size == 1 || count == 0)
    return GZ_OK;
  g.ctx = ctx;
  g.acc = acc;
  g.narrow = narrow;
  g.count = count;
  g.op = op;
  g.P = ctx->size;
  g.r = ctx->rank;
  g.left = mod(g.r - 1, g.P);
  g.right = mod(g.r + 1, g.P);
  g.local = GZ_OK;
  g.pre = pre;
  g.run = run;
  gz_ring_geometry(ctx, count, &g.chunk, &g.nch);
  g.cap = gz_codes_indexed_bound(g.chunk);
  /* the 3 slot sets in one piece, or sslot[0] is pre's */
  g.sslot[0] = pre ? pre->msg : gz_ws_take(ctx, 3 * g.nch, g.cap);
  g.sslot[1] = pre ? gz_ws_take(ctx, 2 * g.nch, g.cap) : NULL;
  if (!pre && g.sslot[0])
    g.sslot[1] = g.sslot[0] + g.nch * g.cap;
  g.sreq[0] = gz_ws_take(ctx, 3 * g.nch, sizeof(MPI_Request));
  g.idx = gz_ws_take(ctx, g.nch, sizeof(int));
  g.st = gz_ws_take(ctx, g.nch, sizeof(MPI_Status));
  if (!g.sslot[0] || !g.sslot[1] || !g.sreq[0] || !g.idx || !g.st)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  g.rslot = g.sslot[1] + g.nch * g.cap;
  g.sreq[1] = g.sreq[0] + g.nch;
  g.rreq = g.sreq[1] + g.nch;
  for (size_t i = 0; i < 3 * g.nch; i++)
    g.sreq[0][i] = MPI_REQUEST_NULL;

  /* step 0: post the receives, then encode and send, polling in between */
  if ((rc = post_recvs(&g, 0)) != GZ_OK)
    goto fn_exit;
  {
    int b = mod(g.r - 1, g.P);
    size_t n = nchunks(&g, b);
    for (size_t k = 0; k < n; k++) {
      if ((rc = send_chunk(&g, 0, b, k)) != GZ_OK)
        goto fn_exit;
      if (MPI_Testsome((int)g.nch, g.rreq, &done, g.idx, g.st) != MPI_SUCCESS) {
        rc = GZ_ERR_MPI;
        goto fn_exit;
      }
      if (done != MPI_UNDEFINED && (rc = process(&g, 0, done)) != GZ_OK)
        goto fn_exit;
    }
  }

  for (int s = 0; s <= g.P - 2; s++) {
    if (s > 0) {
      /* the sends of step s - 1 used the slots step s + 1 will fill */
      if (MPI_Waitall((int)g.nch, g.sreq[(s + 1) & 1], MPI_STATUSES_IGNORE) !=
          MPI_SUCCESS) {
        rc = GZ_ERR_MPI;
        goto fn_exit;
      }
      if ((rc = post_recvs(&g, s)) != GZ_OK)
        goto fn_exit;
    }
    while (g.pending > 0) {
      if (MPI_Waitsome((int)g.nch, g.rreq, &done, g.idx, g.st) != MPI_SUCCESS) {
        rc = GZ_ERR_MPI;
        goto fn_exit;
      }
      if (done == MPI_UNDEFINED)
        break;
      if ((rc = process(&g, s, done)) != GZ_OK)
        goto fn_exit;
    }
  }
  if (MPI_Waitall((int)(2 * g.nch), g.sreq[0], MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto fn_exit;
  }
  rc = g.local;
fn_exit:
  return rc;
}

static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  return gz_reduce_scatter_ring_ws(ctx, a->total, 0);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  return gz_reduce_scatter_ring(ctx, j->codes, 0, j->a->total, j->a->op, NULL, j->run);
}

static double cost(const gz_cost_t *c) {
  double cb = c->C * c->beta, tt = 2 * c->n * c->t;
  return 3 * c->g + (c->P + 1) * c->n * c->t +
         (c->P - 1) * (c->alpha + (cb > tt ? cb : tt));
}

const gz_algorithm_t gz_algo_reduce_scatter_ring = {
    .name = "ring", .coll = GZ_COLL_REDUCE_SCATTER, .ws = ws, .run = run, .cost = cost};
