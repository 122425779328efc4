/*
 * codes.c - the integer-domain API: quantize once, encode/decode codes
 * losslessly, combine codes exactly, dequantize once. Encoded codes are
 * PACKED blocks (kernels/gz_block.h) back to back, with no header (the
 * caller knows the count); the collectives send them with a segment index
 * in front (device/codes_indexed.c, their one wire encoding).
 *
 * The element loops (quantize, dequantize, encode, decode, decode+reduce)
 * are written once and compiled twice: for the baseline ISA and, on x86-64,
 * for AVX2 (chosen at run time, gz_codes_simd). Both compile the same IEEE
 * operations (no FMA is enabled, so nothing is contracted), so they give the
 * same codes, values and bytes; tests/codec/test_codec_simd.c compares them.
 */
#include "codec/codec.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define GZ_HAVE_AVX2 1
#define GZ_TARGET_AVX2 __attribute__((target("avx2")))
#include <immintrin.h>

#include "codec/unpack_avx2.h"
#endif
#if defined(__GNUC__)
#define GZ_INLINE static inline __attribute__((always_inline))
#else
#define GZ_INLINE static inline
#endif

/* ---- the loop bodies ----------------------------------------------------- */

GZ_INLINE int quant_f32_body(const float *x, size_t n, const gz_quant_t *qp, int64_t *q) {
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= gz_quantize_one_f32(x[i], qp, 0, &q[i]);
  return ok;
}

GZ_INLINE int quant_f64_body(const double *x, size_t n, const gz_quant_t *qp,
                             int64_t *q) {
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= gz_quantize_one_f64(x[i], qp, 0, &q[i]);
  return ok;
}

/* out[i] = (T)(step * q[i]) for one tile, T = float (f32) or double.
 * (double)q is computed exactly for |q| <= 2^51 without a conversion per
 * element (AVX2 has no int64 -> double): the bits of 1.5 * 2^52 plus q are
 * the double 1.5 * 2^52 + q. A tile holding a larger code is converted again
 * by the plain cast. Returns the largest |q| of the tile. */
#define GZ_DQ_TILE 1024
GZ_INLINE uint64_t dequant_body(const int64_t *restrict q, size_t n, double step,
                                void *restrict out, int f32) {
  int64_t mx = 0, mn = 0;
  uint64_t big = 0, amax;
  for (size_t i = 0; i < n; i++) {
    int64_t v = q[i], b = v + INT64_C(0x4338000000000000);
    double d;
    memcpy(&d, &b, sizeof d);
    d -= GZ_RINT_SHIFT;
    big |= ((uint64_t)v + (UINT64_C(1) << 51)) >> 52;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
    if (f32)
      ((float *)out)[i] = (float)GZ_MUL(d, step);
    else
      ((double *)out)[i] = GZ_MUL(d, step);
  }
  amax = (uint64_t)mx > 0 - (uint64_t)mn ? (uint64_t)mx : 0 - (uint64_t)mn;
  if (big) /* a code beyond 2^51 */
    for (size_t i = 0; i < n; i++) {
      if (f32)
        ((float *)out)[i] = (float)GZ_MUL((double)q[i], step);
      else
        ((double *)out)[i] = GZ_MUL((double)q[i], step);
    }
  return amax;
}

GZ_INLINE uint64_t dequant_f32_body(const int64_t *q, size_t n, double step, float *out) {
  return dequant_body(q, n, step, out, 1);
}

GZ_INLINE uint64_t dequant_f64_body(const int64_t *q, size_t n, double step,
                                    double *out) {
  return dequant_body(q, n, step, out, 0);
}

GZ_INLINE uint8_t *encode_body(const int64_t *codes, size_t n, uint8_t *p) {
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    p += gz_block_encode_codes(codes + i, len, p);
  }
  return p;
}

/* acc[i] = op(acc[i], in[i]) for one block; returns 1 on SUM overflow. */
GZ_INLINE int reduce_block(gz_op_t op, int64_t *acc, const int64_t *in, int n) {
  uint64_t overflow = 0;
  switch (op) {
  case GZ_OP_SUM:
    for (int i = 0; i < n; i++) {
      uint64_t s = (uint64_t)acc[i] + (uint64_t)in[i];
      overflow |= ((uint64_t)acc[i] ^ s) & ((uint64_t)in[i] ^ s);
      acc[i] = (int64_t)s;
    }
    break;
  case GZ_OP_MAX:
    for (int i = 0; i < n; i++)
      acc[i] = in[i] > acc[i] ? in[i] : acc[i];
    break;
  case GZ_OP_MIN:
    for (int i = 0; i < n; i++)
      acc[i] = in[i] < acc[i] ? in[i] : acc[i];
    break;
  }
  return (int)(overflow >> 63);
}

/* Store a decoded block into int32 codes, or combine it into them; returns
 * nonzero when a value or a SUM does not fit in int32. */
GZ_INLINE uint64_t narrow_block(int reduce, gz_op_t op, int32_t *acc, const int64_t *in,
                                int n) {
  uint64_t bad = 0;
  if (!reduce || op != GZ_OP_SUM)
    for (int i = 0; i < n; i++)
      bad |= ((uint64_t)in[i] + (UINT64_C(1) << 31)) >> 32;
  if (bad)
    return bad;
  if (!reduce) {
    for (int i = 0; i < n; i++)
      acc[i] = (int32_t)in[i];
  } else if (op == GZ_OP_SUM) {
    for (int i = 0; i < n; i++) {
      int64_t sum = (int64_t)acc[i] + in[i]; /* |in| < 2^62: checked below */
      bad |= ((uint64_t)sum + (UINT64_C(1) << 31)) >> 32;
      bad |= ((uint64_t)in[i] + (UINT64_C(1) << 62)) >> 63;
      acc[i] = (int32_t)sum;
    }
  } else if (op == GZ_OP_MAX) {
    for (int i = 0; i < n; i++)
      acc[i] = (int32_t)in[i] > acc[i] ? (int32_t)in[i] : acc[i];
  } else {
    for (int i = 0; i < n; i++)
      acc[i] = (int32_t)in[i] < acc[i] ? (int32_t)in[i] : acc[i];
  }
  return bad;
}

#ifdef GZ_HAVE_AVX2
/* A full PACKED block (GZ_BLOCK == 32 codes) from avail bytes into d, eight
 * int32 codes a vector, by the AVX2 reader of unpack_avx2.h: only when its
 * deltas take w <= 30 bits, its first code fits in 2^31 and every code stays
 * where the reader is exact (then every code is the int64 decoder's and fits
 * int32). Returns the bytes used, or 0 when the block is not of that kind
 * (malformed included: the portable reader then decides). */
GZ_TARGET_AVX2 static inline size_t read32_avx2(const uint8_t *in, size_t avail,
                                                __m256i d[4]) {
  uint64_t pad[18], u0;
  const uint8_t *pay = in + 2;
  size_t need;
  int w, w0, ok;
  if (avail < 2 || in[0] > 30 || in[1] > 32)
    return 0;
  w = in[0];
  w0 = in[1];
  need = 2 + gz_packed_bytes(GZ_BLOCK, w, w0);
  if (need > avail)
    return 0;
  if (avail - 2 < sizeof pad) { /* near the end: a zero-padded copy */
    memset(pad, 0, sizeof pad);
    memcpy(pad, pay, need - 2);
    pay = (const uint8_t *)pad;
  }
  memcpy(&u0, pay, sizeof u0);
  u0 = w0 ? u0 & ((UINT64_C(1) << w0) - 1) : 0;
  if (u0 > (UINT64_C(1) << 31))
    return 0;
  if (!w) { /* a constant block */
    d[0] = d[1] = d[2] = d[3] = _mm256_set1_epi32((int32_t)gz_unzigzag(u0));
    return need;
  }
  ok = w <= 24 ? gz_unpack_int32_avx2(pay, w, w0, (uint32_t)u0, d, 0)
               : gz_unpack_int32_avx2(pay, w, w0, (uint32_t)u0, d, 1);
  return ok ? need : 0;
}

/* read32_avx2's block stored into int32 codes acc, or combined into them
 * with op (reduce) as narrow_block does: a SUM is the int32 wrap of the
 * exact one and sets *bad when it leaves int32. */
GZ_TARGET_AVX2 static inline size_t block32_avx2(const uint8_t *in, size_t avail,
                                                 int reduce, gz_op_t op, int32_t *acc,
                                                 uint64_t *bad) {
  __m256i d[4], ovf = _mm256_setzero_si256();
  size_t need = read32_avx2(in, avail, d);
  if (!need)
    return 0;
  for (int g = 0; g < 4; g++) {
    __m256i *at = (__m256i *)(void *)(acc + 8 * g), a, s;
    if (!reduce) {
      _mm256_storeu_si256(at, d[g]);
      continue;
    }
    a = _mm256_loadu_si256(at);
    if (op == GZ_OP_SUM) { /* overflow: the sum's sign differs from both terms' */
      s = _mm256_add_epi32(a, d[g]);
      ovf = _mm256_or_si256(
          ovf, _mm256_and_si256(_mm256_xor_si256(a, s), _mm256_xor_si256(d[g], s)));
    } else {
      s = op == GZ_OP_MAX ? _mm256_max_epi32(a, d[g]) : _mm256_min_epi32(a, d[g]);
    }
    _mm256_storeu_si256(at, s);
  }
  *bad |= (uint64_t)_mm256_movemask_ps(_mm256_castsi256_ps(ovf));
  return need;
}

/* read32_avx2's block as values (T)(step * (double)q) at out (float32 with
 * f32, else float64), its codes' maximum and minimum folded into *hi and
 * *lo (lanes). */
GZ_TARGET_AVX2 static inline size_t values32_avx2(const uint8_t *in, size_t avail,
                                                  double step, void *out, int f32,
                                                  __m256i *hi, __m256i *lo) {
  const __m256d st = _mm256_set1_pd(step);
  __m256i d[4];
  size_t need = read32_avx2(in, avail, d);
  if (!need)
    return 0;
  for (int g = 0; g < 4; g++) {
    __m256d a = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(d[g])), st),
            b = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(d[g], 1)), st);
    *hi = _mm256_max_epi32(*hi, d[g]);
    *lo = _mm256_min_epi32(*lo, d[g]);
    if (f32) {
      _mm_storeu_ps((float *)out + 8 * g, _mm256_cvtpd_ps(a));
      _mm_storeu_ps((float *)out + 8 * g + 4, _mm256_cvtpd_ps(b));
    } else {
      _mm256_storeu_pd((double *)out + 8 * g, a);
      _mm256_storeu_pd((double *)out + 8 * g + 4, b);
    }
  }
  return need;
}

/* The largest |code| of values32_avx2's lanes. */
GZ_TARGET_AVX2 static inline uint64_t lanes_amax(__m256i hi, __m256i lo) {
  int32_t h[8], l[8];
  uint64_t m = 0;
  _mm256_storeu_si256((__m256i *)(void *)h, hi);
  _mm256_storeu_si256((__m256i *)(void *)l, lo);
  for (int k = 0; k < 8; k++) {
    uint64_t a = (uint64_t)h[k], b = (uint64_t)(-(int64_t)l[k]);
    a = a > b ? a : b;
    m = a > m ? a : m;
  }
  return m;
}
#endif

/* Decode n codes (whole blocks) from p[*pos, size) into acc (int64, int32
 * with narrow), or combine them into it with op (reduce), advancing *pos.
 * GZ_ERR_CORRUPT when a block does not decode; *bad nonzero when a SUM
 * overflows or (narrow) a value or a combination does not fit int32. */
GZ_INLINE gz_result_t decode_run(const uint8_t *p, size_t size, size_t *pos, void *acc,
                                 int narrow, size_t n, int reduce, gz_op_t op,
                                 uint64_t *bad, const int avx2) {
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int64_t block[GZ_BLOCK];
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    int64_t *dst = !narrow && !reduce ? (int64_t *)acc + i : block;
    size_t used = 0;
#ifdef GZ_HAVE_AVX2
    if (avx2 && narrow && len == GZ_BLOCK &&
        (used =
             block32_avx2(p + *pos, size - *pos, reduce, op, (int32_t *)acc + i, bad))) {
      *pos += used;
      continue;
    }
#endif
    (void)avx2;
    used = gz_block_decode_codes(p + *pos, size - *pos, len, dst);
    if (!used)
      return GZ_ERR_CORRUPT;
    *pos += used;
    if (narrow)
      *bad |= narrow_block(reduce, op, (int32_t *)acc + i, block, len);
    else if (reduce)
      *bad |= (uint64_t)reduce_block(op, (int64_t *)acc + i, block, len);
  }
  return GZ_OK;
}

/* Decode n codes from size bytes into out (int64, int32 with narrow), or
 * (reduce) combine them into out with op. Returns GZ_OK, GZ_ERR_CORRUPT (a
 * narrow value that does not fit included) or GZ_ERR_OVERFLOW. */
GZ_INLINE gz_result_t decode_body(const uint8_t *p, size_t size, void *out, int narrow,
                                  size_t n, int reduce, gz_op_t op, const int avx2) {
  size_t pos = 0;
  uint64_t bad = 0;
  if (decode_run(p, size, &pos, out, narrow, n, reduce, op, &bad, avx2) != GZ_OK ||
      pos != size)
    return GZ_ERR_CORRUPT;
  return bad ? (reduce ? GZ_ERR_OVERFLOW : GZ_ERR_CORRUPT) : GZ_OK;
}

/* Decode n codes from size bytes straight into values (decode fused with
 * dequantization: no code buffer is written), tiles of GZ_DQ_TILE codes
 * decoded in L1 then converted by dequant_body, so every value is the one
 * decode-then-dequantize gives. *amax: the largest |code|. */
#ifdef GZ_HAVE_AVX2
/* decode_values_body's AVX2 loop, block by block: a block read32_avx2 takes
 * is converted in registers, any other decoded as int64 and converted by
 * dequant_body; both give (T)(step * (double)q) and the largest |code|, as
 * the tiles do. */
GZ_TARGET_AVX2 static gz_result_t values_run_avx2(const uint8_t *p, size_t size, size_t n,
                                                  double step, void *out, int f32,
                                                  uint64_t *amax) {
  __m256i hi = _mm256_setzero_si256(), lo = _mm256_setzero_si256();
  size_t pos = 0;
  uint64_t m = 0, lanes;
  for (size_t t = 0; t < n; t += GZ_BLOCK) {
    int64_t w[GZ_BLOCK];
    size_t len = n - t < GZ_BLOCK ? n - t : GZ_BLOCK, used = 0, a;
    void *o = f32 ? (void *)((float *)out + t) : (void *)((double *)out + t);
    if (len == GZ_BLOCK &&
        (used = values32_avx2(p + pos, size - pos, step, o, f32, &hi, &lo))) {
      pos += used;
      continue;
    }
    if (!(used = gz_block_decode_codes(p + pos, size - pos, (int)len, w)))
      return GZ_ERR_CORRUPT;
    pos += used;
    a = dequant_body(w, len, step, o, f32);
    m = a > m ? a : m;
  }
  lanes = lanes_amax(hi, lo);
  *amax = m > lanes ? m : lanes;
  return pos == size ? GZ_OK : GZ_ERR_CORRUPT;
}
#endif

GZ_INLINE gz_result_t decode_values_body(const uint8_t *p, size_t size, size_t n,
                                         double step, void *out, int f32, uint64_t *amax,
                                         const int avx2) {
  size_t pos = 0;
  uint64_t m = 0;
#ifdef GZ_HAVE_AVX2
  if (avx2)
    return f32 ? values_run_avx2(p, size, n, step, out, 1, amax)
               : values_run_avx2(p, size, n, step, out, 0, amax);
#endif
  (void)avx2;
  for (size_t t = 0; t < n; t += GZ_DQ_TILE) {
    int64_t tile[GZ_DQ_TILE];
    uint64_t none = 0;
    size_t len = n - t < GZ_DQ_TILE ? n - t : GZ_DQ_TILE, a;
    if (decode_run(p, size, &pos, tile, 0, len, 0, GZ_OP_SUM, &none, 0) != GZ_OK)
      return GZ_ERR_CORRUPT;
    a = dequant_body(tile, len, step,
                     f32 ? (void *)((float *)out + t) : ((double *)out + t), f32);
    m = a > m ? a : m;
  }
  *amax = m;
  return pos == size ? GZ_OK : GZ_ERR_CORRUPT;
}

/* ---- int32 codes (the agreed range lets the sums fit) --------------------- */
/* The same quantizer, conversion and PACKED bytes as int64 codes: a code is
 * widened to int64 in registers before its block is encoded, and a decoded
 * block is narrowed with a check (a value or a sum beyond int32 is reported,
 * never wrapped). */

/* Quantize through a tile of int64 codes in L1, then narrow it. */
#define GZ_Q32_TILE 512
GZ_INLINE int quant32_body(const void *x, int f32, size_t n, const gz_quant_t *qp,
                           int32_t *restrict q) {
  int ok = 1;
  for (size_t i = 0; i < n; i += GZ_Q32_TILE) {
    int64_t tile[GZ_Q32_TILE];
    size_t len = n - i < GZ_Q32_TILE ? n - i : GZ_Q32_TILE;
    uint64_t bad = 0;
    ok &= f32 ? quant_f32_body((const float *)x + i, len, qp, tile)
              : quant_f64_body((const double *)x + i, len, qp, tile);
    for (size_t k = 0; k < len; k++) {
      bad |= ((uint64_t)tile[k] + (UINT64_C(1) << 31)) >> 32;
      q[i + k] = (int32_t)tile[k];
    }
    ok &= !bad;
  }
  return ok;
}

GZ_INLINE uint64_t dequant32_body(const int32_t *restrict q, size_t n, double step,
                                  void *restrict out, int f32) {
  int32_t mx = 0, mn = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t v = q[i];
    double d = (double)v;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
    if (f32)
      ((float *)out)[i] = (float)GZ_MUL(d, step);
    else
      ((double *)out)[i] = GZ_MUL(d, step);
  }
  return (uint64_t)mx > (uint64_t)(-(int64_t)mn) ? (uint64_t)mx
                                                 : (uint64_t)(-(int64_t)mn);
}

/* A full block whose deltas fit int32 goes through values.c's per-width
 * packers (gz_put_payload32): zigzag deltas in uint32, the same bytes as
 * gz_block_encode_codes. A difference that wraps (the operands' signs differ
 * and the result's differs from the minuend's) does not fit: that block
 * takes gz_block_encode_codes. */
GZ_INLINE uint8_t *encode32_body(const int32_t *codes, size_t n, uint8_t *p) {
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int64_t block[GZ_BLOCK];
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    if (len == GZ_BLOCK) {
      const int32_t *q = codes + i;
      uint32_t u[GZ_BLOCK], all = 0, wrap = 0;
      u[0] = ((uint32_t)q[0] << 1) ^ (uint32_t)(q[0] >> 31);
      for (int k = 1; k < GZ_BLOCK; k++) {
        uint32_t d = (uint32_t)q[k] - (uint32_t)q[k - 1];
        wrap |= ((uint32_t)q[k] ^ (uint32_t)q[k - 1]) & ((uint32_t)q[k] ^ d);
        u[k] = (d << 1) ^ (uint32_t)((int32_t)d >> 31);
        all |= u[k];
      }
      if (!(wrap >> 31)) {
        int w = gz_bit_width(all), w0 = gz_bit_width(u[0]);
        p[0] = (uint8_t)w;
        p[1] = (uint8_t)w0;
        gz_put_payload32(u[0], u, w, w0, p + 2);
        p += 2 + gz_packed_bytes(GZ_BLOCK, w, w0);
        continue;
      }
    }
    for (int k = 0; k < len; k++)
      block[k] = codes[i + k];
    p += gz_block_encode_codes(block, len, p);
  }
  return p;
}

/* Decode n codes, combine them with acc (int64, or int32 with narrow) and
 * write the values of the combination (decode+reduce fused with
 * dequantization: acc is read, never written), tile by tile in L1: the
 * values, largest |code| and results of decode+reduce then dequantize. */
GZ_INLINE gz_result_t decode_reduce_values_body(const uint8_t *p, size_t size, gz_op_t op,
                                                const void *acc, int narrow, size_t n,
                                                double step, void *out, int f32,
                                                uint64_t *amax, const int avx2) {
  size_t pos = 0;
  uint64_t m = 0, bad = 0;
  for (size_t t = 0; t < n; t += GZ_DQ_TILE) {
    union {
      int64_t w[GZ_DQ_TILE];
      int32_t n[GZ_DQ_TILE];
    } tile;
    size_t len = n - t < GZ_DQ_TILE ? n - t : GZ_DQ_TILE, a;
    void *o = f32 ? (void *)((float *)out + t) : (void *)((double *)out + t);
    if (narrow)
      memcpy(tile.n, (const int32_t *)acc + t, len * sizeof(int32_t));
    else
      memcpy(tile.w, (const int64_t *)acc + t, len * sizeof(int64_t));
    if (decode_run(p, size, &pos, narrow ? (void *)tile.n : (void *)tile.w, narrow, len,
                   1, op, &bad, avx2) != GZ_OK)
      return GZ_ERR_CORRUPT;
    a = narrow ? dequant32_body(tile.n, len, step, o, f32)
               : dequant_body(tile.w, len, step, o, f32);
    m = a > m ? a : m;
  }
  *amax = m;
  if (pos != size)
    return GZ_ERR_CORRUPT;
  return bad ? GZ_ERR_OVERFLOW : GZ_OK;
}

/* ---- int32 codes and the range in one pass ------------------------------- */
/* The collectives' quantization of a part: int32 codes (the low 32 bits of
 * rint(x / step), as quant32) and the range of the part (gz_codes_range's:
 * its lanes, in its order), with one read of x. ok: no NaN and the largest
 * |x| (so every value) gives a code within the limit; no bound check: the
 * collectives accept a code whose error is a rounding above eb
 * (coll_common.c), so a caller re-examines only a part that is not ok. */
#define GZ_RLANES 16

/* The bounds of the lanes: lane 0, then lanes 1 .. GZ_RLANES - 1 in order. */
#define GZ_FOLD_FN(name, T)                                                              \
  static void name(const T *lo, const T *hi, double *plo, double *phi) {                 \
    T l = lo[0], h = hi[0];                                                              \
    for (int k = 1; k < GZ_RLANES; k++) {                                                \
      l = lo[k] < l ? lo[k] : l;                                                         \
      h = hi[k] > h ? hi[k] : h;                                                         \
    }                                                                                    \
    *plo = (double)l;                                                                    \
    *phi = (double)h;                                                                    \
  }
GZ_FOLD_FN(fold_f32, float)
GZ_FOLD_FN(fold_f64, double)

/* Minimum and maximum over the lanes (vectorizes); NaN compares false, so
 * it is skipped; an infinity is a bound. */
#define GZ_RANGE_FN(name, fold, T)                                                       \
  static void name(const T *x, size_t n, double *plo, double *phi) {                     \
    T lo[GZ_RLANES], hi[GZ_RLANES];                                                      \
    size_t i = 0;                                                                        \
    for (int k = 0; k < GZ_RLANES; k++) {                                                \
      lo[k] = (T)INFINITY;                                                               \
      hi[k] = (T)-INFINITY;                                                              \
    }                                                                                    \
    for (; i + GZ_RLANES <= n; i += GZ_RLANES)                                           \
      for (int k = 0; k < GZ_RLANES; k++) {                                              \
        T v = x[i + k];                                                                  \
        lo[k] = v < lo[k] ? v : lo[k];                                                   \
        hi[k] = v > hi[k] ? v : hi[k];                                                   \
      }                                                                                  \
    for (int k = 0; i < n; i++, k++) {                                                   \
      T v = x[i];                                                                        \
      lo[k] = v < lo[k] ? v : lo[k];                                                     \
      hi[k] = v > hi[k] ? v : hi[k];                                                     \
    }                                                                                    \
    fold(lo, hi, plo, phi);                                                              \
  }
GZ_RANGE_FN(range_f32, fold_f32, float)
GZ_RANGE_FN(range_f64, fold_f64, double)

void gz_codes_range(gz_dtype_t dtype, const void *x, size_t n, double *lo, double *hi) {
  if (dtype == GZ_FLOAT32)
    range_f32(x, n, lo, hi);
  else
    range_f64(x, n, lo, hi);
}

/* The part's ok from its range: no NaN, and the largest |x| (so every
 * value) gives a code within qp->code_max. */
static int range_ok(double lo, double hi, int nan, const gz_quant_t *qp) {
  double amax;
  if (!(hi >= lo)) /* nothing but NaN */
    return !nan;
  amax = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
  return !nan && fabs(GZ_ADD(GZ_ADD(GZ_MUL(amax, qp->inv_step), GZ_RINT_SHIFT),
                             -GZ_RINT_SHIFT)) <= qp->code_max;
}

/* The reference loop: the range, then the codes. */
#define GZ_Q32R_BODY(name, range, T)                                                     \
  static int name(const T *x, size_t n, const gz_quant_t *qp, int32_t *restrict q,       \
                  double *plo, double *phi) {                                            \
    int nan = 0;                                                                         \
    range(x, n, plo, phi);                                                               \
    for (size_t i = 0; i < n; i++) {                                                     \
      double sh = GZ_ADD(GZ_MUL((double)x[i], qp->inv_step), GZ_RINT_SHIFT);             \
      nan |= x[i] != x[i];                                                               \
      q[i] = (int32_t)(uint32_t)(uint64_t)gz_rint_code(sh);                              \
    }                                                                                    \
    return range_ok(*plo, *phi, nan, qp);                                                \
  }
GZ_Q32R_BODY(quant32_range_f32_portable, range_f32, float)
GZ_Q32R_BODY(quant32_range_f64_portable, range_f64, double)

#ifdef GZ_HAVE_AVX2
/* The same in AVX2 intrinsics: sixteen lanes are two (float) or four
 * (double) registers, _mm256_min(v, lo) is v < lo ? v : lo and _mm256_max(v,
 * hi) is v > hi ? v : hi (the second operand on NaN and on equal zeros), as
 * in the portable loop; the code is the low half of each shifted double. */
GZ_TARGET_AVX2 static int quant32_range_f32_avx2(const float *x, size_t n,
                                                 const gz_quant_t *qp,
                                                 int32_t *restrict q, double *plo,
                                                 double *phi) {
  const __m256d inv = _mm256_set1_pd(qp->inv_step), shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  __m256 lo0 = _mm256_set1_ps(INFINITY), lo1 = lo0, hi0 = _mm256_set1_ps(-INFINITY),
         hi1 = hi0, nan = _mm256_setzero_ps();
  float lo[GZ_RLANES], hi[GZ_RLANES];
  size_t i = 0;
  int bad = 0;
  for (; i + GZ_RLANES <= n; i += GZ_RLANES) {
    __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    __m128i c[4];
    lo0 = _mm256_min_ps(a, lo0);
    lo1 = _mm256_min_ps(b, lo1);
    hi0 = _mm256_max_ps(a, hi0);
    hi1 = _mm256_max_ps(b, hi1);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    for (int h = 0; h < 4; h++) {
      __m128 f = h == 0   ? _mm256_castps256_ps128(a)
                 : h == 1 ? _mm256_extractf128_ps(a, 1)
                 : h == 2 ? _mm256_castps256_ps128(b)
                          : _mm256_extractf128_ps(b, 1);
      __m256d sh = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(f), inv), shift);
      c[h] = _mm256_castsi256_si128(
          _mm256_permutevar8x32_epi32(_mm256_castpd_si256(sh), low_halves));
    }
    _mm256_storeu_si256((__m256i *)(void *)(q + i),
                        _mm256_inserti128_si256(_mm256_castsi128_si256(c[0]), c[1], 1));
    _mm256_storeu_si256((__m256i *)(void *)(q + i + 8),
                        _mm256_inserti128_si256(_mm256_castsi128_si256(c[2]), c[3], 1));
  }
  _mm256_storeu_ps(lo, lo0);
  _mm256_storeu_ps(lo + 8, lo1);
  _mm256_storeu_ps(hi, hi0);
  _mm256_storeu_ps(hi + 8, hi1);
  bad = _mm256_movemask_ps(nan) != 0;
  for (int k = 0; i < n; i++, k++) {
    float v = x[i];
    double sh = GZ_ADD(GZ_MUL((double)v, qp->inv_step), GZ_RINT_SHIFT);
    lo[k] = v < lo[k] ? v : lo[k];
    hi[k] = v > hi[k] ? v : hi[k];
    bad |= v != v;
    q[i] = (int32_t)(uint32_t)(uint64_t)gz_rint_code(sh);
  }
  fold_f32(lo, hi, plo, phi);
  return range_ok(*plo, *phi, bad, qp);
}

GZ_TARGET_AVX2 static int quant32_range_f64_avx2(const double *x, size_t n,
                                                 const gz_quant_t *qp,
                                                 int32_t *restrict q, double *plo,
                                                 double *phi) {
  const __m256d inv = _mm256_set1_pd(qp->inv_step), shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  __m256d lo4[4], hi4[4], nan = _mm256_setzero_pd();
  double lo[GZ_RLANES], hi[GZ_RLANES];
  size_t i = 0;
  int bad;
  for (int r = 0; r < 4; r++) {
    lo4[r] = _mm256_set1_pd(INFINITY);
    hi4[r] = _mm256_set1_pd(-INFINITY);
  }
  for (; i + GZ_RLANES <= n; i += GZ_RLANES) {
    __m128i c[4];
    for (int r = 0; r < 4; r++) {
      __m256d v = _mm256_loadu_pd(x + i + 4 * r);
      __m256d sh = _mm256_add_pd(_mm256_mul_pd(v, inv), shift);
      lo4[r] = _mm256_min_pd(v, lo4[r]);
      hi4[r] = _mm256_max_pd(v, hi4[r]);
      nan = _mm256_or_pd(nan, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
      c[r] = _mm256_castsi256_si128(
          _mm256_permutevar8x32_epi32(_mm256_castpd_si256(sh), low_halves));
    }
    _mm256_storeu_si256((__m256i *)(void *)(q + i),
                        _mm256_inserti128_si256(_mm256_castsi128_si256(c[0]), c[1], 1));
    _mm256_storeu_si256((__m256i *)(void *)(q + i + 8),
                        _mm256_inserti128_si256(_mm256_castsi128_si256(c[2]), c[3], 1));
  }
  for (int r = 0; r < 4; r++) {
    _mm256_storeu_pd(lo + 4 * r, lo4[r]);
    _mm256_storeu_pd(hi + 4 * r, hi4[r]);
  }
  bad = _mm256_movemask_pd(nan) != 0;
  for (int k = 0; i < n; i++, k++) {
    double v = x[i], sh = GZ_ADD(GZ_MUL(v, qp->inv_step), GZ_RINT_SHIFT);
    lo[k] = v < lo[k] ? v : lo[k];
    hi[k] = v > hi[k] ? v : hi[k];
    bad |= v != v;
    q[i] = (int32_t)(uint32_t)(uint64_t)gz_rint_code(sh);
  }
  fold_f64(lo, hi, plo, phi);
  return range_ok(*plo, *phi, bad, qp);
}
#endif

/* ---- the two compilations and the choice -------------------------------- */

typedef struct kernels {
  int (*quant_f32)(const float *, size_t, const gz_quant_t *, int64_t *);
  int (*quant_f64)(const double *, size_t, const gz_quant_t *, int64_t *);
  uint64_t (*dequant_f32)(const int64_t *, size_t, double, float *);
  uint64_t (*dequant_f64)(const int64_t *, size_t, double, double *);
  uint8_t *(*encode)(const int64_t *, size_t, uint8_t *);
  gz_result_t (*decode)(const uint8_t *, size_t, int64_t *, size_t, int, gz_op_t);
  int (*quant32)(const void *, int, size_t, const gz_quant_t *, int32_t *);
  uint64_t (*dequant32)(const int32_t *, size_t, double, void *, int);
  uint8_t *(*encode32)(const int32_t *, size_t, uint8_t *);
  gz_result_t (*decode32)(const uint8_t *, size_t, int32_t *, size_t, int, gz_op_t);
  gz_result_t (*decode_values)(const uint8_t *, size_t, size_t, double, void *, int,
                               uint64_t *);
  gz_result_t (*decode_reduce_values)(const uint8_t *, size_t, gz_op_t, const void *, int,
                                      size_t, double, void *, int, uint64_t *);
} kernels_t;

#define GZ_KERNELS(sfx, ATTR, AVX2)                                                      \
  ATTR static int quant_f32_##sfx(const float *x, size_t n, const gz_quant_t *qp,        \
                                  int64_t *q) {                                          \
    return quant_f32_body(x, n, qp, q);                                                  \
  }                                                                                      \
  ATTR static int quant_f64_##sfx(const double *x, size_t n, const gz_quant_t *qp,       \
                                  int64_t *q) {                                          \
    return quant_f64_body(x, n, qp, q);                                                  \
  }                                                                                      \
  ATTR static uint64_t dequant_f32_##sfx(const int64_t *q, size_t n, double step,        \
                                         float *out) {                                   \
    return dequant_f32_body(q, n, step, out);                                            \
  }                                                                                      \
  ATTR static uint64_t dequant_f64_##sfx(const int64_t *q, size_t n, double step,        \
                                         double *out) {                                  \
    return dequant_f64_body(q, n, step, out);                                            \
  }                                                                                      \
  ATTR static uint8_t *encode_##sfx(const int64_t *codes, size_t n, uint8_t *p) {        \
    return encode_body(codes, n, p);                                                     \
  }                                                                                      \
  ATTR static gz_result_t decode_##sfx(const uint8_t *p, size_t size, int64_t *out,      \
                                       size_t n, int reduce, gz_op_t op) {               \
    return decode_body(p, size, out, 0, n, reduce, op, AVX2);                            \
  }                                                                                      \
  ATTR static int quant32_##sfx(const void *x, int f32, size_t n, const gz_quant_t *qp,  \
                                int32_t *q) {                                            \
    return f32 ? quant32_body(x, 1, n, qp, q) : quant32_body(x, 0, n, qp, q);            \
  }                                                                                      \
  ATTR static uint64_t dequant32_##sfx(const int32_t *q, size_t n, double step,          \
                                       void *out, int f32) {                             \
    return f32 ? dequant32_body(q, n, step, out, 1)                                      \
               : dequant32_body(q, n, step, out, 0);                                     \
  }                                                                                      \
  ATTR static uint8_t *encode32_##sfx(const int32_t *codes, size_t n, uint8_t *p) {      \
    return encode32_body(codes, n, p);                                                   \
  }                                                                                      \
  ATTR static gz_result_t decode32_##sfx(const uint8_t *p, size_t size, int32_t *out,    \
                                         size_t n, int reduce, gz_op_t op) {             \
    return decode_body(p, size, out, 1, n, reduce, op, AVX2);                            \
  }                                                                                      \
  ATTR static gz_result_t decode_values_##sfx(const uint8_t *p, size_t size, size_t n,   \
                                              double step, void *out, int f32,           \
                                              uint64_t *amax) {                          \
    return f32 ? decode_values_body(p, size, n, step, out, 1, amax, AVX2)                \
               : decode_values_body(p, size, n, step, out, 0, amax, AVX2);               \
  }                                                                                      \
  ATTR static gz_result_t decode_reduce_values_##sfx(                                    \
      const uint8_t *p, size_t size, gz_op_t op, const void *acc, int narrow, size_t n,  \
      double step, void *out, int f32, uint64_t *amax) {                                 \
    return f32 ? decode_reduce_values_body(p, size, op, acc, narrow, n, step, out, 1,    \
                                           amax, AVX2)                                   \
               : decode_reduce_values_body(p, size, op, acc, narrow, n, step, out, 0,    \
                                           amax, AVX2);                                  \
  }                                                                                      \
  static const kernels_t kernels_##sfx =                                                 \
      {                                                                                  \
          quant_f32_##sfx,   quant_f64_##sfx,     dequant_f32_##sfx,                     \
          dequant_f64_##sfx, encode_##sfx,        decode_##sfx,                          \
          quant32_##sfx,     dequant32_##sfx,     encode32_##sfx,                        \
          decode32_##sfx,    decode_values_##sfx, decode_reduce_values_##sfx};

GZ_KERNELS(portable, , 0)
#ifdef GZ_HAVE_AVX2
GZ_KERNELS(avx2, GZ_TARGET_AVX2, 1)
#endif

static int simd_level = -1; /* -1: not chosen yet */

int gz_codes_simd(int want) {
  int have = gz_cpu_avx2();
  if (want >= 0 || simd_level < 0)
    simd_level = want >= 0 && want < have ? want : have;
  return simd_level;
}

static const kernels_t *kernels(void) {
  int level = simd_level >= 0 ? simd_level : gz_codes_simd(-1);
#ifdef GZ_HAVE_AVX2
  if (level == 1)
    return &kernels_avx2;
#endif
  (void)level;
  return &kernels_portable;
}

/* ---- the API ------------------------------------------------------------- */

gz_result_t gz_quantize(gz_dtype_t dtype, const void *in, size_t n, double eb,
                        int64_t code_limit, int64_t *codes) {
  gz_quant_t qp;
  int ok;
  if ((!in || !codes) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || code_limit <= 0 || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, (double)code_limit);
  ok = dtype == GZ_FLOAT32 ? kernels()->quant_f32(in, n, &qp, codes)
                           : kernels()->quant_f64(in, n, &qp, codes);
  return ok ? GZ_OK : GZ_ERR_RANGE;
}

gz_result_t gz_dequantize_absmax(gz_dtype_t dtype, const int64_t *codes, size_t n,
                                 double eb, void *out, int64_t *amax) {
  gz_quant_t qp;
  uint64_t m = 0;
  if ((!codes || !out) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, 0);
  for (size_t i = 0; i < n; i += GZ_DQ_TILE) {
    size_t len = n - i < GZ_DQ_TILE ? n - i : GZ_DQ_TILE;
    uint64_t a = dtype == GZ_FLOAT32
                     ? kernels()->dequant_f32(codes + i, len, qp.step, (float *)out + i)
                     : kernels()->dequant_f64(codes + i, len, qp.step, (double *)out + i);
    m = a > m ? a : m;
  }
  if (amax)
    *amax = m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
  return GZ_OK;
}

gz_result_t gz_dequantize(gz_dtype_t dtype, const int64_t *codes, size_t n, double eb,
                          void *out) {
  return gz_dequantize_absmax(dtype, codes, n, eb, out, NULL);
}

size_t gz_codes_bound(size_t n) {
  size_t blocks = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  if (n > SIZE_MAX / 16)
    return 0;
  return blocks * 3 + 8 * n;
}

/* Encode and decode for either width (int32 with narrow): one argument
 * check, then the chosen compilation's loop. */
gz_result_t gz_codes_encode_w(const void *codes, int narrow, size_t n, void *out,
                              size_t cap, size_t *out_size) {
  uint8_t *p = out;
  if (((!codes || !out) && n) || !out_size)
    return GZ_ERR_ARG;
  if (cap < gz_codes_bound(n))
    return GZ_ERR_CAPACITY;
  if (n)
    p = narrow ? kernels()->encode32(codes, n, p) : kernels()->encode(codes, n, p);
  *out_size = (size_t)(p - (uint8_t *)out);
  return GZ_OK;
}

gz_result_t gz_codes_decode_w(int reduce, gz_op_t op, const void *in, size_t size,
                              void *codes, int narrow, size_t n) {
  if ((!in && size) || (!codes && n) || (reduce && (op < GZ_OP_SUM || op > GZ_OP_MIN)))
    return GZ_ERR_ARG;
  if (!n)
    return size == 0 ? GZ_OK : GZ_ERR_CORRUPT;
  return narrow ? kernels()->decode32(in, size, codes, n, reduce, op)
                : kernels()->decode(in, size, codes, n, reduce, op);
}

gz_result_t gz_codes_encode(const int64_t *codes, size_t n, void *out, size_t cap,
                            size_t *out_size) {
  return gz_codes_encode_w(codes, 0, n, out, cap, out_size);
}

gz_result_t gz_codes_decode(const void *in, size_t size, int64_t *codes, size_t n) {
  return gz_codes_decode_w(0, GZ_OP_SUM, in, size, codes, 0, n);
}

gz_result_t gz_codes_decode_reduce(gz_op_t op, const void *in, size_t size, int64_t *acc,
                                   size_t n) {
  return gz_codes_decode_w(1, op, in, size, acc, 0, n);
}

gz_result_t gz_codes_reduce(gz_op_t op, int64_t *acc, const int64_t *in, size_t n) {
  int overflow = 0;
  if ((!acc || !in) && n)
    return GZ_ERR_ARG;
  if (op < GZ_OP_SUM || op > GZ_OP_MIN)
    return GZ_ERR_ARG;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    overflow |= reduce_block(op, acc + i, in + i, len);
  }
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}

/* ---- int32 codes ---------------------------------------------------------- */

gz_result_t gz_quantize32(gz_dtype_t dtype, const void *in, size_t n, double eb,
                          int64_t code_limit, int32_t *codes) {
  gz_quant_t qp;
  if ((!in || !codes) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || code_limit <= 0 || code_limit > INT32_MAX ||
      !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, (double)code_limit);
  return kernels()->quant32(in, dtype == GZ_FLOAT32, n, &qp, codes) ? GZ_OK
                                                                    : GZ_ERR_RANGE;
}

gz_result_t gz_dequantize32_absmax(gz_dtype_t dtype, const int32_t *codes, size_t n,
                                   double eb, void *out, int64_t *amax) {
  gz_quant_t qp;
  uint64_t m = 0;
  size_t esz = gz_dtype_size(dtype);
  if ((!codes || !out) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || !esz)
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, 0);
  for (size_t i = 0; i < n; i += GZ_DQ_TILE) {
    size_t len = n - i < GZ_DQ_TILE ? n - i : GZ_DQ_TILE;
    uint64_t a = kernels()->dequant32(codes + i, len, qp.step, (char *)out + i * esz,
                                      dtype == GZ_FLOAT32);
    m = a > m ? a : m;
  }
  if (amax)
    *amax = (int64_t)m;
  return GZ_OK;
}

gz_result_t gz_codes_decode_values(const void *in, size_t size, gz_dtype_t dtype,
                                   size_t n, double eb, void *out, int64_t *amax) {
  uint64_t m = 0;
  gz_result_t rc;
  if ((!in && size) || (!out && n) || !amax || !(eb > 0) || !isfinite(eb) ||
      !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  if (!n)
    return size == 0 ? GZ_OK : GZ_ERR_CORRUPT;
  rc = kernels()->decode_values(in, size, n, gz_quant_make(eb, 0).step, out,
                                dtype == GZ_FLOAT32, &m);
  *amax = m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
  return rc;
}

gz_result_t gz_quantize32_range(gz_dtype_t dtype, const void *in, size_t n, double eb,
                                int64_t code_limit, int32_t *codes, double *lo,
                                double *hi) {
  gz_quant_t qp;
  int ok, f32 = dtype == GZ_FLOAT32, avx2 = 0;
  if (((!in || !codes) && n) || !lo || !hi)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || code_limit <= 0 || code_limit > INT32_MAX ||
      !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, (double)code_limit);
#ifdef GZ_HAVE_AVX2
  avx2 = kernels() == &kernels_avx2;
  if (avx2)
    ok = f32 ? quant32_range_f32_avx2(in, n, &qp, codes, lo, hi)
             : quant32_range_f64_avx2(in, n, &qp, codes, lo, hi);
#endif
  if (!avx2)
    ok = f32 ? quant32_range_f32_portable(in, n, &qp, codes, lo, hi)
             : quant32_range_f64_portable(in, n, &qp, codes, lo, hi);
  return ok ? GZ_OK : GZ_ERR_RANGE;
}

gz_result_t gz_codes_decode_reduce_values(gz_op_t op, const void *in, size_t size,
                                          const void *acc, int narrow, gz_dtype_t dtype,
                                          size_t n, double eb, void *out, int64_t *amax) {
  uint64_t m = 0;
  gz_result_t rc;
  if ((!in && size) || ((!out || !acc) && n) || !amax || !(eb > 0) || !isfinite(eb) ||
      !gz_dtype_size(dtype) || op < GZ_OP_SUM || op > GZ_OP_MIN)
    return GZ_ERR_ARG;
  if (!n)
    return size == 0 ? GZ_OK : GZ_ERR_CORRUPT;
  rc = kernels()->decode_reduce_values(in, size, op, acc, narrow, n,
                                       gz_quant_make(eb, 0).step, out,
                                       dtype == GZ_FLOAT32, &m);
  *amax = m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
  return rc;
}
