/* io_rsf.c - Madagascar RSF: a text header of key=value pairs (n1 d1 o1
 * label1 unit1 ... n9, in=, data_format=, esize=) and the data, in the file
 * in= names or, with in="stdin" (or when the header ends with the form
 * feeds and EOT Madagascar writes, \014\014\004), in the same file after
 * them.
 *
 * Axes: n1 is the fastest, so the C-order dims are n_N .. n1 (N the highest
 * axis the header names, explicit n=1 axes included: `sfput n4=1` makes a
 * cube one record). Records (what `gzstack stack` stacks) run along the
 * slowest axis, as Madagascar's `sfstack axis=N`. Coordinates o + i d with
 * the units unitK; dimension names from labelK ("nK" without).
 * data_format: native_float / native_double (the host's order),
 * xdr_float / xdr_double (big-endian), ascii_float (numbers as text, read
 * at open). A key given twice takes its last value, as Madagascar does
 * (headers grow by appending).
 *
 * Writing: the out=stdout form (header, \014\014\004, data) in one file, so
 * the output appears whole or not at all. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"
#include "gz_io_commit.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RSF_MAX_HEADER (1 << 20)
#define RSF_AXES 9

static const char rsf_sep[3] = {'\014', '\014', '\004'};

typedef struct {
  int fd;
  char *path, *data_path;
  unsigned long long offset; /* of the first value in data_path */
  size_t esize;
  int swap;
  void *values; /* ascii_float: every value, read at open */
} rsf_state_t;

/* The header text (up to the separator or the end, at most
 * RSF_MAX_HEADER bytes); *sep_at = offset of the data after the separator,
 * or 0 without one. */
static char *read_header(int fd, unsigned long long *sep_at, size_t *len) {
  char *h = malloc(RSF_MAX_HEADER + 1);
  size_t n = 0;
  *sep_at = 0;
  if (!h)
    return NULL;
  while (n < RSF_MAX_HEADER) {
    ssize_t k = pread(fd, h + n, RSF_MAX_HEADER - n, (off_t)n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    n += (size_t)k;
  }
  for (size_t i = 0; i + 3 <= n; i++)
    if (memcmp(h + i, rsf_sep, 3) == 0) {
      *sep_at = i + 3;
      n = i;
      break;
    }
  h[n] = '\0';
  *len = n;
  return h;
}

int gz_io_rsf_probe(const char *path) {
  char b[4097];
  int fd = open(path, O_RDONLY);
  ssize_t k;
  if (fd < 0)
    return 0;
  k = pread(fd, b, sizeof b - 1, 0);
  close(fd);
  if (k <= 0)
    return 0;
  b[k] = '\0';
  for (ssize_t i = 0; i < k && b[i] != '\014'; i++)
    if (!isprint((unsigned char)b[i]) && !isspace((unsigned char)b[i]))
      return 0;
  for (const char *p = strstr(b, "n1="); p; p = strstr(p + 1, "n1="))
    if (p == b || isspace((unsigned char)p[-1]))
      return 1;
  return 0;
}

/* Last value of key in the header (quotes removed) into val; 1 if found. */
static int header_value(const char *h, const char *key, char *val, size_t vlen) {
  size_t kl = strlen(key);
  int found = 0;
  for (const char *p = h; (p = strstr(p, key)) != NULL; p += kl) {
    const char *v;
    size_t n = 0;
    if ((p != h && !isspace((unsigned char)p[-1])) || p[kl] != '=')
      continue;
    v = p + kl + 1;
    if (*v == '"') {
      v++;
      while (v[n] && v[n] != '"')
        n++;
    } else {
      while (v[n] && !isspace((unsigned char)v[n]))
        n++;
    }
    if (n >= vlen)
      n = vlen - 1;
    memcpy(val, v, n);
    val[n] = '\0';
    found = 1;
  }
  return found;
}

static int header_number(const char *h, const char *key, double *out) {
  char v[64], *end;
  if (!header_value(h, key, v, sizeof v))
    return 0;
  *out = strtod(v, &end);
  return end != v && *end == '\0' ? 1 : -1;
}

static void rsf_free(rsf_state_t *s) {
  if (!s)
    return;
  if (s->fd >= 0)
    close(s->fd);
  free(s->values);
  free(s->data_path);
  free(s->path);
  free(s);
}

static int read_ascii(rsf_state_t *s, size_t count, char *err, size_t errlen) {
  FILE *f = fopen(s->data_path, "r");
  float *v = malloc((count ? count : 1) * sizeof *v);
  size_t i = 0;
  int rc = -1;
  if (!f || !v) {
    gz_io_errorf(err, errlen, "%s: cannot read %s: %s", s->path, s->data_path,
                 f ? "out of memory" : strerror(errno));
    goto done;
  }
  if (s->offset && fseek(f, (long)s->offset, SEEK_SET) != 0)
    goto short_data;
  for (; i < count; i++) {
    double d;
    int c;
    while ((c = fgetc(f)) != EOF && (isspace(c) || c == ','))
      ;
    if (c == EOF)
      goto short_data;
    ungetc(c, f);
    if (fscanf(f, "%lf", &d) != 1)
      goto short_data;
    v[i] = (float)d;
  }
  s->values = v;
  v = NULL;
  rc = 0;
  goto done;
short_data:
  gz_io_errorf(err, errlen, "%s: %s holds %zu readable numbers, the header needs %zu",
               s->path, s->data_path, i, count);
done:
  free(v);
  if (f)
    fclose(f);
  return rc;
}

static int rsf_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                    MPI_Comm comm, gz_meta_t *m, void **state, char *err, size_t errlen) {
  rsf_state_t *s = calloc(1, sizeof *s);
  char *h = NULL, in[4096], fmt[64] = "native_float", key[16];
  unsigned long long sep_at;
  size_t hlen, count = 1;
  int naxes = 0, ascii = 0;
  double esize = 0;
  struct stat st;
  (void)raw;
  (void)comm;
  if (!s || !(s->path = strdup(path))) {
    free(s);
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  s->fd = open(path, O_RDONLY);
  if (s->fd < 0 || !(h = read_header(s->fd, &sep_at, &hlen))) {
    gz_io_errorf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    goto fail;
  }
  for (int k = 1; k <= RSF_AXES; k++) {
    double n;
    snprintf(key, sizeof key, "n%d", k);
    int got = header_number(h, key, &n);
    if (got < 0 || (got && (n < 1 || n != floor(n) || n > 1e15))) {
      gz_io_errorf(err, errlen, "%s: %s is not a positive whole number", path, key);
      goto fail;
    }
    if (got)
      naxes = k;
  }
  if (naxes == 0) {
    gz_io_errorf(err, errlen, "%s: not an RSF header (no n1=)", path);
    goto fail;
  }
  m->ndims = naxes;
  for (int k = 1; k <= naxes; k++) {
    int d = naxes - k;
    double n = 1, o = 0, dd = 1;
    char label[64] = "", unit[64] = "";
    snprintf(key, sizeof key, "n%d", k);
    header_number(h, key, &n);
    snprintf(key, sizeof key, "o%d", k);
    if (header_number(h, key, &o) < 0)
      goto bad_number;
    snprintf(key, sizeof key, "d%d", k);
    if (header_number(h, key, &dd) < 0)
      goto bad_number;
    snprintf(key, sizeof key, "label%d", k);
    header_value(h, key, label, sizeof label);
    snprintf(key, sizeof key, "unit%d", k);
    header_value(h, key, unit, sizeof unit);
    m->dims[d] = (size_t)n;
    if (m->dims[d] > SIZE_MAX / count) {
      gz_io_errorf(err, errlen, "%s: too large to address", path);
      goto fail;
    }
    count *= m->dims[d];
    if (label[0])
      snprintf(m->dim_names[d], sizeof m->dim_names[d], "%s", label);
    else
      snprintf(m->dim_names[d], sizeof m->dim_names[d], "n%d", k);
    {
      double *v = malloc(m->dims[d] * sizeof *v);
      if (!v)
        goto oom;
      for (size_t i = 0; i < m->dims[d]; i++)
        v[i] = o + (double)i * dd;
      if (gz_meta_set_coord(m, d, m->dim_names[d], unit, v, m->dims[d]) != 0) {
        free(v);
        goto oom;
      }
      free(v);
    }
    continue;
  bad_number:
    gz_io_errorf(err, errlen, "%s: %s is not a number", path, key);
    goto fail;
  }
  header_value(h, "data_format", fmt, sizeof fmt);
  if (header_number(h, "esize", &esize) < 0)
    esize = -1;
  if (!strcmp(fmt, "native_float") || !strcmp(fmt, "xdr_float")) {
    m->dtype = GZ_FLOAT32;
    s->swap = (strcmp(fmt, "xdr_float") == 0) == gz_io_host_is_little();
  } else if (!strcmp(fmt, "native_double") || !strcmp(fmt, "xdr_double")) {
    m->dtype = GZ_FLOAT64;
    s->swap = (strcmp(fmt, "xdr_double") == 0) == gz_io_host_is_little();
  } else if (!strcmp(fmt, "ascii_float")) {
    m->dtype = GZ_FLOAT32;
    ascii = 1;
  } else {
    gz_io_errorf(err, errlen,
                 "%s: data_format=%s is not supported (native_float, xdr_float, "
                 "native_double, xdr_double, ascii_float)",
                 path, fmt);
    goto fail;
  }
  s->esize = gz_io_dtype_size(m->dtype);
  if (!ascii && esize != 0 && esize != (double)s->esize) {
    gz_io_errorf(err, errlen, "%s: esize=%g does not match data_format=%s", path, esize,
                 fmt);
    goto fail;
  }
  if (!header_value(h, "in", in, sizeof in)) {
    if (!sep_at) {
      gz_io_errorf(err, errlen, "%s: the header names no data (in=)", path);
      goto fail;
    }
    snprintf(in, sizeof in, "stdin");
  }
  if (!strcmp(in, "stdin") || sep_at) {
    if (!sep_at) {
      gz_io_errorf(err, errlen,
                   "%s: in=\"stdin\" but no form-feed separator ends the header", path);
      goto fail;
    }
    s->data_path = strdup(path);
    s->offset = sep_at;
  } else {
    s->data_path = strdup(in);
    if (s->data_path && in[0] != '/' && access(in, R_OK) != 0) {
      /* relative to the header's folder */
      const char *slash = strrchr(path, '/');
      if (slash) {
        size_t dl = (size_t)(slash - path) + 1;
        char *p = malloc(dl + strlen(in) + 1);
        if (p) {
          memcpy(p, path, dl);
          strcpy(p + dl, in);
        }
        free(s->data_path);
        s->data_path = p;
      }
    }
  }
  if (!s->data_path)
    goto oom;
  if (s->offset == 0) {
    close(s->fd);
    s->fd = open(s->data_path, O_RDONLY);
    if (s->fd < 0) {
      gz_io_errorf(err, errlen, "%s: its data file %s: %s", path, s->data_path,
                   strerror(errno));
      goto fail;
    }
  }
  if (ascii) {
    /* at least a byte per number: a bound before anything is allocated */
    if (fstat(s->fd, &st) != 0 || (unsigned long long)st.st_size < s->offset ||
        (unsigned long long)st.st_size - s->offset < count) {
      gz_io_errorf(err, errlen, "%s: %s is too short for %zu ascii_float numbers", path,
                   s->data_path, count);
      goto fail;
    }
    if (read_ascii(s, count, err, errlen) != 0)
      goto fail;
  } else if (fstat(s->fd, &st) != 0 || (unsigned long long)st.st_size < s->offset ||
             ((unsigned long long)st.st_size - s->offset) / s->esize < count) {
    gz_io_errorf(err, errlen,
                 "%s: truncated: %s holds %llu bytes of data, the header (%zu values of "
                 "%s) needs %llu",
                 path, s->data_path,
                 (unsigned long long)st.st_size > s->offset
                     ? (unsigned long long)st.st_size - s->offset
                     : 0ull,
                 count, fmt, (unsigned long long)count * s->esize);
    goto fail;
  }
  snprintf(m->var, sizeof m->var, "%s", var && var[0] ? var : "data");
  {
    char v[256];
    if (header_value(h, "label", v, sizeof v) || header_value(h, "title", v, sizeof v))
      snprintf(m->long_name, sizeof m->long_name, "%s", v);
    if (header_value(h, "unit", v, sizeof m->units))
      snprintf(m->units, sizeof m->units, "%.127s", v);
  }
  free(h);
  *state = s;
  return 0;
oom:
  gz_io_errorf(err, errlen, "%s: out of memory", path);
fail:
  free(h);
  rsf_free(s);
  return -1;
}

static int rsf_read(void *state, const gz_meta_t *meta, const size_t *start,
                    const size_t *count, size_t flat, size_t n, void *dst, char *err,
                    size_t errlen) {
  rsf_state_t *s = state;
  unsigned char *p = dst;
  size_t want = n * s->esize, got = 0;
  unsigned long long off = s->offset + (unsigned long long)flat * s->esize;
  const char *why;
  (void)meta;
  (void)start;
  (void)count;
  if (s->values) {
    memcpy(dst, (const float *)s->values + flat, n * sizeof(float));
    return 0;
  }
  if ((why = gz_io_pread_all(s->fd, p, want, off, &got)) != NULL) {
    gz_io_errorf(err, errlen, "%s: read failed at byte %llu of %s: %s", s->path,
                 off + got, s->data_path, why);
    return -1;
  }
  if (s->swap)
    gz_io_swap_bytes(p, n, s->esize);
  return 0;
}

static void rsf_close(void *state) { rsf_free(state); }

const gz_io_backend_t gz_io_backend_rsf = {GZ_FMT_RSF, rsf_open, rsf_read, rsf_close};

/* A header value with no blanks or quotes (Madagascar's parser splits at
 * blanks even inside quotes in some versions). */
static void clean_value(const char *in, char *out, size_t len) {
  size_t n = 0;
  for (; *in && n + 1 < len; in++)
    out[n++] = isspace((unsigned char)*in) || *in == '"' ? '_' : *in;
  out[n] = '\0';
}

int gz_io_write_rsf(const char *tmp, const char *path, const gz_meta_t *meta,
                    const gz_io_source_t *src, char *err, size_t errlen) {
  size_t es = gz_io_dtype_size(meta->dtype), n = gz_meta_count(meta);
  const char *ver = NULL;
  const gz_attr_t *a = gz_meta_find_global(meta, "gzstack_version");
  FILE *f;
  int state;
  if (meta->ndims > RSF_AXES) {
    gz_io_errorf(err, errlen, "%s: RSF holds at most %d axes, not %d", path, RSF_AXES,
                 meta->ndims);
    return -1;
  }
  if (a && a->is_text)
    ver = a->text;
  if (!(f = gz_io_fopen_temp(tmp))) {
    gz_io_errorf(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    return -1;
  }
  fprintf(f, "gzstack %s:\t%s\n\n", ver ? ver : "", meta->var[0] ? meta->var : "data");
  a = gz_meta_find_global(meta, "gzstack_command");
  if (a && a->is_text) {
    char cmd[1024];
    clean_value(a->text, cmd, sizeof cmd);
    fprintf(f, "\tgzstack_command=\"%s\"\n", cmd);
  }
  for (int k = 1; k <= meta->ndims; k++) {
    int d = meta->ndims - k;
    const gz_coord_t *c = &meta->coords[d];
    double o = 0, dd = 1;
    char label[64], unit[64];
    if (c->values && c->count >= 1) {
      int uniform = 1;
      o = c->values[0];
      if (c->count >= 2)
        dd = c->values[1] - c->values[0];
      for (size_t i = 2; i < c->count && uniform; i++)
        uniform = fabs(c->values[i] - (o + (double)i * dd)) <= 1e-6 * fabs(dd) + 1e-12;
      if (!uniform) {
        o = 0;
        dd = 1;
      }
    }
    clean_value(meta->dim_names[d], label, sizeof label);
    clean_value(c->units, unit, sizeof unit);
    fprintf(f, "\tn%d=%zu d%d=%.9g o%d=%.9g label%d=\"%s\" unit%d=\"%s\"\n", k,
            meta->dims[d], k, dd, k, o, k, label, k, unit);
  }
  if (meta->units[0]) {
    char unit[128];
    clean_value(meta->units, unit, sizeof unit);
    fprintf(f, "\tunit=\"%s\"\n", unit);
  }
  fprintf(f, "\tdata_format=\"%s\" esize=%zu in=\"stdin\"\n",
          meta->dtype == GZ_FLOAT64
              ? (gz_io_host_is_little() ? "native_double" : "xdr_double")
              : (gz_io_host_is_little() ? "native_float" : "xdr_float"),
          es);
  state = fwrite(rsf_sep, 1, 3, f) != 3;
  for (size_t i = 0; i < n && state == 0; i += GZ_IO_PIECE) {
    size_t m = n - i < GZ_IO_PIECE ? n - i : GZ_IO_PIECE;
    const void *p = gz_io_source_get(src, meta, i, m, err, errlen);
    state = !p ? -1 : fwrite(p, es, m, f) != m;
  }
  return gz_io_close_written(f, state, path, err, errlen);
}
