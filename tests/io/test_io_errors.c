/* test_io_errors.c - every unusable input gives -1, no reader, and a message
 * that names the file and the cause: missing, empty, directory, garbage,
 * fake signatures, truncated netCDF (classic and 4) and HDF5, raw size
 * mismatches, unknown variables (the message lists the alternatives). Every
 * refused output leaves no file and no temporary behind. Run on 1 and 2
 * ranks: HDF5 failures must be agreed on by all ranks (no hang). */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;
static const char *dir;

static const char *in_dir(const char *name) {
  static char path[8][512];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

/* Open must fail with a message holding the file name and each of the
 * given fragments; or, when allow_open_then_read_fail, reading everything
 * must fail that way. */
static void expect_fail(const char *path, gz_format_t fmt, const char *var,
                        const gz_raw_opts_t *raw, const char *frag1, const char *frag2,
                        int allow_read_fail) {
  char err[1024] = "";
  gz_reader_t *r = (gz_reader_t *)&err; /* must be reset to NULL */
  int rc =
      gz_reader_open_format(path, fmt, var, raw, MPI_COMM_WORLD, &r, err, sizeof err);
  if (rc == 0 && allow_read_fail) {
    size_t n = gz_reader_records(r) * gz_reader_record_size(r);
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    rc = gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT32, buf, err, sizeof err);
    free(buf);
    gz_reader_close(r);
    r = NULL;
  }
  GZ_CHECK(rc == -1, "%s: expected a failure", path);
  GZ_CHECK(rc == -1 && r == NULL, "%s: no reader on failure", path);
  GZ_CHECK(iot_contains(err, path), "%s: message must name the file: '%s'", path, err);
  if (frag1)
    GZ_CHECK(iot_contains(err, frag1), "%s: message lacks '%s': '%s'", path, frag1, err);
  if (frag2)
    GZ_CHECK(iot_contains(err, frag2), "%s: message lacks '%s': '%s'", path, frag2, err);
  if (rank == 0 && getenv("GZ_TEST_VERBOSE"))
    printf("  %s\n", err);
  if (rc == 0 && r)
    gz_reader_close(r);
}

static void make_files(void) {
  gz_meta_t m;
  void *data;
  char err[512];
  unsigned char junk[3000];
  size_t size;
  void *whole;
  gz_rng_t rng;
  gz_rng_seed(&rng, 5);
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (unsigned char)gz_rng_next(&rng);
  iot_write_file(in_dir("empty.nc"), junk, 0);
  iot_write_file(in_dir("empty.h5"), junk, 0);
  iot_write_file(in_dir("empty.raw"), junk, 0);
  iot_write_file(in_dir("garbage.nc"), junk, sizeof junk);
  iot_write_file(in_dir("garbage.h5"), junk, sizeof junk);
  iot_write_file(in_dir("garbage.xyz"), junk, sizeof junk);
  iot_write_file(in_dir("raw1000.raw"), junk, 1000);
  memcpy(junk, "CDF\001", 4);
  iot_write_file(in_dir("fake_cdf.nc"), junk, sizeof junk);
  memcpy(junk, "\211HDF\r\n\032\n", 8);
  iot_write_file(in_dir("fake_hdf.h5"), junk, sizeof junk);
  iot_write_file(in_dir("fake_hdf_noext"), junk, sizeof junk);
  /* good files, then truncated copies */
  iot_make_meta(&m, GZ_FLOAT32, "temp");
  data = iot_make_data(&m, 3);
  GZ_CHECK(gz_io_write(in_dir("good.nc"), GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) ==
               0,
           "good.nc: %s", err);
  snprintf(m.var, sizeof m.var, "/grp/temp");
  GZ_CHECK(gz_io_write(in_dir("good.h5"), GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) ==
               0,
           "good.h5: %s", err);
  if ((whole = gz_test_read_file(in_dir("good.nc"), &size))) {
    iot_write_file(in_dir("trunc4.nc"), whole, size / 2);
    free(whole);
  }
  if ((whole = gz_test_read_file(in_dir("good.h5"), &size))) {
    iot_write_file(in_dir("trunc.h5"), whole, size / 2);
    free(whole);
  }
  free(data);
  gz_meta_free(&m);
  {
    /* classic netCDF, 4 x 100 x 100 floats, truncated in its data */
    int nc, d[3], v, rc = 0;
    float *f = calloc(40000, sizeof *f);
    rc |= nc_create(in_dir("classic.nc"), NC_CLOBBER, &nc);
    rc |= nc_def_dim(nc, "t", 4, &d[0]);
    rc |= nc_def_dim(nc, "y", 100, &d[1]);
    rc |= nc_def_dim(nc, "x", 100, &d[2]);
    rc |= nc_def_var(nc, "v", NC_FLOAT, 3, d, &v);
    rc |= nc_enddef(nc);
    rc |= nc_put_var_float(nc, v, f);
    rc |= nc_close(nc);
    GZ_CHECK(rc == 0, "classic.nc written");
    free(f);
    if ((whole = gz_test_read_file(in_dir("classic.nc"), &size))) {
      iot_write_file(in_dir("trunc3.nc"), whole, size / 2);
      iot_write_file(in_dir("trunc3_header.nc"), whole, 40);
      free(whole);
    }
  }
}

static void test_inputs(void) {
  gz_raw_opts_t raw = {3, {0, 32, 32}, GZ_FLOAT32, 0};
  gz_raw_opts_t raw_fixed = {3, {4, 32, 32}, GZ_FLOAT32, 0};
  gz_raw_opts_t raw_bad = {0, {0}, GZ_FLOAT32, 0};
  gz_raw_opts_t raw_zero = {2, {0, 0}, GZ_FLOAT32, 0};
  expect_fail(in_dir("none.nc"), GZ_FMT_UNKNOWN, NULL, NULL, "No such file", NULL, 0);
  expect_fail(in_dir("none.h5"), GZ_FMT_UNKNOWN, NULL, NULL, "No such file", NULL, 0);
  expect_fail(in_dir("none.raw"), GZ_FMT_UNKNOWN, NULL, &raw, "No such file", NULL, 0);
  expect_fail(in_dir("none.h5"), GZ_FMT_HDF5, "/x", NULL, "No such file", NULL, 0);
  expect_fail(in_dir("empty.nc"), GZ_FMT_UNKNOWN, NULL, NULL, "empty", NULL, 0);
  expect_fail(in_dir("empty.h5"), GZ_FMT_UNKNOWN, NULL, NULL, "empty", NULL, 0);
  expect_fail(in_dir("empty.raw"), GZ_FMT_UNKNOWN, NULL, &raw, "empty", NULL, 0);
  expect_fail(dir, GZ_FMT_UNKNOWN, NULL, NULL, "directory", NULL, 0);
  expect_fail(in_dir("garbage.nc"), GZ_FMT_UNKNOWN, NULL, NULL, "netCDF", NULL, 0);
  expect_fail(in_dir("garbage.h5"), GZ_FMT_UNKNOWN, NULL, NULL, "HDF5", NULL, 0);
  expect_fail(in_dir("garbage.xyz"), GZ_FMT_UNKNOWN, NULL, NULL, "--dims", NULL, 0);
  expect_fail(in_dir("garbage.nc"), GZ_FMT_HDF5, NULL, NULL, "HDF5", NULL, 0);
  expect_fail(in_dir("fake_cdf.nc"), GZ_FMT_UNKNOWN, NULL, NULL, NULL, NULL, 1);
  expect_fail(in_dir("fake_hdf.h5"), GZ_FMT_UNKNOWN, NULL, NULL, "HDF5", NULL, 0);
  expect_fail(in_dir("fake_hdf_noext"), GZ_FMT_UNKNOWN, NULL, NULL, "HDF5", NULL, 0);
  expect_fail(in_dir("trunc4.nc"), GZ_FMT_UNKNOWN, NULL, NULL, NULL, NULL, 1);
  expect_fail(in_dir("trunc.h5"), GZ_FMT_UNKNOWN, NULL, NULL, NULL, NULL, 1);
  expect_fail(in_dir("trunc3.nc"), GZ_FMT_UNKNOWN, NULL, NULL, NULL, NULL, 1);
  expect_fail(in_dir("trunc3_header.nc"), GZ_FMT_UNKNOWN, NULL, NULL, NULL, NULL, 1);
  /* raw sizes */
  expect_fail(in_dir("raw1000.raw"), GZ_FMT_UNKNOWN, NULL, &raw,
              "size 1000 bytes is not a multiple of the record size 4096", "32x32", 0);
  expect_fail(in_dir("raw1000.raw"), GZ_FMT_UNKNOWN, NULL, &raw_fixed, "truncated",
              "4x32x32", 0);
  expect_fail(in_dir("raw1000.raw"), GZ_FMT_UNKNOWN, NULL, NULL, "--dims", NULL, 0);
  expect_fail(in_dir("raw1000.raw"), GZ_FMT_UNKNOWN, NULL, &raw_bad, "dimensions", NULL,
              0);
  expect_fail(in_dir("raw1000.raw"), GZ_FMT_UNKNOWN, NULL, &raw_zero, "dimension 1", NULL,
              0);
  {
    gz_raw_opts_t small = {1, {100}, GZ_FLOAT32, 0}; /* 400 of 1000 bytes */
    expect_fail(in_dir("raw1000.raw"), GZ_FMT_RAW, NULL, &small, "larger", NULL, 0);
  }
  /* unknown variables list the alternatives */
  expect_fail(in_dir("good.nc"), GZ_FMT_UNKNOWN, "nope", NULL, "no variable 'nope'",
              "(variables: time, lat, temp)", 0);
  expect_fail(in_dir("good.nc"), GZ_FMT_UNKNOWN, "/nogroup/temp", NULL, "no group", NULL,
              0);
  expect_fail(in_dir("good.h5"), GZ_FMT_UNKNOWN, "/nope", NULL, "no dataset '/nope'",
              "/grp/temp", 0);
  expect_fail(in_dir("good.h5"), GZ_FMT_UNKNOWN, "/grp/nope/deeper", NULL, "no dataset",
              NULL, 0);
  expect_fail(in_dir("good.h5"), GZ_FMT_UNKNOWN, "/grp", NULL, "not a dataset", NULL, 0);
  /* bad arguments */
  {
    gz_reader_t *r;
    char err[256];
    GZ_CHECK(gz_reader_open(NULL, NULL, NULL, MPI_COMM_WORLD, &r, err, sizeof err) ==
                     -1 &&
                 r == NULL,
             "NULL path");
    GZ_CHECK(gz_reader_open(in_dir("good.nc"), NULL, NULL, MPI_COMM_WORLD, NULL, err,
                            sizeof err) == -1,
             "NULL handle");
    GZ_CHECK(gz_reader_open(in_dir("good.nc"), NULL, NULL, MPI_COMM_WORLD, &r, NULL, 0) ==
                 0,
             "no error buffer is fine");
    gz_reader_close(r);
    gz_reader_close(NULL);
  }
}

static void test_outputs(void) {
  gz_meta_t m;
  void *data;
  char err[512];
  const char *p;
  iot_make_meta(&m, GZ_FLOAT64, "temp");
  data = iot_make_data(&m, 8);
  p = in_dir("no/such/folder/out.nc");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, p),
           "write into a missing folder: %s", err);
  p = in_dir("no/such/folder/out.h5");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, p),
           "write h5 into a missing folder: %s", err);
  p = in_dir("no/such/folder/out.raw");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, p),
           "write raw into a missing folder: %s", err);
  p = in_dir("out.xyz");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, p) && access(p, F_OK) != 0,
           "unknown extension: %s", err);
  GZ_CHECK(gz_io_write(in_dir("null.nc"), GZ_FMT_UNKNOWN, &m, NULL, 0, err, sizeof err) ==
               -1,
           "NULL data refused");
  m.dims[1] = 0;
  p = in_dir("zero.nc");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, "length 0") && access(p, F_OK) != 0,
           "zero-length dim refused: %s", err);
  m.dims[1] = 6;
  m.coords[1].count = 5; /* inconsistent coordinate */
  GZ_CHECK(gz_io_write(in_dir("badcoord.h5"), GZ_FMT_UNKNOWN, &m, data, 0, err,
                       sizeof err) == -1,
           "coordinate length mismatch refused");
  m.coords[1].count = 6;
  /* an attribute netCDF refuses: the error names it, nothing is left */
  gz_meta_add_global_text(&m, "bad/name", "x");
  p = in_dir("badattr.nc");
  GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == -1 &&
               iot_contains(err, "bad/name") && access(p, F_OK) != 0,
           "bad attribute name: %s", err);
  GZ_CHECK(iot_temp_files(dir) == 0, "no temporary file left by failed writes");
  free(data);
  gz_meta_free(&m);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, NULL);
  dir = iot_scratch_dir(MPI_COMM_WORLD);
  if (GZ_CHECK(dir[0] != '\0', "scratch folder")) {
    if (rank == 0) {
      make_files();
      test_outputs();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_inputs();
    iot_scratch_remove(dir, MPI_COMM_WORLD);
  }
  return gz_test_end_mpi();
}
