/* test_stats_dist.c - the distribution functions behind gz_error_stats():
 * closed-form values, internal consistency (the density integrates to the
 * CDF), the exact/Edgeworth switch, and published critical values. */
#include "gz_test.h"

#include "stats/distributions.h"

#include <math.h>
#include <stdio.h>

#define CLOSE(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_normal(void) {
  GZ_CHECK(CLOSE(gz_dist_normal_cdf(0.0), 0.5, 1e-15), "Phi(0)");
  GZ_CHECK(CLOSE(gz_dist_normal_cdf(2.0) - gz_dist_normal_cdf(-2.0), 0.9544997361036416,
                 1e-14),
           "P(|Z| <= 2)");
  GZ_CHECK(CLOSE(gz_dist_normal_cdf(1.959963984540054), 0.975, 1e-14), "Phi(1.96)");
  /* Upper tail keeps relative accuracy far out. */
  double sf = gz_dist_normal_sf(10.0);
  GZ_CHECK(CLOSE(sf / 7.619853024160527e-24, 1.0, 1e-12), "sf(10) = %.17g", sf);
  GZ_CHECK(CLOSE(gz_dist_normal_pdf(0.0), 0.3989422804014327, 1e-15), "phi(0)");
}

/* Simpson integral of the usum density over [-n, s]. */
static double integrate_pdf(unsigned n, double s) {
  const int m = 20000; /* even */
  double a = -(double)n, h = (s - a) / m, sum = 0.0;
  for (int i = 0; i <= m; i++) {
    double w = (i == 0 || i == m) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    sum += w * gz_dist_usum_pdf(n, a + h * i);
  }
  return sum * h / 3.0;
}

static void test_usum(void) {
  /* n = 1: uniform on [-1, 1]. */
  GZ_CHECK(CLOSE(gz_dist_usum_cdf(1, 0.5), 0.75, 1e-15), "U cdf");
  GZ_CHECK(CLOSE(gz_dist_usum_pdf(1, 0.3), 0.5, 1e-15), "U pdf");
  GZ_CHECK(gz_dist_usum_cdf(1, -1.5) == 0.0 && gz_dist_usum_cdf(1, 1.5) == 1.0,
           "support");
  /* n = 2: triangle on [-2, 2]. */
  GZ_CHECK(CLOSE(gz_dist_usum_cdf(2, 1.0), 0.875, 1e-15), "triangle cdf(1)");
  GZ_CHECK(CLOSE(gz_dist_usum_cdf(2, 0.0), 0.5, 1e-15), "triangle cdf(0)");
  GZ_CHECK(CLOSE(gz_dist_usum_pdf(2, 1.0), 0.25, 1e-15), "triangle pdf(1)");
  /* n = 3: Irwin-Hall F(1) = 1/6 at s = 2*1 - 3. */
  GZ_CHECK(CLOSE(gz_dist_usum_cdf(3, -1.0), 1.0 / 6.0, 1e-15), "IH3");
  /* Exact predicted coverages quoted in error_stats.c. */
  double c4 = 2.0 * gz_dist_usum_cdf(4, 2.0 * sqrt(4.0 / 3.0)) - 1.0;
  double p4 = 2.0 * gz_dist_usum_cdf(4, 2.0 / 3.0 * 2.0) - 1.0;
  GZ_CHECK(CLOSE(c4, 0.9574537660891906, 1e-12), "coverage nq=4: %.16g", c4);
  GZ_CHECK(CLOSE(p4, 0.7407407407407407, 1e-12), "paper coverage nq=4: %.16g", p4);

  /* The density integrates to the CDF, the CDF is monotone and symmetric,
   * on both sides of the exact/Edgeworth switch. */
  unsigned ns[] = {1, 2, 3, 5, 8, 13, 20, 32, 33, 48, 100};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    unsigned n = ns[k];
    double sd = sqrt(n / 3.0), prev = 0.0, worst_sym = 0.0;
    int monotone = 1;
    for (int i = -60; i <= 60; i++) {
      double s = sd * i / 15.0, f = gz_dist_usum_cdf(n, s);
      if (f < prev)
        monotone = 0;
      prev = f;
      double sym = fabs(f + gz_dist_usum_cdf(n, -s) - 1.0);
      worst_sym = sym > worst_sym ? sym : worst_sym;
    }
    GZ_CHECK(monotone, "cdf monotone n=%u", n);
    GZ_CHECK(worst_sym < 1e-11, "cdf symmetric n=%u (%.3g)", n, worst_sym);
    double s = 0.7 * sd, integ = integrate_pdf(n, s), cdf = gz_dist_usum_cdf(n, s);
    GZ_CHECK(CLOSE(integ, cdf, n <= GZ_DIST_USUM_EXACT_MAX ? 1e-7 : 2e-5),
             "int pdf = cdf n=%u: %.12g vs %.12g", n, integ, cdf);
    GZ_CHECK(CLOSE(integrate_pdf(n, (double)n), 1.0, 1e-6), "pdf mass n=%u", n);
  }
  /* Exact (n = 32) and Edgeworth (n = 33) both approach the normal. */
  for (unsigned n = 32; n <= 33; n++) {
    double sd = sqrt(n / 3.0), worst = 0.0;
    for (int i = -40; i <= 40; i++) {
      double z = i / 10.0, d = fabs(gz_dist_usum_cdf(n, z * sd) - gz_dist_normal_cdf(z));
      worst = d > worst ? d : worst;
    }
    GZ_CHECK(worst < 2e-3 && worst > 1e-4, "n=%u vs normal: %.3g", n, worst);
  }
}

static void test_kolmogorov(void) {
  /* Asymptotic critical values: 10 %, 5 %, 1 %. */
  GZ_CHECK(CLOSE(gz_dist_kolmogorov_sf(1.2238), 0.10, 2e-4), "Q(1.2238)");
  GZ_CHECK(CLOSE(gz_dist_kolmogorov_sf(1.3581), 0.05, 2e-4), "Q(1.3581)");
  GZ_CHECK(CLOSE(gz_dist_kolmogorov_sf(1.6276), 0.01, 2e-4), "Q(1.6276)");
  GZ_CHECK(CLOSE(gz_dist_kolmogorov_sf(0.8276), 0.50, 2e-4), "median");
  /* Both series agree at the switch (slope there ~ -0.58: 2e-9 apart in
   * lambda gives 1.2e-9 in Q); 60-digit reference 0.12345380942976568. */
  double a = gz_dist_kolmogorov_sf(1.18 - 1e-9), b = gz_dist_kolmogorov_sf(1.18 + 1e-9);
  GZ_CHECK(CLOSE(a, 0.12345380942976568, 1e-9) && CLOSE(b, 0.12345380942976568, 1e-9),
           "series switch continuous: %.17g %.17g", a, b);
  GZ_CHECK(gz_dist_kolmogorov_sf(0.1) == 1.0 && gz_dist_kolmogorov_sf(10.0) < 1e-80,
           "extremes");
  GZ_CHECK(CLOSE(gz_dist_ks_pvalue(1.3581 / sqrt(1e6), 1000000), 0.05, 5e-4),
           "ks p-value large n");
}

static void test_lilliefors_ad(void) {
  /* Monotone in d, 1 at 0, small far out. */
  size_t n = 20000;
  double prev = 1.0;
  int monotone = 1;
  for (int i = 0; i <= 300; i++) {
    double p = gz_dist_lilliefors_pvalue(i * 0.005 / sqrt((double)n), n);
    if (p > prev + 1e-15)
      monotone = 0;
    prev = p;
  }
  GZ_CHECK(monotone, "lilliefors monotone");
  GZ_CHECK(gz_dist_lilliefors_pvalue(0.0, n) == 1.0, "lilliefors p(0)");
  GZ_CHECK(gz_dist_lilliefors_pvalue(3.0 / sqrt((double)n), n) < 1e-20,
           "lilliefors tail");
  /* Stephens' asymptotic points of the modified statistic: 5 % at ~0.895,
   * 1 % at ~1.035 (ours, simulated at n = 10000, are slightly larger). */
  double k5 = 0.90 / sqrt((double)n), k1 = 1.05 / sqrt((double)n);
  double p5 = gz_dist_lilliefors_pvalue(k5, n), p1 = gz_dist_lilliefors_pvalue(k1, n);
  GZ_CHECK(p5 > 0.04 && p5 < 0.065, "lilliefors 5 %%: %.4g", p5);
  GZ_CHECK(p1 > 0.008 && p1 < 0.014, "lilliefors 1 %%: %.4g", p1);
  /* Anderson-Darling case 3 critical values: 0.752 (5 %), 1.035 (1 %). */
  double a5 = gz_dist_ad_normal_pvalue(0.752, 100000);
  double a1 = gz_dist_ad_normal_pvalue(1.035, 100000);
  GZ_CHECK(CLOSE(a5, 0.05, 0.003), "AD 5 %%: %.4g", a5);
  GZ_CHECK(CLOSE(a1, 0.01, 0.001), "AD 1 %%: %.4g", a1);
  GZ_CHECK(gz_dist_ad_normal_pvalue(0.05, 100000) > 0.999, "AD small");
  prev = 1.0;
  monotone = 1;
  for (int i = 0; i <= 20000; i++) {
    double p = gz_dist_ad_normal_pvalue(i * 0.05, 100000);
    if (p > prev + 1e-12)
      monotone = 0;
    prev = p;
  }
  GZ_CHECK(monotone && prev == 0.0, "AD p monotone down to 0");
}

int main(void) {
  test_normal();
  test_usum();
  test_kolmogorov();
  test_lilliefors_ad();
  return gz_test_finish();
}
