/*
 * cast.c - the casting codec of data movement under a pointwise relative
 * bound (GZ_EB_PWREL): values travel in a narrower floating-point format,
 * as in the lossy all-to-all of distributed FFTs (float64 sent as float32,
 * or either sent as bfloat16 / float16).
 *
 * Rounding to nearest (ties to even) to a format of p significant bits moves
 * a value x that is normal in that format by at most half an ulp, 2^-p |x|:
 * float32 (p = 24), float16 (p = 11), bfloat16 (p = 8). The narrowest format
 * whose 2^-p is within the caller's bound is used (bfloat16 before float16:
 * same size, wider range). A value that would leave the format's normal
 * range (overflow, or the subnormals where the relative bound fails) and a
 * NaN travel verbatim ("escapes"); zeros and infinities are exact in every
 * format. Rounding goes straight from the input type (never through float32
 * on the way to a 16-bit format), so there is one rounding.
 *
 * Block layout (little-endian, as the hosts; n values of the input type,
 * esz bytes each), written in one pass:
 *   u64 k        number of escapes, or UINT64_MAX: the block is raw (the
 *                cast would not be smaller), n values verbatim follow;
 *   n x tsize    the values in the narrow format (0 at escape positions);
 *   k x (u64 position, esz value)   the escapes, positions increasing.
 */
#include "codec/codec.h"

#include "gz_block_walk.h" /* gz_put_u64le, gz_get_u64le */

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

static const struct {
  int bytes; /* size on the wire */
  int man;   /* explicit significand bits (p - 1) */
  int bias;  /* exponent bias; the exponent field has ebits bits */
  int ebits;
} formats[] = {
    [GZ_CAST_F32] = {4, 23, 127, 8},
    [GZ_CAST_F16] = {2, 10, 15, 5},
    [GZ_CAST_BF16] = {2, 7, 127, 8},
};

gz_cast_t gz_cast_pick(gz_dtype_t dtype, double rel) {
  if (!(rel > 0) || !isfinite(rel))
    return GZ_CAST_NONE;
  if (rel >= ldexp(1.0, -8))
    return GZ_CAST_BF16;
  if (rel >= ldexp(1.0, -11))
    return GZ_CAST_F16;
  if (rel >= ldexp(1.0, -24) && dtype == GZ_FLOAT64)
    return GZ_CAST_F32;
  return GZ_CAST_NONE;
}

double gz_cast_unit(gz_cast_t cast) {
  return cast == GZ_CAST_NONE ? 0.0 : ldexp(1.0, -(formats[cast].man + 1));
}

const char *gz_cast_name(gz_cast_t cast) {
  static const char *const names[] = {"none", "float32", "float16", "bfloat16"};
  return (int)cast >= 0 && cast <= GZ_CAST_BF16 ? names[cast] : "none";
}

size_t gz_cast_bound(gz_dtype_t dtype, size_t n) { return 8 + n * gz_dtype_size(dtype); }

/* x rounded to the format; returns 0 and sets *bits, or -1 when x must
 * travel verbatim. */
static int narrow(double x, gz_cast_t cast, uint32_t *bits) {
  int man = formats[cast].man, bias = formats[cast].bias;
  int emax = (1 << formats[cast].ebits) - 2; /* largest normal exponent field */
  uint64_t b, sign, lsb;
  int e;
  memcpy(&b, &x, 8);
  sign = b >> 63;
  b &= ~((uint64_t)1 << 63);
  if (b == 0) { /* +-0 */
    *bits = (uint32_t)(sign << (formats[cast].bytes * 8 - 1));
    return 0;
  }
  if (b == (uint64_t)0x7ff << 52) { /* +-inf */
    *bits =
        (uint32_t)(sign << (formats[cast].bytes * 8 - 1)) | ((uint32_t)(emax + 1) << man);
    return 0;
  }
  if (b > (uint64_t)0x7ff << 52 || b < (uint64_t)1 << 52)
    return -1; /* NaN (payload kept), double subnormal */
  /* round the significand to man bits, ties to even (a carry may bump the
   * exponent, which is what rounding up to the next binade means) */
  lsb = (b >> (52 - man)) & 1;
  b += ((uint64_t)1 << (51 - man)) - 1 + lsb;
  b >>= 52 - man;
  e = (int)(b >> man) - 1023 + bias; /* the format's exponent field */
  if (e < 1 || e > emax)
    return -1; /* subnormal or overflow in the narrow format */
  *bits = (uint32_t)(sign << (formats[cast].bytes * 8 - 1)) | ((uint32_t)e << man) |
          (uint32_t)(b & (((uint64_t)1 << man) - 1));
  return 0;
}

static double widen(uint32_t bits, gz_cast_t cast) {
  int man = formats[cast].man, bias = formats[cast].bias,
      top = formats[cast].bytes * 8 - 1;
  int emax = (1 << formats[cast].ebits) - 2;
  uint64_t sign = (uint64_t)(bits >> top) & 1, e = (bits >> man) & (uint32_t)(emax + 1),
           m = bits & ((1u << man) - 1), b;
  double x;
  if (e == 0)
    b = 0; /* only zeros are written with a zero exponent */
  else if (e == (uint64_t)emax + 1)
    b = (uint64_t)0x7ff << 52;
  else
    b = ((e - (uint64_t)bias + 1023) << 52) | (m << (52 - man));
  b |= sign << 63;
  memcpy(&x, &b, 8);
  return x;
}

/* Element i of the cast of values of type T into the narrow type N: its
 * narrow bits, or an escape appended (positions increasing); the function
 * returns SIZE_MAX when the escapes would make the block no smaller than
 * raw. The portable loop and the AVX2 loop's fallback both use it. */
#define GZ_CAST_ONE(T, N, i)                                                             \
  do {                                                                                   \
    T v;                                                                                 \
    N w;                                                                                 \
    uint32_t bits = 0;                                                                   \
    memcpy(&v, (const char *)in + (i) * sizeof(T), sizeof(T));                           \
    if (narrow((double)v, cast, &bits) != 0) {                                           \
      uint8_t *rec = esc + k * (8 + sizeof(T));                                          \
      if (rec + 8 + sizeof(T) > end)                                                     \
        return SIZE_MAX; /* no smaller than raw: stop */                                 \
      gz_put_u64le(rec, (i));                                                            \
      memcpy(rec + 8, &v, sizeof(T));                                                    \
      k++;                                                                               \
    }                                                                                    \
    w = (N)bits;                                                                         \
    memcpy(narrow_at + (i) * sizeof(N), &w, sizeof(N));                                  \
  } while (0)

/* The cast of n values in one pass, escapes appended after the narrow
 * values; returns the escape count. One function per (element, narrow)
 * type pair, so that each loop compiles for its types. */
#define GZ_CAST_LOOP(name, T, N)                                                         \
  static size_t name(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,       \
                     uint8_t *esc, const uint8_t *end) {                                 \
    size_t k = 0;                                                                        \
    for (size_t i = 0; i < n; i++)                                                       \
      GZ_CAST_ONE(T, N, i);                                                              \
    return k;                                                                            \
  }
GZ_CAST_LOOP(cast_f64_u32, double, uint32_t)
GZ_CAST_LOOP(cast_f64_u16, double, uint16_t)
GZ_CAST_LOOP(cast_f32_u16, float, uint16_t)

/* Widen n narrow values into out (dtype): the escapes are patched after. */
static void widen_all(gz_dtype_t dtype, gz_cast_t cast, const uint8_t *in, size_t n,
                      void *out) {
  size_t tsize = (size_t)formats[cast].bytes;
  for (size_t i = 0; i < n; i++) {
    uint32_t bits = 0;
    double x;
    memcpy(&bits, in + i * tsize, tsize); /* little-endian */
    x = widen(bits, cast);
    if (dtype == GZ_FLOAT32) {
      float f = (float)x; /* exact: the narrow formats fit in float32 */
      memcpy((char *)out + 4 * i, &f, 4);
    } else {
      memcpy((char *)out + 8 * i, &x, 8);
    }
  }
}

#ifdef HAVE_AVX2_PATH
/* narrow() on four doubles' bits b: the narrow bits in each 64-bit lane,
 * and in *ok the lanes narrow() would round the same way (normal values
 * that stay normal, and zeros); the others (infinities, NaN, subnormals,
 * escapes) take narrow() itself. */
__attribute__((target("avx2"))) static inline __m256i narrow4(__m256i b, gz_cast_t cast,
                                                              __m256i *ok) {
  const int man = formats[cast].man, shift = 52 - man;
  const int emax = (1 << formats[cast].ebits) - 2;
  const __m256i abs_mask = _mm256_set1_epi64x(INT64_MAX), one = _mm256_set1_epi64x(1);
  const __m256i half = _mm256_set1_epi64x(((int64_t)1 << (shift - 1)) - 1);
  const __m256i rebias = _mm256_set1_epi64x((int64_t)(1023 - formats[cast].bias) << man);
  const __m256i min_normal = _mm256_set1_epi64x(((int64_t)1 << 52) - 1); /* a > this */
  const __m256i inf = _mm256_set1_epi64x((int64_t)0x7ff << 52);          /* a < this */
  const __m256i zero = _mm256_setzero_si256();
  __m256i a = _mm256_and_si256(b, abs_mask), sign, r, e, normal, fits, is_zero;
  sign = _mm256_slli_epi64(_mm256_srli_epi64(b, 63), formats[cast].bytes * 8 - 1);
  /* round to man bits, ties to even, as narrow() */
  r = _mm256_add_epi64(
      a, _mm256_add_epi64(half, _mm256_and_si256(_mm256_srli_epi64(a, shift), one)));
  r = _mm256_srli_epi64(r, shift);
  e = _mm256_sub_epi64(_mm256_srli_epi64(r, man),
                       _mm256_set1_epi64x(1023 - formats[cast].bias));
  normal =
      _mm256_and_si256(_mm256_cmpgt_epi64(a, min_normal), _mm256_cmpgt_epi64(inf, a));
  fits = _mm256_and_si256(_mm256_cmpgt_epi64(e, zero),
                          _mm256_cmpgt_epi64(_mm256_set1_epi64x(emax + 1), e));
  is_zero = _mm256_cmpeq_epi64(a, zero);
  *ok = _mm256_or_si256(_mm256_and_si256(normal, fits), is_zero);
  r = _mm256_andnot_si256(is_zero, _mm256_sub_epi64(r, rebias));
  return _mm256_or_si256(r, sign);
}

/* The four 64-bit lanes' low 32 bits, in order. */
__attribute__((target("avx2"))) static inline __m128i lanes32(__m256i v) {
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}

/* The AVX2 cast: four values at a time; a group with a lane narrow4 does
 * not cover goes through GZ_CAST_ONE, so the bytes are the portable ones. */
#define GZ_CAST_AVX2(T, N, LOAD, STORE)                                                  \
  size_t k = 0, i = 0;                                                                   \
  for (; i + 4 <= n; i += 4) {                                                           \
    __m256i ok, nb = narrow4(LOAD, cast, &ok);                                           \
    if (_mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 15) {                             \
      STORE;                                                                             \
      continue;                                                                          \
    }                                                                                    \
    for (size_t j = i; j < i + 4; j++)                                                   \
      GZ_CAST_ONE(T, N, j);                                                              \
  }                                                                                      \
  for (; i < n; i++)                                                                     \
    GZ_CAST_ONE(T, N, i);                                                                \
  return k;

__attribute__((target("avx2"))) static size_t
cast_f64_u32_avx2(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                  uint8_t *esc, const uint8_t *end) {
  GZ_CAST_AVX2(double, uint32_t,
               _mm256_loadu_si256((const __m256i *)((const double *)in + i)),
               _mm_storeu_si128((__m128i *)(narrow_at + 4 * i), lanes32(nb)))
}
__attribute__((target("avx2"))) static size_t
cast_f64_u16_avx2(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                  uint8_t *esc, const uint8_t *end) {
  GZ_CAST_AVX2(double, uint16_t,
               _mm256_loadu_si256((const __m256i *)((const double *)in + i)),
               _mm_storel_epi64((__m128i *)(narrow_at + 2 * i),
                                _mm_packus_epi32(lanes32(nb), lanes32(nb))))
}
__attribute__((target("avx2"))) static size_t
cast_f32_u16_avx2(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                  uint8_t *esc, const uint8_t *end) {
  GZ_CAST_AVX2(float, uint16_t,
               _mm256_castpd_si256(_mm256_cvtps_pd(_mm_loadu_ps((const float *)in + i))),
               _mm_storel_epi64((__m128i *)(narrow_at + 2 * i),
                                _mm_packus_epi32(lanes32(nb), lanes32(nb))))
}

/* widen() on four narrow values (zero-extended into 64-bit lanes). */
__attribute__((target("avx2"))) static inline __m256i widen4(__m256i v, gz_cast_t cast) {
  const int man = formats[cast].man, top = formats[cast].bytes * 8 - 1;
  const int emax = (1 << formats[cast].ebits) - 2;
  const __m256i mag_mask = _mm256_set1_epi64x(((int64_t)1 << top) - 1);
  __m256i sign = _mm256_slli_epi64(_mm256_srli_epi64(v, top), 63);
  __m256i m = _mm256_and_si256(v, mag_mask), e = _mm256_srli_epi64(m, man), b;
  __m256i is_zero = _mm256_cmpeq_epi64(e, _mm256_setzero_si256());
  __m256i is_inf = _mm256_cmpeq_epi64(e, _mm256_set1_epi64x(emax + 1));
  b = _mm256_slli_epi64(
      _mm256_add_epi64(m,
                       _mm256_set1_epi64x((int64_t)(1023 - formats[cast].bias) << man)),
      52 - man);
  b = _mm256_blendv_epi8(b, _mm256_set1_epi64x((int64_t)0x7ff << 52), is_inf);
  b = _mm256_andnot_si256(is_zero, b);
  return _mm256_or_si256(b, sign);
}

__attribute__((target("avx2"))) static void
widen_all_avx2(gz_dtype_t dtype, gz_cast_t cast, const uint8_t *in, size_t n, void *out) {
  size_t tsize = (size_t)formats[cast].bytes, i = 0;
  for (; i + 4 <= n; i += 4) {
    __m128i raw = tsize == 4 ? _mm_loadu_si128((const __m128i *)(in + 4 * i))
                             : _mm_loadl_epi64((const __m128i *)(in + 2 * i));
    __m256i b = widen4(
        tsize == 4 ? _mm256_cvtepu32_epi64(raw) : _mm256_cvtepu16_epi64(raw), cast);
    if (dtype == GZ_FLOAT32) /* exact: the narrow formats fit in float32 */
      _mm_storeu_ps((float *)out + i, _mm256_cvtpd_ps(_mm256_castsi256_pd(b)));
    else
      _mm256_storeu_si256((__m256i *)((double *)out + i), b);
  }
  widen_all(dtype, cast, in + i * tsize, n - i, (char *)out + i * gz_dtype_size(dtype));
}
#endif

static int use_avx2(int isa) {
#ifdef HAVE_AVX2_PATH
  return (isa == GZ_ISA_AUTO || isa == GZ_ISA_AVX2) && gz_cpu_avx2();
#else
  (void)isa;
  return 0;
#endif
}

gz_result_t gz_cast_encode_isa(int isa, gz_dtype_t dtype, gz_cast_t cast, const void *in,
                               size_t n, uint8_t *out, size_t cap, size_t *size) {
  size_t esz = gz_dtype_size(dtype), raw = gz_cast_bound(dtype, n), k = SIZE_MAX, tsize;
  if (!esz || cast <= GZ_CAST_NONE || cast > GZ_CAST_BF16 || (n && (!in || !out)) ||
      !size || cap < raw || (dtype == GZ_FLOAT32 && cast == GZ_CAST_F32))
    return GZ_ERR_ARG;
  tsize = (size_t)formats[cast].bytes;
  if (8 + n * tsize < raw) {
    uint8_t *narrow_at = out + 8, *esc = out + 8 + n * tsize, *end = out + raw - 1;
    /* a float32 input's NaN or subnormal is caught as a double too: NaN
     * stays NaN, a float32 subnormal is below every narrow format's normal
     * range */
#ifdef HAVE_AVX2_PATH
    if (use_avx2(isa))
      k = dtype == GZ_FLOAT32 ? cast_f32_u16_avx2(in, n, cast, narrow_at, esc, end)
          : tsize == 4        ? cast_f64_u32_avx2(in, n, cast, narrow_at, esc, end)
                              : cast_f64_u16_avx2(in, n, cast, narrow_at, esc, end);
    else
#endif
      k = dtype == GZ_FLOAT32 ? cast_f32_u16(in, n, cast, narrow_at, esc, end)
          : tsize == 4        ? cast_f64_u32(in, n, cast, narrow_at, esc, end)
                              : cast_f64_u16(in, n, cast, narrow_at, esc, end);
  }
  if (k == SIZE_MAX) { /* the cast would be no smaller than the values: raw */
    gz_put_u64le(out, UINT64_MAX);
    if (n)
      memcpy(out + 8, in, n * esz);
    *size = raw;
    return GZ_OK;
  }
  gz_put_u64le(out, k);
  *size = 8 + n * tsize + k * (8 + esz);
  return GZ_OK;
}

gz_result_t gz_cast_encode(gz_dtype_t dtype, gz_cast_t cast, const void *in, size_t n,
                           uint8_t *out, size_t cap, size_t *size) {
  return gz_cast_encode_isa(GZ_ISA_AUTO, dtype, cast, in, n, out, cap, size);
}

gz_result_t gz_cast_decode_isa(int isa, gz_dtype_t dtype, gz_cast_t cast,
                               const uint8_t *in, size_t size, void *out, size_t n) {
  size_t esz = gz_dtype_size(dtype), tsize, k;
  const uint8_t *esc;
  if (!esz || cast <= GZ_CAST_NONE || cast > GZ_CAST_BF16 || (n && !out) || !in)
    return GZ_ERR_ARG;
  if (size < 8)
    return GZ_ERR_CORRUPT;
  k = gz_get_u64le(in);
  if (k == UINT64_MAX) {
    if (size != 8 + n * esz)
      return GZ_ERR_CORRUPT;
    if (n)
      memcpy(out, in + 8, n * esz);
    return GZ_OK;
  }
  tsize = (size_t)formats[cast].bytes;
  if (k > n || size != 8 + n * tsize + k * (8 + esz))
    return GZ_ERR_CORRUPT;
#ifdef HAVE_AVX2_PATH
  if (use_avx2(isa))
    widen_all_avx2(dtype, cast, in + 8, n, out);
  else
#endif
    widen_all(dtype, cast, in + 8, n, out);
  esc = in + 8 + n * tsize;
  for (size_t j = 0; j < k; j++) {
    size_t at = (size_t)gz_get_u64le(esc + j * (8 + esz));
    if (at >= n || (j > 0 && at <= (size_t)gz_get_u64le(esc + (j - 1) * (8 + esz))))
      return GZ_ERR_CORRUPT;
    memcpy((char *)out + at * esz, esc + j * (8 + esz) + 8, esz);
  }
  return GZ_OK;
}

gz_result_t gz_cast_decode(gz_dtype_t dtype, gz_cast_t cast, const uint8_t *in,
                           size_t size, void *out, size_t n) {
  return gz_cast_decode_isa(GZ_ISA_AUTO, dtype, cast, in, size, out, n);
}
