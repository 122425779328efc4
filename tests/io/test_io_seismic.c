/* test_io_seismic.c - SEG-Y and RSF through gz_io: write then read (a 3-D
 * grid with line numbers, a 2-D line, float64 as format 6), headers kept
 * byte for byte by a second write, reads crossing trace boundaries, the
 * native headers through the .gzc metadata blob (and hostile blobs), RSF
 * in its three data forms (in= file, in="stdin" after the separator,
 * ascii_float; native and xdr), and the errors (truncated trace named,
 * unsupported and impossible format codes, RSF without n1). The
 * comparisons with python3-segyio are in tests/app_seismic. */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A [1][ni][nx][ns] (or [ntr][ns] when ni == 0) meta with line numbers and
 * a time axis in ms. */
static void grid_meta(gz_meta_t *m, gz_dtype_t dt, size_t ni, size_t nx, size_t ns) {
  double v[256];
  gz_meta_init(m);
  m->dtype = dt;
  snprintf(m->var, sizeof m->var, "amplitude");
  if (ni) {
    m->ndims = 4;
    m->dims[0] = 1;
    m->dims[1] = ni;
    m->dims[2] = nx;
    m->dims[3] = ns;
    snprintf(m->dim_names[0], 64, "image");
    snprintf(m->dim_names[1], 64, "inline");
    snprintf(m->dim_names[2], 64, "crossline");
    snprintf(m->dim_names[3], 64, "time");
    for (size_t i = 0; i < ni; i++)
      v[i] = 101.0 + (double)i;
    gz_meta_set_coord(m, 1, NULL, "", v, ni);
    for (size_t i = 0; i < nx; i++)
      v[i] = 20.0 - 2.0 * (double)i; /* decreasing crossline numbers */
    gz_meta_set_coord(m, 2, NULL, "", v, nx);
  } else {
    m->ndims = 2;
    m->dims[0] = nx;
    m->dims[1] = ns;
    snprintf(m->dim_names[0], 64, "trace");
    snprintf(m->dim_names[1], 64, "time");
  }
  for (size_t i = 0; i < ns; i++)
    v[i] = 8.0 + 2.0 * (double)i;
  gz_meta_set_coord(m, m->ndims - 1, "time", "ms", v, ns);
}

static void *read_all(gz_reader_t *r, gz_dtype_t dt) {
  size_t n = gz_reader_records(r) * gz_reader_record_size(r);
  void *d = malloc(n * (dt == GZ_FLOAT32 ? 4 : 8));
  char err[512];
  if (gz_reader_read(r, 0, gz_reader_records(r), dt, d, err, sizeof err) != 0) {
    GZ_CHECK(0, "read: %s", err);
    free(d);
    return NULL;
  }
  return d;
}

static void segy_grid(const char *dir, gz_dtype_t dt) {
  char p1[512], p2[512], err[512];
  const char *label = dt == GZ_FLOAT32 ? "SEG-Y grid f32" : "SEG-Y grid f64";
  gz_meta_t m;
  gz_reader_t *r = NULL, *r2 = NULL;
  void *data, *back = NULL;
  size_t n, s1 = 0, s2 = 0;
  unsigned char *b1 = NULL, *b2 = NULL;
  grid_meta(&m, dt, 4, 5, 30);
  n = gz_meta_count(&m);
  data = iot_make_data(&m, 7 + (uint64_t)dt);
  {
    /* no fill values or NaN here: SEG-Y has no missing-value marker */
    for (size_t i = 0; i < n; i++) {
      double x = iot_value(data, dt, i);
      if (!isfinite(x) || x < -990)
        x = 1.5 * (double)i;
      if (dt == GZ_FLOAT32)
        ((float *)data)[i] = (float)x;
      else
        ((double *)data)[i] = x;
    }
  }
  snprintf(p1, sizeof p1, "%s/grid%d.sgy", dir, (int)dt);
  snprintf(p2, sizeof p2, "%s/grid%d_again.segy", dir, (int)dt);
  if (!GZ_CHECK(gz_io_write(p1, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == 0,
                "%s: write: %s", label, err))
    goto done;
  GZ_CHECK(gz_io_detect(p1) == GZ_FMT_SEGY, "%s: detected as %s", label,
           gz_format_name(gz_io_detect(p1)));
  GZ_CHECK(gz_io_segy_probe(p1) == 1, "%s: the content says SEG-Y", label);
  if (!GZ_CHECK(gz_reader_open(p1, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0,
                "%s: open: %s", label, err))
    goto done;
  {
    const gz_meta_t *b = gz_reader_meta(r);
    GZ_CHECK(b->dtype == dt && b->ndims == 4 && b->dims[0] == 1 && b->dims[1] == 4 &&
                 b->dims[2] == 5 && b->dims[3] == 30,
             "%s: shape %d dims %zu %zu %zu %zu", label, b->ndims, b->dims[0], b->dims[1],
             b->dims[2], b->dims[3]);
    GZ_CHECK(!strcmp(b->dim_names[1], "inline") &&
                 !strcmp(b->dim_names[2], "crossline") &&
                 !strcmp(b->dim_names[3], "time"),
             "%s: dimension names %s %s %s", label, b->dim_names[1], b->dim_names[2],
             b->dim_names[3]);
    for (int d = 1; d < 4; d++)
      for (size_t i = 0; i < m.dims[d] && b->coords[d].values; i++)
        GZ_CHECK(b->coords[d].values[i] == m.coords[d].values[i],
                 "%s: coordinate %d[%zu] %g, wrote %g", label, d, i,
                 b->coords[d].values[i], m.coords[d].values[i]);
    GZ_CHECK(b->coords[1].values && b->coords[2].values && b->coords[3].values,
             "%s: coordinates read", label);
    GZ_CHECK(!strcmp(b->native_format, "segy") && b->native_size == 3600 + 20 * 240,
             "%s: native headers %s %zu bytes", label, b->native_format, b->native_size);
    const gz_attr_t *f = gz_meta_find_global(b, "segy_sample_format");
    GZ_CHECK(f && f->count == 1 && f->values[0] == (dt == GZ_FLOAT32 ? 5 : 6),
             "%s: sample format attribute", label);
  }
  back = read_all(r, dt);
  GZ_CHECK(back && iot_count_diff(data, dt, back, dt, n) == 0, "%s: values differ",
           label);
  /* reads across trace boundaries */
  {
    size_t es = dt == GZ_FLOAT32 ? 4 : 8;
    const size_t parts[][2] = {{0, 1}, {29, 2}, {17, 75}, {595, 5}, {1, 598}, {300, 0}};
    unsigned char *buf = malloc(600 * es);
    for (size_t k = 0; back && k < sizeof parts / sizeof parts[0]; k++) {
      int rc =
          gz_reader_read_part(r, 0, parts[k][0], parts[k][1], dt, buf, err, sizeof err);
      GZ_CHECK(rc == 0 && memcmp(buf, (unsigned char *)back + parts[k][0] * es,
                                 parts[k][1] * es) == 0,
               "%s: part [%zu,+%zu): %s", label, parts[k][0], parts[k][1],
               rc ? err : "differs");
    }
    free(buf);
  }
  /* a second write from what was read keeps every byte */
  if (GZ_CHECK(gz_io_write(p2, GZ_FMT_UNKNOWN, gz_reader_meta(r), back, 0, err,
                           sizeof err) == 0,
               "%s: rewrite: %s", label, err)) {
    b1 = gz_test_read_file(p1, &s1);
    b2 = gz_test_read_file(p2, &s2);
    GZ_CHECK(b1 && b2 && s1 == s2 &&
                 s1 == 3600 + 20 * (240 + 30 * (dt == GZ_FLOAT32 ? 4 : 8)) &&
                 memcmp(b1, b2, s1) == 0,
             "%s: rewritten file differs (%zu vs %zu bytes)", label, s1, s2);
    GZ_CHECK(b1 && b1[3224] == 0 && b1[3225] == (dt == GZ_FLOAT32 ? 5 : 6),
             "%s: format code", label);
  }
  /* the native headers through the metadata blob */
  {
    size_t need = gz_meta_pack(gz_reader_meta(r), NULL, 0);
    unsigned char *blob = malloc(need ? need : 1);
    gz_meta_t u;
    GZ_CHECK(need > 0 && gz_meta_pack(gz_reader_meta(r), blob, need) == need, "%s: pack",
             label);
    GZ_CHECK(blob[4] == 2, "%s: blob version 2 with native headers", label);
    if (GZ_CHECK(gz_meta_unpack(blob, need, &u, err, sizeof err) == 0, "%s: unpack: %s",
                 label, err)) {
      GZ_CHECK(u.native_size == gz_reader_meta(r)->native_size &&
                   !memcmp(u.native, gz_reader_meta(r)->native, u.native_size) &&
                   !strcmp(u.native_format, "segy"),
               "%s: native headers after unpack", label);
      gz_meta_free(&u);
    }
    /* hostile: cut short, and a claimed size far beyond what zlib can make */
    GZ_CHECK(gz_meta_unpack(blob, need - 3, &u, err, sizeof err) == -1,
             "%s: truncated blob must fail", label);
    if (need > 30) {
      /* the u64 native size sits before the u64 zsize and the zlib bytes;
       * find it from the end: zsize = need - tail */
      unsigned char *bad = malloc(need);
      memcpy(bad, blob, need);
      for (size_t k = 0; k + 16 < need; k++) {
        uint64_t zs = 0, ns = 0;
        for (int i = 7; i >= 0; i--) {
          ns = (ns << 8) | bad[k + (size_t)i];
          zs = (zs << 8) | bad[k + 8 + (size_t)i];
        }
        if (ns == gz_reader_meta(r)->native_size && zs == need - k - 16) {
          bad[k + 7] = 0x40; /* 2^62 bytes */
          GZ_CHECK(gz_meta_unpack(bad, need, &u, err, sizeof err) == -1 &&
                       iot_contains(err, "native header sizes"),
                   "%s: inflated size lie must fail: %s", label, err);
          bad[k + 7] = 0;
          bad[need - 2] ^= 0xff; /* damage the deflated bytes */
          GZ_CHECK(gz_meta_unpack(bad, need, &u, err, sizeof err) == -1,
                   "%s: damaged native headers must fail", label);
          break;
        }
      }
      free(bad);
    }
    free(blob);
  }
done:
  free(b1);
  free(b2);
  free(back);
  free(data);
  gz_reader_close(r);
  gz_reader_close(r2);
  gz_meta_free(&m);
}

static void segy_line(const char *dir) {
  char p[512], err[512];
  gz_meta_t m;
  gz_reader_t *r = NULL;
  float data[7 * 50];
  void *back;
  grid_meta(&m, GZ_FLOAT32, 0, 7, 50);
  for (size_t i = 0; i < 7 * 50; i++)
    data[i] = (float)sin(0.1 * (double)i) * 1000.0f;
  snprintf(p, sizeof p, "%s/line.sgy", dir);
  if (!GZ_CHECK(gz_io_write(p, GZ_FMT_SEGY, &m, data, 0, err, sizeof err) == 0,
                "line: write: %s", err) ||
      !GZ_CHECK(gz_reader_open(p, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0,
                "line: open: %s", err))
    goto done;
  GZ_CHECK(gz_reader_meta(r)->ndims == 3 && gz_reader_records(r) == 1 &&
               gz_reader_meta(r)->dims[1] == 7 && gz_reader_meta(r)->dims[2] == 50 &&
               !strcmp(gz_reader_meta(r)->dim_names[1], "trace"),
           "line: one image of 7 traces x 50 samples");
  back = read_all(r, GZ_FLOAT32);
  GZ_CHECK(back && memcmp(back, data, sizeof data) == 0, "line: values differ");
  free(back);
done:
  gz_reader_close(r);
  gz_meta_free(&m);
}

static void segy_errors(const char *dir) {
  char p[512], q[512], err[512];
  gz_meta_t m;
  gz_reader_t *r = NULL;
  float data[3 * 4 * 10] = {0};
  unsigned char *b;
  size_t size = 0;
  grid_meta(&m, GZ_FLOAT32, 3, 4, 10);
  snprintf(p, sizeof p, "%s/e.sgy", dir);
  if (!GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == 0,
                "errors: write: %s", err))
    goto done;
  b = gz_test_read_file(p, &size);
  if (!GZ_CHECK(b != NULL, "errors: read back"))
    goto done;
  /* the last trace cut short: its number and what is present */
  snprintf(q, sizeof q, "%s/cut.sgy", dir);
  iot_write_file(q, b, size - 7);
  GZ_CHECK(gz_reader_open(q, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
               iot_contains(err, q) &&
               iot_contains(err, "truncated trace 12: 273 of its 280"),
           "truncated: %s", err);
  /* format 4 (obsolete), 9 (int64, revision 2), 99 (no format) */
  static const struct {
    int code;
    const char *says;
  } codes[] = {{4, "sample format 4 (fixed point with gain (obsolete)) is not supported"},
               {9, "sample format 9 (int64) is not supported"},
               {99, "not a SEG-Y file: the sample format code"}};
  for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
    snprintf(q, sizeof q, "%s/fmt%d.sgy", dir, codes[k].code);
    b[3225] = (unsigned char)codes[k].code;
    iot_write_file(q, b, size);
    GZ_CHECK(gz_reader_open(q, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
                 iot_contains(err, q) && iot_contains(err, codes[k].says),
             "format %d: %s", codes[k].code, err);
  }
  snprintf(q, sizeof q, "%s/tiny.sgy", dir);
  iot_write_file(q, b, 3000);
  GZ_CHECK(gz_reader_open(q, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
               iot_contains(err, "less than the 3600"),
           "tiny: %s", err);
  GZ_CHECK(gz_io_segy_probe(q) == 0, "tiny: not probed as SEG-Y");
  free(b);
done:
  gz_meta_free(&m);
}

static void rsf_roundtrip(const char *dir, gz_dtype_t dt) {
  char p[512], err[512];
  const char *label = dt == GZ_FLOAT32 ? "RSF f32" : "RSF f64";
  gz_meta_t m;
  gz_reader_t *r = NULL;
  void *data, *back = NULL;
  double v[8];
  gz_meta_init(&m);
  m.dtype = dt;
  m.ndims = 3;
  m.dims[0] = 3;
  m.dims[1] = 4;
  m.dims[2] = 5;
  snprintf(m.dim_names[0], 64, "shot");
  snprintf(m.dim_names[1], 64, "offset");
  snprintf(m.dim_names[2], 64, "time");
  for (int i = 0; i < 5; i++)
    v[i] = 0.5 + 0.25 * i;
  gz_meta_set_coord(&m, 2, NULL, "s", v, 5);
  for (int i = 0; i < 4; i++)
    v[i] = -100 + 25 * i;
  gz_meta_set_coord(&m, 1, NULL, "m", v, 4);
  data = iot_make_data(&m, 99);
  snprintf(p, sizeof p, "%s/rt%d.rsf", dir, (int)dt);
  if (!GZ_CHECK(gz_io_write(p, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == 0,
                "%s: write: %s", label, err) ||
      !GZ_CHECK(gz_reader_open(p, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0,
                "%s: open: %s", label, err))
    goto done;
  {
    const gz_meta_t *b = gz_reader_meta(r);
    GZ_CHECK(gz_reader_format(r) == GZ_FMT_RSF && b->dtype == dt && b->ndims == 3 &&
                 b->dims[0] == 3 && b->dims[1] == 4 && b->dims[2] == 5,
             "%s: shape", label);
    GZ_CHECK(!strcmp(b->dim_names[1], "offset") && !strcmp(b->coords[2].units, "s") &&
                 b->coords[1].values && b->coords[1].values[3] == -25 &&
                 b->coords[2].values && fabs(b->coords[2].values[4] - 1.5) < 1e-12,
             "%s: axes", label);
  }
  back = read_all(r, dt);
  GZ_CHECK(back && iot_count_diff(data, dt, back, dt, gz_meta_count(&m)) == 0,
           "%s: values differ", label);
done:
  free(back);
  free(data);
  gz_reader_close(r);
  gz_meta_free(&m);
}

/* Hand-written RSF headers: in= a separate file (xdr_double), ascii_float,
 * and the errors. */
static void rsf_forms(const char *dir) {
  char h[512], d[512], text[1024], err[512];
  gz_reader_t *r = NULL;
  unsigned char be[6 * 8];
  const double want[6] = {1, -2.5, 3e10, 0, 1e-7, 6};
  snprintf(d, sizeof d, "%s/x.rsf@", dir);
  for (int i = 0; i < 6; i++) {
    uint64_t u;
    memcpy(&u, &want[i], 8);
    for (int k = 0; k < 8; k++)
      be[i * 8 + k] = (unsigned char)(u >> (56 - 8 * k));
  }
  iot_write_file(d, be, sizeof be);
  snprintf(h, sizeof h, "%s/x.rsf", dir);
  snprintf(text, sizeof text,
           "sfmath:\n\tn1=3 n2=2 d1=0.5 o1=1\n\tdata_format=xdr_double esize=8 in=%s\n"
           "\tn2=2\n",
           d);
  iot_write_file(h, text, strlen(text));
  if (GZ_CHECK(gz_reader_open(h, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0,
               "xdr_double: %s", err)) {
    double got[6];
    GZ_CHECK(gz_reader_records(r) == 2 && gz_reader_record_size(r) == 3 &&
                 gz_reader_read(r, 0, 2, GZ_FLOAT64, got, err, sizeof err) == 0 &&
                 memcmp(got, want, sizeof got) == 0,
             "xdr_double values");
    gz_reader_close(r);
    r = NULL;
  }
  snprintf(h, sizeof h, "%s/a.rsf", dir);
  snprintf(
      text, sizeof text,
      "n1=4 n2=1 data_format=ascii_float in=\"stdin\"\n\014\014\0041.5 -2\n 3e2,4\n");
  iot_write_file(h, text, strlen(text));
  if (GZ_CHECK(gz_reader_open(h, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0,
               "ascii_float: %s", err)) {
    float got[4];
    GZ_CHECK(gz_reader_read(r, 0, 1, GZ_FLOAT32, got, err, sizeof err) == 0 &&
                 got[0] == 1.5f && got[1] == -2.0f && got[2] == 300.0f && got[3] == 4.0f,
             "ascii_float values");
    gz_reader_close(r);
    r = NULL;
  }
  snprintf(text, sizeof text,
           "n1=5 data_format=ascii_float in=\"stdin\"\n\014\014\0041 2        \n");
  iot_write_file(h, text, strlen(text));
  GZ_CHECK(gz_reader_open(h, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
               iot_contains(err, "2 readable numbers, the header needs 5"),
           "short ascii: %s", err);
  snprintf(text, sizeof text,
           "n1=500 data_format=ascii_float in=\"stdin\"\n\014\014\0041 2\n");
  iot_write_file(h, text, strlen(text));
  GZ_CHECK(gz_reader_open(h, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
               iot_contains(err, "is too short for 500 ascii_float numbers"),
           "ascii count beyond the file: %s", err);
  snprintf(text, sizeof text, "d1=3 in=%s\n", d);
  iot_write_file(h, text, strlen(text));
  GZ_CHECK(gz_reader_open_format(h, GZ_FMT_RSF, NULL, NULL, MPI_COMM_SELF, &r, err,
                                 sizeof err) == -1 &&
               iot_contains(err, "no n1="),
           "no n1: %s", err);
  snprintf(text, sizeof text, "n1=-3 in=%s\n", d);
  iot_write_file(h, text, strlen(text));
  GZ_CHECK(gz_reader_open(h, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == -1 &&
               iot_contains(err, "n1 is not a positive whole number"),
           "negative n1: %s", err);
}

int main(int argc, char **argv) {
  const char *dir;
  MPI_Init(&argc, &argv);
  dir = iot_scratch_dir(MPI_COMM_WORLD);
  if (GZ_CHECK(dir[0] != '\0', "scratch folder")) {
    segy_grid(dir, GZ_FLOAT32);
    segy_grid(dir, GZ_FLOAT64);
    segy_line(dir);
    segy_errors(dir);
    rsf_roundtrip(dir, GZ_FLOAT32);
    rsf_roundtrip(dir, GZ_FLOAT64);
    rsf_forms(dir);
    iot_scratch_remove(dir, MPI_COMM_WORLD);
  }
  return gz_test_end_mpi();
}
