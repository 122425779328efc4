/* compress_bound.h - the strict absolute bound `gzstack compress` derives from
 * -e and --eb-mode, and the figures --verify reports (compress_bound.c;
 * arithmetic in docs/codec.md). */
#ifndef GZ_COMPRESS_BOUND_H
#define GZ_COMPRESS_BOUND_H

#include "gzcoll.h"

#include <math.h> /* INFINITY, for GZC_SUMS_INIT */
#include <stddef.h>

typedef enum {
  GZC_EB_ABS = 0, /* every value within E */
  GZC_EB_REL,     /* within E x the range of the valid values */
  GZC_EB_PSNR,    /* PSNR over the valid values >= E dB */
  GZC_EB_NORM     /* L2 norm of the error over all values <= E */
} gzc_eb_mode_t;

/* "abs" | "rel" | "psnr" | "norm" (NULL = abs); -1 for anything else. */
int gzc_eb_mode_parse(const char *text, gzc_eb_mode_t *mode);
const char *gzc_eb_mode_name(gzc_eb_mode_t mode);

/* NULL when E suits the mode, else what is wrong with it (for a message
 * naming -e and --eb-mode). */
const char *gzc_eb_check(gzc_eb_mode_t mode, double e);

/* Valid values: finite and not the missing value (has_fill, fill: the
 * reader's _FillValue / missing_value, compared as double). */
typedef struct gzc_range {
  size_t count, valid;
  double lo, hi; /* of the valid values; lo > hi when there are none */
} gzc_range_t;
void gzc_range_compute(gz_dtype_t dtype, const void *x, size_t n, int has_fill,
                       double fill, gzc_range_t *r);

/* The absolute bound that guarantees the mode's target (0 = lossless):
 * ABS e; REL e x range; PSNR range x 10^(-e/20); NORM e / sqrt(count). */
double gzc_abs_bound(gzc_eb_mode_t mode, double e, const gzc_range_t *r);

/* What --verify reports: the max error and the L2 norm of the error over all
 * finite values, PSNR, NRMSE and max relative error over the valid values
 * (and their range); non-finite values whose bits changed. */
typedef struct gzc_figures {
  double max_abs, l2, range, psnr, nrmse, max_rel;
  size_t nonfinite_mismatch;
} gzc_figures_t;
void gzc_figures_compute(gz_dtype_t dtype, const void *exact, const void *approx,
                         size_t n, int has_fill, double fill, gzc_figures_t *f);

/* The same over values that come in pieces: start with a zeroed sum
 * (GZC_SUMS_INIT), add the pieces in order, then finish; the figures are
 * bit-identical to gzc_figures_compute over the whole array. */
typedef struct gzc_sums {
  double lo, hi, sq_valid, sq_all, max_valid, max_all;
  size_t valid, mismatch;
} gzc_sums_t;
#define GZC_SUMS_INIT                                                                    \
  { INFINITY, -INFINITY, 0, 0, 0, 0, 0, 0 }
void gzc_figures_add(gzc_sums_t *s, gz_dtype_t dtype, const void *exact,
                     const void *approx, size_t n, int has_fill, double fill);
void gzc_figures_finish(const gzc_sums_t *s, gzc_figures_t *f);

/* 1 when the figures meet the mode's target (always for ABS and REL, whose
 * promise is the max error). */
int gzc_target_met(gzc_eb_mode_t mode, double e, const gzc_figures_t *f);

#endif
