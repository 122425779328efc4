/* test_io_roundtrip.c - write every format in both dtypes with a rich meta,
 * read it back on every rank (HDF5 opened collectively on MPI_COMM_WORLD and
 * independently on MPI_COMM_SELF) and compare every value and metadata
 * field; slab reads against full reads; dtype conversion both ways;
 * big-endian raw; packed (scale_factor/add_offset) classic netCDF; a
 * cross-format chain netCDF -> HDF5 -> netCDF; overwrite refusal. */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static int bcast_rc(int rc) {
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

/* Full reads in both dtypes, record ranges and ragged slabs vs expected. */
static void check_reads(gz_reader_t *r, const void *expect, gz_dtype_t edt,
                        const char *label) {
  size_t recs = gz_reader_records(r), rs = gz_reader_record_size(r), n = recs * rs;
  char err[512];
  for (int d = 0; d < 2; d++) {
    gz_dtype_t dt = d ? GZ_FLOAT64 : GZ_FLOAT32;
    size_t es = dt == GZ_FLOAT32 ? 4 : 8;
    unsigned char *all = malloc(n * es), *part = malloc((rs ? rs : 1) * es);
    int rc = gz_reader_read(r, 0, recs, dt, all, err, sizeof err);
    if (!GZ_CHECK(rc == 0, "%s: read all as %d: %s", label, (int)dt, err))
      goto next;
    GZ_CHECK(iot_count_diff(expect, edt, all, dt, n) == 0, "%s: values differ (dtype %d)",
             label, (int)dt);
    /* record ranges */
    for (size_t first = 0; first < recs; first += 2) {
      size_t cnt = recs - first < 2 ? recs - first : 2;
      unsigned char *some = malloc(cnt * rs * es);
      rc = gz_reader_read(r, first, cnt, dt, some, err, sizeof err);
      GZ_CHECK(rc == 0 && memcmp(some, all + first * rs * es, cnt * rs * es) == 0,
               "%s: records %zu+%zu: %s", label, first, cnt, rc ? err : "differ");
      free(some);
    }
    /* ragged slabs of each record */
    const size_t offs[][2] = {{0, rs},  {0, 1},      {rs - 1, 1}, {3, 10},         {6, 7},
                              {13, 29}, {1, rs - 2}, {rs / 2, 0}, {rs / 3, rs / 2}};
    for (size_t rec = 0; rec < recs; rec++)
      for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        size_t off = offs[k][0], cnt = offs[k][1];
        if (off > rs || cnt > rs - off)
          continue;
        rc = gz_reader_read_part(r, rec, off, cnt, dt, part, err, sizeof err);
        GZ_CHECK(rc == 0 && memcmp(part, all + (rec * rs + off) * es, cnt * es) == 0,
                 "%s: part rec %zu [%zu,+%zu) dtype %d: %s", label, rec, off, cnt,
                 (int)dt, rc ? err : "differs from the full read");
      }
    GZ_CHECK(gz_reader_read(r, 0, 0, dt, NULL, err, sizeof err) == 0, "%s: empty read",
             label);
    GZ_CHECK(gz_reader_read(r, recs, 1, dt, all, err, sizeof err) == -1 &&
                 iot_contains(err, gz_reader_path(r)),
             "%s: read past the end must fail naming the file", label);
    GZ_CHECK(gz_reader_read_part(r, 0, rs, 1, dt, part, err, sizeof err) == -1,
             "%s: part past the record must fail", label);
  next:
    free(all);
    free(part);
  }
}

static void roundtrip(const char *dir, gz_format_t fmt, gz_dtype_t dt) {
  static const char *ext[] = {"", "raw", "nc", "h5"};
  char path[512], err[512], label[64];
  const char *var = fmt == GZ_FMT_HDF5 ? "/grp/temp" : "temp";
  gz_meta_t m;
  gz_reader_t *r = NULL;
  void *data;
  int rc = 0;
  snprintf(path, sizeof path, "%s/rt_%s.%s", dir, dt == GZ_FLOAT32 ? "f32" : "f64",
           ext[fmt]);
  snprintf(label, sizeof label, "%s %s", gz_format_name(fmt),
           dt == GZ_FLOAT32 ? "f32" : "f64");
  iot_make_meta(&m, dt, var);
  data = iot_make_data(&m, 42 + (uint64_t)fmt * 10 + (uint64_t)dt);
  if (rank == 0) {
    rc = gz_io_write(path, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err);
    GZ_CHECK(rc == 0, "%s: write: %s", label, err);
    GZ_CHECK(iot_temp_files(dir) == 0, "%s: temporary file left", label);
  }
  if (bcast_rc(rc) != 0)
    goto done;
  GZ_CHECK(gz_io_detect(path) == fmt, "%s: detected %s", label,
           gz_format_name(gz_io_detect(path)));
  gz_raw_opts_t raw = {3, {0, 6, 7}, dt, 0};
  rc = gz_reader_open(path, NULL, &raw, MPI_COMM_WORLD, &r, err, sizeof err);
  if (!GZ_CHECK(rc == 0, "%s: open: %s", label, err))
    goto done;
  GZ_CHECK(gz_reader_format(r) == fmt, "%s: reader format", label);
  GZ_CHECK(gz_reader_records(r) == 5 && gz_reader_record_size(r) == 42,
           "%s: %zu records of %zu", label, gz_reader_records(r),
           gz_reader_record_size(r));
  if (fmt == GZ_FMT_RAW) {
    const gz_meta_t *b = gz_reader_meta(r);
    GZ_CHECK(b->dtype == dt && b->ndims == 3 && b->dims[0] == 5 && b->dims[1] == 6 &&
                 b->dims[2] == 7 && !b->has_fill && strcmp(b->var, "data") == 0,
             "%s: raw meta", label);
  } else {
    iot_check_meta(&m, gz_reader_meta(r), 0, label);
  }
  check_reads(r, data, dt, label);
  gz_reader_close(r);
  r = NULL;
  /* by explicit name / path, and independently on each rank */
  rc = gz_reader_open_format(path, fmt, fmt == GZ_FMT_RAW ? NULL : var, &raw,
                             MPI_COMM_SELF, &r, err, sizeof err);
  if (GZ_CHECK(rc == 0, "%s: open by name: %s", label, err)) {
    if (fmt != GZ_FMT_RAW)
      iot_check_meta(&m, gz_reader_meta(r), 0, label);
    check_reads(r, data, dt, label);
    gz_reader_close(r);
  }
  /* overwrite: refused without force (file untouched, no temp), done with it */
  if (rank == 0) {
    size_t before = 0, after = 0;
    void *b0 = gz_test_read_file(path, &before), *b1;
    rc = gz_io_write(path, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err);
    GZ_CHECK(rc == -1 && iot_contains(err, path) && iot_contains(err, "exists"),
             "%s: existing file must be refused naming it: %s", label, err);
    b1 = gz_test_read_file(path, &after);
    GZ_CHECK(b0 && b1 && before == after && memcmp(b0, b1, before) == 0,
             "%s: refused write changed the file", label);
    GZ_CHECK(iot_temp_files(dir) == 0, "%s: temporary file left after refusal", label);
    GZ_CHECK(gz_io_write(path, GZ_FMT_UNKNOWN, &m, data, 1, err, sizeof err) == 0,
             "%s: forced overwrite: %s", label, err);
    GZ_CHECK(iot_temp_files(dir) == 0, "%s: temporary file left after force", label);
    free(b0);
    free(b1);
  }
done:
  MPI_Barrier(MPI_COMM_WORLD);
  free(data);
  gz_meta_free(&m);
}

/* netCDF -> (reader meta) -> HDF5 -> netCDF: the meta survives both ways. */
static void chain(const char *dir) {
  char a[512], b[512], c[512], err[512];
  gz_meta_t m;
  gz_reader_t *r = NULL;
  void *data, *buf;
  int rc = 0;
  snprintf(a, sizeof a, "%s/chain_a.nc", dir);
  snprintf(b, sizeof b, "%s/chain_b.h5", dir);
  snprintf(c, sizeof c, "%s/chain_c.nc", dir);
  iot_make_meta(&m, GZ_FLOAT32, "temp");
  data = iot_make_data(&m, 7);
  buf = malloc(gz_meta_count(&m) * 4);
  if (rank == 0) {
    const char *src = a;
    rc = gz_io_write(a, GZ_FMT_NETCDF, &m, data, 0, err, sizeof err);
    for (int step = 0; step < 2 && rc == 0; step++) {
      const char *dst = step == 0 ? b : c;
      rc = gz_reader_open(src, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err);
      if (rc == 0) {
        rc = gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT32, buf, err, sizeof err);
        if (rc == 0)
          rc = gz_io_write(dst, GZ_FMT_UNKNOWN, gz_reader_meta(r), buf, 0, err,
                           sizeof err);
        gz_reader_close(r);
      }
      src = dst;
    }
    GZ_CHECK(rc == 0, "chain: %s", err);
  }
  if (bcast_rc(rc) == 0) {
    rc = gz_reader_open(b, NULL, NULL, MPI_COMM_WORLD, &r, err, sizeof err);
    if (GZ_CHECK(rc == 0, "chain: open h5: %s", err)) {
      GZ_CHECK(strcmp(gz_reader_meta(r)->var, "/temp") == 0, "chain: h5 path '%s'",
               gz_reader_meta(r)->var);
      iot_check_meta(&m, gz_reader_meta(r), IOT_NO_VAR, "chain h5");
      check_reads(r, data, GZ_FLOAT32, "chain h5");
      gz_reader_close(r);
    }
    rc = gz_reader_open(c, NULL, NULL, MPI_COMM_WORLD, &r, err, sizeof err);
    if (GZ_CHECK(rc == 0, "chain: open nc: %s", err)) {
      iot_check_meta(&m, gz_reader_meta(r), 0, "chain nc");
      check_reads(r, data, GZ_FLOAT32, "chain nc");
      gz_reader_close(r);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  free(data);
  gz_meta_free(&m);
}

static void put_be(unsigned char *p, const void *v, size_t es) {
  const unsigned char *s = v;
  for (size_t i = 0; i < es; i++)
    p[i] = s[es - 1 - i]; /* host is little-endian on every CI machine */
}

static void big_endian_raw(const char *dir) {
  for (int d = 0; d < 2; d++) {
    gz_dtype_t dt = d ? GZ_FLOAT64 : GZ_FLOAT32;
    size_t es = d ? 8 : 4, n = 4 * 3 * 5;
    char path[512], err[512];
    unsigned char *be = malloc(n * es), *got = malloc(n * es), *want = malloc(n * es);
    gz_reader_t *r = NULL;
    int rc = 0;
    gz_rng_t rng;
    gz_rng_seed(&rng, 99);
    for (size_t i = 0; i < n; i++) {
      double v = gz_rng_normal(&rng) * 1e3;
      float f = (float)v;
      memcpy(want + i * es, d ? (void *)&v : (void *)&f, es);
      put_be(be + i * es, want + i * es, es);
    }
    snprintf(path, sizeof path, "%s/be_%d.bin", dir, d);
    if (rank == 0)
      rc = iot_write_file(path, be, n * es);
    if (bcast_rc(rc) == 0) {
      for (int infer = 0; infer < 2; infer++) {
        gz_raw_opts_t raw = {3, {infer ? 0 : 4, 3, 5}, dt, 1};
        rc = gz_reader_open(path, NULL, &raw, MPI_COMM_WORLD, &r, err, sizeof err);
        if (!GZ_CHECK(rc == 0, "big-endian open: %s", err))
          continue;
        GZ_CHECK(gz_reader_records(r) == 4, "big-endian records");
        rc = gz_reader_read(r, 0, 4, dt, got, err, sizeof err);
        GZ_CHECK(rc == 0 && memcmp(got, want, n * es) == 0, "big-endian values (%d)", d);
        gz_reader_close(r);
      }
      /* read as little-endian it must differ (the swap really happens) */
      gz_raw_opts_t le = {3, {4, 3, 5}, dt, 0};
      if (gz_reader_open(path, NULL, &le, MPI_COMM_WORLD, &r, err, sizeof err) == 0) {
        gz_reader_read(r, 0, 4, dt, got, err, sizeof err);
        GZ_CHECK(memcmp(got, want, n * es) != 0, "little-endian read must differ");
        gz_reader_close(r);
      }
    }
    free(be);
    free(got);
    free(want);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A classic netCDF with a packed short variable (scale_factor, add_offset,
 * _FillValue) and a 1-D double variable: unpacking and narrowing. */
static void packed_classic(const char *dir) {
  char path[512], err[512];
  const size_t nt = 3, nx = 4000; /* > one temporary piece? no: exercises the path */
  short *s = malloc(nt * nx * sizeof *s);
  double *x = malloc(nx * sizeof *x);
  int rc = 0;
  snprintf(path, sizeof path, "%s/packed.nc", dir);
  for (size_t i = 0; i < nt * nx; i++)
    s[i] = i % 11 == 0 ? (short)-32767 : (short)((long)(i * 37 % 20000) - 10000);
  for (size_t i = 0; i < nx; i++)
    x[i] = 1e-3 * (double)i + 1.0 / 3.0;
  if (rank == 0) {
    int nc, dt, dx, v, vx, dims[2];
    double sf = 0.01, ao = 273.15;
    short fill = -32767;
    rc |= nc_create(path, NC_CLOBBER, &nc);
    rc |= nc_def_dim(nc, "time", nt, &dt);
    rc |= nc_def_dim(nc, "x", nx, &dx);
    dims[0] = dt;
    dims[1] = dx;
    rc |= nc_def_var(nc, "tp", NC_SHORT, 2, dims, &v);
    rc |= nc_put_att_double(nc, v, "scale_factor", NC_DOUBLE, 1, &sf);
    rc |= nc_put_att_double(nc, v, "add_offset", NC_DOUBLE, 1, &ao);
    rc |= nc_put_att_short(nc, v, "_FillValue", NC_SHORT, 1, &fill);
    rc |= nc_put_att_text(nc, v, "units", 1, "K");
    rc |=
        nc_def_var(nc, "xd", NC_DOUBLE, 1, &dx, &vx); /* not a coordinate: name != dim */
    rc |= nc_enddef(nc);
    rc |= nc_put_var_short(nc, v, s);
    rc |= nc_put_var_double(nc, vx, x);
    rc |= nc_close(nc);
    GZ_CHECK(rc == 0, "packed: writing the classic file");
  }
  if (bcast_rc(rc) == 0) {
    gz_reader_t *r = NULL;
    GZ_CHECK(gz_io_detect(path) == GZ_FMT_NETCDF, "classic file detected");
    rc = gz_reader_open(path, NULL, NULL, MPI_COMM_WORLD, &r, err, sizeof err);
    GZ_CHECK(rc == -1 && iot_contains(err, "several") && iot_contains(err, "tp") &&
                 iot_contains(err, "xd"),
             "var NULL with two candidates must list them: %s", err);
    rc = gz_reader_open(path, "tp", NULL, MPI_COMM_WORLD, &r, err, sizeof err);
    if (GZ_CHECK(rc == 0, "packed open: %s", err)) {
      const gz_meta_t *m = gz_reader_meta(r);
      double *d = malloc(nt * nx * sizeof *d);
      float *f = malloc(nt * nx * sizeof *f);
      size_t bad = 0, badf = 0, fills = 0;
      double fillv = -32767 * 0.01 + 273.15;
      GZ_CHECK(m->dtype == GZ_FLOAT64 && m->has_scale && m->scale_factor == 0.01 &&
                   m->add_offset == 273.15 && m->has_fill && m->fill_value == fillv &&
                   strcmp(m->units, "K") == 0 && m->nattrs == 0,
               "packed meta (dtype %d scale %d fill %d %.17g, %zu attrs)", (int)m->dtype,
               m->has_scale, m->has_fill, m->fill_value, m->nattrs);
      GZ_CHECK(gz_reader_read(r, 0, nt, GZ_FLOAT64, d, err, sizeof err) == 0 &&
                   gz_reader_read(r, 0, nt, GZ_FLOAT32, f, err, sizeof err) == 0,
               "packed read: %s", err);
      for (size_t i = 0; i < nt * nx; i++) {
        double want = s[i] * 0.01 + 273.15;
        bad += d[i] != want;
        badf += f[i] != (float)want;
        fills += (float)m->fill_value == f[i] && d[i] == m->fill_value;
      }
      GZ_CHECK(bad == 0 && badf == 0, "packed values: %zu f64 and %zu f32 differ", bad,
               badf);
      GZ_CHECK(fills == (nt * nx + 10) / 11, "fill elements match meta fill (%zu)",
               fills);
      for (size_t rec = 0; rec < nt; rec++) {
        float part[100];
        GZ_CHECK(gz_reader_read_part(r, rec, 1234, 100, GZ_FLOAT32, part, err,
                                     sizeof err) == 0 &&
                     memcmp(part, f + rec * nx + 1234, sizeof part) == 0,
                 "packed part read");
      }
      free(d);
      free(f);
      gz_reader_close(r);
    }
    rc = gz_reader_open(path, "xd", NULL, MPI_COMM_SELF, &r, err, sizeof err);
    if (GZ_CHECK(rc == 0, "1-D open: %s", err)) {
      float *f = malloc(nx * sizeof *f);
      size_t bad = 0;
      GZ_CHECK(gz_reader_records(r) == nx && gz_reader_record_size(r) == 1,
               "1-D: %zu records of %zu", gz_reader_records(r), gz_reader_record_size(r));
      GZ_CHECK(gz_reader_read(r, 0, nx, GZ_FLOAT32, f, err, sizeof err) == 0, "1-D read");
      for (size_t i = 0; i < nx; i++)
        bad += f[i] != (float)x[i];
      GZ_CHECK(bad == 0, "double narrowed to float: %zu differ", bad);
      free(f);
      gz_reader_close(r);
    }
  }
  free(s);
  free(x);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A double raw file larger than one temporary piece, read as float. */
static void large_narrowing(const char *dir) {
  const size_t recs = 3, rs = 1000003; /* 3M values, ragged against the piece size */
  char path[512], err[512];
  double *d = malloc(recs * rs * sizeof *d);
  float *f = malloc(recs * rs * sizeof *f);
  int rc = 0;
  gz_reader_t *r = NULL;
  for (size_t i = 0; i < recs * rs; i++)
    d[i] = sin((double)i * 1e-3) * 1e5 + 1.0 / 7.0;
  snprintf(path, sizeof path, "%s/large.raw", dir);
  if (rank == 0)
    rc = iot_write_file(path, d, recs * rs * sizeof *d);
  if (bcast_rc(rc) == 0) {
    gz_raw_opts_t raw = {2, {0, rs}, GZ_FLOAT64, 0};
    rc = gz_reader_open(path, NULL, &raw, MPI_COMM_WORLD, &r, err, sizeof err);
    if (GZ_CHECK(rc == 0, "large open: %s", err)) {
      size_t bad = 0;
      rc = gz_reader_read(r, 0, recs, GZ_FLOAT32, f, err, sizeof err);
      GZ_CHECK(rc == 0, "large read: %s", err);
      for (size_t i = 0; i < recs * rs; i++)
        bad += f[i] != (float)d[i];
      GZ_CHECK(bad == 0, "large narrowing: %zu differ", bad);
      gz_reader_close(r);
    }
  }
  free(d);
  free(f);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A source that hands the values over in pieces, each copied to a buffer of
 * its own, and notes any request out of order. */
typedef struct piece_src {
  const unsigned char *data;
  size_t es, next, calls;
  int out_of_order;
  unsigned char *buf;
} piece_src_t;

static const void *piece_get(void *ctx, size_t first, size_t n, char *err,
                             size_t errlen) {
  piece_src_t *s = ctx;
  unsigned char *grown = realloc(s->buf, n * s->es + 1);
  (void)err;
  (void)errlen;
  if (!grown)
    return NULL;
  s->buf = grown;
  s->out_of_order += first != s->next;
  s->next = first + n;
  s->calls++;
  memcpy(s->buf, s->data + first * s->es, n * s->es);
  return s->buf;
}

/* gz_io_write_from() with values that come in pieces writes the same file
 * as gz_io_write() with them all in memory: byte for byte (raw, netCDF,
 * SEG-Y, RSF), the same values read back (HDF5, whose objects carry their
 * creation time). 2 x 600 x 500 values: boxes that end inside dimension 1
 * and pieces that cross records. */
static void pieces(const char *dir) {
  static const gz_format_t fmts[] = {GZ_FMT_RAW, GZ_FMT_NETCDF, GZ_FMT_HDF5, GZ_FMT_SEGY,
                                     GZ_FMT_RSF};
  static const char *ext[] = {"raw", "nc", "h5", "sgy", "rsf"};
  for (int f = 0; f < 5; f++)
    for (int t = 0; t < 2; t++) {
      gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
      char a[512], b[512], err[512] = "";
      gz_meta_t m;
      void *data;
      piece_src_t ps;
      gz_io_source_t src = {NULL, piece_get, &ps};
      size_t na = 0, nb = 0, n;
      unsigned char *ba = NULL, *bb = NULL;
      gz_meta_init(&m);
      m.dtype = dt;
      m.ndims = 3;
      memcpy(m.dims, (const size_t[]){2, 600, 500}, sizeof(size_t[3]));
      snprintf(m.var, sizeof m.var, "temp");
      n = gz_meta_count(&m);
      data = iot_make_data(&m, 7 + (uint64_t)f);
      memset(&ps, 0, sizeof ps);
      ps.data = data;
      ps.es = dt == GZ_FLOAT32 ? 4 : 8;
      snprintf(a, sizeof a, "%s/whole_%d.%s", dir, t, ext[f]);
      snprintf(b, sizeof b, "%s/pieces_%d.%s", dir, t, ext[f]);
      GZ_CHECK(gz_io_write(a, fmts[f], &m, data, 0, err, sizeof err) == 0, "%s: %s", a,
               err);
      GZ_CHECK(gz_io_write_from(b, fmts[f], &m, &src, 0, err, sizeof err) == 0, "%s: %s",
               b, err);
      GZ_CHECK(ps.out_of_order == 0 && ps.next == n && ps.calls > 1,
               "%s: %zu pieces in order up to %zu of %zu", b, ps.calls, ps.next, n);
      if (fmts[f] != GZ_FMT_HDF5) {
        ba = gz_test_read_file(a, &na);
        bb = gz_test_read_file(b, &nb);
        GZ_CHECK(ba && bb && na == nb && memcmp(ba, bb, na) == 0,
                 "%s: %zu bytes, whole: %zu, not the same", b, nb, na);
      } else {
        gz_reader_t *r = NULL;
        void *back = malloc(n * ps.es);
        if (GZ_CHECK(back && gz_reader_open(b, "/temp", NULL, MPI_COMM_SELF, &r, err,
                                            sizeof err) == 0,
                     "%s: %s", b, err) &&
            GZ_CHECK(gz_reader_read(r, 0, 2, dt, back, err, sizeof err) == 0, "%s: %s", b,
                     err))
          GZ_CHECK(iot_count_diff(data, dt, back, dt, n) == 0, "%s: values differ", b);
        gz_reader_close(r);
        free(back);
      }
      GZ_CHECK(iot_temp_files(dir) == 0, "%s: temporary file left", b);
      free(ba);
      free(bb);
      free(ps.buf);
      free(data);
      gz_meta_free(&m);
    }
}

int main(int argc, char **argv) {
  const char *dir;
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  dir = iot_scratch_dir(MPI_COMM_WORLD);
  if (GZ_CHECK(dir[0] != '\0', "scratch folder")) {
    for (int fmt = GZ_FMT_RAW; fmt <= GZ_FMT_HDF5; fmt++) {
      roundtrip(dir, (gz_format_t)fmt, GZ_FLOAT32);
      roundtrip(dir, (gz_format_t)fmt, GZ_FLOAT64);
    }
    chain(dir);
    big_endian_raw(dir);
    packed_classic(dir);
    large_narrowing(dir);
    if (rank == 0)
      pieces(dir);
    iot_scratch_remove(dir, MPI_COMM_WORLD);
  }
  return gz_test_end_mpi();
}
