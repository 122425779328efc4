/* check_bound.c - independent check of a round trip: read the original and
 * the decompressed variable with the io module and require, for every
 * element, |x - y| <= EB (finite x) or the same special (NaN, Inf).
 * EB "rel:R" means R times the value range of the finite original values.
 * Usage: check_bound ORIG VAR|- OUT VAR|- EB [DIMS for raw files, f32] */
#include "gz_test.h"

#include "app.h"
#include "gz_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *load(const char *path, const char *var, const char *dims, size_t *n) {
  gz_raw_opts_t raw;
  gz_reader_t *r = NULL;
  char err[512];
  double *x = NULL;
  memset(&raw, 0, sizeof raw);
  raw.dtype = GZ_FLOAT32;
  if (dims && gz_parse_dims(dims, &raw) != 0)
    return NULL;
  if (gz_reader_open(path, strcmp(var, "-") ? var : NULL, dims ? &raw : NULL,
                     MPI_COMM_SELF, &r, err, sizeof err) != 0) {
    fprintf(stderr, "check_bound: %s\n", err);
    return NULL;
  }
  *n = gz_reader_records(r) * gz_reader_record_size(r);
  x = malloc(*n * sizeof *x + 1);
  if (x &&
      gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT64, x, err, sizeof err) != 0) {
    fprintf(stderr, "check_bound: %s\n", err);
    free(x);
    x = NULL;
  }
  gz_reader_close(r);
  return x;
}

int main(int argc, char **argv) {
  size_t n = 0, m = 0, bad = 0, specials = 0;
  double *x, *y, eb;
  MPI_Init(&argc, &argv);
  if (argc < 6) {
    fprintf(stderr, "usage: check_bound ORIG VAR OUT VAR EB [DIMS]\n");
    MPI_Finalize();
    return 2;
  }
  x = load(argv[1], argv[2], argc > 6 ? argv[6] : NULL, &n);
  eb = atof(argv[5]);
  if (!strncmp(argv[5], "rel:", 4)) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; x && i < n; i++)
      if (isfinite(x[i])) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
      }
    eb = atof(argv[5] + 4) * (hi - lo);
  }
  y = load(argv[3], argv[4], argc > 6 ? argv[6] : NULL, &m);
  GZ_CHECK(x && y && n == m && n > 0, "both files read with the same count (%zu, %zu)", n,
           m);
  for (size_t i = 0; x && y && n == m && i < n; i++) {
    if (isfinite(x[i])) {
      bad += !(fabs(x[i] - y[i]) <= eb);
    } else {
      specials++;
      bad += !(isnan(x[i]) ? isnan(y[i]) : x[i] == y[i]);
    }
  }
  GZ_CHECK(bad == 0, "%zu of %zu elements outside the bound %g (%zu non-finite)", bad, n,
           eb, specials);
  free(x);
  free(y);
  int code = gz_test_finish();
  MPI_Finalize();
  return code;
}
