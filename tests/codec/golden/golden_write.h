/* golden_write.h - what the make_golden_*.c records share (not built, as
 * they are not): one case compressed with p, decompressed, and written as
 * NAME.gzc (the stream) and NAME.out (the exact decoded bytes), which
 * test_codec_golden.c compares. Public API only, as at the commits the
 * records were built at. The functions are static inline: test_codec_golden.c
 * includes this for golden_case_t and golden_params. */
#ifndef GOLDEN_WRITE_H
#define GOLDEN_WRITE_H

#include "codec_fields.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>

static inline void dump(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "%s: write failed\n", path);
    exit(1);
  }
}

/* One record of the format-2 generators. */
typedef struct golden_case {
  const char *name;
  field_kind_t kind;
  int is_f32;
  double eb;
  gz_predictor_t pred;
  unsigned ndims;
  size_t dims[3];
} golden_case_t;

/* The parameters of a case: dtype, bound, predictor, ndims dims; *n gets the
 * value count. */
static inline gz_codec_params_t golden_params(int is_f32, double eb, gz_predictor_t pred,
                                              unsigned ndims, const size_t *dims,
                                              size_t *n) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  p.dtype = is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.predictor = pred;
  p.ndims = ndims;
  *n = 1;
  for (unsigned d = 0; d < ndims; d++) {
    p.dims[d] = dims[d];
    *n *= dims[d];
  }
  return p;
}

/* n values of kind (float32 if is_f32) from seed, the stream bound for
 * chunk; 1 if the codec failed, else 0. */
static inline int golden_write(const char *name, const gz_codec_params_t *p,
                               field_kind_t kind, int is_f32, size_t n, uint32_t chunk,
                               uint64_t seed) {
  size_t elem = is_f32 ? 4 : 8, size = 0, cap = gz_compress_bound(p->dtype, n, chunk);
  void *x = malloc(n * elem), *y = malloc(n * elem);
  uint8_t *s = malloc(cap);
  char path[256];
  field_fill(kind, is_f32, x, n, seed);
  if (gz_compress(p, x, n, s, cap, &size) != GZ_OK ||
      gz_decompress(s, size, y, n) != GZ_OK) {
    fprintf(stderr, "%s: codec failed\n", name);
    return 1;
  }
  snprintf(path, sizeof path, "%s.gzc", name);
  dump(path, s, size);
  snprintf(path, sizeof path, "%s.out", name);
  dump(path, y, n * elem);
  printf("%s: %zu values, %zu bytes\n", name, n, size);
  free(x);
  free(y);
  free(s);
  return 0;
}

#endif
