/*
 * bench_codec.c - `gzbench codec`: single-thread compress / decompress
 * throughput, ratio, max error and PSNR of the gzstack codec and, in the same
 * run and at the same absolute bound, of ZFP's fixed-accuracy mode (when
 * libzfp was found at build time). Times are medians over --reps runs after
 * one warm-up run. Throughput counts uncompressed bytes (GB = 1e9 B).
 *
 * Data: a generated smooth 3-D field (--mb megabytes of float32, range
 * [-1, 1]) and the real datasets under GZ_DATA_DIR (see
 * ../shared/data/README.md); or explicit files with --input (netCDF/HDF5 with
 * --var, raw with --dims).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "app.h"
#include "bench.h"
#include "metrics.h"

#include "gzcoll.h"

#include <argtable2.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GZ_HAVE_ZFP
#include <zfp.h>
#endif

typedef struct bench_field {
  char name[96];
  float *x;
  size_t n;
  size_t nx, ny, nz; /* ZFP shape: nx fastest; ny, nz may be 1 */
  int has_nonfinite;
} bench_field_t;

typedef struct bench_row {
  double ratio, comp_gbs, dec_gbs, max_err, psnr;
  int ok; /* 0: not run (reason in note) */
  char note[64];
} bench_row_t;

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Smooth 3-D field: a few low-wavenumber plane waves, scaled to [-1, 1]. */
static int make_smooth(bench_field_t *f, size_t mb) {
  size_t nz = 256, ny = 256, nx = mb * 1000000 / 4 / (ny * nz);
  const double k[4][3] = {
      {1.3, 0.7, 0.4}, {0.3, 2.1, 1.1}, {2.7, 0.2, 0.9}, {0.5, 0.5, 3.1}};
  const double amp[4] = {1.0, 0.6, 0.3, 0.15}, phase[4] = {0.1, 1.7, 2.9, 0.6};
  double lo = INFINITY, hi = -INFINITY;
  if (nx < 16)
    nx = 16;
  f->n = nx * ny * nz;
  f->x = malloc(f->n * sizeof *f->x);
  if (!f->x)
    return -1;
  for (size_t z = 0; z < nz; z++)
    for (size_t y = 0; y < ny; y++)
      for (size_t i = 0; i < nx; i++) {
        double u = 6.28 * (double)i / (double)nx, v = 6.28 * (double)y / (double)ny,
               w = 6.28 * (double)z / (double)nz, s = 0;
        for (int m = 0; m < 4; m++)
          s += amp[m] * sin(k[m][0] * u + k[m][1] * v + k[m][2] * w + phase[m]);
        f->x[(z * ny + y) * nx + i] = (float)s;
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
      }
  for (size_t i = 0; i < f->n; i++)
    f->x[i] = (float)(2 * ((double)f->x[i] - lo) / (hi - lo) - 1);
  f->nx = nx;
  f->ny = ny;
  f->nz = nz;
  snprintf(f->name, sizeof f->name, "smooth3d %zux%zux%zu", nz, ny, nx);
  return 0;
}

/* Read a whole variable as float32 through the io module. */
static int load_file(bench_field_t *f, const char *label, const char *path,
                     const char *var, const gz_raw_opts_t *raw) {
  gz_reader_t *r = NULL;
  char err[512];
  const gz_meta_t *m;
  size_t d;
  if (gz_reader_open(path, var, raw, MPI_COMM_SELF, &r, err, sizeof err) != 0) {
    fprintf(stderr, "gzbench codec: skipping %s: %s\n", label, err);
    return -1;
  }
  m = gz_reader_meta(r);
  f->n = gz_reader_records(r) * gz_reader_record_size(r);
  f->x = malloc(f->n * sizeof *f->x + 1);
  if (!f->x || gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT32, f->x, err,
                              sizeof err) != 0) {
    fprintf(stderr, "gzbench codec: skipping %s: %s\n", label, err);
    free(f->x);
    f->x = NULL;
    gz_reader_close(r);
    return -1;
  }
  /* ZFP sees the last two dimensions as x, y and folds the rest into z. */
  f->nx = m->dims[m->ndims - 1];
  f->ny = m->ndims > 1 ? m->dims[m->ndims - 2] : 1;
  f->nz = f->n / (f->nx * f->ny);
  for (d = 0; d < f->n; d++)
    f->has_nonfinite |= !isfinite(f->x[d]);
  snprintf(f->name, sizeof f->name, "%s", label);
  gz_reader_close(r);
  return 0;
}

static void quality(const float *x, const float *y, size_t n, double *max_err,
                    double *psnr) {
  double lo = INFINITY, hi = -INFINITY, sq = 0, mx = 0;
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i]))
      continue;
    double e = fabs((double)y[i] - (double)x[i]);
    mx = e > mx || isnan(e) ? e : mx;
    sq += e * e;
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    count++;
  }
  *max_err = mx;
  *psnr = sq > 0 ? 20 * log10(hi - lo) - 10 * log10(sq / (double)count) : INFINITY;
}

/* A codec's row: ratio of size compressed bytes, median speeds of the reps
 * compress (tc) and decompress (td) times after the warm-up run's (tc[0],
 * td[0]), quality of y against f. */
static void record(const bench_field_t *f, const float *y, size_t size, double *tc,
                   double *td, int reps, bench_row_t *row) {
  row->ratio = (double)(f->n * 4) / (double)size;
  row->comp_gbs = (double)(f->n * 4) / gz_bench_median(tc + 1, reps) / 1e9;
  row->dec_gbs = (double)(f->n * 4) / gz_bench_median(td + 1, reps) / 1e9;
  quality(f->x, y, f->n, &row->max_err, &row->psnr);
  row->ok = 1;
}

static void bench_gz(const bench_field_t *f, double eb, int reps, bench_row_t *row) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t cap = gz_compress_bound(GZ_FLOAT32, f->n, 0), size = 0;
  uint8_t *s = malloc(cap);
  float *y = malloc(f->n * sizeof *y + 1);
  double tc[33], td[33];
  p.error_bound = eb;
  if (!s || !y) {
    snprintf(row->note, sizeof row->note, "out of memory");
    goto done;
  }
  for (int r = -1; r < reps; r++) {
    double t0 = seconds();
    gz_compress(&p, f->x, f->n, s, cap, &size);
    double t1 = seconds();
    gz_decompress(s, size, y, f->n);
    double t2 = seconds();
    tc[r + 1] = t1 - t0; /* [0]: the warm-up run */
    td[r + 1] = t2 - t1;
  }
  record(f, y, size, tc, td, reps, row);
done:
  free(s);
  free(y);
}

static void bench_zfp(const bench_field_t *f, double eb, int reps, bench_row_t *row) {
#ifdef GZ_HAVE_ZFP
  zfp_field *field = NULL, *out = NULL;
  zfp_stream *zs = zfp_stream_open(NULL);
  bitstream *bs = NULL;
  void *buf = NULL;
  float *y = malloc(f->n * sizeof *y + 1);
  double tc[33], td[33];
  size_t cap, size = 0;
  if (f->has_nonfinite) {
    snprintf(row->note, sizeof row->note, "n/a: NaN/Inf in data");
    goto done;
  }
  field = zfp_field_3d(f->x, zfp_type_float, f->nx, f->ny, f->nz);
  out = zfp_field_3d(y, zfp_type_float, f->nx, f->ny, f->nz);
  zfp_stream_set_accuracy(zs, eb);
  cap = zfp_stream_maximum_size(zs, field);
  buf = malloc(cap);
  if (!buf || !y) {
    snprintf(row->note, sizeof row->note, "out of memory");
    goto done;
  }
  bs = stream_open(buf, cap);
  zfp_stream_set_bit_stream(zs, bs);
  for (int r = -1; r < reps; r++) {
    double t0 = seconds();
    zfp_stream_rewind(zs);
    size = zfp_compress(zs, field);
    double t1 = seconds();
    zfp_stream_rewind(zs);
    zfp_decompress(zs, out);
    double t2 = seconds();
    tc[r + 1] = t1 - t0; /* [0]: the warm-up run */
    td[r + 1] = t2 - t1;
  }
  record(f, y, size, tc, td, reps, row);
done:
  if (bs)
    stream_close(bs);
  zfp_stream_close(zs);
  if (field)
    zfp_field_free(field);
  if (out)
    zfp_field_free(out);
  free(buf);
  free(y);
#else
  (void)f;
  (void)eb;
  (void)reps;
  snprintf(row->note, sizeof row->note, "n/a: built without libzfp");
#endif
}

static void print_cell(const bench_row_t *r) {
  if (r->ok)
    printf(" %7.2f | %6.3f | %6.3f | %9.3g | %6.1f |", r->ratio, r->comp_gbs, r->dec_gbs,
           r->max_err, r->psnr);
  else
    printf(" %s | | | | |", r->note);
}

static void run_field(const bench_field_t *f, double e, int rel, int reps) {
  bench_row_t gz = {0}, zfp = {0};
  double lo = INFINITY, hi = -INFINITY, eb = e;
  if (rel) {
    for (size_t i = 0; i < f->n; i++)
      if (isfinite(f->x[i])) {
        lo = f->x[i] < lo ? f->x[i] : lo;
        hi = f->x[i] > hi ? f->x[i] : hi;
      }
    eb = e * (hi - lo);
  }
  bench_gz(f, eb, reps, &gz);
  bench_zfp(f, eb, reps, &zfp);
  printf("| %s | %.3g |", f->name, eb);
  print_cell(&gz);
  print_cell(&zfp);
  printf("\n");
  fflush(stdout);
}

int gz_bench_codec(int argc, char **argv) {
  struct arg_dbl *e = arg_dbl0("e", "error-bound", "E", "absolute bound (default 1e-4)");
  struct arg_lit *rel = arg_lit0(NULL, "rel", "bound relative to each field's range");
  struct arg_int *mb = arg_int0(NULL, "mb", "MB", "size of the generated field (128)");
  struct arg_int *reps = arg_int0(NULL, "reps", "N", "timed repetitions (5)");
  struct arg_lit *no_real = arg_lit0(NULL, "no-real", "skip the real datasets");
  struct arg_lit *help = arg_lit0("h", "help", "this help");
  struct arg_end *end = arg_end(10);
  void *table[] = {e, rel, mb, reps, no_real, help, end};
  int nerr = arg_parse(argc, argv, table), code = 0;
  double eb = e->count ? e->dval[0] : 1e-4;
  int nreps = reps->count ? reps->ival[0] : 5;
  const char *dir = getenv("GZ_DATA_DIR");
  bench_field_t f;

  if (help->count || nerr || nreps < 1 || nreps > 32 || !(eb > 0)) {
    if (nerr)
      arg_print_errors(stderr, end, "gzbench codec");
    printf("Usage: gzbench codec [options]\n");
    arg_print_glossary(stdout, table, "  %-22s %s\n");
    printf("\nExample: gzbench codec -e 1e-4 --mb 128 --reps 5\n");
    code = help->count ? 0 : 2;
    goto done;
  }
  printf("gzbench codec: single thread, median of %d runs after a warm-up; GB/s of "
         "uncompressed data\n\n",
         nreps);
  printf(
      "| data | abs bound | gz ratio | gz comp GB/s | gz dec GB/s | gz max err | gz PSNR "
      "| zfp ratio | zfp comp GB/s | zfp dec GB/s | zfp max err | zfp PSNR |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  memset(&f, 0, sizeof f);
  if (make_smooth(&f, mb->count ? (size_t)mb->ival[0] : 128) == 0)
    run_field(&f, eb, 0, nreps);
  free(f.x);
  if (!no_real->count && dir) {
    struct {
      const char *label, *file, *var, *dims;
    } real[] = {
        {"CCSM3 TREFHT", "climate_ccsm3_trefht/TREFHT.B06.57.atm.1890-1999ANN.nc",
         "TREFHT", NULL},
        {"ERSST v5 sst", "climate_ersst_v5/sst.mnmean.nc", "sst", NULL},
        {"WRF Katrina T", "weather_wrf_katrina/wrf_ci_test_file.nc", "T", NULL},
        {"soda lakes shots", "seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw", NULL,
         "24x96x2048"},
        {"F3 cube", "seismic_f3_cube/f3_23x18x75_f32le.raw", NULL, "23x18x75"},
    };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
      char path[4096];
      gz_raw_opts_t raw;
      memset(&raw, 0, sizeof raw);
      raw.dtype = GZ_FLOAT32;
      if (real[i].dims)
        gz_parse_dims(real[i].dims, &raw);
      snprintf(path, sizeof path, "%s/%s", dir, real[i].file);
      memset(&f, 0, sizeof f);
      if (load_file(&f, real[i].label, path, real[i].var, real[i].dims ? &raw : NULL) ==
          0)
        run_field(&f, eb, rel->count, nreps);
      free(f.x);
    }
  }
done:
  arg_freetable(table, sizeof table / sizeof *table);
  return code;
}
