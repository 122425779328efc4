/* test_io_meta.c - gz_meta_t construction, deep copy and the packed blob:
 * round trip of every field, capacity handling, and hostile blobs
 * (every truncation, every byte set to extreme values, random flips) that
 * must give -1 or a consistent meta, never a crash (run under ASan). */
#include "io_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A successfully unpacked meta must be internally consistent. */
static int consistent(const gz_meta_t *m) {
  if (m->ndims < 0 || m->ndims > GZ_IO_MAXDIMS)
    return 0;
  if (m->dtype != GZ_FLOAT32 && m->dtype != GZ_FLOAT64)
    return 0;
  if (memchr(m->var, 0, sizeof m->var) == NULL ||
      memchr(m->units, 0, sizeof m->units) == NULL)
    return 0;
  for (int i = 0; i < m->ndims; i++) {
    if (m->coords[i].values && m->coords[i].count != m->dims[i])
      return 0;
    if (!m->coords[i].values && m->coords[i].count != 0)
      return 0;
  }
  for (size_t i = 0; i < m->nattrs; i++) {
    const gz_attr_t *a = &m->attrs[i];
    if (!a->name[0] || memchr(a->name, 0, sizeof a->name) == NULL)
      return 0;
    if (a->is_text && (!a->text || strlen(a->text) != a->count))
      return 0;
    if (!a->is_text && a->count && !a->values)
      return 0;
    /* touch every value so ASan sees any out-of-bounds array */
    for (size_t k = 0; !a->is_text && k < a->count; k++)
      if (a->values[k] != a->values[k] && 0)
        return 0;
  }
  for (size_t i = 0; i < m->nglobal_attrs; i++) {
    const gz_attr_t *a = &m->global_attrs[i];
    if (a->is_text && (!a->text || strlen(a->text) != a->count))
      return 0;
  }
  return 1;
}

static void test_roundtrip(gz_dtype_t dtype) {
  gz_meta_t m, back, copy;
  char err[256];
  size_t need, got;
  unsigned char *buf;
  iot_make_meta(&m, dtype, "/group/temp");
  m.has_scale = 1;
  m.scale_factor = 0.01;
  m.add_offset = 273.15;
  need = gz_meta_pack(&m, NULL, 0);
  GZ_CHECK(need > 0, "pack size %zu", need);
  buf = malloc(need + 16);
  GZ_CHECK(gz_meta_pack(&m, buf, need - 1) == 0, "pack into a short buffer must fail");
  got = gz_meta_pack(&m, buf, need + 16);
  GZ_CHECK(got == need, "pack wrote %zu, measured %zu", got, need);
  GZ_CHECK(gz_meta_unpack(buf, got, &back, err, sizeof err) == 0, "unpack: %s", err);
  iot_check_meta(&m, &back, 0, "pack/unpack");
  GZ_CHECK(back.has_scale == 1 && back.scale_factor == 0.01 && back.add_offset == 273.15,
           "scale fields");
  gz_meta_free(&back);
  /* trailing bytes after the blob are ignored */
  memset(buf + got, 0xAB, 16);
  GZ_CHECK(gz_meta_unpack(buf, got + 16, &back, err, sizeof err) == 0, "trailing: %s",
           err);
  gz_meta_free(&back);
  GZ_CHECK(gz_meta_copy(&copy, &m) == 0, "copy");
  iot_check_meta(&m, &copy, 0, "copy");
  GZ_CHECK(copy.attrs != m.attrs && copy.coords[0].values != m.coords[0].values,
           "copy is deep");
  gz_meta_free(&m); /* the copy must survive its source */
  GZ_CHECK(copy.coords[1].values[5] == 75.0, "copy values after source freed");
  gz_meta_free(&copy);
  GZ_CHECK(copy.attrs == NULL && copy.nattrs == 0 && copy.ndims == 0, "free zeroes");
  free(buf);
}

static void test_attr_lists(void) {
  gz_meta_t m;
  const gz_attr_t *a;
  char longname[100];
  gz_meta_init(&m);
  GZ_CHECK(gz_meta_add_global_text(&m, "history", "first") == 0, "add text");
  GZ_CHECK(gz_meta_add_global_number(&m, "gzstack_eb", 1e-3) == 0, "add number");
  GZ_CHECK(gz_meta_add_global_text(&m, "history", "second") == 0, "replace text");
  GZ_CHECK(m.nglobal_attrs == 2, "replace keeps the count (%zu)", m.nglobal_attrs);
  a = gz_meta_find_global(&m, "history");
  GZ_CHECK(a && a->is_text && strcmp(a->text, "second") == 0 && a->count == 6,
           "replaced value");
  GZ_CHECK(gz_meta_add_global_number(&m, "history", 2.0) == 0, "text -> number");
  a = gz_meta_find_global(&m, "history");
  GZ_CHECK(a && !a->is_text && a->count == 1 && a->values[0] == 2.0 && !a->text,
           "number replaced text");
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  GZ_CHECK(gz_meta_add_global_text(&m, longname, "v") != 0, "name too long refused");
  GZ_CHECK(gz_meta_add_global_text(&m, "", "v") != 0, "empty name refused");
  GZ_CHECK(gz_meta_find_global(&m, "nope") == NULL, "find missing");
  m.ndims = 1;
  m.dims[0] = 3;
  double v[3] = {1, 2, 3};
  GZ_CHECK(gz_meta_set_coord(&m, 0, NULL, "m", v, 2) != 0, "coord count must match");
  GZ_CHECK(gz_meta_set_coord(&m, 1, NULL, "m", v, 3) != 0, "coord dim out of range");
  GZ_CHECK(gz_meta_set_coord(&m, 0, "x", "m", v, 3) == 0, "coord set");
  GZ_CHECK(gz_meta_set_coord(&m, 0, NULL, NULL, NULL, 0) == 0 && !m.coords[0].values,
           "coord clear");
  GZ_CHECK(gz_meta_count(&m) == 3, "count");
  gz_meta_free(&m);
  gz_meta_free(NULL);
  /* pack refuses an inconsistent meta */
  gz_meta_init(&m);
  m.ndims = GZ_IO_MAXDIMS + 1;
  GZ_CHECK(gz_meta_pack(&m, NULL, 0) == 0, "pack refuses ndims > max");
  m.ndims = 1;
  m.dims[0] = 4;
  m.coords[0].values = v;
  m.coords[0].count = 3;
  GZ_CHECK(gz_meta_pack(&m, NULL, 0) == 0, "pack refuses a coord of the wrong length");
}

static int try_unpack(const unsigned char *buf, size_t size, long *accepted) {
  gz_meta_t m;
  char err[256];
  int rc = gz_meta_unpack(buf, size, &m, err, sizeof err);
  if (rc == 0) {
    (*accepted)++;
    if (!GZ_CHECK(consistent(&m), "accepted blob is inconsistent"))
      rc = -2;
    gz_meta_free(&m);
    return rc;
  }
  if (!GZ_CHECK(rc == -1 && err[0] && m.attrs == NULL && m.ndims == 0,
                "a rejected blob must give -1, a message and an empty meta"))
    return -2;
  return rc;
}

static void test_hostile(void) {
  gz_meta_t m;
  unsigned char *good, *bad;
  size_t size;
  long accepted = 0, rejected_trunc = 0;
  gz_rng_t rng;
  iot_make_meta(&m, GZ_FLOAT64, "/grp/hostile");
  size = gz_meta_pack(&m, NULL, 0);
  good = malloc(size);
  bad = malloc(size);
  gz_meta_pack(&m, good, size);
  gz_meta_free(&m);
  GZ_CHECK(try_unpack(NULL, 10, &accepted) == -1, "NULL buffer");
  /* every truncation: exactly-sized copies so ASan catches any overread */
  for (size_t len = 0; len < size; len++) {
    unsigned char *t = malloc(len ? len : 1);
    memcpy(t, good, len);
    if (try_unpack(t, len, &accepted) == -1)
      rejected_trunc++;
    free(t);
  }
  GZ_CHECK(rejected_trunc == (long)size, "all %zu truncations rejected (%ld)", size,
           rejected_trunc);
  /* every byte set to extreme values */
  static const unsigned char vals[] = {0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF};
  for (size_t pos = 0; pos < size; pos++)
    for (size_t v = 0; v < sizeof vals; v++) {
      memcpy(bad, good, size);
      bad[pos] = vals[v];
      try_unpack(bad, size, &accepted);
    }
  /* random multi-byte flips */
  gz_rng_seed(&rng, 20240611u);
  for (int iter = 0; iter < 20000; iter++) {
    int flips = 1 + (int)(gz_rng_next(&rng) % 4);
    memcpy(bad, good, size);
    for (int f = 0; f < flips; f++)
      bad[gz_rng_next(&rng) % size] ^= (unsigned char)(1u << (gz_rng_next(&rng) % 8));
    try_unpack(bad, size, &accepted);
  }
  /* random bytes behind a valid header */
  for (int iter = 0; iter < 2000; iter++) {
    memcpy(bad, good, 16);
    for (size_t i = 16; i < size; i++)
      bad[i] = (unsigned char)gz_rng_next(&rng);
    try_unpack(bad, size, &accepted);
  }
  printf("hostile blobs: %zu-byte blob, %ld variants accepted as valid metas\n", size,
         accepted);
  free(good);
  free(bad);
}

int main(void) {
  test_roundtrip(GZ_FLOAT32);
  test_roundtrip(GZ_FLOAT64);
  test_attr_lists();
  test_hostile();
  return gz_test_finish();
}
