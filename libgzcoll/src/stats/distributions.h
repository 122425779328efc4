/* distributions.h - private: the laws and null distributions used by
 * error_stats.c (see distributions.c for formulas, accuracy and sources). */
#ifndef GZ_STATS_DISTRIBUTIONS_H
#define GZ_STATS_DISTRIBUTIONS_H

#include <stddef.h>

/* Largest n for which the sum-of-uniforms law is evaluated exactly (Irwin-Hall
 * alternating sum); beyond it an Edgeworth-corrected normal is used. */
#define GZ_DIST_USUM_EXACT_MAX 32u

/* Standard normal: density, CDF and upper tail (accurate in both tails). */
double gz_dist_normal_pdf(double z);
double gz_dist_normal_cdf(double z);
double gz_dist_normal_sf(double z);

/* Law of S = U_1 + ... + U_n, U_k independent uniform on [-1, 1]
 * (n >= 1): CDF and density at s. */
double gz_dist_usum_cdf(unsigned n, double s);
double gz_dist_usum_pdf(unsigned n, double s);

/* Kolmogorov distribution: P(K > lambda), K = sup |Brownian bridge|. */
double gz_dist_kolmogorov_sf(double lambda);

/* p-value of a one-sample KS statistic d from n points against a fully
 * specified continuous law. */
double gz_dist_ks_pvalue(double d, size_t n);

/* p-value of a KS statistic d from n points against a normal whose mean and
 * variance were estimated from the same points (Lilliefors test). */
double gz_dist_lilliefors_pvalue(double d, size_t n);

/* p-value of an Anderson-Darling statistic a2 from n points against a normal
 * with estimated mean and variance (case 3). */
double gz_dist_ad_normal_pvalue(double a2, size_t n);

#endif
