/*
 * stack_bound.c - the error budget and the claimed bound of `gzstack
 * stack` (stack_bound.h). Pure arithmetic: the pipeline (stack_reduce.c,
 * stack_read_root.c) feeds it the agreed ranges, counts and library
 * reports; tests/app_stack/test_stack_bound.c checks it against
 * hand-derived cases.
 */
#include "stack_bound.h"

#include <float.h>
#include <math.h>

double gzs_bound_abs(double e, gz_eb_mode_t mode, double lo, double hi) {
  if (mode != GZ_EB_REL)
    return e;
  return hi > lo ? e * (hi - lo) : 0.0;
}

gzs_split_t gzs_bound_split(gzs_op_t op, gz_bound_policy_t policy, int root_read,
                            double e_abs, uint64_t nsnap) {
  gzs_split_t s = {0.0, e_abs};
  if (!root_read)
    return s;
  if (policy == GZ_BOUND_PER_MESSAGE) {
    s.e_scatter = e_abs;
  } else {
    s.e_scatter = op == GZS_OP_SUM ? e_abs / 2 / (double)nsnap : e_abs / 2;
    s.e_allreduce = e_abs / 2;
  }
  return s;
}

double gzs_bound_allreduce(gzs_op_t op, gz_bound_policy_t policy, double e_allreduce,
                           double c_min) {
  double eb = e_allreduce;
  if (op == GZS_OP_MEAN && policy == GZ_BOUND_STRICT)
    eb = e_allreduce * c_min;
  return eb > 0 && isfinite(eb) ? eb : 0.0;
}

double gzs_bound_rank_eb(gzs_op_t op, gz_bound_policy_t policy, double error_bound,
                         int ranks) {
  int summed = op == GZS_OP_MEAN || op == GZS_OP_SUM;
  if (policy == GZ_BOUND_STRICT && summed && ranks > 0)
    return error_bound / (double)ranks;
  return error_bound;
}

gzs_claim_t gzs_bound_claim(const gzs_claim_in_t *in) {
  return gzs_bound_claim_w(in, 0.0);
}

gzs_claim_t gzs_bound_claim_w(const gzs_claim_in_t *in, double w_min) {
  gzs_claim_t c = {0.0, 0.0, 0.0};
  double amax = fmax(fabs(in->lo), fabs(in->hi));
  double cmin = in->c_min ? (double)in->c_min : 1.0;
  double n = (double)in->nsnap, np = (double)(in->nsnap + (uint64_t)in->ranks);
  if (!isfinite(amax))
    amax = 0;
  switch (in->op) {
  case GZS_OP_MEAN:
    if (w_min > 0) /* weighted: sum w x / sum w, both sums rounded */
      c.stage = in->ar_bound / w_min + ldexp((2 * np + 2) * amax, -52);
    else
      c.stage = in->ar_bound / cmin + in->sc_bound + ldexp(np * amax, -52);
    break;
  case GZS_OP_SUM:
    c.stage = in->ar_bound + (double)in->c_max * in->sc_bound + ldexp(np * n * amax, -52);
    break;
  default:
    c.stage = in->ar_bound + in->sc_bound;
    break;
  }
  if (in->dtype == GZ_FLOAT32 && in->result_max > 0)
    c.f32 = ldexp(1.0, ilogb(in->result_max + c.stage) - 24);
  c.claimed = c.stage + c.f32;
  return c;
}

double gzs_repro_step(gzs_op_t op, double e_abs, uint64_t nsnap) {
  double eq = op == GZS_OP_SUM && nsnap > 0 ? e_abs / (double)nsnap : e_abs;
  int ex;
  if (!(eq > 0) || !isfinite(eq))
    return 0.0;
  frexp(2 * eq, &ex); /* 2 eq = f 2^ex, f in [0.5, 1): 2^(ex-1) <= 2 eq */
  if (ex - 1 < DBL_MIN_EXP - 1 || ex - 1 >= DBL_MAX_EXP)
    return 0.0; /* h would be subnormal (x / h not exact) */
  return ldexp(1.0, ex - 1);
}

double gzs_repro_moment_eq(gzs_op_t op, double e, int pass) {
  double ev = op == GZS_OP_VAR || op == GZS_OP_VAR1 ? e : e * e;
  double k = 2.0 * (1 + gzs_op_ddof(op));
  if (op == GZS_OP_RMS)
    return ev;
  return pass == 1 ? sqrt(ev / k) : ev / k;
}

gzs_claim_t gzs_repro_claim(const gzs_claim_in_t *in, double step) {
  gzs_claim_t c = {0.0, 0.0, 0.0};
  double amax = fmax(fabs(in->lo), fabs(in->hi)), one;
  if (!isfinite(amax))
    amax = 0;
  one = step / 2 + ldexp(amax + step / 2, -52);
  c.stage = in->op == GZS_OP_SUM ? (double)in->c_max * one : one;
  if (in->dtype == GZ_FLOAT32 && in->result_max > 0)
    c.f32 = ldexp(1.0, ilogb(in->result_max + c.stage) - 24);
  c.claimed = c.stage + c.f32;
  return c;
}

double gzs_bound_ibm(double m) { return m > 0 && isfinite(m) ? ldexp(m, -20) : 0.0; }

int gzs_op_is_moment(gzs_op_t op) {
  return op == GZS_OP_VAR || op == GZS_OP_VAR1 || op == GZS_OP_STD || op == GZS_OP_STD1 ||
         op == GZS_OP_RMS;
}

int gzs_op_ddof(gzs_op_t op) { return op == GZS_OP_VAR1 || op == GZS_OP_STD1; }

static double finite_or_0(double v) { return v > 0 && isfinite(v) ? v : 0.0; }

gzs_moment_plan_t gzs_moment_plan(gzs_op_t op, double e_abs, uint32_t c, double lo,
                                  double hi) {
  gzs_moment_plan_t p = {0.0, 0.0, 0.0};
  double ddof = (double)gzs_op_ddof(op), cd = (double)c;
  if (!(e_abs > 0) || !isfinite(e_abs) || cd <= ddof)
    return p;
  if (op == GZS_OP_VAR || op == GZS_OP_VAR1) {
    p.ev = e_abs;
  } else if (op == GZS_OP_RMS) {
    p.ev = fmax(e_abs * e_abs, e_abs * gzs_moment_floor(lo, hi));
  } else {
    p.ev = e_abs * e_abs;
  }
  if (op == GZS_OP_RMS) {
    p.e_sum = finite_or_0(p.ev * cd);
  } else {
    p.e_mean = finite_or_0(sqrt(p.ev / 2 * (cd - ddof) / cd));
    p.e_sum = finite_or_0(p.ev / 2 * (cd - ddof));
  }
  p.ev = finite_or_0(p.ev);
  return p;
}

double gzs_moment_sq_bound(const gzs_moment_in_t *in) {
  double c = (double)in->c_lo, ddof = (double)gzs_op_ddof(in->op);
  double np4 = (double)in->nsnap + (double)in->ranks + 4.0, d, slop;
  double amax = fmax(fabs(in->lo), fabs(in->hi));
  if (c <= ddof)
    return 0.0;
  if (!isfinite(amax))
    amax = 0;
  if (in->op == GZS_OP_RMS) {
    slop = ldexp(np4 * (double)in->c_max * amax * amax, -52);
    return (in->ar_bound + slop) / c;
  }
  d = in->hi >= in->lo && isfinite(in->hi - in->lo) ? in->hi - in->lo : 0.0;
  d += in->mean_bound;
  slop = ldexp(np4 * (double)in->c_max * d * d, -52);
  return (in->ar_bound + slop + c * in->mean_bound * in->mean_bound) / (c - ddof);
}

double gzs_moment_divisor_w(gzs_op_t op, double W, double Q) {
  double d = gzs_op_ddof(op) ? W - Q / W : W;
  return W > 0 && d > 0 && isfinite(d) ? d : 0.0;
}

gzs_moment_plan_t gzs_moment_plan_w(gzs_op_t op, double e_abs, double dmin,
                                    double rho_min, double w_min, double lo, double hi) {
  gzs_moment_plan_t p = {0.0, 0.0, 0.0};
  if (!(e_abs > 0) || !isfinite(e_abs) || !(dmin > 0) || !(rho_min > 0) || !(w_min > 0))
    return p;
  if (op == GZS_OP_VAR || op == GZS_OP_VAR1)
    p.ev = e_abs;
  else if (op == GZS_OP_RMS)
    p.ev = fmax(e_abs * e_abs, e_abs * gzs_moment_floor(lo, hi));
  else
    p.ev = e_abs * e_abs;
  if (op == GZS_OP_RMS) {
    p.e_sum = finite_or_0(p.ev * w_min);
  } else {
    p.e_mean = finite_or_0(sqrt(p.ev / 2 * rho_min));
    p.e_sum = finite_or_0(p.ev / 2 * dmin);
  }
  p.ev = finite_or_0(p.ev);
  return p;
}

double gzs_moment_sq_bound_w(const gzs_moment_in_t *in, double W, double D, double v) {
  double np = (double)in->nsnap + (double)in->ranks, dx, slop, amax;
  if (!(D > 0) || !(W > 0))
    return 0.0;
  if (in->op == GZS_OP_RMS) {
    amax = fmax(fabs(in->lo), fabs(in->hi));
    if (!isfinite(amax))
      amax = 0;
    slop = ldexp((np + 6) * W * amax * amax, -52);
    return (in->ar_bound + slop) / W + ldexp(fabs(v) * (np + 4), -52);
  }
  dx = in->hi >= in->lo && isfinite(in->hi - in->lo) ? in->hi - in->lo : 0.0;
  dx += in->mean_bound;
  slop = ldexp((np + 6) * W * dx * dx, -52);
  return (in->ar_bound + slop + W * in->mean_bound * in->mean_bound) / D +
         ldexp(fabs(v) * (np + 4) * 2 * W / D, -52);
}

double gzs_moment_floor(double lo, double hi) {
  if (!(hi >= lo) || !isfinite(lo) || !isfinite(hi) || (lo <= 0 && hi >= 0))
    return 0.0;
  return fmin(fabs(lo), fabs(hi));
}

double gzs_bound_sqrt(double v, double ev, double low) {
  double r, lower;
  if (!(ev > 0))
    return 0.0;
  r = sqrt(ev);
  v = v > 0 ? v : 0.0;
  lower = fmax(low > 0 ? low : 0.0, v - ev);
  if (v + lower <= 0)
    return r;
  return fmin(r, ev / (sqrt(v) + sqrt(lower)));
}

gzs_claim_t gzs_moment_claim(gz_dtype_t dtype, double point_bound, double result_max) {
  gzs_claim_t c = {0.0, 0.0, 0.0};
  c.stage = point_bound + ldexp(result_max, -51);
  if (dtype == GZ_FLOAT32 && result_max > 0)
    c.f32 = ldexp(1.0, ilogb(result_max + c.stage) - 24);
  c.claimed = c.stage + c.f32;
  return c;
}
