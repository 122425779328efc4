/* metrics.h - quality metrics in the SZ3 / Z-checker definitions. */
#ifndef GZ_METRICS_H
#define GZ_METRICS_H

#include <stddef.h>
#include <stdio.h>

typedef struct gz_quality {
  size_t count; /* points compared (unmasked, finite in the reference) */
  double value_min, value_max, range; /* of the reference */
  double max_abs_error;
  double max_rel_error; /* max_abs_error / range */
  double mean_error;    /* signed mean of approx - exact */
  double mse, rmse;
  double psnr;               /* 20 log10(range) - 10 log10(mse); +inf when mse == 0 */
  double nrmse;              /* rmse / range */
  size_t nonfinite_mismatch; /* reference not finite and approx bits differ */
} gz_quality_t;

/* Compare approx with exact over n points; mask may be NULL (nonzero =
 * skip). A point where exact is not finite counts only as a mismatch when
 * approx is not the same special. */
void gz_quality_compute(const double *exact, const double *approx,
                        const unsigned char *mask, size_t n, gz_quality_t *q);

/* Mean SSIM over 7x7 windows (step 1 for small fields, strided above 1e6
 * points) of a rows x cols field, with the usual constants K1 = 0.01,
 * K2 = 0.03 and L = the reference range. Masked windows are skipped.
 * Returns NaN when no window is valid. */
double gz_ssim_2d(const double *exact, const double *approx, const unsigned char *mask,
                  size_t rows, size_t cols);

#endif
