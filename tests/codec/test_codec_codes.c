/* test_codec_codes.c - the integer-domain API under the collectives:
 * quantization within the bound, lossless code encoding at every width
 * (int64 extremes included), exact SUM/MAX/MIN with overflow reported, and
 * corrupted encodings refused. */
#include "gz_test.h"

#include "gzcoll.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_quantize(void) {
  size_t n = 10007;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  float *xf = malloc(n * sizeof *xf), *yf = malloc(n * sizeof *yf);
  int64_t *q = malloc(n * sizeof *q);
  size_t bad = 0;
  gz_rng_t rng;
  gz_rng_seed(&rng, 7);
  for (size_t i = 0; i < n; i++) {
    x[i] = 100 * gz_rng_normal(&rng);
    xf[i] = (float)x[i];
  }
  GZ_CHECK(gz_quantize(GZ_FLOAT64, x, n, 1e-3, INT64_C(1) << 52, q) == GZ_OK, "f64");
  gz_dequantize(GZ_FLOAT64, q, n, 1e-3, y);
  for (size_t i = 0; i < n; i++)
    bad += !(fabs(x[i] - y[i]) <= 1e-3);
  GZ_CHECK(gz_quantize(GZ_FLOAT32, xf, n, 1e-3, INT64_C(1) << 52, q) == GZ_OK, "f32");
  /* in the integer domain the bound holds for 2eb*q in double; converting
   * one code back to float32 may add half an ulp of the value */
  gz_dequantize(GZ_FLOAT32, q, n, 1e-3, yf);
  for (size_t i = 0; i < n; i++) {
    bad += !(fabs((double)xf[i] - 2e-3 * (double)q[i]) <= 1e-3);
    bad += !(fabs((double)xf[i] - (double)yf[i]) <=
             1e-3 + 0.5 * (nextafterf(fabsf(yf[i]), INFINITY) - fabsf(yf[i])));
  }
  GZ_CHECK(bad == 0, "%zu quantized values outside the bound", bad);

  x[5] = NAN;
  GZ_CHECK(gz_quantize(GZ_FLOAT64, x, n, 1e-3, INT64_C(1) << 52, q) == GZ_ERR_RANGE,
           "NaN is not quantizable");
  x[5] = 1.0;
  x[6] = 1e6;
  GZ_CHECK(gz_quantize(GZ_FLOAT64, x, n, 1e-3, 1000, q) == GZ_ERR_RANGE,
           "code above the limit is refused");
  xf[0] = 1.0f + FLT_EPSILON;
  GZ_CHECK(gz_quantize(GZ_FLOAT32, xf, 1, 1e-12, INT64_C(1) << 52, q) == GZ_OK &&
               fabs((double)xf[0] - 2e-12 * (double)q[0]) <= 1e-12,
           "a bound below the float spacing holds for the code in double");
  GZ_CHECK(gz_quantize(GZ_FLOAT32, xf, 1, 0.0, 10, q) == GZ_ERR_ARG,
           "zero bound refused");
  free(x);
  free(y);
  free(xf);
  free(yf);
  free(q);
}

static void test_codes_round_trip(void) {
  const size_t sizes[] = {0, 1, 31, 32, 33, 1000};
  gz_rng_t rng;
  gz_rng_seed(&rng, 11);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    for (int width = 0; width <= 64; width += 8) {
      size_t n = sizes[s], size = 0, cap = gz_codes_bound(n);
      int64_t *q = malloc((n + 1) * sizeof *q), *r = malloc((n + 1) * sizeof *r);
      uint8_t *buf = malloc(cap + 1);
      for (size_t i = 0; i < n; i++) {
        uint64_t v = gz_rng_next(&rng);
        q[i] = width == 64 ? (int64_t)v
                           : (int64_t)(v % (UINT64_C(1) << width)) -
                                 (width ? (INT64_C(1) << (width - 1)) : 0);
      }
      if (n > 2 && width == 64) {
        q[0] = INT64_MIN;
        q[1] = INT64_MAX;
        q[2] = INT64_MIN;
      }
      GZ_CHECK(gz_codes_encode(q, n, buf, cap, &size) == GZ_OK && size <= cap,
               "encode n=%zu width=%d", n, width);
      GZ_CHECK(gz_codes_decode(buf, size, r, n) == GZ_OK && memcmp(q, r, n * 8) == 0,
               "decode n=%zu width=%d reproduces every code", n, width);
      if (size > 0)
        GZ_CHECK(gz_codes_decode(buf, size - 1, r, n) == GZ_ERR_CORRUPT,
                 "truncated codes refused");
      free(q);
      free(r);
      free(buf);
    }
  }
}

static void test_reduce(void) {
  int64_t acc[40], in[40], expect[40];
  uint8_t buf[1024];
  size_t size;
  for (int i = 0; i < 40; i++) {
    acc[i] = i * 1000 - 20000;
    in[i] = 7 - i * 3;
  }
  gz_codes_encode(in, 40, buf, sizeof buf, &size);
  for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++) {
    int64_t a[40];
    memcpy(a, acc, sizeof a);
    for (int i = 0; i < 40; i++)
      expect[i] = op == GZ_OP_SUM   ? acc[i] + in[i]
                  : op == GZ_OP_MAX ? (acc[i] > in[i] ? acc[i] : in[i])
                                    : (acc[i] < in[i] ? acc[i] : in[i]);
    GZ_CHECK(gz_codes_decode_reduce((gz_op_t)op, buf, size, a, 40) == GZ_OK &&
                 memcmp(a, expect, sizeof a) == 0,
             "decode_reduce op %d", op);
    memcpy(a, acc, sizeof a);
    GZ_CHECK(gz_codes_reduce((gz_op_t)op, a, in, 40) == GZ_OK &&
                 memcmp(a, expect, sizeof a) == 0,
             "reduce op %d", op);
  }
  acc[3] = INT64_MAX - 1;
  in[3] = 5;
  GZ_CHECK(gz_codes_reduce(GZ_OP_SUM, acc, in, 40) == GZ_ERR_OVERFLOW,
           "SUM overflow is reported, not wrapped");
  acc[3] = INT64_MIN + 1;
  in[3] = -5;
  gz_codes_encode(in, 40, buf, sizeof buf, &size);
  GZ_CHECK(gz_codes_decode_reduce(GZ_OP_SUM, buf, size, acc, 40) == GZ_ERR_OVERFLOW,
           "negative overflow is reported");
  GZ_CHECK(gz_codes_reduce((gz_op_t)9, acc, in, 40) == GZ_ERR_ARG, "unknown op refused");
}

/* Hostile encodings: random bytes never read or write out of bounds. */
static void test_hostile(void) {
  gz_rng_t rng;
  int64_t out[100];
  gz_rng_seed(&rng, 5);
  for (int t = 0; t < 2000; t++) {
    uint8_t buf[64];
    size_t len = gz_rng_next(&rng) % sizeof buf;
    for (size_t i = 0; i < len; i++)
      buf[i] = (uint8_t)gz_rng_next(&rng);
    (void)gz_codes_decode(buf, len, out, (size_t)(gz_rng_next(&rng) % 100));
  }
  GZ_CHECK(1, "random encodings decoded without a memory error (ASan checks)");
}

int main(void) {
  test_quantize();
  test_codes_round_trip();
  test_reduce();
  test_hostile();
  return gz_test_finish();
}
