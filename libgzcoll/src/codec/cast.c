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

/* The cast of n values of type T into the narrow type N: one pass,
 * escapes appended after the narrow values; returns the escape count. */
#define GZ_CAST_LOOP(T, N)                                                               \
  for (size_t i = 0; i < n; i++) {                                                       \
    T v;                                                                                 \
    N w;                                                                                 \
    uint32_t bits = 0;                                                                   \
    memcpy(&v, (const char *)in + i * sizeof(T), sizeof(T));                             \
    if (narrow((double)v, cast, &bits) != 0) {                                           \
      uint8_t *rec = esc + k * (8 + sizeof(T));                                          \
      if (rec + 8 + sizeof(T) > end)                                                     \
        return SIZE_MAX; /* no smaller than raw: stop */                                 \
      gz_put_u64le(rec, i);                                                              \
      memcpy(rec + 8, &v, sizeof(T));                                                    \
      k++;                                                                               \
    }                                                                                    \
    w = (N)bits;                                                                         \
    memcpy(narrow_at + i * sizeof(N), &w, sizeof(N));                                    \
  }

static size_t cast_f64_u32(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                           uint8_t *esc, const uint8_t *end) {
  size_t k = 0;
  GZ_CAST_LOOP(double, uint32_t)
  return k;
}
static size_t cast_f64_u16(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                           uint8_t *esc, const uint8_t *end) {
  size_t k = 0;
  GZ_CAST_LOOP(double, uint16_t)
  return k;
}
static size_t cast_f32_u16(const void *in, size_t n, gz_cast_t cast, uint8_t *narrow_at,
                           uint8_t *esc, const uint8_t *end) {
  size_t k = 0;
  GZ_CAST_LOOP(float, uint16_t)
  return k;
}

gz_result_t gz_cast_encode(gz_dtype_t dtype, gz_cast_t cast, const void *in, size_t n,
                           uint8_t *out, size_t cap, size_t *size) {
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

gz_result_t gz_cast_decode(gz_dtype_t dtype, gz_cast_t cast, const uint8_t *in,
                           size_t size, void *out, size_t n) {
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
  for (size_t i = 0; i < n; i++) {
    uint32_t bits = 0;
    double x;
    memcpy(&bits, in + 8 + i * tsize, tsize); /* little-endian */
    x = widen(bits, cast);
    if (dtype == GZ_FLOAT32) {
      float f = (float)x; /* exact: the narrow formats fit in float32 */
      memcpy((char *)out + 4 * i, &f, 4);
    } else {
      memcpy((char *)out + 8 * i, &x, 8);
    }
  }
  esc = in + 8 + n * tsize;
  for (size_t j = 0; j < k; j++) {
    size_t at = (size_t)gz_get_u64le(esc + j * (8 + esz));
    if (at >= n || (j > 0 && at <= (size_t)gz_get_u64le(esc + (j - 1) * (8 + esz))))
      return GZ_ERR_CORRUPT;
    memcpy((char *)out + at * esz, esc + j * (8 + esz) + 8, esz);
  }
  return GZ_OK;
}
