/* codec_check.h - the element check shared by the format-2 tests: lossless
 * streams give every bit back; lossy ones give NaN, +-Inf, -0.0 and
 * subnormals back bit-exact and every other value within eb. Returns the
 * number of violating elements. */
#ifndef GZ_CODEC_CHECK_H
#define GZ_CODEC_CHECK_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

static inline size_t codec_violations(int is_f32, const void *x, const void *y, size_t n,
                                      double eb) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double a, b, tiny = is_f32 ? FLT_MIN : DBL_MIN;
    int same;
    if (is_f32) {
      a = ((const float *)x)[i];
      b = ((const float *)y)[i];
      same = !memcmp((const float *)x + i, (const float *)y + i, 4);
    } else {
      a = ((const double *)x)[i];
      b = ((const double *)y)[i];
      same = !memcmp((const double *)x + i, (const double *)y + i, 8);
    }
    if (eb == 0 || !isfinite(a) || fabs(a) < tiny)
      bad += !same; /* specials, zeros' signs and subnormals bit-exact */
    else
      bad += !(fabs(a - b) <= eb);
  }
  return bad;
}

#endif
