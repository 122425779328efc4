/* io_common.c - what every format shares: format detection, the reader
 * handle dispatching to a backend table (gz_io_backend_t), range reads with
 * type conversion and unpacking, and gz_io_write() with its
 * temporary-then-rename commit.
 *
 * Range reads: a request is a flat range [a, a+n) of the variable in C
 * order. It is cut into boxes, each the largest hyperslab that starts at the
 * current position and is contiguous in flat order (at most 2*ndims boxes,
 * one for whole records), and the backend reads each box in the stored type
 * (meta->dtype). Conversion then happens in place where the requested type
 * is at least as wide (float->double: the floats are read into the upper
 * half of dst and widened front to back, which never overwrites an unread
 * value), and through a bounded temporary where it is narrower. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"
#include "gz_io_commit.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Values per temporary piece when narrowing double to float. */
#define GZ_IO_NARROW_PIECE ((size_t)1 << 20)

struct gz_reader {
  const gz_io_backend_t *be;
  void *state;
  gz_format_t fmt;
  char *path;
  gz_meta_t meta;
  size_t records, record_size, total;
  size_t stride[GZ_IO_MAXDIMS]; /* flat stride of each dim */
};

const char *gz_format_name(gz_format_t fmt) {
  switch (fmt) {
  case GZ_FMT_RAW:
    return "raw";
  case GZ_FMT_NETCDF:
    return "netcdf";
  case GZ_FMT_HDF5:
    return "hdf5";
  case GZ_FMT_SEGY:
    return "segy";
  case GZ_FMT_RSF:
    return "rsf";
  default:
    return "unknown";
  }
}

int gz_io_host_is_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

void gz_io_swap_bytes(unsigned char *p, size_t n, size_t esize) {
  for (size_t i = 0; i < n; i++, p += esize)
    for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

char *gz_io_join_lines(char *const *strs, size_t n) {
  size_t total = 1, used = 0;
  char *out;
  for (size_t i = 0; i < n; i++)
    total += (strs[i] ? strlen(strs[i]) : 0) + 1;
  if (!(out = malloc(total)))
    return NULL;
  for (size_t i = 0; i < n; i++) {
    size_t l = strs[i] ? strlen(strs[i]) : 0;
    if (i)
      out[used++] = '\n';
    if (l)
      memcpy(out + used, strs[i], l);
    used += l;
  }
  out[used] = '\0';
  return out;
}

const char *gz_io_pread_all(int fd, void *dst, size_t n, unsigned long long off,
                            size_t *got) {
  unsigned char *p = dst;
  size_t done = 0;
  const char *why = NULL;
  while (done < n && !why) {
    ssize_t k = pread(fd, p + done, n - done, (off_t)(off + done));
    if (k > 0)
      done += (size_t)k;
    else if (k == 0)
      why = "unexpected end of file";
    else if (errno != EINTR)
      why = strerror(errno);
  }
  if (got)
    *got = done;
  return why;
}

int gz_io_close_written(FILE *f, int state, const char *path, char *err, size_t errlen) {
  if (state == 0 && fflush(f) != 0)
    state = 1;
  if (state == 1)
    gz_io_errorf(err, errlen, "%s: write failed: %s", path, strerror(errno));
  if (fclose(f) != 0 && state == 0) {
    gz_io_errorf(err, errlen, "%s: write failed: %s", path, strerror(errno));
    state = 1;
  }
  return state == 0 ? 0 : -1;
}

const char *gz_io_write_cause(int e) {
  switch (e) {
  case ENOSPC:
  case EFBIG:
  case EDQUOT:
  case EIO:
  case EROFS:
    return strerror(e);
  default:
    return NULL;
  }
}

size_t gz_io_dtype_size(gz_dtype_t dtype) {
  return dtype == GZ_FLOAT32 ? 4 : dtype == GZ_FLOAT64 ? 8 : 0;
}

static int ext_is(const char *ext, const char *want) {
  size_t i = 0;
  for (; ext[i] && want[i]; i++)
    if (tolower((unsigned char)ext[i]) != want[i])
      return 0;
  return ext[i] == '\0' && want[i] == '\0';
}

gz_format_t gz_io_format_from_path(const char *path) {
  static const struct {
    const char *ext;
    gz_format_t fmt;
  } table[] = {{"nc", GZ_FMT_NETCDF}, {"nc4", GZ_FMT_NETCDF}, {"cdf", GZ_FMT_NETCDF},
               {"h5", GZ_FMT_HDF5},   {"hdf5", GZ_FMT_HDF5},  {"he5", GZ_FMT_HDF5},
               {"raw", GZ_FMT_RAW},   {"bin", GZ_FMT_RAW},    {"dat", GZ_FMT_RAW},
               {"sgy", GZ_FMT_SEGY},  {"segy", GZ_FMT_SEGY},  {"rsf", GZ_FMT_RSF}};
  const char *slash, *dot;
  if (!path)
    return GZ_FMT_UNKNOWN;
  slash = strrchr(path, '/');
  dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot)
    return GZ_FMT_UNKNOWN;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (ext_is(dot + 1, table[i].ext))
      return table[i].fmt;
  return GZ_FMT_UNKNOWN;
}

static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* 1 if the file carries the HDF5 signature (at 0 or a user-block offset). */
static int has_hdf5_signature(int fd) {
  static const off_t offsets[] = {0, 512, 1024, 2048};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
    unsigned char b[8];
    if (pread(fd, b, 8, offsets[i]) == 8 && memcmp(b, hdf5_sig, 8) == 0)
      return 1;
  }
  return 0;
}

gz_format_t gz_io_detect(const char *path) {
  gz_format_t by_ext = gz_io_format_from_path(path);
  unsigned char b[4];
  int fd, hdf5 = 0;
  if (!path)
    return GZ_FMT_UNKNOWN;
  fd = open(path, O_RDONLY);
  if (fd < 0)
    return by_ext != GZ_FMT_UNKNOWN ? by_ext : GZ_FMT_RAW;
  if (pread(fd, b, 4, 0) == 4 && memcmp(b, "CDF", 3) == 0 &&
      (b[3] == 1 || b[3] == 2 || b[3] == 5)) {
    close(fd);
    return GZ_FMT_NETCDF;
  }
  hdf5 = has_hdf5_signature(fd);
  close(fd);
  if (hdf5) {
    int probe = gz_io_netcdf_probe(path);
    /* A netCDF name that netCDF cannot open still goes to netCDF, for its
     * message; gz_reader_open() then retries it as plain HDF5. */
    return probe == 2 || by_ext == GZ_FMT_NETCDF ? GZ_FMT_NETCDF : GZ_FMT_HDF5;
  }
  if (by_ext != GZ_FMT_UNKNOWN)
    return by_ext;
  return gz_io_segy_probe(path)  ? GZ_FMT_SEGY
         : gz_io_rsf_probe(path) ? GZ_FMT_RSF
                                 : GZ_FMT_RAW;
}

static int file_has_hdf5_signature(const char *path) {
  int fd = open(path, O_RDONLY), yes;
  if (fd < 0)
    return 0;
  yes = has_hdf5_signature(fd);
  close(fd);
  return yes;
}

/* Clear messages for the common ways an input is unusable. */
static int check_input(const char *path, char *err, size_t errlen) {
  struct stat st;
  int fd;
  if (stat(path, &st) != 0) {
    gz_io_errorf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    gz_io_errorf(err, errlen, "%s: is a directory, not a data file", path);
    return -1;
  }
  if (S_ISREG(st.st_mode) && st.st_size == 0) {
    gz_io_errorf(err, errlen, "%s: file is empty", path);
    return -1;
  }
  fd = open(path, O_RDONLY);
  if (fd < 0) {
    gz_io_errorf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  close(fd);
  return 0;
}

static const gz_io_backend_t *backend_for(gz_format_t fmt) {
  switch (fmt) {
  case GZ_FMT_RAW:
    return &gz_io_backend_raw;
  case GZ_FMT_NETCDF:
    return &gz_io_backend_netcdf;
  case GZ_FMT_HDF5:
    return &gz_io_backend_hdf5;
  case GZ_FMT_SEGY:
    return &gz_io_backend_segy;
  case GZ_FMT_RSF:
    return &gz_io_backend_rsf;
  default:
    return NULL;
  }
}

/* HDF5 opens are collective: every rank learns whether all succeeded. */
static int agree(MPI_Comm comm, int ok) {
  int size = 1, initialized = 0, finalized = 0, all = ok;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized || comm == MPI_COMM_NULL)
    return ok;
  MPI_Comm_size(comm, &size);
  if (size > 1)
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
  return all;
}

static int backend_open(gz_reader_t *r, gz_format_t fmt, const char *var,
                        const gz_raw_opts_t *raw, MPI_Comm comm, char *err,
                        size_t errlen) {
  const gz_io_backend_t *be = backend_for(fmt);
  int rc;
  gz_meta_init(&r->meta);
  r->state = NULL;
  rc = be->open(r->path, var, raw, comm, &r->meta, &r->state, err, errlen);
  if (rc != 0)
    gz_meta_free(&r->meta);
  r->be = be;
  r->fmt = fmt;
  return rc;
}

int gz_reader_open_format(const char *path, gz_format_t fmt, const char *var,
                          const gz_raw_opts_t *raw, MPI_Comm comm, gz_reader_t **out,
                          char *err, size_t errlen) {
  gz_reader_t *r = NULL;
  int ok, rc = -1, detected;
  if (err && errlen)
    err[0] = '\0';
  if (!out) {
    gz_io_errorf(err, errlen, "gz_reader_open: no output handle");
    return -1;
  }
  *out = NULL;
  if (!path || !path[0]) {
    gz_io_errorf(err, errlen, "gz_reader_open: no file name");
    return -1;
  }
  ok = check_input(path, err, errlen) == 0;
  detected = fmt == GZ_FMT_UNKNOWN;
  if (fmt == GZ_FMT_UNKNOWN)
    fmt = ok ? gz_io_detect(path) : gz_io_format_from_path(path);
  if (!backend_for(fmt)) {
    if (ok)
      gz_io_errorf(err, errlen, "%s: unknown format", path);
    ok = 0;
  }
  if (fmt == GZ_FMT_HDF5 && !agree(comm, ok) && ok) {
    gz_io_errorf(err, errlen, "%s: cannot be opened on another rank", path);
    return -1;
  }
  if (!ok)
    return -1;
  if (!(r = calloc(1, sizeof *r)) || !(r->path = strdup(path))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    free(r);
    return -1;
  }
  rc = backend_open(r, fmt, var, raw, comm, err, errlen);
  if (rc != 0 && detected && fmt == GZ_FMT_NETCDF && file_has_hdf5_signature(path)) {
    /* An HDF5 file netCDF did not read (a plain HDF5 file, a path netCDF
     * does not map, or damage): try HDF5 itself. If that fails too, keep
     * netCDF's message, plus HDF5's when netCDF could not open the file at
     * all (HDF5 says more about damage: "truncated file: eof = ..."). */
    char *first = err && errlen ? malloc(errlen) : NULL;
    size_t plen = strlen(path);
    if (first)
      memcpy(first, err, errlen);
    rc = backend_open(r, GZ_FMT_HDF5, var, raw, comm, err, errlen);
    if (rc != 0 && first) {
      char *second = malloc(errlen);
      if (second && gz_io_netcdf_probe(path) == 0) {
        memcpy(second, err, errlen);
        second[errlen - 1] = '\0';
        first[errlen - 1] = '\0';
        gz_io_errorf(err, errlen, "%s; as HDF5: %s", first,
                     strncmp(second, path, plen) == 0 && second[plen] == ':'
                         ? second + plen + 2
                         : second);
      } else {
        memcpy(err, first, errlen);
      }
      free(second);
    }
    free(first);
  }
  if (r->fmt == GZ_FMT_HDF5 && !agree(comm, rc == 0) && rc == 0) {
    gz_io_errorf(err, errlen, "%s: opening failed on another rank", path);
    r->be->close(r->state);
    gz_meta_free(&r->meta);
    rc = -1;
  }
  if (rc != 0)
    goto fail;
  {
    const gz_meta_t *m = &r->meta;
    size_t total = 1;
    if (m->ndims < 1 || m->ndims > GZ_IO_MAXDIMS) {
      gz_io_errorf(err, errlen, "%s: variable '%s' has %d dimensions (1..%d supported)",
                   path, m->var, m->ndims, GZ_IO_MAXDIMS);
      goto fail_close;
    }
    for (int k = m->ndims - 1; k >= 0; k--) {
      r->stride[k] = total;
      if (m->dims[k] && total > SIZE_MAX / m->dims[k]) {
        gz_io_errorf(err, errlen, "%s: variable '%s' is too large to address", path,
                     m->var);
        goto fail_close;
      }
      total *= m->dims[k];
    }
    r->total = total;
    r->records = m->dims[0];
    r->record_size = r->stride[0];
  }
  *out = r;
  return 0;
fail_close:
  r->be->close(r->state);
  gz_meta_free(&r->meta);
fail:
  free(r->path);
  free(r);
  return -1;
}

int gz_reader_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                   MPI_Comm comm, gz_reader_t **out, char *err, size_t errlen) {
  return gz_reader_open_format(path, GZ_FMT_UNKNOWN, var, raw, comm, out, err, errlen);
}

const gz_meta_t *gz_reader_meta(const gz_reader_t *r) { return r ? &r->meta : NULL; }
gz_format_t gz_reader_format(const gz_reader_t *r) { return r ? r->fmt : GZ_FMT_UNKNOWN; }
const char *gz_reader_path(const gz_reader_t *r) { return r ? r->path : NULL; }
size_t gz_reader_records(const gz_reader_t *r) { return r ? r->records : 0; }
size_t gz_reader_record_size(const gz_reader_t *r) { return r ? r->record_size : 0; }

void gz_reader_close(gz_reader_t *r) {
  if (!r)
    return;
  r->be->close(r->state);
  gz_meta_free(&r->meta);
  free(r->path);
  free(r);
}

/* The largest box starting at flat position a that is contiguous in flat
 * order and ends at or before b (a < b). Returns its number of values. */
static size_t next_box(const gz_reader_t *r, size_t a, size_t b, size_t *start,
                       size_t *count) {
  const gz_meta_t *m = &r->meta;
  size_t rest = a;
  for (int k = m->ndims - 1; k >= 0; k--) {
    start[k] = rest % m->dims[k];
    rest /= m->dims[k];
  }
  for (int k = 0; k < m->ndims; k++) {
    size_t s = r->stride[k], c, fit;
    if (a % s != 0 || s > b - a)
      continue;
    c = m->dims[k] - start[k];
    fit = (b - a) / s;
    if (c > fit)
      c = fit;
    for (int j = 0; j < m->ndims; j++)
      count[j] = j < k ? 1 : j == k ? c : m->dims[j];
    return c * s;
  }
  return 0; /* not reached: the innermost dim has stride 1 */
}

/* Read [a, a+n) in the stored type into dst. */
static int read_stored(gz_reader_t *r, size_t a, size_t n, unsigned char *dst, char *err,
                       size_t errlen) {
  size_t es = gz_io_dtype_size(r->meta.dtype);
  while (n) {
    size_t start[GZ_IO_MAXDIMS], count[GZ_IO_MAXDIMS];
    size_t m = next_box(r, a, a + n, start, count);
    if (m == 0) {
      gz_io_errorf(err, errlen, "%s: internal error splitting a read", r->path);
      return -1;
    }
    if (r->be->read(r->state, &r->meta, start, count, a, m, dst, err, errlen) != 0)
      return -1;
    a += m;
    n -= m;
    dst += m * es;
  }
  return 0;
}

/* Convert n values at src (stored type st) to dst (type dt), unpacking.
 * Safe in place when dst == src, or when dst is wider and src lies at
 * dst + n * (size difference), as arranged by read_flat(). */
static void convert(const unsigned char *src, gz_dtype_t st, unsigned char *dst,
                    gz_dtype_t dt, size_t n, const gz_meta_t *m) {
  size_t ss = gz_io_dtype_size(st), ds = gz_io_dtype_size(dt);
  double s = m->has_scale ? m->scale_factor : 1.0;
  double o = m->has_scale ? m->add_offset : 0.0;
  for (size_t i = 0; i < n; i++) {
    double v;
    if (st == GZ_FLOAT32) {
      float f;
      memcpy(&f, src + i * ss, sizeof f);
      v = f;
    } else {
      memcpy(&v, src + i * ss, sizeof v);
    }
    if (m->has_scale)
      v = v * s + o;
    if (dt == GZ_FLOAT32) {
      float f = (float)v;
      memcpy(dst + i * ds, &f, sizeof f);
    } else {
      memcpy(dst + i * ds, &v, sizeof v);
    }
  }
}

static int read_flat(gz_reader_t *r, size_t a, size_t n, gz_dtype_t dtype, void *dst,
                     char *err, size_t errlen) {
  gz_dtype_t st = r->meta.dtype;
  size_t ss = gz_io_dtype_size(st), ds = gz_io_dtype_size(dtype);
  unsigned char *out = dst, *tmp;
  if (n == 0)
    return 0;
  if (ds == 0) {
    gz_io_errorf(err, errlen, "%s: unknown destination type %d", r->path, (int)dtype);
    return -1;
  }
  if (ss == ds) {
    if (read_stored(r, a, n, out, err, errlen) != 0)
      return -1;
    if (r->meta.has_scale)
      convert(out, st, out, dtype, n, &r->meta);
    return 0;
  }
  if (ss < ds) {
    unsigned char *hi = out + n * (ds - ss);
    if (read_stored(r, a, n, hi, err, errlen) != 0)
      return -1;
    convert(hi, st, out, dtype, n, &r->meta);
    return 0;
  }
  tmp = malloc((n < GZ_IO_NARROW_PIECE ? n : GZ_IO_NARROW_PIECE) * ss);
  if (!tmp) {
    gz_io_errorf(err, errlen, "%s: out of memory", r->path);
    return -1;
  }
  for (size_t done = 0; done < n;) {
    size_t m = n - done < GZ_IO_NARROW_PIECE ? n - done : GZ_IO_NARROW_PIECE;
    if (read_stored(r, a + done, m, tmp, err, errlen) != 0) {
      free(tmp);
      return -1;
    }
    convert(tmp, st, out + done * ds, dtype, m, &r->meta);
    done += m;
  }
  free(tmp);
  return 0;
}

int gz_reader_read(gz_reader_t *r, size_t first, size_t count, gz_dtype_t dtype,
                   void *dst, char *err, size_t errlen) {
  if (!r) {
    gz_io_errorf(err, errlen, "gz_reader_read: no reader");
    return -1;
  }
  if (first > r->records || count > r->records - first) {
    gz_io_errorf(err, errlen, "%s: records %zu..%zu requested, the file has %zu", r->path,
                 first, first + count, r->records);
    return -1;
  }
  if (count && r->record_size && !dst) {
    gz_io_errorf(err, errlen, "%s: no destination buffer", r->path);
    return -1;
  }
  return read_flat(r, first * r->record_size, count * r->record_size, dtype, dst, err,
                   errlen);
}

int gz_reader_read_part(gz_reader_t *r, size_t rec, size_t offset, size_t n,
                        gz_dtype_t dtype, void *dst, char *err, size_t errlen) {
  if (!r) {
    gz_io_errorf(err, errlen, "gz_reader_read_part: no reader");
    return -1;
  }
  if (rec >= r->records || offset > r->record_size || n > r->record_size - offset) {
    gz_io_errorf(err, errlen,
                 "%s: values %zu..%zu of record %zu requested, the file has %zu records "
                 "of %zu values",
                 r->path, offset, offset + n, rec, r->records, r->record_size);
    return -1;
  }
  if (n && !dst) {
    gz_io_errorf(err, errlen, "%s: no destination buffer", r->path);
    return -1;
  }
  return read_flat(r, rec * r->record_size + offset, n, dtype, dst, err, errlen);
}

int gz_reader_read_values(gz_reader_t *r, size_t first, size_t n, gz_dtype_t dtype,
                          void *dst, char *err, size_t errlen) {
  if (!r) {
    gz_io_errorf(err, errlen, "gz_reader_read_values: no reader");
    return -1;
  }
  if (first > r->records * r->record_size || n > r->records * r->record_size - first) {
    gz_io_errorf(err, errlen, "%s: values %zu..%zu requested, the file has %zu", r->path,
                 first, first + n, r->records * r->record_size);
    return -1;
  }
  if (n && !dst) {
    gz_io_errorf(err, errlen, "%s: no destination buffer", r->path);
    return -1;
  }
  return read_flat(r, first, n, dtype, dst, err, errlen);
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                */

static int check_meta_for_write(const char *path, const gz_meta_t *m, char *err,
                                size_t errlen) {
  if (m->ndims < 1 || m->ndims > GZ_IO_MAXDIMS) {
    gz_io_errorf(err, errlen, "%s: cannot write %d dimensions (1..%d)", path, m->ndims,
                 GZ_IO_MAXDIMS);
    return -1;
  }
  if (m->dtype != GZ_FLOAT32 && m->dtype != GZ_FLOAT64) {
    gz_io_errorf(err, errlen, "%s: unknown data type %d", path, (int)m->dtype);
    return -1;
  }
  for (int i = 0; i < m->ndims; i++) {
    if (m->dims[i] == 0) {
      gz_io_errorf(err, errlen, "%s: dimension %d has length 0", path, i);
      return -1;
    }
    if (m->coords[i].values && m->coords[i].count != m->dims[i]) {
      gz_io_errorf(err, errlen, "%s: coordinate of dimension %d has %zu values, not %zu",
                   path, i, m->coords[i].count, m->dims[i]);
      return -1;
    }
  }
  if (gz_meta_count(m) == 0) {
    gz_io_errorf(err, errlen, "%s: the dimensions are too large", path);
    return -1;
  }
  for (size_t i = 0; i < m->nattrs; i++)
    if (!m->attrs || (!m->attrs[i].is_text && m->attrs[i].count && !m->attrs[i].values))
      goto bad_attr;
  for (size_t i = 0; i < m->nglobal_attrs; i++)
    if (!m->global_attrs || (!m->global_attrs[i].is_text && m->global_attrs[i].count &&
                             !m->global_attrs[i].values))
      goto bad_attr;
  return 0;
bad_attr:
  gz_io_errorf(err, errlen, "%s: an attribute has no values", path);
  return -1;
}

const void *gz_io_source_get(const gz_io_source_t *src, const gz_meta_t *meta,
                             size_t first, size_t n, char *err, size_t errlen) {
  if (src->data)
    return (const unsigned char *)src->data + first * gz_io_dtype_size(meta->dtype);
  return src->get(src->ctx, first, n, err, errlen);
}

size_t gz_io_next_box(const gz_meta_t *meta, size_t flat, size_t most, size_t *start,
                      size_t *count) {
  size_t inner = 1, k;
  int j = meta->ndims - 1;
  for (int d = meta->ndims - 1; d >= 0; d--) {
    start[d] = flat % meta->dims[d];
    flat /= meta->dims[d];
    count[d] = 1;
  }
  /* whole dimensions from the last while they start at 0 and fit */
  while (j > 0 && start[j] == 0 && inner * meta->dims[j] <= most) {
    count[j] = meta->dims[j];
    inner *= meta->dims[j--];
  }
  k = most / inner ? most / inner : 1;
  count[j] = meta->dims[j] - start[j] < k ? meta->dims[j] - start[j] : k;
  return count[j] * inner;
}

int gz_io_write(const char *path, gz_format_t fmt, const gz_meta_t *meta,
                const void *data, int force, char *err, size_t errlen) {
  gz_io_source_t src = {data, NULL, NULL};
  if (!data && path && path[0] && meta) {
    gz_io_errorf(err, errlen, "gz_io_write: no data");
    return -1;
  }
  return gz_io_write_from(path, fmt, meta, &src, force, err, errlen);
}

int gz_io_write_from(const char *path, gz_format_t fmt, const gz_meta_t *meta,
                     const gz_io_source_t *src, int force, char *err, size_t errlen) {
  char tmp[4096];
  int rc;
  if (err && errlen)
    err[0] = '\0';
  if (!path || !path[0] || !meta || !src || (!src->data && !src->get)) {
    gz_io_errorf(err, errlen, "gz_io_write: %s",
                 !path || !path[0] ? "no file name"
                 : !meta           ? "no metadata"
                                   : "no data");
    return -1;
  }
  if (fmt == GZ_FMT_UNKNOWN)
    fmt = gz_io_format_from_path(path);
  if (fmt == GZ_FMT_UNKNOWN) {
    gz_io_errorf(
        err, errlen,
        "%s: cannot tell the format from the name (use .nc, .h5, .raw, .sgy or .rsf)",
        path);
    return -1;
  }
  if (check_meta_for_write(path, meta, err, errlen) != 0 ||
      gz_io_check_target(path, force, err, errlen) != 0)
    return -1;
  {
    /* the data, the coordinates, and room for the headers */
    unsigned long long need = (unsigned long long)gz_meta_count(meta) *
                              (unsigned long long)gz_io_dtype_size(meta->dtype);
    for (int i = 0; i < meta->ndims; i++)
      need += 8ull * meta->coords[i].count;
    need += meta->native_size; /* SEG-Y headers */
    need += need / 100 + 65536;
    if (gz_io_check_space(path, need, err, errlen) != 0)
      return -1;
  }
  /* (netCDF creates a named file and moves it into tmp: io_netcdf.c) */
  if (gz_io_temp_path(path, tmp, sizeof tmp) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  switch (fmt) {
  case GZ_FMT_RAW:
    rc = gz_io_write_raw(tmp, path, meta, src, err, errlen);
    break;
  case GZ_FMT_NETCDF:
    rc = gz_io_write_netcdf(tmp, path, meta, src, err, errlen);
    break;
  case GZ_FMT_HDF5:
    rc = gz_io_write_hdf5(tmp, path, meta, src, err, errlen);
    break;
  case GZ_FMT_SEGY:
    rc = gz_io_write_segy(tmp, path, meta, src, err, errlen);
    break;
  case GZ_FMT_RSF:
    rc = gz_io_write_rsf(tmp, path, meta, src, err, errlen);
    break;
  default:
    gz_io_errorf(err, errlen, "%s: unknown format %d", path, (int)fmt);
    rc = -1;
  }
  if (rc != 0) {
    gz_io_discard(tmp);
    return -1;
  }
  return gz_io_commit(tmp, path, force, err, errlen);
}
