/*
 * stack_moments.c - steps 2-4 of `gzstack stack` for the second moments:
 * var / var1 / std / std1 in two passes, rms in one (stack_bound.h derives
 * the bound, docs/operators.md explains it).
 *   pass 1   var / std: the mean, as --op mean (stack_read.c,
 *            stack_reduce.c) with the budget gzs_moment_plan gives it; the
 *            result m~ is bit-identical on every rank
 *   pass 2   the inputs read again: per-point sums of (x - m~)^2 (rms: of
 *            x^2) through the compressed allreduce (a sum)
 *   result   var = S~ / (c - ddof) (S~ < 0 read as 0; c <= ddof: NaN),
 *            std / rms the square root; the claimed bound per point, its
 *            largest value claimed
 *   verify   rank 0: the exact sums of both passes (MPI_Reduce of the same
 *            partials); exact S = sum (x - m~)^2 - c (m~ - m)^2, an
 *            identity, so no third reading
 * No cancellation: the squares are of deviations from a mean within the
 * mean pass's bound, never E[x^2] - E[x]^2.
 */
#include "stack_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t count_at(const gzs_run_t *r, size_t i) {
  return r->counts ? r->counts[i] : (uint32_t)r->nsnap;
}

/* The smallest count > ddof over the points (0: none). */
static uint32_t smallest_count(const gzs_run_t *r, int ddof) {
  uint32_t c = 0;
  if (!r->counts)
    return r->nsnap > (uint64_t)ddof ? (uint32_t)r->nsnap : 0;
  for (size_t i = 0; i < r->npoints; i++)
    if (r->counts[i] > (uint32_t)ddof && (c == 0 || r->counts[i] < c))
      c = r->counts[i];
  return c;
}

/* Weighted: the sum of weights W and of their squares Q at point i. */
static double weight_at(const gzs_run_t *r, size_t i, double *q) {
  *q = r->wsq ? r->wsq[i] : r->q_tot;
  return r->wsum ? r->wsum[i] : r->w_tot;
}

/* Weighted: the smallest positive divisor, divisor / W and W over the
 * points (every rank holds the same sums). */
static void smallest_divisor(const gzs_run_t *r, gzs_op_t op, double *dmin, double *rho,
                             double *wmin) {
  size_t n = r->wsum ? r->npoints : 1;
  *dmin = *rho = *wmin = 0;
  for (size_t i = 0; i < n; i++) {
    double q, w = weight_at(r, i, &q), d = gzs_moment_divisor_w(op, w, q);
    if (!(d > 0))
      continue;
    if (*dmin == 0 || d < *dmin)
      *dmin = d;
    if (*rho == 0 || d / w < *rho)
      *rho = d / w;
    if (*wmin == 0 || w < *wmin)
      *wmin = w;
  }
}

void gzs_moment_budget(gzs_run_t *r) {
  const gzs_opts_t *u = r->moment_o;
  gzs_op_t op = u->op;
  uint32_t c = smallest_count(r, gzs_op_ddof(op));
  double e_abs = u->e;
  gzs_moment_plan_t p;
  if (u->eb_mode == GZ_EB_REL) {
    double range = r->hi > r->lo ? r->hi - r->lo : 0.0;
    e_abs = u->e * range * (op == GZS_OP_VAR || op == GZS_OP_VAR1 ? range : 1.0);
  }
  if (r->snap_w) {
    double dmin, rho, wmin;
    smallest_divisor(r, op, &dmin, &rho, &wmin);
    p = gzs_moment_plan_w(op, e_abs, dmin, rho, wmin, r->lo, r->hi);
  } else {
    p = gzs_moment_plan(op, e_abs, c, r->lo, r->hi);
  }
  r->e_abs = e_abs;
  r->e_allreduce = r->moment_pass == 1 ? p.e_mean : p.e_sum;
}

/* --verify: rank 0 receives the plain MPI sum of this pass's partials. */
static int reduce_exact(const gzs_run_t *r, MPI_Comm comm, double **dst) {
  size_t M = r->npoints;
  int failed = 0;
  if (r->rank == 0) {
    *dst = malloc(sizeof(double) * M + 1);
    failed = *dst == NULL;
  }
  if (gzs_agree(comm, failed, "out of memory for the --verify reference"))
    return -1;
  for (size_t off = 0; off < M; off += GZS_MPI_CHUNK) {
    int n = (int)(M - off < GZS_MPI_CHUNK ? M - off : GZS_MPI_CHUNK);
    MPI_Reduce(r->acc + off, r->rank == 0 ? *dst + off : NULL, n, MPI_DOUBLE, MPI_SUM, 0,
               comm);
  }
  return 0;
}

/* The divisor of the sum of squares at point i (count c): c - ddof, or
 * weighted gzs_moment_divisor_w (0: no estimate). */
static double divisor_at(const gzs_run_t *r, gzs_op_t op, size_t i, uint32_t c) {
  double q, w;
  if (!r->snap_w)
    return c > (uint32_t)gzs_op_ddof(op) ? (double)(c - (uint32_t)gzs_op_ddof(op)) : 0.0;
  w = weight_at(r, i, &q);
  return c > 0 ? gzs_moment_divisor_w(op, w, q) : 0.0;
}

/* var / std / rms at one point from the sum of squares s (divisor d). */
static double moment_value(gzs_op_t op, double s, double d) {
  double v;
  if (!(d > 0) || isnan(s))
    return NAN;
  v = s > 0 ? s / d : 0.0;
  return op == GZS_OP_VAR || op == GZS_OP_VAR1 ? v : sqrt(v);
}

/* The field, its output copy and the claim. */
static void finish_moments(const gzs_opts_t *o, gzs_run_t *r) {
  int ddof = gzs_op_ddof(o->op), is_var = o->op == GZS_OP_VAR || o->op == GZS_OP_VAR1;
  gzs_moment_in_t in;
  gzs_claim_t claim;
  double ev, point_bound = 0, maxabs = 0, low = 0;
  in.op = o->op;
  in.ar_bound = r->ar_bound;
  in.mean_bound = r->mean_bound;
  in.lo = r->lo;
  in.hi = r->hi;
  in.c_lo = smallest_count(r, ddof);
  in.c_max = r->c_max;
  in.nsnap = r->nsnap;
  in.ranks = r->size;
  if (o->reproducible) { /* c terms each within h/2: largest over c at c_lo; */
    in.ar_bound = (double)in.c_lo * r->repro_step / 2;
    in.ranks = 0; /* the ranks add integers: no rounding, no rank count */
  }
  ev = gzs_moment_sq_bound(&in);
  if (o->op == GZS_OP_RMS) { /* rms >= the smallest |x|: its square bounds ms */
    low = gzs_moment_floor(r->lo, r->hi);
    low *= low;
  }
  r->masked_points = 0;
  for (size_t i = 0; i < r->npoints; i++) {
    uint32_t c = count_at(r, i);
    double d = divisor_at(r, o->op, i, c), v = moment_value(o->op, r->reduced[i], d), b;
    if (c == 0 && o->normalize_live) { /* rms of no live sample: 0 (sfstack) */
      r->result[i] = 0.0;
      r->masked_points++;
      continue;
    }
    r->result[i] = v;
    if (isnan(v)) {
      r->masked_points += c == 0;
      continue;
    }
    if (fabs(v) > maxabs)
      maxabs = fabs(v);
    if (r->snap_w) { /* weighted: the point's own sums of weights */
      double q, w = weight_at(r, i, &q);
      ev = gzs_moment_sq_bound_w(&in, w, o->op == GZS_OP_RMS ? w : d, is_var ? v : v * v);
    }
    b = is_var ? ev : gzs_bound_sqrt(v * v, ev, low);
    if (b > point_bound)
      point_bound = b;
  }
  if (r->dtype == GZ_FLOAT32) {
    float *f = r->out;
    for (size_t i = 0; i < r->npoints; i++)
      f[i] = (float)r->result[i];
  } else {
    memcpy(r->out, r->result, sizeof(double) * r->npoints);
  }
  claim = gzs_moment_claim(r->dtype, point_bound, maxabs);
  r->stage_bound = claim.stage;
  r->f32_term = claim.f32;
  r->claimed = claim.claimed;
  gzs_claim_ibm(o, r, maxabs);
}

/* Rank 0: the exact field from the exact pass-1 sums (NULL for rms) and
 * the exact pass-2 sums around m~. */
static void exact_moments(const gzs_opts_t *o, gzs_run_t *r, const double *sum1,
                          const double *mean) {
  for (size_t i = 0; i < r->npoints; i++) {
    uint32_t c = count_at(r, i);
    double s = r->exact[i], q, w = r->snap_w ? weight_at(r, i, &q) : (double)c;
    if (sum1 && c > 0 && w > 0) {
      double d = mean[i] - sum1[i] / w;
      s -= w * d * d;
    }
    r->exact_result[i] = c == 0 && o->normalize_live
                             ? 0.0
                             : moment_value(o->op, s, divisor_at(r, o->op, i, c));
  }
}

/* Pass-1 state out of the way of pass 2. */
static void reset_pass(gzs_run_t *r) {
  free(r->acc);
  free(r->counts);
  free(r->reduced);
  free(r->out);
  free(r->wsum);
  free(r->wsq);
  r->acc = NULL;
  r->counts = NULL;
  r->reduced = NULL;
  r->out = NULL;
  r->wsum = NULL;
  r->wsq = NULL;
  r->lo = INFINITY;
  r->hi = -INFINITY;
}

int gzs_moments(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                size_t errlen) {
  gzs_opts_t pass = *o;
  double *mean = NULL, *sum1 = NULL;
  uint64_t raw1 = 0, sent1 = 0;
  int rc = -1;

  pass.eb_mode = GZ_EB_ABS; /* the budget comes from gzs_moment_budget */
  pass.stats_png = NULL;
  r->moment_o = o;
  if (o->op != GZS_OP_RMS) {
    pass.op = GZS_OP_MEAN;
    r->moment_pass = 1;
    if (gzs_read(&pass, r, comm, err, errlen) != 0 ||
        gzs_reduce(&pass, r, comm, err, errlen) != 0)
      goto done;
    if (o->verify && reduce_exact(r, comm, &sum1) != 0)
      goto done;
    mean = r->result; /* m~, in double, NaN where no sample */
    r->result = NULL;
    r->mean_bound = r->stage_bound;
    raw1 = r->bytes_raw;
    sent1 = r->bytes_sent;
    reset_pass(r);
    gzs_progress(o, r, 1, "mean agreed (within %.3g), second pass", r->mean_bound);
  }
  pass.op = GZS_OP_SUM;
  r->moment_pass = 2;
  r->center = mean;
  if (gzs_read(&pass, r, comm, err, errlen) != 0 ||
      gzs_reduce(&pass, r, comm, err, errlen) != 0)
    goto done;
  r->bytes_raw += raw1;
  r->bytes_sent += sent1;
  finish_moments(o, r);
  if (o->verify) {
    if (reduce_exact(r, comm, &r->exact) != 0)
      goto done;
    if (r->rank == 0) {
      r->exact_result = malloc(sizeof(double) * r->npoints + 1);
      if (r->exact_result) {
        exact_moments(o, r, sum1, mean);
        gzs_verify_metrics(o, r);
      }
    }
    if (gzs_agree(comm, r->rank == 0 && !r->exact_result,
                  "out of memory for the --verify reference"))
      goto done;
  }
  rc = 0;
done:
  r->center = NULL;
  r->moment_pass = 0;
  free(mean);
  free(sum1);
  return rc;
}
