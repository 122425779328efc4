/*
 * scatter_binomial.c - scatter by binomial tree with every destination's
 * block compressed on its own, once, at the root. Written once against the
 * backend table (device/backend.h): the host row runs it with the CPU
 * operations, the device row with the backend of the rank's buffers (CUDA,
 * or the CPU for a rank whose buffers are on the host; GZCOLL_BACKEND=ops
 * runs the device row on the CPU), so the CPU tests run the very code the
 * GPU runs.
 *
 * Algorithm
 *   Ranks are numbered relative to the root (rr = (rank - root) mod P). The
 *   root encodes the block of every other rank separately (indexed codes)
 *   and packs them in relative-rank order as records [u64 size][size bytes
 *   of codes], back to back. The subtree of relative rank rr is the range
 *   [rr, rr + m), m the lowest set bit of rr (the root's is [0, P)), so the
 *   records of any subtree are one contiguous byte range: each rank
 *   receives its subtree's records in one message (the sizes travel inside
 *   it), forwards the sub-range of each child without touching the payload
 *   (no recompression), then decodes its own record once.
 *   On the host the root encodes in the driver's quantization pass (the
 *   first hook: each block is one piece, encoded from L1 as it is
 *   quantized, its codes never written), pieces cap + 16 bytes apart in
 *   block order; compact_records then moves them into records in place and
 *   rotates the blocks before the root's behind those after it, so the
 *   messages are byte for byte those of the device path. A host receiver
 *   decodes its record straight into values (no code buffer, no dequantize
 *   pass). The device rows encode the quantized codes with the backend's
 *   encode (on a GPU GZ_DEV_STREAMS blocks at a time on concurrent streams,
 *   each with its own scratch), decode into codes, and the driver
 *   dequantizes.
 *   Receivers wait for their message quietly (gz_transfer with quiet; the
 *   driver's agreements of a rooted call too): on ranks that share cores,
 *   they nap instead of spinning in MPI while the root compresses.
 *
 * Cost (n codes per block, D raw bytes per block, CR compression ratio)
 *   ceil(log2 P) alpha + (P-1) D / CR beta out of the root, halving down
 *   the tree; compression 2 P n t: the root's one read of its P blocks
 *   quantizes P n values and encodes the (P-1) n codes of the others from
 *   L1, (2P - 1) n t (fused, the encoding is not a pass of its own, but it
 *   is still work: on one core the read took 1.5-1.8 t per value at P = 4,
 *   against 1.75 for 2P - 1 operations and 1 for a single pass, i17c in
 *   BENCHMARKS.md; the root's codec sample counts the same operations,
 *   gz_run_quantize_range), then one receiver's decode of n straight into
 *   values, n t. Every element carries one quantization (<= eb). Records live
 *   in host memory: device ranks keep them in the pinned staging (they copy
 *   only their own compressed record in, the root its compressed blocks
 *   out), whether or not MPI is CUDA-aware.
 *
 * Restrictions
 *   The root's own block is not sent (the driver copies it exactly).
 *   Records are parsed defensively: a truncated or inconsistent message is
 *   GZ_ERR_CORRUPT (agreed on by the driver), never an out-of-bounds read.
 *   Device ranks: the records of their subtree must fit the pinned staging
 *   (cfg.device_pool_bytes), the root's codes and encodings the device pool;
 *   else GZ_ERR_NOMEM on every rank.
 */
#include "coll_internal.h"

#include "gz_block_walk.h"

#include "gz_device.h"

#include <stdio.h>
#include <string.h>

/* The call's backend: the device path's, else the CPU's. */
static const gz_backend_t *backend(const gz_args_t *a) {
  return a->ex ? a->ex->be : &gz_backend_cpu;
}

/* Root: encode the P-1 blocks, then lay out the records in rec. On the CPU
 * each block is encoded straight into its record; on a device into enc, on
 * the streams, then copied out. sizes: P host-readable slots. */
static gz_result_t root_records(gz_ctx_t ctx, gz_exec_t *ex0, const int64_t *codes,
                                size_t count, int root, unsigned char *enc, size_t cap,
                                unsigned char *tmp, size_t tmp_bytes, uint64_t *sizes,
                                unsigned char *rec, size_t *got, gz_run_t *run) {
  int P = ctx->size, on_dev = ex0->be->on_device, ns = on_dev ? GZ_DEV_STREAMS : 1;
  gz_exec_t ex[GZ_DEV_STREAMS];
  gz_result_t local = GZ_OK, rc;
  double t = MPI_Wtime();
  size_t pos = 8;
  ex[0] = *ex0;
  for (int s = 1; s < ns; s++) {
    gz_exec_make(ctx, on_dev, s, &ex[s]);
    ex[s].tmp = tmp + (size_t)(s - 1) * tmp_bytes;
    ex[s].tmp_bytes = tmp_bytes;
  }
  sizes[0] = 0;
  gz_put_u64le(rec, 0);                           /* the root's own record is empty */
  for (int j = 1; j < P && local == GZ_OK; j++) { /* relative rank j, stream j mod ns */
    gz_exec_t *e = &ex[j % ns];
    e->size_out = &sizes[j];
    rc = e->be->encode_async(e, codes + (size_t)((j + root) % P) * count, count,
                             on_dev ? enc + (size_t)j * cap : rec + pos + 8, cap);
    if (rc == GZ_OK && !on_dev) { /* the CPU: in place, one after the other */
      gz_put_u64le(rec + pos, sizes[j]);
      pos += 8 + (size_t)sizes[j];
    }
    if (rc != GZ_OK)
      local = rc;
  }
  for (int s = 0; s < ns; s++) {
    rc = ex[s].be->sync(&ex[s]);
    if (rc != GZ_OK && local == GZ_OK)
      local = rc;
  }
  for (int j = 1; j < P && local == GZ_OK && on_dev; j++) {
    gz_put_u64le(rec + pos, sizes[j]);
    local = ex[0].be->memcpy(&ex[0], rec + pos + 8, enc + (size_t)j * cap, sizes[j]);
    pos += 8 + (size_t)sizes[j];
  }
  if (local == GZ_OK && on_dev)
    local = ex[0].be->sync(&ex[0]);
  for (int j = 1; j < P && local == GZ_OK; j++) {
    run->code_elems += count;
    run->code_bytes += sizes[j];
  }
  run->t_codec += MPI_Wtime() - t;
  run->passes += (uint64_t)(P - 1) * count;
  *got = local == GZ_OK ? pos : 0;
  return local;
}

/* The host root's blocks are encoded in the quantization's pass (the
 * driver's first message, never written as codes): the blocks [off, off +
 * len) of the send buffer, all but the root's own when it is the first or
 * the last, one piece per block, piece k at k * stride bytes (stride: room
 * for the records compacted in place, compact_records). */
static void first_span(gz_ctx_t ctx, const gz_args_t *a, size_t *off, size_t *len) {
  int P = ctx->size, root = a->root;
  *off = root == 0 ? a->count : 0;
  *len = a->count * (size_t)(P - (root == 0 || root == P - 1 ? 1 : 0));
}

static size_t first_stride(const gz_args_t *a) {
  return gz_backend_cpu.encode_bound(a->count) + 16;
}

static void first(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f) {
  first_span(ctx, a, &f->off, &f->len);
  f->piece = a->count;
  f->stride = first_stride(a);
  f->keep = 0;
}

static void reverse(unsigned char *b, size_t n) {
  for (size_t i = 0; i + 1 < n - i; i++) {
    unsigned char c = b[i];
    b[i] = b[n - 1 - i];
    b[n - 1 - i] = c;
  }
}

/* The host root after the fused pass: the pieces of f (blocks f->off /
 * count + k) become the records of root_records' layout in f->msg itself:
 * moved left to right into [8, ...) (record k ends at or before piece k + 1
 * starts: stride = cap + 16), in block order, the root's block skipped;
 * then the blocks before the root are rotated behind those after it
 * (relative-rank order). Returns the bytes of records. */
static size_t compact_records(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f,
                              uint64_t *sizes, gz_run_t *run) {
  int P = ctx->size, root = a->root;
  size_t pos = 8, before = 8, b0 = f->off / a->count;
  double t = MPI_Wtime();
  for (size_t k = 0; k * f->piece < f->len; k++) {
    int b = (int)(b0 + k);
    if (b == root)
      continue;
    memmove(f->msg + pos + 8, f->msg + k * f->stride, f->sizes[k]);
    gz_put_u64le(f->msg + pos, (uint64_t)f->sizes[k]);
    sizes[(b - root + P) % P] = f->sizes[k];
    pos += 8 + f->sizes[k];
    if (b < root)
      before = pos;
    run->code_elems += a->count;
    run->code_bytes += f->sizes[k];
  }
  /* [8, before): blocks 0..root-1, [before, pos): root+1..P-1; swap them */
  if (before > 8 && pos > before) {
    reverse(f->msg + 8, before - 8);
    reverse(f->msg + before, pos - before);
    reverse(f->msg + 8, pos - 8);
  }
  gz_put_u64le(f->msg, 0); /* the root's own record is empty */
  sizes[0] = 0;
  run->t_codec += MPI_Wtime() - t;
  return pos;
}

/* Beyond the codes and the call's scratch: on a device, the root's P
 * encodings (a receiver's one) and the other streams' scratch; on the CPU,
 * the P size slots and the records of this rank's subtree (device ranks
 * keep them in the pinned staging). */
static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  const gz_backend_t *be = backend(a);
  int P = ctx->size, is_root = ctx->rank == a->root, on_dev = be->on_device;
  size_t cap = be->encode_bound(a->count), ws, recb;
  size_t tmpb = be->tmp_bytes(is_root ? a->total : a->count);
  if (a->count && !cap)
    return SIZE_MAX;
  recb = cap > SIZE_MAX / 2 / (size_t)P - 8
             ? SIZE_MAX
             : (size_t)gz_binomial_subtree((ctx->rank - a->root + P) % P, P) * (cap + 8);
  if (on_dev && recb > ctx->hstage.cap)
    return SIZE_MAX;                   /* GZ_ERR_NOMEM */
  if (!a->ex && is_root && a->count) { /* the fused pass's pieces hold the records */
    size_t off, len, pieces;
    first_span(ctx, a, &off, &len);
    pieces = len / a->count;
    if (first_stride(a) > SIZE_MAX / 2 / (size_t)P)
      return SIZE_MAX;
    if (pieces) {
      ws = gz_ws_add(0, (size_t)P, sizeof(uint64_t));
      ws = gz_ws_add(ws, pieces, first_stride(a));
      return gz_ws_add(ws, pieces, sizeof(size_t));
    }
  }
  if (!on_dev)
    return gz_ws_add(gz_ws_add(0, (size_t)P, sizeof(uint64_t)), recb, 1);
  ws = gz_ws_add(0, is_root ? (size_t)P : 1, cap);
  return gz_ws_add(ws, GZ_DEV_STREAMS - 1, tmpb);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_exec_t cpu, *ex = a->ex;
  gz_run_t *run = j->run;
  int64_t *codes = j->codes;
  int P = ctx->size, root = a->root, is_root = ctx->rank == root;
  int on_dev, rr = (ctx->rank - root + P) % P, mask = 1;
  size_t count = a->count, cap, got = 0, tmpb, recb;
  unsigned char *enc = NULL, *tmp = NULL, *rec;
  uint64_t *sizes;
  gz_result_t rc, local = GZ_OK;

  if (!ex) { /* the host row: the CPU operations */
    gz_exec_make(ctx, 0, 0, &cpu);
    ex = &cpu;
  } else {
    snprintf(j->reason, sizeof j->reason, "device-centric binomial (%s)", ex->be->name);
  }
  on_dev = ex->be->on_device;
  cap = ex->be->encode_bound(count);
  tmpb = ex->be->tmp_bytes(is_root ? a->total : count);
  recb = (size_t)gz_binomial_subtree(rr, P) * (cap + 8);
  if (on_dev) {
    enc = gz_dev_take(ctx, 1, is_root ? (size_t)P : 1, cap);
    tmp = gz_dev_take(ctx, 1, GZ_DEV_STREAMS - 1, tmpb);
    rec = ctx->hstage.base;
    sizes = gz_dev_size_slots(ctx);
  } else {
    sizes = gz_ws_take(ctx, (size_t)P, sizeof(uint64_t));
    rec = j->first ? j->first->msg : gz_ws_take(ctx, recb, 1);
  }
  if ((on_dev && (!enc || !tmp)) || !rec || !sizes)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */

  if (rr == 0 && j->first) { /* the host: encoded in the quantization's pass */
    got = compact_records(ctx, a, j->first, sizes, run);
    while (mask < P)
      mask <<= 1;
  } else if (rr == 0) {
    local = root_records(ctx, ex, codes, count, root, enc, cap, tmp, tmpb, sizes, rec,
                         &got, run);
    while (mask < P)
      mask <<= 1;
  } else {
    while (!(rr & mask))
      mask <<= 1;
    /* quietly: no spinning while the root compresses */
    rc = gz_transfer(ctx, GZ_TAG_SCATTER, NULL, 0, MPI_PROC_NULL, rec, recb,
                     (ctx->rank - mask + P) % P, &got, run, 1);
    if (rc != GZ_OK)
      return rc;
  }
  /* each child's subtree: records [c - rr, last) of ours, forwarded untouched */
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int c = rr + mask;
    if (c < P) {
      int last = c + gz_binomial_subtree(c, P) - rr;
      size_t lo = 0, hi = 0, p = 0;
      for (int k = 0; k <= last && local == GZ_OK; k++) {
        uint64_t size;
        if (k == c - rr)
          lo = p;
        if (k == last) {
          hi = p;
          break;
        }
        if (got - p < 8 || (size = gz_get_u64le(rec + p)) > got - p - 8) {
          local = GZ_ERR_CORRUPT;
          break;
        }
        p += 8 + (size_t)size;
      }
      if (local != GZ_OK)
        lo = hi = 0; /* keep the tree's messages flowing */
      run->bytes_raw += (size_t)gz_binomial_subtree(c, P) * count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_SCATTER, rec + lo, hi - lo, (ctx->rank + mask) % P, NULL,
                   0, MPI_PROC_NULL, NULL, run);
      if (rc != GZ_OK)
        return rc;
    }
  }
  /* a receiver decodes its own record (on the host straight into values,
   * timed there; the driver then has no dequantize pass to make) */
  if (rr != 0 && local == GZ_OK) {
    uint64_t size = got >= 8 ? gz_get_u64le(rec) : 0;
    if (got < 8 || size > got - 8) {
      local = GZ_ERR_CORRUPT;
    } else if (!a->ex && count) {
      gz_values_t v = {.dtype = a->dtype, .out = a->out, .eb = j->eb / a->divisor};
      local = gz_run_decode_values(run, rec + 8, (size_t)size, &v, 0, count);
      j->dequantized = 1;
      j->amax = v.amax;
    } else {
      const unsigned char *src = rec + 8;
      double t = MPI_Wtime();
      if (on_dev) {
        local = ex->be->memcpy(ex, enc, rec + 8, (size_t)size);
        src = enc;
      }
      if (local == GZ_OK)
        local =
            ex->be->decode_reduce(ex, GZ_DEV_OP_REPLACE, src, (size_t)size, codes, count);
      if (local == GZ_OK)
        local = ex->be->sync(ex);
      run->t_codec += MPI_Wtime() - t;
      run->passes += count;
    }
  }
  return local;
}

/* The root's read ((2P - 1) n t), the tree, one receiver's decode (n t). */
static double cost(const gz_cost_t *c) {
  return 3 * c->g + 2 * c->P * c->n * c->t + c->L * c->alpha +
         (c->P - 1) * c->C * c->beta;
}

const gz_algorithm_t gz_algo_scatter_binomial = {.name = "binomial",
                                                 .coll = GZ_COLL_SCATTER,
                                                 .ws = ws,
                                                 .run = run,
                                                 .cost = cost,
                                                 .first = first};
const gz_algorithm_t gz_algo_scatter_binomial_device = {
    .name = "binomial", .coll = GZ_COLL_SCATTER, .device = 1, .ws = ws, .run = run};
