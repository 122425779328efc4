/* test_codec_simd.c - the integer-code kernels compiled for AVX2 give the
 * same codes, values, largest |code|, bytes and errors as the portable
 * loops (libgzcoll/src/codec/codes.c, chosen with gz_codes_simd): smooth
 * and noisy data, ties, values beyond the code limit, NaN and infinities,
 * codes beyond 2^51 (the dequantizer's other path), every block width. On a
 * CPU without AVX2 the test says so and skips. */
#include "gz_test.h"

#include "codec/codec.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 10007 /* not a multiple of a block, a tile or a vector */

typedef struct out {
  gz_result_t rc_q32, rc_q64, rc_enc, rc_dec, rc_red;
  int64_t q32[N], q64[N], dec[N], red[N], amax32, amax64;
  float y32[N];
  double y64[N];
  uint8_t enc[N * 9];
  size_t enc_size;
} out_t;

static void run(int level, const float *xf, const double *xd, const int64_t *codes,
                double eb, int64_t limit, out_t *o) {
  GZ_CHECK(gz_codes_simd(level) == level, "level %d taken", level);
  o->rc_q32 = gz_quantize(GZ_FLOAT32, xf, N, eb, limit, o->q32);
  o->rc_q64 = gz_quantize(GZ_FLOAT64, xd, N, eb, limit, o->q64);
  gz_dequantize_absmax(GZ_FLOAT32, codes, N, eb, o->y32, &o->amax32);
  gz_dequantize_absmax(GZ_FLOAT64, codes, N, eb, o->y64, &o->amax64);
  o->rc_enc = gz_codes_encode(codes, N, o->enc, sizeof o->enc, &o->enc_size);
  o->rc_dec = gz_codes_decode(o->enc, o->enc_size, o->dec, N);
  memcpy(o->red, codes, sizeof o->red);
  o->rc_red = gz_codes_decode_reduce(GZ_OP_SUM, o->enc, o->enc_size, o->red, N);
}

static void compare(const char *what, const out_t *a, const out_t *b,
                    const int64_t *codes) {
  GZ_CHECK(a->rc_q32 == b->rc_q32 && a->rc_q64 == b->rc_q64, "%s: quantize results",
           what);
  GZ_CHECK(!memcmp(a->q32, b->q32, sizeof a->q32), "%s: float32 codes", what);
  GZ_CHECK(!memcmp(a->q64, b->q64, sizeof a->q64), "%s: float64 codes", what);
  GZ_CHECK(!memcmp(a->y32, b->y32, sizeof a->y32) &&
               !memcmp(a->y64, b->y64, sizeof a->y64),
           "%s: dequantized values", what);
  GZ_CHECK(a->amax32 == b->amax32 && a->amax64 == b->amax64, "%s: largest |code|", what);
  GZ_CHECK(a->rc_enc == GZ_OK && b->rc_enc == GZ_OK && a->enc_size == b->enc_size &&
               !memcmp(a->enc, b->enc, a->enc_size),
           "%s: encoded bytes", what);
  GZ_CHECK(a->rc_dec == GZ_OK && b->rc_dec == GZ_OK &&
               !memcmp(a->dec, codes, sizeof a->dec) &&
               !memcmp(b->dec, codes, sizeof b->dec),
           "%s: decoded codes", what);
  GZ_CHECK(a->rc_red == b->rc_red && !memcmp(a->red, b->red, sizeof a->red),
           "%s: decode+reduce", what);
}

/* The reference for the dequantizer and the largest |code|. */
static void check_dequant(const char *what, const out_t *o, const int64_t *codes,
                          double eb) {
  size_t bad = 0;
  uint64_t m = 0;
  for (size_t i = 0; i < N; i++) {
    uint64_t a = codes[i] < 0 ? 0 - (uint64_t)codes[i] : (uint64_t)codes[i];
    double r = (double)codes[i] * (2.0 * eb);
    m = a > m ? a : m;
    bad += o->y64[i] != r || o->y32[i] != (float)r;
  }
  GZ_CHECK(bad == 0, "%s: %zu values differ from (T)(2eb * (double)q)", what, bad);
  GZ_CHECK((uint64_t)o->amax64 == m && (uint64_t)o->amax32 == m, "%s: largest |code|",
           what);
}

int main(void) {
  static out_t a, b;
  static float xf[N];
  static double xd[N];
  static int64_t codes[N];
  const double eb = 1e-3;
  gz_rng_t rng;
  if (gz_codes_simd(1) != 1) {
    printf("no AVX2 on this CPU: the portable loops only (tested elsewhere)\n");
    return GZ_TEST_SKIP;
  }
  gz_rng_seed(&rng, 17);
  for (int kind = 0; kind < 6; kind++) {
    static const char *const names[] = {"smooth", "noise",      "ties",
                                        "limit",  "non-finite", "2^51 codes"};
    int64_t limit = INT64_C(1) << 40;
    for (size_t i = 0; i < N; i++) {
      double v = sin(0.01 * (double)i) + 0.001 * gz_rng_normal(&rng);
      if (kind == 1)
        v = 1e3 * gz_rng_normal(&rng);
      if (kind == 2) /* x / 2eb = k + 1/2 in binary: every value a tie */
        v = ((double)(i % 200) - 100.0 + 0.5) * 0.0078125;
      xd[i] = v;
      xf[i] = (float)v;
      /* codes of every width up to 40 bits, with runs of equal codes */
      codes[i] =
          (int64_t)(gz_rng_next(&rng) >> (24 + i % 40)) - (INT64_C(1) << (39 - i % 40));
      if (i % 97 < 20)
        codes[i] = i ? codes[i - 1] : 0;
    }
    if (kind == 2)
      limit = 1000;
    if (kind == 3) {
      limit = 1000; /* some values beyond it */
      xd[5] = xf[5] = 3.0f;
    }
    if (kind == 4) {
      xd[7] = NAN;
      xf[7] = NAN;
      xd[N - 1] = INFINITY;
      xf[N - 1] = -INFINITY;
    }
    if (kind == 5)
      for (size_t i = 0; i < N; i += 101)
        codes[i] = (i & 1 ? -1 : 1) * ((INT64_C(1) << 52) - (int64_t)i);
    run(0, xf, xd, codes, kind == 2 ? 0.00390625 : eb, limit, &a);
    run(1, xf, xd, codes, kind == 2 ? 0.00390625 : eb, limit, &b);
    compare(names[kind], &a, &b, codes);
    check_dequant(names[kind], &a, codes, kind == 2 ? 0.00390625 : eb);
    if (kind == 0)
      GZ_CHECK(a.rc_q32 == GZ_OK && a.rc_q64 == GZ_OK, "smooth data quantizes");
    if (kind == 3 || kind == 4)
      GZ_CHECK(a.rc_q32 == GZ_ERR_RANGE && a.rc_q64 == GZ_ERR_RANGE, "%s refused",
               names[kind]);
  }
  return gz_test_finish();
}
