/* pred_value.c - prediction from reconstructed values with quantized
 * prediction errors (SZ's scheme), in fixed point so that encoder and
 * decoder compute bit-identical predictions.
 *
 * Codes on the fixed grid of unit u = 2 eb / 33: X = rint(x / u). A point's
 * prediction P (integer, from already reconstructed neighbours R, by the
 * Lorenzo rule or the multilevel interpolation of pred_interp.c) gives the
 * bin k = floor((X - P + 16) / 32) and the reconstruction R = P + 32 k, so
 * |X - R| <= 16 and |x - R u| <= u / 2 + 16 u = eb: the prediction error is
 * quantized in bins of 32 u = 2 eb x 32/33, centred on the prediction.
 * Predicting codes instead (pred_lorenzo.c, pred_interp.c) adds the rounding
 * of every neighbour to the grid to the residual; centring the bins on the
 * prediction leaves a smooth field's residuals mostly 0.
 *
 * Each value is checked in its own precision after reconstruction,
 * (T)(R u) within eb of x, exactly as the quantizer checks; a value that
 * fails (NaN, Inf, -0.0, subnormals, +0.0 not reconstructed as R = 0, out
 * of the code range, or rounding beyond eb) is an escape: k = 0 and R = P, its bits
 * stored verbatim by chunk2.c. All integer arithmetic wraps in uint64, so hostile streams
 * decode without undefined behaviour.
 *
 * The float32 encoder and decoder have second instances compiled for AVX2
 * (chosen with gz_chunk2_simd, as chunk2.c's quantizer): QINTERP four
 * points of a line at once (every prediction of a sweep reads only earlier
 * sweeps), QLORENZO's encoder row by row in passes with no chain from
 * point to point (its decoder stays point by point). The encoder's sweeps
 * along a line run in loops of their own, four points at a time, or eight
 * with AVX-512 where the CPU has it (gz_chunk2_simd level 2). They give the
 * portable instances' bins, escapes and values bit for bit (the streams
 * are the same bytes; tests/codec/test_codec_simd.c).
 */
#include "codec/predict.h"

#include "codec/chunk2.h"
#include "gz_block.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define VQ_BIN 32 /* bin width in grid units (a power of two) */
#define VQ_HALF 16

typedef struct vctx {
  const void *x;  /* encode: the values */
  void *out;      /* decode: the values (escapes overwritten later) */
  uint64_t *R;    /* reconstructed grid codes, C order */
  uint64_t *u;    /* zigzag bins in visiting order */
  uint8_t *esc;   /* encode: escape flags, C order */
  uint32_t *runs; /* encode (vlorenzo_row), may be NULL: runs of escapes */
  /* 32-bit (chunks hold at most 2^24 values): a size_t would share
   * uint64_t's type, so every store to R or u would reload it */
  uint32_t pos, nesc, nruns;
  int wide; /* encode: AVX-512's sweeps along a line (gz_chunk2_simd level 2) */
  double eb, unit, inv_unit, limit;
  /* encode (AVX2): the cache lines of values and of R that the finest
   * sweep along a line asks for as it goes (vline_levels, vfetch_next) */
  const char *ahead_x, *ahead_r;
  uint32_t nahead_x, nahead_r;
} vctx_t;

void gz_vq_grid(double eb, double *unit, double *inv_unit) {
  *unit = 2.0 * eb / (2 * VQ_HALF + 1);
  *inv_unit = 1.0 / *unit;
}

/* The traversals below are instantiated for each (decode, f64) pair, so
 * these flags are constants inside them. */
#define GZ_VINLINE static inline __attribute__((always_inline))

GZ_VINLINE void vvisit(vctx_t *restrict c, size_t idx, uint64_t p, const int decode,
                       const int f64) {
  if (decode) {
    uint64_t r = p + (gz_pred_unzigzag(c->u[c->pos++]) << 5);
    double rv = (double)(int64_t)r * c->unit;
    c->R[idx] = r;
    if (f64)
      ((double *)c->out)[idx] = rv;
    else
      ((float *)c->out)[idx] = (float)rv;
  } else {
    double v, sh, rv, tiny;
    uint64_t xq, k, r;
    int ok, in, nonzero;
    if (f64) {
      v = ((const double *)c->x)[idx];
      tiny = DBL_MIN;
    } else {
      v = (double)((const float *)c->x)[idx];
      tiny = (double)FLT_MIN;
    }
    sh = v * c->inv_unit + GZ_RINT_SHIFT;
    in = fabs(sh - GZ_RINT_SHIFT) <= c->limit; /* false for NaN and Inf */
    xq = in ? (uint64_t)gz_rint_code(sh) : p;
    k = (uint64_t)((int64_t)(xq - p + VQ_HALF) >> 5);
    r = p + (k << 5);
    rv = (double)(int64_t)r * c->unit;
    if (!f64)
      rv = (double)(float)rv;
    /* zeros and subnormals come back bit-exact: +0.0 only from R = 0 */
    nonzero = v != 0 || signbit(v);
    ok = in & (fabs(v - rv) <= c->eb) & !((fabs(v) < tiny) & (nonzero | (r != 0)));
    if (!ok) {
      k = 0;
      r = p;
      c->esc[idx] = 1;
      c->nesc++;
    }
    c->R[idx] = r;
    c->u[c->pos++] = gz_pred_zigzag(k);
  }
}

/* What a sweep along a line keeps in registers (vsweep4_f32, vsweep8_f32):
 * the place in u, the escape count, and the cache lines of values and of
 * R still to be asked for (vline_levels). */
typedef struct vsweep {
  const char *ax, *ar;
  uint32_t pos, nesc, nax, nar;
} vsweep_t;

GZ_VINLINE vsweep_t vsweep_begin(const vctx_t *c) {
  vsweep_t w = {c->ahead_x, c->ahead_r, c->pos, c->nesc, c->nahead_x, c->nahead_r};
  return w;
}

GZ_VINLINE void vsweep_end(vctx_t *c, const vsweep_t *w) {
  c->ahead_x = w->ax;
  c->ahead_r = w->ar;
  c->pos = w->pos;
  c->nesc = w->nesc;
  c->nahead_x = w->nax;
  c->nahead_r = w->nar;
}

/* The next cache line of R (to be written) and of values, while any are
 * left of those vline_levels queued for the finest sweep along a line to
 * ask for as it goes: asked all at once, they stalled the sweep on memory
 * that its loads, mostly from L2, could have overlapped. */
GZ_VINLINE void vfetch_next(vsweep_t *w) {
  if (w->nar) {
    __builtin_prefetch(w->ar, 1, 3);
    w->ar += 64;
    w->nar--;
  }
  if (w->nax) {
    __builtin_prefetch(w->ax, 0, 3);
    w->ax += 64;
    w->nax--;
  }
}

#ifdef HAVE_AVX2_PATH
/* The float32 encoder on four points of one line at once (AVX2): the
 * points idx + j s (j = 0..3) predicted by `mode` from R at -+o and -+3o,
 * then quantized and checked exactly as vvisit does, in the same double
 * operations (no FMA) and the same wrapping int64 arithmetic, so both give
 * the same bins, reconstructions and escapes. Codes of in-range values are
 * below 2^51 in magnitude, where the shift by 1.5 * 2^52 converts between
 * int64 and double exactly (AVX2 has no such conversion). */
#define GZ_V __attribute__((target("avx2"))) static inline

/* Four uint64 at stride s: at stride 2 from two overlapping loads that
 * read p[0..6] only. */
GZ_V __m256i vld4(const uint64_t *p, size_t s) {
  if (s == 2) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(p + 3));
    /* lanes p0 p4 p2 p6, then in order */
    return _mm256_permute4x64_epi64(_mm256_blend_epi32(lo, hi, 0xcc), 0xd8);
  }
  return _mm256_set_epi64x((long long)p[3 * s], (long long)p[2 * s], (long long)p[s],
                           (long long)p[0]);
}

/* Four floats at stride s (p[0..6] read at stride 2). */
GZ_V __m128 vldf4(const float *p, size_t s) {
  if (s == 2)
    return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 3), _MM_SHUFFLE(3, 1, 2, 0));
  return _mm_set_ps(p[3 * s], p[2 * s], p[s], p[0]);
}

/* (int64_t)x >> c, which AVX2 has only for 32-bit lanes. */
GZ_V __m256i vsra(__m256i x, int c) {
  __m256i m = _mm256_set1_epi64x((long long)(1ull << (63 - c)));
  return _mm256_sub_epi64(_mm256_xor_si256(_mm256_srli_epi64(x, c), m), m);
}

/* gz_interp_pred on four points. Along a line (s = 2o, the sweep of the
 * fastest axis) the four neighbour sets overlap: two loads give all seven. */
GZ_V __m256i vpred4(const uint64_t *p, ptrdiff_t o, size_t s, int mode, int along) {
  __m256i a, b, t, a3, b3;
  if (along) { /* mode 2; R at -3o, -o, o, ... 9o */
    a3 = vld4(p - 3 * o, s);
    b3 = vld4(p + 3 * o, s);
    b = _mm256_permute2x128_si256(a3, _mm256_permute4x64_epi64(b3, 0x90), 0x31);
    a = _mm256_alignr_epi8(b, a3, 8);
  } else {
    a = vld4(p - o, s);
    if (mode == 0)
      return a;
    if (mode == 3) { /* (3a - a3 + 1) >> 1 */
      t = _mm256_add_epi64(_mm256_slli_epi64(a, 1), a);
      t = _mm256_sub_epi64(t, vld4(p - 3 * o, s));
      return vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(1)), 1);
    }
    b = vld4(p + o, s);
    if (mode == 1)
      return vsra(_mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_set1_epi64x(1)), 1);
    if (mode == 4 || mode == 5) { /* (3 near + 6 far - outer + 4) >> 3 */
      __m256i x3 = mode == 4 ? a : b, x6 = mode == 4 ? b : a;
      __m256i out = vld4(mode == 4 ? p + 3 * o : p - 3 * o, s);
      t = _mm256_add_epi64(_mm256_slli_epi64(x3, 1), x3);
      t = _mm256_add_epi64(
          t, _mm256_add_epi64(_mm256_slli_epi64(x6, 2), _mm256_slli_epi64(x6, 1)));
      t = _mm256_sub_epi64(t, out);
      return vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(4)), 3);
    }
    a3 = vld4(p - 3 * o, s);
    b3 = vld4(p + 3 * o, s);
  }
  t = _mm256_add_epi64(a, b); /* (9 (a + b) - a3 - b3 + 8) >> 4 */
  t = _mm256_add_epi64(_mm256_slli_epi64(t, 3), t);
  t = _mm256_sub_epi64(t, _mm256_add_epi64(a3, b3));
  return vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(8)), 4);
}

/* vvisit's constants (encode, float32) in four lanes. */
typedef struct vq4 {
  __m256d shift, absm, inv_unit, unit, limit, eb, tiny;
  __m256i sbits, half;
} vq4_t;

GZ_V vq4_t vq4_consts(const vctx_t *c) {
  vq4_t q;
  q.shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  q.absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  q.inv_unit = _mm256_set1_pd(c->inv_unit);
  q.unit = _mm256_set1_pd(c->unit);
  q.limit = _mm256_set1_pd(c->limit);
  q.eb = _mm256_set1_pd(c->eb);
  q.tiny = _mm256_set1_pd((double)FLT_MIN);
  q.sbits = _mm256_castpd_si256(q.shift);
  q.half = _mm256_set1_epi64x(VQ_HALF);
  return q;
}

/* vvisit (encode, float32) on four values v predicted by p, in the same
 * double operations (no FMA) and the same wrapping int64 arithmetic, so
 * both give the same bins, reconstructions and escapes: returns the
 * reconstructions (p where escaped), the zigzag bins (0 where escaped) in
 * *z and the escapes in *bad (bit j for lane j). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
vquant4_f32(const vq4_t *q, __m256i p, __m256d v, __m256i *z, int *bad) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i xq, k, r;
  __m256d sh, in, rv, ok, tiny;
  sh = _mm256_add_pd(_mm256_mul_pd(v, q->inv_unit), q->shift);
  in = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(sh, q->shift), q->absm), q->limit,
                     _CMP_LE_OQ);
  xq = _mm256_blendv_epi8(p, _mm256_sub_epi64(_mm256_castpd_si256(sh), q->sbits),
                          _mm256_castpd_si256(in));
  k = vsra(_mm256_add_epi64(_mm256_sub_epi64(xq, p), q->half), 5);
  r = _mm256_add_epi64(p, _mm256_slli_epi64(k, 5));
  /* (double)r where it matters (in range: |r| <= 2^50 + 16) */
  rv = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(r, q->sbits)), q->shift);
  rv = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_mul_pd(rv, q->unit)));
  ok = _mm256_and_pd(
      in, _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(v, rv), q->absm), q->eb, _CMP_LE_OQ));
  /* zeros and subnormals (rare): only +0.0 with R = 0 */
  tiny = _mm256_cmp_pd(_mm256_and_pd(v, q->absm), q->tiny, _CMP_LT_OQ);
  if (_mm256_movemask_pd(tiny))
    ok = _mm256_andnot_pd(
        _mm256_andnot_pd(_mm256_castsi256_pd(_mm256_and_si256(
                             _mm256_cmpeq_epi64(_mm256_castpd_si256(v), zero),
                             _mm256_cmpeq_epi64(r, zero))),
                         tiny),
        ok);
  k = _mm256_and_si256(k, _mm256_castpd_si256(ok));
  *z = _mm256_xor_si256(_mm256_slli_epi64(k, 1), _mm256_cmpgt_epi64(zero, k));
  *bad = _mm256_movemask_pd(ok) ^ 15;
  return _mm256_blendv_epi8(p, r, _mm256_castpd_si256(ok));
}

/* vvisit (encode, float32) on the points idx + j s, j = 0..3, predicted by
 * mode (along: vpred4). R is stored when keep (the last sweep's are never
 * read again, and storing them made the next four's overlapping loads wait
 * on the stores); when wide too (s = 2 and idx + 7 on the line), as two
 * vectors that also write the points between them, which are the last
 * sweep's. */
GZ_V void vvisit4_f32(vctx_t *restrict c, size_t idx, ptrdiff_t o, size_t s, int mode,
                      int along, int keep, int wide) {
  const vq4_t q = vq4_consts(c);
  __m256i p = vpred4(c->R + idx, o, s, mode, along), r, z;
  int bad;
  r = vquant4_f32(&q, p, _mm256_cvtps_pd(vldf4((const float *)c->x + idx, s)), &z, &bad);
  _mm256_storeu_si256((__m256i *)(void *)(c->u + c->pos), z);
  c->pos += 4;
  if (keep) {
    if (wide) {
      _mm256_storeu_si256((__m256i *)(void *)(c->R + idx),
                          _mm256_permute4x64_epi64(r, 0x50));
      _mm256_storeu_si256((__m256i *)(void *)(c->R + idx + 4),
                          _mm256_permute4x64_epi64(r, 0xfa));
    } else {
      uint64_t rs[4];
      _mm256_storeu_si256((__m256i *)(void *)rs, r);
      for (int j = 0; j < 4; j++)
        c->R[idx + (size_t)j * s] = rs[j];
    }
  }
  if (bad)
    for (int j = 0; j < 4; j++)
      if (bad >> j & 1) {
        c->esc[idx + (size_t)j * s] = 1;
        c->nesc++;
      }
}

/* vline's sweep along a line at level h (mode 2, s = 2h, points k, k + s,
 * ... while k + 3s < end; end + 3h within the line) as vvisit4_f32 with
 * along, without the generic visit's overheads: the seven neighbours
 * at -3h, -h, ..., 9h of four points slide by 4s from one four to the
 * next, so each four loads only the four at 3h, 5h, 7h, 9h (at h = 1 two
 * overlapping loads) and shifts the others in from the last; the counters
 * stay in registers. R is kept for later levels when keep. Returns where
 * it stopped. */
__attribute__((target("avx2"), always_inline)) static inline size_t
vsweep4_body(vctx_t *restrict c, size_t base, size_t k, size_t end, size_t h, int keep) {
  const vq4_t q = vq4_consts(c);
  uint64_t *R = c->R + base, *restrict u = c->u;
  const float *x = (const float *)c->x + base;
  uint8_t *esc = c->esc + base;
  vsweep_t v = vsweep_begin(c);
  size_t s = 2 * h;
  __m256i e, w, a, a3, b, t, p, r, z;
  int bad;
  if (k + 3 * s >= end)
    return k;
  /* e = the neighbours at -5h (not read), -3h, -h, h of the first four */
  e = _mm256_set_epi64x((long long)R[k + h], (long long)R[k - h], (long long)R[k - 3 * h],
                        0);
  for (; k + 3 * s < end; k += 4 * s) {
    if (h == 1)
      vfetch_next(&v);
    w = vld4(R + k + 3 * h, s);                /* 3h, 5h, 7h, 9h */
    a = _mm256_permute2x128_si256(e, w, 0x21); /* -h, h, 3h, 5h */
    a3 = _mm256_alignr_epi8(a, e, 8);          /* -3h, -h, h, 3h */
    b = _mm256_alignr_epi8(w, a, 8);           /* h, 3h, 5h, 7h */
    t = _mm256_add_epi64(a, b);                /* (9 (a + b) - a3 - b3 + 8) >> 4 */
    t = _mm256_add_epi64(_mm256_slli_epi64(t, 3), t);
    t = _mm256_sub_epi64(t, _mm256_add_epi64(a3, w));
    p = vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(8)), 4);
    e = w;
    r = vquant4_f32(&q, p, _mm256_cvtps_pd(vldf4(x + k, s)), &z, &bad);
    _mm256_storeu_si256((__m256i *)(void *)(u + v.pos), z);
    v.pos += 4;
    if (keep) {
      uint64_t rs[4];
      _mm256_storeu_si256((__m256i *)(void *)rs, r);
      for (size_t j = 0; j < 4; j++)
        R[k + j * s] = rs[j];
    }
    if (bad)
      for (size_t j = 0; j < 4; j++)
        if (bad >> j & 1) {
          esc[k + j * s] = 1;
          v.nesc++;
        }
  }
  vsweep_end(c, &v);
  return k;
}

/* vsweep4_body at h = 1 (R never read again) and at h > 1. */
GZ_V size_t vsweep4_f32(vctx_t *restrict c, size_t base, size_t k, size_t end, size_t h) {
  if (h == 1)
    return vsweep4_body(c, base, k, end, 1, 0);
  return vsweep4_body(c, base, k, end, h, 1);
}

/* vsweep4_body on eight points at a time with AVX-512 (F, VL, BW, DQ, and
 * BMI2; chosen at run time: gz_chunk2_simd level 2): the same double
 * operations and wrapping int64 arithmetic in eight lanes, so the same
 * bins, reconstructions and escapes. The neighbours at -3h ... 17h of
 * eight points slide by 8s: each eight loads the eight at 3h, 5h, ...,
 * 17h (at h = 1 picked from two overlapping loads by one permute, at h = 2
 * from four loads by three, else gathered) and aligns the others from the
 * last; AVX-512's arithmetic shift of 64-bit lanes, its conversions and
 * its mask registers replace AVX2's emulations. */
#define GZ_V8 __attribute__((target("avx2,bmi2,avx512f,avx512vl,avx512bw,avx512dq")))

/* vquant4_f32's constants in eight lanes. */
typedef struct vq8 {
  __m512d shift, inv_unit, unit, limit, eb;
  __m512i half, sbits_half;
} vq8_t;

GZ_V8 __attribute__((always_inline)) static inline vq8_t vq8_consts(const vctx_t *c) {
  vq8_t q;
  q.shift = _mm512_set1_pd(GZ_RINT_SHIFT);
  q.inv_unit = _mm512_set1_pd(c->inv_unit);
  q.unit = _mm512_set1_pd(c->unit);
  q.limit = _mm512_set1_pd(c->limit);
  q.eb = _mm512_set1_pd(c->eb);
  q.half = _mm512_set1_epi64(VQ_HALF);
  q.sbits_half = _mm512_sub_epi64(_mm512_castpd_si512(q.shift), q.half);
  return q;
}

/* vquant4_f32 on the eight floats f predicted by p: the bin from code - p
 * + VQ_HALF (VQ_HALF where refused) in one masked subtraction; (double)r
 * by conversion (exact where in range); zeros and subnormals classified on
 * the floats. Returns the reconstructions (p's blend left to the caller),
 * the zigzag bins (0 where escaped) in *z and the lanes kept in *ok. */
GZ_V8 __attribute__((always_inline)) static inline __m512i
vquant8_f32(const vq8_t *qc, __m512i p, __m256 f, __m512i *z, __mmask8 *ok) {
  const __m512d v = _mm512_cvtps_pd(f);
  __m512d sh = _mm512_add_pd(_mm512_mul_pd(v, qc->inv_unit), qc->shift), rv;
  __mmask8 in, small;
  __m512i q, r;
  in = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(sh, qc->shift)), qc->limit,
                          _CMP_LE_OQ);
  q = _mm512_srai_epi64(
      _mm512_mask_sub_epi64(qc->half, in, _mm512_sub_epi64(_mm512_castpd_si512(sh), p),
                            qc->sbits_half),
      5);
  r = _mm512_add_epi64(p, _mm512_slli_epi64(q, 5));
  rv = _mm512_cvtps_pd(_mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtepi64_pd(r), qc->unit)));
  *ok = _mm512_mask_cmp_pd_mask(in, _mm512_abs_pd(_mm512_sub_pd(v, rv)), qc->eb,
                                _CMP_LE_OQ);
  small = _mm256_fpclass_ps_mask(f, 0x26); /* +0.0, -0.0, subnormal */
  if (small)                               /* (rare): only +0.0 with R = 0 */
    *ok &= (__mmask8)(~small | (_mm512_cmpeq_epi64_mask(_mm512_castpd_si512(v),
                                                        _mm512_setzero_si512()) &
                                _mm512_cmpeq_epi64_mask(r, _mm512_setzero_si512())));
  *z = _mm512_maskz_xor_epi64(*ok, _mm512_slli_epi64(q, 1), _mm512_srai_epi64(q, 63));
  return r;
}
GZ_V8 __attribute__((always_inline)) static inline size_t
vsweep8_body(vctx_t *restrict c, size_t base, size_t k, size_t end, size_t h, int keep) {
  const vq8_t qc = vq8_consts(c);
  const __m512i evens = _mm512_set_epi64(15, 13, 11, 9, 6, 4, 2, 0);
  const __m256i evensf = _mm256_set_epi32(15, 13, 11, 9, 6, 4, 2, 0);
  /* h = 2: every fourth of two loads, from the first and from its end */
  const __m512i by4 = _mm512_set_epi64(0, 0, 0, 0, 12, 8, 4, 0);
  const __m512i by4end = _mm512_set_epi64(0, 0, 0, 0, 15, 11, 4, 0);
  const __m512i by4f =
      _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 31, 27, 23, 19, 12, 8, 4, 0);
  const __m512i spread[4] = {
      _mm512_set_epi64(0, 0, 0, 1, 0, 0, 0, 0), _mm512_set_epi64(0, 0, 0, 3, 0, 0, 0, 2),
      _mm512_set_epi64(0, 0, 0, 5, 0, 0, 0, 4), _mm512_set_epi64(0, 0, 0, 7, 0, 0, 0, 6)};
  uint64_t *R = c->R + base, *restrict u = c->u;
  const float *x = (const float *)c->x + base;
  uint8_t *esc = c->esc + base;
  vsweep_t vs = vsweep_begin(c);
  size_t s = 2 * h;
  const __m512i at = _mm512_set_epi64(
      (long long)(7 * s), (long long)(6 * s), (long long)(5 * s), (long long)(4 * s),
      (long long)(3 * s), (long long)(2 * s), (long long)s, 0);
  __m512i e, w, a, a3, b, t, p, r, z;
  __m256 f;
  const __m256i ones = _mm256_set1_epi8(1);
  const __m128i one = _mm256_castsi256_si128(ones);
  __mmask8 ok;
  unsigned bad;
  if (k + 7 * s >= end)
    return k;
  /* lanes 5, 6, 7 of e: the neighbours at -3h, -h, h of the first eight */
  e = _mm512_set_epi64((long long)R[k + h], (long long)R[k - h], (long long)R[k - 3 * h],
                       0, 0, 0, 0, 0);
  for (; k + 7 * s < end; k += 8 * s) {
    if (h == 1) { /* R[k + 3 .. k + 17], x[k .. k + 14] */
      vfetch_next(&vs);
      vfetch_next(&vs);
      w = _mm512_permutex2var_epi64(_mm512_loadu_si512(R + k + 3), evens,
                                    _mm512_loadu_si512(R + k + 10));
      f = _mm256_permutex2var_ps(_mm256_loadu_ps(x + k), evensf,
                                 _mm256_loadu_ps(x + k + 7));
    } else if (h == 2) { /* R[k + 6 .. k + 34], x[k .. k + 28] */
      __m512i lo = _mm512_permutex2var_epi64(_mm512_loadu_si512(R + k + 6), by4,
                                             _mm512_loadu_si512(R + k + 14));
      __m512i hi = _mm512_permutex2var_epi64(_mm512_loadu_si512(R + k + 22), by4end,
                                             _mm512_loadu_si512(R + k + 27));
      w = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
      f = _mm512_castps512_ps256(_mm512_permutex2var_ps(_mm512_loadu_ps(x + k), by4f,
                                                        _mm512_loadu_ps(x + k + 13)));
    } else {
      w = _mm512_i64gather_epi64(at, (const void *)(R + k + 3 * h), 8);
      f = _mm512_i64gather_ps(at, (const void *)(x + k), 4);
    }
    a = _mm512_alignr_epi64(w, e, 6);  /* -h, h, ..., 13h */
    a3 = _mm512_alignr_epi64(w, e, 5); /* -3h, ..., 11h */
    b = _mm512_alignr_epi64(w, e, 7);  /* h, ..., 15h */
    t = _mm512_add_epi64(a, b);        /* (9 (a + b) - a3 - b3 + 8) >> 4 */
    t = _mm512_add_epi64(_mm512_slli_epi64(t, 3), t);
    t = _mm512_sub_epi64(t, _mm512_add_epi64(a3, w));
    p = _mm512_srai_epi64(_mm512_add_epi64(t, _mm512_set1_epi64(8)), 4);
    e = w;
    r = vquant8_f32(&qc, p, f, &z, &ok);
    _mm512_storeu_si512(u + vs.pos, z);
    vs.pos += 8;
    if (keep) {
      r = _mm512_mask_blend_epi64(ok, p, r);
      if (h == 2) /* R[k + 8i], R[k + 8i + 4] from lanes 2i, 2i + 1 */
        for (int i = 0; i < 4; i++)
          _mm512_mask_storeu_epi64(R + k + 8 * i, 0x11,
                                   _mm512_permutexvar_epi64(spread[i], r));
      else
        _mm512_i64scatter_epi64((void *)(R + k), at, r, 8);
    }
    bad = (unsigned)(uint8_t)~ok;
    vs.nesc += (uint32_t)__builtin_popcount(bad);
    if (h == 1) /* the flags without a branch: bytes k + 2j (k + 14 < end) */
      _mm_mask_storeu_epi8(esc + k, (__mmask16)_pdep_u32(bad, 0x5555), one);
    else if (h == 2) /* bytes k + 4j */
      _mm256_mask_storeu_epi8(esc + k, (__mmask32)_pdep_u32(bad, 0x11111111u), ones);
    else
      for (; bad; bad &= bad - 1)
        esc[k + (size_t)__builtin_ctz(bad) * s] = 1;
  }
  vsweep_end(c, &vs);
  return k;
}

GZ_V8 static size_t vsweep8_f32(vctx_t *restrict c, size_t base, size_t k, size_t end,
                                size_t h) {
  if (h == 1)
    return vsweep8_body(c, base, k, end, 1, 0);
  if (h == 2)
    return vsweep8_body(c, base, k, end, 2, 1);
  return vsweep8_body(c, base, k, end, h, 1);
}

/* vvisit (decode, float32) on the points idx + j s, j = 0..3 (R stored as
 * vvisit4_f32 does). Four with a code beyond 2^51 in magnitude (only from
 * a hostile stream) go through vvisit, one by one. */
GZ_V void vvisit4d_f32(vctx_t *restrict c, size_t idx, ptrdiff_t o, size_t s, int mode,
                       int along, int keep) {
  const __m256d shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256i one = _mm256_set1_epi64x(1);
  __m256i p = vpred4(c->R + idx, o, s, mode, along), z, r;
  float fs[4];
  uint64_t rs[4], w[4];
  z = _mm256_loadu_si256((const __m256i *)(const void *)(c->u + c->pos));
  z = _mm256_xor_si256(
      _mm256_srli_epi64(z, 1),
      _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_and_si256(z, one)));
  r = _mm256_add_epi64(p, _mm256_slli_epi64(z, 5));
  _mm256_storeu_si256((__m256i *)(void *)w,
                      _mm256_add_epi64(r, _mm256_set1_epi64x(INT64_C(1) << 51)));
  if ((w[0] | w[1] | w[2] | w[3]) >> 52) {
    for (size_t j = 0; j < 4; j++)
      vvisit(c, idx + j * s, gz_interp_pred(c->R + idx + j * s, o, mode), 1, 0);
    return;
  }
  _mm_storeu_ps(fs, _mm256_cvtpd_ps(
                        _mm256_mul_pd(_mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(
                                                        r, _mm256_castpd_si256(shift))),
                                                    shift),
                                      _mm256_set1_pd(c->unit))));
  for (size_t j = 0; j < 4; j++)
    ((float *)c->out)[idx + j * s] = fs[j];
  if (keep) {
    _mm256_storeu_si256((__m256i *)(void *)rs, r);
    for (size_t j = 0; j < 4; j++)
      c->R[idx + j * s] = rs[j];
  }
  c->pos += 4;
}
#undef GZ_V
#endif

/* QLORENZO's encoder on one row of n points at off (values, bins and
 * flags; its R at R + roff, the previous plane's row at R + boff, and the
 * rows before both rowstep before them, each used when its mask is all
 * ones), as vvisit on each point in turn, without a chain from point to
 * point. vlorenzo keeps R of two planes only, in turn: no prediction reads
 * further back, and R of the whole chunk (16 MB at 2^21 values) was a
 * stream of stores to memory (ERSST's compress about 1.09x faster without).
 *
 * A point's prediction is P = s + R' (s its neighbour rows' share, R' the
 * reconstruction of the point on its left, 0 for the first), and the s of
 * a row telescope: s_0 + ... + s_k = T_k, the neighbour rows' sum at k,
 * T = up + back - bu. vvisit's reconstruction R = P + 32 k = X + 16 -
 * ((X + 16 - P) mod 32) depends on P only modulo 32, and an escape's is P
 * itself, so every R is congruent to P modulo 32; the first point's P is
 * 0, and every P is a sum of R, so by induction every R, P and T is a
 * multiple of 32 (modulo 2^64 too), whatever the escapes. Hence, in pieces
 * of VROW points: (1) every point's code, its R as if it were not an
 * escape, X + 16 rounded down to a multiple of 32 (no T needed), and so its
 * escape flag (refused; a zero or subnormal but +0.0 reconstructed
 * as 0; rounding beyond the bound, rare except on values beyond float32's
 * resolution at the bound), independent; (2) the escapes, run by run (the
 * runs from the changes between neighbouring flags, 64 at a time): in a
 * run R = R' + s, so R - T stays that of the point before the run; (3)
 * every bin from P = T - T' + R', independent, 0 for escapes. Same bins,
 * reconstructions and escapes as vvisit point by point. */
#define VROW 256

/* (double)(int64_t)q for |q| < 2^51, in operations that vectorise. */
GZ_VINLINE double vq_to_double(uint64_t q) {
  double s = GZ_RINT_SHIFT, d;
  uint64_t b;
  memcpy(&b, &s, sizeof b);
  b += q;
  memcpy(&d, &b, sizeof d);
  return d - s;
}

/* vvisit's code plus VQ_HALF of v (in *w), its reconstruction when its
 * prediction is congruent to t modulo VQ_BIN (in *r), and whether it is an
 * escape, in operations that vectorise. */
GZ_VINLINE uint64_t vquant(const vctx_t *restrict c, double v, uint64_t t, uint64_t *w,
                           uint64_t *r, const int f64) {
  double sh = v * c->inv_unit + GZ_RINT_SHIFT, rv;
  uint64_t bits, refused, small, far;
  refused = !(fabs(sh - GZ_RINT_SHIFT) <= c->limit); /* NaN, Inf, out of range */
  small = fabs(v) < (f64 ? DBL_MIN : (double)FLT_MIN);
  *w = (uint64_t)gz_rint_code(sh) + VQ_HALF;
  *r = *w - ((*w - t) & (VQ_BIN - 1));
  rv = vq_to_double(*r) * c->unit; /* |r| < 2^51 where not refused */
  if (!f64)
    rv = (double)(float)rv;
  far = !(fabs(v - rv) <= c->eb);
  memcpy(&bits, &v, sizeof bits); /* zeros and subnormals: only +0.0 with R = 0 */
  return refused | (small & ((bits | *r) != 0)) | ((small ^ 1) & far);
}

GZ_VINLINE void vlorenzo_row(vctx_t *restrict c, size_t off, size_t n, size_t roff,
                             size_t boff, size_t rowstep, uint64_t mu, uint64_t mb,
                             const int f64) {
  uint64_t T[VROW], W[VROW], E[VROW], tprev = 0, rprev = 0;
  uint32_t run[VROW + 2]; /* starts and ends of the runs of escapes */
  uint64_t *restrict R = c->R + roff, *restrict u = c->u + off;
  const uint64_t *back = mb ? c->R + boff : R, *up = R - (mu ? rowstep : 0);
  const uint64_t *bu = back - (mu ? rowstep : 0);
  const float *xf = (const float *)c->x + off;
  const double *xd = (const double *)c->x + off;
  uint64_t mub = mu & mb;
  uint8_t *restrict esc = c->esc + off;
  uint32_t nesc = c->nesc;
  for (size_t k0 = 0; k0 < n; k0 += VROW) {
    size_t m = n - k0 < VROW ? n - k0 : VROW, nr;
    for (size_t k = 0; k < m; k++) { /* (1) */
      size_t g = k0 + k;
      T[k] = (up[g] & mu) + (back[g] & mb) - (bu[g] & mub);
      E[k] =
          vquant(c, f64 ? xd[g] : (double)xf[g], 0, &W[k], &R[g], f64); /* T mod 32 = 0 */
    }
    for (size_t k = 0; k < m; k++) /* (the flags as bytes in (1) made it spill) */
      esc[k0 + k] = (uint8_t)E[k];
    nr = gz_chunk2_flag_runs(esc + k0, m, run); /* (2) */
    for (size_t i = 0; i < nr; i += 2) {
      size_t a = run[i], b = run[i + 1];
      uint64_t d = a ? R[k0 + a - 1] - T[a - 1] : rprev - tprev;
      for (size_t k = a; k < b; k++)
        R[k0 + k] = T[k] + d;
      nesc += (uint32_t)(b - a);
      if (!c->runs)
        continue;
      if (c->nruns && c->runs[c->nruns - 1] == off + k0 + a) /* goes on */
        c->runs[c->nruns - 1] = (uint32_t)(off + k0 + b);
      else {
        c->runs[c->nruns++] = (uint32_t)(off + k0 + a);
        c->runs[c->nruns++] = (uint32_t)(off + k0 + b);
      }
    }
    /* (3), escapes' bins 0 by the mask E - 1 (not a store per run after) */
    u[k0] = gz_pred_zigzag((uint64_t)((int64_t)(W[0] - (T[0] - tprev + rprev)) >> 5)) &
            (E[0] - 1);
    for (size_t k = 1; k < m; k++)
      u[k0 + k] =
          gz_pred_zigzag(
              (uint64_t)((int64_t)(W[k] - (T[k] - T[k - 1] + R[k0 + k - 1])) >> 5)) &
          (E[k] - 1);
    tprev = T[m - 1];
    rprev = R[k0 + m - 1];
  }
  c->pos = (uint32_t)(off + n);
  c->nesc = nesc;
}

GZ_VINLINE void vlorenzo(vctx_t *restrict c, const size_t d[3], const int decode,
                         const int f64, const int simd) {
  size_t plane = d[1] * d[2];
  for (size_t i = 0; i < d[0]; i++) {
    for (size_t j = 0; j < d[1]; j++) {
      size_t off = i * plane + j * d[2];
      const uint64_t *cur = c->R + off;
      const uint64_t *up = j ? cur - d[2] : NULL, *back = i ? cur - plane : NULL;
      const uint64_t *bu = i && j ? cur - plane - d[2] : NULL;
      if (!decode && simd) { /* R of two planes in turn */
        vlorenzo_row(c, off, d[2], (i & 1) * plane + j * d[2],
                     (~i & 1) * plane + j * d[2], d[2], j ? ~0ull : 0, i ? ~0ull : 0,
                     f64);
        continue;
      }
      for (size_t k = 0; k < d[2]; k++) {
        uint64_t p = 0;
        if (up)
          p += up[k] - (k ? up[k - 1] : 0);
        if (back)
          p += back[k] - (k ? back[k - 1] : 0);
        if (bu)
          p -= bu[k] - (k ? bu[k - 1] : 0);
        if (k)
          p += cur[k - 1];
        vvisit(c, off + k, p, decode, f64);
      }
    }
  }
}

/* Four points of a line at once where the AVX2 encoder is compiled in
 * (simd: a constant, 1 only in the float32 encoder instantiated for AVX2). */
#ifdef HAVE_AVX2_PATH
#define GZ_VISIT4(c, idx, o, s, mode, along, keep, wide, decode)                         \
  ((decode) ? vvisit4d_f32(c, idx, o, s, mode, along, keep)                              \
            : vvisit4_f32(c, idx, o, s, mode, along, keep, wide))
#define GZ_SWEEP4(c, base, k, end, h) vsweep4_f32(c, base, k, end, h)
#define GZ_SWEEP8(c, base, k, end, h) vsweep8_f32(c, base, k, end, h)
#else
#define GZ_SWEEP8(c, base, k, end, h) (k)
#define GZ_VISIT4(c, idx, o, s, mode, along, keep, wide, decode) ((void)0)
#define GZ_SWEEP4(c, base, k, end, h) (k)
#endif

/* The points k = k0, k0 + s, ... below end of the line at base, predicted
 * by mode (along: the sweep along the line, s = 2o): four at a time when
 * simd (R kept for later sweeps when keep).
 * Returns where it stopped. */
GZ_VINLINE size_t vline(vctx_t *restrict c, size_t base, size_t k, size_t end, size_t s,
                        ptrdiff_t o, int mode, int along, int keep, const int decode,
                        const int f64, const int simd) {
  if (simd)
    for (; k + 3 * s < end; k += 4 * s)
      GZ_VISIT4(c, base + k, o, s, mode, along, keep, s == 2 && k + 7 < end, decode);
  for (; k < end; k += s)
    vvisit(c, base + k, gz_interp_pred(c->R + base + k, o, mode), decode, f64);
  return k;
}

/* The points k, k + 2h, ... below end (k an odd multiple of h) of sweep 2
 * at level h on the row at base of n values (cubic inside, the mode
 * changes near its ends), coded from u[c->pos] on. simd: as vline. */
GZ_VINLINE void vsweep2(vctx_t *restrict c, size_t base, size_t n, size_t h, size_t k,
                        size_t end, const int decode, const int f64, const int simd) {
  size_t step = 2 * h;
  for (; k < end && k < 3 * h; k += step)
    vvisit(c, base + k,
           gz_interp_pred(c->R + base + k, (ptrdiff_t)h, gz_interp_mode(k, h, n)), decode,
           f64);
  if (n > 3 * h) {
    size_t stop = end < n - 3 * h ? end : n - 3 * h;
    if (simd && !decode) {
      if (c->wide)
        k = GZ_SWEEP8(c, base, k, stop, h);
      k = GZ_SWEEP4(c, base, k, stop, h);
    }
    k = vline(c, base, k, stop, step, (ptrdiff_t)h, 2, 1, h > 1, decode, f64, simd);
  }
  for (; k < end; k += step)
    vvisit(c, base + k,
           gz_interp_pred(c->R + base + k, (ptrdiff_t)h, gz_interp_mode(k, h, n)), decode,
           f64);
}

#ifdef HAVE_AVX2_PATH
#define GZ_V __attribute__((target("avx2"))) static inline

/* The even points of p[0..7] in the lane order 0 4 2 6 (one unpack). */
GZ_V __m256i vevens(const uint64_t *p) {
  return _mm256_unpacklo_epi64(
      _mm256_loadu_si256((const __m256i *)(const void *)p),
      _mm256_loadu_si256((const __m256i *)(const void *)(p + 4)));
}

/* Escape flags of the lanes in bad, at idx + 2 j. */
GZ_V void vflag4(vctx_t *restrict c, size_t idx, int bad) {
  for (int j = 0; j < 4; j++)
    if (bad >> j & 1) {
      c->esc[idx + 2 * (size_t)j] = 1;
      c->nesc++;
    }
}

/* What vrow1_f32 (w = 4) and vrow1w_f32 (w = 8) leave of the row at base
 * after their blocks of 2w values up to m: the evens from m on (across),
 * sweep 2's first point and its points from m - 2w + 3 on. */
GZ_V void vrow1_ends(vctx_t *restrict c, size_t base, size_t n, ptrdiff_t o,
                     uint32_t pos1, uint32_t pos2, size_t m, size_t w) {
  c->pos = (uint32_t)(pos1 + m / 2);
  vline(c, base, m, n, 2, o, 2, 0, 1, 0, 0, 1);
  c->pos = pos2;
  vsweep2(c, base, n, 1, 1, 3, 0, 0, 1);
  c->pos = (uint32_t)(pos2 + m / 2 - w + 1);
  vsweep2(c, base, n, 1, m - 2 * w + 3, n, 0, 0, 1);
}

/* Level 1 on the row at base of n >= 16 values, two sweeps at once: its
 * even points predicted across, cubic (mode 2) from the rows at -+o, -+3o
 * (sweep 0 or 1, bins from pos1), eight values at a time from those rows'
 * contiguous values, and the odd points between them along the row (sweep
 * 2, bins from pos2) from those evens in registers. R of the evens is
 * stored when keep (later rows read it); else only where sweep 2 near the
 * row's ends reads it. Bins, reconstructions and escapes are vrow's. */
GZ_V void vrow1_f32(vctx_t *restrict c, size_t base, size_t n, ptrdiff_t o, uint32_t pos1,
                    uint32_t pos2, int keep) {
  const __m256i perm = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const float *x = (const float *)c->x + base;
  uint64_t *R = c->R + base;
  size_t nb = n / 8;
  const vq4_t vq = vq4_consts(c);
  __m256i prev = _mm256_setzero_si256();
  for (size_t b = 0; b < nb; b++) {
    size_t k = 8 * b;
    const uint64_t *q = R + k;
    __m256i a = vevens(q - o), e, t, z;
    __m128 xe =
        _mm256_castps256_ps128(_mm256_permutevar8x32_ps(_mm256_loadu_ps(x + k), perm));
    int bad;
    /* across: (9 (a + b) - a3 - b3 + 8) >> 4, lanes 0 4 2 6 */
    t = _mm256_add_epi64(a, vevens(q + o));
    t = _mm256_add_epi64(_mm256_slli_epi64(t, 3), t);
    t = _mm256_sub_epi64(t, _mm256_add_epi64(vevens(q - 3 * o), vevens(q + 3 * o)));
    t = _mm256_permute4x64_epi64(vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(8)), 4),
                                 0xd8);
    e = vquant4_f32(&vq, t, _mm256_cvtps_pd(xe), &z, &bad);
    _mm256_storeu_si256((__m256i *)(void *)(c->u + pos1 + 4 * b), z);
    if (keep || b == 0 || b + 1 == nb) { /* (sweep 2's ends read them) */
      _mm256_storeu_si256((__m256i *)(void *)q, _mm256_permute4x64_epi64(e, 0x50));
      _mm256_storeu_si256((__m256i *)(void *)(q + 4), _mm256_permute4x64_epi64(e, 0xfa));
    }
    if (bad)
      vflag4(c, base + k, bad);
    if (b) { /* along: the odd points k - 5 ... k + 1 from the evens k - 8 ... k + 6 */
      __m256i bb = _mm256_permute2x128_si256(prev, e, 0x21), a3 = prev;
      __m256i a1 = _mm256_alignr_epi8(bb, prev, 8), b3 = _mm256_alignr_epi8(e, bb, 8);
      __m128 xo = _mm_shuffle_ps(_mm_loadu_ps(x + k - 5), _mm_loadu_ps(x + k - 1),
                                 _MM_SHUFFLE(2, 0, 2, 0));
      t = _mm256_add_epi64(a1, bb);
      t = _mm256_add_epi64(_mm256_slli_epi64(t, 3), t);
      t = _mm256_sub_epi64(t, _mm256_add_epi64(a3, b3));
      t = vsra(_mm256_add_epi64(t, _mm256_set1_epi64x(8)), 4);
      (void)vquant4_f32(&vq, t, _mm256_cvtps_pd(xo), &z, &bad); /* (R: kept by none) */
      _mm256_storeu_si256((__m256i *)(void *)(c->u + pos2 + 4 * b - 3), z);
      if (bad)
        vflag4(c, base + k - 5, bad);
    }
    prev = e;
  }
  vrow1_ends(c, base, n, o, pos1, pos2, 8 * nb, 4);
}

/* The eight evens of p[0..15]. */
GZ_V8 __attribute__((always_inline)) static inline __m512i vevens8(const uint64_t *p) {
  return _mm512_permutex2var_epi64(_mm512_loadu_si512(p),
                                   _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0),
                                   _mm512_loadu_si512(p + 8));
}

/* The eight floats p[0], p[2], ..., p[14]. */
GZ_V8 __attribute__((always_inline)) static inline __m256 vevensf8(const float *p) {
  return _mm256_permutex2var_ps(_mm256_loadu_ps(p),
                                _mm256_set_epi32(15, 13, 11, 9, 6, 4, 2, 0),
                                _mm256_loadu_ps(p + 7));
}

/* Escape flags at f[2j] of the lanes j not in ok; returns their count. */
GZ_V8 __attribute__((always_inline)) static inline uint32_t vflag8(uint8_t *f,
                                                                   __mmask8 ok) {
  unsigned bad = (unsigned)(uint8_t)~ok;
  if (bad)
    _mm_mask_storeu_epi8(f, (__mmask16)_pdep_u32(bad, 0x5555), _mm_set1_epi8(1));
  return (uint32_t)__builtin_popcount(bad);
}

/* vrow1_f32 sixteen values at a time with AVX-512 (gz_chunk2_simd level
 * 2), for rows of n >= 16: eight evens across, then the eight odd points
 * k - 13 ... k + 1 along from the evens k - 16 ... k + 14 in registers; the
 * same double operations and wrapping int64 arithmetic (vquant8_f32), so
 * the same bins, reconstructions and escapes as vrow1_f32 and vrow. */
GZ_V8 static void vrow1w_f32(vctx_t *restrict c, size_t base, size_t n, ptrdiff_t o,
                             uint32_t pos1, uint32_t pos2, int keep) {
  const __m512i dup_lo = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
  const __m512i dup_hi = _mm512_set_epi64(7, 7, 6, 6, 5, 5, 4, 4);
  const __m512i eight = _mm512_set1_epi64(8);
  const float *x = (const float *)c->x + base;
  uint64_t *R = c->R + base;
  uint8_t *esc = c->esc + base;
  uint32_t nesc = c->nesc;
  size_t nb = n / 16;
  const vq8_t qc = vq8_consts(c);
  __m512i prev = _mm512_setzero_si512();
  for (size_t b = 0; b < nb; b++) {
    size_t k = 16 * b;
    const uint64_t *q = R + k;
    __m512i t, e, z;
    __mmask8 ok;
    /* across: (9 (a + b) - a3 - b3 + 8) >> 4 */
    t = _mm512_add_epi64(vevens8(q - o), vevens8(q + o));
    t = _mm512_add_epi64(_mm512_slli_epi64(t, 3), t);
    t = _mm512_sub_epi64(t, _mm512_add_epi64(vevens8(q - 3 * o), vevens8(q + 3 * o)));
    t = _mm512_srai_epi64(_mm512_add_epi64(t, eight), 4);
    e = vquant8_f32(&qc, t, vevensf8(x + k), &z, &ok);
    e = _mm512_mask_blend_epi64(ok, t, e);
    _mm512_storeu_si512(c->u + pos1 + 8 * b, z);
    if (keep || b == 0 || b + 1 == nb) { /* (sweep 2's ends read them) */
      _mm512_storeu_si512(R + k, _mm512_permutexvar_epi64(dup_lo, e));
      _mm512_storeu_si512(R + k + 8, _mm512_permutexvar_epi64(dup_hi, e));
    }
    nesc += vflag8(esc + k, ok);
    if (b) { /* along: the odd points k - 13 ... k + 1, neighbours at -3, -1, 1, 3 */
      t = _mm512_add_epi64(_mm512_alignr_epi64(e, prev, 1),
                           _mm512_alignr_epi64(e, prev, 2));
      t = _mm512_add_epi64(_mm512_slli_epi64(t, 3), t);
      t = _mm512_sub_epi64(t, _mm512_add_epi64(prev, _mm512_alignr_epi64(e, prev, 3)));
      t = _mm512_srai_epi64(_mm512_add_epi64(t, eight), 4);
      (void)vquant8_f32(&qc, t, vevensf8(x + k - 13), &z, &ok); /* (R: kept by none) */
      _mm512_storeu_si512(c->u + pos2 + 8 * b - 7, z);
      nesc += vflag8(esc + k - 13, ok);
    }
    prev = e;
  }
  c->nesc = nesc;
  vrow1_ends(c, base, n, o, pos1, pos2, 16 * nb, 8);
}
#undef GZ_V8
#undef GZ_V
#endif

#ifdef HAVE_AVX2_PATH
#define GZ_ROW1(c, base, n, o, pos1, pos2, keep)                                         \
  ((c)->wide ? vrow1w_f32(c, base, n, o, pos1, pos2, keep)                               \
             : vrow1_f32(c, base, n, o, pos1, pos2, keep))
#else
#define GZ_ROW1(c, base, n, o, pos1, pos2, keep) ((void)0)
#endif

/* One row of sweep a at level h (pred_interp.c's order): the points of row
 * (i, j) whose coordinate a is an odd multiple of h, the later axes at
 * multiples of 2h, coded from u[pos]. simd: as vline. */
GZ_VINLINE void vrow(vctx_t *restrict c, const size_t d[3], size_t h, int a, size_t i,
                     size_t j, uint32_t pos, const int decode, const int f64,
                     const int simd) {
  size_t base = (i * d[1] + j) * d[2], step = 2 * h;
  ptrdiff_t o = (ptrdiff_t)(h * (a == 0 ? d[1] * d[2] : d[2]));
  int mode;
  c->pos = pos;
  if (a == 2) {
    vsweep2(c, base, d[2], h, h, d[2], decode, f64, simd);
    return;
  }
  /* across rows: one mode for the whole row */
  mode = gz_interp_mode(a == 0 ? i : j, h, d[a]);
  if (mode == 2)
    vline(c, base, 0, d[2], step, o, 2, 0, 1, decode, f64, simd);
  else
    vline(c, base, 0, d[2], step, o, mode, 0, 1, decode, f64, simd);
}

/* Ask for the cache lines of p[0, bytes) (write: to be written). */
GZ_VINLINE void vfetch(const void *p, size_t bytes, const int write) {
  for (size_t b = 0; b < bytes; b += 64)
    if (write)
      __builtin_prefetch((const char *)p + b, 1, 3);
    else
      __builtin_prefetch((const char *)p + b, 0, 3);
}

/* A line (1-D box) in blocks of VBLOCK values for the levels below
 * VBLOCK / 2, as a wavefront: at step t, level h codes block t - l(h)
 * (l = 0 for VBLOCK / 4, one more per finer level). Its points read
 * points of coarser levels at most 3h <= VBLOCK away, so in this block or
 * the next, which the coarser level coded a step earlier; their places in
 * u are computed from k, so the stream is the same. Level by level, each
 * finer level went through the whole chunk (16 MB of R at 2^21 values) and
 * the sparse ones read a cache line per point. */
#define VBLOCK 4096
#define VBLOCK_AHEAD 2
#define VBLOCK_LEVELS 11 /* h = VBLOCK / 4, ..., 2, 1 */

GZ_VINLINE void vline_levels(vctx_t *restrict c, size_t n, const int decode,
                             const int f64, const int simd) {
  uint32_t pos[VBLOCK_LEVELS], last;
  size_t nb = (n + VBLOCK - 1) / VBLOCK;
  int queue = simd && !decode; /* vsweep4_f32 and vsweep8_f32 ask as they go */
  for (int l = 0; l < VBLOCK_LEVELS; l++) { /* where each level's bins start */
    size_t h = (size_t)VBLOCK / 4 >> l;
    pos[l] = c->pos;
    c->pos = (uint32_t)(c->pos + (n + h - 1) / (2 * h));
  }
  last = c->pos;
  for (size_t t = 0; t < nb + VBLOCK_LEVELS - 1; t++) {
    if (queue) { /* what the last step did not ask for */
      vfetch(c->ahead_x, (size_t)c->nahead_x * 64, 0);
      vfetch(c->ahead_r, (size_t)c->nahead_r * 64, 1);
      c->nahead_x = c->nahead_r = 0;
    }
    if (t + VBLOCK_AHEAD < nb) { /* the block the coarsest level codes next */
      size_t first = (t + VBLOCK_AHEAD) * VBLOCK, elem = f64 ? 8 : 4;
      size_t m = n - first < VBLOCK ? n - first : VBLOCK;
      if (queue) { /* spread over the finest sweep, its loads overlap these */
        c->ahead_x = (const char *)c->x + first * elem;
        c->ahead_r = (const char *)(c->R + first);
        c->nahead_x = (uint32_t)((m * elem + 63) / 64);
        c->nahead_r = (uint32_t)((m * sizeof *c->R + 63) / 64);
      } else {
        if (decode)
          vfetch((char *)c->out + first * elem, m * elem, 1);
        else
          vfetch((const char *)c->x + first * elem, m * elem, 0);
        vfetch(c->R + first, m * sizeof *c->R, 1);
      }
    }
    for (int l = 0; l < VBLOCK_LEVELS; l++) {
      size_t h = (size_t)VBLOCK / 4 >> l, b = t - (size_t)l, k0 = b * VBLOCK;
      size_t k1 = n - k0 < VBLOCK ? n : k0 + VBLOCK;
      if (t < (size_t)l || b >= nb)
        continue;
      c->pos = pos[l] + (uint32_t)(k0 / (2 * h));
      vsweep2(c, 0, n, h, k0 + h, k1, decode, f64, simd);
    }
  }
  c->pos = last;
}

/* Ask for row t of plane i (values, or decoded values) and, when sweep 0
 * codes that row, row t of planes i -+ h, which it reads (R): a row's
 * first lines were waiting on memory (smooth field's chunks: 0.9x the time
 * per value with these, 16 x 256 x 512 values). */
GZ_VINLINE void vfetch_row(vctx_t *restrict c, const size_t d[3], size_t h, size_t i,
                           size_t t, const int decode, const int f64) {
  size_t elem = f64 ? 8 : 4, row = (i * d[1] + t) * d[2], plane = h * d[1] * d[2];
  if (decode)
    vfetch((char *)c->out + row * elem, d[2] * elem, 1);
  else
    vfetch((const char *)c->x + row * elem, d[2] * elem, 0);
  if ((i / h) & 1 && !((t / h) & 1)) {
    vfetch(c->R + row - plane, d[2] * sizeof *c->R, 0);
    if (i + h < d[0])
      vfetch(c->R + row + plane, d[2] * sizeof *c->R, 0);
  }
}

/* Level h, plane by plane and row by row instead of sweep by sweep (the
 * points of one sweep are independent, and their places in u are computed
 * from their coordinates, so the stream is the same): everything a point
 * of plane i reads at this level is on plane i itself (sweeps 1 and 2:
 * rows that sweeps 0 and 1 code earlier on the plane) or was coded at an
 * earlier level (sweep 0: planes i -+ h, i -+ 3h). Row j's sweep 1 needs
 * rows j + h and j + 3h from sweep 0, so it runs three rows behind it.
 * Sweep by sweep, each sweep went through the whole chunk's R (16 MB at
 * 2^21 values) and waited on memory; here a plane's rows are reused while
 * in cache. */
GZ_VINLINE void vlevel(vctx_t *restrict c, const size_t d[3], size_t h, const int decode,
                       const int f64, const int simd) {
  /* points per row and rows per plane of each sweep (0 when it is empty) */
  size_t nk02 = (d[2] + 2 * h - 1) / (2 * h), nk2 = (d[2] + h - 1) / (2 * h);
  size_t nj0 = (d[1] + 2 * h - 1) / (2 * h), nj1 = (d[1] + h - 1) / (2 * h);
  size_t nj2 = (d[1] + h - 1) / h, ni0 = (d[0] + h - 1) / (2 * h);
  uint32_t p0 = c->pos, p1 = (uint32_t)(p0 + ni0 * nj0 * nk02);
  uint32_t p2 = (uint32_t)(p1 + (d[0] + h - 1) / h * nj1 * nk02);
  /* level 1 in the AVX2 encoder: the rows whose across mode is cubic (rows
   * of 16 values or more) code their sweep 2 with sweep 0 or 1 (vrow1_f32) */
  int fuse = simd && !decode && h == 1 && d[2] >= 16;
  for (size_t i = 0; i < d[0]; i += h) {
    int odd_i = (i / h) & 1, fuse0 = fuse && odd_i && gz_interp_mode(i, 1, d[0]) == 2;
    for (size_t t = 0; t < d[1] + 3 * h; t += h) {
      /* row j = t - 3h, wrapping past d[1] while t < 3h */
      size_t j = t - 3 * h;
      if (t + h < d[1]) /* what the next step reads first */
        vfetch_row(c, d, h, i, t + h, decode, f64);
      if (fuse0 && t < d[1] && !(t & 1)) /* sweeps 0 and 2 on row t */
        GZ_ROW1(c, (i * d[1] + t) * d[2], d[2], (ptrdiff_t)(d[1] * d[2]),
                (uint32_t)(p0 + (i / 2 * nj0 + t / 2) * nk02),
                (uint32_t)(p2 + (i * nj2 + t) * nk2), 1);
      else if (odd_i && t < d[1] && !((t / h) & 1)) /* sweep 0 on row t */
        vrow(c, d, h, 0, i, t, (uint32_t)(p0 + ((i / h) / 2 * nj0 + t / h / 2) * nk02),
             decode, f64, simd);
      if (fuse && j < d[1] && (j & 1) && gz_interp_mode(j, 1, d[1]) == 2)
        GZ_ROW1(c, (i * d[1] + j) * d[2], d[2], (ptrdiff_t)d[2],
                (uint32_t)(p1 + (i * nj1 + j / 2) * nk02),
                (uint32_t)(p2 + (i * nj2 + j) * nk2), 0); /* sweeps 1 and 2 on row j */
      else {
        if (j < d[1] && ((j / h) & 1)) /* sweep 1 on row j: rows j + h, j + 3h are done */
          vrow(c, d, h, 1, i, j, (uint32_t)(p1 + ((i / h) * nj1 + j / h / 2) * nk02),
               decode, f64, simd);
        if (j < d[1] && nk2 && !(fuse0 && !(j & 1))) /* sweep 2 on row j */
          vrow(c, d, h, 2, i, j, (uint32_t)(p2 + ((i / h) * nj2 + j / h) * nk2), decode,
               f64, simd);
      }
    }
  }
  c->pos = (uint32_t)(p2 + (d[0] + h - 1) / h * nj2 * nk2);
}

GZ_VINLINE void vinterp(vctx_t *restrict c, const size_t d[3], const int decode,
                        const int f64, const int simd) {
  size_t longest = d[0], top = 1;
  if (d[1] > longest)
    longest = d[1];
  if (d[2] > longest)
    longest = d[2];
  if (longest == 0)
    return;
  vvisit(c, 0, 0, decode, f64); /* the origin, predicted by 0 */
  while (top * 2 < longest)
    top *= 2;
  for (size_t h = top; h >= 1 && longest > 1; h /= 2) {
    if (d[0] * d[1] == 1 && h < VBLOCK / 2) {
      vline_levels(c, d[2], decode, f64, simd);
      break;
    }
    vlevel(c, d, h, decode, f64, simd);
  }
}

#ifdef HAVE_AVX2_PATH
/* QLORENZO's float32 encoder in vectors of eight doubles (gz_chunk2_simd
 * level 2): the same C as the AVX2 instance's, so the same IEEE operations
 * (no contraction in ISO C mode), bins and escapes; ERSST's compress 1.07x
 * faster than with the AVX2 instance. */
#define GZ_AVX512 "avx2,avx512f,avx512vl,avx512dq,avx512bw,prefer-vector-width=512"
__attribute__((target(GZ_AVX512))) static void encode_f32_avx512(vctx_t *restrict c,
                                                                 const size_t d[3]) {
  vlorenzo(c, d, 0, 0, 1);
}
#undef GZ_AVX512
#endif

#define GZ_VINSTANCE(name, decode, f64, simd)                                            \
  static void name(vctx_t *restrict c, int kind, const size_t d[3]) {                    \
    if (kind == GZ_VPRED_INTERP)                                                         \
      vinterp(c, d, decode, f64, simd);                                                  \
    else                                                                                 \
      vlorenzo(c, d, decode, f64, simd);                                                 \
  }
GZ_VINSTANCE(encode_f32, 0, 0, 0)
GZ_VINSTANCE(encode_f64, 0, 1, 0)
GZ_VINSTANCE(decode_f32, 1, 0, 0)
GZ_VINSTANCE(decode_f64, 1, 1, 0)
#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) GZ_VINSTANCE(encode_f32_avx2, 0, 0, 1)
    __attribute__((target("avx2"))) GZ_VINSTANCE(decode_f32_avx2, 1, 0, 1)
#endif

        size_t gz_vpred_encode(int kind, int f64, const void *x, const size_t d[3],
                               double eb, uint64_t *R, uint64_t *u, uint8_t *esc,
                               uint32_t *runs, size_t *nruns) {
  vctx_t c;
  memset(&c, 0, sizeof c);
  c.x = x;
  c.R = R;
  c.u = u;
  c.esc = esc;
  c.runs = runs;
  if (nruns)
    *nruns = SIZE_MAX;
  c.eb = eb;
  c.limit = GZ_CODE_LIMIT;
  gz_vq_grid(eb, &c.unit, &c.inv_unit);
#ifdef HAVE_AVX2_PATH
  if (!f64 && gz_chunk2_simd(-1)) {
    if (kind != GZ_VPRED_LORENZO) /* vlorenzo_row writes every flag */
      memset(esc, 0, d[0] * d[1] * d[2]);
    c.wide = gz_chunk2_simd(-1) > 1;
    if (kind == GZ_VPRED_LORENZO && c.wide)
      encode_f32_avx512(&c, d);
    else
      encode_f32_avx2(&c, kind, d);
    if (runs && nruns && kind == GZ_VPRED_LORENZO)
      *nruns = c.nruns;
    return c.nesc;
  }
#endif
  memset(esc, 0, d[0] * d[1] * d[2]);
  (f64 ? encode_f64 : encode_f32)(&c, kind, d);
  return c.nesc;
}

void gz_vpred_decode(int kind, int f64, const uint64_t *u, const size_t d[3], double eb,
                     uint64_t *R, void *out) {
  vctx_t c;
  memset(&c, 0, sizeof c);
  c.out = out;
  c.R = R;
  c.u = (uint64_t *)(uintptr_t)u;
  c.eb = eb;
  gz_vq_grid(eb, &c.unit, &c.inv_unit);
#ifdef HAVE_AVX2_PATH
  if (!f64 && gz_chunk2_simd(-1)) {
    decode_f32_avx2(&c, kind, d);
    return;
  }
#endif
  (f64 ? decode_f64 : decode_f32)(&c, kind, d);
}
