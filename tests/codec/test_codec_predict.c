/* test_codec_predict.c - format version 2: every predictor (Lorenzo,
 * interpolation, automatic) on 1, 2, 3 and 4-D shapes (ragged sizes, chunks
 * cutting the slowest dimension), float32 and float64, every adversarial
 * field of codec_fields.h (NaN payloads, Inf, -0.0, subnormals, extremes,
 * codes overflowing) and lossless e = 0: every element checked; codes
 * with a common factor; the real seismic files; every truncation and single-byte
 * corruption of a v2 stream refused; bad shapes refused. */
#include "gz_test.h"

#include "codec_check.h"
#include "codec_fields.h"
#include "gzcoll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *compress2(int is_f32, const void *x, size_t n, unsigned ndims,
                          const size_t *dims, double eb, gz_predictor_t pred,
                          uint32_t chunk, size_t *size, gz_result_t *rc) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t cap = gz_compress_bound(is_f32 ? GZ_FLOAT32 : GZ_FLOAT64, n, chunk);
  uint8_t *s = malloc(cap ? cap : 1);
  p.dtype = is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.chunk_len = chunk;
  p.predictor = pred;
  p.ndims = ndims;
  for (unsigned k = 0; k < ndims; k++)
    p.dims[k] = dims[k];
  *rc = gz_compress(&p, x, n, s, cap, size);
  return s;
}

/* Round trip; returns violations (n + 1 when the codec failed). */
static size_t roundtrip(int is_f32, const void *x, size_t n, unsigned ndims,
                        const size_t *dims, double eb, gz_predictor_t pred,
                        uint32_t chunk, size_t *size_out) {
  size_t size = 0, elem = is_f32 ? 4 : 8, bad;
  gz_result_t rc;
  gz_stream_info_t info;
  uint8_t *s = compress2(is_f32, x, n, ndims, dims, eb, pred, chunk, &size, &rc);
  void *y = malloc(n * elem + 1);
  if (rc != GZ_OK || gz_stream_info(s, size, &info) != GZ_OK ||
      info.format_version != 2 || info.stream_size != size ||
      gz_decompress(s, size, y, n) != GZ_OK) {
    free(s);
    free(y);
    return n + 1;
  }
  bad = codec_violations(is_f32, x, y, n, eb);
  if (size_out)
    *size_out = size;
  free(s);
  free(y);
  return bad;
}

static void test_shapes_fields(void) {
  static const struct {
    unsigned ndims;
    size_t dims[4];
  } shapes[] = {{1, {1}},       {1, {1000}},        {2, {37, 53}},
                {2, {1, 777}},  {3, {13, 17, 19}},  {3, {5, 1, 64}},
                {3, {2, 3, 2}}, {4, {3, 4, 9, 11}}, {0, {515}}};
  static const gz_predictor_t preds[] = {GZ_PRED_LORENZO, GZ_PRED_INTERP, GZ_PRED_AUTO,
                                         GZ_PRED_QLORENZO, GZ_PRED_QINTERP};
  static const double ebs[] = {1e-3, 1e-7, 0.0};
  static const uint32_t chunks[] = {0, 64};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    size_t n = 1;
    for (unsigned k = 0; k < shapes[s].ndims; k++)
      n *= shapes[s].dims[k];
    if (shapes[s].ndims == 0)
      n = shapes[s].dims[0];
    for (int f = 0; f < FIELD_COUNT; f++)
      for (int is_f32 = 0; is_f32 < 2; is_f32++) {
        void *x = malloc(n * 8);
        field_fill((field_kind_t)f, is_f32, x, n, 7 + s);
        for (size_t p = 0; p < sizeof preds / sizeof *preds; p++)
          for (size_t e = 0; e < 3; e++)
            for (size_t c = 0; c < 2; c++) {
              size_t bad = roundtrip(is_f32, x, n, shapes[s].ndims, shapes[s].dims,
                                     ebs[e], preds[p], chunks[c], NULL);
              GZ_CHECK(bad == 0,
                       "shape %zu (%zu values) %s %s pred %d eb %g chunk %u: %zu bad", s,
                       n, field_names[f], is_f32 ? "f32" : "f64", (int)preds[p], ebs[e],
                       chunks[c], bad);
            }
        free(x);
      }
  }
}

/* A smooth 3-D field: both predictors at least halve format 1. */
static void test_smooth_gain(void) {
  size_t d[3] = {40, 50, 60}, n = 40 * 50 * 60, s1 = 0, s2 = 0, sl = 0, sq = 0, sql = 0;
  float *x = malloc(n * sizeof *x);
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t cap = gz_compress_bound(GZ_FLOAT32, n, 0);
  uint8_t *s = malloc(cap);
  for (size_t i = 0; i < d[0]; i++)
    for (size_t j = 0; j < d[1]; j++)
      for (size_t k = 0; k < d[2]; k++)
        x[(i * d[1] + j) * d[2] + k] =
            (float)(sin(0.05 * (double)i) * cos(0.07 * (double)j) +
                    0.3 * sin(0.03 * (double)k));
  p.error_bound = 1e-4;
  GZ_CHECK(gz_compress(&p, x, n, s, cap, &s1) == GZ_OK, "format 1 compresses");
  GZ_CHECK(roundtrip(1, x, n, 3, d, 1e-4, GZ_PRED_INTERP, 0, &s2) == 0, "interp exact");
  GZ_CHECK(roundtrip(1, x, n, 3, d, 1e-4, GZ_PRED_LORENZO, 0, &sl) == 0, "lorenzo exact");
  GZ_CHECK(s2 * 2 < s1 && sl * 2 < s1,
           "smooth 3-D: format 1 %zu bytes, interpolation %zu, Lorenzo %zu", s1, s2, sl);
  /* bins centred on the prediction beat predicted codes on a smooth field
   * where the prediction is good (interpolation: 10221 vs 21295 bytes when
   * written; Lorenzo's own error dominates, so its Q form only matches it) */
  GZ_CHECK(roundtrip(1, x, n, 3, d, 1e-4, GZ_PRED_QINTERP, 0, &sq) == 0, "qinterp exact");
  GZ_CHECK(roundtrip(1, x, n, 3, d, 1e-4, GZ_PRED_QLORENZO, 0, &sql) == 0,
           "qlorenzo exact");
  GZ_CHECK(sq * 3 < s2 * 2 && sql < sl + sl / 20,
           "smooth 3-D: qinterp %zu bytes vs interp %zu, qlorenzo %zu vs lorenzo %zu", sq,
           s2, sql, sl);
  free(x);
  free(s);
}

/* The common factor of the codes (chunk2.c): at eb = 0.5 integers are
 * their own codes, and codes that are all multiples of g are coded divided
 * by g, so the stream of g y is as long as y's (the same residuals) but
 * for the factor's varint (4 bytes for 3 x 2^20 instead of 1) and decodes
 * to g y exactly; with
 * zeros first (no factor known yet), negatives, and factors with and
 * without a power of two. */
static void test_common_factor(void) {
  static const double g[4] = {2, 3, 12, 3 * 1048576.0};
  static const size_t wider[4] = {0, 0, 0, 3}; /* the varint's extra bytes */
  size_t d[3] = {9, 17, 70}, n = 9 * 17 * 70, s1 = 0, sg = 0;
  float *y = malloc(n * sizeof *y), *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    y[i] = i < 100 ? 0.0f : (float)((int)(i * 7919 % 61) - 30);
  GZ_CHECK(roundtrip(1, y, n, 3, d, 0.5, GZ_PRED_LORENZO, 0, &s1) == 0, "integers exact");
  for (int k = 0; k < 4; k++) {
    for (size_t i = 0; i < n; i++)
      x[i] = (float)(g[k] * (double)y[i]);
    GZ_CHECK(roundtrip(1, x, n, 3, d, 0.5, GZ_PRED_LORENZO, 0, &sg) == 0,
             "integers times %g exact", g[k]);
    GZ_CHECK(sg == s1 + wider[k], "integers times %g: %zu bytes, the integers %zu", g[k],
             sg, s1);
  }
  free(x);
  free(y);
}

static void test_corruption(void) {
  size_t d[2] = {30, 41}, n = 30 * 41, size = 0;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  gz_result_t rc;
  uint8_t *s;
  size_t caught = 0, total = 0;
  field_fill(FIELD_SPECIALS, 1, x, n, 5);
  s = compress2(1, x, n, 2, d, 1e-3, GZ_PRED_AUTO, 64, &size, &rc);
  GZ_CHECK(rc == GZ_OK, "compress for corruption");
  for (size_t cut = 0; cut < size; cut++)
    caught += gz_decompress(s, cut, y, n) != GZ_OK;
  GZ_CHECK(caught == size, "every truncation refused (%zu of %zu)", caught, size);
  caught = 0;
  for (size_t i = 0; i < size; i++, total++) {
    s[i] ^= 0x10;
    caught += gz_decompress(s, size, y, n) != GZ_OK;
    s[i] ^= 0x10;
  }
  GZ_CHECK(caught == total, "every flipped byte refused (%zu of %zu)", caught, total);
  free(s);
  free(x);
  free(y);
}

static void test_bad_params(void) {
  size_t d[2] = {10, 11}, size = 0;
  float x[100] = {0};
  gz_result_t rc;
  uint8_t *s = compress2(1, x, 100, 2, d, 1e-3, GZ_PRED_AUTO, 0, &size, &rc);
  GZ_CHECK(rc == GZ_ERR_ARG, "shape 10x11 for 100 values refused");
  free(s);
  s = compress2(1, x, 100, 2, d, 1e-3, (gz_predictor_t)9, 0, &size, &rc);
  GZ_CHECK(rc == GZ_ERR_ARG, "unknown predictor refused");
  free(s);
}

static void test_real(void) {
  static const struct {
    const char *path;
    size_t dims[3];
  } files[] = {{"seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw", {24, 96, 2048}},
               {"seismic_f3_cube/f3_23x18x75_f32le.raw", {23, 18, 75}}};
  for (size_t f = 0; f < 2; f++) {
    const char *path = gz_test_data_path(files[f].path);
    size_t bytes = 0, n = files[f].dims[0] * files[f].dims[1] * files[f].dims[2];
    float *x = path ? gz_test_read_file(path, &bytes) : NULL;
    if (!x || bytes != n * 4) {
      printf("skip %s: not found\n", files[f].path);
      free(x);
      continue;
    }
    for (int p = GZ_PRED_LORENZO; p <= GZ_PRED_QINTERP; p++) {
      size_t size = 0, bad = roundtrip(1, x, n, 3, files[f].dims, 1e-4, (gz_predictor_t)p,
                                       0, &size);
      GZ_CHECK(bad == 0, "%s pred %d: %zu bad (ratio %.2f)", files[f].path, p, bad,
               size ? (double)bytes / (double)size : 0.0);
    }
    free(x);
  }
}

/* Runs of escapes of every length from 1 to 40 values (chunk2.c copies a
 * run's values in moves of 32, 16, 8 and 4 bytes, the last overlapping the
 * one before, and writes its gaps of 0 in stores of 16), gaps between runs
 * of 1 to 301 values (varints of one and two bytes), NaNs of distinct
 * payloads (a value copied from a neighbour's place shows) and a run up to
 * the field's end; QLORENZO (whose float32 encoder lists the runs) and
 * Lorenzo on codes (runs found from the flags), float32 and float64: every
 * value back within the bound, the escapes bit for bit. */
static void test_escape_runs(void) {
  enum { N = 24 * 40 * 50 };
  static const size_t dims[3] = {24, 40, 50};
  static const gz_predictor_t preds[2] = {GZ_PRED_QLORENZO, GZ_PRED_LORENZO};
  static float xf[N];
  static double xd[N];
  size_t i = 0, len = 1, gap = 1, runs = 0, escaped = 0;
  for (size_t k = 0; k < N; k++) {
    xd[k] = sin(0.01 * (double)k) + 0.3 * cos(0.003 * (double)k);
    xf[k] = (float)xd[k];
  }
  while (i < N) {
    i += gap;
    gap = gap * 37 % 301 + 1;
    for (size_t k = 0; (k < len || N - i < 8) && i < N; k++, i++, escaped++) {
      uint32_t bf = 0x7fc00000u | (uint32_t)(i & 0x3fffff);
      uint64_t bd = 0x7ff8000000000000ull | (uint64_t)i;
      memcpy(xf + i, &bf, 4);
      memcpy(xd + i, &bd, 8);
    }
    len = len % 40 + 1;
    runs++;
  }
  GZ_CHECK(runs > 100 && escaped > N / 20, "escape runs: %zu runs, %zu escapes", runs,
           escaped);
  for (int f32 = 0; f32 <= 1; f32++)
    for (int k = 0; k < 2; k++) {
      size_t bad = roundtrip(f32, f32 ? (const void *)xf : (const void *)xd, N, 3, dims,
                             1e-3, preds[k], 0, NULL);
      GZ_CHECK(bad == 0, "escape runs, %s, predictor %d: %zu values wrong",
               f32 ? "float32" : "float64", (int)preds[k], bad);
    }
}

int main(void) {
  test_shapes_fields();
  test_escape_runs();
  test_smooth_gain();
  test_common_factor();
  test_corruption();
  test_bad_params();
  test_real();
  return gz_test_finish();
}
