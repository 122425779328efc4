/* io_test_util.c - see io_test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void iot_make_meta(gz_meta_t *m, gz_dtype_t dtype, const char *var) {
  static const char *names[3] = {"time", "lat", "lon"};
  static const size_t dims[3] = {5, 6, 7};
  double t[5], lat[6], range[2] = {-100.0, 400.0}, w[3] = {0.5, 0.25, 1.0 / 3.0};
  gz_meta_init(m);
  snprintf(m->var, sizeof m->var, "%s", var);
  m->dtype = dtype;
  m->ndims = 3;
  for (int i = 0; i < 3; i++) {
    m->dims[i] = dims[i];
    snprintf(m->dim_names[i], sizeof m->dim_names[i], "%s", names[i]);
  }
  for (int i = 0; i < 5; i++)
    t[i] = 365.25 * i + 0.125;
  for (int i = 0; i < 6; i++)
    lat[i] = -75.0 + 30.0 * i;
  gz_meta_set_coord(m, 0, "time", "days since 1870-03-01 00:00:00", t, 5);
  gz_meta_set_coord(m, 1, "lat", "degrees_north", lat, 6);
  snprintf(m->units, sizeof m->units, "K");
  snprintf(m->long_name, sizeof m->long_name, "Reference height temperature");
  m->has_fill = 1;
  m->fill_value = -999.0;
  gz_meta_add_attr_text(m, "comment", "synthetic field for the io tests");
  gz_meta_add_attr_numbers(m, "valid_range", range, 2);
  gz_meta_add_attr_numbers(m, "weights", w, 3);
  gz_meta_add_attr_text(m, "empty", "");
  gz_meta_add_global_text(m, "title", "gzstack io round trip");
  gz_meta_add_global_text(m, "history", "line one\nline two\n");
  gz_meta_add_global_number(m, "gzstack_version", 0.1);
}

void *iot_make_data(const gz_meta_t *m, uint64_t seed) {
  size_t n = gz_meta_count(m), es = m->dtype == GZ_FLOAT32 ? 4 : 8;
  unsigned char *buf = malloc(n * es);
  gz_rng_t rng;
  gz_rng_seed(&rng, seed);
  for (size_t i = 0; buf && i < n; i++) {
    double v = 280.0 + 15.0 * gz_rng_normal(&rng);
    if (i % 17 == 3)
      v = m->fill_value;
    else if (i % 29 == 5)
      v = NAN;
    if (m->dtype == GZ_FLOAT32) {
      float f = (float)v;
      memcpy(buf + i * es, &f, 4);
    } else {
      memcpy(buf + i * es, &v, 8);
    }
  }
  return buf;
}

double iot_value(const void *data, gz_dtype_t dtype, size_t i) {
  if (dtype == GZ_FLOAT32) {
    float f;
    memcpy(&f, (const unsigned char *)data + 4 * i, 4);
    return f;
  }
  double d;
  memcpy(&d, (const unsigned char *)data + 8 * i, 8);
  return d;
}

int iot_same(double x, double y) { return x == y || (isnan(x) && isnan(y)); }

size_t iot_count_diff(const void *a, gz_dtype_t da, const void *b, gz_dtype_t db,
                      size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double x = iot_value(a, da, i), y = iot_value(b, db, i);
    if (db == GZ_FLOAT32)
      x = (float)x;
    if (!iot_same(x, y))
      bad++;
  }
  return bad;
}

static const gz_attr_t *find(const gz_attr_t *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i].name, name) == 0)
      return &list[i];
  return NULL;
}

static void check_attrs(const gz_attr_t *a, size_t na, const gz_attr_t *b, size_t nb,
                        const char *what, const char *label) {
  GZ_CHECK(na == nb, "%s: %s count %zu != %zu", label, what, nb, na);
  for (size_t i = 0; i < na; i++) {
    const gz_attr_t *x = &a[i], *y = find(b, nb, x->name);
    if (!GZ_CHECK(y != NULL, "%s: %s '%s' missing", label, what, x->name))
      continue;
    GZ_CHECK(x->is_text == y->is_text, "%s: %s '%s' kind", label, what, x->name);
    GZ_CHECK(x->count == y->count, "%s: %s '%s' count %zu != %zu", label, what, x->name,
             y->count, x->count);
    if (x->is_text && y->is_text && x->text && y->text)
      GZ_CHECK(strcmp(x->text, y->text) == 0, "%s: %s '%s' text '%s' != '%s'", label,
               what, x->name, y->text, x->text);
    if (!x->is_text && !y->is_text && x->count == y->count)
      for (size_t k = 0; k < x->count; k++)
        GZ_CHECK(iot_same(x->values[k], y->values[k]), "%s: %s '%s'[%zu] %.17g != %.17g",
                 label, what, x->name, k, y->values[k], x->values[k]);
  }
}

int iot_check_meta(const gz_meta_t *a, const gz_meta_t *b, int flags, const char *label) {
  long before = gz_test_failed();
  if (!(flags & IOT_NO_VAR))
    GZ_CHECK(strcmp(a->var, b->var) == 0, "%s: var '%s' != '%s'", label, b->var, a->var);
  GZ_CHECK(a->dtype == b->dtype, "%s: dtype %d != %d", label, (int)b->dtype,
           (int)a->dtype);
  if (!GZ_CHECK(a->ndims == b->ndims, "%s: ndims %d != %d", label, b->ndims, a->ndims))
    return 1;
  for (int i = 0; i < a->ndims; i++) {
    const gz_coord_t *x = &a->coords[i], *y = &b->coords[i];
    GZ_CHECK(a->dims[i] == b->dims[i], "%s: dims[%d] %zu != %zu", label, i, b->dims[i],
             a->dims[i]);
    GZ_CHECK(strcmp(a->dim_names[i], b->dim_names[i]) == 0,
             "%s: dim_names[%d] '%s' != '%s'", label, i, b->dim_names[i],
             a->dim_names[i]);
    GZ_CHECK((x->values == NULL) == (y->values == NULL), "%s: coords[%d] presence", label,
             i);
    GZ_CHECK(x->count == y->count, "%s: coords[%d] count %zu != %zu", label, i, y->count,
             x->count);
    GZ_CHECK(strcmp(x->name, y->name) == 0, "%s: coords[%d] name '%s' != '%s'", label, i,
             y->name, x->name);
    GZ_CHECK(strcmp(x->units, y->units) == 0, "%s: coords[%d] units '%s' != '%s'", label,
             i, y->units, x->units);
    if (x->values && y->values && x->count == y->count)
      for (size_t k = 0; k < x->count; k++)
        GZ_CHECK(iot_same(x->values[k], y->values[k]), "%s: coords[%d][%zu]", label, i,
                 k);
  }
  GZ_CHECK(strcmp(a->units, b->units) == 0, "%s: units '%s' != '%s'", label, b->units,
           a->units);
  GZ_CHECK(strcmp(a->long_name, b->long_name) == 0, "%s: long_name '%s' != '%s'", label,
           b->long_name, a->long_name);
  GZ_CHECK(a->has_fill == b->has_fill, "%s: has_fill %d != %d", label, b->has_fill,
           a->has_fill);
  if (a->has_fill && b->has_fill)
    GZ_CHECK(iot_same(a->fill_value, b->fill_value), "%s: fill_value %.17g != %.17g",
             label, b->fill_value, a->fill_value);
  GZ_CHECK(a->has_scale == b->has_scale, "%s: has_scale", label);
  if (a->has_scale && b->has_scale)
    GZ_CHECK(a->scale_factor == b->scale_factor && a->add_offset == b->add_offset,
             "%s: scale/offset", label);
  check_attrs(a->attrs, a->nattrs, b->attrs, b->nattrs, "attribute", label);
  check_attrs(a->global_attrs, a->nglobal_attrs, b->global_attrs, b->nglobal_attrs,
              "global attribute", label);
  return (int)(gz_test_failed() - before);
}

const char *iot_scratch_dir(MPI_Comm comm) {
  static char dir[256];
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    snprintf(dir, sizeof dir, "/tmp/gzio-test-XXXXXX");
    if (!mkdtemp(dir))
      dir[0] = '\0';
  }
  MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, comm);
  return dir;
}

void iot_scratch_remove(const char *dir, MPI_Comm comm) {
  int rank = 0;
  MPI_Barrier(comm);
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && dir && dir[0]) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    if (d)
      closedir(d);
    rmdir(dir);
  }
  MPI_Barrier(comm);
}

int iot_temp_files(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp-"))
      n++;
  if (d)
    closedir(d);
  return n;
}

int iot_write_file(const char *path, const void *buf, size_t size) {
  FILE *f = fopen(path, "wb");
  int rc;
  if (!f)
    return -1;
  rc = fwrite(buf, 1, size, f) == size ? 0 : -1;
  if (fclose(f) != 0)
    rc = -1;
  return rc;
}

int iot_contains(const char *hay, const char *needle) {
  return hay && needle && strstr(hay, needle) != NULL;
}
