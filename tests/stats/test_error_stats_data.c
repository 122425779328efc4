/* test_error_stats_data.c - the error model on real data: a vertical stack
 * of the 24 soda-lakes shots (96 channels x 2048 samples each) as P ranks
 * would compute it with one quantization per rank and code-domain reduction
 * (DESIGN-NOTES "Reducing codes instead of floats").
 *
 * For P = 2, 4, 8: rank r sums its 24/P shots in double, quantizes the
 * partial sum with round to nearest at eb = e / P (e = 1e-3; strict SUM
 * budget): q = llround(x / 2eb). The codes are summed exactly and the stack
 * is 2eb * sum q. Checked: every |error| <= P eb; the quantizer model's
 * coverage of +-2 sqrt(P) eb / sqrt 3 is within its tolerance of 0.9544 at
 * P = 4 and 8 and holds at every P; the paper's interval covers < 0.85.
 * The same for the MEAN (scale 1/24) and for MAX (eb = e, one quantization
 * of the winning value). */
#include "gz_test.h"

#include "gzcoll.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOTS 24
#define CHANNELS 96
#define SAMPLES 2048
#define NPTS ((size_t)CHANNELS * SAMPLES)
#define E_BOUND 1e-3

static float le_float(const unsigned char *b) {
  uint32_t u =
      (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void report(const char *name, const gz_error_stats_t *st) {
  char line[512];
  gz_error_stats_summary(st, line, sizeof line);
  printf("[%s] count %llu zero %llu max|e| %.4g (bound %.4g) cover paper %.4f quant "
         "%.4f (pred %.4f, tol %.4f) KS p: pred %.3g normal %.3g r1 %.3f eb/sigma_i "
         "%.3f\n  %s\n",
         name, (unsigned long long)st->count, (unsigned long long)st->zero_count,
         st->max_abs, st->strict_bound, st->paper.coverage, st->quantizer.coverage,
         st->quantizer.predicted_coverage, st->quantizer.tolerance, st->ks_pred_p,
         st->ks_normal_p, st->autocorr[0], st->eb_over_sigma_i, line);
}

static void stack_sum(const float *shots, double *exact, double *approx, int P) {
  const double eb = E_BOUND / P;
  const int per = SHOTS / P;
  gz_error_stats_params_t p = GZ_ERROR_STATS_PARAMS_INIT;
  gz_error_stats_t st;
  size_t over = 0;
  double worst = 0.0;
  for (size_t j = 0; j < NPTS; j++) {
    double total = 0.0;
    long long codes = 0;
    for (int r = 0; r < P; r++) {
      double partial = 0.0;
      for (int s = r * per; s < (r + 1) * per; s++)
        partial += shots[(size_t)s * NPTS + j];
      total += partial;
      codes += llround(partial / (2.0 * eb));
    }
    exact[j] = total;
    approx[j] = 2.0 * eb * (double)codes;
    double err = fabs(approx[j] - exact[j]);
    worst = err > worst ? err : worst;
    over += err > P * eb;
  }
  GZ_CHECK(over == 0, "P=%d: %zu points over P eb (max %.6g, bound %.6g)", P, over, worst,
           P * eb);

  p.kind = GZ_STATS_SUM;
  p.eb = eb;
  p.nq = (unsigned)P;
  gz_result_t rc = gz_error_stats(&p, exact, approx, NULL, NPTS, &st);
  if (!GZ_CHECK(rc == GZ_OK, "stats: %s", gz_strerror(rc)))
    return;
  char name[32];
  snprintf(name, sizeof name, "soda sum P=%d", P);
  report(name, &st);
  GZ_CHECK(st.count == NPTS && st.bound_exceeded == 0, "%s: strict bound", name);
  GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS, "%s: quantizer model holds (%.4f)",
           name, st.quantizer.coverage);
  if (P >= 4)
    GZ_CHECK(fabs(st.quantizer.coverage - GZ_STATS_CLAIMED_COVERAGE) <=
                 st.quantizer.tolerance,
             "%s: quantizer coverage %.4f within %.4f of 0.9544", name,
             st.quantizer.coverage, st.quantizer.tolerance);
  GZ_CHECK(st.paper.coverage < 0.85 && st.paper.verdict == GZ_STATS_UNDERCOVERS,
           "%s: paper covers %.4f", name, st.paper.coverage);
  GZ_CHECK(!(st.flags & GZ_STATS_FLAG_BIASED), "%s: unbiased", name);
  /* Real errors are a little narrower than uniform (3 % exact zeros, quiet
   * samples within a step of zero): eb / sigma_i ~ 1.80-1.84, not 1.73. */
  GZ_CHECK(fabs(st.eb_over_sigma_i / sqrt(3.0) - 1.0) < 0.1, "%s: eb/sigma_i %.4f", name,
           st.eb_over_sigma_i);

  /* The stacked MEAN: same errors divided by 24. */
  for (size_t j = 0; j < NPTS; j++) {
    exact[j] /= SHOTS;
    approx[j] /= SHOTS;
  }
  p.kind = GZ_STATS_MEAN;
  p.scale = 1.0 / SHOTS;
  gz_error_stats_t sm;
  rc = gz_error_stats(&p, exact, approx, NULL, NPTS, &sm);
  GZ_CHECK(rc == GZ_OK && sm.quantizer.verdict == GZ_STATS_HOLDS &&
               fabs(sm.quantizer.coverage - st.quantizer.coverage) < 1e-3 &&
               sm.bound_exceeded == 0,
           "P=%d mean: coverage %.4f", P, sm.quantizer.coverage);
  if (P == 4) {
    char json[4096];
    GZ_CHECK(gz_error_stats_json(&st, json, sizeof json, NULL) == GZ_OK, "json");
    printf("error_stats (sum, P=4): %s\n", json);
  }
}

static void stack_max(const float *shots, double *exact, double *approx, int P) {
  const double eb = E_BOUND;
  const int per = SHOTS / P;
  for (size_t j = 0; j < NPTS; j++) {
    double best = -INFINITY;
    long long qbest = LLONG_MIN;
    for (int r = 0; r < P; r++) {
      double local = -INFINITY;
      for (int s = r * per; s < (r + 1) * per; s++) {
        double v = shots[(size_t)s * NPTS + j];
        local = v > local ? v : local;
      }
      long long q = llround(local / (2.0 * eb));
      best = local > best ? local : best;
      qbest = q > qbest ? q : qbest;
    }
    exact[j] = best;
    approx[j] = 2.0 * eb * (double)qbest;
  }
  gz_error_stats_params_t p = GZ_ERROR_STATS_PARAMS_INIT;
  gz_error_stats_t st;
  p.kind = GZ_STATS_MAX;
  p.eb = eb;
  p.nq = (unsigned)P;
  gz_result_t rc = gz_error_stats(&p, exact, approx, NULL, NPTS, &st);
  if (!GZ_CHECK(rc == GZ_OK, "stats max"))
    return;
  char name[32];
  snprintf(name, sizeof name, "soda max P=%d", P);
  report(name, &st);
  GZ_CHECK(st.bound_exceeded == 0 && st.max_abs <= eb, "%s: |e| <= eb", name);
  GZ_CHECK(st.quantizer.verdict == GZ_STATS_HOLDS, "%s: quantizer holds", name);
}

int main(void) {
  const char *path =
      gz_test_require_data("seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw");
  size_t size = 0;
  unsigned char *raw = gz_test_read_file(path, &size);
  if (!GZ_CHECK(raw && size == SHOTS * NPTS * 4, "read %s (%zu bytes)", path, size)) {
    free(raw);
    return gz_test_finish();
  }
  float *shots = malloc(SHOTS * NPTS * sizeof *shots);
  double *exact = malloc(NPTS * sizeof *exact), *approx = malloc(NPTS * sizeof *approx);
  if (!shots || !exact || !approx) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < SHOTS * NPTS; i++)
    shots[i] = le_float(raw + 4 * i);
  free(raw);
  for (int P = 2; P <= 8; P *= 2)
    stack_sum(shots, exact, approx, P);
  for (int P = 2; P <= 8; P *= 2)
    stack_max(shots, exact, approx, P);
  free(shots);
  free(exact);
  free(approx);
  return gz_test_finish();
}
