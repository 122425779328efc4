/* chunk2.c - one chunk of format version 2: quantize to codes (escapes as in
 * kernels/gz_block.h: values the quantizer refuses are stored verbatim), pick
 * a predictor from a sample of the chunk, predict, and code the residuals
 * bit-packed or as byte symbols through zstd, whichever is smaller.
 *
 * Layout (n = d0 d1 d2 values of the chunk's box):
 *   byte 0  predictor: 0 = none (the rest is format-1 blocks of the values),
 *           1 = Lorenzo, 2 = interpolation
 *   byte 1  residual coding (predictor != 0): 0 = bit-packed, 1 = bytes
 *   section R: the n residuals in that coding          (entropy.h)
 *   section E: escapes: varint count, per escape a varint gap (values since
 *              the previous escape's successor), then the escaped values
 *              verbatim in order.
 * A chunk that would not shrink below the raw values falls back to 0.
 */
#include "codec/chunk2.h"

#include "codec/entropy.h"
#include "codec/predict.h"

#include <stdlib.h>
#include <string.h>

#define SAMPLE_VALUES 16384

size_t gz_chunk2_bound(size_t n, size_t elem) {
  return 1 + (n + GZ_BLOCK - 1) / GZ_BLOCK + n * elem;
}

static void quantize(gz_dtype_t dtype, const void *x, size_t n, const gz_quant_t *qp,
                     int64_t *q, uint8_t *esc, size_t *nesc) {
  size_t bad = 0;
  if (qp->eb > 0) {
    if (dtype == GZ_FLOAT32) {
      const float *v = x;
      for (size_t i = 0; i < n; i++) {
        esc[i] = (uint8_t)!gz_quantize_one_f32(v[i], qp, 1, &q[i]);
        bad += esc[i];
      }
    } else {
      const double *v = x;
      for (size_t i = 0; i < n; i++) {
        esc[i] = (uint8_t)!gz_quantize_one_f64(v[i], qp, 1, &q[i]);
        bad += esc[i];
      }
    }
  } else {
    memset(esc, 0, n);
    if (dtype == GZ_FLOAT32)
      for (size_t i = 0; i < n; i++)
        q[i] = gz_ordered_f32(((const float *)x)[i]);
    else
      for (size_t i = 0; i < n; i++)
        q[i] = gz_ordered_f64(((const double *)x)[i]);
  }
  *nesc = bad;
}

static size_t cost_bits(const uint64_t *u, size_t n) {
  size_t bits = 0;
  for (size_t i = 0; i < n; i++)
    bits += u[i] ? (size_t)(64 - __builtin_clzll(u[i])) : 0;
  return bits;
}

/* Predictor with the fewer residual bits on a central box of the chunk. */
static int choose(const int64_t *q, const uint8_t *esc, const size_t d[3]) {
  size_t s[3], o[3], m, lbits, ibits;
  int64_t *sq;
  uint8_t *se;
  uint64_t *su;
  int best = GZ_PRED_LORENZO;
  s[2] = d[2] < (d[0] > 1   ? 32
                 : d[1] > 1 ? 128
                            : SAMPLE_VALUES)
             ? d[2]
             : (d[0] > 1   ? 32
                : d[1] > 1 ? 128
                           : SAMPLE_VALUES);
  s[1] = d[1] < (d[0] > 1 ? 32 : SAMPLE_VALUES / s[2])
             ? d[1]
             : (d[0] > 1 ? 32 : SAMPLE_VALUES / s[2]);
  s[0] = d[0] < SAMPLE_VALUES / (s[1] * s[2]) ? d[0] : SAMPLE_VALUES / (s[1] * s[2]);
  if (s[0] == 0)
    s[0] = 1;
  m = s[0] * s[1] * s[2];
  for (int k = 0; k < 3; k++)
    o[k] = (d[k] - s[k]) / 2;
  sq = malloc(2 * m * sizeof *sq);
  se = malloc(m);
  su = malloc(m * sizeof *su);
  if (sq && se && su) {
    for (size_t i = 0; i < s[0]; i++)
      for (size_t j = 0; j < s[1]; j++) {
        size_t from = ((o[0] + i) * d[1] + o[1] + j) * d[2] + o[2],
               to = (i * s[1] + j) * s[2];
        memcpy(sq + to, q + from, s[2] * sizeof *sq);
        memcpy(se + to, esc + from, s[2]);
      }
    memcpy(sq + m, sq, m * sizeof *sq);
    gz_lorenzo_encode(sq, se, s, su);
    lbits = cost_bits(su, m);
    gz_interp_encode(sq + m, se, s, su);
    ibits = cost_bits(su, m);
    best = ibits < lbits ? GZ_PRED_INTERP : GZ_PRED_LORENZO;
  }
  free(sq);
  free(se);
  free(su);
  return best;
}

/* Escape section content: count, gaps, values. Returns its length. */
static size_t escapes(const void *x, size_t elem, const uint8_t *esc, size_t n,
                      size_t nesc, uint8_t *out) {
  uint8_t *p = out, *vals;
  size_t next = 0;
  p += gz_varint_put(nesc, p);
  for (size_t i = 0; i < n; i++)
    if (esc[i]) {
      p += gz_varint_put(i - next, p);
      next = i + 1;
    }
  vals = p;
  for (size_t i = 0; i < n; i++)
    if (esc[i]) {
      memcpy(vals, (const uint8_t *)x + i * elem, elem);
      vals += elem;
    }
  return (size_t)(vals - out);
}

size_t gz_chunk2_encode(gz_dtype_t dtype, const void *x, const size_t d[3],
                        const gz_quant_t *qp, int predictor, uint8_t *out, int *nomem) {
  size_t n = d[0] * d[1] * d[2], elem = gz_dtype_size(dtype), nesc, total = 0;
  size_t psize, bsize = 0, eraw, rsec, esec, scratch_size;
  int64_t *q = NULL;
  uint64_t *u = NULL;
  uint8_t *esc = NULL, *scratch = NULL, *sym = NULL, *p;
  int coding;

  *nomem = 0;
  if (predictor == GZ_PRED_NONE || n < 2 * GZ_BLOCK)
    goto fallback;
  q = malloc(n * sizeof *q);
  u = malloc(n * sizeof *u);
  esc = malloc(n);
  if (!q || !u || !esc)
    goto nomem;
  quantize(dtype, x, n, qp, q, esc, &nesc);
  if (nesc * 4 > n)
    goto fallback;
  if (predictor == GZ_PRED_AUTO)
    predictor = choose(q, esc, d);
  if (predictor == GZ_PRED_INTERP)
    gz_interp_encode(q, esc, d, u);
  else
    gz_lorenzo_encode(q, esc, d, u);

  psize = gz_res_packed_size(u, n);
  for (size_t i = 0; i < n; i++)
    bsize += u[i] < 255 ? 1 : 2 + (size_t)(64 - __builtin_clzll((u[i] - 255) | 1)) / 7;
  eraw = 10 + nesc * (10 + elem);
  scratch_size = (psize > bsize ? psize : bsize) + eraw;
  scratch_size += gz_section_max(psize > bsize ? psize : bsize) + gz_section_max(eraw);
  scratch = malloc(scratch_size);
  if (!scratch)
    goto nomem;
  sym = scratch + gz_section_max(psize > bsize ? psize : bsize) + gz_section_max(eraw);
  p = scratch;
  /* residuals: bytes through zstd when that beats the packed bits */
  rsec = 0;
  coding = GZ_RES_PACKED;
  if (bsize < 2 * psize) {
    size_t len = gz_res_bytes(u, n, sym);
    rsec = gz_section_put(sym, len, 1, p);
    if (!rsec)
      goto nomem;
    coding = GZ_RES_BYTES;
  }
  if (!rsec || rsec > GZ_SECTION_HEADER + psize) {
    size_t len = gz_res_pack(u, n, sym);
    rsec = gz_section_put(sym, len, 0, p);
    coding = GZ_RES_PACKED;
  }
  p += rsec;
  eraw = escapes(x, elem, esc, n, nesc, sym);
  esec = gz_section_put(sym, eraw, 1, p);
  if (!esec)
    goto nomem;
  total = 2 + rsec + esec;
  if (total >= n * elem)
    goto fallback;
  out[0] = (uint8_t)predictor;
  out[1] = (uint8_t)coding;
  memcpy(out + 2, scratch, rsec + esec);
  goto done;
nomem:
  *nomem = 1;
  total = 0;
  goto done;
fallback:
  out[0] = GZ_PRED_NONE;
  total = 1 + gz_encode_values(dtype, x, n, qp, out + 1);
done:
  free(q);
  free(u);
  free(esc);
  free(scratch);
  return total;
}

static void reconstruct(gz_dtype_t dtype, const int64_t *q, size_t n,
                        const gz_quant_t *qp, void *out) {
  if (dtype == GZ_FLOAT32) {
    float *y = out;
    if (qp->eb > 0)
      for (size_t i = 0; i < n; i++)
        y[i] = gz_dequant_f32(q[i], qp);
    else
      for (size_t i = 0; i < n; i++)
        y[i] = gz_unordered_f32(q[i]);
  } else {
    double *y = out;
    if (qp->eb > 0)
      for (size_t i = 0; i < n; i++)
        y[i] = gz_dequant_f64(q[i], qp);
    else
      for (size_t i = 0; i < n; i++)
        y[i] = gz_unordered_f64(q[i]);
  }
}

/* Overwrite the escaped positions with their verbatim values. */
static int put_escapes(const uint8_t *e, size_t len, size_t n, size_t elem, void *out) {
  const uint8_t *p = e, *end = e + len, *vals;
  uint64_t count, gap;
  size_t next = 0;
  if (gz_varint_get(&p, end, &count) != 0 || count > n)
    return -1;
  /* positions first, values after them: find where the values start */
  for (uint64_t k = 0; k < count; k++) {
    if (gz_varint_get(&p, end, &gap) != 0 || gap >= n - next)
      return -1;
    next += (size_t)gap + 1;
  }
  if ((size_t)(end - p) != count * elem)
    return -1;
  vals = p;
  p = e;
  gz_varint_get(&p, end, &count);
  next = 0;
  for (uint64_t k = 0; k < count; k++) {
    gz_varint_get(&p, end, &gap);
    next += (size_t)gap;
    memcpy((uint8_t *)out + next * elem, vals + k * elem, elem);
    next++;
  }
  return 0;
}

gz_result_t gz_chunk2_decode(gz_dtype_t dtype, const uint8_t *in, size_t size,
                             const size_t d[3], const gz_quant_t *qp, void *out) {
  size_t n = d[0] * d[1] * d[2], elem = gz_dtype_size(dtype), rraw, rused, eraw, eused;
  int64_t *q = NULL;
  uint64_t *u = NULL;
  uint8_t *raw = NULL;
  gz_result_t rc = GZ_ERR_CORRUPT;
  if (size < 1)
    return GZ_ERR_CORRUPT;
  if (in[0] == GZ_PRED_NONE)
    return gz_decode_values(dtype, in + 1, size - 1, n, qp, out);
  if (size < 2 || in[0] > GZ_PRED_INTERP || in[1] > GZ_RES_BYTES)
    return GZ_ERR_CORRUPT;
  if (gz_section_peek(in + 2, size - 2, 11 * n + 16, &rraw, &rused) != 0 ||
      gz_section_peek(in + 2 + rused, size - 2 - rused, 10 + n * (10 + elem), &eraw,
                      &eused) != 0 ||
      2 + rused + eused != size)
    return GZ_ERR_CORRUPT;
  q = malloc(n * sizeof *q);
  u = malloc(n * sizeof *u);
  raw = malloc((rraw > eraw ? rraw : eraw) + 1);
  if (!q || !u || !raw) {
    rc = GZ_ERR_NOMEM;
    goto done;
  }
  if (gz_section_get(in + 2, raw, rraw) != 0)
    goto done;
  if (in[1] == GZ_RES_PACKED ? gz_res_unpack(raw, rraw, n, u) != 0
                             : gz_res_unbytes(raw, rraw, n, u) != 0)
    goto done;
  if (in[0] == GZ_PRED_INTERP)
    gz_interp_decode(u, d, q);
  else
    gz_lorenzo_decode(u, d, q);
  reconstruct(dtype, q, n, qp, out);
  if (gz_section_get(in + 2 + rused, raw, eraw) != 0 ||
      put_escapes(raw, eraw, n, elem, out) != 0)
    goto done;
  rc = GZ_OK;
done:
  free(q);
  free(u);
  free(raw);
  return rc;
}
