/*
 * stack_pipeline.c - the numerical part of `gzstack stack`.
 *
 * 1. Scan: file i is opened by rank i mod P (independently) for its shape,
 *    type, record count and fill value; the table goes to every rank and
 *    every snapshot must have the first file's shape and type.
 * 2. Read, one snapshot at a time (or one slab of it: --slab-mb), into a
 *    double accumulator (sum, or max/min) and, as soon as some value is
 *    missing, per-point uint32 counts of the valid samples. Missing: NaN,
 *    +-Inf, or equal to the file's _FillValue / missing_value.
 *      parallel: rank r stacks the contiguous block of snapshots
 *        [N r / P, N (r+1) / P). An HDF5 file that every busy rank needs is
 *        opened collectively (MPI-IO) and each rank reads its own records
 *        (hyperslabs); other files are opened by the ranks that need them.
 *      root: rank 0 reads; round k sends snapshot kP + q to rank q with
 *        gz_scatter (compressed, one quantization per value) and the
 *        missing-value mask as packed bits (MPI_Scatter).
 * 3. Reduce: the any-mask flag and the value range are agreed; counts are
 *    summed exactly (MPI_Allreduce of uint32) when a mask exists, else every
 *    point has N samples. The partial sums go through gz_allreduce (double)
 *    in slabs. Budgets (e_abs = e, or e times the range of the valid input
 *    values for --eb-mode rel):
 *      strict mean: error_bound = e_abs * c_min, c_min the smallest positive
 *        per-point count: the sum is within e_abs c_min, the mean at a point
 *        with count c >= c_min within e_abs.
 *      strict sum: e_abs (the library uses e_abs / P per rank).
 *      max / min: e_abs (one quantization). Points without a local sample
 *        take the global minimum (max) / maximum (min) of the valid values,
 *        which cannot win the reduction.
 *      per-message: e_abs per quantization; the implied bound comes from the
 *        library's report (result_bound).
 *      root read splits e_abs: half to the scatter (its error on the mean of
 *        valid samples is at most its per-value bound; for a sum, at most N
 *        times it, so the scatter gets e_abs / 2N), half to the allreduce.
 *        The scatter moves doubles converted from the input's values, so its
 *        only rounding is the double reconstruction; its bytes_raw is counted
 *        at the input's element size. --eb-mode rel with --read root makes
 *        rank 0 read everything twice (the range first).
 *      -e 0 or a zero range: the plain MPI allreduce (exact up to double
 *        rounding).
 *    Claimed bound = stage bound + rounding of the double reductions + half
 *    an ulp of float32 at the largest result when the output is float32.
 *    --device gpu: when every rank has a CUDA device (picked by node-local
 *    rank), each slab is copied to the GPU and reduced by the device-centric
 *    allreduce (same codes, same result bytes); otherwise the CPU path, with
 *    a note (cmd_stack.c). Reading and accumulation stay on the CPU.
 * 4. Reference (--verify): MPI_Reduce of the same double partials (parallel)
 *    or rank 0's own double accumulation of the original values (root).
 */
#define _POSIX_C_SOURCE 200809L /* glob, strtok_r, gmtime_r, isatty, access */
#include "stack_internal.h"

#include "gz_device.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPI_CHUNK (1 << 28) /* elements per MPI call */

static size_t dsize(gz_dtype_t t) { return t == GZ_FLOAT32 ? 4 : 8; }

static const char *dtype_name(int t) { return t == GZ_FLOAT32 ? "f32" : "f64"; }

static void shape_text(const gzs_file_t *f, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 1; d < f->ndims && n + 24 < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%llu", d > 1 ? "x" : "",
                          (unsigned long long)f->dims[d]);
  if (f->ndims <= 1)
    snprintf(buf, len, "scalar");
  snprintf(buf + strlen(buf), len - strlen(buf), " %s", dtype_name(f->dtype));
}

static size_t slab_values(const gzs_opts_t *o) {
  double v = o->slab_mb * 1048576.0 / 8.0;
  return v < 1024 ? 1024 : v > 1e15 ? (size_t)1e15 : (size_t)v;
}

/* ---- scan ---------------------------------------------------------------- */

static int open_input(const gzs_opts_t *o, const char *path, MPI_Comm comm,
                      gz_reader_t **rd, char *err, size_t errlen) {
  gz_raw_opts_t raw = o->raw;
  if (o->have_raw) {
    memmove(raw.dims + 1, o->raw.dims, sizeof(size_t) * (size_t)o->raw.ndims);
    raw.dims[0] = 0; /* the snapshot count follows from the file size */
    raw.ndims = o->raw.ndims + 1;
  }
  return gz_reader_open(path, o->var, o->have_raw ? &raw : NULL, comm, rd, err, errlen);
}

int gzs_scan(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen) {
  int nf = o->ninputs, P = r->size, failed = 0;
  const int W = 4 + GZ_IO_MAXDIMS; /* uint64 words per file */
  uint64_t *words = calloc((size_t)nf * (size_t)W + 1, sizeof(uint64_t));
  double *fills = calloc((size_t)nf + 1, sizeof(double));

  r->files = calloc((size_t)nf + 1, sizeof(gzs_file_t));
  r->nfiles = nf;
  if (!words || !fills || !r->files) {
    snprintf(err, errlen, "out of memory for %d inputs", nf);
    failed = 1;
  }
  for (int i = r->rank; i < nf && !failed; i += P) {
    gz_reader_t *rd = NULL;
    const gz_meta_t *m;
    uint64_t *w = words + (size_t)i * (size_t)W;
    if (open_input(o, o->inputs[i], MPI_COMM_SELF, &rd, err, errlen) != 0) {
      failed = 1;
      break;
    }
    m = gz_reader_meta(rd);
    if (m->ndims < 1) {
      snprintf(
          err, errlen,
          "%s: variable %s is a scalar; snapshots are taken along its first dimension",
          o->inputs[i], m->var);
      failed = 1;
    } else if (m->dtype != GZ_FLOAT32 && m->dtype != GZ_FLOAT64) {
      snprintf(err, errlen, "%s: variable %s has an unsupported type", o->inputs[i],
               m->var);
      failed = 1;
    } else {
      w[0] = gz_reader_records(rd);
      w[1] = (uint64_t)gz_reader_format(rd);
      w[2] = (uint64_t)m->dtype;
      w[3] = (uint64_t)m->ndims | ((uint64_t)(m->has_fill != 0) << 32);
      for (int d = 0; d < m->ndims; d++)
        w[4 + d] = m->dims[d];
      fills[i] = m->has_fill ? m->fill_value : 0.0;
      if (i == 0 && gz_meta_copy(&r->meta0, m) == 0)
        r->has_meta0 = 1;
      else if (i == 0) {
        snprintf(err, errlen, "out of memory");
        failed = 1;
      }
    }
    gz_reader_close(rd);
  }
  if (gzs_agree(comm, failed, err)) {
    free(words);
    free(fills);
    return -1;
  }
  MPI_Allreduce(MPI_IN_PLACE, words, nf * W, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, fills, nf, MPI_DOUBLE, MPI_SUM, comm);
  r->nsnap = 0;
  for (int i = 0; i < nf; i++) {
    gzs_file_t *f = &r->files[i];
    const uint64_t *w = words + (size_t)i * (size_t)W;
    f->records = w[0];
    f->format = (int)w[1];
    f->dtype = (int)w[2];
    f->ndims = (int)(w[3] & 0xffffffffu);
    f->has_fill = (int)(w[3] >> 32);
    for (int d = 0; d < f->ndims; d++)
      f->dims[d] = w[4 + d];
    f->fill = fills[i];
    f->first = r->nsnap;
    r->nsnap += f->records;
  }
  free(words);
  free(fills);

  /* every snapshot has the first file's shape and type */
  for (int i = 1; i < nf && !failed; i++) {
    const gzs_file_t *a = &r->files[0], *b = &r->files[i];
    int same = a->ndims == b->ndims && a->dtype == b->dtype;
    for (int d = 1; same && d < a->ndims; d++)
      same = a->dims[d] == b->dims[d];
    if (!same) {
      char sa[256], sb[256];
      shape_text(a, sa, sizeof sa);
      shape_text(b, sb, sizeof sb);
      snprintf(err, errlen,
               "%s: snapshot shape %s differs from %s in %s (every snapshot must have "
               "the same shape and type)",
               o->inputs[i], sb, sa, o->inputs[0]);
      failed = 1;
    }
  }
  if (!failed && r->nsnap == 0) {
    snprintf(err, errlen, "the inputs hold no snapshot (first dimension of length 0)");
    failed = 1;
  }
  if (!failed) {
    const gzs_file_t *f = &r->files[0];
    r->dtype = (gz_dtype_t)f->dtype;
    r->snap_ndims = f->ndims - 1;
    r->npoints = 1;
    for (int d = 1; d < f->ndims; d++) {
      r->snap_dims[d - 1] = (size_t)f->dims[d];
      if (f->dims[d] && r->npoints > SIZE_MAX / 16 / f->dims[d])
        failed = 1;
      r->npoints *= (size_t)f->dims[d];
    }
    if (failed || r->npoints == 0)
      snprintf(err, errlen, "%s: snapshots of %zu values cannot be stacked", o->inputs[0],
               r->npoints);
    failed = failed || r->npoints == 0;
    if (r->nsnap > UINT32_MAX) {
      snprintf(err, errlen, "%llu snapshots: at most %u can be stacked",
               (unsigned long long)r->nsnap, UINT32_MAX);
      failed = 1;
    }
  }
  /* every rank computed the same verdict; rank 0 prints it */
  if (failed) {
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    return -1;
  }
  if (o->read_root) {
    r->my_first = 0;
    r->my_count = r->nsnap / (uint64_t)P + ((uint64_t)r->rank < r->nsnap % (uint64_t)P);
  } else {
    r->my_first = r->nsnap * (uint64_t)r->rank / (uint64_t)P;
    r->my_count = r->nsnap * (uint64_t)(r->rank + 1) / (uint64_t)P - r->my_first;
  }
  return 0;
}

/* ---- accumulation -------------------------------------------------------- */

typedef struct acc_state {
  gzs_op_t op;
  double *acc;
  uint32_t **counts;
  size_t npoints;
  uint64_t done; /* snapshots fully accumulated before the current one */
  double lo, hi;
  int failed;
} acc_state_t;

/* The first missing value, at point p of the current snapshot: counts start
 * at the snapshots already done, plus the current one before p. */
static int start_counts(acc_state_t *s, size_t p) {
  uint32_t *c = malloc(sizeof(uint32_t) * s->npoints + 1);
  if (!c)
    return -1;
  for (size_t i = 0; i < s->npoints; i++)
    c[i] = (uint32_t)s->done + (i < p);
  *s->counts = c;
  return 0;
}

/* x: n values of points [off, off+n) of one snapshot. Missing values are
 * non-finite, equal to fill (has_fill), or flagged in bits (may be NULL). */
static int accumulate(acc_state_t *s, const double *x, size_t off, size_t n, int has_fill,
                      double fill, const unsigned char *bits) {
  double *acc = s->acc + off, lo = s->lo, hi = s->hi;
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    int valid = isfinite(v) && !(has_fill && v == fill) &&
                !(bits && (bits[i >> 3] >> (i & 7) & 1));
    if (!valid) {
      if (!*s->counts && start_counts(s, off + i) != 0)
        return -1;
      continue;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    switch (s->op) {
    case GZS_OP_MEAN:
    case GZS_OP_SUM:
      acc[i] += v;
      break;
    case GZS_OP_MAX:
      if (!(acc[i] >= v))
        acc[i] = v;
      break;
    case GZS_OP_MIN:
      if (!(acc[i] <= v))
        acc[i] = v;
      break;
    }
    if (*s->counts)
      (*s->counts)[off + i]++;
  }
  s->lo = lo;
  s->hi = hi;
  return 0;
}

static double *alloc_acc(gzs_op_t op, size_t n) {
  double *a = op == GZS_OP_MEAN || op == GZS_OP_SUM ? calloc(n + 1, sizeof(double))
                                                    : malloc((n + 1) * sizeof(double));
  if (a && !(op == GZS_OP_MEAN || op == GZS_OP_SUM))
    for (size_t i = 0; i < n; i++)
      a[i] = NAN; /* no sample yet */
  return a;
}

/* Global snapshot g -> file and record. */
static int locate(const gzs_run_t *r, uint64_t g, uint64_t *rec) {
  int lo = 0, hi = r->nfiles - 1;
  while (lo < hi) { /* last file with first <= g and records > 0 */
    int mid = (lo + hi + 1) / 2;
    if (r->files[mid].first <= g)
      lo = mid;
    else
      hi = mid - 1;
  }
  while (lo > 0 && r->files[lo].records == 0)
    lo--;
  while (lo < r->nfiles - 1 && g >= r->files[lo].first + r->files[lo].records)
    lo++;
  *rec = g - r->files[lo].first;
  return lo;
}

/* Read part [off, off+n) of record rec. */
static int read_part(gz_reader_t *rd, uint64_t rec, size_t off, size_t n, size_t npoints,
                     double *dst, char *err, size_t errlen) {
  if (off == 0 && n == npoints)
    return gz_reader_read(rd, (size_t)rec, 1, GZ_FLOAT64, dst, err, errlen);
  return gz_reader_read_part(rd, (size_t)rec, off, n, GZ_FLOAT64, dst, err, errlen);
}

/* ---- parallel reading ---------------------------------------------------- */

/* Does every rank that stacks something need file f? */
static int all_busy_need(const gzs_run_t *r, int f) {
  uint64_t a = r->files[f].first, b = a + r->files[f].records;
  int any = 0;
  for (int q = 0; q < r->size; q++) {
    uint64_t lo = r->nsnap * (uint64_t)q / (uint64_t)r->size;
    uint64_t hi = r->nsnap * (uint64_t)(q + 1) / (uint64_t)r->size;
    if (lo == hi)
      continue;
    if (hi <= a || lo >= b)
      return 0;
    any = 1;
  }
  return any;
}

static int read_parallel(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                         size_t errlen) {
  size_t slab = slab_values(o), M = r->npoints, blen = M < slab ? M : slab;
  double *buf = malloc(sizeof(double) * blen + 1);
  acc_state_t s = {o->op, NULL, &r->counts, M, 0, INFINITY, -INFINITY, 0};
  uint64_t mine_lo = r->my_first, mine_hi = r->my_first + r->my_count;
  int failed = 0;

  r->acc = s.acc = alloc_acc(o->op, M);
  if (!buf || !s.acc) {
    snprintf(err, errlen, "out of memory for snapshots of %zu values", M);
    failed = 1;
  }
  for (int f = 0; f < r->nfiles; f++) {
    const gzs_file_t *fi = &r->files[f];
    uint64_t a = fi->first > mine_lo ? fi->first : mine_lo;
    uint64_t b = fi->first + fi->records < mine_hi ? fi->first + fi->records : mine_hi;
    int coll = fi->format == GZ_FMT_HDF5 && all_busy_need(r, f);
    gz_reader_t *rd = NULL;
    if (!coll && (a >= b || failed))
      continue;
    if (open_input(o, o->inputs[f], coll ? comm : MPI_COMM_SELF, &rd, failed ? NULL : err,
                   failed ? 0 : errlen) != 0) {
      failed = 1;
      continue;
    }
    for (uint64_t g = a; g < b && !failed; g++) {
      for (size_t off = 0; off < M && !failed; off += blen) {
        size_t n = M - off < blen ? M - off : blen;
        double t0 = MPI_Wtime();
        if (read_part(rd, g - fi->first, off, n, M, buf, err, errlen) != 0) {
          failed = 1;
          break;
        }
        r->t.read += MPI_Wtime() - t0;
        if (accumulate(&s, buf, off, n, fi->has_fill, fi->fill, NULL) != 0) {
          snprintf(err, errlen, "out of memory for the per-point counts");
          failed = 1;
        }
      }
      s.done++;
      gzs_progress(o, r, 0,
                   "reading: %llu/%llu snapshots on rank 0 (%llu in all on %d ranks)",
                   (unsigned long long)s.done, (unsigned long long)r->my_count,
                   (unsigned long long)r->nsnap, r->size);
    }
    gz_reader_close(rd);
  }
  r->lo = s.lo;
  r->hi = s.hi;
  free(buf);
  return gzs_agree(comm, failed, err) ? -1 : 0;
}

/* ---- root reading + compressed scatter ----------------------------------- */

/* Rank 0: the reader of file f, reusing the open one. */
static gz_reader_t *reader_for(const gzs_opts_t *o, gz_reader_t **cur, int *cur_f, int f,
                               char *err, size_t errlen) {
  if (*cur && *cur_f == f)
    return *cur;
  gz_reader_close(*cur);
  *cur = NULL;
  *cur_f = -1;
  if (open_input(o, o->inputs[f], MPI_COMM_SELF, cur, err, errlen) != 0)
    return NULL;
  *cur_f = f;
  return *cur;
}

/* Rank 0 with --eb-mode rel: the range of the valid values, read first. */
static int root_range(const gzs_opts_t *o, gzs_run_t *r, double *lo, double *hi,
                      char *err, size_t errlen) {
  size_t slab = slab_values(o), M = r->npoints, blen = M < slab ? M : slab;
  double *buf = malloc(sizeof(double) * blen + 1);
  gz_reader_t *cur = NULL;
  int cur_f = -1, rc = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  if (!buf) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint64_t g = 0; g < r->nsnap && rc == 0; g++) {
    uint64_t rec;
    int f = locate(r, g, &rec);
    gz_reader_t *rd = reader_for(o, &cur, &cur_f, f, err, errlen);
    if (!rd) {
      rc = -1;
      break;
    }
    for (size_t off = 0; off < M && rc == 0; off += blen) {
      size_t n = M - off < blen ? M - off : blen;
      double t0 = MPI_Wtime();
      if (read_part(rd, rec, off, n, M, buf, err, errlen) != 0) {
        rc = -1;
        break;
      }
      r->t.read += MPI_Wtime() - t0;
      for (size_t i = 0; i < n; i++) {
        double v = buf[i];
        if (isfinite(v) && !(r->files[f].has_fill && v == r->files[f].fill)) {
          *lo = v < *lo ? v : *lo;
          *hi = v > *hi ? v : *hi;
        }
      }
    }
  }
  gz_reader_close(cur);
  free(buf);
  return rc;
}

static void report_add(gz_report_t *sum, const gz_report_t *one, int first) {
  if (first) {
    *sum = *one;
    return;
  }
  sum->compressed |= one->compressed;
  if (one->quant_bound > sum->quant_bound)
    sum->quant_bound = one->quant_bound;
  if (one->result_bound > sum->result_bound)
    sum->result_bound = one->result_bound;
  sum->bytes_raw += one->bytes_raw;
  sum->bytes_sent += one->bytes_sent;
  sum->seconds += one->seconds;
  sum->seconds_codec += one->seconds_codec;
  sum->predicted_seconds += one->predicted_seconds;
  sum->measured_seconds += one->measured_seconds;
}

/* Bounds of the two stages with --read root (see the header comment). */
static void root_budget(const gzs_opts_t *o, gzs_run_t *r) {
  if (o->bound == GZ_BOUND_PER_MESSAGE) {
    r->e_scatter = r->e_abs;
    r->e_allreduce = r->e_abs;
  } else {
    r->e_scatter = o->op == GZS_OP_SUM ? r->e_abs / 2 / (double)r->nsnap : r->e_abs / 2;
    r->e_allreduce = r->e_abs / 2;
  }
}

/* Would the scatter of n doubles go uncompressed? Then the snapshots move
 * exactly, in their own type, with MPI_Scatter (half the bytes of doubles
 * for float32 inputs). The library's choice is read from gz_explain's
 * "...: ALGO (" (same answer on every rank); anything unexpected keeps the
 * compressed scatter. */
static int scatter_is_mpi(gz_ctx_t ctx, size_t n, const gzs_opts_t *o,
                          const gzs_run_t *r) {
  char buf[512];
  const char *p;
  if (o->algo == GZ_ALGO_MPI || !(r->e_scatter > 0))
    return 1;
  if (gz_explain(ctx, "scatter", n, GZ_FLOAT64, buf, sizeof buf) != GZ_OK)
    return 0;
  p = strstr(buf, " ranks: ");
  return p && !strncmp(p + 8, "mpi (", 5);
}

/* Exact scatter in the input's type. conv (float32 inputs): room for
 * (P + 1) n floats on rank 0, n elsewhere. */
static int plain_scatter(const gzs_run_t *r, const double *send, double *recv,
                         float *conv, size_t n, MPI_Comm comm, gz_report_t *rep) {
  int P = r->size, rc;
  memset(rep, 0, sizeof *rep);
  rep->algo = GZ_ALGO_MPI;
  snprintf(rep->reason, sizeof rep->reason,
           "uncompressed MPI_Scatter in the input's type");
  if (r->dtype == GZ_FLOAT32) {
    float *rf = r->rank == 0 ? conv + (size_t)P * n : conv;
    if (r->rank == 0)
      for (size_t i = 0; i < n * (size_t)P; i++)
        conv[i] = (float)send[i]; /* exact: the values were read as float */
    rc = MPI_Scatter(conv, (int)n, MPI_FLOAT, rf, (int)n, MPI_FLOAT, 0, comm);
    for (size_t i = 0; i < n; i++)
      recv[i] = rf[i];
  } else {
    rc = MPI_Scatter(send, (int)n, MPI_DOUBLE, recv, (int)n, MPI_DOUBLE, 0, comm);
  }
  if (r->rank == 0)
    rep->bytes_raw = rep->bytes_sent = (uint64_t)(P - 1) * n * dsize(r->dtype);
  return rc == MPI_SUCCESS ? 0 : -1;
}

static int read_root(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                     size_t errlen) {
  int P = r->size, rank = r->rank, failed = 0, cur_f = -1;
  size_t slab = slab_values(o), M = r->npoints, blen, nbytes;
  double *send = NULL, *recv = NULL;
  float *conv = NULL;
  unsigned char *bits = NULL, *mybits = NULL;
  gz_reader_t *cur = NULL;
  gz_ctx_t ctx = NULL;
  gz_config_t cfg = GZ_CONFIG_INIT;
  acc_state_t s = {o->op, NULL, &r->counts, M, 0, INFINITY, -INFINITY, 0};
  acc_state_t ex = {o->op, NULL, NULL, M, 0, INFINITY, -INFINITY, 0};
  uint32_t *ex_counts = NULL; /* rank 0's own counts (the global ones are used) */
  uint64_t rounds = (r->nsnap + (uint64_t)P - 1) / (uint64_t)P;
  gz_result_t grc;
  double range[2] = {0, 0};
  int first_report = 1;

  /* slabs: rank 0 holds P of them */
  blen = slab / (size_t)P;
  blen = blen < 1024 ? 1024 : blen;
  blen = blen > M ? M : blen;
  blen = blen > MPI_CHUNK ? MPI_CHUNK : blen;
  nbytes = (blen + 7) / 8;
  ex.counts = &ex_counts;

  /* the absolute bound, first (rel: from rank 0's pre-pass) */
  if (o->eb_mode == GZ_EB_REL && o->e > 0) {
    if (rank == 0 && root_range(o, r, &range[0], &range[1], err, errlen) != 0)
      failed = 1;
    if (gzs_agree(comm, failed, err))
      return -1;
    MPI_Bcast(range, 2, MPI_DOUBLE, 0, comm);
    r->e_abs = range[1] > range[0] ? o->e * (range[1] - range[0]) : 0.0;
  } else {
    r->e_abs = o->e;
  }
  root_budget(o, r);

  r->acc = s.acc = alloc_acc(o->op, M);
  recv = malloc(sizeof(double) * blen + 1);
  mybits = malloc(nbytes + 1);
  if (r->dtype == GZ_FLOAT32)
    conv = malloc(sizeof(float) * blen * (size_t)(rank == 0 ? P + 1 : 1));
  if (rank == 0) {
    send = malloc(sizeof(double) * blen * (size_t)P + 1);
    bits = malloc(nbytes * (size_t)P + 1);
    if (o->verify)
      r->exact = ex.acc = alloc_acc(o->op, M);
  }
  if (!r->acc || !recv || !mybits || (r->dtype == GZ_FLOAT32 && !conv) ||
      (rank == 0 && (!send || !bits)) || (rank == 0 && o->verify && !ex.acc)) {
    snprintf(err, errlen, "out of memory for snapshots of %zu values", M);
    failed = 1;
  }
  if (gzs_agree(comm, failed, err)) {
    failed = 1;
    goto fail;
  }

  cfg.error_bound = r->e_scatter > 0 ? r->e_scatter : 1.0;
  cfg.bound_policy = GZ_BOUND_STRICT; /* scatter: one quantization of e_scatter */
  cfg.algo = o->algo == GZ_ALGO_MPI || !(r->e_scatter > 0) ? GZ_ALGO_MPI : GZ_ALGO_AUTO;
  if ((grc = gz_ctx_create(comm, &cfg, &ctx)) != GZ_OK) {
    snprintf(err, errlen, "compressed scatter: %s", gz_strerror(grc));
    failed = 1;
  }
  if (gzs_agree(comm, failed, err)) {
    failed = 1;
    goto fail;
  }

  for (uint64_t k = 0; k < rounds && !failed; k++) {
    int oom = 0;
    for (size_t off = 0; off < M && !failed; off += blen) {
      size_t n = M - off < blen ? M - off : blen, nb = (n + 7) / 8;
      int hdr[2] = {0, 0}; /* status, any value missing */
      uint64_t g = k * (uint64_t)P + (uint64_t)rank;
      gz_report_t rep;
      if (rank == 0) {
        memset(bits, 0, nb * (size_t)P);
        for (int q = 0; q < P && !hdr[0]; q++) {
          uint64_t gq = k * (uint64_t)P + (uint64_t)q, rec;
          double *x = send + (size_t)q * n, t0 = MPI_Wtime();
          unsigned char *bq = bits + (size_t)q * nb;
          const gzs_file_t *fi;
          gz_reader_t *rd;
          if (gq >= r->nsnap) {
            memset(x, 0, sizeof(double) * n);
            continue;
          }
          fi = &r->files[locate(r, gq, &rec)];
          if (!(rd = reader_for(o, &cur, &cur_f, (int)(fi - r->files), err, errlen)) ||
              read_part(rd, rec, off, n, M, x, err, errlen) != 0) {
            hdr[0] = 1;
            break;
          }
          r->t.read += MPI_Wtime() - t0;
          if (ex.acc && accumulate(&ex, x, off, n, fi->has_fill, fi->fill, NULL) != 0) {
            snprintf(err, errlen, "out of memory for the per-point counts");
            hdr[0] = 1;
          }
          for (size_t i = 0; i < n; i++) {
            if (!isfinite(x[i]) || (fi->has_fill && x[i] == fi->fill)) {
              x[i] = 0.0;
              bq[i >> 3] |= (unsigned char)(1u << (i & 7));
              hdr[1] = 1;
            }
          }
        }
      }
      MPI_Bcast(hdr, 2, MPI_INT, 0, comm);
      if (hdr[0]) { /* rank 0 could not read: it says why, everyone stops */
        if (rank == 0)
          fprintf(stderr, "gzstack stack: %s\n", err);
        failed = 1;
        break;
      }
      if (hdr[1]) {
        double t0 = MPI_Wtime();
        MPI_Scatter(bits, (int)nb, MPI_BYTE, mybits, (int)nb, MPI_BYTE, 0, comm);
        r->t.communicate += MPI_Wtime() - t0;
        if (rank == 0)
          r->mask_bytes += (uint64_t)nb * (uint64_t)(P - 1);
      }
      if (scatter_is_mpi(ctx, n, o, r)) {
        double t0 = MPI_Wtime();
        if (plain_scatter(r, send, recv, conv, n, comm, &rep) != 0) {
          if (rank == 0)
            fprintf(stderr, "gzstack stack: MPI_Scatter failed\n");
          failed = 1;
          break;
        }
        rep.seconds = MPI_Wtime() - t0;
      } else {
        grc = gz_scatter(ctx, send, recv, n, GZ_FLOAT64, 0, &rep);
        if (grc != GZ_OK) { /* agreed by the library */
          if (rank == 0)
            fprintf(stderr, "gzstack stack: compressed scatter failed: %s\n",
                    gz_strerror(grc));
          failed = 1;
          break;
        }
        rep.bytes_raw = rep.bytes_raw / 8 * dsize(r->dtype); /* at the input's size */
      }
      report_add(&r->sc, &rep, first_report);
      first_report = 0;
      if (g < r->nsnap &&
          accumulate(&s, recv, off, n, 0, 0.0, hdr[1] ? mybits : NULL) != 0)
        oom = 1;
    }
    if (failed)
      break;
    if (k * (uint64_t)P + (uint64_t)rank < r->nsnap)
      s.done++;
    ex.done += (uint64_t)P;
    if (gzs_agree(comm, oom, "out of memory for the per-point counts")) {
      failed = 1;
      break;
    }
    gzs_progress(o, r, 0, "reading and scattering: %llu/%llu snapshots",
                 (unsigned long long)((k + 1) * (uint64_t)P < r->nsnap
                                          ? (k + 1) * (uint64_t)P
                                          : r->nsnap),
                 (unsigned long long)r->nsnap);
  }
  r->have_scatter = 1;
  r->lo = s.lo;
  r->hi = s.hi;
fail:
  free(ex_counts);
  gz_reader_close(cur);
  gz_ctx_destroy(ctx);
  free(send);
  free(recv);
  free(conv);
  free(bits);
  free(mybits);
  return failed ? -1 : 0;
}

int gzs_read(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen) {
  return o->read_root ? read_root(o, r, comm, err, errlen)
                      : read_parallel(o, r, comm, err, errlen);
}

/* ---- the compressed allreduce -------------------------------------------- */

static gz_op_t gz_op_of(gzs_op_t op) {
  return op == GZS_OP_MAX ? GZ_OP_MAX : op == GZS_OP_MIN ? GZ_OP_MIN : GZ_OP_SUM;
}

static MPI_Op mpi_op_of(gzs_op_t op) {
  return op == GZS_OP_MAX ? MPI_MAX : op == GZS_OP_MIN ? MPI_MIN : MPI_SUM;
}

/* Mean / sum / max / min at each point from the reduced values. */
static void finish_field(const gzs_opts_t *o, const gzs_run_t *r, const double *red,
                         double *res) {
  for (size_t i = 0; i < r->npoints; i++) {
    uint32_t c = r->counts ? r->counts[i] : (uint32_t)r->nsnap;
    if (c == 0)
      res[i] = NAN;
    else if (o->op == GZS_OP_MEAN)
      res[i] = red[i] / (double)c;
    else
      res[i] = red[i];
  }
}

int gzs_reduce(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
               size_t errlen) {
  size_t M = r->npoints, slab = slab_values(o);
  double flags[3] = {-r->lo, r->hi, r->counts ? 1.0 : 0.0}, maxabs = 0;
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_result_t grc;
  int failed = 0, P = r->size;
  double t0;
  void *d_buf = NULL; /* --device gpu: the slab's input and output */

  /* agreed flags: the value range, whether any value was missing */
  MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_DOUBLE, MPI_MAX, comm);
  r->lo = -flags[0];
  r->hi = flags[1];
  r->any_mask = flags[2] > 0;
  if (r->any_mask) {
    if (!r->counts) {
      r->counts = malloc(sizeof(uint32_t) * M + 1);
      if (r->counts)
        for (size_t i = 0; i < M; i++)
          r->counts[i] = (uint32_t)r->my_count;
    }
    failed = r->counts == NULL;
    if (gzs_agree(comm, failed, "out of memory for the per-point counts"))
      return -1;
    t0 = MPI_Wtime();
    for (size_t off = 0; off < M; off += MPI_CHUNK) {
      int n = (int)(M - off < MPI_CHUNK ? M - off : MPI_CHUNK);
      MPI_Allreduce(MPI_IN_PLACE, r->counts + off, n, MPI_UINT32_T, MPI_SUM, comm);
    }
    r->t.communicate += MPI_Wtime() - t0;
    r->c_min = UINT32_MAX;
    r->c_max = 0;
    r->masked_points = 0;
    for (size_t i = 0; i < M; i++) {
      uint32_t c = r->counts[i];
      if (c == 0)
        r->masked_points++;
      else if (c < r->c_min)
        r->c_min = c;
      if (c > r->c_max)
        r->c_max = c;
    }
    if (r->c_max == 0)
      r->c_min = 0;
  } else {
    r->c_min = r->c_max = (uint32_t)r->nsnap;
    r->masked_points = 0;
  }

  /* the absolute bound and the allreduce's share of it */
  if (!r->have_scatter) {
    r->e_abs =
        o->eb_mode == GZ_EB_REL ? (r->hi > r->lo ? o->e * (r->hi - r->lo) : 0.0) : o->e;
    r->e_allreduce = r->e_abs;
  }
  cfg.bound_policy = o->bound;
  cfg.algo = o->algo;
  cfg.eb_mode = GZ_EB_ABS;
  cfg.error_bound = r->e_allreduce;
  if (o->op == GZS_OP_MEAN && o->bound == GZ_BOUND_STRICT)
    cfg.error_bound = r->e_allreduce * (double)r->c_min;
  if (!(cfg.error_bound > 0) || !isfinite(cfg.error_bound)) {
    cfg.error_bound = 1.0; /* unused: the plain MPI allreduce is exact */
    cfg.algo = GZ_ALGO_MPI;
  }

  /* points without a local sample cannot win a max / min */
  if (o->op == GZS_OP_MAX || o->op == GZS_OP_MIN) {
    double sentinel = o->op == GZS_OP_MAX ? r->lo : r->hi;
    if (!isfinite(sentinel))
      sentinel = 0.0;
    for (size_t i = 0; i < M; i++)
      if (isnan(r->acc[i]))
        r->acc[i] = sentinel;
  }

  r->reduced = malloc(sizeof(double) * M + 1);
  r->result = malloc(sizeof(double) * M + 1);
  r->out = malloc(dsize(r->dtype) * M + 1);
  failed = !r->reduced || !r->result || !r->out;
  if (gzs_agree(comm, failed, "out of memory for the result"))
    return -1;
  /* --device gpu: the allreduce runs device-centric on every rank's GPU
   * (chosen by node-local rank) when every rank has one; the slab buffers
   * and the context's device pool are allocated here, outside the calls */
  if (o->device_gpu) {
    size_t sl = slab < M ? slab : M;
    int ok = gz_device_select(comm, NULL) == GZ_OK;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok)
      ok = gz_dev_malloc(&d_buf, 2 * sl * sizeof(double)) == GZ_DEV_OK;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok)
      cfg.device_pool_bytes = sl * sizeof(int64_t) + 2 * gz_dev_codes_indexed_bound(sl) +
                              gz_dev_codes_tmp_bytes(sl) + ((size_t)1 << 20);
    else {
      gz_dev_free(d_buf);
      d_buf = NULL;
    }
  }
  if ((grc = gz_ctx_create(comm, &cfg, &ctx)) != GZ_OK) {
    snprintf(err, errlen, "compressed allreduce: %s", gz_strerror(grc));
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    gz_dev_free(d_buf);
    return -1;
  }
  for (size_t off = 0; off < M; off += slab) {
    size_t n = M - off < slab ? M - off : slab;
    gz_report_t rep;
    if (d_buf) { /* host slab -> device, device allreduce, device -> host */
      double *d_in = d_buf, *d_out = (double *)d_buf + (slab < M ? slab : M);
      int bad = gz_dev_memcpy_async(d_in, r->acc + off, n * sizeof(double), NULL) ||
                gz_dev_stream_sync(NULL);
      grc = bad ? GZ_ERR_UNSUPPORTED : GZ_OK;
      bad = grc != GZ_OK;
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
      if (!bad)
        grc = gz_allreduce(ctx, d_in, d_out, n, GZ_FLOAT64, gz_op_of(o->op), &rep);
      else if (grc == GZ_OK)
        grc = GZ_ERR_REMOTE;
      if (grc == GZ_OK &&
          (gz_dev_memcpy_async(r->reduced + off, d_out, n * sizeof(double), NULL) ||
           gz_dev_stream_sync(NULL)))
        grc = GZ_ERR_UNSUPPORTED;
    } else {
      grc = gz_allreduce(ctx, r->acc + off, r->reduced + off, n, GZ_FLOAT64,
                         gz_op_of(o->op), &rep);
    }
    if (grc != GZ_OK) { /* agreed by the library: every rank fails */
      snprintf(err, errlen, "compressed allreduce failed: %s", gz_strerror(grc));
      if (r->rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", err);
      gz_ctx_destroy(ctx);
      gz_dev_free(d_buf);
      return -1;
    }
    report_add(&r->ar, &rep, off == 0);
    gzs_progress(o, r, 0, "stacking: %zu/%zu values reduced", off + n, M);
  }
  gz_ctx_destroy(ctx);
  gz_dev_free(d_buf);
  r->t.compress += r->ar.seconds_codec;
  r->t.communicate += r->ar.seconds - r->ar.seconds_codec;
  if (r->have_scatter) {
    r->t.compress += r->sc.seconds_codec;
    r->t.communicate += r->sc.seconds - r->sc.seconds_codec;
  }
  r->algo_name = gz_algo_name(r->ar.algo);
  snprintf(r->algo_reason, sizeof r->algo_reason, "%s", r->ar.reason);
  r->compressed = r->ar.compressed;
  r->quant_bound = r->ar.quant_bound;

  /* agreed bounds and byte counts */
  {
    double b[2] = {r->ar.result_bound, r->have_scatter ? r->sc.result_bound : 0.0};
    uint64_t bytes[2] = {r->ar.bytes_raw + (r->have_scatter ? r->sc.bytes_raw : 0),
                         r->ar.bytes_sent + (r->have_scatter ? r->sc.bytes_sent : 0) +
                             r->mask_bytes};
    MPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, bytes, 2, MPI_UINT64_T, MPI_SUM, comm);
    r->ar_bound = b[0];
    r->sc_bound = b[1];
    r->bytes_raw = bytes[0];
    r->bytes_sent = bytes[1];
  }

  finish_field(o, r, r->reduced, r->result);
  for (size_t i = 0; i < M; i++)
    if (isfinite(r->result[i]) && fabs(r->result[i]) > maxabs)
      maxabs = fabs(r->result[i]);
  if (r->dtype == GZ_FLOAT32) {
    float *f = r->out;
    for (size_t i = 0; i < M; i++)
      f[i] = (float)r->result[i];
  } else {
    memcpy(r->out, r->result, sizeof(double) * M);
  }

  /* the claimed bound */
  {
    double amax = fmax(fabs(r->lo), fabs(r->hi)),
           cmin = r->c_min ? (double)r->c_min : 1.0;
    double slop = 0;
    if (!isfinite(amax))
      amax = 0;
    switch (o->op) {
    case GZS_OP_MEAN:
      r->stage_bound = r->ar_bound / cmin + r->sc_bound;
      slop = ldexp((double)(r->nsnap + (uint64_t)P) * amax, -52);
      break;
    case GZS_OP_SUM:
      r->stage_bound = r->ar_bound + (double)r->c_max * r->sc_bound;
      slop = ldexp((double)(r->nsnap + (uint64_t)P) * (double)r->nsnap * amax, -52);
      break;
    default:
      r->stage_bound = r->ar_bound + r->sc_bound;
      break;
    }
    r->stage_bound += slop;
    r->f32_term = 0;
    if (r->dtype == GZ_FLOAT32 && maxabs > 0)
      r->f32_term = ldexp(1.0, ilogb(maxabs + r->stage_bound) - 24);
    r->claimed = r->stage_bound + r->f32_term;
  }
  return 0;
}

/* ---- reference ----------------------------------------------------------- */

int gzs_reference(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                  size_t errlen) {
  size_t M = r->npoints;
  double *target = NULL;
  int failed = 0;
  double t0 = MPI_Wtime();

  /* rank 0 receives the plain MPI reduction of the same partials: the
   * exact result (parallel) or the allreduce stage's reference (root) */
  if (r->rank == 0) {
    target = malloc(sizeof(double) * M + 1);
    r->exact_result = malloc(sizeof(double) * M + 1);
    failed = !target || !r->exact_result;
    if (failed)
      snprintf(err, errlen, "out of memory for the --verify reference");
  }
  if (gzs_agree(comm, failed, err)) {
    free(target);
    return -1;
  }
  for (size_t off = 0; off < M; off += MPI_CHUNK) {
    int n = (int)(M - off < MPI_CHUNK ? M - off : MPI_CHUNK);
    MPI_Reduce(r->acc + off, target ? target + off : NULL, n, MPI_DOUBLE,
               mpi_op_of(o->op), 0, comm);
  }
  if (r->rank == 0) {
    if (r->have_scatter) {
      r->exact_part = target; /* r->exact came from rank 0's own reading */
    } else {
      r->exact = target;
    }
    finish_field(o, r, r->exact, r->exact_result);
    gzs_verify_metrics(o, r);
  }
  r->t.reference = MPI_Wtime() - t0;
  return 0;
}

void gzs_run_free(gzs_run_t *r) {
  free(r->files);
  if (r->has_meta0)
    gz_meta_free(&r->meta0);
  free(r->acc);
  free(r->counts);
  free(r->reduced);
  free(r->result);
  free(r->out);
  free(r->exact);
  free(r->exact_part);
  free(r->exact_result);
  for (int i = 0; i < r->nwritten; i++)
    free(r->written[i]);
  free(r->written);
  memset(r, 0, sizeof *r);
}
