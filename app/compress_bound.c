/* compress_bound.c - from -e and --eb-mode to the strict absolute bound the
 * codec keeps, and the figures --verify checks (docs/codec.md, "Bound
 * modes").
 *
 * Every value comes back within the absolute bound b, so the error's RMSE
 * over any set of values is at most b and its L2 norm over N values at most
 * b sqrt(N). Hence:
 *   psnr P: b = range x 10^(-P/20) gives PSNR = 20 log10(range / RMSE) >= P;
 *   norm L: b = L / sqrt(N) gives ||x - x'||_2 <= L.
 * Both are guarantees, not expectations (SZ3 instead assumes a uniform
 * error, RMSE = b / sqrt(3), and aims at the target with a bound sqrt(3)
 * larger). The range is that of the valid values: finite and not the
 * missing value, so ERSST's land (-9.97e36) does not widen it. */
#include "compress_bound.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The derived bound is shrunk by a few ulps so that rounding in its
 * arithmetic cannot put the target a hair out of reach. */
#define GZC_SHRINK (1.0 - 8 * DBL_EPSILON)

int gzc_eb_mode_parse(const char *text, gzc_eb_mode_t *mode) {
  static const char *names[] = {"abs", "rel", "psnr", "norm"};
  if (!text) {
    *mode = GZC_EB_ABS;
    return 0;
  }
  for (int k = 0; k < 4; k++)
    if (!strcmp(text, names[k])) {
      *mode = (gzc_eb_mode_t)k;
      return 0;
    }
  return -1;
}

const char *gzc_eb_mode_name(gzc_eb_mode_t mode) {
  return mode == GZC_EB_REL    ? "rel"
         : mode == GZC_EB_PSNR ? "psnr"
         : mode == GZC_EB_NORM ? "norm"
                               : "abs";
}

const char *gzc_eb_check(gzc_eb_mode_t mode, double e) {
  if (!isfinite(e) || e < 0)
    return "must be a finite number >= 0";
  if (mode == GZC_EB_PSNR && !(e > 0))
    return "is the target PSNR in dB and must be > 0";
  return NULL;
}

void gzc_range_compute(gz_dtype_t dtype, const void *x, size_t n, int has_fill,
                       double fill, gzc_range_t *r) {
  double lo = INFINITY, hi = -INFINITY;
  size_t valid = 0;
  for (size_t i = 0; i < n; i++) {
    double v =
        dtype == GZ_FLOAT32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
    if (!isfinite(v) || (has_fill && v == fill))
      continue;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    valid++;
  }
  r->count = n;
  r->valid = valid;
  r->lo = lo;
  r->hi = hi;
}

double gzc_abs_bound(gzc_eb_mode_t mode, double e, const gzc_range_t *r) {
  /* scaled before subtracting: hi - lo may overflow near DBL_MAX */
  double span = r->valid && r->hi > r->lo ? 1.0 : 0.0;
  switch (mode) {
  case GZC_EB_REL:
    return span * (e * r->hi - e * r->lo);
  case GZC_EB_PSNR: {
    double s = pow(10.0, -e / 20.0);
    return span * (s * r->hi - s * r->lo) * GZC_SHRINK;
  }
  case GZC_EB_NORM:
    return r->count ? e / sqrt((double)r->count) * GZC_SHRINK : e;
  case GZC_EB_ABS:
  default:
    return e;
  }
}

void gzc_figures_add(gzc_sums_t *s, gz_dtype_t dtype, const void *exact,
                     const void *approx, size_t n, int has_fill, double fill) {
  double lo = s->lo, hi = s->hi, sq_valid = s->sq_valid, sq_all = s->sq_all;
  double max_valid = s->max_valid, max_all = s->max_all;
  size_t valid = s->valid, elem = gz_dtype_size(dtype), mismatch = s->mismatch;
  for (size_t i = 0; i < n; i++) {
    double x, y, d;
    if (dtype == GZ_FLOAT32) {
      x = ((const float *)exact)[i];
      y = ((const float *)approx)[i];
    } else {
      x = ((const double *)exact)[i];
      y = ((const double *)approx)[i];
    }
    if (!isfinite(x)) { /* specials come back bit-exact */
      mismatch += memcmp((const char *)exact + i * elem, (const char *)approx + i * elem,
                         elem) != 0;
      continue;
    }
    d = y - x;
    if (!isfinite(d))
      d = INFINITY;
    sq_all += d * d;
    max_all = fabs(d) > max_all ? fabs(d) : max_all;
    if (has_fill && x == fill)
      continue;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    sq_valid += d * d;
    max_valid = fabs(d) > max_valid ? fabs(d) : max_valid;
    valid++;
  }
  *s = (gzc_sums_t){lo, hi, sq_valid, sq_all, max_valid, max_all, valid, mismatch};
}

void gzc_figures_finish(const gzc_sums_t *s, gzc_figures_t *f) {
  f->max_abs = s->max_all;
  f->nonfinite_mismatch = s->mismatch;
  f->range = s->valid ? s->hi - s->lo : 0;
  f->l2 = sqrt(s->sq_all);
  if (s->valid && s->sq_valid > 0) {
    double mse = s->sq_valid / (double)s->valid;
    f->psnr = 20 * log10(f->range) - 10 * log10(mse);
    f->nrmse = f->range > 0 ? sqrt(mse) / f->range : INFINITY;
  } else {
    f->psnr = INFINITY;
    f->nrmse = 0;
  }
  f->max_rel = f->range > 0 ? s->max_valid / f->range : (s->max_valid > 0 ? INFINITY : 0);
}

void gzc_figures_compute(gz_dtype_t dtype, const void *exact, const void *approx,
                         size_t n, int has_fill, double fill, gzc_figures_t *f) {
  gzc_sums_t s = GZC_SUMS_INIT;
  gzc_figures_add(&s, dtype, exact, approx, n, has_fill, fill);
  gzc_figures_finish(&s, f);
}

int gzc_target_met(gzc_eb_mode_t mode, double e, const gzc_figures_t *f) {
  if (mode == GZC_EB_PSNR)
    return f->psnr >= e;
  if (mode == GZC_EB_NORM)
    return f->l2 <= e;
  return 1;
}
