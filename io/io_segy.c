/* io_segy.c - SEG-Y revisions 0, 1 and 2 through libsegyio (Debian's
 * libsegyio-dev 1.8), and the SEG-Y writer.
 *
 * Reading. The headers are read as stored (pread), so that they can travel
 * byte for byte in gz_meta_t.native; libsegyio reads the samples (either
 * byte order, mmap when it can) and converts them (IBM float to IEEE). The
 * byte order comes from the revision-2 constant 0x01020304 (bytes
 * 3297-3300) when present, else from the sample format code (bytes
 * 3225-3226), which must read as a SEG-Y code in one order. Samples per
 * trace: the revision-2 extended count (3269-3272) when set, else bytes
 * 3221-3222, else the first trace header's (115-116). Every trace has that
 * length (fixed-length traces; revision 2's variable-length traces are
 * refused), so the file size tells the trace count and a truncated last
 * trace is named.
 *
 * Sample formats: 1 IBM float, 5 IEEE float (-> float32, as libsegyio
 * converts them), 3 int16 and 8 int8 (-> float32, exact), 2 int32 (->
 * float64, exact), 6 IEEE double (-> float64; revision 2, read here since
 * libsegyio 1.8 does not know it). Others (4 fixed point with gain, 7 and
 * 9..16 of revision 2) are refused by name.
 *
 * Shape. One file is one image (the record stacked by `gzstack stack`): the
 * first dimension, "image", has length 1. Behind it, when the inline and
 * crossline numbers (trace bytes 189 and 193) form a full grid in the
 * order of the traces: [inline][crossline][sample] for inline-sorted files
 * and [crossline][inline][sample] for crossline-sorted ones (the file's
 * order, so every read is one contiguous trace range), with the line
 * numbers as coordinates; otherwise (2-D lines, gathers, pre-stack data)
 * [trace][sample]. The sample axis is "time" in ms from the first trace's
 * delay (bytes 109-110) and the sample interval.
 *
 * Native headers (meta->native, "segy"): the 3200-byte textual header, the
 * 400-byte binary header, the extended textual headers, then the 240 bytes
 * of every trace header, in file order and byte order.
 *
 * Writing: see gz_io_write() in gz_io.h. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"
#include "gz_io_commit.h"

#include <segyio/segy.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEXT_SIZE 3200
#define BIN_SIZE 400
#define HEAD_SIZE (TEXT_SIZE + BIN_SIZE)
#define TRH_SIZE 240
#define NATIVE_TAG "segy"

/* Byte offsets inside the binary header (SEG-Y byte number - 3201). */
enum {
  BIN_INTERVAL = 3217 - 3201,
  BIN_SAMPLES = 3221 - 3201,
  BIN_FORMAT = 3225 - 3201,
  BIN_SORTING = 3229 - 3201,
  BIN_MEASURE = 3255 - 3201,
  BIN_EXT_SAMPLES = 3269 - 3201,
  BIN_BYTE_ORDER = 3297 - 3201,
  BIN_REVISION = 3501 - 3201,
  BIN_FIXED = 3503 - 3201,
  BIN_EXT_HEADERS = 3505 - 3201
};

/* Byte offsets inside a trace header (SEG-Y byte number - 1). */
enum {
  TR_SEQ_LINE = 0,
  TR_SEQ_FILE = 4,
  TR_CDP = 20,
  TR_ID = 28,
  TR_DELAY = 108,
  TR_SAMPLES = 114,
  TR_INTERVAL = 116,
  TR_INLINE = 188,
  TR_CROSSLINE = 192
};

typedef struct {
  segy_file *fp;
  int fd; /* for format 6 */
  char *path;
  int format, lsb;
  size_t ns, esize;
  long trace0;
  int trace_bsize;
  size_t ntraces;
  unsigned char *buf; /* one trace in the stored format */
} segy_state_t;

/* ---- bytes ------------------------------------------------------------ */

static uint32_t get_u(const unsigned char *p, int n, int lsb) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++)
    v = (v << 8) | p[lsb ? n - 1 - i : i];
  return v;
}
static int32_t get_i32(const unsigned char *p, int lsb) {
  uint32_t u = get_u(p, 4, lsb);
  int32_t v;
  memcpy(&v, &u, 4);
  return v;
}
static int get_i16(const unsigned char *p, int lsb) {
  uint32_t u = get_u(p, 2, lsb);
  return u >= 0x8000u ? (int)u - 0x10000 : (int)u;
}
static void put_u(unsigned char *p, int n, uint32_t v, int lsb) {
  for (int i = 0; i < n; i++)
    p[lsb ? i : n - 1 - i] = (unsigned char)(v >> (8 * i));
}

/* Revision: bytes 3501-3502 hold major.minor as two bytes (0x0100 is 1.0);
 * some writers (segyio among them) store the plain number 1 or 2. */
static int revision(const unsigned char *bin, int lsb, int *minor) {
  uint32_t v = get_u(bin + BIN_REVISION, 2, lsb);
  *minor = v >= 0x100 ? (int)(v & 0xff) : 0;
  return v >= 0x100 ? (int)(v >> 8) : (int)v;
}

static int read_at(int fd, void *dst, size_t n, unsigned long long off) {
  return gz_io_pread_all(fd, dst, n, off, NULL) ? -1 : 0;
}

/* ---- formats ----------------------------------------------------------- */

static const char *format_name(int f) {
  switch (f) {
  case 1:
    return "IBM float";
  case 2:
    return "int32";
  case 3:
    return "int16";
  case 4:
    return "fixed point with gain (obsolete)";
  case 5:
    return "IEEE float";
  case 6:
    return "IEEE double";
  case 7:
    return "int24";
  case 8:
    return "int8";
  case 9:
    return "int64";
  case 10:
    return "uint32";
  case 11:
    return "uint16";
  case 12:
    return "uint64";
  case 15:
    return "uint24";
  case 16:
    return "uint8";
  default:
    return NULL;
  }
}

/* Bytes per sample of a format read here, else 0. */
static size_t format_size(int f) {
  switch (f) {
  case 1:
  case 2:
  case 5:
    return 4;
  case 3:
    return 2;
  case 8:
    return 1;
  case 6:
    return 8;
  default:
    return 0;
  }
}

/* Byte order of a binary header: 0 big-endian, 1 little-endian, -1 when
 * the header is not SEG-Y's. */
static int byte_order(const unsigned char *bin) {
  uint32_t mark = get_u(bin + BIN_BYTE_ORDER, 4, 0);
  int msb = get_i16(bin + BIN_FORMAT, 0), lsb = get_i16(bin + BIN_FORMAT, 1);
  if (mark == 0x01020304u)
    return 0;
  if (mark == 0x04030201u)
    return 1;
  if (format_name(msb))
    return 0;
  if (format_name(lsb))
    return 1;
  return -1;
}

int gz_io_segy_probe(const char *path) {
  unsigned char head[HEAD_SIZE];
  int fd = open(path, O_RDONLY), yes = 0;
  if (fd < 0)
    return 0;
  if (read_at(fd, head, sizeof head, 0) == 0)
    yes = (head[0] == 0xC3 || head[0] == 'C') && byte_order(head + TEXT_SIZE) >= 0;
  close(fd);
  return yes;
}

/* ---- EBCDIC (code page 037) for the textual header --------------------- */

/* EBCDIC codes of ASCII 0x20..0x7e. */
static const unsigned char ebcdic_of[95] = {
    0x40, 0x5a, 0x7f, 0x7b, 0x5b, 0x6c, 0x50, 0x7d, 0x4d, 0x5d, 0x5c, 0x4e, 0x6b, 0x60,
    0x4b, 0x61, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0x7a, 0x5e,
    0x4c, 0x7e, 0x6e, 0x6f, 0x7c, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9,
    0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6,
    0xe7, 0xe8, 0xe9, 0xba, 0xe0, 0xbb, 0xb0, 0x6d, 0x79, 0x81, 0x82, 0x83, 0x84, 0x85,
    0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0xa2,
    0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xc0, 0x4f, 0xd0, 0xa1};

static unsigned char to_ebcdic(char c) {
  return c >= 0x20 && c <= 0x7e ? ebcdic_of[c - 0x20] : 0x40;
}

static char from_ebcdic(unsigned char e) {
  if (e == 0x6a) /* the broken bar some writers use for '|' */
    return '|';
  for (int i = 0; i < 95; i++)
    if (ebcdic_of[i] == e)
      return (char)(0x20 + i);
  return ' ';
}

/* The textual header is EBCDIC unless it holds more ASCII than EBCDIC
 * blanks. */
static int text_is_ebcdic(const unsigned char *t) {
  size_t sp = 0, eb = 0;
  for (size_t i = 0; i < TEXT_SIZE; i++) {
    sp += t[i] == 0x20;
    eb += t[i] == 0x40;
  }
  return eb >= sp;
}

/* ---- geometry ---------------------------------------------------------- */

static int32_t trace_key(const unsigned char *native, size_t hoff, size_t t, int at,
                         int lsb) {
  return get_i32(native + hoff + t * TRH_SIZE + (size_t)at, lsb);
}

/* 1 if the traces form a full grid whose slow key (at `slow`) is constant
 * along runs of L traces and whose fast key repeats the first run's values,
 * both strictly monotonic, with more than one line each way. */
static int grid_of(const unsigned char *native, size_t hoff, size_t n, int lsb, int slow,
                   int fast, size_t *lines, size_t *per_line) {
  size_t L = 1;
  int32_t s0 = trace_key(native, hoff, 0, slow, lsb);
  while (L < n && trace_key(native, hoff, L, slow, lsb) == s0)
    L++;
  if (L < 2 || L == n || n % L != 0)
    return 0;
  for (size_t t = 0; t < n; t++) {
    size_t line = t / L, k = t % L;
    int32_t s = trace_key(native, hoff, t, slow, lsb);
    int32_t f = trace_key(native, hoff, t, fast, lsb);
    if (f != trace_key(native, hoff, k, fast, lsb) ||
        s != trace_key(native, hoff, line * L, slow, lsb))
      return 0;
    if (k == 0 && line >= 2) {
      int32_t a = trace_key(native, hoff, (line - 2) * L, slow, lsb);
      int32_t b = trace_key(native, hoff, (line - 1) * L, slow, lsb);
      if (!((a < b && b < s) || (a > b && b > s)))
        return 0;
    } else if (k == 0 && line == 1 && s == s0) {
      return 0;
    }
    if (line == 0 && k >= 2) {
      int32_t a = trace_key(native, hoff, k - 2, fast, lsb);
      int32_t b = trace_key(native, hoff, k - 1, fast, lsb);
      if (!((a < b && b < f) || (a > b && b > f)))
        return 0;
    } else if (line == 0 && k == 1 && f == trace_key(native, hoff, 0, fast, lsb)) {
      return 0;
    }
  }
  *lines = n / L;
  *per_line = L;
  return 1;
}

static int set_line_coord(gz_meta_t *m, int dim, const unsigned char *native, size_t hoff,
                          size_t count, size_t step, int at, int lsb) {
  double *v = malloc(count * sizeof *v);
  int rc;
  if (!v)
    return -1;
  for (size_t i = 0; i < count; i++)
    v[i] = trace_key(native, hoff, i * step, at, lsb);
  rc = gz_meta_set_coord(m, dim, m->dim_names[dim], "", v, count);
  free(v);
  return rc;
}

/* ---- reading ------------------------------------------------------------ */

static const char *segy_error(int rc) {
  switch (rc) {
  case SEGY_FOPEN_ERROR:
    return "cannot open";
  case SEGY_FSEEK_ERROR:
    return "seek failed";
  case SEGY_FREAD_ERROR:
    return "read failed (truncated?)";
  case SEGY_TRACE_SIZE_MISMATCH:
    return "the file size is not a whole number of traces";
  case SEGY_INVALID_ARGS:
    return "invalid arguments";
  default:
    return "libsegyio error";
  }
}

static void state_free(segy_state_t *s) {
  if (!s)
    return;
  if (s->fp)
    segy_close(s->fp);
  if (s->fd >= 0)
    close(s->fd);
  free(s->buf);
  free(s->path);
  free(s);
}

/* Headers, shape and attributes into meta; the file is fd (size fsize). */
static int read_headers(segy_state_t *s, int fd, unsigned long long fsize, gz_meta_t *m,
                        char *err, size_t errlen) {
  const char *path = s->path;
  unsigned char head[HEAD_SIZE], *bin = head + TEXT_SIZE, *native;
  unsigned char first[TRH_SIZE];
  int next, lsb, rev, minor, dt_us;
  size_t ns, tbytes, hoff, ntr, il_n = 0, xl_n = 0;
  unsigned long long trace0;
  const char *order = "big-endian";
  char text[TEXT_SIZE + TEXT_SIZE / 80 + 1];

  if (fsize < HEAD_SIZE || read_at(fd, head, HEAD_SIZE, 0) != 0) {
    gz_io_errorf(err, errlen,
                 "%s: not a SEG-Y file: %llu bytes, less than the 3600 of the textual "
                 "and binary headers",
                 path, fsize);
    return -1;
  }
  lsb = byte_order(bin);
  if (lsb < 0) {
    gz_io_errorf(err, errlen,
                 "%s: not a SEG-Y file: the sample format code (binary header bytes "
                 "3225-3226) is %d, no SEG-Y format",
                 path, get_i16(bin + BIN_FORMAT, 0));
    return -1;
  }
  if (lsb)
    order = "little-endian";
  s->lsb = lsb;
  s->format = get_i16(bin + BIN_FORMAT, lsb);
  s->esize = format_size(s->format);
  if (s->esize == 0) {
    gz_io_errorf(err, errlen,
                 "%s: sample format %d (%s) is not supported (SEG-Y formats read: 1 IBM "
                 "float, 2 int32, 3 int16, 5 IEEE float, 6 IEEE double, 8 int8)",
                 path, s->format, format_name(s->format));
    return -1;
  }
  rev = revision(bin, lsb, &minor);
  next = rev >= 1 ? get_i16(bin + BIN_EXT_HEADERS, lsb) : 0;
  if (next < 0) {
    gz_io_errorf(err, errlen,
                 "%s: %d extended textual headers (binary header bytes 3505-3506): a "
                 "variable count is not supported",
                 path, next);
    return -1;
  }
  if (rev >= 2 && get_i16(bin + BIN_FIXED, lsb) == 0) {
    gz_io_errorf(err, errlen,
                 "%s: revision 2 with variable-length traces (bytes 3503-3504 are 0) is "
                 "not supported",
                 path);
    return -1;
  }
  trace0 = HEAD_SIZE + (unsigned long long)TEXT_SIZE * (unsigned long long)next;
  ns = get_u(bin + BIN_SAMPLES, 2, lsb);
  if (rev >= 2 && get_u(bin + BIN_EXT_SAMPLES, 4, lsb) > 0)
    ns = get_u(bin + BIN_EXT_SAMPLES, 4, lsb);
  if (fsize < trace0 + TRH_SIZE || read_at(fd, first, TRH_SIZE, trace0) != 0) {
    gz_io_errorf(err, errlen,
                 "%s: truncated: %llu bytes, the headers and the first trace header "
                 "need %llu",
                 path, fsize, trace0 + TRH_SIZE);
    return -1;
  }
  if (ns == 0)
    ns = get_u(first + TR_SAMPLES, 2, lsb);
  if (ns == 0 || ns > (size_t)INT_MAX / 8) {
    gz_io_errorf(err, errlen,
                 "%s: no usable samples-per-trace count (binary header 3221-3222: %u, "
                 "first trace header 115-116: %u)",
                 path, (unsigned)get_u(bin + BIN_SAMPLES, 2, lsb),
                 (unsigned)get_u(first + TR_SAMPLES, 2, lsb));
    return -1;
  }
  tbytes = TRH_SIZE + ns * s->esize;
  ntr = (size_t)((fsize - trace0) / tbytes);
  if ((fsize - trace0) % tbytes != 0) {
    gz_io_errorf(
        err, errlen,
        "%s: truncated trace %zu: %llu of its %zu bytes (240-byte header and %zu "
        "samples of %s) are present",
        path, ntr + 1, (fsize - trace0) % tbytes, tbytes, ns, format_name(s->format));
    return -1;
  }
  if (ntr == 0 || ntr > (size_t)INT_MAX) {
    gz_io_errorf(err, errlen, "%s: %zu traces (1..%d supported)", path, ntr, INT_MAX);
    return -1;
  }
  s->ns = ns;
  s->ntraces = ntr;
  s->trace0 = (long)trace0;
  s->trace_bsize = (int)(ns * s->esize);

  /* the native headers, as stored */
  hoff = (size_t)trace0;
  if (ntr > (SIZE_MAX - hoff) / TRH_SIZE || !(native = malloc(hoff + ntr * TRH_SIZE))) {
    gz_io_errorf(err, errlen, "%s: out of memory for %zu trace headers", path, ntr);
    return -1;
  }
  m->native = native;
  m->native_size = hoff + ntr * TRH_SIZE;
  snprintf(m->native_format, sizeof m->native_format, "%s", NATIVE_TAG);
  if (read_at(fd, native, hoff, 0) != 0)
    goto read_fail;
  /* the trace headers: one read each when traces are long, else blocks of
   * whole traces with the headers picked out (fewer system calls) */
  for (size_t t = 0, per = tbytes >= 4096 ? 1 : ((size_t)4 << 20) / tbytes; t < ntr;
       t += per) {
    size_t k = per < ntr - t ? per : ntr - t;
    unsigned char *blk;
    if (per == 1) {
      if (read_at(fd, native + hoff + t * TRH_SIZE, TRH_SIZE,
                  trace0 + (unsigned long long)t * tbytes) != 0)
        goto read_fail;
      continue;
    }
    if (!(blk = malloc(k * tbytes))) {
      gz_io_errorf(err, errlen, "%s: out of memory", path);
      return -1;
    }
    if (read_at(fd, blk, k * tbytes, trace0 + (unsigned long long)t * tbytes) != 0) {
      free(blk);
      goto read_fail;
    }
    for (size_t j = 0; j < k; j++)
      memcpy(native + hoff + (t + j) * TRH_SIZE, blk + j * tbytes, TRH_SIZE);
    free(blk);
  }

  /* shape */
  m->dtype = s->format == 2 || s->format == 6 ? GZ_FLOAT64 : GZ_FLOAT32;
  snprintf(m->var, sizeof m->var, "amplitude");
  snprintf(m->dim_names[0], sizeof m->dim_names[0], "image");
  m->dims[0] = 1;
  if (grid_of(native, hoff, ntr, lsb, TR_INLINE, TR_CROSSLINE, &il_n, &xl_n) ||
      grid_of(native, hoff, ntr, lsb, TR_CROSSLINE, TR_INLINE, &il_n, &xl_n)) {
    int inline_sorted = trace_key(native, hoff, 0, TR_INLINE, lsb) !=
                        trace_key(native, hoff, xl_n, TR_INLINE, lsb);
    m->ndims = 4;
    m->dims[1] = il_n;
    m->dims[2] = xl_n;
    snprintf(m->dim_names[1], sizeof m->dim_names[1],
             inline_sorted ? "inline" : "crossline");
    snprintf(m->dim_names[2], sizeof m->dim_names[2],
             inline_sorted ? "crossline" : "inline");
    if (set_line_coord(m, 1, native, hoff, il_n, xl_n,
                       inline_sorted ? TR_INLINE : TR_CROSSLINE, lsb) != 0 ||
        set_line_coord(m, 2, native, hoff, xl_n, 1,
                       inline_sorted ? TR_CROSSLINE : TR_INLINE, lsb) != 0)
      goto oom;
  } else {
    m->ndims = 3;
    m->dims[1] = ntr;
    snprintf(m->dim_names[1], sizeof m->dim_names[1], "trace");
  }
  m->dims[m->ndims - 1] = ns;
  snprintf(m->dim_names[m->ndims - 1], sizeof m->dim_names[0], "time");
  dt_us = (int)get_u(bin + BIN_INTERVAL, 2, lsb);
  if (dt_us == 0)
    dt_us = (int)get_u(first + TR_INTERVAL, 2, lsb);
  if (dt_us > 0) {
    double *v = malloc(ns * sizeof *v), t0 = get_i16(first + TR_DELAY, lsb);
    if (!v)
      goto oom;
    for (size_t i = 0; i < ns; i++)
      v[i] = t0 + (double)i * dt_us / 1000.0;
    if (gz_meta_set_coord(m, m->ndims - 1, "time", "ms", v, ns) != 0) {
      free(v);
      goto oom;
    }
    free(v);
  }

  /* attributes: what the file is, and its textual header as text */
  {
    size_t n = 0;
    int ebc = text_is_ebcdic(head);
    for (size_t i = 0; i < TEXT_SIZE; i++) {
      char c = ebc                                   ? from_ebcdic(head[i])
               : (head[i] >= 0x20 && head[i] < 0x7f) ? (char)head[i]
                                                     : ' ';
      text[n++] = c;
      if (i % 80 == 79 && i + 1 < TEXT_SIZE)
        text[n++] = '\n';
    }
    text[n] = '\0';
    if (gz_meta_add_global_text(m, "segy_textual_header", text) != 0 ||
        gz_meta_add_global_number(m, "segy_revision", rev + minor / 10.0) != 0 ||
        gz_meta_add_global_number(m, "segy_sample_format", s->format) != 0 ||
        gz_meta_add_global_text(m, "segy_byte_order", order) != 0 ||
        gz_meta_add_global_number(m, "segy_traces", (double)ntr) != 0)
      goto oom;
  }
  return 0;
read_fail:
  gz_io_errorf(err, errlen, "%s: reading the headers failed: %s", path,
               errno ? strerror(errno) : "unexpected end of file");
  return -1;
oom:
  gz_io_errorf(err, errlen, "%s: out of memory", path);
  return -1;
}

static int segy_open_backend(const char *path, const char *var, const gz_raw_opts_t *raw,
                             MPI_Comm comm, gz_meta_t *meta, void **state, char *err,
                             size_t errlen) {
  segy_state_t *s = calloc(1, sizeof *s);
  struct stat st;
  (void)var;
  (void)raw;
  (void)comm;
  if (!s || !(s->path = strdup(path))) {
    free(s);
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  s->fd = open(path, O_RDONLY);
  if (s->fd < 0 || fstat(s->fd, &st) != 0) {
    gz_io_errorf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    goto fail;
  }
  errno = 0;
  if (read_headers(s, s->fd, (unsigned long long)st.st_size, meta, err, errlen) != 0)
    goto fail;
  if (!(s->buf = malloc(s->ns * s->esize))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    goto fail;
  }
  if (s->format != 6) {
    int rc;
    s->fp = segy_open(path, "rb");
    if (!s->fp) {
      gz_io_errorf(err, errlen, "%s: libsegyio cannot open it", path);
      goto fail;
    }
    rc = segy_set_format(s->fp, s->format | (s->lsb ? SEGY_LSB : SEGY_MSB));
    if (rc != SEGY_OK) {
      gz_io_errorf(err, errlen, "%s: libsegyio refuses sample format %d: %s", path,
                   s->format, segy_error(rc));
      goto fail;
    }
    segy_mmap(s->fp); /* a speed-up when it works; reads fall back to stdio */
    close(s->fd);
    s->fd = -1;
  }
  *state = s;
  return 0;
fail:
  state_free(s);
  return -1;
}

/* Samples [k, k+m) of trace t, converted to meta->dtype at out. */
static int read_piece(segy_state_t *s, gz_dtype_t dtype, size_t t, size_t k, size_t m,
                      unsigned char *out, char *err, size_t errlen) {
  unsigned char *b = s->buf;
  if (s->format == 6) {
    unsigned long long off = (unsigned long long)s->trace0 +
                             (unsigned long long)t * (TRH_SIZE + s->ns * 8) + TRH_SIZE +
                             k * 8;
    if (read_at(s->fd, b, m * 8, off) != 0) {
      gz_io_errorf(err, errlen, "%s: cannot read trace %zu: %s", s->path, t + 1,
                   errno ? strerror(errno) : "unexpected end of file");
      return -1;
    }
    if (s->lsb != gz_io_host_is_little())
      gz_io_swap_bytes(b, m, 8);
    memcpy(out, b, m * 8);
    return 0;
  } else {
    int rc = segy_readsubtr(s->fp, (int)t, (int)k, (int)(k + m), 1, b, NULL, s->trace0,
                            s->trace_bsize);
    if (rc == SEGY_OK)
      rc = segy_to_native(s->format, (long long)m, b);
    if (rc != SEGY_OK) {
      gz_io_errorf(err, errlen, "%s: cannot read trace %zu: %s", s->path, t + 1,
                   segy_error(rc));
      return -1;
    }
  }
  for (size_t i = 0; i < m; i++) {
    double v;
    float f;
    switch (s->format) {
    case 1:
    case 5:
      memcpy(&f, b + 4 * i, 4);
      v = f;
      break;
    case 2: {
      int32_t x;
      memcpy(&x, b + 4 * i, 4);
      v = x;
      break;
    }
    case 3: {
      int16_t x;
      memcpy(&x, b + 2 * i, 2);
      v = x;
      break;
    }
    default:
      v = (int8_t)b[i];
      break;
    }
    if (dtype == GZ_FLOAT32) {
      f = (float)v;
      memcpy(out + 4 * i, &f, 4);
    } else {
      memcpy(out + 8 * i, &v, 8);
    }
  }
  return 0;
}

static int segy_read(void *state, const gz_meta_t *meta, const size_t *start,
                     const size_t *count, size_t flat, size_t n, void *dst, char *err,
                     size_t errlen) {
  segy_state_t *s = state;
  size_t es = gz_io_dtype_size(meta->dtype), t = flat / s->ns, k = flat % s->ns, done = 0;
  unsigned char *out = dst;
  (void)start;
  (void)count;
  while (done < n) {
    size_t m = s->ns - k < n - done ? s->ns - k : n - done;
    if (read_piece(s, meta->dtype, t, k, m, out + done * es, err, errlen) != 0)
      return -1;
    done += m;
    t++;
    k = 0;
  }
  return 0;
}

static void segy_close_backend(void *state) { state_free(state); }

const gz_io_backend_t gz_io_backend_segy = {GZ_FMT_SEGY, segy_open_backend, segy_read,
                                            segy_close_backend};

/* ---- writing ------------------------------------------------------------ */

/* 1 if meta->native holds SEG-Y headers for ntr traces of ns samples. */
static int native_fits(const gz_meta_t *m, size_t ntr, size_t ns) {
  const unsigned char *bin;
  int lsb, rev, minor, next;
  size_t have;
  if (!m->native || strcmp(m->native_format, NATIVE_TAG) != 0 ||
      m->native_size < HEAD_SIZE)
    return 0;
  bin = m->native + TEXT_SIZE;
  if ((lsb = byte_order(bin)) < 0)
    return 0;
  rev = revision(bin, lsb, &minor);
  next = rev >= 1 ? get_i16(bin + BIN_EXT_HEADERS, lsb) : 0;
  if (next < 0)
    return 0;
  have = get_u(bin + BIN_SAMPLES, 2, lsb);
  if (rev >= 2 && get_u(bin + BIN_EXT_SAMPLES, 4, lsb) > 0)
    have = get_u(bin + BIN_EXT_SAMPLES, 4, lsb);
  if (have == 0 && m->native_size >= HEAD_SIZE + (size_t)next * TEXT_SIZE + TRH_SIZE)
    have = get_u(m->native + HEAD_SIZE + (size_t)next * TEXT_SIZE + TR_SAMPLES, 2, lsb);
  return have == ns &&
         m->native_size == HEAD_SIZE + (size_t)next * TEXT_SIZE + ntr * TRH_SIZE;
}

/* One 80-byte line of the textual header: "Cnn " then text, blank-padded,
 * in EBCDIC or ASCII. */
static void text_line(unsigned char *t, int line, const char *s, int ebc) {
  char buf[81];
  snprintf(buf, sizeof buf, "C%2d %-76.76s", line, s);
  for (int i = 0; i < 80; i++)
    t[(line - 1) * 80 + i] = ebc ? to_ebcdic(buf[i]) : (unsigned char)buf[i];
}

static const char *global_text(const gz_meta_t *m, const char *name) {
  const gz_attr_t *a = gz_meta_find_global(m, name);
  return a && a->is_text && a->text ? a->text : NULL;
}

/* Lines C35-C39: gzstack's provenance, when the meta carries it. */
static void provenance(unsigned char *t, const gz_meta_t *m) {
  const char *cmd = global_text(m, "gzstack_command");
  const gz_attr_t *bound = gz_meta_find_global(m, "gzstack_claimed_bound");
  const gz_attr_t *eb = gz_meta_find_global(m, "gzstack_error_bound_abs");
  const char *ver = global_text(m, "gzstack_version");
  const char *op = global_text(m, "gzstack_operation");
  const char *pol = global_text(m, "gzstack_bound_policy");
  const gz_attr_t *nsnap = gz_meta_find_global(m, "gzstack_snapshots");
  const char *samples = global_text(m, "segy_output_format");
  const char *key = global_text(m, "gzstack_key");
  char line[160];
  int ebc = text_is_ebcdic(t);
  size_t len;
  if (!cmd)
    return;
  snprintf(line, sizeof line, "GZSTACK %s", ver ? ver : "");
  text_line(t, 35, line, ebc);
  snprintf(line, sizeof line, "%s%s%s OF %g %s, %s BOUND, %s SAMPLES", op ? op : "stack",
           key ? " BY " : "", key ? key : "",
           nsnap && !nsnap->is_text && nsnap->count ? nsnap->values[0] : 0.0,
           key ? "TRACES" : "IMAGES", pol ? pol : "",
           samples && !strcmp(samples, "ibm") ? "IBM" : "IEEE");
  text_line(t, 36, line, ebc);
  snprintf(line, sizeof line, "ERROR BOUND %.6g, CLAIMED MAX ERROR %.6g",
           eb && !eb->is_text && eb->count ? eb->values[0] : 0.0,
           bound && !bound->is_text && bound->count ? bound->values[0] : 0.0);
  text_line(t, 37, line, ebc);
  len = strlen(cmd);
  text_line(t, 38, cmd, ebc);
  text_line(t, 39, len > 76 ? cmd + 76 : "", ebc);
}

/* Headers made from the shape: revision 1, big-endian. */
static void make_headers(unsigned char *head, const gz_meta_t *m, size_t ns, int fmt) {
  const gz_coord_t *tc = &m->coords[m->ndims - 1];
  double dt = 0;
  memset(head, 0, HEAD_SIZE);
  for (int l = 1; l <= 40; l++)
    text_line(head, l,
              l == 1    ? "WRITTEN BY GZSTACK"
              : l == 2  ? m->var
              : l == 40 ? "END TEXTUAL HEADER"
                        : "",
              1);
  if (tc->values && tc->count > 1) {
    dt = tc->values[1] - tc->values[0];
    dt *= !strcmp(tc->units, "s") ? 1e6 : !strcmp(tc->units, "us") ? 1 : 1e3;
  }
  put_u(head + TEXT_SIZE + BIN_INTERVAL, 2,
        dt > 0 && dt < 65535.5 ? (uint32_t)(dt + 0.5) : 0, 0);
  put_u(head + TEXT_SIZE + BIN_SAMPLES, 2, ns <= 65535 ? (uint32_t)ns : 0, 0);
  put_u(head + TEXT_SIZE + BIN_EXT_SAMPLES, 4, ns > 65535 ? (uint32_t)ns : 0, 0);
  put_u(head + TEXT_SIZE + BIN_FORMAT, 2, (uint32_t)fmt, 0);
  put_u(head + TEXT_SIZE + BIN_MEASURE, 2, 1, 0);
  put_u(head + TEXT_SIZE + BIN_REVISION, 2, ns > 65535 || fmt == 6 ? 0x0200 : 0x0100, 0);
  put_u(head + TEXT_SIZE + BIN_FIXED, 2, 1, 0);
}

/* Trace header t made from the shape: sequence numbers, ensemble, sample
 * count and interval, and for grids the line numbers (coordinates, else
 * 1-based indices) of the two dimensions before the samples. */
static void make_trace_header(unsigned char *h, const gz_meta_t *m, size_t t, size_t ns,
                              const unsigned char *bin) {
  int nd = m->ndims;
  memset(h, 0, TRH_SIZE);
  put_u(h + TR_SEQ_LINE, 4, (uint32_t)(t + 1), 0);
  put_u(h + TR_SEQ_FILE, 4, (uint32_t)(t + 1), 0);
  put_u(h + TR_CDP, 4, (uint32_t)(t + 1), 0);
  put_u(h + TR_ID, 2, 1, 0);
  put_u(h + TR_SAMPLES, 2, ns <= 65535 ? (uint32_t)ns : 0, 0);
  memcpy(h + TR_INTERVAL, bin + BIN_INTERVAL, 2);
  if (m->coords[nd - 1].values) { /* delay: the first time, whole ms */
    const gz_coord_t *tc = &m->coords[nd - 1];
    double t0 = tc->values[0] * (!strcmp(tc->units, "s")    ? 1e3
                                 : !strcmp(tc->units, "us") ? 1e-3
                                                            : 1);
    if (t0 >= -32768 && t0 <= 32767 && t0 == (double)(int)t0)
      put_u(h + TR_DELAY, 2, (uint32_t)(int)t0 & 0xffffu, 0);
  }
  if (nd >= 3 && m->dims[nd - 2] > 0) {
    size_t nx = m->dims[nd - 2], i = (t / nx) % m->dims[nd - 3], j = t % nx;
    const gz_coord_t *ci = &m->coords[nd - 3], *cj = &m->coords[nd - 2];
    double a = ci->values ? ci->values[i] : (double)(i + 1);
    double b = cj->values ? cj->values[j] : (double)(j + 1);
    put_u(h + TR_INLINE, 4, (uint32_t)(int32_t)a, 0);
    put_u(h + TR_CROSSLINE, 4, (uint32_t)(int32_t)b, 0);
  }
}

int gz_io_write_segy(const char *tmp, const char *path, const gz_meta_t *meta,
                     const gz_io_source_t *src, char *err, size_t errlen) {
  size_t ns = meta->dims[meta->ndims - 1], ntr = gz_meta_count(meta) / ns;
  size_t es = gz_io_dtype_size(meta->dtype), hoff = HEAD_SIZE;
  const char *want = global_text(meta, "segy_output_format");
  int ibm = want && !strcmp(want, "ibm");
  int fmt = ibm                         ? 1
            : meta->dtype == GZ_FLOAT64 ? 6
                                        : 5,
      keep = native_fits(meta, ntr, ns);
  size_t oes = ibm ? 4 : es; /* bytes per sample written */
  int lsb = 0;
  int file_little;
  unsigned char head[HEAD_SIZE], *tbuf = NULL;
  FILE *f = NULL;
  int rc, state = -1;

  if (ntr > (size_t)INT_MAX || ns > 0x7fffffff / 8) {
    gz_io_errorf(err, errlen, "%s: %zu traces of %zu samples do not fit SEG-Y", path, ntr,
                 ns);
    return -1;
  }
  if (keep) {
    lsb = byte_order(meta->native + TEXT_SIZE);
    hoff = meta->native_size - ntr * TRH_SIZE;
    memcpy(head, meta->native, HEAD_SIZE);
    if (get_i16(head + TEXT_SIZE + BIN_FORMAT, lsb) != fmt) {
      put_u(head + TEXT_SIZE + BIN_FORMAT, 2, (uint32_t)fmt, lsb);
      int minor;
      if (fmt == 6 && revision(head + TEXT_SIZE, lsb, &minor) < 2)
        put_u(head + TEXT_SIZE + BIN_REVISION, 2, 0x0200, lsb);
    }
  } else {
    make_headers(head, meta, ns, fmt);
  }
  provenance(head, meta);
  file_little = lsb;
  if (!(f = gz_io_fopen_temp(tmp))) {
    gz_io_errorf(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    return -1;
  }
  if (!(tbuf = malloc(TRH_SIZE + ns * (es > oes ? es : oes)))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    goto done;
  }
  if (fwrite(head, 1, HEAD_SIZE, f) != HEAD_SIZE ||
      (keep && hoff > HEAD_SIZE &&
       fwrite(meta->native + HEAD_SIZE, 1, hoff - HEAD_SIZE, f) != hoff - HEAD_SIZE))
    goto write_fail;
  for (size_t t = 0; t < ntr; t++) {
    const void *trace = gz_io_source_get(src, meta, t * ns, ns, err, errlen);
    if (!trace)
      goto done;
    if (keep)
      memcpy(tbuf, meta->native + hoff + t * TRH_SIZE, TRH_SIZE);
    else
      make_trace_header(tbuf, meta, t, ns, head + TEXT_SIZE);
    if (ibm) { /* float32 (rounded from double), then IBM, big-endian */
      for (size_t i = 0; i < ns; i++) {
        float v = meta->dtype == GZ_FLOAT64 ? (float)((const double *)trace)[i]
                                            : ((const float *)trace)[i];
        memcpy(tbuf + TRH_SIZE + 4 * i, &v, 4);
      }
      segy_from_native(1, (long long)ns, tbuf + TRH_SIZE);
    } else {
      memcpy(tbuf + TRH_SIZE, trace, ns * es);
    }
    if (ibm ? file_little : file_little != gz_io_host_is_little())
      gz_io_swap_bytes(tbuf + TRH_SIZE, ns, oes);
    if (fwrite(tbuf, 1, TRH_SIZE + ns * oes, f) != TRH_SIZE + ns * oes)
      goto write_fail;
  }
  state = 0;
  goto done;
write_fail:
  state = 1;
done:
  rc = gz_io_close_written(f, state, path, err, errlen);
  free(tbuf);
  return rc;
}
