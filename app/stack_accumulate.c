/*
 * stack_accumulate.c - step 2 of `gzstack stack`, the arithmetic part:
 * snapshot values (read one snapshot, or one slab of it: --slab-mb, at a
 * time) go into a double accumulator (sum, or max/min) and, as soon as
 * some value is missing, into per-point uint32 counts of the valid
 * samples. Missing: NaN, +-Inf, or equal to the file's _FillValue /
 * missing_value, and with --normalize live a zero (a dead sample, as
 * sustack counts them). Also where a global snapshot lives, and reading a part of
 * one.
 */
#include "stack_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

const char *gzs_check_scale(gzs_opts_t *o, const char *v) {
  const char *p = v;
  free(o->scales);
  o->scales = NULL;
  o->nscales = 0;
  if (o->read_root)
    return "--scale reads in parallel only (use --read parallel)";
  while (*p) {
    char *end;
    double s, *more;
    errno = 0;
    s = strtod(p, &end);
    if (end == p || errno || !isfinite(s) || (*end && *end != ','))
      return "expected finite numbers separated by commas, like 1,0.5,2";
    if (!(more = realloc(o->scales, sizeof(double) * (size_t)(o->nscales + 1))))
      return "out of memory";
    o->scales = more;
    o->scales[o->nscales++] = s;
    p = *end ? end + 1 : end;
  }
  return o->nscales ? NULL : "expected at least one factor";
}

int gzs_scale_count(const gzs_opts_t *o, const gzs_run_t *r, char *err, size_t errlen) {
  uint64_t want = o->key_text ? (uint64_t)r->nfiles : r->nsnap;
  if (!o->scales || (uint64_t)o->nscales == want)
    return 0;
  snprintf(err, errlen, "--scale %s: %d factors for %llu %s", o->scale_text, o->nscales,
           (unsigned long long)want,
           o->key_text ? "input files (--key: one per file)" : "stacked records");
  return -1;
}

void gzs_scale(const gzs_opts_t *o, uint64_t k, double *x, size_t n, int has_fill,
               double fill) {
  if (!o->scales)
    return;
  for (size_t i = 0; i < n; i++)
    if (!(has_fill && x[i] == fill))
      x[i] *= o->scales[k];
}

size_t gzs_slab_values(const gzs_opts_t *o) {
  double v = o->slab_mb * 1048576.0 / 8.0;
  return v < 1024 ? 1024 : v > 1e15 ? (size_t)1e15 : (size_t)v;
}

void gzs_acc_init(gzs_acc_t *s, gzs_op_t op, double *acc, uint32_t **counts,
                  size_t npoints) {
  s->op = op;
  s->square = 0;
  s->zero_missing = 0;
  s->center = NULL;
  s->acc = acc;
  s->counts = counts;
  s->npoints = npoints;
  s->done = 0;
  s->w = 1.0;
  s->wdone = 0.0;
  s->wsum = NULL;
  s->wqdone = 0.0;
  s->wsq = NULL;
  s->lo = INFINITY;
  s->hi = -INFINITY;
  s->codes = NULL;
  s->step = 0.0;
  s->overflow = 0;
  s->init = 0;
}

int gzs_acc_codes(const gzs_opts_t *o, gzs_run_t *r, gzs_acc_t *s, uint64_t nterms) {
  int64_t none = o->op == GZS_OP_MAX ? INT64_MIN : o->op == GZS_OP_MIN ? INT64_MAX : 0;
  if (!o->reproducible)
    return 0;
  free(r->codes);
  if (r->moment_pass && r->moment_o) /* var / std / rms: the pass's own bound */
    r->repro_step = gzs_repro_step(
        GZS_OP_MEAN, gzs_repro_moment_eq(r->moment_o->op, r->moment_o->e, r->moment_pass),
        1);
  else
    r->repro_step = gzs_repro_step(o->op, o->e, nterms);
  r->repro_overflow = 0;
  r->codes = malloc(sizeof(int64_t) * r->npoints + 1);
  if (!r->codes)
    return -1;
  for (size_t i = 0; i < r->npoints; i++)
    r->codes[i] = none;
  s->codes = r->codes;
  s->step = r->repro_step;
  return 0;
}

/* --reproducible: the code of v joins point p's (|code| < 2^62: the sum of
 * the ranks' codes is checked again before they are combined). */
static void add_code(gzs_acc_t *s, size_t p, double v) {
  double q = rint(v / s->step); /* step a power of two: v / step exact */
  int64_t c, *a = &s->codes[p];
  if (!(fabs(q) < 0x1p62)) {
    s->overflow = 1;
    return;
  }
  c = (int64_t)q;
  if (s->op == GZS_OP_MAX)
    *a = c > *a ? c : *a;
  else if (s->op == GZS_OP_MIN)
    *a = c < *a ? c : *a;
  else if (__builtin_add_overflow(*a, c, a))
    s->overflow = 1;
}

/* The first missing value, at point p of the current snapshot: counts start
 * at the snapshots already done, plus the current one before p. */
static int start_counts(gzs_acc_t *s, size_t p) {
  uint32_t *c = malloc(sizeof(uint32_t) * s->npoints + 1);
  double *w = s->wsum ? malloc(sizeof(double) * s->npoints + 1) : NULL;
  double *q = s->wsum && s->wsq ? malloc(sizeof(double) * s->npoints + 1) : NULL;
  if (!c || (s->wsum && !w) || (s->wsum && s->wsq && !q)) {
    free(c);
    free(w);
    free(q);
    return -1;
  }
  for (size_t i = 0; i < s->npoints; i++)
    c[i] = (uint32_t)s->done + (i < p);
  for (size_t i = 0; w && i < s->npoints; i++)
    w[i] = s->wdone + (i < p ? s->w : 0.0);
  for (size_t i = 0; q && i < s->npoints; i++)
    q[i] = s->wqdone + (i < p ? s->w * s->w : 0.0);
  *s->counts = c;
  if (s->wsum)
    *s->wsum = w;
  if (q)
    *s->wsq = q;
  return 0;
}

/* What a point of an accumulator for op holds before its first sample
 * (gzs_acc_alloc). */
static double no_sample(gzs_op_t op) {
  return op == GZS_OP_MAX || op == GZS_OP_MIN ? NAN : 0.0;
}

/* The common case of a sum (or mean) in one tight loop: no counts yet, no
 * weights, squares, codes or mask bits. It stops at the first missing value
 * and returns how many values it took; the general loop goes on from
 * there. The same arithmetic as the general loop: a first snapshot's
 * 0.0 + v is what adding it to a fresh accumulator's zeros gives. */
static size_t sum_while_valid(gzs_acc_t *s, const double *x, double *acc, size_t n,
                              int has_fill, double fill) {
  double lo = s->lo, hi = s->hi;
  int zero_missing = s->zero_missing, init = s->init;
  size_t i;
  for (i = 0; i < n; i++) {
    double v = x[i];
    if (!isfinite(v) || (has_fill && v == fill) || (zero_missing && v == 0))
      break;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    acc[i] = (init ? 0.0 : acc[i]) + v; /* x may be acc itself under init */
  }
  s->lo = lo;
  s->hi = hi;
  return i;
}

int gzs_accumulate(gzs_acc_t *s, const double *x, size_t off, size_t n, int has_fill,
                   double fill, const unsigned char *bits) {
  double *acc = s->acc + off, lo, hi;
  size_t i = 0;
  if ((s->op == GZS_OP_SUM || s->op == GZS_OP_MEAN) && !s->square && !s->wsum &&
      !s->codes && !bits && !*s->counts)
    i = sum_while_valid(s, x, acc, n, has_fill, fill);
  lo = s->lo;
  hi = s->hi;
  for (; i < n; i++) {
    double v = x[i];
    int valid = isfinite(v) && !(has_fill && v == fill) && !(s->zero_missing && v == 0) &&
                !(bits && (bits[i >> 3] >> (i & 7) & 1));
    if (s->init) /* v is read: the point starts empty, then v joins it below */
      acc[i] = no_sample(s->op);
    if (!valid) {
      if (!*s->counts && start_counts(s, off + i) != 0)
        return -1;
      continue;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    if (s->square) {
      double d = s->center ? v - s->center[off + i] : v;
      v = d * d;
    }
    if (s->wsum) /* --weights (mean, the moments' squares) */
      v *= s->w;
    if (s->codes)
      add_code(s, off + i, v);
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
    default: /* the moments accumulate as GZS_OP_SUM */
      break;
    }
    if (*s->counts)
      (*s->counts)[off + i]++;
    if (s->wsum && *s->wsum)
      (*s->wsum)[off + i] += s->w;
    if (s->wsq && *s->wsq)
      (*s->wsq)[off + i] += s->w * s->w;
  }
  s->lo = lo;
  s->hi = hi;
  return 0;
}

void gzs_acc_report(const gzs_acc_t *s, gzs_run_t *r) {
  r->lo = s->lo;
  r->hi = s->hi;
  r->repro_overflow = s->overflow;
}

double *gzs_acc_alloc(gzs_op_t op, size_t n) {
  double *a = op == GZS_OP_MEAN || op == GZS_OP_SUM ? calloc(n + 1, sizeof(double))
                                                    : malloc((n + 1) * sizeof(double));
  if (a && !(op == GZS_OP_MEAN || op == GZS_OP_SUM))
    for (size_t i = 0; i < n; i++)
      a[i] = NAN; /* no sample yet */
  return a;
}

int gzs_locate(const gzs_run_t *r, uint64_t g, uint64_t *rec) {
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
  *rec = gzs_file_record(&r->files[lo], g - r->files[lo].first);
  return lo;
}

int gzs_read_part(gz_reader_t *rd, uint64_t rec, size_t off, size_t n, size_t npoints,
                  double *dst, char *err, size_t errlen) {
  if (off == 0 && n == npoints)
    return gz_reader_read(rd, (size_t)rec, 1, GZ_FLOAT64, dst, err, errlen);
  return gz_reader_read_part(rd, (size_t)rec, off, n, GZ_FLOAT64, dst, err, errlen);
}
