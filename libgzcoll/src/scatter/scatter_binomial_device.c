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
 *   escape values): point to point from the root, GZ_DEV_PIECE / P
 *   elements of each block at a time.
 */
#include "coll_internal.h"

#include "gz_device.h"

#include <string.h>

static int subtree(int rr, int P) {
  int m = 1;
  if (rr == 0)
    return P;
  while (!(rr & m))
    m <<= 1;
  return rr + m < P ? m : P - rr;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* Uncompressed: the root sends each block piece by piece; device memory is
 * staged through pinned memory. */
static gz_result_t plain(gz_ctx_t ctx, gz_exec_t *ex, const void *sendbuf, void *recvbuf,
                         size_t count, gz_dtype_t dtype, int root) {
  int P = ctx->size, is_root = ctx->rank == root, dev = ex->be->on_device;
  size_t esz = gz_dtype_size(dtype), piece = GZ_DEV_PIECE / (size_t)P;
  gz_result_t local = GZ_OK;
  unsigned char *h = ctx->hstage.base;
  if (piece < 1)
    piece = 1;
  if (is_root && recvbuf != GZ_IN_PLACE && count &&
      (ex->be->memcpy(ex, recvbuf, (const char *)sendbuf + (size_t)root * count * esz,
                      count * esz) != GZ_OK ||
       ex->be->sync(ex) != GZ_OK))
    local = GZ_ERR_UNSUPPORTED;
  for (size_t off = 0; off < count; off += piece) {
    size_t len = count - off < piece ? count - off : piece;
    for (int q = 0; q < P; q++) {
      if (q == root)
        continue;
      if (is_root) {
        const char *src = (const char *)sendbuf + ((size_t)q * count + off) * esz;
        if (dev && !ctx->cuda_aware) {
          if (ex->be->memcpy(ex, h, src, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK)
            local = GZ_ERR_UNSUPPORTED;
          src = (const char *)h;
        }
        if (MPI_Send(src, (int)len, gz_mpi_type(dtype), q, GZ_TAG_DEVICE, ctx->comm) !=
            MPI_SUCCESS)
          return GZ_ERR_MPI;
      } else if (ctx->rank == q) {
        char *dst = (char *)recvbuf + off * esz;
        void *to = dev && !ctx->cuda_aware ? (void *)h : (void *)dst;
        if (MPI_Recv(to, (int)len, gz_mpi_type(dtype), root, GZ_TAG_DEVICE, ctx->comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return GZ_ERR_MPI;
        if (to != (void *)dst &&
            (ex->be->memcpy(ex, dst, h, len * esz) != GZ_OK || ex->be->sync(ex) != GZ_OK))
          local = GZ_ERR_UNSUPPORTED;
      }
    }
  }
  return gz_agree_final(ctx, local);
}

/* Root: encode the P-1 blocks on the streams, then lay out the records. */
static gz_result_t root_records(gz_ctx_t ctx, int on_dev, const int64_t *codes,
                                size_t count, int root, unsigned char *enc, size_t cap,
                                unsigned char *tmp, size_t tmp_bytes, unsigned char *rec,
                                size_t *got, gz_run_t *run) {
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
    ex[s].tmp = tmp + (size_t)s * tmp_bytes;
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
    put_u64(rec + pos, size);
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

gz_result_t gz_scatter_device(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                              size_t count, gz_dtype_t dtype, int root, int local_dev,
                              gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_exec_t ex;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const char *why = NULL;
  int P = ctx->size, is_root = ctx->rank == root, agreed = 0;
  int on_dev = local_dev > 0 && ctx->dev_ready, rr = 0, span = 1, mask = 1;
  size_t esz = gz_dtype_size(dtype), total = 0, cap = 0, tmpb = 0, got = 0, ws, recb;
  int64_t *codes = NULL;
  unsigned char *enc = NULL, *tmp = NULL, *rec = NULL, *rbuf = NULL;

  gz_run_begin(&run, dtype);
  gz_exec_make(ctx, on_dev, 0, &ex);
  if (local_dev < 0)
    local = GZ_ERR_ARG;
  else if (local_dev > 0 && !ctx->dev_ready)
    local = GZ_ERR_UNSUPPORTED;
  if (!esz || root < 0 || root >= P || count > SIZE_MAX / 16 / (size_t)P ||
      (count && !recvbuf) || (count && is_root && !sendbuf) ||
      (recvbuf == GZ_IN_PLACE && !is_root))
    local = GZ_ERR_ARG;
  else {
    total = count * (size_t)P;
    rr = (ctx->rank - root + P) % P;
    span = subtree(rr, P);
  }
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)dtype;
  ag.sig[2] = (double)root;
  rc = gz_select(ctx, GZ_COLL_SCATTER, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit;
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  /* memory: the root's codes, encodings and per-stream scratch; a
   * receiver's codes, one encoding and scratch; records on the host */
  cap = ex.be->encode_bound(count);
  tmpb = ex.be->tmp_bytes(is_root ? total : count);
  recb = cap > SIZE_MAX / 2 / (size_t)P - 8 ? SIZE_MAX : (size_t)span * (cap + 8);
  ws = gz_ws_add(0, is_root ? total : count, sizeof(int64_t));
  ws = gz_ws_add(ws, is_root ? (size_t)P : 1, cap);
  ws = gz_ws_add(ws, on_dev ? GZ_DEV_STREAMS : 1, tmpb);
  if (!on_dev)
    ws = gz_ws_add(ws, recb, 1);
  if (count && !cap)
    ws = SIZE_MAX;
  local = gz_dev_reserve(ctx, on_dev, ws);
  if (local == GZ_OK && on_dev && recb > ctx->hstage.cap)
    local = GZ_ERR_NOMEM;
  if (local == GZ_OK) {
    codes = gz_dev_take(ctx, on_dev, is_root ? total : count, sizeof(int64_t));
    enc = gz_dev_take(ctx, on_dev, is_root ? (size_t)P : 1, cap);
    tmp = gz_dev_take(ctx, on_dev, on_dev ? GZ_DEV_STREAMS : 1, tmpb);
    rec = on_dev ? ctx->hstage.base : gz_dev_take(ctx, 0, recb, 1);
    rbuf = enc;
    ex.tmp = tmp;
    ex.tmp_bytes = tmpb;
    if (!codes || !enc || !tmp || !rec)
      local = GZ_ERR_NOMEM;
  }
  if (local == GZ_OK && is_root)
    local = ex.be->range(&ex, dtype, sendbuf, total, &ag.lo, &ag.hi, &ag.absmax);
  if (local != GZ_OK) {
    ag.err = local;
    why = "device path: setup failed";
    goto uncompressed;
  }
  rc = gz_plan_agreed(ctx, &ag, 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }
  if (is_root) {
    double t = MPI_Wtime();
    local = ex.be->quantize(&ex, dtype, sendbuf, total, plan.eb, plan.code_limit, codes);
    if (local == GZ_OK)
      local = ex.be->sync(&ex);
    run.t_codec += MPI_Wtime() - t;
    run.passes += total;
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  /* the tree (scatter_binomial.c), records in host memory */
  if (rr == 0) {
    local = root_records(ctx, on_dev, codes, count, root, enc, cap, tmp, tmpb, rec, &got,
                         &run);
    while (mask < P)
      mask <<= 1;
  } else {
    while (!(rr & mask))
      mask <<= 1;
    rc = gz_xfer(ctx, GZ_TAG_DEVICE, NULL, 0, MPI_PROC_NULL, rec, recb,
                 (ctx->rank - mask + P) % P, &got, &run);
    if (rc != GZ_OK)
      goto fn_exit;
  }
  {
    /* each child's subtree: records [c - rr, last) of ours, forwarded untouched */
    for (mask >>= 1; mask > 0; mask >>= 1) {
      int c = rr + mask;
      if (c < P) {
        int last = c + subtree(c, P) - rr;
        size_t a = 0, z = 0, p = 0;
        for (int j = 0; j <= last && local == GZ_OK; j++) {
          uint64_t size;
          if (j == c - rr)
            a = p;
          if (j == last) {
            z = p;
            break;
          }
          if (got - p < 8 || (size = get_u64(rec + p)) > got - p - 8) {
            local = GZ_ERR_CORRUPT;
            break;
          }
          p += 8 + (size_t)size;
        }
        if (local != GZ_OK)
          a = z = 0;
        run.bytes_raw += (size_t)subtree(c, P) * count * run.esz;
        rc = gz_xfer(ctx, GZ_TAG_DEVICE, rec + a, z - a, (ctx->rank + mask) % P, NULL, 0,
                     MPI_PROC_NULL, NULL, &run);
        if (rc != GZ_OK)
          goto fn_exit;
      }
    }
  }
  if (rr != 0 && local == GZ_OK) {
    uint64_t size = got >= 8 ? get_u64(rec) : 0;
    double t = MPI_Wtime();
    if (got < 8 || size > got - 8)
      local = GZ_ERR_CORRUPT;
    else {
      const unsigned char *src = rec + 8;
      if (on_dev) {
        local = ex.be->memcpy(&ex, rbuf, rec + 8, (size_t)size);
        src = rbuf;
      }
      if (local == GZ_OK)
        local =
            ex.be->decode_reduce(&ex, GZ_DEV_OP_REPLACE, src, (size_t)size, codes, count);
      if (local == GZ_OK)
        local = ex.be->sync(&ex);
    }
    run.t_codec += MPI_Wtime() - t;
    run.passes += count;
  }
  rc = gz_agree_final(ctx, local);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!is_root)
    rc = ex.be->dequantize(&ex, dtype, codes, count, plan.eb, recvbuf);
  else if (recvbuf != GZ_IN_PLACE)
    rc = ex.be->memcpy(&ex, recvbuf, (const char *)sendbuf + (size_t)root * count * esz,
                       count * esz);
  if (rc == GZ_OK)
    rc = ex.be->sync(&ex);
  if (rc != GZ_OK)
    goto fn_exit;
  gz_run_report(ctx, &run, report, GZ_ALGO_BINOMIAL, 1, plan.eb,
                is_root ? 0.0 : plan.eb + gz_round_slop(dtype, ag.absmax + plan.eb),
                on_dev ? "device-centric binomial (cuda)"
                       : "device-centric binomial (cpu)");
  goto fn_exit;

uncompressed:
  if (!agreed)
    rc = gz_agree(ctx, &ag);
  if (rc == GZ_OK)
    rc = plain(ctx, &ex, sendbuf, recvbuf, count, dtype, root);
  if (rc != GZ_OK)
    goto fn_exit;
  if (is_root)
    run.bytes_raw = run.bytes_sent = (uint64_t)(P - 1) * count * run.esz;
  gz_run_report(ctx, &run, report, GZ_ALGO_MPI, 0, 0.0, 0.0, why);
fn_exit:
  return rc;
}
