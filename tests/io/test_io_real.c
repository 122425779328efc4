/* test_io_real.c - the real datasets of ../shared/data, one per run (argv[1]:
 * ccsm3, ersst, wrf, soda, f3); each skips when its file is absent. Checks
 * the shapes, ranges and missing fractions stated in the data README, the
 * metadata, slab reads against full reads, each rank reading its share of
 * records, ERSST and WRF read through HDF5 as well as netCDF (identical
 * values and metadata), and a write/read round trip of CCSM3 to netCDF and
 * HDF5. */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

typedef struct {
  double min, max;
  size_t nan, fill, n;
} stats_t;

static stats_t stats_of(const float *v, size_t n, const gz_meta_t *m) {
  stats_t s = {INFINITY, -INFINITY, 0, 0, n};
  for (size_t i = 0; i < n; i++) {
    if (isnan(v[i])) {
      s.nan++;
      continue;
    }
    if (m->has_fill && v[i] == (float)m->fill_value) {
      s.fill++;
      continue;
    }
    if (v[i] < s.min)
      s.min = v[i];
    if (v[i] > s.max)
      s.max = v[i];
  }
  return s;
}

/* Open (format fmt or detect), read everything as float (*out, malloc'ed). */
static gz_reader_t *open_all(const char *path, gz_format_t fmt, const char *var,
                             const gz_raw_opts_t *raw, float **out) {
  char err[1024];
  gz_reader_t *r = NULL;
  *out = NULL;
  if (!GZ_CHECK(gz_reader_open_format(path, fmt, var, raw, MPI_COMM_WORLD, &r, err,
                                      sizeof err) == 0,
                "open %s %s: %s", path, var ? var : "(default)", err))
    return NULL;
  size_t n = gz_reader_records(r) * gz_reader_record_size(r);
  *out = malloc(n * sizeof **out);
  if (!GZ_CHECK(*out && gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT32, *out, err,
                                       sizeof err) == 0,
                "read %s: %s", path, err)) {
    gz_reader_close(r);
    free(*out);
    *out = NULL;
    return NULL;
  }
  return r;
}

static void check_shape(const gz_meta_t *m, int ndims, const size_t *dims,
                        const char *const *names, const char *label) {
  if (!GZ_CHECK(m->ndims == ndims, "%s: %d dims, expected %d", label, m->ndims, ndims))
    return;
  for (int i = 0; i < ndims; i++) {
    GZ_CHECK(m->dims[i] == dims[i], "%s: dims[%d] = %zu, expected %zu", label, i,
             m->dims[i], dims[i]);
    if (names)
      GZ_CHECK(strcmp(m->dim_names[i], names[i]) == 0,
               "%s: dim %d is '%s', expected '%s'", label, i, m->dim_names[i], names[i]);
  }
}

static void check_range(stats_t s, double lo, double hi, double tol, const char *label) {
  GZ_CHECK(fabs(s.min - lo) <= tol && fabs(s.max - hi) <= tol,
           "%s: range %.6g .. %.6g, expected %.6g .. %.6g", label, s.min, s.max, lo, hi);
  if (rank == 0)
    printf("%s: %zu values, range %.6g .. %.6g, %zu NaN (%.2f %%), %zu fill\n", label,
           s.n, s.min, s.max, s.nan, 100.0 * (double)s.nan / (double)s.n, s.fill);
}

/* Slabs and per-rank record shares against the full read; f64 = widened. */
static void check_parts(gz_reader_t *r, const float *all, const char *label) {
  size_t recs = gz_reader_records(r), rs = gz_reader_record_size(r), bad = 0;
  char err[1024];
  gz_rng_t rng;
  float *part = malloc(rs * sizeof *part);
  double *rec64 = malloc(rs * sizeof *rec64);
  gz_rng_seed(&rng, 1234);
  for (int k = 0; k < 50; k++) {
    size_t rec = gz_rng_next(&rng) % recs, off = gz_rng_next(&rng) % rs;
    size_t n = gz_rng_next(&rng) % (rs - off + 1);
    if (!GZ_CHECK(
            gz_reader_read_part(r, rec, off, n, GZ_FLOAT32, part, err, sizeof err) == 0,
            "%s: part: %s", label, err))
      break;
    bad += memcmp(part, all + rec * rs + off, n * sizeof *part) != 0;
  }
  GZ_CHECK(bad == 0, "%s: %zu slabs differ from the full read", label, bad);
  bad = 0;
  for (size_t rec = (size_t)rank; rec < recs; rec += (size_t)nranks) {
    if (!GZ_CHECK(gz_reader_read(r, rec, 1, GZ_FLOAT64, rec64, err, sizeof err) == 0,
                  "%s: record %zu: %s", label, rec, err))
      break;
    for (size_t i = 0; i < rs; i++)
      bad += !iot_same(rec64[i], (double)all[rec * rs + i]);
  }
  GZ_CHECK(bad == 0, "%s: %zu values of this rank's records differ as f64", label, bad);
  free(part);
  free(rec64);
}

static void test_ccsm3(void) {
  const char *path =
      gz_test_require_data_mpi("climate_ccsm3_trefht/TREFHT.B06.57.atm.1890-1999ANN.nc");
  static const size_t dims[] = {110, 64, 128};
  static const char *const names[] = {"time", "lat", "lon"};
  float *v = NULL;
  gz_reader_t *r;
  GZ_CHECK(gz_io_detect(path) == GZ_FMT_NETCDF, "ccsm3 detected as netCDF");
  if (!(r = open_all(path, GZ_FMT_UNKNOWN, NULL, NULL, &v)))
    return;
  const gz_meta_t *m = gz_reader_meta(r);
  const gz_attr_t *a;
  GZ_CHECK(strcmp(m->var, "TREFHT") == 0, "default variable '%s'", m->var);
  check_shape(m, 3, dims, names, "ccsm3");
  GZ_CHECK(m->dtype == GZ_FLOAT32 && strcmp(m->units, "K") == 0 &&
               strcmp(m->long_name, "Reference height temperature") == 0 &&
               !m->has_fill && !m->has_scale,
           "ccsm3 meta: dtype %d units '%s' long_name '%s'", (int)m->dtype, m->units,
           m->long_name);
  GZ_CHECK(m->coords[0].values && m->coords[1].values && m->coords[2].values &&
               m->coords[1].count == 64 && m->coords[2].count == 128,
           "ccsm3 coordinates");
  if (m->coords[1].values)
    GZ_CHECK(m->coords[1].values[0] < -87.0 && m->coords[1].values[63] > 87.0 &&
                 strcmp(m->coords[1].units, "degrees_north") == 0,
             "ccsm3 lat %.4g .. %.4g", m->coords[1].values[0], m->coords[1].values[63]);
  GZ_CHECK(strcmp(m->coords[0].units, "days since 1870-03-01 00:00:00") == 0,
           "ccsm3 time units '%s'", m->coords[0].units);
  a = gz_meta_find_attr(m, "time_op");
  GZ_CHECK(a && a->is_text && strcmp(a->text, "average") == 0, "ccsm3 time_op");
  a = gz_meta_find_global(m, "Conventions");
  GZ_CHECK(a && a->is_text && strcmp(a->text, "NCAR-CSM") == 0, "ccsm3 Conventions");
  a = gz_meta_find_global(m, "title");
  GZ_CHECK(a && a->is_text && a->count == 0, "ccsm3 empty title");
  stats_t s = stats_of(v, 110 * 64 * 128, m);
  GZ_CHECK(s.nan == 0, "ccsm3 has no NaN");
  check_range(s, 212.28, 302.99, 0.01, "ccsm3 TREFHT");
  check_parts(r, v, "ccsm3");
  {
    /* explicit name, and the error for a wrong one */
    gz_reader_t *r2 = NULL;
    char err[1024];
    GZ_CHECK(gz_reader_open(path, "TREFHT", NULL, MPI_COMM_SELF, &r2, err, sizeof err) ==
                 0,
             "by name: %s", err);
    gz_reader_close(r2);
    GZ_CHECK(
        gz_reader_open(path, "foo", NULL, MPI_COMM_SELF, &r2, err, sizeof err) == -1 &&
            iot_contains(err, path) &&
            iot_contains(err, "no variable 'foo' (variables: TREFHT, lat, lon, time)"),
        "wrong variable message: %s", err);
  }
  /* write to netCDF and HDF5, read back */
  const char *dir = iot_scratch_dir(MPI_COMM_WORLD);
  static const char *outs[] = {"ccsm3.nc", "ccsm3.h5"};
  for (int k = 0; k < 2 && dir[0]; k++) {
    char out[512], err[1024];
    int rc = 0;
    float *w = NULL;
    gz_reader_t *rw;
    snprintf(out, sizeof out, "%s/%s", dir, outs[k]);
    if (rank == 0)
      rc = gz_io_write(out, GZ_FMT_UNKNOWN, m, v, 0, err, sizeof err);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!GZ_CHECK(rc == 0, "write %s: %s", out, rank == 0 ? err : "(rank 0)"))
      continue;
    if ((rw = open_all(out, GZ_FMT_UNKNOWN, NULL, NULL, &w))) {
      iot_check_meta(m, gz_reader_meta(rw), k ? IOT_NO_VAR : 0, outs[k]);
      GZ_CHECK(memcmp(w, v, sizeof *v * 110 * 64 * 128) == 0, "%s: values differ",
               outs[k]);
      gz_reader_close(rw);
      free(w);
    }
  }
  if (dir[0])
    iot_scratch_remove(dir, MPI_COMM_WORLD);
  gz_reader_close(r);
  free(v);
}

static void test_ersst(void) {
  const char *path = gz_test_require_data_mpi("climate_ersst_v5/sst.mnmean.nc");
  static const size_t dims[] = {128, 89, 180};
  static const char *const names[] = {"time", "lat", "lon"};
  const size_t n = 128 * 89 * 180;
  float *v = NULL, *h = NULL;
  gz_reader_t *r, *rh;
  GZ_CHECK(gz_io_detect(path) == GZ_FMT_NETCDF, "ersst detected as netCDF");
  if (!(r = open_all(path, GZ_FMT_UNKNOWN, "sst", NULL, &v)))
    return;
  const gz_meta_t *m = gz_reader_meta(r);
  check_shape(m, 3, dims, names, "ersst");
  GZ_CHECK(m->dtype == GZ_FLOAT32 && strcmp(m->units, "degC") == 0, "ersst dtype/units");
  GZ_CHECK(m->has_fill && (float)m->fill_value == -9.96921e+36f,
           "ersst fill from missing_value (NaN _FillValue): %g", m->fill_value);
  GZ_CHECK(m->coords[0].values && m->coords[1].values && m->coords[2].values,
           "ersst coordinates");
  stats_t s = stats_of(v, n, m);
  /* Land is stored as missing_value (-9.96921e36), not NaN: the README's
   * 31.4 % "NaN" is what a masking reader (xarray) shows. */
  GZ_CHECK(fabs((double)(s.nan + s.fill) / (double)n - 0.314) < 0.005,
           "ersst missing fraction %.4f", (double)(s.nan + s.fill) / (double)n);
  check_range(s, -1.8, 34.10, 0.01, "ersst sst");
  check_parts(r, v, "ersst");
  {
    gz_reader_t *rd = NULL;
    char err[1024];
    GZ_CHECK(gz_reader_open(path, NULL, NULL, MPI_COMM_WORLD, &rd, err, sizeof err) ==
                     0 &&
                 strcmp(gz_reader_meta(rd)->var, "sst") == 0,
             "ersst default variable: %s", err);
    gz_reader_close(rd);
  }
  /* the same through HDF5 */
  if ((rh = open_all(path, GZ_FMT_HDF5, "/sst", NULL, &h))) {
    GZ_CHECK(gz_reader_format(rh) == GZ_FMT_HDF5, "ersst hdf5 reader");
    GZ_CHECK(strcmp(gz_reader_meta(rh)->var, "/sst") == 0, "ersst hdf5 path");
    iot_check_meta(m, gz_reader_meta(rh), IOT_NO_VAR, "ersst via HDF5");
    GZ_CHECK(memcmp(v, h, n * sizeof *v) == 0, "ersst: HDF5 and netCDF values differ");
    check_parts(rh, h, "ersst hdf5");
    gz_reader_close(rh);
    free(h);
  }
  gz_reader_close(r);
  free(v);
}

static void test_wrf(void) {
  const char *path = gz_test_require_data_mpi("weather_wrf_katrina/wrf_ci_test_file.nc");
  static const size_t dt[] = {4, 14, 48, 48}, du[] = {4, 14, 48, 49}, d2[] = {4, 48, 48};
  static const char *const nt[] = {"Time", "bottom_top", "south_north", "west_east"};
  float *v = NULL, *h = NULL;
  gz_reader_t *r, *rh;
  char err[1024];
  if ((r = open_all(path, GZ_FMT_UNKNOWN, "T", NULL, &v))) {
    const gz_meta_t *m = gz_reader_meta(r);
    check_shape(m, 4, dt, nt, "wrf T");
    GZ_CHECK(!m->coords[0].values && !m->coords[3].values, "wrf T has no coordinates");
    check_range(stats_of(v, 4 * 14 * 48 * 48, m), 0.31, 42.66, 0.01, "wrf T");
    check_parts(r, v, "wrf T");
    if ((rh = open_all(path, GZ_FMT_HDF5, "/T", NULL, &h))) {
      iot_check_meta(m, gz_reader_meta(rh), IOT_NO_VAR, "wrf T via HDF5");
      GZ_CHECK(memcmp(v, h, 4 * 14 * 48 * 48 * sizeof *v) == 0, "wrf T: HDF5 differs");
      gz_reader_close(rh);
      free(h);
    }
    gz_reader_close(r);
    free(v);
  }
  if ((r = open_all(path, GZ_FMT_UNKNOWN, "U", NULL, &v))) {
    check_shape(gz_reader_meta(r), 4, du, NULL, "wrf U");
    gz_reader_close(r);
    free(v);
  }
  if ((r = open_all(path, GZ_FMT_UNKNOWN, "QVAPOR", NULL, &v))) {
    check_range(stats_of(v, 4 * 14 * 48 * 48, gz_reader_meta(r)), 0.00107, 0.0250,
                0.00001, "wrf QVAPOR");
    gz_reader_close(r);
    free(v);
  }
  if ((r = open_all(path, GZ_FMT_UNKNOWN, "W", NULL, &v))) {
    check_range(stats_of(v, 4 * 15 * 48 * 48, gz_reader_meta(r)), -2.71, 7.89, 0.01,
                "wrf W");
    gz_reader_close(r);
    free(v);
  }
  if ((r = open_all(path, GZ_FMT_UNKNOWN, "T2", NULL, &v))) {
    check_shape(gz_reader_meta(r), 3, d2, NULL, "wrf T2");
    gz_reader_close(r);
    free(v);
  }
  r = NULL;
  GZ_CHECK(gz_reader_open(path, NULL, NULL, MPI_COMM_WORLD, &r, err, sizeof err) == -1 &&
               iot_contains(err, "several") && iot_contains(err, "QVAPOR"),
           "wrf: no default among many variables: %.200s", err);
}

static void test_raw(const char *rel, size_t d1, size_t d2, size_t recs, double lo,
                     double hi, double tol, const char *label) {
  const char *path = gz_test_require_data_mpi(rel);
  gz_raw_opts_t raw = {3, {0, d1, d2}, GZ_FLOAT32, 0};
  float *v = NULL;
  gz_reader_t *r;
  char err[1024];
  GZ_CHECK(gz_io_detect(path) == GZ_FMT_RAW, "%s detected as raw", label);
  if (!(r = open_all(path, GZ_FMT_UNKNOWN, NULL, &raw, &v)))
    return;
  GZ_CHECK(gz_reader_records(r) == recs && gz_reader_record_size(r) == d1 * d2,
           "%s: %zu records of %zu", label, gz_reader_records(r),
           gz_reader_record_size(r));
  stats_t s = stats_of(v, recs * d1 * d2, gz_reader_meta(r));
  GZ_CHECK(s.nan == 0, "%s has no NaN", label);
  check_range(s, lo, hi, tol, label);
  check_parts(r, v, label);
  if (tol == 0) {
    size_t frac = 0;
    for (size_t i = 0; i < recs * d1 * d2; i++)
      frac += v[i] != rintf(v[i]);
    GZ_CHECK(frac == 0, "%s: %zu values are not integers", label, frac);
  }
  gz_reader_close(r);
  {
    gz_raw_opts_t wrong = {3, {0, d1 + 1, d2}, GZ_FLOAT32, 0};
    gz_reader_t *rw = NULL;
    GZ_CHECK(gz_reader_open(path, NULL, &wrong, MPI_COMM_WORLD, &rw, err, sizeof err) ==
                     -1 &&
                 iot_contains(err, "not a multiple"),
             "%s: wrong dims: %s", label, err);
  }
  free(v);
}

int main(int argc, char **argv) {
  const char *set = argc > 1 ? argv[1] : "";
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  if (strcmp(set, "ccsm3") == 0)
    test_ccsm3();
  else if (strcmp(set, "ersst") == 0)
    test_ersst();
  else if (strcmp(set, "wrf") == 0)
    test_wrf();
  else if (strcmp(set, "soda") == 0)
    test_raw("seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw", 96, 2048, 24, -2.82,
             2.82, 0.01, "soda lakes");
  else if (strcmp(set, "f3") == 0)
    test_raw("seismic_f3_cube/f3_23x18x75_f32le.raw", 18, 75, 23, -10239, 10827, 0,
             "f3 cube");
  else
    GZ_CHECK(0, "unknown dataset '%s' (ccsm3, ersst, wrf, soda, f3)", set);
  return gz_test_end_mpi();
}
