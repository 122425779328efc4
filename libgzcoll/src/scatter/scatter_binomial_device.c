/*
 * scatter_binomial_device.c - device-centric binomial scatter: the root
 * quantizes its P blocks on the GPU and encodes every destination's block
 * on its own, GZ_DEV_STREAMS blocks at a time on concurrent streams (each
 * with its own scratch); the tree is that of scatter_binomial.c
 * (records [u64 size][indexed codes] in relative-rank order, forwarded
 * untouched); each receiver decodes and dequantizes its own record on the
 * GPU. Written against the backend table (device/backend.h): ranks whose
 * buffers are on the host run it with the CPU operations, and
 * GZCOLL_BACKEND=ops runs it entirely on the CPU (the CPU tests).
 *
 * Cost (n codes per block, D raw bytes per block, CR ratio)
 *   ceil(log2 P) alpha + (P-1) D / CR beta out of the root; on the GPU:
 *   quantize(P n), P-1 encodes of n overlapped on the streams, one decode
 *   and one dequantize of n per receiver. Records are forwarded from pinned
 *   host memory (device ranks copy only their compressed record in, and the
 *   root its compressed blocks out), whether or not MPI is CUDA-aware.
 *
 * Restrictions
 *   The records of a rank's subtree must fit the pinned staging
 *   (cfg.device_pool_bytes), the root's codes and encodings the device
 *   pool; else GZ_ERR_NOMEM on every rank. Uncompressed (forced mpi,
 *   escape values): scatter_mpi_device.c.
 */
#include "coll_internal.h"

#include "gz_block_walk.h"

#include "gz_device.h"

#include <stdio.h>
#include <string.h>

/* Root: encode the P-1 blocks on the streams, then lay out the records. */
static gz_result_t root_records(gz_ctx_t ctx, int on_dev, const int64_t *codes,
                                size_t count, int root, unsigned char *enc, size_t cap,
                                void *tmp0, unsigned char *tmp, size_t tmp_bytes,
                                unsigned char *rec, size_t *got, gz_run_t *run) {
  int P = ctx->size, ns = on_dev ? GZ_DEV_STREAMS : 1;
  uint64_t *sizes = gz_dev_size_slots(ctx);
  gz_exec_t ex[GZ_DEV_STREAMS];
  gz_result_t local = GZ_OK;
  double t = MPI_Wtime();
  size_t pos = 0;
  if (!sizes)
    return GZ_ERR_NOMEM;
  for (int s = 0; s < ns; s++) {
    gz_exec_make(ctx, on_dev, s, &ex[s]);
    ex[s].tmp = s ? tmp + (size_t)(s - 1) * tmp_bytes : tmp0; /* tmp0: the call's */
    ex[s].tmp_bytes = tmp_bytes;
  }
  sizes[0] = 0;
  for (int j = 1; j < P; j++) { /* block of relative rank j on stream j mod ns */
    gz_exec_t *e = &ex[j % ns];
    e->size_out = &sizes[j];
    if (e->be->encode_async(e, codes + (size_t)((j + root) % P) * count, count,
                            enc + (size_t)j * cap, cap) != GZ_OK &&
        local == GZ_OK)
      local = GZ_ERR_UNSUPPORTED;
  }
  for (int s = 0; s < ns; s++) {
    gz_result_t rc = ex[s].be->sync(&ex[s]);
    if (rc != GZ_OK && local == GZ_OK)
      local = rc;
  }
  for (int j = 0; j < P && local == GZ_OK; j++) {
    uint64_t size = j ? sizes[j] : 0;
    gz_put_u64le(rec + pos, size);
    if (size &&
        ex[0].be->memcpy(&ex[0], rec + pos + 8, enc + (size_t)j * cap, size) != GZ_OK)
      local = GZ_ERR_UNSUPPORTED;
    pos += 8 + (size_t)size;
    if (j) {
      run->code_elems += count;
      run->code_bytes += size;
    }
  }
  if (local == GZ_OK)
    local = ex[0].be->sync(&ex[0]);
  run->t_codec += MPI_Wtime() - t;
  run->passes += (uint64_t)(P - 1) * count;
  *got = local == GZ_OK ? pos : 0;
  return local;
}

/* Beyond the codes and the call's scratch: the root's P encodings (a
 * receiver's one), the other streams' scratch and, on the host, the records
 * of this rank's subtree (device ranks keep them in the pinned staging). */
static size_t ws(gz_ctx_t ctx, const gz_args_t *a) {
  const gz_backend_t *be = a->ex->be;
  int P = ctx->size, is_root = ctx->rank == a->root, on_dev = be->on_device;
  size_t cap = be->encode_bound(a->count), ws, recb;
  size_t tmpb = be->tmp_bytes(is_root ? a->total : a->count);
  if (a->count && !cap)
    return SIZE_MAX;
  recb = cap > SIZE_MAX / 2 / (size_t)P - 8
             ? SIZE_MAX
             : (size_t)gz_binomial_subtree((ctx->rank - a->root + P) % P, P) * (cap + 8);
  if (on_dev && recb > ctx->hstage.cap)
    return SIZE_MAX; /* GZ_ERR_NOMEM */
  ws = gz_ws_add(0, is_root ? (size_t)P : 1, cap);
  ws = gz_ws_add(ws, on_dev ? GZ_DEV_STREAMS - 1 : 0, tmpb);
  return on_dev ? ws : gz_ws_add(ws, recb, 1);
}

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  gz_exec_t *ex = a->ex;
  gz_run_t *run = j->run;
  int64_t *codes = j->codes;
  int P = ctx->size, root = a->root, is_root = ctx->rank == root;
  int on_dev = ex->be->on_device, rr = (ctx->rank - root + P) % P, mask = 1;
  size_t count = a->count, cap = ex->be->encode_bound(count), got = 0;
  size_t tmpb = ex->be->tmp_bytes(is_root ? a->total : count);
  size_t recb = (size_t)gz_binomial_subtree(rr, P) * (cap + 8);
  unsigned char *enc = gz_dev_take(ctx, on_dev, is_root ? (size_t)P : 1, cap);
  unsigned char *tmp = gz_dev_take(ctx, on_dev, on_dev ? GZ_DEV_STREAMS - 1 : 0, tmpb);
  unsigned char *rec = on_dev ? ctx->hstage.base : gz_dev_take(ctx, 0, recb, 1);
  gz_result_t rc, local = GZ_OK;

  snprintf(j->reason, sizeof j->reason, "device-centric binomial (%s)",
           on_dev ? "cuda" : "cpu");
  if (!enc || (on_dev && !tmp) || !rec)
    return GZ_ERR_NOMEM; /* reservation too small: a bug */
  /* the tree (scatter_binomial.c), records in host memory */
  if (rr == 0) {
    local = root_records(ctx, on_dev, codes, count, root, enc, cap, ex->tmp, tmp, tmpb,
                         rec, &got, run);
    while (mask < P)
      mask <<= 1;
  } else {
    while (!(rr & mask))
      mask <<= 1;
    rc = gz_xfer(ctx, GZ_TAG_DEVICE, NULL, 0, MPI_PROC_NULL, rec, recb,
                 (ctx->rank - mask + P) % P, &got, run);
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
        lo = hi = 0;
      run->bytes_raw += (size_t)gz_binomial_subtree(c, P) * count * run->esz;
      rc = gz_xfer(ctx, GZ_TAG_DEVICE, rec + lo, hi - lo, (ctx->rank + mask) % P, NULL, 0,
                   MPI_PROC_NULL, NULL, run);
      if (rc != GZ_OK)
        return rc;
    }
  }
  /* a receiver decodes its own record */
  if (rr != 0 && local == GZ_OK) {
    uint64_t size = got >= 8 ? gz_get_u64le(rec) : 0;
    double t = MPI_Wtime();
    if (got < 8 || size > got - 8)
      local = GZ_ERR_CORRUPT;
    else {
      const unsigned char *src = rec + 8;
      if (on_dev) {
        local = ex->be->memcpy(ex, enc, rec + 8, (size_t)size);
        src = enc;
      }
      if (local == GZ_OK)
        local =
            ex->be->decode_reduce(ex, GZ_DEV_OP_REPLACE, src, (size_t)size, codes, count);
      if (local == GZ_OK)
        local = ex->be->sync(ex);
    }
    run->t_codec += MPI_Wtime() - t;
    run->passes += count;
  }
  return local;
}

const gz_algorithm_t gz_algo_scatter_binomial_device = {
    .name = "binomial", .coll = GZ_COLL_SCATTER, .device = 1, .ws = ws, .run = run};
