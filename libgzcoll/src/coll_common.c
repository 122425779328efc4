/*
 * coll_common.c - helpers shared by the collective algorithms: timed codec
 * calls and the per-call report, the quantization plan and the bounds it
 * implies, the agreement after quantizing and the end of a data-movement
 * call, block layout, byte transfers of any size (and a quiet wait for
 * one), MPI datatypes.
 *
 * The arithmetic of the bounds (derived in docs/design.md):
 *   q = rint(x * (1 / 2eb)) differs from x / 2eb by at most 1/2 plus the
 *   rounding of the product, so |x - 2eb q| <= eb + 2^-51 (|x| + eb).
 *   A SUM of P codes is exact in int64; its reconstruction fl(2eb Q) adds
 *   at most two double roundings (<= 2^-52 |r|, with the mean's fl(eb/d))
 *   and, for float32 results, the conversion adds half an ulp of float32:
 *     |r - sum x| <= P eb + 2^-51 P (absmax + eb) + 2^-51 rmax [+ ulp32/2].
 *   MAX/MIN pick one rank's code q (rint is monotone, so the code of the
 *   max is the max of the codes); gz_quantize checked |x - fl(2eb q)| <= eb
 *   in double, so the bound is eb plus the conversion to the element type
 *   (half an ulp of float32). The same holds for the data-movement
 *   collectives (one quantization per element).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "coll_internal.h"

#include "codec/codec.h"
#include "gz_block.h"
#include "gz_device.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- timed codec calls -------------------------------------------------- */

void gz_run_begin(gz_run_t *run, gz_dtype_t dtype) {
  memset(run, 0, sizeof *run);
  run->esz = gz_dtype_size(dtype);
  run->t0 = MPI_Wtime();
}

/* gz_quantize rejects a value whose |x - fl(2eb q)| exceeds eb by a single
 * rounding, which happens at exact ties x / 2eb = k + 1/2 (common with
 * dyadic data and decimal bounds). For the collectives such a value is
 * quantizable: |x - 2eb q| <= eb + 2^-51 (|x| + eb), which the reported
 * bounds include. Only a non-finite value or a code beyond code_limit is a
 * real escape. Re-examine a rejected range with the kernel's own quantizer. */
#define GZ_QPART 4096 /* values per part of a quantization pass */

static gz_result_t requantize(gz_dtype_t dtype, const void *in, size_t n, double eb,
                              int64_t code_limit, int64_t *codes) {
  gz_quant_t qp = gz_quant_make(eb, (double)code_limit);
  for (size_t i = 0; i < n; i++) {
    double v =
        dtype == GZ_FLOAT32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
    if (!isfinite(v) || !(fabs(rint(v * qp.inv_step)) <= qp.code_max))
      return GZ_ERR_RANGE;
    if (dtype == GZ_FLOAT32)
      gz_quantize_one_f32((float)v, &qp, 0, &codes[i]);
    else
      gz_quantize_one_f64(v, &qp, 0, &codes[i]);
  }
  return GZ_OK;
}

/* One part into int32 codes, ties re-examined through an int64 tile. */
static gz_result_t quantize_part32(gz_dtype_t dtype, const void *x, size_t len, double eb,
                                   int64_t code_limit, int32_t *codes) {
  int64_t tile[GZ_QPART];
  /* the part's range fits (gz_codes_fit32): its codes are below both limits */
  gz_result_t rc = gz_quantize32(dtype, x, len, eb,
                                 code_limit < INT32_MAX ? code_limit : INT32_MAX, codes);
  if (rc == GZ_ERR_RANGE &&
      (rc = requantize(dtype, x, len, eb, code_limit, tile)) == GZ_OK)
    for (size_t i = 0; i < len; i++)
      codes[i] = (int32_t)tile[i];
  return rc;
}

int gz_codes_fit32(double absmax, double eb, int terms) {
  double codes = absmax * gz_quant_make(eb, 0).inv_step + 1.0; /* >= any |code| */
  return codes * (double)terms <= (double)INT32_MAX;
}

void gz_codes_widen(void *codes, size_t n) {
  const int32_t *in = codes;
  int64_t *out = codes;
  for (size_t i = n; i-- > 0;) /* from the end: out[i] covers in[2i], in[2i+1] */
    out[i] = in[i];
}

void gz_codes_narrow(void *codes, size_t n) {
  const int64_t *in = codes;
  int32_t *out = codes;
  for (size_t i = 0; i < n; i++) /* from the start: out[i] lies in in[i / 2] */
    out[i] = (int32_t)in[i];
}

/* Where the part at off ends (at most GZ_QPART values): parts never cross
 * the first message's bounds or its pieces, and start at a piece's start
 * (so every part but a piece's last is a multiple of GZ_BLOCK codes). */
static size_t part_end(const gz_first_t *f, size_t off, size_t n, size_t *piece_end) {
  size_t end = off + GZ_QPART, fe = f ? f->off + f->len : 0;
  if (f && off < f->off)
    end = end < f->off ? end : f->off;
  else if (f && off < fe) {
    if (off >= *piece_end) /* a piece starts */
      *piece_end = off + (f->piece < fe - off ? f->piece : fe - off);
    end = end < *piece_end ? end : *piece_end;
  }
  return end < n ? end : n;
}

/* One part of the first message: its codes (int32 with n32) appended to
 * piece k's encoding, which ends at piece_end. */
static gz_result_t first_put(gz_first_t *f, gz_indexed_put_t *w, size_t *k, size_t off,
                             size_t end, size_t piece_end, const void *codes, int n32) {
  gz_result_t rc;
  if (off == f->off + *k * f->piece)
    gz_codes_indexed_begin(w, f->msg + *k * f->stride, piece_end - off);
  rc = gz_codes_indexed_put(w, codes, n32, end - off);
  if (rc == GZ_OK && end == piece_end)
    f->sizes[(*k)++] = gz_codes_indexed_size(w);
  return rc;
}

/* Quantize in parts of GZ_QPART values; with range (may be NULL) also the
 * finite range of the values, each part's read just before it is quantized
 * (from cache then): one pass over the input instead of two. With *narrow
 * set, codes are int32 while every part's range fits (gz_codes_fit32 for
 * terms), each part's codes and range from one read of it
 * (gz_quantize32_range); the first part that does not widens what was
 * written and the rest is int64; *narrow says which. With first, the parts of the first
 * message are encoded as soon as they are quantized (from L1; without first->keep through
 * a tile, never written to codes). */
gz_result_t gz_run_quantize_range(gz_run_t *run, gz_dtype_t dtype, const void *in,
                                  size_t n, double eb, int64_t code_limit, void *codes,
                                  gz_agree_t *range, int *narrow, int terms,
                                  gz_first_t *first) {
  const size_t esz = gz_dtype_size(dtype);
  double t = MPI_Wtime(), lo = HUGE_VAL, hi = -HUGE_VAL;
  gz_result_t rc = GZ_OK;
  int n32 = narrow && *narrow && range;
  int64_t lim32 = code_limit < INT32_MAX ? code_limit : INT32_MAX;
  size_t piece_end = 0, k = 0;
  gz_indexed_put_t w;
  if (first && !first->len)
    first = NULL;
  for (size_t off = 0, end; off < n && rc == GZ_OK; off = end) {
    size_t len;
    const char *x = (const char *)in + off * esz;
    int in_first = first && off >= first->off && off < first->off + first->len;
    union {
      int64_t w[GZ_QPART];
      int32_t n[GZ_QPART]; /* with n32 */
    } tile;
    int32_t *to32 = NULL; /* with n32: where this part's codes go */
    end = part_end(first, off, n, &piece_end);
    len = end - off;
    if (range) {
      double l, h;
      gz_result_t qr = GZ_OK;
      if (n32) { /* codes and range in one read */
        to32 = in_first && !first->keep ? tile.n : (int32_t *)codes + off;
        qr = gz_quantize32_range(dtype, x, len, eb, lim32, to32, &l, &h);
      } else {
        gz_codes_range(dtype, x, len, &l, &h);
      }
      if (n32 && !gz_codes_fit32(h >= l ? fmax(fabs(l), fabs(h)) : 0.0, eb, terms)) {
        gz_codes_widen(codes, off);
        n32 = 0;
        to32 = NULL;
      } else if (n32 && qr != GZ_OK) { /* a NaN: the careful path decides */
        rc = quantize_part32(dtype, x, len, eb, code_limit, to32);
      }
      lo = l < lo ? l : lo;
      hi = h > hi ? h : hi;
    }
    if (!to32) { /* int64 codes; the first message's only in L1 */
      int64_t *to = in_first && !first->keep ? tile.w : (int64_t *)codes + off;
      rc = gz_quantize(dtype, x, len, eb, code_limit, to);
      if (rc == GZ_ERR_RANGE)
        rc = requantize(dtype, x, len, eb, code_limit, to);
    }
    if (in_first && rc == GZ_OK)
      rc = first->keep ? first_put(first, &w, &k, off, end, piece_end,
                                   gz_code_at(codes, n32, off), n32)
                       : first_put(first, &w, &k, off, end, piece_end,
                                   n32 ? (void *)tile.n : (void *)tile.w, n32);
  }
  if (n == 0)
    rc = gz_quantize(dtype, in, 0, eb, code_limit, codes);
  if (narrow)
    *narrow = n32;
  if (range && rc != GZ_OK) /* stopped early (escape): the whole range */
    gz_local_range(dtype, in, n, &range->lo, &range->hi, &range->absmax);
  else if (range && (lo == -HUGE_VAL || hi == HUGE_VAL)) /* infinities */
    gz_local_range(dtype, in, n, &range->lo, &range->hi, &range->absmax);
  else if (range) {
    range->lo = lo;
    range->hi = hi;
    range->absmax = hi >= lo ? fmax(fabs(lo), fabs(hi)) : 0.0;
  }
  run->t_codec += MPI_Wtime() - t;
  run->passes += n + (first ? first->len : 0);
  return rc;
}

gz_result_t gz_run_quantize(gz_run_t *run, gz_dtype_t dtype, const void *in, size_t n,
                            double eb, int64_t code_limit, int64_t *codes) {
  return gz_run_quantize_range(run, dtype, in, n, eb, code_limit, codes, NULL, NULL, 1,
                               NULL);
}

gz_result_t gz_run_dequantize(gz_run_t *run, gz_dtype_t dtype, const int64_t *codes,
                              size_t n, double eb, void *out) {
  return gz_run_dequantize_absmax(run, dtype, codes, 0, n, eb, out, NULL);
}

gz_result_t gz_run_dequantize_absmax(gz_run_t *run, gz_dtype_t dtype, const void *codes,
                                     int narrow, size_t n, double eb, void *out,
                                     int64_t *amax) {
  double t = MPI_Wtime();
  gz_result_t rc = narrow ? gz_dequantize32_absmax(dtype, codes, n, eb, out, amax)
                          : gz_dequantize_absmax(dtype, codes, n, eb, out, amax);
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  return rc;
}

gz_result_t gz_run_encode_w(gz_run_t *run, const void *codes, int narrow, size_t n,
                            void *out, size_t cap, size_t *out_size) {
  double t = MPI_Wtime();
  gz_result_t rc = gz_codes_encode_indexed(codes, narrow, n, out, cap, out_size);
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  if (rc == GZ_OK) {
    run->code_elems += n;
    run->code_bytes += *out_size;
  } else {
    *out_size = 0;
  }
  return rc;
}

gz_result_t gz_run_decode_values(gz_run_t *run, const void *in, size_t size,
                                 gz_values_t *v, size_t off, size_t n) {
  double t = MPI_Wtime();
  int64_t amax = 0;
  gz_result_t rc = gz_codes_decode_indexed_values(
      in, size, v->dtype, n, v->eb, (char *)v->out + off * gz_dtype_size(v->dtype),
      &amax);
  v->amax = amax > v->amax ? amax : v->amax;
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  return rc;
}

gz_result_t gz_run_decode_reduce_values(gz_run_t *run, gz_op_t op, const void *in,
                                        size_t size, const void *acc, int narrow,
                                        gz_values_t *v, size_t off, size_t n) {
  double t = MPI_Wtime();
  int64_t amax = 0;
  gz_result_t rc = gz_codes_decode_indexed_reduce_values(
      (int)op, in, size, acc, narrow, v->dtype, n, v->eb,
      (char *)v->out + off * gz_dtype_size(v->dtype), &amax);
  v->amax = amax > v->amax ? amax : v->amax;
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  return rc;
}

gz_result_t gz_run_values(gz_run_t *run, const void *codes, int narrow, gz_values_t *v,
                          size_t off, size_t n) {
  int64_t amax = 0;
  gz_result_t rc =
      gz_run_dequantize_absmax(run, v->dtype, codes, narrow, n, v->eb,
                               (char *)v->out + off * gz_dtype_size(v->dtype), &amax);
  v->amax = amax > v->amax ? amax : v->amax;
  return rc;
}

gz_result_t gz_run_encode(gz_run_t *run, const int64_t *codes, size_t n, void *out,
                          size_t cap, size_t *out_size) {
  return gz_run_encode_w(run, codes, 0, n, out, cap, out_size);
}

gz_result_t gz_run_decode_w(gz_run_t *run, const void *in, size_t size, void *codes,
                            int narrow, size_t n) {
  double t = MPI_Wtime();
  gz_result_t rc = gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, in, size, codes, narrow, n);
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  return rc;
}

gz_result_t gz_run_decode(gz_run_t *run, const void *in, size_t size, int64_t *codes,
                          size_t n) {
  return gz_run_decode_w(run, in, size, codes, 0, n);
}

gz_result_t gz_run_decode_reduce_w(gz_run_t *run, gz_op_t op, const void *in, size_t size,
                                   void *acc, int narrow, size_t n) {
  double t = MPI_Wtime();
  gz_result_t rc = gz_codes_decode_indexed((int)op, in, size, acc, narrow, n);
  run->t_codec += MPI_Wtime() - t;
  run->passes += n;
  return rc;
}

gz_result_t gz_run_decode_reduce(gz_run_t *run, gz_op_t op, const void *in, size_t size,
                                 int64_t *acc, size_t n) {
  return gz_run_decode_reduce_w(run, op, in, size, acc, 0, n);
}

void gz_run_report(gz_ctx_t ctx, gz_run_t *run, gz_report_t *report,
                   const gz_algorithm_t *algo, int compressed, double quant_bound,
                   double result_bound, const char *reason) {
  /* samples for the cost model: only from calls large enough to time */
  if (compressed && run->code_bytes > 0 && run->code_elems >= 4096)
    ctx->sample_ratio = 4.0 * (double)run->code_elems / (double)run->code_bytes;
  if (compressed && run->passes >= 65536 && run->t_codec > 0)
    ctx->sample_eps = (double)run->passes / run->t_codec;
  gz_model_end_call(ctx, algo, compressed, report);
  if (!report)
    return;
  report->algo = algo->name;
  report->compressed = compressed;
  report->quant_bound = quant_bound;
  report->result_bound = result_bound;
  report->bytes_raw = run->bytes_raw;
  report->bytes_sent = run->bytes_sent;
  report->seconds = MPI_Wtime() - run->t0;
  report->seconds_codec = run->t_codec;
  snprintf(report->reason, sizeof report->reason, "%s", reason ? reason : "");
}

double gz_cost_mpi_steps(const gz_cost_t *c) {
  return c->g + (c->P - 1) * (c->alpha + c->D * c->beta);
}

void gz_run_plain(gz_run_t *run, double blocks, size_t count) {
  run->bytes_raw = run->bytes_sent =
      (uint64_t)(blocks * (double)count * (double)run->esz);
}

gz_result_t gz_mpi_blocks(gz_ctx_t ctx, gz_job_t *j, gz_mpi_blocks_fn call,
                          double blocks) {
  MPI_Datatype type;
  int n = 0;
  gz_result_t rc = gz_mpi_block(j->a->dtype, j->a->count, &type, &n);
  if (rc != GZ_OK)
    return rc;
  if (call(ctx, j->a, n, type) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  gz_mpi_block_free(&type);
  if (rc == GZ_OK)
    gz_run_plain(j->run, blocks, j->a->count);
  return rc;
}

/* ---- plan and bounds ---------------------------------------------------- */

void gz_plan_make(gz_ctx_t ctx, int sum_terms, double scale, double range,
                  gz_plan_t *plan) {
  double e = ctx->cfg.error_bound;
  plan->e_abs = ctx->cfg.eb_mode == GZ_EB_REL ? e * range : e;
  plan->eb = plan->e_abs;
  if (ctx->cfg.bound_policy == GZ_BOUND_STRICT)
    plan->eb = plan->e_abs * scale / (double)sum_terms;
  plan->code_limit = GZ_COLL_CODE_LIMIT / (sum_terms > 0 ? sum_terms : 1);
  plan->usable = plan->eb > 0 && isfinite(plan->eb) && plan->eb < 1e300;
}

gz_result_t gz_plan_agreed(gz_ctx_t ctx, gz_agree_t *ag, int sum_terms, double scale,
                           gz_plan_t *plan, int *agreed) {
  double range = 0.0;
  if (ctx->cfg.eb_mode == GZ_EB_REL) {
    gz_result_t rc = gz_agree(ctx, ag);
    if (rc != GZ_OK)
      return rc;
    *agreed = 1;
    range = ag->hi >= ag->lo ? ag->hi - ag->lo : 0.0;
  }
  gz_plan_make(ctx, sum_terms, scale, range, plan);
  return GZ_OK;
}

double gz_round_slop(gz_dtype_t dtype, double rmax) {
  double slop;
  if (!(rmax > 0) || !isfinite(rmax))
    return 0;
  slop = ldexp(rmax, -50); /* fl(eb / divisor), fl(2eb' Q), ties */
  if (dtype == GZ_FLOAT32)
    slop += ldexp(1.0, ilogb(rmax) - 24); /* half an ulp of float32 */
  return slop;
}

double gz_sum_bound(gz_dtype_t dtype, int P, double eb, double absmax, double rmax,
                    double divisor) {
  return (P * eb + ldexp((double)P * (absmax + eb), -51)) / divisor +
         gz_round_slop(dtype, rmax);
}

double gz_mpi_sum_bound(gz_dtype_t dtype, int P, double absmax) {
  double u = dtype == GZ_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  /* |fl(sum) - sum| <= gamma_{P-1} sum |x|, gamma_k = k u / (1 - k u) */
  return P > 1 ? 1.01 * (P - 1) * u * P * absmax : 0.0;
}

int64_t gz_codes_absmax(const int64_t *codes, size_t n) {
  uint64_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = codes[i] < 0 ? 0 - (uint64_t)codes[i] : (uint64_t)codes[i];
    m = a > m ? a : m;
  }
  return m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
}

/* ---- steps of a compressed call ----------------------------------------- */

gz_result_t gz_agree_quantized(gz_ctx_t ctx, gz_agree_t *ag, gz_result_t local,
                               int *agreed) {
  gz_result_t rc;
  if (local == GZ_ERR_RANGE) { /* not quantizable: every rank takes the MPI path */
    ag->escape = 1;
    local = GZ_OK;
  }
  ag->err = local;
  rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    *agreed = 1;
  return rc;
}

/* ---- helpers ------------------------------------------------------------ */

MPI_Datatype gz_mpi_type(gz_dtype_t dtype) {
  return dtype == GZ_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
}

void gz_local_range(gz_dtype_t dtype, const void *in, size_t n, double *lo, double *hi,
                    double *absmax) {
  double l, h;
  gz_codes_range(dtype, in, n, &l, &h);
  if (l == -HUGE_VAL || h == HUGE_VAL) { /* infinities present: finite values only */
    l = HUGE_VAL;
    h = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
      double v =
          dtype == GZ_FLOAT32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
      if (isfinite(v)) {
        l = v < l ? v : l;
        h = v > h ? v : h;
      }
    }
  }
  *lo = l;
  *hi = h;
  *absmax = h >= l ? fmax(fabs(l), fabs(h)) : 0.0;
}

size_t gz_block_off(size_t count, int P, int b) {
  size_t q = count / (size_t)P, r = count % (size_t)P;
  return (size_t)b * q + ((size_t)b < r ? (size_t)b : r);
}

size_t gz_block_len(size_t count, int P, int b) {
  return count / (size_t)P + ((size_t)b < count % (size_t)P ? 1 : 0);
}

/* Complete a part's receive and send (either may be MPI_REQUEST_NULL):
 * quietly, or with MPI's blocking wait. Both are completed even when one
 * fails; st[0] receives the receive's status. */
static gz_result_t wait_part(MPI_Request req[2], MPI_Status st[2], int quiet) {
  gz_result_t rc = GZ_OK;
  if (!quiet && MPI_Waitall(2, req, st) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  for (int k = 0; quiet && k < 2; k++) {
    gz_result_t r = gz_wait_quietly(&req[k], &st[k]);
    rc = rc == GZ_OK ? r : rc;
  }
  return rc;
}

gz_result_t gz_transfer(gz_ctx_t ctx, int tag, const void *sbuf, size_t ssize, int dest,
                        void *rbuf, size_t rcap, int src, size_t *rsize, gz_run_t *run,
                        int quiet) {
  const unsigned char *sp = sbuf;
  unsigned char *rp = rbuf;
  size_t sent = 0, got = 0, part = ctx->part_bytes;
  int sdone = dest == MPI_PROC_NULL, rdone = src == MPI_PROC_NULL;
  gz_result_t rc = GZ_OK;
  while ((!sdone || !rdone) && rc == GZ_OK) {
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* receive, send */
    MPI_Status st[2];
    size_t slen = 0;
    int n = 0, recv = !rdone, send = !sdone;
    if (recv &&
        MPI_Irecv(rp ? rp + got : NULL, (int)(rcap - got < part ? rcap - got : part),
                  MPI_BYTE, src, tag, ctx->comm, &req[0]) != MPI_SUCCESS) {
      req[0] = MPI_REQUEST_NULL;
      rc = GZ_ERR_MPI;
    }
    if (send && rc == GZ_OK) {
      slen = ssize - sent < part ? ssize - sent : part;
      sdone = slen < part; /* a short part (possibly empty) ends the message */
      if (MPI_Isend(sp ? sp + sent : NULL, (int)slen, MPI_BYTE, dest, tag, ctx->comm,
                    &req[1]) != MPI_SUCCESS) {
        req[1] = MPI_REQUEST_NULL;
        if (req[0] != MPI_REQUEST_NULL) /* unmatched: cancelled; matched: completes */
          MPI_Cancel(&req[0]);
        rc = GZ_ERR_MPI;
      }
    }
    if (wait_part(req, st, quiet) != GZ_OK)
      rc = GZ_ERR_MPI;
    if (rc == GZ_OK && recv) {
      MPI_Get_count(&st[0], MPI_BYTE, &n);
      got += (size_t)n;
      rdone = (size_t)n < part;
    }
    if (rc == GZ_OK && send) {
      sent += slen;
      if (run)
        run->bytes_sent += slen;
    }
  }
  if (rsize)
    *rsize = got;
  return rc;
}

gz_result_t gz_xfer(gz_ctx_t ctx, int tag, const void *sbuf, size_t ssize, int dest,
                    void *rbuf, size_t rcap, int src, size_t *rsize, gz_run_t *run) {
  return gz_transfer(ctx, tag, sbuf, ssize, dest, rbuf, rcap, src, rsize, run, 0);
}

gz_result_t gz_wait_quietly(MPI_Request *req, MPI_Status *st) {
  const struct timespec nap = {0, 50000};
  double t0 = MPI_Wtime();
  int done = 0, err = MPI_Test(req, &done, st);
  while (err == MPI_SUCCESS && !done) { /* spin 50 us, then nap between tests */
    if (MPI_Wtime() - t0 > 50e-6)
      nanosleep(&nap, NULL);
    err = MPI_Test(req, &done, st);
  }
  /* a failed test may leave the request pending (MPI frees one that failed
   * itself): MPI's wait completes it, never left behind (a collective's
   * request cannot be cancelled) */
  if (err != MPI_SUCCESS && *req != MPI_REQUEST_NULL)
    MPI_Wait(req, st);
  return err == MPI_SUCCESS ? GZ_OK : GZ_ERR_MPI;
}

gz_result_t gz_allreduce_max(gz_ctx_t ctx, double *v, int n, int quiet) {
  MPI_Request req;
  gz_result_t rc = GZ_ERR_MPI;
  if (!quiet) {
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS)
      rc = GZ_OK;
  } else if (MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, ctx->comm, &req) ==
             MPI_SUCCESS) {
    rc = gz_wait_quietly(&req, MPI_STATUS_IGNORE);
  }
  return rc;
}

gz_result_t gz_mpi_block(gz_dtype_t dtype, size_t n, MPI_Datatype *type, int *count) {
  MPI_Datatype base = gz_mpi_type(dtype), unit_t = MPI_DATATYPE_NULL;
  MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
  size_t unit = (size_t)1 << 30, q = n / unit, r = n % unit;
  int lens[2] = {1, 1};
  MPI_Aint disp[2];
  gz_result_t rc = GZ_ERR_MPI;
  *type = base;
  *count = (int)(n <= (size_t)INT_MAX ? n : 1);
  if (n <= (size_t)INT_MAX)
    return GZ_OK;
  /* n = q * 2^30 + r elements as one struct of two contiguous parts */
  *type = MPI_DATATYPE_NULL;
  if (q > (size_t)INT_MAX)
    return GZ_ERR_ARG;
  disp[0] = 0;
  disp[1] = (MPI_Aint)(q * unit * gz_dtype_size(dtype));
  if (MPI_Type_contiguous((int)unit, base, &unit_t) != MPI_SUCCESS ||
      MPI_Type_contiguous((int)q, unit_t, &types[0]) != MPI_SUCCESS ||
      MPI_Type_contiguous((int)r, base, &types[1]) != MPI_SUCCESS ||
      MPI_Type_create_struct(2, lens, disp, types, type) != MPI_SUCCESS)
    goto fail;
  if (MPI_Type_commit(type) != MPI_SUCCESS) {
    MPI_Type_free(type);
    goto fail;
  }
  rc = GZ_OK;
fail:
  for (int i = 0; i < 2; i++)
    if (types[i] != MPI_DATATYPE_NULL)
      MPI_Type_free(&types[i]);
  if (unit_t != MPI_DATATYPE_NULL)
    MPI_Type_free(&unit_t);
  if (rc != GZ_OK)
    *type = MPI_DATATYPE_NULL;
  return rc;
}

void gz_mpi_block_free(MPI_Datatype *type) {
  if (*type != MPI_DATATYPE_NULL && *type != MPI_FLOAT && *type != MPI_DOUBLE)
    MPI_Type_free(type);
  *type = MPI_DATATYPE_NULL;
}

void gz_ring_geometry(gz_ctx_t ctx, size_t count, size_t *chunk, size_t *nch) {
  size_t maxlen = count / (size_t)ctx->size + (count % (size_t)ctx->size ? 1 : 0);
  size_t c = ctx->chunk_elems, tags = (size_t)(ctx->tag_ub - GZ_TAG_RING) / 4;
  if (tags < 1)
    tags = 1;
  if (maxlen / c + 1 > tags) {
    c = maxlen / tags + 1;
    c = (c + GZ_BLOCK - 1) / GZ_BLOCK * GZ_BLOCK;
  }
  *chunk = c;
  *nch = (maxlen + c - 1) / c;
}

void gz_copy(gz_dtype_t dtype, void *dst, const void *src, size_t n) {
  if (n && dst != src)
    memmove(dst, src, n * gz_dtype_size(dtype));
}

void gz_scale(gz_dtype_t dtype, void *buf, size_t n, double divisor) {
  if (divisor == 1.0)
    return;
  if (dtype == GZ_FLOAT32) {
    float *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = (float)((double)x[i] / divisor);
  } else {
    double *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = x[i] / divisor;
  }
}

int gz_binomial_subtree(int rr, int P) {
  int m = 1;
  if (rr == 0)
    return P;
  while (!(rr & m))
    m <<= 1;
  return rr + m < P ? m : P - rr;
}
