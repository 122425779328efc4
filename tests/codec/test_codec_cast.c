/* test_codec_cast.c - the casting codec (libgzcoll/src/codec/cast.c, white
 * box): every format from both input types, against a reference rounding
 * computed independently here (frexp, nearbyint in the default
 * round-to-nearest-even mode, ldexp); every value within 2^-p |x| or
 * verbatim, escapes exactly where the reference leaves the format's normal
 * range, specials bit-exact, the raw fallback, and corrupt blocks refused;
 * the AVX2 loops give the portable path's bytes and values. */
#include "gz_test.h"

#include "codec/codec.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The formats: significant bits p and the normal exponent range of x =
 * m 2^e with m in [1, 2). */
static const struct {
  gz_cast_t cast;
  int p, emin, emax;
  const char *name;
} fmt[] = {{GZ_CAST_F32, 24, -126, 127, "float32"},
           {GZ_CAST_F16, 11, -14, 15, "float16"},
           {GZ_CAST_BF16, 8, -126, 127, "bfloat16"}};

/* x rounded to p significant bits (ties to even); *normal = 0 when the
 * result is outside [2^emin, 2^(emax+1)). */
static double reference(double x, int p, int emin, int emax, int *normal) {
  int e;
  double m = frexp(x, &e), r; /* x = m 2^e, |m| in [0.5, 1) */
  r = ldexp(nearbyint(ldexp(m, p)), e - p);
  (void)frexp(r, &e);
  *normal = r != 0 && isfinite(r) && e - 1 >= emin && e - 1 <= emax;
  return r;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* n values with the edges first, then random magnitudes 2^-spread ..
 * 2^spread. */
static void make_values(double *x, size_t n, int spread) {
  const double edges[] = {0.0,
                          -0.0,
                          INFINITY,
                          -INFINITY,
                          1.0,
                          -1.0,
                          FLT_MAX,
                          -FLT_MAX,
                          FLT_MIN,
                          FLT_MIN * 0.75,
                          65504.0,
                          65520.0, /* rounds up to 2^16 in float16: overflow */
                          65519.99,
                          6.103515625e-05, /* float16's smallest normal */
                          6.1e-05,
                          1.0 + 1.0 / 512, /* a tie for bfloat16 */
                          1.0 + 3.0 / 512,
                          3.4028235677973366e+38, /* above FLT_MAX, below 2^128 */
                          DBL_MAX,
                          DBL_MIN,
                          4.9e-324};
  size_t ne = sizeof edges / sizeof edges[0];
  for (size_t i = 0; i < n; i++) {
    if (i < ne) {
      x[i] = edges[i];
    } else {
      double m = (double)(next() >> 11) / 9007199254740992.0 + 0.5; /* [0.5, 1.5) */
      int e = (int)(next() % (uint64_t)(2 * spread)) - spread;
      x[i] = ldexp(m, e) * (next() & 1 ? -1 : 1);
    }
  }
}

/* x[0..n) as n values of dt (float32: each rounded once) into in. */
static void put_values(gz_dtype_t dt, const double *x, size_t n, unsigned char *in) {
  for (size_t i = 0; i < n; i++) {
    if (dt == GZ_FLOAT32) {
      float v = (float)x[i];
      memcpy(in + 4 * i, &v, 4);
    } else {
      memcpy(in + 8 * i, &x[i], 8);
    }
  }
}

/* Checks one block; returns its size over the raw values' (1: raw). */
static double check_one(gz_dtype_t dt, int f, const double *x, size_t n) {
  size_t esz = gz_dtype_size(dt), cap = gz_cast_bound(dt, n), size = 0;
  unsigned char *in = malloc(n * esz + 1), *out = malloc(n * esz + 1), *enc = malloc(cap);
  long wrong = 0, escapes = 0, want_escapes = 0;
  double unit = gz_cast_unit(fmt[f].cast);
  char what[64];
  snprintf(what, sizeof what, "%s from %s n=%zu", fmt[f].name,
           dt == GZ_FLOAT32 ? "float32" : "float64", n);
  GZ_CHECK(unit == ldexp(1.0, -fmt[f].p), "%s: unit %g", what, unit);
  put_values(dt, x, n, in);
  GZ_CHECK(gz_cast_encode(dt, fmt[f].cast, in, n, enc, cap, &size) == GZ_OK, "%s: encode",
           what);
  GZ_CHECK(size <= cap, "%s: %zu bytes > bound %zu", what, size, cap);
  GZ_CHECK(gz_cast_decode(dt, fmt[f].cast, enc, size, out, n) == GZ_OK, "%s: decode",
           what);
  for (size_t i = 0; i < n; i++) {
    double v = dt == GZ_FLOAT32 ? (double)((float *)(void *)in)[i] : x[i], got, want;
    int normal, same_bits = memcmp(in + i * esz, out + i * esz, esz) == 0;
    got =
        dt == GZ_FLOAT32 ? (double)((float *)(void *)out)[i] : ((double *)(void *)out)[i];
    want = reference(v, fmt[f].p, fmt[f].emin, fmt[f].emax, &normal);
    int bad;
    if (size == cap) {
      bad = !same_bits; /* the raw fallback: everything verbatim */
    } else if (v == 0 || isinf(v)) {
      bad = !same_bits; /* signed zeros and infinities exact */
    } else if (!normal || isnan(v)) {
      want_escapes++;
      bad = !same_bits; /* verbatim */
    } else {
      bad = got != want || !(fabs(got - v) <= unit * fabs(v));
    }
    if (bad && wrong < 3)
      printf("  %s: x[%zu] = %.17g -> %.17g (reference %.17g, normal %d)\n", what, i, v,
             got, want, normal);
    wrong += bad;
  }
  if (size != cap) { /* not the raw fallback: the escape count is in front */
    for (int b = 0; b < 8; b++)
      escapes |= (long)enc[b] << (8 * b);
    GZ_CHECK(escapes == want_escapes, "%s: %ld escapes, reference %ld", what, escapes,
             want_escapes);
  }
  GZ_CHECK(wrong == 0, "%s: %ld values wrong", what, wrong);
  /* corrupt blocks: refused, never read out of bounds */
  if (n > 0 && size > 8) {
    GZ_CHECK(gz_cast_decode(dt, fmt[f].cast, enc, size - 1, out, n) == GZ_ERR_CORRUPT,
             "%s: truncated block accepted", what);
    GZ_CHECK(gz_cast_decode(dt, fmt[f].cast, enc, size, out, n - 1) == GZ_ERR_CORRUPT,
             "%s: wrong count accepted", what);
  }
  free(in);
  free(out);
  free(enc);
  return (double)size / (double)cap;
}

/* Magnitudes within every format's range (few escapes: the cast) and
 * over most of float64's (many: the raw fallback, for float16 too). */
static void test_formats(void) {
  const size_t sizes[] = {0, 1, 21, 1000, 65537};
  const int spreads[] = {12, 160};
  double *x = malloc(65537 * sizeof *x);
  for (int s = 0; s < 2; s++) {
    make_values(x, 65537, spreads[s]);
    for (int f = 0; f < 3; f++)
      for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double r64 = check_one(GZ_FLOAT64, f, x, sizes[k]),
               r32 =
                   fmt[f].cast != GZ_CAST_F32 ? check_one(GZ_FLOAT32, f, x, sizes[k]) : 0;
        if (s == 0 && sizes[k] >= 1000) /* a few escapes: the cast pays */
          GZ_CHECK(r64 < 0.6 && r32 < 0.6, "%s: sizes %.3f %.3f of raw", fmt[f].name, r64,
                   r32);
      }
  }
  free(x);
}

/* The AVX2 loops (four values at a time, a group with an escape or a special
 * through the portable element code) against the portable path: the same
 * bytes, and each decodes the other's bytes to the same values. */
static void compare_isa(gz_dtype_t dt, int f, const double *x, size_t n,
                        const char *set) {
  size_t esz = gz_dtype_size(dt), cap = gz_cast_bound(dt, n), sp = 0, sv = 0;
  unsigned char *in = malloc(n * esz + 1), *ep = malloc(cap), *ev = malloc(cap);
  unsigned char *op = malloc(n * esz + 1), *ov = malloc(n * esz + 1);
  put_values(dt, x, n, in);
  GZ_CHECK(gz_cast_encode_isa(GZ_ISA_PORTABLE, dt, fmt[f].cast, in, n, ep, cap, &sp) ==
                   GZ_OK &&
               gz_cast_encode_isa(GZ_ISA_AVX2, dt, fmt[f].cast, in, n, ev, cap, &sv) ==
                   GZ_OK,
           "%s %s n=%zu: encode", fmt[f].name, set, n);
  GZ_CHECK(sp == sv && memcmp(ep, ev, sp) == 0,
           "%s from %s, %s n=%zu: AVX2 bytes (%zu) differ from the portable ones (%zu)",
           fmt[f].name, dt == GZ_FLOAT32 ? "float32" : "float64", set, n, sv, sp);
  GZ_CHECK(gz_cast_decode_isa(GZ_ISA_PORTABLE, dt, fmt[f].cast, ev, sv, op, n) == GZ_OK &&
               gz_cast_decode_isa(GZ_ISA_AVX2, dt, fmt[f].cast, ep, sp, ov, n) == GZ_OK &&
               memcmp(op, ov, n * esz) == 0,
           "%s %s n=%zu: AVX2 and portable decode to different values", fmt[f].name, set,
           n);
  free(in);
  free(ep);
  free(ev);
  free(op);
  free(ov);
}

static void test_isa(void) {
  const size_t sizes[] = {0, 1, 3, 4, 5, 8, 9, 1001, 65537};
  const size_t n = 65537;
  double *x = malloc(n * sizeof *x);
  if (!gz_isa_available(GZ_ISA_AVX2)) {
    printf("note: no AVX2 on this CPU: the AVX2 cast is not compared\n");
    free(x);
    return;
  }
  for (int set = 0; set < 4; set++) {
    const char *names[] = {"in range", "wide range", "random bits", "edges"};
    if (set < 2) {
      make_values(x, n, set == 0 ? 12 : 160);
    } else if (set == 2) { /* any bits: NaNs, subnormals, infinities */
      for (size_t i = 0; i < n; i++) {
        uint64_t b = next();
        memcpy(&x[i], &b, 8);
      }
    } else { /* ties, carries into the next binade, range edges, at every lane */
      for (size_t i = 0; i < n; i++) {
        int f = (int)(i % 3), p = fmt[f].p, e = (int)(next() % 300) - 150;
        double m;
        switch (next() % 6) {
        case 0: /* a tie: half an ulp of the format above an odd or even value */
          m = 1.0 + (double)(next() % 64) * ldexp(1, 1 - p) + ldexp(1, -p);
          break;
        case 1: /* all ones: rounds up into the next binade */
          m = 2.0 - ldexp(1, -40);
          break;
        case 2: /* around the format's smallest and largest normals */
          m = 1.0;
          e = next() & 1 ? fmt[f].emin : fmt[f].emax;
          if (next() & 1)
            m = 2.0 - ldexp(1, -p - 1);
          break;
        case 3:
          m = 0.0;
          break;
        case 4:
          m = next() & 1 ? INFINITY : NAN;
          break;
        default:
          m = 1.0 + (double)(next() >> 12) * ldexp(1, -52);
        }
        x[i] = ldexp(m, e) * (next() & 1 ? -1 : 1);
      }
    }
    for (int f = 0; f < 3; f++)
      for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        compare_isa(GZ_FLOAT64, f, x, sizes[k], names[set]);
        if (fmt[f].cast != GZ_CAST_F32)
          compare_isa(GZ_FLOAT32, f, x, sizes[k], names[set]);
      }
  }
  free(x);
}

/* Which format a bound picks: the narrowest within it. */
static void test_pick(void) {
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, 0.01) == GZ_CAST_BF16, "0.01: bfloat16");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, ldexp(1, -8)) == GZ_CAST_BF16, "2^-8: bfloat16");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, 1e-3) == GZ_CAST_F16, "1e-3: float16");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT32, 1e-3) == GZ_CAST_F16, "float32 1e-3: float16");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, 1e-6) == GZ_CAST_F32, "1e-6: float32");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT32, 1e-6) == GZ_CAST_NONE, "float32 1e-6: none");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, 1e-9) == GZ_CAST_NONE, "1e-9: none");
  GZ_CHECK(gz_cast_pick(GZ_FLOAT64, 0) == GZ_CAST_NONE, "0: none");
}

/* Mostly escapes: the block goes raw, no larger than the values. */
static void test_raw(void) {
  const size_t n = 100;
  double x[100], y[100];
  unsigned char enc[8 + 8 * 100];
  size_t size = 0;
  for (size_t i = 0; i < n; i++)
    x[i] = i % 2 ? NAN : 1e300;
  GZ_CHECK(gz_cast_encode(GZ_FLOAT64, GZ_CAST_BF16, x, n, enc, sizeof enc, &size) ==
                   GZ_OK &&
               size == sizeof enc,
           "raw fallback: %zu bytes", size);
  GZ_CHECK(gz_cast_decode(GZ_FLOAT64, GZ_CAST_BF16, enc, size, y, n) == GZ_OK &&
               memcmp(x, y, sizeof x) == 0,
           "raw fallback: values");
  GZ_CHECK(gz_cast_encode(GZ_FLOAT64, GZ_CAST_BF16, x, n, enc, sizeof enc - 1, &size) ==
               GZ_ERR_ARG,
           "capacity below the bound accepted");
  /* escape positions out of order: corrupt */
  for (size_t i = 0; i < n; i++)
    x[i] = i < 2 ? 1e300 : 1.0;
  GZ_CHECK(gz_cast_encode(GZ_FLOAT64, GZ_CAST_BF16, x, n, enc, sizeof enc, &size) ==
               GZ_OK,
           "two escapes");
  memcpy(enc + 8 + 2 * n + 16, enc + 8 + 2 * n, 8); /* positions 0, 0 */
  GZ_CHECK(gz_cast_decode(GZ_FLOAT64, GZ_CAST_BF16, enc, size, y, n) == GZ_ERR_CORRUPT,
           "repeated escape position accepted");
}

int main(void) {
  test_pick();
  test_formats();
  test_raw();
  test_isa();
  return gz_test_finish();
}
