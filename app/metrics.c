/* metrics.c - see metrics.h. Definitions follow SZ3 / Z-checker: value range
 * of the reference, PSNR = 20 log10(range) - 10 log10(mse), NRMSE =
 * rmse / range, max relative error = max abs error / range. */
#include "metrics.h"

#include <math.h>
#include <string.h>

void gz_quality_compute(const double *exact, const double *approx,
                        const unsigned char *mask, size_t n, gz_quality_t *q) {
  double lo = INFINITY, hi = -INFINITY, sum_err = 0, sum_sq = 0, max_err = 0;
  size_t count = 0, mismatch = 0;
  for (size_t i = 0; i < n; i++) {
    if (mask && mask[i])
      continue;
    if (!isfinite(exact[i])) {
      mismatch += memcmp(&exact[i], &approx[i], sizeof(double)) != 0 &&
                  !(isnan(exact[i]) && isnan(approx[i]));
      continue;
    }
    double e = approx[i] - exact[i];
    lo = exact[i] < lo ? exact[i] : lo;
    hi = exact[i] > hi ? exact[i] : hi;
    sum_err += e;
    sum_sq += e * e;
    if (!(fabs(e) <= max_err))
      max_err = isnan(e) ? INFINITY : fabs(e);
    count++;
  }
  memset(q, 0, sizeof *q);
  q->count = count;
  q->nonfinite_mismatch = mismatch;
  if (!count)
    return;
  q->value_min = lo;
  q->value_max = hi;
  q->range = hi - lo;
  q->max_abs_error = max_err;
  q->mean_error = sum_err / (double)count;
  q->mse = sum_sq / (double)count;
  q->rmse = sqrt(q->mse);
  q->max_rel_error = q->range > 0 ? max_err / q->range : (max_err > 0 ? INFINITY : 0);
  q->nrmse = q->range > 0 ? q->rmse / q->range : (q->rmse > 0 ? INFINITY : 0);
  q->psnr = q->mse > 0 ? 20 * log10(q->range) - 10 * log10(q->mse) : INFINITY;
}

double gz_ssim_2d(const double *exact, const double *approx, const unsigned char *mask,
                  size_t rows, size_t cols) {
  const size_t win = 7;
  size_t stride = rows * cols > 1000000 ? 4 : 1, windows = 0;
  double lo = INFINITY, hi = -INFINITY, c1, c2, total = 0;
  for (size_t i = 0; i < rows * cols; i++) {
    if ((mask && mask[i]) || !isfinite(exact[i]))
      continue;
    lo = exact[i] < lo ? exact[i] : lo;
    hi = exact[i] > hi ? exact[i] : hi;
  }
  if (!(hi >= lo) || rows < win || cols < win)
    return NAN;
  c1 = (0.01 * (hi - lo)) * (0.01 * (hi - lo));
  c2 = (0.03 * (hi - lo)) * (0.03 * (hi - lo));
  if (c1 == 0) /* constant reference: SSIM is 1 only for an identical copy */
    c1 = c2 = 1e-300;
  for (size_t r0 = 0; r0 + win <= rows; r0 += stride) {
    for (size_t c0 = 0; c0 + win <= cols; c0 += stride) {
      double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, m = (double)(win * win);
      int valid = 1;
      for (size_t r = r0; r < r0 + win && valid; r++) {
        for (size_t c = c0; c < c0 + win; c++) {
          size_t i = r * cols + c;
          double x = exact[i], y = approx[i];
          if ((mask && mask[i]) || !isfinite(x) || !isfinite(y)) {
            valid = 0;
            break;
          }
          sx += x;
          sy += y;
          sxx += x * x;
          syy += y * y;
          sxy += x * y;
        }
      }
      if (!valid)
        continue;
      double mx = sx / m, my = sy / m;
      double vx = sxx / m - mx * mx, vy = syy / m - my * my, cxy = sxy / m - mx * my;
      total += ((2 * mx * my + c1) * (2 * cxy + c2)) /
               ((mx * mx + my * my + c1) * (vx + vy + c2));
      windows++;
    }
  }
  return windows ? total / (double)windows : NAN;
}
