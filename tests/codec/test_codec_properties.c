/* test_codec_properties.c - every element of every decompressed field is
 * within its bound (checked in the element's precision); values that cannot
 * be quantized (NaN with payload, +-Inf, -0.0, subnormals, overflowing codes)
 * come back bit-exact. For float32 both values are exact in double, so the
 * difference below is the error in the element's own precision. Both dtypes, ABS and REL,
 * sizes around block and chunk edges, several bounds including lossless. */
#include "gz_test.h"

#include "codec_fields.h"
#include "gzcoll.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value_at(const void *x, int is_f32, size_t i) {
  return is_f32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
}

static int same_bits(const void *a, const void *b, int is_f32, size_t i) {
  size_t s = is_f32 ? 4 : 8;
  return memcmp((const char *)a + i * s, (const char *)b + i * s, s) == 0;
}

/* Must v come back bit-exact? Non-finite values, -0.0 and subnormals. */
static int must_be_exact(double v, int is_f32) {
  double min_normal = is_f32 ? FLT_MIN : DBL_MIN;
  if (!isfinite(v))
    return 1;
  return fabs(v) < min_normal && (v != 0 || signbit(v));
}

static void check_round_trip(field_kind_t kind, int is_f32, gz_eb_mode_t mode, double eb,
                             size_t n, uint32_t chunk_len) {
  size_t elem = is_f32 ? 4 : 8;
  void *x = malloc(n * elem + 1), *y = malloc(n * elem + 1);
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t cap, size = 0, violations = 0, inexact = 0;
  uint8_t *stream;
  gz_stream_info_t info;
  gz_result_t rc;
  double abs_eb;

  p.dtype = is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.eb_mode = mode;
  p.error_bound = eb;
  p.chunk_len = chunk_len;
  cap = gz_compress_bound(p.dtype, n, chunk_len);
  stream = malloc(cap);
  field_fill(kind, is_f32, x, n, 1234 + n);
  rc = gz_compress(&p, x, n, stream, cap, &size);
  GZ_CHECK(rc == GZ_OK, "%s %s n=%zu: compress: %s", field_names[kind],
           is_f32 ? "f32" : "f64", n, gz_strerror(rc));
  if (rc != GZ_OK)
    goto done;
  GZ_CHECK(size <= cap, "stream %zu > bound %zu", size, cap);
  rc = gz_stream_info(stream, size, &info);
  GZ_CHECK(rc == GZ_OK && info.count == n && info.stream_size == size, "stream info: %s",
           gz_strerror(rc));
  abs_eb = info.abs_bound;
  if (mode == GZ_EB_ABS)
    GZ_CHECK(abs_eb == eb, "ABS bound stored as %g, not %g", abs_eb, eb);
  memset(y, 0xA5, n * elem);
  rc = gz_decompress(stream, size, y, n);
  GZ_CHECK(rc == GZ_OK, "decompress: %s", gz_strerror(rc));
  for (size_t i = 0; i < n; i++) {
    double v = value_at(x, is_f32, i), w = value_at(y, is_f32, i);
    if (must_be_exact(v, is_f32) || abs_eb == 0) {
      inexact += !same_bits(x, y, is_f32, i);
    } else {
      /* the bound, checked in the element's own precision */
      violations += !(fabs(v - w) <= abs_eb);
    }
  }
  GZ_CHECK(violations == 0, "%s %s %s eb=%g n=%zu: %zu bound violations",
           field_names[kind], is_f32 ? "f32" : "f64", mode == GZ_EB_ABS ? "abs" : "rel",
           eb, n, violations);
  GZ_CHECK(inexact == 0, "%s %s eb=%g n=%zu: %zu values not bit-exact", field_names[kind],
           is_f32 ? "f32" : "f64", eb, n, inexact);
done:
  free(stream);
  free(x);
  free(y);
}

int main(void) {
  const size_t sizes[] = {0, 1, 2, 31, 32, 33, 1000, 4096 + 17, 70001};
  const double bounds[] = {0.0, 1e-7, 1e-4, 0.5};
  const uint32_t chunks[] = {0, 64, 4096};
  for (int is_f32 = 0; is_f32 <= 1; is_f32++)
    for (int k = 0; k < FIELD_COUNT; k++)
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++) {
          uint32_t chunk = chunks[(s + b) % 3];
          check_round_trip((field_kind_t)k, is_f32, GZ_EB_ABS, bounds[b], sizes[s],
                           chunk);
          if (bounds[b] > 0 && bounds[b] < 0.1)
            check_round_trip((field_kind_t)k, is_f32, GZ_EB_REL, bounds[b], sizes[s],
                             chunk);
        }
  /* Bounds below the float spacing of the data: every value must still be
   * within the bound, so most are stored verbatim. */
  check_round_trip(FIELD_SMOOTH, 1, GZ_EB_ABS, 1e-12, 5000, 0);
  check_round_trip(FIELD_HUGE_RANGE, 0, GZ_EB_ABS, 1e-300, 5000, 0);
  return gz_test_finish();
}
