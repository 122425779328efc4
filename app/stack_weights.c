/*
 * stack_weights.c - --weights: a weighted mean, sum w x / sum w per point
 * over its valid samples (ncra -w; with `days`, the days of each record's
 * month, as cdo yearmonmean / timmean with month lengths), or weighted
 * var / std / rms (stack_moments.c divides sum w (x - m)^2 by the sum of
 * weights, or for var1 / std1 by W - sum w^2 / W: reliability weights). One weight per
 * selected record, in order across the inputs (after --steps and the
 * dates): a list W1,W2,... or a file of numbers (rank 0 reads it, every
 * rank receives them). The weighted values go through the same compressed
 * allreduce; the per-point sums of weights (when values are missing) go
 * through the plain MPI one, and the strict budget divides by the smallest
 * of them (stack_bound.h).
 */
#include "stack_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Numbers separated by commas or white space: 0 and the count, -1 (not
 * all numbers), -2 (a negative or non-finite one). */
static int parse_numbers(const char *v, double **out, size_t *n) {
  size_t cap = 16;
  const char *p = v;
  double *w = malloc(sizeof(double) * cap);
  *n = 0;
  if (!w)
    return -1;
  for (;;) {
    char *e;
    double x;
    while (*p == ',' || isspace((unsigned char)*p))
      p++;
    if (!*p)
      break;
    errno = 0;
    x = strtod(p, &e);
    if (e == p || errno) {
      free(w);
      return -1;
    }
    if (!isfinite(x) || x < 0) {
      free(w);
      return -2;
    }
    if (*n == cap) {
      double *bigger = realloc(w, sizeof(double) * (cap *= 2));
      if (!bigger) {
        free(w);
        return -1;
      }
      w = bigger;
    }
    w[(*n)++] = x;
    p = e;
  }
  *out = w;
  return 0;
}

/* The operators weights apply to. */
static const char *weighted_op(gzs_op_t op) {
  if (op == GZS_OP_MEAN || gzs_op_is_moment(op))
    return NULL;
  return "weights apply to --op mean, var, var1, std, std1 and rms (a weighted sum, max "
         "or min is not defined)";
}

const char *gzs_parse_weights(const char *v, gzs_opts_t *o) {
  int rc;
  free(o->weights);
  o->weights = NULL;
  o->nweights = 0;
  if (!strcasecmp(v, "days")) {
    o->weights_kind = GZS_WEIGHTS_DAYS;
  } else if ((rc = parse_numbers(v, &o->weights, &o->nweights)) == 0 && o->nweights) {
    o->weights_kind = GZS_WEIGHTS_LIST;
  } else if (rc == -2) {
    return "weights must be finite numbers >= 0";
  } else {
    free(o->weights);
    o->weights = NULL;
    o->weights_kind = GZS_WEIGHTS_FILE; /* a file, read after the scan */
  }
  return weighted_op(o->op);
}

const char *gzs_parse_file_weights(const char *v, gzs_opts_t *o) {
  int rc;
  if (o->weights_kind && o->weights_kind != GZS_WEIGHTS_PER_FILE)
    return "--weights and --file-weights exclude each other";
  free(o->weights);
  o->weights = NULL;
  o->nweights = 0;
  rc = parse_numbers(v, &o->weights, &o->nweights);
  if (rc != 0 || o->nweights == 0) {
    if (rc == 0)
      free(o->weights);
    o->weights = NULL;
    return rc == -2 ? "weights must be finite numbers >= 0"
                    : "expected one number >= 0 per input file, like 1,2,0.5";
  }
  o->weights_kind = GZS_WEIGHTS_PER_FILE;
  return weighted_op(o->op);
}

/* Rank 0: the numbers of the weights file. */
static int read_file(const char *path, double **w, size_t *n, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  long len;
  int rc;
  if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
    snprintf(err, errlen,
             "--weights %s: not a list of numbers, and the file cannot be read: %s", path,
             strerror(errno));
    if (f)
      fclose(f);
    return -1;
  }
  text = malloc((size_t)len + 1);
  if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
    snprintf(err, errlen, "--weights %s: cannot read the file", path);
    fclose(f);
    free(text);
    return -1;
  }
  fclose(f);
  text[len] = '\0';
  rc = parse_numbers(text, w, n);
  free(text);
  if (rc != 0 || *n == 0) {
    snprintf(err, errlen, "--weights %s: the file must hold numbers >= 0 (one a record)",
             path);
    return -1;
  }
  return 0;
}

int gzs_weights_select(gzs_run_t *r, const uint64_t *idx, uint64_t n) {
  free(r->snap_w);
  r->snap_w = malloc(sizeof(double) * n + 1);
  if (!r->snap_w)
    return -1;
  for (uint64_t i = 0; i < n; i++)
    r->snap_w[i] = r->sel_w[idx ? idx[i] : i];
  return 0;
}

int gzs_weights_setup(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                      size_t errlen) {
  uint64_t N = r->nsnap;
  double *w = NULL;
  size_t n = 0;
  unsigned long long cnt;
  int failed = 0, per_file = o->weights_kind == GZS_WEIGHTS_PER_FILE;
  const char *opt = per_file ? "--file-weights" : "--weights";
  const char *text = per_file ? o->file_weights_text : o->weights_text;
  if (!o->weights_kind)
    return 0;
  if (o->read_root) {
    snprintf(err, errlen, "%s %s: read in parallel only (use --read parallel)", opt,
             text);
    failed = 1;
  } else if (per_file && o->nweights != (size_t)r->nfiles) {
    snprintf(err, errlen, "%s %s: %zu weights for %d input files (one a file, in order)",
             opt, text, o->nweights, r->nfiles);
    failed = 1;
  } else if (per_file) { /* every selected record weighs its file's weight */
    n = N;
    w = malloc(sizeof(double) * n + 1);
    for (uint64_t s = 0; w && s < N; s++) {
      uint64_t rec;
      w[s] = o->weights[gzs_locate(r, s, &rec)];
    }
  } else if (o->weights_kind == GZS_WEIGHTS_LIST) {
    n = o->nweights;
    w = malloc(sizeof(double) * n + 1);
    if (w)
      memcpy(w, o->weights, sizeof(double) * n);
  } else if (o->weights_kind == GZS_WEIGHTS_FILE) {
    if (r->rank == 0 && read_file(o->weights_text, &w, &n, err, errlen) != 0)
      failed = 1;
    cnt = failed ? 0 : (unsigned long long)n;
    MPI_Bcast(&cnt, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    n = (size_t)cnt;
    if (r->rank != 0 && n)
      w = malloc(sizeof(double) * n + 1);
    if (n && w)
      MPI_Bcast(w, (int)n, MPI_DOUBLE, 0, comm);
  } else { /* days of each selected record's month */
    n = N;
    w = malloc(sizeof(double) * n + 1);
    for (uint64_t s = 0; w && s < N; s++) {
      uint64_t rec;
      int f = gzs_locate(r, s, &rec);
      w[s] = r->rec_mlen[r->files[f].base + rec];
    }
  }
  if (gzs_agree(comm, failed, err))
    goto fail;
  if (gzs_agree(comm, n && !w, "out of memory for the weights"))
    goto fail;
  if (n != N) {
    snprintf(
        err, errlen,
        "--weights %s: %zu weights for %llu selected records (one a record, in order "
        "across the inputs)",
        o->weights_text, n, (unsigned long long)N);
    failed = 1;
  } else {
    double total = 0;
    for (uint64_t s = 0; s < N; s++)
      total += w[s];
    if (!(total > 0)) {
      snprintf(err, errlen, "%s %s: every weight is 0", opt, text);
      failed = 1;
    }
  }
  if (failed) { /* the same verdict on every rank */
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    goto fail;
  }
  r->sel_w = w;
  /* the plain stack: its snapshots are the selected records */
  return gzs_grouped(o) ? 0
         : gzs_agree(comm, gzs_weights_select(r, NULL, N) != 0,
                     "out of memory for the weights")
             ? -1
             : 0;
fail:
  free(w);
  return -1;
}
