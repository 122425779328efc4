/*
 * cmd_compress.c - `gzstack compress` and `gzstack decompress`: dataset
 * reduction with the libgzcoll codec. Under mpirun, input i is handled by
 * rank i mod P.
 *
 * Archive (.gzc) layout, little-endian:
 *    0   4  magic "GZCA"
 *    4   1  archive version (1), then 3 zero bytes
 *    8   8  metadata size M
 *   16   4  CRC-32 of the metadata
 *   20   M  metadata: variable, shape, dimension names, coordinates, units,
 *           attributes (io/gz_io.h gz_meta_pack)
 * 20+M      the codec stream (libgzcoll/src/codec/stream.c), to the end
 */
#define _POSIX_C_SOURCE 200809L /* fmemopen */

#include "app.h"
#include "compress_bound.h"

#include "gz_io.h"
#include "gz_io_commit.h"
#include "gzcoll.h"

#include <argtable2.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define GZA_MAGIC "GZCA"
#define GZA_VERSION 1
#define GZA_HEADER 20
#define ERRLEN 8192

typedef struct compress_opts {
  const char **inputs;
  int ninputs;
  const char *output;
  double eb;
  gzc_eb_mode_t eb_mode;
  const char *var;
  gz_raw_opts_t raw;
  int have_raw;
  int verify, force, quiet, threads;
  int fast; /* --fast: format 3 (no prediction across dimensions, no entropy stage) */
  uint32_t chunk;
  const char *format; /* decompress: nc|h5|raw|sgy|rsf for directory outputs */
} compress_opts_t;

static double now(void) { return MPI_Wtime(); }

static int is_directory(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Output path for input i: -o itself for one input, else DIR/base + suffix
 * (or beside the input without -o). */
static int output_path(const compress_opts_t *o, int i, const char *suffix, char *out,
                       size_t len) {
  int n;
  if (o->output && !is_directory(o->output))
    n = snprintf(out, len, "%s", o->output);
  else if (o->output)
    n = snprintf(out, len, "%s/%s%s", o->output, base_name(o->inputs[i]), suffix);
  else
    n = snprintf(out, len, "%s%s", o->inputs[i], suffix);
  return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* "96x2048" -> dims. */
int gz_parse_dims(const char *text, gz_raw_opts_t *raw) {
  const char *p = text;
  raw->ndims = 0;
  while (p && *p) {
    char *end;
    unsigned long long v;
    if (raw->ndims == GZ_IO_MAXDIMS || *p < '0' || *p > '9')
      return -1;
    errno = 0;
    v = strtoull(p, &end, 10);
    if (errno || end == p || v == 0)
      return -1;
    raw->dims[raw->ndims++] = (size_t)v;
    if (*end == 'x' || *end == 'X')
      end++;
    else if (*end)
      return -1;
    p = end;
  }
  return raw->ndims > 0 ? 0 : -1;
}

/* The raw shape of a file: --dims is either the whole file's shape or the
 * shape of one record, the record count then following from the size. */
static int raw_shape_for(const char *path, const gz_raw_opts_t *given, gz_raw_opts_t *raw,
                         char *err, size_t errlen) {
  struct stat st;
  size_t per = gz_dtype_size(given->dtype);
  *raw = *given;
  for (int d = 0; d < given->ndims; d++)
    per *= given->dims[d];
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  if ((size_t)st.st_size == per || given->ndims == GZ_IO_MAXDIMS)
    return 0;
  memmove(raw->dims + 1, raw->dims, sizeof(size_t) * (size_t)given->ndims);
  raw->dims[0] = 0; /* records inferred by the reader */
  raw->ndims++;
  return 0;
}

static size_t meta_count(const gz_meta_t *m) {
  size_t n = 1;
  for (int d = 0; d < m->ndims; d++)
    n *= m->dims[d];
  return n;
}

static uint32_t crc32_of(const void *p, size_t n) {
  return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The archive's header and metadata (GZA_HEADER + *msize bytes, malloc'd):
 * the input's metadata with the bound's attributes (gz_io_bound_attrs). */
static uint8_t *archive_header(const gz_meta_t *meta, const gz_io_bound_t *b,
                               size_t *msize) {
  uint8_t *header = NULL;
  gz_meta_t m;
  if (gz_meta_copy(&m, meta) != 0)
    return NULL;
  *msize = gz_io_bound_attrs(&m, b) == 0 ? gz_meta_pack(&m, NULL, 0) : 0;
  header = *msize ? malloc(GZA_HEADER + *msize) : NULL;
  if (header) {
    memcpy(header, GZA_MAGIC, 4);
    put_le(header + 4, GZA_VERSION, 4);
    gz_meta_pack(&m, header + GZA_HEADER, *msize);
    put_le(header + 8, *msize, 8);
    put_le(header + 16, crc32_of(header + GZA_HEADER, *msize), 4);
  }
  gz_meta_free(&m);
  return header;
}

/* The bound of mode o->eb_mode kept as the absolute bound eb. */
static gz_io_bound_t bound_of(const compress_opts_t *o, double eb) {
  gz_io_bound_t b = {eb, gzc_eb_mode_name(o->eb_mode), o->eb};
  return b;
}

/* The bound's attributes as read back from an output's metadata: 0 when
 * they say what was asked, else -1 with err. */
static int check_recorded(const gz_meta_t *m, const gz_io_bound_t *b, const char *out,
                          char *err, size_t errlen) {
  const gz_attr_t *bound = gz_meta_find_attr(m, "gzstack_abs_error_bound");
  const gz_attr_t *mode = gz_meta_find_attr(m, "gzstack_eb_mode");
  const gz_attr_t *target = gz_meta_find_attr(m, "gzstack_eb_target");
  if (!bound || bound->is_text || bound->count != 1 || bound->values[0] != b->abs_bound ||
      !mode || !mode->is_text || strcmp(mode->text, b->mode) != 0 || !target ||
      target->is_text || target->count != 1 || target->values[0] != b->target) {
    snprintf(err, errlen,
             "%s: verification failed: the recorded bound (attributes gzstack_eb_mode, "
             "gzstack_eb_target, gzstack_abs_error_bound) does not read back as written",
             out);
    return -1;
  }
  return 0;
}

/* Streaming works on batches of about this many values (a few chunks). */
#define GZ_STREAM_BATCH ((size_t)1 << 18)

static uint32_t batch_chunks(size_t chunk_values, uint32_t chunks, int threads) {
  size_t k = GZ_STREAM_BATCH / (chunk_values ? chunk_values : 1);
  k = (k ? k : 1) * (size_t)(threads > 1 ? threads : 1);
  return k < chunks ? (uint32_t)k : (chunks ? chunks : 1);
}

/* The range of the valid values read in batches (a pass that reads the
 * input without holding it). */
static int range_streamed(gz_reader_t *r, const gz_meta_t *meta, size_t n, void *buf,
                          size_t batch, gzc_range_t *range, char *err, size_t errlen) {
  range->count = n;
  range->valid = 0;
  range->lo = INFINITY;
  range->hi = -INFINITY;
  for (size_t first = 0; first < n; first += batch) {
    size_t m = n - first < batch ? n - first : batch;
    gzc_range_t part;
    if (gz_reader_read_values(r, first, m, meta->dtype, buf, err, errlen) != 0)
      return -1;
    gzc_range_compute(meta->dtype, buf, m, meta->has_fill, meta->fill_value, &part);
    range->valid += part.valid;
    range->lo = part.lo < range->lo ? part.lo : range->lo;
    range->hi = part.hi > range->hi ? part.hi : range->hi;
  }
  return 0;
}

/* The next batch read while this one is compressed and written: a thread
 * reads batches into two buffers in turn (it alone calls the reader while it
 * runs). state[s]: 0 empty, 1 full, -1 failed (err). */
typedef struct prefetch {
  gz_reader_t *r;
  gz_dtype_t dtype;
  size_t n, batch;
  void *buf[2];
  int state[2], stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char err[1024];
} prefetch_t;

static void *prefetch_run(void *arg) {
  prefetch_t *q = arg;
  for (size_t first = 0, b = 0; first < q->n; first += q->batch, b++) {
    size_t m = q->n - first < q->batch ? q->n - first : q->batch;
    int s = (int)(b % 2), rc;
    pthread_mutex_lock(&q->mu);
    while (q->state[s] != 0 && !q->stop)
      pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    if (q->stop)
      break;
    rc =
        gz_reader_read_values(q->r, first, m, q->dtype, q->buf[s], q->err, sizeof q->err);
    pthread_mutex_lock(&q->mu);
    q->state[s] = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (rc != 0)
      break;
  }
  return NULL;
}

/* Batch b's values (NULL with err on a read failure); release it with
 * prefetch_done. */
static void *prefetch_take(prefetch_t *q, size_t b, char *err, size_t errlen) {
  int s = (int)(b % 2), state;
  pthread_mutex_lock(&q->mu);
  while (q->state[s] == 0)
    pthread_cond_wait(&q->cv, &q->mu);
  state = q->state[s];
  pthread_mutex_unlock(&q->mu);
  if (state < 0) {
    snprintf(err, errlen, "%s", q->err);
    return NULL;
  }
  return q->buf[s];
}

static void prefetch_done(prefetch_t *q, size_t b) {
  pthread_mutex_lock(&q->mu);
  q->state[b % 2] = 0;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

static void prefetch_stop(prefetch_t *q, pthread_t t) {
  pthread_mutex_lock(&q->mu);
  q->stop = 1;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
  pthread_join(t, NULL);
}

/* Compress the reader's n values into the archive `out` a few chunks at a
 * time: reserve the stream's head, write the chunks as they are encoded, then
 * the head in its place. The same bytes as compressing the whole buffer;
 * memory: one batch of values and its encoding. The file is written to a
 * temporary and named when complete; with keep (keeplen bytes) it is left
 * there, its name in keep, for the caller to verify and commit. */
static int compress_streamed(const compress_opts_t *o, const char *in, const char *out,
                             gz_reader_t *r, gz_codec_params_t *p, size_t n,
                             size_t *file_size, char *keep, size_t keeplen, char *err,
                             size_t errlen) {
  const gz_meta_t *meta = gz_reader_meta(r);
  gz_stream_writer_t *w = NULL;
  gz_stream_layout_t lay;
  gzc_range_t range = {n, 0, 0, 0};
  uint8_t *header = NULL, *head = NULL, *cbuf = NULL;
  void *vbuf = NULL;
  char tmp[4200] = "";
  size_t msize = 0, elem = gz_dtype_size(p->dtype), batch, pos;
  uint32_t k;
  gz_result_t rc;
  int fd = -1, ret = -1, reading = 0;
  prefetch_t q;
  pthread_t reader;

  memset(&q, 0, sizeof q);
  pthread_mutex_init(&q.mu, NULL);
  pthread_cond_init(&q.cv, NULL);
  vbuf = malloc(GZ_STREAM_BATCH * elem);
  if (!vbuf)
    goto nomem;
  if (o->eb_mode != GZC_EB_ABS &&
      range_streamed(r, meta, n, vbuf, GZ_STREAM_BATCH, &range, err, errlen) != 0)
    goto fail;
  p->eb_mode = GZ_EB_ABS;
  p->error_bound = gzc_abs_bound(o->eb_mode, o->eb, &range);
  rc = gz_stream_writer_open(p, n, &w, &lay);
  if (rc != GZ_OK) {
    snprintf(err, errlen, "%s: compression failed: %s", in, gz_strerror(rc));
    goto fail;
  }
  k = batch_chunks(lay.chunk_values, lay.chunk_count, p->threads);
  batch = (size_t)k * lay.chunk_values;
  free(vbuf);
  vbuf = malloc(2 * batch * elem + 1);
  cbuf = malloc((size_t)k * lay.chunk_bound + 1);
  head = malloc(lay.head_size);
  {
    gz_io_bound_t b = bound_of(o, p->error_bound);
    header = archive_header(meta, &b, &msize);
  }
  if (!vbuf || !cbuf || !head || !header)
    goto nomem;
  q.r = r;
  q.dtype = p->dtype;
  q.n = n;
  q.batch = batch;
  q.buf[0] = vbuf;
  q.buf[1] = (uint8_t *)vbuf + batch * elem;
  if (gz_io_check_target(out, o->force, err, errlen) != 0)
    goto fail;
  if (gz_io_temp_path(out, tmp, sizeof tmp) != 0) {
    snprintf(err, errlen, "%s: path too long", out);
    tmp[0] = '\0';
    goto fail;
  }
  fd = gz_io_open_temp(tmp); /* no O_TRUNC (see there) */
  if (fd < 0) {
    snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    goto fail;
  }
  if (gz_io_pwrite_all(fd, header, GZA_HEADER + msize, 0) != 0)
    goto write_error;
  pos = GZA_HEADER + msize + lay.head_size; /* the head goes before, at the end */
  /* with --threads > 1 a thread reads the next batch meanwhile; one thread
   * reads, compresses and writes in turn (on one core a second thread costs
   * more than it hides; the kernel's read-ahead and write-back still overlap
   * the device with the compression) */
  if (p->threads > 1) {
    if (pthread_create(&reader, NULL, prefetch_run, &q) != 0) {
      snprintf(err, errlen, "%s: cannot start the reading thread", in);
      goto fail;
    }
    reading = 1;
  }
  for (uint32_t c = 0, b = 0; c < lay.chunk_count; c += k, b++) {
    uint32_t m = lay.chunk_count - c < k ? lay.chunk_count - c : k;
    size_t size = 0, first = (size_t)c * lay.chunk_values;
    void *x = vbuf;
    if (reading)
      x = prefetch_take(&q, b, err, errlen);
    else if (gz_reader_read_values(r, first, n - first < batch ? n - first : batch,
                                   p->dtype, vbuf, err, errlen) != 0)
      x = NULL;
    if (!x)
      goto fail;
    rc = gz_stream_writer_encode(w, c, m, x, cbuf, (size_t)k * lay.chunk_bound, &size);
    if (reading)
      prefetch_done(&q, b);
    if (rc != GZ_OK) {
      snprintf(err, errlen, "%s: compression failed: %s", in, gz_strerror(rc));
      goto fail;
    }
    if (gz_io_pwrite_all(fd, cbuf, size, (off_t)pos) != 0)
      goto write_error;
    pos += size;
  }
  if (gz_stream_writer_head(w, head, lay.head_size) != GZ_OK) {
    snprintf(err, errlen, "%s: compression failed: %s", in, gz_strerror(GZ_ERR_ARG));
    goto fail;
  }
  if (gz_io_pwrite_all(fd, head, lay.head_size, (off_t)(GZA_HEADER + msize)) != 0)
    goto write_error;
  if (close(fd) != 0) {
    fd = -1;
    goto write_error;
  }
  fd = -1;
  *file_size = pos;
  if (keep) { /* the caller verifies, then commits */
    snprintf(keep, keeplen, "%s", tmp);
    tmp[0] = '\0';
    ret = 0;
    goto fail;
  }
  if (gz_io_commit(tmp, out, o->force, err, errlen) != 0) {
    tmp[0] = '\0'; /* removed by the commit */
    goto fail;
  }
  tmp[0] = '\0';
  ret = 0;
  goto fail;
write_error:
  snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
  goto fail;
nomem:
  snprintf(err, errlen, "%s: out of memory for a batch of values", in);
fail:
  if (reading)
    prefetch_stop(&q, reader);
  pthread_cond_destroy(&q.cv);
  pthread_mutex_destroy(&q.mu);
  if (fd >= 0)
    close(fd);
  if (tmp[0])
    gz_io_discard(tmp);
  free(header);
  free(head);
  free(cbuf);
  free(vbuf);
  gz_stream_writer_close(w);
  return ret;
}

/* v in the fewest digits that read back as v (buf: 32 bytes). */
static const char *exact(double v, char *buf) {
  for (int digits = 6; digits < 17; digits++) {
    snprintf(buf, 32, "%.*g", digits, v);
    if (strtod(buf, NULL) == v)
      return buf;
  }
  snprintf(buf, 32, "%.17g", v);
  return buf;
}

static void print_verify(const compress_opts_t *o, const char *in, const char *out,
                         size_t n, gz_dtype_t dtype, size_t file_size, double t_comp,
                         double t_dec, double eb, const gzc_figures_t *f) {
  double raw = (double)n * (double)gz_dtype_size(dtype);
  printf("%s -> %s: %zu values %s, ratio %.3f, bit rate %.3f bits/value\n", in, out, n,
         dtype == GZ_FLOAT32 ? "f32" : "f64", file_size ? raw / (double)file_size : 0,
         n ? 8.0 * (double)file_size / (double)n : 0);
  printf("  compress %.3f GB/s, decompress %.3f GB/s\n", raw / t_comp / 1e9,
         raw / t_dec / 1e9);
  printf("  max abs error %.6g (bound %.6g, %s), max rel error %.6g, PSNR %.2f dB, "
         "NRMSE %.6g, L2 norm of error %.6g%s\n",
         f->max_abs, eb, f->max_abs <= eb ? "held" : "VIOLATED", f->max_rel, f->psnr,
         f->nrmse, f->l2, f->nonfinite_mismatch ? ", NON-FINITE VALUES CHANGED" : "");
  if (o->eb_mode == GZC_EB_PSNR)
    printf("  --eb-mode psnr %g: bound %.6g = range %.6g x 10^(-%g/20); PSNR %.2f dB "
           "%s\n",
           o->eb, eb, f->range, o->eb, f->psnr,
           gzc_target_met(o->eb_mode, o->eb, f) ? "met" : "NOT MET");
  else if (o->eb_mode == GZC_EB_NORM)
    printf("  --eb-mode norm %g: bound %.6g = %g / sqrt(%zu); L2 norm of error %.6g "
           "%s\n",
           o->eb, eb, o->eb, n, f->l2,
           gzc_target_met(o->eb_mode, o->eb, f) ? "met" : "NOT MET");
  else if (o->eb_mode == GZC_EB_REL)
    printf("  --eb-mode rel %g: bound %.6g = %g x range %.6g of the valid values\n",
           o->eb, eb, o->eb, f->range);
  {
    char target[32], bound[32];
    printf("  recorded (read back from %s): gzstack_eb_mode %s, gzstack_eb_target %s, "
           "gzstack_abs_error_bound %s\n",
           out, gzc_eb_mode_name(o->eb_mode), exact(o->eb, target), exact(eb, bound));
  }
}

/* The input's values for a writer (gz_io_source_t), read as it asks. */
typedef struct read_source {
  gz_reader_t *r;
  void *buf;
  size_t cap;
} read_source_t;

static const void *read_get(void *ctx, size_t first, size_t n, char *err, size_t errlen) {
  read_source_t *s = ctx;
  gz_dtype_t dtype = gz_reader_meta(s->r)->dtype;
  size_t bytes = n * gz_dtype_size(dtype);
  if (bytes > s->cap) {
    free(s->buf);
    s->cap = 0;
    if (!(s->buf = malloc(bytes))) {
      snprintf(err, errlen, "%s: out of memory for %zu values", gz_reader_path(s->r), n);
      return NULL;
    }
    s->cap = bytes;
  }
  return gz_reader_read_values(s->r, first, n, dtype, s->buf, err, errlen) == 0 ? s->buf
                                                                                : NULL;
}

/* The variable of the netCDF-4 or HDF5 file path just written (in-process
 * filter; named out in messages) compared with the input r in batches
 * (figures into sums), its recorded bound checked against b. *t_dec: the
 * time spent reading the file back. */
static int read_back(const char *path, const char *out, int h5, gz_reader_t *r,
                     const gz_io_bound_t *b, gzc_sums_t *sums, double *t_dec, char *err,
                     size_t errlen) {
  const gz_meta_t *meta = gz_reader_meta(r);
  const char *vname = strrchr(meta->var, '/');
  gz_reader_t *w = NULL;
  size_t n = meta_count(meta), elem = gz_dtype_size(meta->dtype);
  size_t batch = gz_io_gz_chunk_values(meta); /* each chunk decoded once */
  void *x, *y;
  int rc = -1;
  x = malloc(batch * elem);
  y = malloc(batch * elem);
  vname = h5 || !vname ? meta->var : vname + 1; /* HDF5 keeps the group path */
  if (!x || !y) {
    snprintf(err, errlen, "%s: verification: out of memory for a batch of values", out);
    goto done;
  }
  if (gz_reader_open(path, vname[0] ? vname : "data", NULL, MPI_COMM_SELF, &w, err,
                     errlen) != 0)
    goto done;
  if (meta_count(gz_reader_meta(w)) != n) {
    snprintf(err, errlen, "%s: read back %zu values, wrote %zu", out,
             meta_count(gz_reader_meta(w)), n);
    goto done;
  }
  for (size_t first = 0; first < n; first += batch) {
    size_t k = n - first < batch ? n - first : batch;
    double t0;
    if (gz_reader_read_values(r, first, k, meta->dtype, x, err, errlen) != 0)
      goto done;
    t0 = now();
    if (gz_reader_read_values(w, first, k, meta->dtype, y, err, errlen) != 0)
      goto done;
    *t_dec += now() - t0;
    gzc_figures_add(sums, meta->dtype, x, y, k, meta->has_fill, meta->fill_value);
  }
  rc = check_recorded(gz_reader_meta(w), b, out, err, errlen);
done:
  gz_reader_close(w);
  free(x);
  free(y);
  return rc;
}

/* What --verify prints and checks, from the figures f: 0, or -1 with err
 * when the bound or the target broke. */
static int verify_report(const compress_opts_t *o, const char *in, const char *out,
                         size_t n, gz_dtype_t dtype, size_t file_size, double t_comp,
                         double t_dec, double eb, const gzc_figures_t *f, char *err,
                         size_t errlen) {
  print_verify(o, in, out, n, dtype, file_size, t_comp, t_dec, eb, f);
  if (!(f->max_abs <= eb) || f->nonfinite_mismatch) {
    snprintf(err, errlen, "%s: verification failed: max error %g > bound %g%s", in,
             f->max_abs, eb,
             f->nonfinite_mismatch ? " or non-finite values changed" : "");
    return -1;
  }
  if (!gzc_target_met(o->eb_mode, o->eb, f)) {
    snprintf(err, errlen, "%s: verification failed: --eb-mode %s %g not met", in,
             gzc_eb_mode_name(o->eb_mode), o->eb);
    return -1;
  }
  return 0;
}

static int verify_archive(const compress_opts_t *o, const char *in, const char *out,
                          const char *path, gz_reader_t *r, double eb, size_t file_size,
                          double t_comp, char *err, size_t errlen);

/* Compress one input into its archive (streamed, and with --verify read
 * back from the written file, in batches), or (-o *.nc, *.h5) into a
 * netCDF-4 or HDF5 file whose variable goes through the HDF5 filter: the
 * data are compressed once, by the filter, and --verify reads that file
 * back. Returns 0 or -1 with err set; nothing is left at the output path on
 * failure. */
static int compress_one(const compress_opts_t *o, int i, char *err, size_t errlen) {
  const char *in = o->inputs[i];
  char out[4096], tmp[4200] = "";
  gz_reader_t *r = NULL;
  gz_raw_opts_t raw;
  const gz_meta_t *meta;
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  gzc_range_t range;
  double t0, t_comp, t_dec = 0, eb;
  size_t n, file_size = 0;
  gz_io_bound_t bound;
  int ret = -1, to_nc, to_h5;

  if (output_path(o, i, ".gzc", out, sizeof out) != 0) {
    snprintf(err, errlen, "%s: output path too long", in);
    return -1;
  }
  to_nc = gz_io_format_from_path(out) == GZ_FMT_NETCDF;
  to_h5 = gz_io_format_from_path(out) == GZ_FMT_HDF5;
  if (gz_io_check_target(out, o->force, err, errlen) != 0)
    return -1;
  if (o->have_raw && raw_shape_for(in, &o->raw, &raw, err, errlen) != 0)
    return -1;
  if (gz_reader_open(in, o->var, o->have_raw ? &raw : NULL, MPI_COMM_SELF, &r, err,
                     errlen) != 0)
    return -1;
  meta = gz_reader_meta(r);
  n = meta_count(meta);
  p.dtype = meta->dtype;
  p.chunk_len = o->chunk;
  p.threads = o->threads;
  /* format 2, predicted in the data's own shape; --fast: format 3 */
  p.predictor = o->fast ? GZ_PRED_NONE : GZ_PRED_AUTO;
  p.ndims = meta->ndims <= GZ_CODEC_MAXDIMS ? (unsigned)meta->ndims : 0;
  for (unsigned d = 0; d < p.ndims; d++)
    p.dims[d] = meta->dims[d];
  if (!to_nc && !to_h5) { /* streamed: a few chunks in memory, not the input */
    t0 = now();
    ret = compress_streamed(o, in, out, r, &p, n, &file_size, o->verify ? tmp : NULL,
                            sizeof tmp, err, errlen);
    t_comp = now() - t0;
    if (ret == 0 && o->verify) {
      ret = verify_archive(o, in, out, tmp, r, p.error_bound, file_size, t_comp, err,
                           errlen);
      if (ret == 0)
        ret = gz_io_commit(tmp, out, o->force, err, errlen);
      else
        gz_io_discard(tmp);
      tmp[0] = '\0'; /* committed or dropped */
    }
    if (ret == 0 && !o->quiet && !o->verify)
      printf("%s -> %s: ratio %.3f\n", in, out,
             (double)(n * gz_dtype_size(p.dtype)) / (double)(file_size ? file_size : 1));
    goto fail;
  }
  /* every mode becomes a strict absolute bound over the valid values (a
   * pass over the input in batches) */
  range = (gzc_range_t){n, 0, 0, 0};
  if (o->eb_mode != GZC_EB_ABS) {
    void *buf = malloc(GZ_STREAM_BATCH * gz_dtype_size(p.dtype));
    int rrc =
        buf ? range_streamed(r, meta, n, buf, GZ_STREAM_BATCH, &range, err, errlen)
            : (snprintf(err, errlen, "%s: out of memory for a batch of values", in), -1);
    free(buf);
    if (rrc != 0)
      goto fail;
  }
  eb = gzc_abs_bound(o->eb_mode, o->eb, &range);
  bound = bound_of(o, eb);
  {
    struct stat st;
    read_source_t rs = {r, NULL, 0};
    gz_io_source_t src = {NULL, read_get, &rs};
    int wrc;
    if (gz_io_temp_path(out, tmp, sizeof tmp) != 0) {
      snprintf(err, errlen, "%s: path too long", out);
      goto fail;
    }
    t0 = now();
    wrc = to_nc ? gz_io_write_netcdf_gz(tmp, out, meta, &src, &bound, err, errlen)
                : gz_io_write_hdf5_gz(tmp, out, meta, &src, &bound, err, errlen);
    free(rs.buf);
    if (wrc != 0)
      goto fail;
    t_comp = now() - t0;
    file_size = stat(tmp, &st) == 0 ? (size_t)st.st_size : 0;
  }
  if (o->verify) {
    gzc_sums_t sums = GZC_SUMS_INIT;
    gzc_figures_t f;
    if (read_back(tmp, out, to_h5, r, &bound, &sums, &t_dec, err, errlen) != 0)
      goto fail;
    gzc_figures_finish(&sums, &f);
    if (verify_report(o, in, out, n, p.dtype, file_size, t_comp, t_dec, eb, &f, err,
                      errlen) != 0)
      goto fail;
  }
  ret = gz_io_commit(tmp, out, o->force, err, errlen);
  tmp[0] = '\0'; /* committed, or dropped by the commit */
  if (ret == 0 && !o->quiet && !o->verify)
    printf("%s -> %s: ratio %.3f\n", in, out,
           (double)(n * gz_dtype_size(p.dtype)) / (double)(file_size ? file_size : 1));
fail:
  if (tmp[0])
    gz_io_discard(tmp);
  gz_reader_close(r);
  return ret;
}

/* The output format: --format names an extension (nc, h5, raw, sgy, rsf),
 * else the path's own extension decides. */
static gz_format_t format_of(const compress_opts_t *o, const char *path) {
  char ext[16];
  if (o->format) {
    snprintf(ext, sizeof ext, "x.%s", o->format);
    return gz_io_format_from_path(ext);
  }
  return gz_io_format_from_path(path);
}

/* Exactly n bytes of f into buf; -1 at the end of the file or on an error. */
static int get_bytes(FILE *f, void *buf, size_t n) {
  return fread(buf, 1, n, f) == n ? 0 : -1;
}

/* The archive's values for a writer (gz_io_source_t): its chunks read and
 * decoded a few at a time, in order. vbuf holds values [lo, hi). */
typedef struct decode_source {
  FILE *f;
  const char *in;
  gz_stream_reader_t *rd;
  const gz_stream_info_t *info;
  uint32_t next, k; /* the next chunk to decode; chunks per batch */
  uint8_t *cbuf, *vbuf;
  size_t ccap, vcap, lo, hi;
} decode_source_t;

/* Decode the next batch of chunks after hi into vbuf. 0, or -1 with err. */
static int decode_batch(decode_source_t *s, char *err, size_t errlen) {
  const gz_stream_info_t *info = s->info;
  size_t elem = gz_dtype_size(info->dtype), size = 0, vals, need;
  uint32_t m = info->chunk_count - s->next < s->k ? info->chunk_count - s->next : s->k;
  gz_result_t rc;
  for (uint32_t j = 0; j < m; j++)
    size += gz_stream_reader_chunk_size(s->rd, s->next + j);
  need = (s->hi - s->lo + (size_t)m * info->chunk_len) * elem;
  if (size > s->ccap) {
    free(s->cbuf);
    s->ccap = size;
    if (!(s->cbuf = malloc(size)))
      goto nomem;
  }
  if (need > s->vcap) {
    uint8_t *grown = realloc(s->vbuf, need);
    if (!grown)
      goto nomem;
    s->vbuf = grown;
    s->vcap = need;
  }
  if (m == 0 || get_bytes(s->f, s->cbuf, size) != 0) {
    snprintf(err, errlen, "%s: %s", s->in, gz_strerror(GZ_ERR_CORRUPT));
    return -1;
  }
  rc = gz_stream_reader_decode(s->rd, s->next, m, s->cbuf, size,
                               s->vbuf + (s->hi - s->lo) * elem);
  if (rc != GZ_OK) {
    snprintf(err, errlen, "%s: %s", s->in, gz_strerror(rc));
    return -1;
  }
  vals = (size_t)m * info->chunk_len;
  s->hi += info->count - s->hi < vals ? info->count - s->hi : vals;
  s->next += m;
  return 0;
nomem:
  snprintf(err, errlen, "%s: out of memory for a batch of chunks", s->in);
  return -1;
}

static const void *decode_get(void *ctx, size_t first, size_t n, char *err,
                              size_t errlen) {
  decode_source_t *s = ctx;
  size_t elem = gz_dtype_size(s->info->dtype);
  if (first < s->lo || first > s->hi) {
    snprintf(err, errlen, "%s: values asked out of order", s->in);
    return NULL;
  }
  if (first + n > s->hi) { /* keep [first, hi), decode what follows */
    if (s->hi > first)
      memmove(s->vbuf, s->vbuf + (first - s->lo) * elem, (s->hi - first) * elem);
    s->lo = first;
    while (s->hi < first + n)
      if (decode_batch(s, err, errlen) != 0)
        return NULL;
  }
  return s->vbuf + (first - s->lo) * elem;
}

/* The archive f (named in) opened for decoding: its metadata (meta, to
 * gz_meta_free), stream reader (*rd, to close) and info; f is left at the
 * first chunk. 0, or -1 with err. */
static int open_archive(FILE *f, const char *in, gz_meta_t *meta, gz_stream_reader_t **rd,
                        gz_stream_info_t *info, char *err, size_t errlen) {
  uint8_t header[GZA_HEADER], *blob = NULL, *head = NULL;
  size_t hsize;
  uint64_t msize, fsize = 0;
  gz_result_t rc;
  int ret = -1;

  if (get_bytes(f, header, GZA_HEADER) != 0 || memcmp(header, GZA_MAGIC, 4) != 0) {
    snprintf(err, errlen, "%s: not a gzstack archive (no GZCA header)", in);
    goto fail;
  }
  msize = get_le(header + 8, 8);
  if (get_le(header + 4, 4) != GZA_VERSION) {
    snprintf(err, errlen, "%s: archive version %u is not supported", in,
             (unsigned)get_le(header + 4, 4));
    goto fail;
  }
  { /* sizes read from the file are trusted only as far as the file goes */
    struct stat st;
    fsize = fstat(fileno(f), &st) == 0 && st.st_size > GZA_HEADER
                ? (uint64_t)st.st_size - GZA_HEADER
                : 0;
  }
  blob = msize <= fsize && msize < ((uint64_t)1 << 32) ? malloc((size_t)msize + 1) : NULL;
  if (!blob || get_bytes(f, blob, (size_t)msize) != 0 ||
      get_le(header + 16, 4) != crc32_of(blob, (size_t)msize)) {
    snprintf(err, errlen, "%s: corrupted or truncated archive metadata", in);
    goto fail;
  }
  if (gz_meta_unpack(blob, (size_t)msize, meta, err, errlen) != 0)
    goto fail;
  /* the stream's head: its first 40 bytes give its size */
  head = malloc(40);
  rc = head && get_bytes(f, head, 40) == 0 ? gz_stream_head_size(head, 40, &hsize)
                                           : GZ_ERR_CORRUPT;
  if (rc == GZ_OK) {
    uint8_t *grown = hsize >= 40 && hsize <= fsize - msize ? realloc(head, hsize) : NULL;
    if (grown)
      head = grown;
    rc = grown && get_bytes(f, head + 40, hsize - 40) == 0
             ? gz_stream_reader_open(head, hsize, rd, info)
             : GZ_ERR_CORRUPT;
  }
  if (rc != GZ_OK || info->count != meta_count(meta) || info->dtype != meta->dtype) {
    snprintf(err, errlen, "%s: %s", in,
             rc != GZ_OK ? gz_strerror(rc) : "stream does not match its metadata");
    goto fail;
  }
  ret = 0;
fail:
  free(head);
  free(blob);
  return ret;
}

/* --verify of the archive just written at path (named out), before it is
 * named: its metadata must carry the bound eb, and its values, decoded from
 * the file a few chunks at a time, are compared with the input read again
 * in batches. Memory: a batch of each. 0, or -1 with err. */
static int verify_archive(const compress_opts_t *o, const char *in, const char *out,
                          const char *path, gz_reader_t *r, double eb, size_t file_size,
                          double t_comp, char *err, size_t errlen) {
  const gz_meta_t *meta = gz_reader_meta(r);
  gz_io_bound_t bound = bound_of(o, eb);
  gz_stream_info_t info;
  gz_stream_reader_t *rd = NULL;
  gz_meta_t m;
  gzc_sums_t sums = GZC_SUMS_INIT;
  gzc_figures_t fig;
  decode_source_t ds;
  size_t n = meta_count(meta), elem = gz_dtype_size(meta->dtype);
  void *x = malloc(GZ_STREAM_BATCH * elem);
  double t_dec = 0;
  FILE *f = fopen(path, "rb");
  int ret = -1;

  memset(&m, 0, sizeof m);
  memset(&ds, 0, sizeof ds);
  if (!f || !x) {
    snprintf(err, errlen, "%s: verification cannot read the archive back: %s", out,
             !f ? strerror(errno) : "out of memory");
    goto done;
  }
  if (open_archive(f, out, &m, &rd, &info, err, errlen) != 0 ||
      check_recorded(&m, &bound, out, err, errlen) != 0)
    goto done;
  ds = (decode_source_t){.f = f, .in = out, .rd = rd, .info = &info};
  ds.k = batch_chunks(info.chunk_len, info.chunk_count, 1);
  for (size_t first = 0; first < n; first += GZ_STREAM_BATCH) {
    size_t k = n - first < GZ_STREAM_BATCH ? n - first : GZ_STREAM_BATCH;
    const void *y;
    double t0;
    if (gz_reader_read_values(r, first, k, meta->dtype, x, err, errlen) != 0)
      goto done;
    t0 = now();
    y = decode_get(&ds, first, k, err, errlen);
    t_dec += now() - t0;
    if (!y)
      goto done;
    gzc_figures_add(&sums, meta->dtype, x, y, k, meta->has_fill, meta->fill_value);
  }
  gzc_figures_finish(&sums, &fig);
  ret = verify_report(o, in, out, n, meta->dtype, file_size, t_comp, t_dec, eb, &fig, err,
                      errlen);
done:
  if (f)
    fclose(f);
  free(ds.cbuf);
  free(ds.vbuf);
  free(x);
  gz_stream_reader_close(rd);
  gz_meta_free(&m);
  return ret;
}

/* Decompress one archive. Its chunks are read and decoded a few at a time
 * as the writer asks for the values (memory: a few chunks, whatever the
 * output format). */
static int decompress_one(const compress_opts_t *o, int i, char *err, size_t errlen) {
  const char *in = o->inputs[i];
  char out[4096], suffix[8];
  gz_meta_t meta;
  gz_stream_info_t info;
  gz_stream_reader_t *rd = NULL;
  gz_format_t fmt;
  FILE *f = NULL;
  int ret = -1;

  memset(&meta, 0, sizeof meta);
  snprintf(suffix, sizeof suffix, ".%s", o->format ? o->format : "nc");
  if (output_path(o, i, suffix, out, sizeof out) != 0) {
    snprintf(err, errlen, "%s: output path too long", in);
    return -1;
  }
  fmt = format_of(o, out);
  if (fmt == GZ_FMT_UNKNOWN) {
    snprintf(err, errlen,
             "%s: cannot tell the output format from its extension "
             "(use .nc, .h5, .raw, .sgy or .rsf, or --format)",
             out);
    return -1;
  }
  if (gz_io_check_target(out, o->force, err, errlen) != 0)
    return -1;
  f = fopen(in, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", in, strerror(errno));
    return -1;
  }
  if (open_archive(f, in, &meta, &rd, &info, err, errlen) != 0)
    goto fail;
  {
    decode_source_t ds = {.f = f, .in = in, .rd = rd, .info = &info};
    gz_io_source_t src = {NULL, decode_get, &ds};
    int wrc;
    ds.k = batch_chunks(info.chunk_len, info.chunk_count, 1);
    wrc = gz_io_write_from(out, fmt, &meta, &src, o->force, err, errlen);
    free(ds.cbuf);
    free(ds.vbuf);
    if (wrc != 0)
      goto fail;
  }
  if (!o->quiet) {
    const gz_attr_t *mode = gz_meta_find_attr(&meta, "gzstack_eb_mode");
    const gz_attr_t *target = gz_meta_find_attr(&meta, "gzstack_eb_target");
    printf("%s -> %s: %zu values, max error %g", in, out, info.count, info.abs_bound);
    if (mode && mode->is_text && target && !target->is_text && target->count == 1)
      printf(" (recorded: --eb-mode %s -e %g)", mode->text, target->values[0]);
    printf("\n");
  }
  ret = 0;
fail:
  if (f)
    fclose(f);
  gz_stream_reader_close(rd);
  gz_meta_free(&meta);
  return ret;
}

void gz_compress_print_help(FILE *out) {
  fprintf(
      out,
      "gzstack compress - reduce datasets with the error-bounded codec\n"
      "\n"
      "  mpirun -np N gzstack compress -i IN... [-o OUT.gzc|DIR] -e E [options]\n"
      "  mpirun -np N gzstack decompress -i IN.gzc... [-o OUT.nc|.h5|.raw|DIR] "
      "[options]\n"
      "\n"
      "Input (compress):\n"
      "  -i, --input FILE...     netCDF, HDF5 or raw files; input i goes to rank i mod "
      "N\n"
      "  --var NAME              netCDF variable or HDF5 dataset path (--dataset is the\n"
      "                          same); default: the only data variable\n"
      "  --dims AxBxC            raw: shape of the file, or of one record (the record\n"
      "                          count then follows from the file size)\n"
      "  --dtype f32|f64         raw: element type (default f32)\n"
      "  --endian little|big     raw: byte order (default little)\n"
      "Bound:\n"
      "  -e, --error-bound E     every value within E (default mode abs); 0 = lossless\n"
      "  --eb-mode MODE          how E is read; every mode becomes a strict absolute\n"
      "                          bound (printed by --verify; mode, E and bound are\n"
      "                          recorded in the output, see docs/codec.md):\n"
      "                            abs   every value within E (default)\n"
      "                            rel   within E x the range of the valid values\n"
      "                                  (not NaN/Inf, not _FillValue/missing_value)\n"
      "                            psnr  PSNR >= E dB: bound range x 10^(-E/20)\n"
      "                            norm  L2 norm of the error <= E: bound E/sqrt(N)\n"
      "Output:\n"
      "  -o, --output PATH       file for one input, an existing directory for many;\n"
      "                          default: beside the input (+.gzc). compress -o X.nc\n"
      "                          or X.h5: netCDF-4 / HDF5 through the gzstack HDF5\n"
      "                          filter (readers need HDF5_PLUGIN_PATH=build/h5z)\n"
      "  --format nc|h5|raw|sgy|rsf  decompress: output format when -o is a directory\n"
      "                          (default: from -o's extension, else nc)\n"
      "  --force                 overwrite existing outputs\n"
      "  --verify                read the written output back (.gzc: a few chunks at\n"
      "                          a time) before naming it, compare it with the input,\n"
      "                          print ratio, bit rate, GB/s, max abs/rel error, PSNR,\n"
      "                          NRMSE, L2 norm; fail if the bound or target broke\n"
      "  --fast                  compress: the speed-oriented codec (stream format 3,\n"
      "                          several GB/s per core, lower ratio; .gzc output only)\n"
      "  --threads N             OpenMP threads over chunks (default 1)\n"
      "  --chunk N               values per chunk, a multiple of 32 (default %u)\n"
      "  -q, --quiet             no per-file lines\n"
      "\n"
      "Examples:\n"
      "  gzstack compress -i TREFHT.nc --var TREFHT -e 1e-2 -o t.gzc --verify\n"
      "  gzstack compress -i shots.raw --dims 96x2048 --dtype f32 -e 1e-4 --eb-mode rel\n"
      "  gzstack decompress -i t.gzc -o t.nc && ncdump -h t.nc\n"
      "  mpirun -np 4 gzstack compress -i data/*.nc --var sst -e 0.01 -o reduced/\n",
      GZ_CHUNK_DEFAULT);
}

/* The command line: one named entry per option; `table` views the same
 * pointers as the array argtable wants (arg_parse, arg_freetable). */
typedef union compress_args {
  struct {
    struct arg_file *input, *output;
    struct arg_dbl *eb;
    struct arg_str *eb_mode, *var, *dims, *dtype, *endian, *format;
    struct arg_lit *verify, *force, *quiet, *fast;
    struct arg_int *threads, *chunk;
    struct arg_lit *help;
    struct arg_end *end;
  } a;
  void *table[17];
} compress_args_t;

#define NARGS ((int)(sizeof(((compress_args_t *)0)->table) / sizeof(void *)))
_Static_assert(sizeof(((compress_args_t *)0)->a) == sizeof(((compress_args_t *)0)->table),
               "one table entry per option");

/* Build the argument table (freed by the caller with arg_freetable). */
static void make_table(compress_args_t *t) {
  t->a.input = arg_filen("i", "input", "FILE", 1, 4096, "inputs");
  t->a.output = arg_file0("o", "output", "PATH", "output");
  t->a.eb = arg_dbl0("e", "error-bound", "E", "bound");
  t->a.eb_mode = arg_str0(NULL, "eb-mode", "abs|rel|psnr|norm", "bound mode");
  t->a.var = arg_str0(NULL, "var,dataset", "NAME", "variable");
  t->a.dims = arg_str0(NULL, "dims", "AxBxC", "raw shape");
  t->a.dtype = arg_str0(NULL, "dtype", "f32|f64", "raw type");
  t->a.endian = arg_str0(NULL, "endian", "little|big", "raw byte order");
  t->a.format = arg_str0(NULL, "format", "nc|h5|raw|sgy|rsf", "output format");
  t->a.verify = arg_lit0(NULL, "verify", "verify");
  t->a.force = arg_lit0(NULL, "force", "overwrite");
  t->a.quiet = arg_lit0("q", "quiet", "quiet");
  t->a.fast = arg_lit0(NULL, "fast", "speed-oriented codec");
  t->a.threads = arg_int0(NULL, "threads", "N", "threads");
  t->a.chunk = arg_int0(NULL, "chunk", "N", "chunk length");
  t->a.help = arg_lit0("h", "help", "help");
  t->a.end = arg_end(20);
}

static const char *opt_str(const struct arg_str *s) {
  return s->count ? s->sval[0] : NULL;
}

static int one_of(const char *v, const char *a, const char *b, const char *c) {
  return !v || !strcmp(v, a) || !strcmp(v, b) || (c && !strcmp(v, c));
}

/* Fill o from a parsed table: 1 = help asked, -1 = error (err set), 0 = ok.
 * The strings stay owned by the table. */
static int read_table(const compress_args_t *t, int nerr, const char *prog,
                      int decompress, compress_opts_t *o, char *err, size_t errlen) {
  struct arg_file *in = t->a.input, *out = t->a.output;
  struct arg_dbl *eb = t->a.eb;
  struct arg_int *threads = t->a.threads, *chunk = t->a.chunk;
  const char *mode = opt_str(t->a.eb_mode), *dims = opt_str(t->a.dims);
  const char *dtype = opt_str(t->a.dtype), *endian = opt_str(t->a.endian);

  memset(o, 0, sizeof *o);
  if (t->a.help->count)
    return 1;
  if (nerr) {
    FILE *mem = fmemopen(err, errlen, "w");
    if (mem) {
      arg_print_errors(mem, t->a.end, prog);
      fclose(mem);
    }
    return -1;
  }
  o->ninputs = in->count;
  o->inputs = in->filename;
  o->output = out->count ? out->filename[0] : NULL;
  o->var = opt_str(t->a.var);
  o->format = opt_str(t->a.format);
  o->verify = t->a.verify->count;
  o->force = t->a.force->count;
  o->quiet = t->a.quiet->count;
  o->fast = t->a.fast->count;
  o->threads = threads->count ? threads->ival[0] : 1;
  o->chunk = chunk->count ? (uint32_t)chunk->ival[0] : 0;
  o->eb = eb->count ? eb->dval[0] : 0;
  o->eb_mode = GZC_EB_ABS;
  o->raw.dtype = dtype && !strcmp(dtype, "f64") ? GZ_FLOAT64 : GZ_FLOAT32;
  o->raw.big_endian = endian && !strcmp(endian, "big");
  if (!decompress && !eb->count)
    snprintf(err, errlen, "-e/--error-bound is required");
  else if (gzc_eb_mode_parse(mode, &o->eb_mode) != 0)
    snprintf(err, errlen, "--eb-mode %s: use abs, rel, psnr or norm", mode);
  else if (!decompress && gzc_eb_check(o->eb_mode, o->eb))
    snprintf(err, errlen, "-e %g: the error bound %s (--eb-mode %s)", o->eb,
             gzc_eb_check(o->eb_mode, o->eb), gzc_eb_mode_name(o->eb_mode));
  else if (!one_of(dtype, "f32", "f64", NULL))
    snprintf(err, errlen, "--dtype %s: use f32 or f64", dtype);
  else if (!one_of(endian, "little", "big", NULL))
    snprintf(err, errlen, "--endian %s: use little or big", endian);
  else if (o->format && format_of(o, "") == GZ_FMT_UNKNOWN)
    snprintf(err, errlen, "--format %s: use nc, h5, raw, sgy or rsf", o->format);
  else if (dims && gz_parse_dims(dims, &o->raw) != 0)
    snprintf(err, errlen, "--dims %s: expected positive sizes like 96x2048", dims);
  else if (o->fast && decompress)
    snprintf(err, errlen, "--fast: a compress option (decompress reads either format)");
  else if (o->fast && (gz_io_format_from_path(o->output) == GZ_FMT_NETCDF ||
                       gz_io_format_from_path(o->output) == GZ_FMT_HDF5))
    snprintf(err, errlen,
             "-o %s: --fast writes .gzc archives only (the netCDF/HDF5 filter uses "
             "the archive codec)",
             o->output);
  else if (o->threads < 1)
    snprintf(err, errlen, "--threads %d: must be at least 1", o->threads);
  else if (chunk->count && (chunk->ival[0] < 32 || chunk->ival[0] % 32))
    snprintf(err, errlen, "--chunk %d: must be a positive multiple of 32",
             chunk->ival[0]);
  else if (o->ninputs > 1 && o->output && !is_directory(o->output))
    snprintf(err, errlen, "-o %s: with %d inputs, -o must be an existing directory",
             o->output, o->ninputs);
  else {
    o->have_raw = dims != NULL;
    return 0;
  }
  return -1;
}

int gz_cmd_compress(int argc, char **argv, MPI_Comm comm) {
  compress_args_t args;
  compress_opts_t o;
  char err[ERRLEN] = "";
  int decompress = !strcmp(argv[0], "decompress"), rank, size, rc, failed = 0, any, nargc;
  char **nargv = gz_split_inputs(argc, argv, &nargc);

  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  make_table(&args);
  if (!nargv || arg_nullcheck(args.table) != 0) {
    if (rank == 0)
      fprintf(stderr, "gzstack %s: out of memory\n", argv[0]);
    arg_freetable(args.table, NARGS);
    free(nargv);
    return 1;
  }
  rc = read_table(&args, arg_parse(nargc, nargv, args.table), argv[0], decompress, &o,
                  err, sizeof err);
  if (rc != 0) {
    if (rank == 0 && rc > 0)
      gz_compress_print_help(stdout);
    else if (rank == 0)
      fprintf(stderr, "gzstack %s: %s\n(see gzstack %s --help)\n", argv[0], err, argv[0]);
    arg_freetable(args.table, NARGS);
    free(nargv);
    return rc > 0 ? 0 : 2;
  }
  for (int i = rank; i < o.ninputs; i += size) {
    err[0] = '\0';
    if ((decompress ? decompress_one(&o, i, err, sizeof err)
                    : compress_one(&o, i, err, sizeof err)) != 0) {
      fprintf(stderr, "gzstack %s: %s\n", argv[0], err);
      failed = 1;
    }
  }
  fflush(stdout);
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  arg_freetable(args.table, NARGS);
  free(nargv);
  return any ? 1 : 0;
}
