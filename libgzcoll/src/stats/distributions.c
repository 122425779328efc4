/* distributions.c - laws and null distributions behind gz_error_stats().
 *
 * Normal law: Phi(z) = erfc(-z / sqrt 2) / 2 and its upper tail
 * erfc(z / sqrt 2) / 2, both accurate to a few ulps down to 1e-300.
 *
 * Sum of n independent uniforms on [-1, 1]: S = 2 X - n with X Irwin-Hall,
 *   F_X(x) = 1/n! sum_{k=0}^{floor x} (-1)^k C(n,k) (x - k)^n,
 *   f_X(x) = 1/(n-1)! sum_{k=0}^{floor x} (-1)^k C(n,k) (x - k)^(n-1),
 * so F_S(s) = F_X((s + n) / 2) and f_S(s) = f_X((s + n) / 2) / 2.
 * The alternating sum loses digits to cancellation as n grows. It is only
 * evaluated for x <= n/2 (F_X(x) = 1 - F_X(n - x), f_X(x) = f_X(n - x)),
 * which keeps the largest term below ~1e4 for n <= 32: against 60-digit
 * arithmetic the absolute error stays below 2e-12 for n <= 32
 * (GZ_DIST_USUM_EXACT_MAX). Beyond, the law is the first Edgeworth
 * expansion of the standardised sum z = S / sqrt(n/3) (skewness 0, excess
 * kurtosis k4 = -6 / (5 n)):
 *   F(z) ~ Phi(z) - phi(z) k4/24 (z^3 - 3z),
 *   f(z) ~ phi(z) [1 + k4/24 (z^4 - 6z^2 + 3)],
 * whose absolute CDF error is below 8e-6 at n = 33 and falls like 1/n^2: far
 * below what a KS test on 1e6 points can resolve (~1e-3).
 *
 * Kolmogorov distribution: P(K > l) = 2 sum_{j>=1} (-1)^(j-1) exp(-2 j^2 l^2)
 * for l >= 1.18, and 1 - sqrt(2 pi)/l sum_{j>=1} exp(-(2j-1)^2 pi^2/(8 l^2))
 * below (both series converge in a few terms there). KS p-value for a fully
 * specified law: P(K > (sqrt n + 0.12 + 0.11/sqrt n) D) (Stephens 1970),
 * accurate to ~1e-3 in p for n >= 35.
 *
 * Lilliefors (KS against a normal fitted to the same data): Stephens'
 * modified statistic K = D (sqrt n - 0.01 + 0.85 / sqrt n) has a nearly
 * n-free null law. Its upper-tail probabilities were tabulated for this
 * project by simulation (3e5 normal samples of n = 10000, mean and sigma
 * fitted by maximum likelihood, seeded splitmix64; quantile standard error
 * ~0.002 in K in the body, ~0.01 at the 0.1 % point) and are interpolated
 * linearly in log p; beyond the 0.1 % point log p is extrapolated linearly
 * in K^2 (a Gaussian-type tail; Dallal-Wilkinson's 1986 fit gives 7.5e-4
 * where the table gives 1e-3 there). Simulations at n = 100 and 1000 give K
 * quantiles 0.003-0.01 lower (p higher by at most ~0.02): the table is
 * meant for the large samples this module sees (n >= 1000).
 *
 * Anderson-Darling against a fitted normal (case 3): A*^2 = A^2 (1 + 0.75/n +
 * 2.25/n^2) and the piecewise p-value of D'Agostino & Stephens (1986):
 *   A* >= 0.6:        exp(1.2937 - 5.709 A* + 0.0186 A*^2)
 *   0.34 <= A* < 0.6: exp(0.9177 - 4.279 A* - 1.38 A*^2)
 *   0.2 <= A* < 0.34: 1 - exp(-8.318 + 42.796 A* - 59.938 A*^2)
 *   A* < 0.2:         1 - exp(-13.436 + 101.14 A* - 223.73 A*^2)
 * and 0 for A* >= 153, where the first fit's exponent reaches its minimum
 * (p ~ 1e-190) and would turn up again.
 */
#include "stats/distributions.h"

#include <math.h>

#define GZ_SQRT2 1.41421356237309504880
#define GZ_SQRT2PI 2.50662827463100050242
#define GZ_PI 3.14159265358979323846

double gz_dist_normal_pdf(double z) { return exp(-0.5 * z * z) / GZ_SQRT2PI; }

double gz_dist_normal_cdf(double z) { return 0.5 * erfc(-z / GZ_SQRT2); }

double gz_dist_normal_sf(double z) { return 0.5 * erfc(z / GZ_SQRT2); }

static double clamp01(double p) { return p < 0.0 ? 0.0 : (p > 1.0 ? 1.0 : p); }

static double ipow(double x, unsigned e) {
  double r = 1.0;
  while (e) {
    if (e & 1u)
      r *= x;
    x *= x;
    e >>= 1;
  }
  return r;
}

/* sum_{k=0}^{floor x} (-1)^k C(n,k) (x - k)^e / denom, for 0 <= x <= n/2. */
static double irwin_hall_sum(unsigned n, unsigned e, double x, double denom) {
  unsigned kmax = (unsigned)floor(x);
  double c = 1.0, sum = 0.0;
  for (unsigned k = 0; k <= kmax && k <= n; k++) {
    double term = c * ipow(x - (double)k, e) / denom;
    sum += (k & 1u) ? -term : term;
    c = c * (double)(n - k) / (double)(k + 1);
  }
  return sum;
}

static double factorial(unsigned n) {
  double f = 1.0;
  for (unsigned i = 2; i <= n; i++)
    f *= (double)i;
  return f;
}

double gz_dist_usum_cdf(unsigned n, double s) {
  double dn = (double)n;
  if (n == 0)
    return s >= 0.0 ? 1.0 : 0.0;
  if (s <= -dn)
    return 0.0;
  if (s >= dn)
    return 1.0;
  if (n > GZ_DIST_USUM_EXACT_MAX) {
    double z = s / sqrt(dn / 3.0), k4 = -1.2 / dn;
    return clamp01(gz_dist_normal_cdf(z) -
                   gz_dist_normal_pdf(z) * k4 / 24.0 * (z * z * z - 3.0 * z));
  }
  double x = 0.5 * (s + dn);
  if (x > 0.5 * dn)
    return clamp01(1.0 - irwin_hall_sum(n, n, dn - x, factorial(n)));
  return clamp01(irwin_hall_sum(n, n, x, factorial(n)));
}

double gz_dist_usum_pdf(unsigned n, double s) {
  double dn = (double)n;
  if (n == 0 || s < -dn || s > dn)
    return 0.0;
  if (n > GZ_DIST_USUM_EXACT_MAX) {
    double sd = sqrt(dn / 3.0), z = s / sd, k4 = -1.2 / dn, z2 = z * z;
    double f = gz_dist_normal_pdf(z) * (1.0 + k4 / 24.0 * (z2 * z2 - 6.0 * z2 + 3.0));
    return f > 0.0 ? f / sd : 0.0;
  }
  double x = 0.5 * (s + dn);
  if (x > 0.5 * dn)
    x = dn - x;
  double f = 0.5 * irwin_hall_sum(n, n - 1, x, factorial(n - 1));
  return f > 0.0 ? f : 0.0;
}

double gz_dist_kolmogorov_sf(double lambda) {
  if (!(lambda > 0.2))
    return 1.0; /* P(K <= 0.2) < 1e-20 */
  if (lambda < 1.18) {
    double sum = 0.0, a = GZ_PI * GZ_PI / (8.0 * lambda * lambda);
    for (int j = 1; j < 100; j++) {
      double odd = (double)(2 * j - 1), term = exp(-odd * odd * a);
      sum += term;
      if (term < 1e-17 * sum)
        break;
    }
    return clamp01(1.0 - GZ_SQRT2PI / lambda * sum);
  }
  double sum = 0.0, sign = 1.0;
  for (int j = 1; j < 100; j++) {
    double term = exp(-2.0 * (double)j * (double)j * lambda * lambda);
    sum += sign * term;
    sign = -sign;
    if (term < 1e-17 * sum || term < 1e-300)
      break;
  }
  return clamp01(2.0 * sum);
}

double gz_dist_ks_pvalue(double d, size_t n) {
  if (n == 0 || !(d >= 0.0))
    return 1.0;
  double en = sqrt((double)n);
  return gz_dist_kolmogorov_sf((en + 0.12 + 0.11 / en) * d);
}

/* Upper-tail probabilities of Stephens' modified Lilliefors statistic
 * (see the file comment): K at which P(K_null > K) = p. */
static const struct {
  double k, p;
} lilliefors_table[] = {
    {0.3269, 0.999}, {0.3584, 0.995}, {0.3747, 0.99},  {0.3954, 0.98}, {0.4091, 0.97},
    {0.4289, 0.95},  {0.4625, 0.90},  {0.4874, 0.85},  {0.5089, 0.80}, {0.5282, 0.75},
    {0.5463, 0.70},  {0.5638, 0.65},  {0.5811, 0.60},  {0.5985, 0.55}, {0.6164, 0.50},
    {0.6349, 0.45},  {0.6546, 0.40},  {0.6753, 0.35},  {0.6978, 0.30}, {0.7228, 0.25},
    {0.7517, 0.20},  {0.7870, 0.15},  {0.8336, 0.10},  {0.9067, 0.05}, {0.9764, 0.025},
    {1.0580, 0.01},  {1.1165, 0.005}, {1.2414, 0.001},
};

double gz_dist_lilliefors_pvalue(double d, size_t n) {
  const size_t m = sizeof lilliefors_table / sizeof lilliefors_table[0];
  if (n == 0 || !(d >= 0.0))
    return 1.0;
  double en = sqrt((double)n), k = d * (en - 0.01 + 0.85 / en);
  if (k <= lilliefors_table[0].k)
    return 1.0 - (1.0 - lilliefors_table[0].p) * k / lilliefors_table[0].k;
  for (size_t i = 1; i < m; i++) {
    if (k <= lilliefors_table[i].k) {
      double k0 = lilliefors_table[i - 1].k, k1 = lilliefors_table[i].k;
      double l0 = log(lilliefors_table[i - 1].p), l1 = log(lilliefors_table[i].p);
      return exp(l0 + (l1 - l0) * (k - k0) / (k1 - k0));
    }
  }
  /* Tail: log p linear in K^2 through the last two points. */
  double k0 = lilliefors_table[m - 2].k, k1 = lilliefors_table[m - 1].k;
  double l0 = log(lilliefors_table[m - 2].p), l1 = log(lilliefors_table[m - 1].p);
  return exp(l1 + (l1 - l0) / (k1 * k1 - k0 * k0) * (k * k - k1 * k1));
}

double gz_dist_ad_normal_pvalue(double a2, size_t n) {
  if (n == 0 || !(a2 >= 0.0))
    return 1.0;
  double dn = (double)n, z = a2 * (1.0 + 0.75 / dn + 2.25 / (dn * dn)), p;
  if (z >= 153.0)
    p = 0.0; /* the fit's exponent turns up past its minimum (~1e-190) */
  else if (z >= 0.6)
    p = exp(1.2937 - 5.709 * z + 0.0186 * z * z);
  else if (z >= 0.34)
    p = exp(0.9177 - 4.279 * z - 1.38 * z * z);
  else if (z >= 0.2)
    p = 1.0 - exp(-8.318 + 42.796 * z - 59.938 * z * z);
  else
    p = 1.0 - exp(-13.436 + 101.14 * z - 223.73 * z * z);
  return clamp01(p);
}
