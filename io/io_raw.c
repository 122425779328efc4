/* io_raw.c - headerless binary arrays: the shape and type come from the
 * caller (gz_raw_opts_t), the record count may be inferred from the file
 * size, and either byte order is read. Reads are pread() of contiguous
 * ranges (every box io_common.c asks for is contiguous in the file).
 * Writing produces the bare little-endian array. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"
#include "gz_io_commit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  int fd;
  int swap; /* file byte order differs from the host's */
  size_t esize;
  char *path;
} raw_state_t;

/* "24x96x2048" from dims[from..ndims). */
static void dims_text(const gz_raw_opts_t *raw, int from, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = from; i < raw->ndims && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%zu", i > from ? "x" : "", raw->dims[i]);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

static int raw_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                    MPI_Comm comm, gz_meta_t *meta, void **state, char *err,
                    size_t errlen) {
  raw_state_t *s = NULL;
  struct stat st;
  size_t esize, record_bytes;
  unsigned long long fsize;
  char shape[256];
  const char *tname;
  if (!raw) {
    gz_io_errorf(err, errlen,
                 "%s: a raw file needs its dimensions and type (--dims, --dtype)", path);
    return -1;
  }
  esize = gz_io_dtype_size(raw->dtype);
  tname = raw->dtype == GZ_FLOAT64 ? "f64" : "f32";
  if (raw->ndims < 1 || raw->ndims > GZ_IO_MAXDIMS || esize == 0) {
    gz_io_errorf(err, errlen, "%s: raw layout needs 1..%d dimensions and f32 or f64",
                 path, GZ_IO_MAXDIMS);
    return -1;
  }
  record_bytes = esize;
  for (int i = 1; i < raw->ndims; i++) {
    if (raw->dims[i] == 0 || record_bytes > SIZE_MAX / raw->dims[i]) {
      gz_io_errorf(err, errlen, "%s: raw dimension %d is %s", path, i,
                   raw->dims[i] ? "too large" : "0");
      return -1;
    }
    record_bytes *= raw->dims[i];
  }
  if (!(s = calloc(1, sizeof *s)) || !(s->path = strdup(path))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    free(s);
    return -1;
  }
  s->esize = esize;
  s->swap = raw->big_endian ? gz_io_host_is_little() : !gz_io_host_is_little();
  s->fd = open(path, O_RDONLY);
  if (s->fd < 0) {
    gz_io_errorf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    goto fail;
  }
  if (fstat(s->fd, &st) != 0) {
    gz_io_errorf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    goto fail;
  }
  fsize = (unsigned long long)st.st_size;
  meta->dtype = raw->dtype;
  meta->ndims = raw->ndims;
  for (int i = 0; i < raw->ndims; i++) {
    meta->dims[i] = raw->dims[i];
    snprintf(meta->dim_names[i], sizeof meta->dim_names[i], "dim%d", i);
  }
  if (raw->dims[0] == 0) {
    dims_text(raw, 1, shape, sizeof shape);
    if (fsize == 0 || fsize % record_bytes != 0) {
      gz_io_errorf(err, errlen,
                   "%s: size %llu bytes is not a multiple of the record size %zu "
                   "(--dims %s, %s)",
                   path, fsize, record_bytes, raw->ndims > 1 ? shape : "1", tname);
      goto fail;
    }
    meta->dims[0] = (size_t)(fsize / record_bytes);
  } else {
    dims_text(raw, 0, shape, sizeof shape);
    if (raw->dims[0] > SIZE_MAX / record_bytes ||
        fsize != (unsigned long long)(raw->dims[0] * record_bytes)) {
      int big = raw->dims[0] > SIZE_MAX / record_bytes ||
                fsize < (unsigned long long)(raw->dims[0] * record_bytes);
      gz_io_errorf(err, errlen, "%s: %s: %llu bytes, but --dims %s, %s needs %llu", path,
                   big ? "truncated" : "larger than its dimensions", fsize, shape, tname,
                   raw->dims[0] > SIZE_MAX / record_bytes
                       ? (unsigned long long)-1
                       : (unsigned long long)(raw->dims[0] * record_bytes));
      goto fail;
    }
  }
  snprintf(meta->var, sizeof meta->var, "%s", var && var[0] ? var : "data");
  *state = s;
  return 0;
fail:
  if (s->fd >= 0)
    close(s->fd);
  free(s->path);
  free(s);
  return -1;
}

static int raw_read(void *state, const gz_meta_t *meta, const size_t *start,
                    const size_t *count, size_t flat, size_t n, void *dst, char *err,
                    size_t errlen) {
  raw_state_t *s = state;
  unsigned long long off = (unsigned long long)(flat * s->esize);
  size_t got = 0;
  const char *why = gz_io_pread_all(s->fd, dst, n * s->esize, off, &got);
  if (why) {
    gz_io_errorf(err, errlen, "%s: read failed at byte %llu: %s", s->path, off + got,
                 why);
    return -1;
  }
  if (s->swap)
    gz_io_swap_bytes(dst, n, s->esize);
  return 0;
}

static void raw_close(void *state) {
  raw_state_t *s = state;
  if (!s)
    return;
  close(s->fd);
  free(s->path);
  free(s);
}

const gz_io_backend_t gz_io_backend_raw = {GZ_FMT_RAW, raw_open, raw_read, raw_close};

int gz_io_write_raw(const char *tmp, const char *path, const gz_meta_t *meta,
                    const gz_io_source_t *src, char *err, size_t errlen) {
  size_t esize = gz_io_dtype_size(meta->dtype), n = gz_meta_count(meta);
  unsigned char *buf = NULL;
  int little = gz_io_host_is_little();
  FILE *f = gz_io_fopen_temp(tmp);
  int state = 0, rc;
  if (!f) {
    gz_io_errorf(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    return -1;
  }
  if (!little && !(buf = malloc(GZ_IO_PIECE * esize))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    state = -1;
  }
  for (size_t i = 0; i < n && state == 0; i += GZ_IO_PIECE) {
    size_t m = n - i < GZ_IO_PIECE ? n - i : GZ_IO_PIECE;
    const void *p = gz_io_source_get(src, meta, i, m, err, errlen);
    if (!p) {
      state = -1;
    } else if (little) {
      state = fwrite(p, esize, m, f) != m;
    } else {
      memcpy(buf, p, m * esize);
      gz_io_swap_bytes(buf, m, esize);
      state = fwrite(buf, esize, m, f) != m;
    }
  }
  rc = gz_io_close_written(f, state, path, err, errlen);
  free(buf);
  return rc;
}
