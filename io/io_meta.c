/* io_meta.c - the variable metadata (gz_meta_t): construction, deep copy,
 * attribute lists, and the little-endian blob stored in .gzc archives.
 *
 * Blob layout, version 1 (all integers little-endian, f64 = IEEE-754 binary64
 * bit pattern as u64, str = u32 byte length + bytes, no NUL):
 *
 *   "GZMT" u32 version=1 u64 total_size (bytes of the whole blob)
 *   str var (<= 255)  u32 dtype (1 f32, 2 f64)  u32 ndims (<= 8)
 *   ndims x { u64 length, str dim_name (<= 63) }
 *   str units (<= 127)  str long_name (<= 255)
 *   u8 has_fill  f64 fill_value  u8 has_scale  f64 scale_factor  f64 add_offset
 *   ndims x { u8 has_coord; if 1: str name (<= 63) str units (<= 63)
 *             u64 count (== length) f64 x count }
 *   u64 nattrs  nattrs x attr   u64 nglobal  nglobal x attr
 *   attr: str name (1..63) u8 is_text; 1: u64 len + len bytes; 0: u64 count + f64 x count
 *
 * Version 2 (written only when the meta carries native headers, so metas
 * without them keep their version-1 bytes) appends:
 *   str native_format (1..15)  u64 native_size (bytes once inflated)
 *   u64 zsize  zsize bytes: the native headers, zlib-deflated (SEG-Y trace
 *   headers repeat most of their bytes from trace to trace)
 *
 * The unpacker trusts nothing: each length is checked against the bytes
 * left before anything is allocated or copied, flags must be 0 or 1, texts
 * must hold no NUL, the product of the dims must fit size_t, and the blob
 * must end exactly at total_size. Bytes after total_size are ignored. The
 * native headers must inflate to exactly native_size bytes, and
 * native_size may not exceed what zlib can make of zsize bytes. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define META_MAGIC "GZMT"
#define META_VERSION 1u
#define META_VERSION_NATIVE 2u
/* deflate expands at most ~1032:1; more is a lie of the blob */
#define META_MAX_INFLATE 1100u

void gz_meta_init(gz_meta_t *m) {
  memset(m, 0, sizeof *m);
  m->dtype = GZ_FLOAT32;
  m->scale_factor = 1.0;
}

size_t gz_meta_count(const gz_meta_t *m) {
  size_t n = 1;
  for (int i = 0; i < m->ndims && i < GZ_IO_MAXDIMS; i++) {
    if (m->dims[i] != 0 && n > SIZE_MAX / m->dims[i])
      return 0;
    n *= m->dims[i];
  }
  return n;
}

static void attrs_free(gz_attr_t *a, size_t n) {
  for (size_t i = 0; a && i < n; i++) {
    free(a[i].text);
    free(a[i].values);
  }
  free(a);
}

void gz_meta_free(gz_meta_t *m) {
  if (!m)
    return;
  for (int i = 0; i < GZ_IO_MAXDIMS; i++)
    free(m->coords[i].values);
  attrs_free(m->attrs, m->nattrs);
  attrs_free(m->global_attrs, m->nglobal_attrs);
  free(m->native);
  memset(m, 0, sizeof *m);
}

static int attr_fill(gz_attr_t *a, const char *name, const char *text,
                     const double *values, size_t count) {
  memset(a, 0, sizeof *a);
  snprintf(a->name, sizeof a->name, "%s", name);
  if (text) {
    size_t len = strlen(text);
    a->is_text = 1;
    a->text = malloc(len + 1);
    if (!a->text)
      return -1;
    memcpy(a->text, text, len + 1);
    a->count = len;
    return 0;
  }
  if (count) {
    if (!values || count > SIZE_MAX / sizeof(double))
      return -1;
    a->values = malloc(count * sizeof(double));
    if (!a->values)
      return -1;
    memcpy(a->values, values, count * sizeof(double));
  }
  a->count = count;
  return 0;
}

static int attr_name_ok(const char *name) {
  return name && name[0] && strlen(name) < sizeof(((gz_attr_t *)0)->name);
}

int gz_io_attr_append(gz_attr_t **list, size_t *n, const char *name, const char *text,
                      const double *values, size_t count) {
  gz_attr_t *grown;
  if (!attr_name_ok(name) || *n >= SIZE_MAX / sizeof(gz_attr_t) - 1)
    return -1;
  grown = realloc(*list, (*n + 1) * sizeof(gz_attr_t));
  if (!grown)
    return -1;
  *list = grown;
  if (attr_fill(&grown[*n], name, text, values, count) != 0) {
    free(grown[*n].text);
    free(grown[*n].values);
    return -1;
  }
  (*n)++;
  return 0;
}

/* Add, or replace the attribute of the same name in place. */
static int attr_set(gz_attr_t **list, size_t *n, const char *name, const char *text,
                    const double *values, size_t count) {
  gz_attr_t fresh;
  if (!attr_name_ok(name))
    return -1;
  for (size_t i = 0; i < *n; i++) {
    if (strcmp((*list)[i].name, name) == 0) {
      if (attr_fill(&fresh, name, text, values, count) != 0) {
        free(fresh.text);
        free(fresh.values);
        return -1;
      }
      free((*list)[i].text);
      free((*list)[i].values);
      (*list)[i] = fresh;
      return 0;
    }
  }
  return gz_io_attr_append(list, n, name, text, values, count);
}

int gz_meta_add_global_text(gz_meta_t *m, const char *name, const char *text) {
  if (!m || !text)
    return -1;
  return attr_set(&m->global_attrs, &m->nglobal_attrs, name, text, NULL, 0);
}

int gz_meta_add_global_number(gz_meta_t *m, const char *name, double value) {
  if (!m)
    return -1;
  return attr_set(&m->global_attrs, &m->nglobal_attrs, name, NULL, &value, 1);
}

int gz_meta_add_attr_text(gz_meta_t *m, const char *name, const char *text) {
  if (!m || !text)
    return -1;
  return attr_set(&m->attrs, &m->nattrs, name, text, NULL, 0);
}

int gz_meta_add_attr_numbers(gz_meta_t *m, const char *name, const double *values,
                             size_t count) {
  if (!m || (count && !values))
    return -1;
  return attr_set(&m->attrs, &m->nattrs, name, NULL, values, count);
}

int gz_io_bound_attrs(gz_meta_t *m, const gz_io_bound_t *b) {
  return gz_meta_add_attr_numbers(m, "gzstack_abs_error_bound", &b->abs_bound, 1) != 0 ||
                 gz_meta_add_attr_text(m, "gzstack_eb_mode", b->mode) != 0 ||
                 gz_meta_add_attr_numbers(m, "gzstack_eb_target", &b->target, 1) != 0
             ? -1
             : 0;
}

static const gz_attr_t *attr_find(const gz_attr_t *a, size_t n, const char *name) {
  for (size_t i = 0; a && name && i < n; i++)
    if (strcmp(a[i].name, name) == 0)
      return &a[i];
  return NULL;
}

const gz_attr_t *gz_meta_find_attr(const gz_meta_t *m, const char *name) {
  return m ? attr_find(m->attrs, m->nattrs, name) : NULL;
}

const gz_attr_t *gz_meta_find_global(const gz_meta_t *m, const char *name) {
  return m ? attr_find(m->global_attrs, m->nglobal_attrs, name) : NULL;
}

int gz_meta_set_coord(gz_meta_t *m, int dim, const char *name, const char *units,
                      const double *values, size_t count) {
  gz_coord_t *c;
  double *copy = NULL;
  if (!m || dim < 0 || dim >= m->ndims || dim >= GZ_IO_MAXDIMS)
    return -1;
  c = &m->coords[dim];
  if (values) {
    if (count != m->dims[dim] || count == 0 || count > SIZE_MAX / sizeof(double))
      return -1;
    copy = malloc(count * sizeof(double));
    if (!copy)
      return -1;
    memcpy(copy, values, count * sizeof(double));
  }
  free(c->values);
  memset(c, 0, sizeof *c);
  if (!copy)
    return 0;
  c->values = copy;
  c->count = count;
  snprintf(c->name, sizeof c->name, "%s", name ? name : m->dim_names[dim]);
  if (units)
    snprintf(c->units, sizeof c->units, "%s", units);
  return 0;
}

static int attrs_copy(gz_attr_t **dst, size_t *ndst, const gz_attr_t *src, size_t n) {
  *dst = NULL;
  *ndst = 0;
  for (size_t i = 0; i < n; i++) {
    const gz_attr_t *a = &src[i];
    if (gz_io_attr_append(dst, ndst, a->name,
                          a->is_text ? (a->text ? a->text : "") : NULL,
                          a->is_text ? NULL : a->values, a->is_text ? 0 : a->count) != 0)
      return -1;
  }
  return 0;
}

int gz_meta_copy(gz_meta_t *dst, const gz_meta_t *src) {
  if (!dst || !src)
    return -1;
  memcpy(dst, src, sizeof *dst);
  for (int i = 0; i < GZ_IO_MAXDIMS; i++) {
    dst->coords[i].values = NULL;
    dst->coords[i].count = 0;
  }
  dst->attrs = dst->global_attrs = NULL;
  dst->nattrs = dst->nglobal_attrs = 0;
  dst->native = NULL;
  dst->native_size = 0;
  if (src->native && src->native_size) {
    if (!(dst->native = malloc(src->native_size)))
      goto fail;
    memcpy(dst->native, src->native, src->native_size);
    dst->native_size = src->native_size;
  }
  for (int i = 0; i < GZ_IO_MAXDIMS; i++) {
    const gz_coord_t *c = &src->coords[i];
    if (!c->values || c->count == 0)
      continue;
    if (c->count > SIZE_MAX / sizeof(double) ||
        !(dst->coords[i].values = malloc(c->count * sizeof(double))))
      goto fail;
    memcpy(dst->coords[i].values, c->values, c->count * sizeof(double));
    dst->coords[i].count = c->count;
  }
  if (attrs_copy(&dst->attrs, &dst->nattrs, src->attrs, src->nattrs) != 0 ||
      attrs_copy(&dst->global_attrs, &dst->nglobal_attrs, src->global_attrs,
                 src->nglobal_attrs) != 0)
    goto fail;
  return 0;
fail:
  gz_meta_free(dst);
  return -1;
}

/* ---------------------------------------------------------------------- */
/* Helpers for the readers (declared in gz_io.h).                         */

void gz_io_errorf(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  if (!err || errlen == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int gz_io_reserved_attr(const char *name) {
  static const char *const reserved[] = {
      "_NCProperties",
      "_Netcdf4Coordinates",
      "_Netcdf4Dimid",
      "_nc3_strict",
      "_IsNetcdf4",
      "_SuperblockVersion",
      "_Format",
      "_Endianness",
      "_Storage",
      "_ChunkSizes",
      "_Fletcher32",
      "_DeflateLevel",
      "_Shuffle",
      "_Filter",
      "_NoFill",
      "_Codecs",
      "_NCZARR_ATTR",
      "DIMENSION_LIST",
      "REFERENCE_LIST",
      "CLASS",
      "NAME",
      "_QuantizeBitGroomNumberOfSignificantDigits",
      "_QuantizeGranularBitRoundNumberOfSignificantDigits",
      "_QuantizeBitRoundNumberOfSignificantBits"};
  for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (strcmp(name, reserved[i]) == 0)
      return 1;
  return 0;
}

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

int gz_io_meta_set_fill(gz_meta_t *m, const double *fill, const double *missing) {
  const double *use = fill;
  const char *other_name = "missing_value";
  const double *other = missing;
  if (fill && isnan(*fill) && missing && !isnan(*missing)) {
    use = missing;
    other = fill;
    other_name = "_FillValue";
  } else if (!fill) {
    use = missing;
    other = NULL;
  }
  m->has_fill = use != NULL;
  m->fill_value = use ? *use : 0.0;
  /* A second, different missing marker stays visible (as missing_value; a
   * NaN _FillValue needs no keeping: NaN is always missing). */
  if (other && !same_value(*other, *use) && strcmp(other_name, "missing_value") == 0)
    return gz_io_attr_append(&m->attrs, &m->nattrs, other_name, NULL, other, 1);
  return 0;
}

void gz_io_meta_unpack_fill(gz_meta_t *m) {
  if (m->has_fill && m->has_scale)
    m->fill_value = m->fill_value * m->scale_factor + m->add_offset;
}

/* ---------------------------------------------------------------------- */
/* Packing                                                                */

typedef struct {
  unsigned char *p; /* NULL: measure only */
  size_t cap, pos;
  int bad;
} wbuf_t;

static void put_bytes(wbuf_t *w, const void *src, size_t n) {
  if (w->bad || n > SIZE_MAX - w->pos) {
    w->bad = 1;
    return;
  }
  if (w->p) {
    if (w->pos + n > w->cap) {
      w->bad = 1;
      return;
    }
    if (n)
      memcpy(w->p + w->pos, src, n);
  }
  w->pos += n;
}

static void put_u64(wbuf_t *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 8);
}

static void put_u32(wbuf_t *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 4);
}

static void put_u8(wbuf_t *w, unsigned v) {
  unsigned char b = (unsigned char)v;
  put_bytes(w, &b, 1);
}

static void put_f64(wbuf_t *w, double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  put_u64(w, v);
}

/* A bounded string field; its capacity includes the NUL. */
static void put_str(wbuf_t *w, const char *s, size_t field) {
  size_t len = strnlen(s, field);
  if (len >= field) {
    w->bad = 1;
    return;
  }
  put_u32(w, (uint32_t)len);
  put_bytes(w, s, len);
}

static void put_attrs(wbuf_t *w, const gz_attr_t *a, size_t n) {
  if (n && !a) {
    w->bad = 1;
    return;
  }
  put_u64(w, n);
  for (size_t i = 0; i < n && !w->bad; i++) {
    put_str(w, a[i].name, sizeof a[i].name);
    put_u8(w, a[i].is_text ? 1 : 0);
    if (a[i].is_text) {
      size_t len = a[i].text ? strlen(a[i].text) : 0;
      put_u64(w, len);
      put_bytes(w, a[i].text, len);
    } else {
      if (a[i].count && !a[i].values) {
        w->bad = 1;
        return;
      }
      put_u64(w, a[i].count);
      for (size_t k = 0; k < a[i].count; k++)
        put_f64(w, a[i].values[k]);
    }
  }
}

/* The version-2 tail: the native headers, deflated (the same bytes in the
 * measuring and the writing pass: compress2 is deterministic). */
static void put_native(wbuf_t *w, const gz_meta_t *m) {
  uLongf zsize = compressBound((uLong)m->native_size);
  unsigned char *z = malloc(zsize);
  if (!z || compress2(z, &zsize, m->native, (uLong)m->native_size, 6) != Z_OK) {
    w->bad = 1;
  } else {
    put_str(w, m->native_format, sizeof m->native_format);
    put_u64(w, m->native_size);
    put_u64(w, zsize);
    put_bytes(w, z, zsize);
  }
  free(z);
}

size_t gz_meta_pack(const gz_meta_t *m, void *buf, size_t cap) {
  wbuf_t w = {buf, cap, 0, 0};
  size_t total;
  int has_native;
  if (!m || m->ndims < 0 || m->ndims > GZ_IO_MAXDIMS ||
      (m->dtype != GZ_FLOAT32 && m->dtype != GZ_FLOAT64))
    return 0;
  has_native = m->native && m->native_size;
  if (has_native && !m->native_format[0])
    return 0;
  if (buf) {
    total = gz_meta_pack(m, NULL, 0);
    if (total == 0 || total > cap)
      return 0;
  } else {
    total = 0; /* patched below once known */
  }
  put_bytes(&w, META_MAGIC, 4);
  put_u32(&w, has_native ? META_VERSION_NATIVE : META_VERSION);
  put_u64(&w, total);
  put_str(&w, m->var, sizeof m->var);
  put_u32(&w, (uint32_t)m->dtype);
  put_u32(&w, (uint32_t)m->ndims);
  for (int i = 0; i < m->ndims; i++) {
    put_u64(&w, m->dims[i]);
    put_str(&w, m->dim_names[i], sizeof m->dim_names[i]);
  }
  put_str(&w, m->units, sizeof m->units);
  put_str(&w, m->long_name, sizeof m->long_name);
  put_u8(&w, m->has_fill ? 1 : 0);
  put_f64(&w, m->fill_value);
  put_u8(&w, m->has_scale ? 1 : 0);
  put_f64(&w, m->scale_factor);
  put_f64(&w, m->add_offset);
  for (int i = 0; i < m->ndims; i++) {
    const gz_coord_t *c = &m->coords[i];
    if (!c->values) {
      put_u8(&w, 0);
      continue;
    }
    if (c->count != m->dims[i]) {
      w.bad = 1;
      break;
    }
    put_u8(&w, 1);
    put_str(&w, c->name, sizeof c->name);
    put_str(&w, c->units, sizeof c->units);
    put_u64(&w, c->count);
    for (size_t k = 0; k < c->count; k++)
      put_f64(&w, c->values[k]);
  }
  put_attrs(&w, m->attrs, m->nattrs);
  put_attrs(&w, m->global_attrs, m->nglobal_attrs);
  if (has_native && !w.bad)
    put_native(&w, m);
  if (w.bad)
    return 0;
  return w.pos;
}

/* ---------------------------------------------------------------------- */
/* Unpacking (hostile input)                                              */

typedef struct {
  const unsigned char *p;
  size_t size, pos;
  char *err;
  size_t errlen;
  int bad;
} rbuf_t;

static int fail_at(rbuf_t *r, const char *what) {
  if (!r->bad)
    gz_io_errorf(r->err, r->errlen, "metadata blob: %s at byte %zu of %zu", what, r->pos,
                 r->size);
  r->bad = 1;
  return -1;
}

static size_t left(const rbuf_t *r) { return r->size - r->pos; }

static int get_bytes(rbuf_t *r, void *dst, size_t n, const char *what) {
  if (r->bad)
    return -1;
  if (n > left(r))
    return fail_at(r, what);
  if (n)
    memcpy(dst, r->p + r->pos, n);
  r->pos += n;
  return 0;
}

static uint64_t get_u64(rbuf_t *r, const char *what) {
  unsigned char b[8];
  uint64_t v = 0;
  if (get_bytes(r, b, 8, what) != 0)
    return 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | b[i];
  return v;
}

static uint32_t get_u32(rbuf_t *r, const char *what) {
  unsigned char b[4];
  uint32_t v = 0;
  if (get_bytes(r, b, 4, what) != 0)
    return 0;
  for (int i = 3; i >= 0; i--)
    v = (v << 8) | b[i];
  return v;
}

static int get_flag(rbuf_t *r, const char *what) {
  unsigned char b = 0;
  if (get_bytes(r, &b, 1, what) != 0)
    return 0;
  if (b > 1) {
    fail_at(r, what);
    return 0;
  }
  return b;
}

static double get_f64(rbuf_t *r, const char *what) {
  uint64_t v = get_u64(r, what);
  double d;
  memcpy(&d, &v, 8);
  return d;
}

/* Read a string into a field of cap bytes (NUL included); min_len 0 or 1. */
static void get_str(rbuf_t *r, char *dst, size_t cap, size_t min_len, const char *what) {
  uint32_t len = get_u32(r, what);
  if (r->bad)
    return;
  if (len >= cap || len < min_len || len > left(r)) {
    fail_at(r, what);
    return;
  }
  if (memchr(r->p + r->pos, 0, len)) {
    fail_at(r, what);
    return;
  }
  get_bytes(r, dst, len, what);
  dst[len] = '\0';
}

static int get_doubles(rbuf_t *r, double **out, uint64_t count, const char *what) {
  *out = NULL;
  if (count == 0)
    return 0;
  if (count > left(r) / 8)
    return fail_at(r, what);
  *out = malloc((size_t)count * sizeof(double));
  if (!*out)
    return fail_at(r, "out of memory");
  for (uint64_t k = 0; k < count; k++)
    (*out)[k] = get_f64(r, what);
  return r->bad ? -1 : 0;
}

static int get_attrs(rbuf_t *r, gz_attr_t **out, size_t *nout, const char *what) {
  /* Smallest attribute: name length + 1 byte name + flag + u64 count. */
  const size_t min_attr = 4 + 1 + 1 + 8;
  uint64_t n = get_u64(r, what);
  *out = NULL;
  *nout = 0;
  if (r->bad)
    return -1;
  if (n > left(r) / min_attr)
    return fail_at(r, what);
  if (n == 0)
    return 0;
  *out = calloc((size_t)n, sizeof(gz_attr_t));
  if (!*out)
    return fail_at(r, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    gz_attr_t *a = &(*out)[i];
    *nout = (size_t)i + 1; /* counted as soon as it may own memory */
    get_str(r, a->name, sizeof a->name, 1, "attribute name");
    a->is_text = get_flag(r, "attribute kind");
    uint64_t count = get_u64(r, "attribute length");
    if (r->bad)
      return -1;
    if (a->is_text) {
      if (count > left(r))
        return fail_at(r, "attribute text length");
      a->text = malloc((size_t)count + 1);
      if (!a->text)
        return fail_at(r, "out of memory");
      if (memchr(r->p + r->pos, 0, (size_t)count))
        return fail_at(r, "NUL inside attribute text");
      get_bytes(r, a->text, (size_t)count, "attribute text");
      a->text[count] = '\0';
    } else if (get_doubles(r, &a->values, count, "attribute values") != 0) {
      return -1;
    }
    a->count = (size_t)count;
  }
  return r->bad ? -1 : 0;
}

static int get_native(rbuf_t *r, gz_meta_t *m) {
  uint64_t size, zsize;
  uLongf got;
  get_str(r, m->native_format, sizeof m->native_format, 1, "native header format");
  size = get_u64(r, "native header size");
  zsize = get_u64(r, "native header size");
  if (r->bad)
    return -1;
  if (zsize == 0 || zsize > left(r) || size == 0 || size > SIZE_MAX ||
      size > (uint64_t)META_MAX_INFLATE * zsize + 64 || (uLong)size != size)
    return fail_at(r, "native header sizes");
  if (!(m->native = malloc((size_t)size)))
    return fail_at(r, "out of memory");
  got = (uLongf)size;
  if (uncompress(m->native, &got, r->p + r->pos, (uLong)zsize) != Z_OK || got != size)
    return fail_at(r, "damaged native headers");
  m->native_size = (size_t)size;
  r->pos += (size_t)zsize;
  return 0;
}

int gz_meta_unpack(const void *buf, size_t size, gz_meta_t *m, char *err, size_t errlen) {
  rbuf_t r = {buf, size, 0, err, errlen, 0};
  char magic[4];
  uint64_t total;
  uint32_t version, dtype, ndims;
  if (!m)
    return -1;
  gz_meta_init(m);
  if (!buf) {
    gz_io_errorf(err, errlen, "metadata blob: no data");
    return -1;
  }
  if (get_bytes(&r, magic, 4, "truncated header") != 0)
    goto fail;
  if (memcmp(magic, META_MAGIC, 4) != 0) {
    fail_at(&r, "not a gzstack metadata blob (bad magic)");
    goto fail;
  }
  version = get_u32(&r, "truncated header");
  total = get_u64(&r, "truncated header");
  if (r.bad)
    goto fail;
  if (version != META_VERSION && version != META_VERSION_NATIVE) {
    gz_io_errorf(err, errlen, "metadata blob: unsupported version %u", (unsigned)version);
    goto fail;
  }
  if (total > size || total < r.pos) {
    gz_io_errorf(err, errlen, "metadata blob: says %llu bytes but %zu are present",
                 (unsigned long long)total, size);
    goto fail;
  }
  r.size = (size_t)total;
  get_str(&r, m->var, sizeof m->var, 0, "variable name");
  dtype = get_u32(&r, "dtype");
  ndims = get_u32(&r, "ndims");
  if (r.bad)
    goto fail;
  if (dtype != GZ_FLOAT32 && dtype != GZ_FLOAT64) {
    fail_at(&r, "unknown dtype");
    goto fail;
  }
  if (ndims > GZ_IO_MAXDIMS) {
    fail_at(&r, "too many dimensions");
    goto fail;
  }
  m->dtype = (gz_dtype_t)dtype;
  m->ndims = (int)ndims;
  for (uint32_t i = 0; i < ndims; i++) {
    uint64_t d = get_u64(&r, "dimension length");
    if (r.bad)
      goto fail;
    if (d > SIZE_MAX) {
      fail_at(&r, "dimension length too large");
      goto fail;
    }
    m->dims[i] = (size_t)d;
    get_str(&r, m->dim_names[i], sizeof m->dim_names[i], 0, "dimension name");
  }
  if (!r.bad && ndims && gz_meta_count(m) == 0) {
    /* zero-length dims are allowed; only an overflowing product is not */
    int has_zero = 0;
    for (uint32_t i = 0; i < ndims; i++)
      has_zero |= m->dims[i] == 0;
    if (!has_zero) {
      fail_at(&r, "product of the dimensions overflows");
      goto fail;
    }
  }
  get_str(&r, m->units, sizeof m->units, 0, "units");
  get_str(&r, m->long_name, sizeof m->long_name, 0, "long_name");
  m->has_fill = get_flag(&r, "has_fill");
  m->fill_value = get_f64(&r, "fill_value");
  m->has_scale = get_flag(&r, "has_scale");
  m->scale_factor = get_f64(&r, "scale_factor");
  m->add_offset = get_f64(&r, "add_offset");
  for (uint32_t i = 0; i < ndims && !r.bad; i++) {
    gz_coord_t *c = &m->coords[i];
    if (!get_flag(&r, "coordinate flag"))
      continue;
    get_str(&r, c->name, sizeof c->name, 0, "coordinate name");
    get_str(&r, c->units, sizeof c->units, 0, "coordinate units");
    uint64_t count = get_u64(&r, "coordinate count");
    if (r.bad)
      goto fail;
    if (count != m->dims[i] || count == 0) {
      fail_at(&r, "coordinate count differs from its dimension");
      goto fail;
    }
    if (get_doubles(&r, &c->values, count, "coordinate values") != 0)
      goto fail;
    c->count = (size_t)count;
  }
  if (r.bad || get_attrs(&r, &m->attrs, &m->nattrs, "attribute count") != 0 ||
      get_attrs(&r, &m->global_attrs, &m->nglobal_attrs, "global attribute count") != 0)
    goto fail;
  if (version == META_VERSION_NATIVE && get_native(&r, m) != 0)
    goto fail;
  if (r.pos != r.size) {
    fail_at(&r, "unexpected bytes before the end");
    goto fail;
  }
  return 0;
fail:
  gz_meta_free(m);
  return -1;
}
