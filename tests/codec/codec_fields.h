/* codec_fields.h - seeded test fields for the codec tests, in double; each
 * test converts to its dtype. */
#ifndef GZ_CODEC_FIELDS_H
#define GZ_CODEC_FIELDS_H

#include "gz_test.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef enum {
  FIELD_SMOOTH,
  FIELD_NOISE,
  FIELD_CONSTANT,
  FIELD_SPECIALS, /* NaN (with payloads), +-Inf, -0.0 among smooth values */
  FIELD_DENORMAL,
  FIELD_EXTREMES, /* +-FLT_MAX / +-DBL_MAX and tiny values */
  FIELD_ALTERNATING,
  FIELD_HUGE_RANGE, /* values whose codes overflow at small bounds */
  FIELD_COUNT
} field_kind_t;

static const char *const field_names[FIELD_COUNT] = {
    "smooth",   "noise",    "constant",    "specials",
    "denormal", "extremes", "alternating", "huge-range"};

/* Fill x (float32 when is_f32, else float64) with n values of a kind. */
static inline void field_fill(field_kind_t kind, int is_f32, void *x, size_t n,
                              uint64_t seed) {
  gz_rng_t rng;
  gz_rng_seed(&rng, seed);
  for (size_t i = 0; i < n; i++) {
    double v = 0, t = (double)i;
    switch (kind) {
    case FIELD_SMOOTH:
      v = sin(t * 0.01) + 0.5 * cos(t * 0.003) + 0.01 * gz_rng_normal(&rng);
      break;
    case FIELD_NOISE:
      v = 2.0 * gz_rng_uniform(&rng) - 1.0;
      break;
    case FIELD_CONSTANT:
      v = 3.25;
      break;
    case FIELD_SPECIALS: {
      uint64_t r = gz_rng_next(&rng) % 16;
      v = sin(t * 0.05);
      if (r == 0)
        v = NAN;
      else if (r == 1)
        v = INFINITY;
      else if (r == 2)
        v = -INFINITY;
      else if (r == 3)
        v = -0.0;
      break;
    }
    case FIELD_DENORMAL:
      v = (gz_rng_uniform(&rng) - 0.5) * (is_f32 ? 1e-39 : 1e-310);
      break;
    case FIELD_EXTREMES: {
      double big = is_f32 ? FLT_MAX : DBL_MAX;
      uint64_t r = gz_rng_next(&rng) % 4;
      v = r == 0 ? big : r == 1 ? -big : r == 2 ? 1e-30 : gz_rng_normal(&rng);
      break;
    }
    case FIELD_ALTERNATING:
      v = (i % 2 ? -1.0 : 1.0) * (1.0 + 1e-3 * (double)(i % 7));
      break;
    case FIELD_HUGE_RANGE:
      v = gz_rng_normal(&rng) * (is_f32 ? 1e30 : 1e200);
      break;
    case FIELD_COUNT:
      break;
    }
    if (is_f32)
      ((float *)x)[i] = (float)v;
    else
      ((double *)x)[i] = v;
  }
  /* NaN payloads must survive too. */
  if (kind == FIELD_SPECIALS && n > 3) {
    if (is_f32) {
      uint32_t bits = 0x7fc01234u;
      memcpy((float *)x + 3, &bits, 4);
    } else {
      uint64_t bits = 0xfff8000000abcdefull;
      memcpy((double *)x + 3, &bits, 8);
    }
  }
}

#endif
