/* test_error_stats.c - gz_error_stats() on seeded synthetic errors of known
 * law: each must be classified as the mathematics says (see the reference
 * comment in libgzcoll/src/stats/error_stats.c).
 *
 * A goodness-of-fit test of a true hypothesis gives a uniform p-value, so
 * "accepted" is asserted as p > 1e-3 (a correct test falls below it once in
 * a thousand samples; the seeds are fixed, so the outcome is too), and
 * "rejected" as p < 1e-6. test_calibration() checks the p-values' size. */
#include "gz_test.h"

#include "gzcoll.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_BIG 100000
#define EB 1e-3
#define SQRT3 1.7320508075688772

static double *exact_buf, *approx_buf;

/* exact: smooth-ish values of order 10; approx = exact + e. */
static void make_pair(gz_rng_t *rng, const double *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    exact_buf[i] = 20.0 * gz_rng_uniform(rng) - 10.0;
    approx_buf[i] = exact_buf[i] + e[i];
  }
}

static double uniform_err(gz_rng_t *rng, double eb) {
  return eb * (2.0 * gz_rng_uniform(rng) - 1.0);
}

static gz_error_stats_params_t sum_params(unsigned nq) {
  gz_error_stats_params_t p = GZ_ERROR_STATS_PARAMS_INIT;
  p.eb = EB;
  p.nq = nq;
  return p;
}

static void print_stats(const char *name, const gz_error_stats_t *st) {
  char line[512];
  gz_error_stats_summary(st, line, sizeof line);
  printf("[%s] cover paper %.4f quant %.4f (pred %.4f, tol %.4f) KS p: normal %.3g "
         "pred %.3g paper %.3g AD p %.3g r1 %.3f\n  %s\n",
         name, st->paper.coverage, st->quantizer.coverage,
         st->quantizer.predicted_coverage, st->quantizer.tolerance, st->ks_normal_p,
         st->ks_pred_p, st->ks_paper_p, st->ad_normal_p, st->autocorr[0], line);
}

static int run(const gz_error_stats_params_t *p, const double *e, size_t n,
               gz_error_stats_t *st, gz_rng_t *rng) {
  make_pair(rng, e, n);
  gz_result_t rc = gz_error_stats(p, exact_buf, approx_buf, NULL, n, st);
  GZ_CHECK(rc == GZ_OK, "gz_error_stats: %s", gz_strerror(rc));
  return rc == GZ_OK;
}

static void no_false_flags(const char *name, const gz_error_stats_t *st) {
  GZ_CHECK(!(st->flags & GZ_STATS_FLAG_BIASED), "%s: not biased", name);
  GZ_CHECK(!(st->flags & GZ_STATS_FLAG_CORRELATED), "%s: not correlated", name);
  GZ_CHECK(fabs(st->autocorr[0]) < 0.02, "%s: r1 %.3g", name, st->autocorr[0]);
}

/* (1) Normal errors, sigma = sqrt(nq) eb / 3: the paper's own model. */
static void test_normal_errors(double *e) {
  gz_rng_t rng;
  gz_error_stats_t st;
  for (unsigned nq = 1; nq <= 4; nq += 3) {
    gz_rng_seed(&rng, 100 + nq);
    for (size_t i = 0; i < N_BIG; i++)
      e[i] = sqrt((double)nq) * EB / 3.0 * gz_rng_normal(&rng);
    gz_error_stats_params_t p = sum_params(nq);
    p.alpha = 1e-3;
    if (!run(&p, e, N_BIG, &st, &rng))
      return;
    print_stats(nq == 1 ? "normal nq=1" : "normal nq=4", &st);
    GZ_CHECK(st.count == N_BIG, "count");
    GZ_CHECK(st.paper.verdict == GZ_STATS_HOLDS, "paper holds on normal errors: %.4f",
             st.paper.coverage);
    GZ_CHECK(fabs(st.paper.coverage - 0.9545) < 0.005, "2-sigma coverage %.4f",
             st.paper.coverage);
    GZ_CHECK(st.ks_normal_p > 1e-3 && st.ad_normal_p > 1e-3 && st.ks_paper_p > 1e-3,
             "normal accepted: %.3g %.3g %.3g", st.ks_normal_p, st.ad_normal_p,
             st.ks_paper_p);
    GZ_CHECK(!(st.flags & GZ_STATS_FLAG_NOT_NORMAL), "not flagged not-normal");
    GZ_CHECK(st.ks_pred_p < 1e-6 && (st.flags & GZ_STATS_FLAG_NOT_PREDICTED),
             "uniform law rejected on normal errors: %.3g", st.ks_pred_p);
    GZ_CHECK(fabs(st.eb_over_sigma_i - 3.0) < 0.03, "eb / sigma_i = %.4f",
             st.eb_over_sigma_i);
    GZ_CHECK(fabs(st.kurtosis) < 0.1 && fabs(st.skewness) < 0.05, "moments");
    /* The quantizer interval is 2 eb sqrt(nq/3) = 3.46 sigma here: 99.95 %.
     * nq = 1: predicted 100 %, holds; nq = 4: predicted 95.75 %, overcovers. */
    GZ_CHECK(fabs(st.quantizer.coverage - 0.99947) < 0.001, "quantizer coverage %.5f",
             st.quantizer.coverage);
    GZ_CHECK(st.quantizer.verdict == (nq == 1 ? GZ_STATS_HOLDS : GZ_STATS_OVERCOVERS),
             "quantizer verdict %s", gz_stats_verdict_name(st.quantizer.verdict));
    /* |e| > eb = 3 sigma happens to normal errors (0.27 %) at nq = 1. */
    if (nq == 1)
      GZ_CHECK(st.bound_exceeded > 150 && st.bound_exceeded < 400 &&
                   (st.flags & GZ_STATS_FLAG_BOUND_EXCEEDED),
               "normal errors break the strict bound: %llu",
               (unsigned long long)st.bound_exceeded);
    no_false_flags("normal", &st);
  }
}

/* (2) Uniform on [-eb, eb], one quantization. */
static void test_uniform(double *e) {
  gz_rng_t rng;
  gz_error_stats_t st;
  gz_rng_seed(&rng, 2);
  for (size_t i = 0; i < N_BIG; i++)
    e[i] = uniform_err(&rng, EB);
  gz_error_stats_params_t p = sum_params(1);
  if (!run(&p, e, N_BIG, &st, &rng))
    return;
  print_stats("uniform nq=1", &st);
  /* +-2 eb / sqrt 3 holds the whole support: predicted and observed 100 %. */
  GZ_CHECK(st.quantizer.predicted_coverage == 1.0 && st.quantizer.coverage == 1.0,
           "uniform: quantizer interval covers all");
  GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS, "quantizer holds");
  /* The paper's +-(2/3) eb covers 2/3 of it. */
  GZ_CHECK(fabs(st.paper.coverage - 2.0 / 3.0) < 0.005, "paper coverage %.4f",
           st.paper.coverage);
  GZ_CHECK(st.paper.verdict == GZ_STATS_UNDERCOVERS, "paper undercovers");
  GZ_CHECK(st.ks_pred_p > 1e-3, "uniform law accepted: %.3g", st.ks_pred_p);
  GZ_CHECK((st.flags & GZ_STATS_FLAG_NOT_NORMAL) && st.ks_normal_p < 1e-6 &&
               st.ad_normal_p < 1e-6,
           "normal rejected: %.3g %.3g", st.ks_normal_p, st.ad_normal_p);
  GZ_CHECK(fabs(st.kurtosis + 1.2) < 0.02, "kurtosis %.4f", st.kurtosis);
  GZ_CHECK(fabs(st.eb_over_sigma_i - SQRT3) < 0.01, "eb / sigma_i = %.4f",
           st.eb_over_sigma_i);
  GZ_CHECK(st.bound_exceeded == 0 && st.max_abs <= EB, "bound");
  GZ_CHECK(fabs(st.quantizer.sigma - EB / SQRT3) < 1e-15 &&
               fabs(st.paper.sigma - EB / 3.0) < 1e-15,
           "predicted sigmas");
  no_false_flags("uniform", &st);
}

/* (3) Sums of nq uniforms: the quantizer model holds near 95.44 %, the
 * paper's interval covers ~74-75 %. Also nq = 40 (Edgeworth law) and a MEAN. */
static void test_uniform_sums(double *e) {
  static const unsigned nqs[] = {4, 8, 40};
  static const double paper_cov[] = {0.7407, 0.7466, 0.7505};
  gz_rng_t rng;
  gz_error_stats_t st;
  for (size_t k = 0; k < 3; k++) {
    unsigned nq = nqs[k];
    size_t n = nq == 40 ? 50000 : 200000;
    gz_rng_seed(&rng, 30 + nq);
    for (size_t i = 0; i < n; i++) {
      double s = 0.0;
      for (unsigned j = 0; j < nq; j++)
        s += uniform_err(&rng, EB);
      e[i] = s;
    }
    gz_error_stats_params_t p = sum_params(nq);
    if (!run(&p, e, n, &st, &rng))
      return;
    char name[32];
    snprintf(name, sizeof name, "uniform sum nq=%u", nq);
    print_stats(name, &st);
    GZ_CHECK(st.pred_law_exact == (nq <= 32), "exact law flag");
    GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS, "%s: quantizer holds", name);
    GZ_CHECK(fabs(st.quantizer.coverage - GZ_STATS_CLAIMED_COVERAGE) <=
                 st.quantizer.tolerance,
             "%s: quantizer coverage %.4f within %.4f of 0.9544", name,
             st.quantizer.coverage, st.quantizer.tolerance);
    GZ_CHECK(fabs(st.quantizer.coverage - st.quantizer.predicted_coverage) < 0.004,
             "%s: coverage %.4f vs exact %.4f", name, st.quantizer.coverage,
             st.quantizer.predicted_coverage);
    GZ_CHECK(fabs(st.paper.coverage - paper_cov[k]) < 0.006, "%s: paper covers %.4f",
             name, st.paper.coverage);
    GZ_CHECK(st.paper.verdict == GZ_STATS_UNDERCOVERS, "%s: paper undercovers", name);
    GZ_CHECK(st.ks_pred_p > 1e-3, "%s: Irwin-Hall accepted p %.3g", name, st.ks_pred_p);
    GZ_CHECK(st.ks_paper_p < 1e-6, "%s: paper normal rejected p %.3g", name,
             st.ks_paper_p);
    GZ_CHECK(fabs(st.eb_over_sigma_i - SQRT3) < 0.015, "%s: eb/sigma_i %.4f", name,
             st.eb_over_sigma_i);
    GZ_CHECK(fabs(st.kurtosis + 1.2 / nq) < 0.05, "%s: kurtosis %.4f", name, st.kurtosis);
    no_false_flags(name, &st);
  }

  /* MEAN over 48 snapshots of a sum of 4 quantizations: scale 1/48. */
  size_t n = 100000;
  gz_rng_seed(&rng, 48);
  for (size_t i = 0; i < n; i++) {
    double s = 0.0;
    for (unsigned j = 0; j < 4; j++)
      s += uniform_err(&rng, EB);
    e[i] = s / 48.0;
  }
  gz_error_stats_params_t p = sum_params(4);
  p.kind = GZ_STATS_MEAN;
  p.scale = 1.0 / 48.0;
  if (!run(&p, e, n, &st, &rng))
    return;
  print_stats("mean of 48, nq=4", &st);
  GZ_CHECK(fabs(st.quantizer.sigma - sqrt(4.0 / 3.0) * EB / 48.0) < 1e-18, "mean sigma");
  GZ_CHECK(fabs(st.paper.sigma - 2.0 * EB / 3.0 / 48.0) < 1e-18, "mean paper sigma");
  GZ_CHECK(fabs(st.strict_bound - 4.0 * EB / 48.0) < 1e-18, "mean strict bound");
  GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS &&
               st.paper.verdict == GZ_STATS_UNDERCOVERS,
           "mean verdicts");
  GZ_CHECK(st.ks_pred_p > 1e-3 && fabs(st.eb_over_sigma_i - SQRT3) < 0.02,
           "mean law: p %.3g", st.ks_pred_p);
}

/* (4) Biased: uniform + 0.3 eb. */
static void test_biased(double *e) {
  gz_rng_t rng;
  gz_error_stats_t st;
  gz_rng_seed(&rng, 4);
  for (size_t i = 0; i < N_BIG; i++)
    e[i] = uniform_err(&rng, EB) + 0.3 * EB;
  gz_error_stats_params_t p = sum_params(1);
  if (!run(&p, e, N_BIG, &st, &rng))
    return;
  print_stats("biased", &st);
  GZ_CHECK(st.flags & GZ_STATS_FLAG_BIASED, "biased flagged");
  GZ_CHECK(fabs(st.mean - 0.3 * EB) < 0.01 * EB, "mean %.4g", st.mean);
  GZ_CHECK(st.ks_pred_p < 1e-6 && (st.flags & GZ_STATS_FLAG_BOUND_EXCEEDED),
           "shifted law rejected, bound broken");
  GZ_CHECK(!(st.flags & GZ_STATS_FLAG_CORRELATED), "not correlated");
  char line[512];
  GZ_CHECK(gz_error_stats_summary(&st, line, sizeof line) == GZ_OK &&
               strstr(line, "biased"),
           "summary says biased: %s", line);

  /* A small bias (0.02 sigma_Q) is significant with 1e5 points but below the
   * 0.1 sigma_Q practical threshold: not flagged. */
  gz_rng_seed(&rng, 44);
  for (size_t i = 0; i < N_BIG; i++)
    e[i] = uniform_err(&rng, EB) + 0.02 * EB / SQRT3;
  if (!run(&p, e, N_BIG, &st, &rng))
    return;
  GZ_CHECK(!(st.flags & GZ_STATS_FLAG_BIASED), "tiny bias not flagged");
}

/* (5) AR(1) with rho = 0.8. */
static void test_correlated(double *e) {
  gz_rng_t rng;
  gz_error_stats_t st;
  const double rho = 0.8, sigma = EB / SQRT3;
  gz_rng_seed(&rng, 5);
  e[0] = sigma * gz_rng_normal(&rng);
  for (size_t i = 1; i < N_BIG; i++)
    e[i] = rho * e[i - 1] + sqrt(1.0 - rho * rho) * sigma * gz_rng_normal(&rng);
  gz_error_stats_params_t p = sum_params(1);
  if (!run(&p, e, N_BIG, &st, &rng))
    return;
  print_stats("AR(1) 0.8", &st);
  GZ_CHECK(st.flags & GZ_STATS_FLAG_CORRELATED, "correlated flagged");
  GZ_CHECK(fabs(st.autocorr[0] - 0.8) < 0.02, "r1 %.4f", st.autocorr[0]);
  GZ_CHECK(fabs(st.autocorr[1] - 0.64) < 0.03, "r2 %.4f", st.autocorr[1]);
  GZ_CHECK(fabs(st.autocorr[7] - pow(0.8, 8)) < 0.04, "r8 %.4f", st.autocorr[7]);
  /* tau = 1 + 2 sum_{l=1..8} 0.8^l = 7.66 */
  GZ_CHECK(fabs(st.count / st.n_eff - 7.66) < 0.8, "tau %.3f", st.count / st.n_eff);
  GZ_CHECK(!(st.flags & GZ_STATS_FLAG_BIASED), "correlation does not fake a bias");
  char line[512];
  gz_error_stats_summary(&st, line, sizeof line);
  GZ_CHECK(strstr(line, "correlated (r = 0.8") != NULL, "summary: %s", line);

  /* max_lag = 0: no autocorrelation, no flag. */
  p.max_lag = 0;
  gz_error_stats_t st0;
  gz_error_stats(&p, exact_buf, approx_buf, NULL, N_BIG, &st0);
  GZ_CHECK(st0.nlags == 0 && !(st0.flags & GZ_STATS_FLAG_CORRELATED) &&
               st0.n_eff == (double)st0.count,
           "max_lag 0");
}

/* (6) MAX and MIN by code-domain reduction: error = one quantization. */
static void test_max_min(void) {
  gz_rng_t rng;
  gz_error_stats_t st;
  static const unsigned ranks[] = {2, 3, 16};
  for (int kind = 0; kind < 2; kind++) {
    for (size_t k = 0; k < 3; k++) {
      unsigned P = ranks[k];
      gz_rng_seed(&rng, 60 + P + 10 * kind);
      for (size_t i = 0; i < N_BIG; i++) {
        double best = kind ? INFINITY : -INFINITY;
        long long qbest = kind ? LLONG_MAX : LLONG_MIN;
        for (unsigned r = 0; r < P; r++) {
          double x = 100.0 * gz_rng_uniform(&rng) - 50.0;
          long long q = llround(x / (2.0 * EB));
          if (kind ? x < best : x > best)
            best = x;
          if (kind ? q < qbest : q > qbest)
            qbest = q;
        }
        exact_buf[i] = best;
        approx_buf[i] = 2.0 * EB * (double)qbest;
      }
      gz_error_stats_params_t p = sum_params(P);
      p.kind = kind ? GZ_STATS_MIN : GZ_STATS_MAX;
      gz_result_t rc = gz_error_stats(&p, exact_buf, approx_buf, NULL, N_BIG, &st);
      GZ_CHECK(rc == GZ_OK, "max/min stats");
      char name[32];
      snprintf(name, sizeof name, "%s of %u", kind ? "min" : "max", P);
      print_stats(name, &st);
      double var = 2.0 - (P + 2.0) / pow(2.0, P);
      double paper_sigma = sqrt(var) * EB / 3.0;
      GZ_CHECK(fabs(st.paper.sigma - paper_sigma) < 1e-15, "%s: Theorem 2 sigma", name);
      GZ_CHECK(fabs(st.quantizer.sigma - EB / SQRT3) < 1e-15, "%s: one quantization",
               name);
      GZ_CHECK(st.strict_bound == EB && st.bound_exceeded == 0 && st.max_abs <= EB,
               "%s: |e| <= eb", name);
      GZ_CHECK(st.quantizer.predicted_coverage == 1.0 && st.quantizer.coverage == 1.0 &&
                   st.quantizer.verdict == GZ_STATS_HOLDS,
               "%s: quantizer holds", name);
      /* Uniform error: the paper's +-2 sigma_P covers 2 sigma_P / eb: 0.667
       * (P = 2), 0.782 (3), 0.943 (16, within the tolerance of 0.9544: the
       * paper's MAX interval is nearly right for many ranks). */
      double expect = 2.0 * paper_sigma / EB;
      GZ_CHECK(fabs(st.paper.coverage - expect) < 0.006, "%s: paper covers %.4f (%.4f)",
               name, st.paper.coverage, expect);
      gz_stats_verdict_t v = P < 16 ? GZ_STATS_UNDERCOVERS : GZ_STATS_HOLDS;
      GZ_CHECK(st.paper.verdict == v, "%s: paper %s", name, gz_stats_verdict_name(v));
      GZ_CHECK(st.ks_pred_p > 1e-3, "%s: uniform accepted %.3g", name, st.ks_pred_p);
      no_false_flags(name, &st);
    }
  }
}

/* Mask, non-finite points, fully masked and degenerate inputs. */
static void test_mask_degenerate(double *e) {
  gz_rng_t rng;
  gz_error_stats_t st, ref;
  size_t n = 20000;
  unsigned char *mask = calloc(n, 1);
  if (!GZ_CHECK(mask != NULL, "calloc"))
    return;
  gz_rng_seed(&rng, 7);
  for (size_t i = 0; i < n; i++)
    e[i] = uniform_err(&rng, EB);
  make_pair(&rng, e, n);
  for (size_t i = 0; i < n; i += 3)
    mask[i] = 1;
  exact_buf[1] = NAN;
  approx_buf[2] = INFINITY;
  gz_error_stats_params_t p = sum_params(1);
  GZ_CHECK(gz_error_stats(&p, exact_buf, approx_buf, mask, n, &st) == GZ_OK, "masked");
  size_t masked = (n + 2) / 3;
  GZ_CHECK(st.masked == masked && st.nonfinite == 2 && st.count == n - masked - 2,
           "masked %llu nonfinite %llu count %llu", (unsigned long long)st.masked,
           (unsigned long long)st.nonfinite, (unsigned long long)st.count);
  GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS && st.ks_pred_p > 1e-3, "masked law");
  /* Masked points' values do not matter. */
  for (size_t i = 0; i < n; i += 3)
    approx_buf[i] = 1e300;
  GZ_CHECK(gz_error_stats(&p, exact_buf, approx_buf, mask, n, &ref) == GZ_OK &&
               ref.mean == st.mean && ref.autocorr[0] == st.autocorr[0] &&
               ref.ks_pred_d == st.ks_pred_d,
           "masked values ignored");

  /* Fully masked: OK, nothing analysed. */
  memset(mask, 1, n);
  GZ_CHECK(gz_error_stats(&p, exact_buf, approx_buf, mask, n, &st) == GZ_OK &&
               st.count == 0 && st.paper.verdict == GZ_STATS_NA &&
               st.quantizer.verdict == GZ_STATS_NA && isnan(st.mean),
           "fully masked");
  char line[512];
  GZ_CHECK(gz_error_stats_summary(&st, line, sizeof line) == GZ_OK &&
               strstr(line, "no point"),
           "summary fully masked: %s", line);

  /* Lossless: all errors zero. nq = 4: both intervals overcover. */
  for (size_t i = 0; i < n; i++)
    approx_buf[i] = exact_buf[i] = (double)i;
  p.nq = 4;
  GZ_CHECK(gz_error_stats(&p, exact_buf, approx_buf, NULL, n, &st) == GZ_OK, "lossless");
  GZ_CHECK((st.flags & GZ_STATS_FLAG_DEGENERATE) && st.zero_count == n &&
               isnan(st.ks_normal_p) && st.max_abs == 0.0 &&
               st.quantizer.verdict == GZ_STATS_OVERCOVERS &&
               st.paper.verdict == GZ_STATS_OVERCOVERS && st.paper.coverage == 1.0 &&
               !(st.flags & GZ_STATS_FLAG_BIASED),
           "lossless classified: flags %#x", st.flags);
  char json[4096];
  size_t jlen = 0;
  GZ_CHECK(gz_error_stats_json(&st, json, sizeof json, &jlen) == GZ_OK &&
               strstr(json, "\"ks_p\":null") && strstr(json, "\"degenerate\""),
           "json degenerate: %s", json);
  free(mask);
}

static void test_args(void) {
  double x[4] = {0, 1, 2, 3}, y[4] = {0, 1, 2, 3};
  gz_error_stats_t st;
  gz_error_stats_params_t p = sum_params(2);
  GZ_CHECK(gz_error_stats(NULL, x, y, NULL, 4, &st) == GZ_ERR_ARG, "NULL params");
  GZ_CHECK(gz_error_stats(&p, NULL, y, NULL, 4, &st) == GZ_ERR_ARG, "NULL exact");
  GZ_CHECK(gz_error_stats(&p, x, NULL, NULL, 4, &st) == GZ_ERR_ARG, "NULL approx");
  GZ_CHECK(gz_error_stats(&p, x, y, NULL, 4, NULL) == GZ_ERR_ARG, "NULL stats");
  GZ_CHECK(gz_error_stats(&p, x, y, NULL, 0, &st) == GZ_ERR_ARG, "n = 0");
  gz_error_stats_params_t bad;
  double ebs[] = {0.0, -1e-3, NAN, INFINITY};
  for (int i = 0; i < 4; i++) {
    bad = p;
    bad.eb = ebs[i];
    GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "eb %g", ebs[i]);
  }
  bad = p;
  bad.nq = 0;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "nq 0");
  bad = p;
  bad.scale = 0.0;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "scale 0");
  bad = p;
  bad.max_lag = GZ_STATS_MAX_LAG + 1;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "max_lag");
  bad = p;
  bad.alpha = 0.0;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "alpha");
  bad = p;
  bad.coverage_tol = -0.1;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "tol");
  bad = p;
  bad.version = 99;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "version");
  bad = p;
  bad.kind = (gz_stats_kind_t)7;
  GZ_CHECK(gz_error_stats(&bad, x, y, NULL, 4, &st) == GZ_ERR_ARG, "kind");
  GZ_CHECK(strcmp(gz_stats_verdict_name(GZ_STATS_HOLDS), "holds") == 0 &&
               strcmp(gz_stats_kind_name(GZ_STATS_MEAN), "mean") == 0 &&
               strcmp(gz_stats_kind_name((gz_stats_kind_t)9), "unknown") == 0,
           "names");

  /* Tiny input works and says so. */
  y[1] += 1e-4;
  y[2] -= 2e-4;
  GZ_CHECK(gz_error_stats(&p, x, y, NULL, 4, &st) == GZ_OK &&
               (st.flags & GZ_STATS_FLAG_FEW_POINTS) && st.count == 4,
           "four points");

  /* Text outputs: capacity is reported, output always terminated. */
  char small[16], big[4096];
  GZ_CHECK(gz_error_stats_summary(&st, small, sizeof small) == GZ_ERR_CAPACITY &&
               strlen(small) == sizeof small - 1,
           "summary truncated");
  GZ_CHECK(gz_error_stats_summary(&st, small, 0) == GZ_ERR_ARG, "summary len 0");
  GZ_CHECK(gz_error_stats_summary(NULL, big, sizeof big) == GZ_ERR_ARG, "summary NULL");
  GZ_CHECK(gz_error_stats_json(&st, small, sizeof small, NULL) == GZ_ERR_CAPACITY &&
               strlen(small) == sizeof small - 1,
           "json truncated");
  size_t jlen = 0;
  GZ_CHECK(gz_error_stats_json(&st, big, sizeof big, &jlen) == GZ_OK &&
               jlen == strlen(big) && big[0] == '{' && big[jlen - 1] == '}',
           "json");

  /* Histogram arguments. */
  double dens[4];
  gz_error_hist_t h;
  memset(&h, 0, sizeof h);
  h.nbins = 4;
  h.density = dens;
  GZ_CHECK(gz_error_stats_histogram(&st, x, y, NULL, 4, &h) == GZ_OK, "hist ok");
  h.npoints = 1;
  GZ_CHECK(gz_error_stats_histogram(&st, x, y, NULL, 4, &h) == GZ_ERR_ARG,
           "hist npoints 1");
  h.npoints = 0;
  h.nbins = 0;
  GZ_CHECK(gz_error_stats_histogram(&st, x, y, NULL, 4, &h) == GZ_ERR_ARG,
           "hist nbins 0");
  h.nbins = 4;
  GZ_CHECK(gz_error_stats_histogram(NULL, x, y, NULL, 4, &h) == GZ_ERR_ARG &&
               gz_error_stats_histogram(&st, x, y, NULL, 0, &h) == GZ_ERR_ARG,
           "hist NULL / n 0");
}

/* Histogram and the three densities on a uniform sample. */
static void test_histogram(double *e) {
  enum { NB = 40, NP = 401 };
  gz_rng_t rng;
  gz_error_stats_t st;
  gz_rng_seed(&rng, 9);
  for (size_t i = 0; i < N_BIG; i++)
    e[i] = uniform_err(&rng, EB);
  gz_error_stats_params_t p = sum_params(1);
  if (!run(&p, e, N_BIG, &st, &rng))
    return;
  double dens[NB], xs[NP], fit[NP], paper[NP], pred[NP];
  gz_error_hist_t h = {0.0, 0.0, NB, dens, 0, 0, NP, xs, fit, paper, pred};
  GZ_CHECK(gz_error_stats_histogram(&st, exact_buf, approx_buf, NULL, N_BIG, &h) == GZ_OK,
           "histogram");
  /* Automatic range: 3.5 sigma of the widest law (here the fitted sigma
   * eb/sqrt3 ~ the quantizer's: 2.02 eb). */
  GZ_CHECK(h.x0 < -EB && h.x1 > EB && h.x0 == -h.x1 && h.below == 0 && h.above == 0,
           "range [%g, %g]", h.x0, h.x1);
  double w = (h.x1 - h.x0) / NB, mass = 0.0, worst = 0.0;
  for (int b = 0; b < NB; b++) {
    double lo = h.x0 + b * w, hi = lo + w;
    mass += dens[b] * w;
    if (lo >= -EB && hi <= EB) {
      double rel = fabs(dens[b] * 2.0 * EB - 1.0);
      worst = rel > worst ? rel : worst;
    } else if (hi <= -EB || lo >= EB) {
      GZ_CHECK(dens[b] == 0.0, "empty outside the support");
    }
  }
  GZ_CHECK(fabs(mass - 1.0) < 1e-12, "histogram mass %.15g", mass);
  GZ_CHECK(worst < 0.08, "uniform density flat: %.3f", worst);
  GZ_CHECK(xs[0] == h.x0 && fabs(xs[NP - 1] - h.x1) < 1e-18, "curve abscissae");
  double mid_pred = pred[NP / 2], mid_paper = paper[NP / 2];
  GZ_CHECK(fabs(mid_pred - 1.0 / (2.0 * EB)) < 1e-9, "pred pdf(0) %.6g", mid_pred);
  GZ_CHECK(fabs(mid_paper - 3.0 / (EB * 2.5066282746310002)) < 1e-6, "paper pdf(0) %.6g",
           mid_paper);
  double int_fit = 0.0, int_pred = 0.0, dx = xs[1] - xs[0];
  for (int j = 0; j + 1 < NP; j++) {
    int_fit += 0.5 * (fit[j] + fit[j + 1]) * dx;
    int_pred += 0.5 * (pred[j] + pred[j + 1]) * dx;
  }
  GZ_CHECK(fabs(int_fit - 1.0) < 1e-3 && fabs(int_pred - 1.0) < 5e-3,
           "pdf masses %.5f %.5f", int_fit, int_pred);

  /* Caller's range; points outside counted. */
  gz_error_hist_t h2 = {-0.5 * EB, 0.5 * EB, NB, dens, 0, 0, 0, NULL, NULL, NULL, NULL};
  GZ_CHECK(gz_error_stats_histogram(&st, exact_buf, approx_buf, NULL, N_BIG, &h2) ==
               GZ_OK,
           "histogram fixed range");
  double frac = (double)(h2.below + h2.above) / N_BIG;
  GZ_CHECK(fabs(frac - 0.5) < 0.01 && h2.x0 == -0.5 * EB, "outside fraction %.4f", frac);
}

/* p-values are calibrated: under the null, P(p < 0.05) ~ 5 %. */
static void test_calibration(double *e) {
  enum { REPS = 300, N = 2000 };
  gz_rng_t rng;
  gz_error_stats_t st;
  int rej_lil = 0, rej_ad = 0, rej_pred = 0, rej_paper = 0;
  gz_error_stats_params_t p = sum_params(3);
  p.max_lag = 1;
  gz_rng_seed(&rng, 11);
  for (int r = 0; r < REPS; r++) {
    for (size_t i = 0; i < N; i++)
      e[i] = EB / 3.0 * gz_rng_normal(&rng) * 1.7;
    make_pair(&rng, e, N);
    gz_error_stats(&p, exact_buf, approx_buf, NULL, N, &st);
    rej_lil += st.ks_normal_p < 0.05;
    rej_ad += st.ad_normal_p < 0.05;
    for (size_t i = 0; i < N; i++)
      e[i] = uniform_err(&rng, EB) + uniform_err(&rng, EB) + uniform_err(&rng, EB);
    make_pair(&rng, e, N);
    gz_error_stats(&p, exact_buf, approx_buf, NULL, N, &st);
    rej_pred += st.ks_pred_p < 0.05;
    for (size_t i = 0; i < N; i++)
      e[i] = sqrt(3.0) * EB / 3.0 * gz_rng_normal(&rng);
    make_pair(&rng, e, N);
    gz_error_stats(&p, exact_buf, approx_buf, NULL, N, &st);
    rej_paper += st.ks_paper_p < 0.05;
  }
  printf("[calibration] rejections at 5 %% of %d: lilliefors %d AD %d pred %d paper %d\n",
         REPS, rej_lil, rej_ad, rej_pred, rej_paper);
  /* Binomial(300, 0.05): mean 15, sd 3.8. */
  GZ_CHECK(rej_lil >= 5 && rej_lil <= 27, "lilliefors calibrated: %d", rej_lil);
  GZ_CHECK(rej_ad >= 5 && rej_ad <= 27, "AD calibrated: %d", rej_ad);
  GZ_CHECK(rej_pred >= 5 && rej_pred <= 27, "KS pred calibrated: %d", rej_pred);
  GZ_CHECK(rej_paper >= 5 && rej_paper <= 27, "KS paper calibrated: %d", rej_paper);
}

int main(void) {
  double *e = malloc(200000 * sizeof *e);
  exact_buf = malloc(200000 * sizeof *exact_buf);
  approx_buf = malloc(200000 * sizeof *approx_buf);
  if (!e || !exact_buf || !approx_buf) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  test_normal_errors(e);
  test_uniform(e);
  test_uniform_sums(e);
  test_biased(e);
  test_correlated(e);
  test_max_min();
  test_mask_degenerate(e);
  test_args();
  test_histogram(e);
  test_calibration(e);
  free(e);
  free(exact_buf);
  free(approx_buf);
  return gz_test_finish();
}
