/* error_stats.c - gz_error_stats(): test an error-propagation model on a
 * result instead of assuming it. This comment is the reference for users.
 *
 * Input and sign
 *   e[i] = approx[i] - exact[i] over the points not masked (mask[i] != 0
 *   skips a point) whose exact, approx and difference are finite (others
 *   are counted in `nonfinite`). eb is the bound of ONE quantization
 *   (|e_k| <= eb), nq the number of independent quantization errors feeding
 *   each point, scale the factor from their combination to the result
 *   error:
 *     SUM, MEAN:  E = scale (e_1 + ... + e_nq)   (SUM: 1; MEAN: 1/N)
 *     MAX, MIN:   see "MAX and MIN" below.
 *
 * Measured
 *   count, mean, sample stddev s (divisor count - 1), skewness m3/m2^1.5,
 *   excess kurtosis m4/m2^2 - 3 (m_k central moments, divisor count), max|e|.
 *   Maximum-likelihood normal fit: mu = mean, sigma = sqrt(m2).
 *   Per-quantization sigma implied: sigma_i = s / (scale sqrt nq) (MAX/MIN:
 *   s / scale), and eb / sigma_i (paper: 3; uniform quantizer: sqrt 3).
 *
 * Models (sigma of E; the interval is always +-2 sigma)
 *   paper (C-Coll, errors normal with eb = 3 sigma_i):
 *     SUM/MEAN  sigma_P = scale sqrt(nq) eb / 3   (Theorem 1, Corollary 2)
 *               interval +-2 sigma_P = +-(2/3) sqrt(nq) eb scale (Cor. 1)
 *     MAX/MIN   sigma_P = scale sqrt(2 - (nq + 2) / 2^nq) eb / 3 (Theorem 2)
 *     predicted coverage: the claim, 0.9544 (normal law).
 *   quantizer (round to nearest, error uniform on [-eb, eb]):
 *     SUM/MEAN  sigma_Q = scale sqrt(nq / 3) eb; law of E: scale eb S_nq,
 *               S_n the sum of n uniforms on [-1, 1] (Irwin-Hall, exact for
 *               nq <= 32, Edgeworth-corrected normal beyond: see
 *               distributions.c; error < 1e-5 in the CDF).
 *     MAX/MIN   sigma_Q = scale eb / sqrt 3; law: uniform on +-scale eb.
 *     predicted coverage: P(|E| <= 2 sigma_Q) under that law, computed
 *     exactly: 1 for nq = 1 (2 eb / sqrt 3 > eb: the interval holds the whole
 *     support), 0.9663 for 2, 0.9583 for 3, 0.9575 for 4, 0.9560 for 8,
 *     -> 0.9545 as nq grows. Under the same law the paper's interval
 *     +-(2/3) sqrt(nq) eb covers 0.667 (nq = 1), 0.741 (4), 0.747 (8),
 *     -> 0.752 = P(|Z| <= 2 / sqrt 3).
 *
 * MAX and MIN
 *   gzcoll reduces integer codes, and q -> 2 eb q is monotone, so
 *   max_r Q(x_r) = Q(max_r x_r): the result error is the quantization error
 *   of the single winning value, one uniform error whatever the rank count
 *   (nq_effective = 1). nq matters only to the paper's Theorem 2 (derived for
 *   decompress-compare-recompress over nq contributions), whose variance
 *   (2 - (nq + 2)/2^nq) sigma_i^2 is used as published (it is 0.5 sigma_i^2
 *   at nq = 1, outside the range it was derived for).
 *
 * Coverage and verdict (per model)
 *   coverage = fraction of points with |e| <= half_width = 2 sigma.
 *   tolerance = coverage_tol + 3 sqrt(p (1 - p) / n_eff), p the model's
 *   predicted coverage: coverage_tol (default 0.02) absorbs what no model of
 *   a real quantizer captures (non-uniform errors on coarse data, float
 *   rounding of the result, the normal-vs-exact gap at nq = 2 is 0.012);
 *   the second term is three binomial standard errors of the measured
 *   fraction, with the autocorrelation-corrected sample size n_eff.
 *   verdict: HOLDS when |coverage - p| <= tolerance, UNDERCOVERS when the
 *   interval covers less than predicted (the model is optimistic: its bound
 *   is broken more often than claimed), OVERCOVERS when more. "Holds" thus
 *   means "the model predicts its own interval's coverage", not "the
 *   coverage is 0.9544": for nq = 1 the correct uniform model predicts and
 *   observes 100 %.
 *
 * Goodness of fit (p-values, significance alpha, default 0.01)
 *   ks_normal: KS against the fitted normal, Lilliefors p-value (parameters
 *     estimated from the data). ad_normal: Anderson-Darling, same hypothesis.
 *   ks_pred: KS against the quantizer model's law (fully specified).
 *   ks_paper: KS against N(0, sigma_P^2) (fully specified).
 *   With 1e5 points KS resolves CDF differences of ~0.005: a tiny,
 *   harmless departure (discrete data, a few verbatim points) is rejected.
 *   Read the p-values with the coverage, which measures what matters.
 *
 * Autocorrelation (Z-checker style, along the flattened array)
 *   r_l = [sum_{pairs} d_i d_{i+l} / npairs_l] / m2, d = e - mean, over the
 *   pairs (i, i + l) whose both points are analysed; l = 1..max_lag.
 *   tau = max(1, 1 + 2 sum_l r_l), n_eff = count / tau.
 *
 * Flags
 *   BIASED: |mean| > 3 s sqrt(tau / count) (significant, with the
 *     correlation-inflated standard error) AND |mean| > 0.1 sigma_Q (large
 *     enough to matter: a 0.1 sigma shift changes the 2-sigma coverage by
 *     < 0.1 %). Round-to-nearest is unbiased; truncation is not.
 *   CORRELATED: some lag with |r_l| > max(0.1, 4 / sqrt(npairs_l)). At 0.1
 *     the variance of a local sum or average of errors is already ~20 %
 *     above independent errors; the second term keeps noise (sd
 *     1/sqrt(npairs)) from tripping small samples. Smooth data varying by
 *     less than one step between neighbours give strongly correlated errors.
 *   NOT_NORMAL: ks_normal_p < alpha. NOT_PREDICTED: ks_pred_p < alpha.
 *   BOUND_EXCEEDED: some |e| > strict_bound (SUM/MEAN scale nq eb, MAX/MIN
 *     scale eb), compared exactly: a float32 result adds up to half an ulp.
 *   FEW_POINTS: count < 100. DEGENERATE: all errors equal (e.g. lossless):
 *     no normal fit, skewness, kurtosis or autocorrelation (NaN).
 *
 * Caveat: a quantization error is uniform only where the data vary over
 * many steps. Values within a step of zero (q = 0, e = -x), constant or
 * smooth regions, and values stored verbatim (e = 0, counted in zero_count)
 * follow other laws. They are analysed, not dropped: the result is what the
 * user gets, and a large zero_count or a CORRELATED flag says why a model
 * may fail.
 */
#include "gzcoll.h"

#include "stats/distributions.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GZ_SQRT3 1.73205080756887729353

const char *gz_stats_verdict_name(gz_stats_verdict_t verdict) {
  switch (verdict) {
  case GZ_STATS_NA:
    return "n/a";
  case GZ_STATS_HOLDS:
    return "holds";
  case GZ_STATS_UNDERCOVERS:
    return "undercovers";
  case GZ_STATS_OVERCOVERS:
    return "overcovers";
  }
  return "unknown";
}

const char *gz_stats_kind_name(gz_stats_kind_t kind) {
  switch (kind) {
  case GZ_STATS_SUM:
    return "sum";
  case GZ_STATS_MEAN:
    return "mean";
  case GZ_STATS_MAX:
    return "max";
  case GZ_STATS_MIN:
    return "min";
  }
  return "unknown";
}

static int is_sum_kind(gz_stats_kind_t kind) {
  return kind == GZ_STATS_SUM || kind == GZ_STATS_MEAN;
}

static int params_valid(const gz_error_stats_params_t *p) {
  if (p->version != GZ_ERROR_STATS_PARAMS_VERSION)
    return 0;
  if (p->kind != GZ_STATS_SUM && p->kind != GZ_STATS_MEAN && p->kind != GZ_STATS_MAX &&
      p->kind != GZ_STATS_MIN)
    return 0;
  if (!(p->eb > 0.0) || !isfinite(p->eb) || p->nq < 1)
    return 0;
  if (!(p->scale > 0.0) || !isfinite(p->scale) || !isfinite(p->scale * p->eb))
    return 0;
  if (p->max_lag > GZ_STATS_MAX_LAG)
    return 0;
  if (!(p->alpha > 0.0 && p->alpha <= 0.5))
    return 0;
  if (!(p->coverage_tol >= 0.0 && p->coverage_tol < 1.0))
    return 0;
  return 1;
}

/* The quantizer law of E: unit * S_n, S_n a sum of n uniforms on [-1, 1]. */
static void quantizer_law(const gz_error_stats_params_t *p, unsigned *n, double *unit) {
  *n = is_sum_kind(p->kind) ? p->nq : 1u;
  *unit = p->scale * p->eb;
}

/* Predictions that do not depend on the data. */
static void predict(const gz_error_stats_params_t *p, gz_error_stats_t *st) {
  double nq = (double)p->nq, unit;
  unsigned law_n;
  quantizer_law(p, &law_n, &unit);
  if (is_sum_kind(p->kind)) {
    st->paper.sigma = p->scale * sqrt(nq) * p->eb / 3.0;
    st->quantizer.sigma = p->scale * sqrt(nq / 3.0) * p->eb;
    st->strict_bound = p->scale * nq * p->eb;
  } else {
    double var_factor = 2.0 - ldexp(nq + 2.0, -(int)(p->nq < 2000 ? p->nq : 2000));
    st->paper.sigma = p->scale * sqrt(var_factor) * p->eb / 3.0;
    st->quantizer.sigma = p->scale * p->eb / GZ_SQRT3;
    st->strict_bound = p->scale * p->eb;
  }
  st->paper.half_width = 2.0 * st->paper.sigma;
  st->quantizer.half_width = 2.0 * st->quantizer.sigma;
  st->paper.predicted_coverage = GZ_STATS_CLAIMED_COVERAGE;
  st->quantizer.predicted_coverage =
      2.0 * gz_dist_usum_cdf(law_n, st->quantizer.half_width / unit) - 1.0;
  st->pred_law_exact = law_n <= GZ_DIST_USUM_EXACT_MAX;
}

static void stats_reset(const gz_error_stats_params_t *p, gz_error_stats_t *st) {
  memset(st, 0, sizeof *st);
  st->params = *p;
  st->mean = st->stddev = st->skewness = st->kurtosis = st->max_abs = NAN;
  st->fit_mu = st->fit_sigma = NAN;
  st->ks_normal_d = st->ks_normal_p = st->ad_normal_a2 = st->ad_normal_p = NAN;
  st->ks_pred_d = st->ks_pred_p = st->ks_paper_d = st->ks_paper_p = NAN;
  st->sigma_i_measured = st->eb_over_sigma_i = NAN;
  st->paper.coverage = st->quantizer.coverage = NAN;
  st->paper.tolerance = st->quantizer.tolerance = NAN;
  st->paper.verdict = st->quantizer.verdict = GZ_STATS_NA;
  st->nlags = p->max_lag;
  for (unsigned l = 0; l < GZ_STATS_MAX_LAG; l++)
    st->autocorr[l] = NAN;
  st->n_eff = 0.0;
  predict(p, st);
}

/* 1 and *e when point i is analysed; 0 when skipped (*why: 1 masked,
 * 2 not finite). */
static int point_error(const double *exact, const double *approx,
                       const unsigned char *mask, size_t i, double *e, int *why) {
  if (mask && mask[i]) {
    *why = 1;
    return 0;
  }
  double d = approx[i] - exact[i];
  if (!isfinite(exact[i]) || !isfinite(approx[i]) || !isfinite(d)) {
    *why = 2;
    return 0;
  }
  *e = d;
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  int normal; /* 1: N(mu, sigma^2); 0: unit * S_n */
  double mu, sigma, unit;
  unsigned n;
} law_t;

static double law_cdf(const law_t *law, double x) {
  if (law->normal)
    return gz_dist_normal_cdf((x - law->mu) / law->sigma);
  return gz_dist_usum_cdf(law->n, x / law->unit);
}

/* KS statistic of sorted x[0..n) against law; ties handled (the empirical
 * CDF jumps by the whole tie group). */
static double ks_statistic(const double *x, size_t n, const law_t *law) {
  double d = 0.0, dn = (double)n;
  for (size_t i = 0; i < n; i++) {
    double f = law_cdf(law, x[i]);
    double lo = f - (double)i / dn, hi = (double)(i + 1) / dn - f;
    if (lo > d)
      d = lo;
    if (hi > d)
      d = hi;
  }
  return d;
}

/* Anderson-Darling A^2 of sorted x against N(mu, sigma^2). */
static double ad_statistic(const double *x, size_t n, double mu, double sigma) {
  double sum = 0.0, dn = (double)n;
  for (size_t i = 0; i < n; i++) {
    double lo = gz_dist_normal_cdf((x[i] - mu) / sigma);
    double hi = gz_dist_normal_sf((x[n - 1 - i] - mu) / sigma);
    lo = lo < DBL_MIN ? DBL_MIN : lo;
    hi = hi < DBL_MIN ? DBL_MIN : hi;
    sum += (2.0 * (double)i + 1.0) * (log(lo) + log(hi));
  }
  return -dn - sum / dn;
}

static void autocorrelation(const double *exact, const double *approx,
                            const unsigned char *mask, size_t n, double mean, double m2,
                            gz_error_stats_t *st, int *correlated) {
  *correlated = 0;
  for (unsigned l = 1; l <= st->nlags; l++) {
    double num = 0.0;
    uint64_t pairs = 0;
    int why;
    for (size_t i = 0; i + l < n; i++) {
      double a, b;
      if (!point_error(exact, approx, mask, i, &a, &why) ||
          !point_error(exact, approx, mask, i + l, &b, &why))
        continue;
      num += (a - mean) * (b - mean);
      pairs++;
    }
    if (pairs == 0 || !(m2 > 0.0))
      continue; /* stays NaN */
    double r = num / (double)pairs / m2;
    st->autocorr[l - 1] = r;
    double threshold = 4.0 / sqrt((double)pairs);
    if (threshold < 0.1)
      threshold = 0.1;
    if (fabs(r) > threshold)
      *correlated = 1;
  }
}

static void judge(gz_stats_model_t *m, uint64_t covered, uint64_t count, double n_eff,
                  double coverage_tol) {
  double p = m->predicted_coverage;
  m->coverage = (double)covered / (double)count;
  m->tolerance = coverage_tol + 3.0 * sqrt(p * (1.0 - p) / n_eff);
  double diff = m->coverage - p;
  if (fabs(diff) <= m->tolerance)
    m->verdict = GZ_STATS_HOLDS;
  else
    m->verdict = diff < 0.0 ? GZ_STATS_UNDERCOVERS : GZ_STATS_OVERCOVERS;
}

gz_result_t gz_error_stats(const gz_error_stats_params_t *params, const double *exact,
                           const double *approx, const unsigned char *mask, size_t n,
                           gz_error_stats_t *stats) {
  if (!params || !exact || !approx || !stats || n == 0 || !params_valid(params))
    return GZ_ERR_ARG;
  if (n > SIZE_MAX / sizeof(double))
    return GZ_ERR_NOMEM;
  double *err = malloc(n * sizeof *err);
  if (!err)
    return GZ_ERR_NOMEM;

  gz_error_stats_t *st = stats;
  stats_reset(params, st);

  /* Pass 1: collect the errors, extremes, exact zeros, bound excesses. */
  size_t count = 0;
  double sum = 0.0, emin = INFINITY, emax = -INFINITY, max_abs = 0.0;
  for (size_t i = 0; i < n; i++) {
    double e;
    int why = 0;
    if (!point_error(exact, approx, mask, i, &e, &why)) {
      if (why == 1)
        st->masked++;
      else
        st->nonfinite++;
      continue;
    }
    err[count++] = e;
    sum += e;
    emin = e < emin ? e : emin;
    emax = e > emax ? e : emax;
    max_abs = fabs(e) > max_abs ? fabs(e) : max_abs;
    st->zero_count += e == 0.0;
    st->bound_exceeded += fabs(e) > st->strict_bound;
  }
  st->count = count;
  if (count == 0) {
    st->flags |= GZ_STATS_FLAG_FEW_POINTS;
    free(err);
    return GZ_OK;
  }
  const double dc = (double)count;
  const int degenerate = emin == emax;
  st->mean = sum / dc;
  st->max_abs = max_abs;

  /* Pass 2: central moments. */
  double s2 = 0.0, s3 = 0.0, s4 = 0.0;
  for (size_t i = 0; i < count; i++) {
    double d = err[i] - st->mean, d2 = d * d;
    s2 += d2;
    s3 += d2 * d;
    s4 += d2 * d2;
  }
  double m2 = degenerate ? 0.0 : s2 / dc;
  st->stddev = count > 1 ? sqrt(m2 * dc / (dc - 1.0)) : NAN;
  st->fit_mu = st->mean;
  st->fit_sigma = sqrt(m2);
  if (!degenerate) {
    st->skewness = s3 / dc / pow(m2, 1.5);
    st->kurtosis = s4 / dc / (m2 * m2) - 3.0;
  }
  if (count > 1) {
    double per_q = is_sum_kind(params->kind) ? sqrt((double)params->nq) : 1.0;
    st->sigma_i_measured = st->stddev / (params->scale * per_q);
    if (st->sigma_i_measured > 0.0)
      st->eb_over_sigma_i = params->eb / st->sigma_i_measured;
  }

  /* Autocorrelation, effective sample size. */
  int correlated = 0;
  autocorrelation(exact, approx, mask, n, st->mean, m2, st, &correlated);
  double tau = 1.0;
  for (unsigned l = 0; l < st->nlags; l++)
    if (isfinite(st->autocorr[l]))
      tau += 2.0 * st->autocorr[l];
  if (tau < 1.0)
    tau = 1.0;
  st->n_eff = dc / tau;

  /* Coverage and verdicts. */
  uint64_t in_paper = 0, in_quant = 0;
  for (size_t i = 0; i < count; i++) {
    double a = fabs(err[i]);
    in_paper += a <= st->paper.half_width;
    in_quant += a <= st->quantizer.half_width;
  }
  judge(&st->paper, in_paper, count, st->n_eff, params->coverage_tol);
  judge(&st->quantizer, in_quant, count, st->n_eff, params->coverage_tol);

  /* Goodness of fit on the sorted errors. */
  qsort(err, count, sizeof *err, cmp_double);
  law_t law = {0, 0.0, 1.0, 1.0, 1u};
  quantizer_law(params, &law.n, &law.unit);
  st->ks_pred_d = ks_statistic(err, count, &law);
  st->ks_pred_p = gz_dist_ks_pvalue(st->ks_pred_d, count);
  law.normal = 1;
  law.mu = 0.0;
  law.sigma = st->paper.sigma;
  st->ks_paper_d = ks_statistic(err, count, &law);
  st->ks_paper_p = gz_dist_ks_pvalue(st->ks_paper_d, count);
  if (!degenerate && count > 1) {
    law.mu = st->fit_mu;
    law.sigma = st->fit_sigma;
    st->ks_normal_d = ks_statistic(err, count, &law);
    st->ks_normal_p = gz_dist_lilliefors_pvalue(st->ks_normal_d, count);
    st->ad_normal_a2 = ad_statistic(err, count, st->fit_mu, st->fit_sigma);
    st->ad_normal_p = gz_dist_ad_normal_pvalue(st->ad_normal_a2, count);
  }

  /* Flags. */
  if (count > 1) {
    double se = st->stddev * sqrt(tau / dc);
    if (fabs(st->mean) > 3.0 * se && fabs(st->mean) > 0.1 * st->quantizer.sigma)
      st->flags |= GZ_STATS_FLAG_BIASED;
  }
  if (correlated)
    st->flags |= GZ_STATS_FLAG_CORRELATED;
  if (st->ks_normal_p < params->alpha)
    st->flags |= GZ_STATS_FLAG_NOT_NORMAL;
  if (st->ks_pred_p < params->alpha)
    st->flags |= GZ_STATS_FLAG_NOT_PREDICTED;
  if (st->bound_exceeded)
    st->flags |= GZ_STATS_FLAG_BOUND_EXCEEDED;
  if (count < 100)
    st->flags |= GZ_STATS_FLAG_FEW_POINTS;
  if (degenerate)
    st->flags |= GZ_STATS_FLAG_DEGENERATE;

  free(err);
  return GZ_OK;
}

/* ---- text output ---------------------------------------------------- */

typedef struct {
  char *buf;
  size_t len, pos;
  int truncated;
} out_t;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
out_printf(out_t *o, const char *fmt, ...) {
  va_list ap;
  size_t room = o->pos < o->len ? o->len - o->pos : 0;
  va_start(ap, fmt);
  int k = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
  va_end(ap);
  if (k < 0) {
    o->truncated = 1;
    return;
  }
  if ((size_t)k >= room)
    o->truncated = 1;
  o->pos += (size_t)k;
}

static gz_result_t out_finish(out_t *o, size_t *out_len) {
  if (o->len > 0 && o->pos >= o->len)
    o->buf[o->len - 1] = '\0';
  if (out_len)
    *out_len = o->pos < o->len ? o->pos : (o->len ? o->len - 1 : 0);
  return o->truncated ? GZ_ERR_CAPACITY : GZ_OK;
}

static unsigned strongest_lag(const gz_error_stats_t *st) {
  unsigned best = 0;
  for (unsigned l = 0; l < st->nlags; l++)
    if (isfinite(st->autocorr[l]) &&
        (best == 0 || fabs(st->autocorr[l]) > fabs(st->autocorr[best - 1])))
      best = l + 1;
  return best;
}

/* A coverage verdict in words for the summary line. */
static const char *coverage_words(gz_stats_verdict_t v, const char *holds,
                                  const char *under, const char *over) {
  return v == GZ_STATS_HOLDS         ? holds
         : v == GZ_STATS_UNDERCOVERS ? under
         : v == GZ_STATS_OVERCOVERS  ? over
                                     : "n/a";
}

gz_result_t gz_error_stats_summary(const gz_error_stats_t *stats, char *buf, size_t len) {
  if (!stats || !buf || len == 0)
    return GZ_ERR_ARG;
  const gz_error_stats_t *st = stats;
  out_t o = {buf, len, 0, 0};
  buf[0] = '\0';
  out_printf(&o, "%s of %u", gz_stats_kind_name(st->params.kind), st->params.nq);
  if (st->count == 0) {
    out_printf(&o, ": no point analysed (%llu masked, %llu not finite)",
               (unsigned long long)st->masked, (unsigned long long)st->nonfinite);
    return out_finish(&o, NULL);
  }
  /* Worded as findings about the error model (the bound is checked
   * elsewhere): what the errors look like, and which model predicts them. */
  if (st->flags & GZ_STATS_FLAG_DEGENERATE)
    out_printf(&o, ": all %llu errors equal %.3g", (unsigned long long)st->count,
               st->mean);
  else if (st->flags & GZ_STATS_FLAG_NOT_NORMAL)
    out_printf(
        &o,
        ": errors not normal (KS p = %.2g, kurtosis %+.3g; nearest N(%.2g, (%.2g)^2))",
        st->ks_normal_p, st->kurtosis, st->fit_mu, st->fit_sigma);
  else
    out_printf(&o, ": errors close to N(%.2g, (%.2g)^2) (KS p = %.2g, kurtosis %+.3g)",
               st->fit_mu, st->fit_sigma, st->ks_normal_p, st->kurtosis);
  out_printf(&o, "; %s the quantizer's law (KS p = %.2g)",
             (st->flags & GZ_STATS_FLAG_NOT_PREDICTED) ? "differ from" : "match",
             st->ks_pred_p);
  out_printf(&o,
             "; published +-2 sqrt(n) sigma interval holds %.1f %% (assumes %.2f %%: %s)",
             100.0 * st->paper.coverage, 100.0 * st->paper.predicted_coverage,
             coverage_words(st->paper.verdict, "as assumed", "model too optimistic",
                            "model too cautious"));
  out_printf(&o, "; quantizer model holds %.1f %% (predicts %.1f %%: %s)",
             100.0 * st->quantizer.coverage, 100.0 * st->quantizer.predicted_coverage,
             coverage_words(st->quantizer.verdict, "as predicted", "fewer than predicted",
                            "more than predicted"));
  if (st->flags & GZ_STATS_FLAG_BIASED)
    out_printf(&o, "; biased (mean %.2g = %.3g sigma_Q)", st->mean,
               st->mean / st->quantizer.sigma);
  if (st->flags & GZ_STATS_FLAG_CORRELATED) {
    unsigned l = strongest_lag(st);
    out_printf(&o, "; correlated (r = %.2f at lag %u)", st->autocorr[l - 1], l);
  }
  if (st->flags & GZ_STATS_FLAG_BOUND_EXCEEDED)
    out_printf(&o, "; %llu points exceed the strict bound %.3g",
               (unsigned long long)st->bound_exceeded, st->strict_bound);
  return out_finish(&o, NULL);
}

static void json_num(out_t *o, const char *key, double v, int comma) {
  if (isfinite(v))
    out_printf(o, "\"%s\":%.10g%s", key, v, comma ? "," : "");
  else
    out_printf(o, "\"%s\":null%s", key, comma ? "," : "");
}

static void json_model(out_t *o, const char *key, const gz_stats_model_t *m) {
  out_printf(o, "\"%s\":{", key);
  json_num(o, "sigma", m->sigma, 1);
  json_num(o, "half_width", m->half_width, 1);
  json_num(o, "predicted_coverage", m->predicted_coverage, 1);
  json_num(o, "coverage", m->coverage, 1);
  json_num(o, "tolerance", m->tolerance, 1);
  out_printf(o, "\"verdict\":\"%s\"},", gz_stats_verdict_name(m->verdict));
}

gz_result_t gz_error_stats_json(const gz_error_stats_t *stats, char *buf, size_t len,
                                size_t *out_len) {
  static const char *const flag_names[] = {
      "biased",         "correlated", "not_normal", "not_predicted",
      "bound_exceeded", "few_points", "degenerate"};
  if (!stats || !buf || len == 0)
    return GZ_ERR_ARG;
  const gz_error_stats_t *st = stats;
  char summary[512];
  out_t o = {buf, len, 0, 0};
  buf[0] = '\0';
  gz_error_stats_summary(st, summary, sizeof summary);
  out_printf(&o, "{\"kind\":\"%s\",\"nq\":%u,", gz_stats_kind_name(st->params.kind),
             st->params.nq);
  json_num(&o, "eb", st->params.eb, 1);
  json_num(&o, "scale", st->params.scale, 1);
  json_num(&o, "alpha", st->params.alpha, 1);
  out_printf(&o, "\"count\":%llu,\"masked\":%llu,\"nonfinite\":%llu,\"zero_count\":%llu,",
             (unsigned long long)st->count, (unsigned long long)st->masked,
             (unsigned long long)st->nonfinite, (unsigned long long)st->zero_count);
  json_num(&o, "mean", st->mean, 1);
  json_num(&o, "stddev", st->stddev, 1);
  json_num(&o, "skewness", st->skewness, 1);
  json_num(&o, "excess_kurtosis", st->kurtosis, 1);
  json_num(&o, "max_abs", st->max_abs, 1);
  out_printf(&o, "\"normal_fit\":{");
  json_num(&o, "mu", st->fit_mu, 1);
  json_num(&o, "sigma", st->fit_sigma, 1);
  json_num(&o, "ks_d", st->ks_normal_d, 1);
  json_num(&o, "ks_p", st->ks_normal_p, 1);
  json_num(&o, "ad_a2", st->ad_normal_a2, 1);
  json_num(&o, "ad_p", st->ad_normal_p, 0);
  out_printf(&o, "},\"quantizer_law\":{\"exact\":%s,",
             st->pred_law_exact ? "true" : "false");
  json_num(&o, "ks_d", st->ks_pred_d, 1);
  json_num(&o, "ks_p", st->ks_pred_p, 0);
  out_printf(&o, "},\"paper_normal\":{");
  json_num(&o, "ks_d", st->ks_paper_d, 1);
  json_num(&o, "ks_p", st->ks_paper_p, 0);
  out_printf(&o, "},");
  json_num(&o, "sigma_i_measured", st->sigma_i_measured, 1);
  json_num(&o, "eb_over_sigma_i", st->eb_over_sigma_i, 1);
  json_num(&o, "claimed_coverage", GZ_STATS_CLAIMED_COVERAGE, 1);
  json_model(&o, "paper", &st->paper);
  json_model(&o, "quantizer", &st->quantizer);
  json_num(&o, "strict_bound", st->strict_bound, 1);
  out_printf(&o, "\"bound_exceeded\":%llu,\"autocorr\":[",
             (unsigned long long)st->bound_exceeded);
  for (unsigned l = 0; l < st->nlags && l < GZ_STATS_MAX_LAG; l++) {
    if (isfinite(st->autocorr[l]))
      out_printf(&o, "%s%.6g", l ? "," : "", st->autocorr[l]);
    else
      out_printf(&o, "%snull", l ? "," : "");
  }
  out_printf(&o, "],");
  json_num(&o, "n_eff", st->n_eff, 1);
  out_printf(&o, "\"flags\":[");
  int first = 1;
  for (unsigned b = 0; b < sizeof flag_names / sizeof flag_names[0]; b++) {
    if (st->flags & (1u << b)) {
      out_printf(&o, "%s\"%s\"", first ? "" : ",", flag_names[b]);
      first = 0;
    }
  }
  out_printf(&o, "],\"summary\":\"");
  for (const char *c = summary; *c; c++) {
    if (*c == '"' || *c == '\\')
      out_printf(&o, "\\%c", *c);
    else
      out_printf(&o, "%c", *c);
  }
  out_printf(&o, "\"}");
  return out_finish(&o, out_len);
}

/* ---- histogram ------------------------------------------------------ */

gz_result_t gz_error_stats_histogram(const gz_error_stats_t *stats, const double *exact,
                                     const double *approx, const unsigned char *mask,
                                     size_t n, gz_error_hist_t *hist) {
  if (!stats || !exact || !approx || !hist || n == 0 || hist->nbins == 0 ||
      !hist->density || hist->npoints == 1 || !params_valid(&stats->params))
    return GZ_ERR_ARG;
  const gz_error_stats_t *st = stats;
  if (!(hist->x1 > hist->x0) || !isfinite(hist->x0) || !isfinite(hist->x1)) {
    double r = 3.5 * st->paper.sigma;
    r = 3.5 * st->quantizer.sigma > r ? 3.5 * st->quantizer.sigma : r;
    if (isfinite(st->fit_sigma) && 3.5 * st->fit_sigma > r)
      r = 3.5 * st->fit_sigma;
    if (isfinite(st->max_abs) && st->max_abs > r)
      r = st->max_abs;
    hist->x0 = -r;
    hist->x1 = r;
  }
  const double x0 = hist->x0, x1 = hist->x1, w = (x1 - x0) / (double)hist->nbins;
  uint64_t total = 0;
  hist->below = hist->above = 0;
  for (size_t b = 0; b < hist->nbins; b++)
    hist->density[b] = 0.0;
  for (size_t i = 0; i < n; i++) {
    double e;
    int why;
    if (!point_error(exact, approx, mask, i, &e, &why))
      continue;
    total++;
    if (e < x0) {
      hist->below++;
    } else if (e > x1) {
      hist->above++;
    } else {
      size_t b = (size_t)((e - x0) / w);
      hist->density[b < hist->nbins ? b : hist->nbins - 1] += 1.0;
    }
  }
  if (total)
    for (size_t b = 0; b < hist->nbins; b++)
      hist->density[b] /= (double)total * w;

  unsigned law_n;
  double unit;
  quantizer_law(&st->params, &law_n, &unit);
  int have_fit = isfinite(st->fit_sigma) && st->fit_sigma > 0.0;
  for (size_t j = 0; j < hist->npoints; j++) {
    double x = x0 + (x1 - x0) * (double)j / (double)(hist->npoints - 1);
    if (hist->x)
      hist->x[j] = x;
    if (hist->pdf_fit)
      hist->pdf_fit[j] =
          have_fit ? gz_dist_normal_pdf((x - st->fit_mu) / st->fit_sigma) / st->fit_sigma
                   : NAN;
    if (hist->pdf_paper)
      hist->pdf_paper[j] = gz_dist_normal_pdf(x / st->paper.sigma) / st->paper.sigma;
    if (hist->pdf_pred)
      hist->pdf_pred[j] = gz_dist_usum_pdf(law_n, x / unit) / unit;
  }
  return GZ_OK;
}
