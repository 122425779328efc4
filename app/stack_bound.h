/* stack_bound.h - the error budget of `gzstack stack` and the bound it
 * claims: pure arithmetic (no MPI, no I/O), unit-tested on its own in
 * tests/app_stack/test_stack_bound.c. docs/design.md derives each rule.
 *
 * Notation: e the user's bound, e_abs the same in absolute units, P ranks,
 * N snapshots, c_min / c_max the smallest positive / largest per-point
 * count of valid samples (N everywhere when nothing is missing). */
#ifndef GZ_STACK_BOUND_H
#define GZ_STACK_BOUND_H

#include "gzcoll.h"

#include <stdint.h>

typedef enum { GZS_OP_MEAN = 0, GZS_OP_SUM, GZS_OP_MAX, GZS_OP_MIN } gzs_op_t;

/* e in absolute units: e itself (abs), or e times the range hi - lo of the
 * valid input values (rel; 0 when the range is empty or a single value). */
double gzs_bound_abs(double e, gz_eb_mode_t mode, double lo, double hi);

/* How e_abs is shared between the stages. Parallel reading: all of it to
 * the allreduce. Root reading (a compressed scatter first): strict gives
 * half to each stage, the scatter's half divided by N for a sum (N
 * scattered values add up at a point); per-message gives e_abs to each. */
typedef struct gzs_split {
  double e_scatter;   /* per-value bound of the scatter (0: no scatter) */
  double e_allreduce; /* the allreduce's share */
} gzs_split_t;
gzs_split_t gzs_bound_split(gzs_op_t op, gz_bound_policy_t policy, int root_read,
                            double e_abs, uint64_t nsnap);

/* The error_bound the allreduce of the partial sums / maxima is asked for:
 * strict mean e_allreduce * c_min (the sum within that, so the mean at a
 * point with count c >= c_min within e_allreduce), otherwise e_allreduce.
 * 0 when that is not a positive finite number: the plain MPI allreduce. */
double gzs_bound_allreduce(gzs_op_t op, gz_bound_policy_t policy, double e_allreduce,
                           uint32_t c_min);

/* The quantization bound eb each rank's partial gets from the library for
 * that error_bound (gzcoll.h): strict sum / mean error_bound / P, so a
 * sum of P codes is within error_bound; max / min and per-message
 * error_bound. The step of the codes is 2 eb. */
double gzs_bound_rank_eb(gzs_op_t op, gz_bound_policy_t policy, double error_bound,
                         int ranks);

/* What the claimed bound is made of. */
typedef struct gzs_claim_in {
  gzs_op_t op;
  gz_dtype_t dtype; /* of the output */
  double ar_bound;  /* agreed result_bound of the allreduce (largest slab) */
  double sc_bound;  /* agreed result_bound of the scatter (0: none) */
  double lo, hi;    /* agreed range of the valid input values */
  uint32_t c_min;   /* 0: no point has data */
  uint32_t c_max;
  uint64_t nsnap;    /* N */
  int ranks;         /* P */
  double result_max; /* largest finite |result| (0: none) */
} gzs_claim_in_t;

typedef struct gzs_claim {
  double stage;   /* the reductions' bound, their double rounding included */
  double f32;     /* half an ulp of float32 at the largest result (float32 output) */
  double claimed; /* stage + f32: what the summary and --verify promise */
} gzs_claim_t;

/* stage bound:
 *   mean: ar_bound / c_min + sc_bound + 2^-52 (N + P) amax
 *   sum:  ar_bound + c_max sc_bound + 2^-52 (N + P) N amax
 *   max / min: ar_bound + sc_bound
 * amax = max(|lo|, |hi|) (0 when not finite): the 2^-52 terms cover the
 * rounding of the double accumulations (N additions over the snapshots, P
 * in the MPI reduction) and of the division by the count.
 * f32 = 2^(ilogb(result_max + stage) - 24) for float32 outputs with a
 * nonzero result, 0 otherwise. */
gzs_claim_t gzs_bound_claim(const gzs_claim_in_t *in);

#endif
