/* check_bound.c - independent check of a round trip: read the original and
 * the decompressed variable with the io module and require, for every
 * element, |x - y| <= EB (finite x) or the same special (NaN, Inf).
 * EB may name a mode of gzstack compress --eb-mode, the bound then derived
 * here from the original's valid values (finite, not its _FillValue /
 * missing_value), and the mode's target checked too:
 *   rel:R   EB = R x range
 *   psnr:P  EB = range x 10^(-P/20), and PSNR over the valid values >= P
 *   norm:L  EB = L / sqrt(N), and the L2 norm of the error <= L
 * Usage: check_bound ORIG VAR|- OUT VAR|- EB [DIMS for raw files, f32] */
#include "gz_test.h"

#include "app.h"
#include "gz_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *load(const char *path, const char *var, const char *dims, size_t *n,
                    int *has_fill, double *fill) {
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
  *has_fill = gz_reader_meta(r)->has_fill;
  *fill = gz_reader_meta(r)->fill_value;
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
  size_t n = 0, m = 0, bad = 0, specials = 0, valid = 0;
  double *x, *y, eb, fill = 0, yfill, lo = INFINITY, hi = -INFINITY, sq_valid = 0, sq = 0;
  double target = 0;
  int has_fill = 0, yhas_fill, psnr = 0, norm = 0, rel = 0;
  MPI_Init(&argc, &argv);
  if (argc < 6) {
    fprintf(stderr, "usage: check_bound ORIG VAR OUT VAR EB [DIMS]\n");
    MPI_Finalize();
    return 2;
  }
  psnr = !strncmp(argv[5], "psnr:", 5);
  norm = !strncmp(argv[5], "norm:", 5);
  rel = !strncmp(argv[5], "rel:", 4);
  target = psnr || norm ? atof(argv[5] + 5) : rel ? atof(argv[5] + 4) : 0;
  x = load(argv[1], argv[2], argc > 6 ? argv[6] : NULL, &n, &has_fill, &fill);
  for (size_t i = 0; x && i < n; i++)
    if (isfinite(x[i]) && !(has_fill && x[i] == fill)) {
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
      valid++;
    }
  eb = rel    ? target * (hi - lo)
       : psnr ? (hi - lo) * pow(10.0, -target / 20)
       : norm ? target / sqrt((double)n)
              : atof(argv[5]);
  y = load(argv[3], argv[4], argc > 6 ? argv[6] : NULL, &m, &yhas_fill, &yfill);
  GZ_CHECK(x && y && n == m && n > 0, "both files read with the same count (%zu, %zu)", n,
           m);
  for (size_t i = 0; x && y && n == m && i < n; i++) {
    if (isfinite(x[i])) {
      double d = y[i] - x[i];
      bad += !(fabs(d) <= eb);
      sq += d * d;
      if (!(has_fill && x[i] == fill))
        sq_valid += d * d;
    } else {
      specials++;
      bad += !(isnan(x[i]) ? isnan(y[i]) : x[i] == y[i]);
    }
  }
  GZ_CHECK(bad == 0, "%zu of %zu elements outside the bound %g (%zu non-finite)", bad, n,
           eb, specials);
  if (psnr) {
    double got = sq_valid > 0 ? 20 * log10(hi - lo) - 10 * log10(sq_valid / (double)valid)
                              : INFINITY;
    GZ_CHECK(got >= target, "PSNR %.4f dB over %zu valid values, target %g", got, valid,
             target);
    printf("check_bound: PSNR %.4f dB >= %g (bound %g)\n", got, target, eb);
  }
  if (norm) {
    GZ_CHECK(sqrt(sq) <= target, "L2 norm of the error %g, target %g", sqrt(sq), target);
    printf("check_bound: L2 norm %g <= %g (bound %g)\n", sqrt(sq), target, eb);
  }
  free(x);
  free(y);
  int code = gz_test_finish();
  MPI_Finalize();
  return code;
}
