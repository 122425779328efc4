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

/* var / std divide the sum of squared deviations by the count (population,
 * CDO timvar / timstd), var1 / std1 by the count - 1 (sample, CDO timvar1 /
 * timstd1); rms is sqrt(sum of squares / count) (NCO ncra -y rms). */
typedef enum {
  GZS_OP_MEAN = 0,
  GZS_OP_SUM,
  GZS_OP_MAX,
  GZS_OP_MIN,
  GZS_OP_VAR,
  GZS_OP_VAR1,
  GZS_OP_STD,
  GZS_OP_STD1,
  GZS_OP_RMS
} gzs_op_t;

/* var, var1, std, std1, rms: reduced as sums of squares (stack_moments.c). */
int gzs_op_is_moment(gzs_op_t op);
/* 1 for var1 / std1 (divisor count - 1), 0 otherwise. */
int gzs_op_ddof(gzs_op_t op);

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
 * A weighted mean (--weights) passes the smallest positive per-point sum
 * of weights as c_min. 0 when that is not a positive finite number: the
 * plain MPI allreduce. */
double gzs_bound_allreduce(gzs_op_t op, gz_bound_policy_t policy, double e_allreduce,
                           double c_min);

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
 *   weighted mean: ar_bound / w_min + 2^-52 (2 (N + P) + 2) amax (the
 *         products w x, the sums of w x and of w, the division rounded)
 *   sum:  ar_bound + c_max sc_bound + 2^-52 (N + P) N amax
 *   max / min: ar_bound + sc_bound
 * amax = max(|lo|, |hi|) (0 when not finite): the 2^-52 terms cover the
 * rounding of the double accumulations (N additions over the snapshots, P
 * in the MPI reduction) and of the division by the count.
 * f32 = 2^(ilogb(result_max + stage) - 24) for float32 outputs with a
 * nonzero result, 0 otherwise. */
gzs_claim_t gzs_bound_claim(const gzs_claim_in_t *in);
/* The same for a weighted mean (--weights): w_min the smallest positive
 * per-point sum of weights (0: unweighted, gzs_bound_claim). */
gzs_claim_t gzs_bound_claim_w(const gzs_claim_in_t *in, double w_min);

/* ---- --reproducible (docs/design.md, "Partition-independent stacks")
 *
 * Every input value x is quantized on one grid of step h, a power of two
 * agreed before reading: q = rint(x / h) (the division is exact), so |x -
 * q h| <= h / 2. The int64 codes are summed (max / min: compared) exactly,
 * on each rank and between the ranks, and the result S h is formed once, so
 * the written bytes do not depend on how the inputs were shared. A mean of
 * c terms is within h / 2 of the exact mean; a sum of c terms within c h / 2.
 * h is the largest power of two <= 2 eq with eq = e_abs (mean, max, min) or
 * e_abs / N (sum: up to N terms at a point); 0 when e_abs is not a positive
 * finite number or h would not be a normal double. */
double gzs_repro_step(gzs_op_t op, double e_abs, uint64_t nsnap);
/* stage: mean, max, min  h / 2 + 2^-52 (amax + h / 2);  sum  c_max (h / 2 +
 * 2^-52 (amax + h / 2)) (S converted to double and the product S h, the
 * mean's division: one rounding each). f32 as in gzs_bound_claim. */
gzs_claim_t gzs_repro_claim(const gzs_claim_in_t *in, double step);
/* The per-input bound of a moment's pass (docs/design.md): Ev = e (var,
 * var1) or e^2 (std, std1, rms). var / std, pass 1 (the mean): d =
 * sqrt(Ev / (2 (1 + ddof))); pass 2 (squared deviations): Ev / (2 (1 +
 * ddof)); rms (one pass, squares): Ev. Then at any count c > ddof the
 * written var is within (c q + c d^2) / (c - ddof) <= (1 + ddof) (q + d^2)
 * = Ev (q the pass-2 bound), rms^2 within Ev. */
double gzs_repro_moment_eq(gzs_op_t op, double e, int pass);

/* IBM float output (SEG-Y format 1): a value of magnitude up to m is
 * within 2^-20 m after the conversion (24-bit mantissa, hexadecimal
 * exponent: up to three leading zero bits; truncation or rounding). m =
 * result_max + the bound before it. */
double gzs_bound_ibm(double m);

/* ---- second moments (docs/operators.md)
 *
 * var / std, two passes: an agreed mean m~ (the compressed allreduce of the
 * sums, within mean_bound d of the exact mean m), then S~, the compressed
 * allreduce of the sums of (x - m~)^2. Exactly, sum (x - m~)^2 = S + c
 * (m - m~)^2 with S the sum of squared deviations from m, so S~ - S lies in
 * [-ar - slop, ar + slop + c d^2]; the written var = S~ / (c - ddof) is
 * within Ev = (ar + slop + c d^2) / (c - ddof) (largest at the smallest
 * count c > ddof), and std = sqrt(var) within gzs_bound_sqrt(var~, Ev).
 * rms, one pass: the allreduce of sums of x^2; the mean square within Ev =
 * (ar + slop) / c_min, rms within gzs_bound_sqrt(ms~, Ev). slop covers the
 * double rounding of squares and sums: 2^-52 (N + P + 4) c_max D^2 with D
 * = (hi - lo) + d (deviations) or max(|lo|, |hi|) (rms). */

/* What the passes are asked for. e_abs is the bound aimed at in the
 * result's units (var: squared units). c the smallest count > ddof. */
typedef struct gzs_moment_plan {
  double ev;     /* the bound aimed at on var / mean square */
  double e_mean; /* var / std: the mean pass's bound on the mean (0: exact) */
  double e_sum;  /* the bound on the allreduced sums of squares (0: exact) */
} gzs_moment_plan_t;
/* var: Ev = e_abs; std: Ev = e_abs^2; rms: Ev = max(e_abs^2, e_abs a)
 * with a = gzs_moment_floor(lo, hi) (rms >= a, so gzs_bound_sqrt with
 * floor a^2 is at most e_abs). var / std: half of Ev to the mean (c d^2 / (c - ddof) = Ev
 * / 2), half to the sums (e_sum = Ev / 2 (c - ddof)); rms: e_sum = Ev c. */
gzs_moment_plan_t gzs_moment_plan(gzs_op_t op, double e_abs, uint32_t c, double lo,
                                  double hi);

/* Weighted moments (--weights / --file-weights, docs/operators.md): at a
 * point, W the sum of the weights of its valid samples, Q the sum of their
 * squares. The divisor of sum w (x - m)^2: W (var, std, rms: the weighted
 * mean square), W - Q / W (var1, std1: reliability weights, the estimator
 * of CDO's fldvar1 / fldstd1 with area weights; W - Q / W = c - 1 for
 * weights 1). Not positive: no estimate (NaN). */
double gzs_moment_divisor_w(gzs_op_t op, double W, double Q);
/* The plan of a weighted moment: dmin the smallest positive divisor over
 * the points, rho_min the smallest divisor / W, w_min the smallest
 * positive W. var / std: W d^2 / D <= Ev / 2 with d^2 = Ev rho_min / 2,
 * the sums within Ev dmin / 2; rms: within Ev w_min. */
gzs_moment_plan_t gzs_moment_plan_w(gzs_op_t op, double e_abs, double dmin,
                                    double rho_min, double w_min, double lo, double hi);

typedef struct gzs_moment_in {
  gzs_op_t op;
  double ar_bound;   /* agreed result_bound of the sums-of-squares allreduce */
  double mean_bound; /* var / std: bound of the agreed mean (the mean's stage) */
  double lo, hi;     /* agreed range of the valid input values */
  uint32_t c_lo;     /* smallest count > ddof (0: no such point) */
  uint32_t c_max;
  uint64_t nsnap;
  int ranks;
} gzs_moment_in_t;
/* Ev: the bound on var (var, var1, std, std1) or on the mean square (rms)
 * at every point with a count > ddof. */
double gzs_moment_sq_bound(const gzs_moment_in_t *in);
/* The weighted Ev at one point of sum of weights W, divisor D and
 * estimate v (var, or the mean square of rms): (ar + slop + W d^2) / D
 * (rms: (ar + slop) / W) with slop = 2^-52 (N + P + 6) W Dx^2 (Dx as in
 * gzs_moment_sq_bound; the products by w add two roundings), plus the
 * rounding of D itself, |v| 2^-52 (N + P + 4) (W + Q / W) / D (Q / W <=
 * W: 2 W / D is used). 0 when D is not positive. */
double gzs_moment_sq_bound_w(const gzs_moment_in_t *in, double W, double D, double v);
/* The smallest |x| over [lo, hi] (0 when lo <= 0 <= hi or not finite): a
 * lower bound of rms at every point. */
double gzs_moment_floor(double lo, double hi);
/* |sqrt(v~) - sqrt(v)| for any v >= low (>= 0) with |v~ - v| <= ev:
 * min(sqrt(ev), ev / (sqrt(max(0, v~)) + sqrt(max(low, v~ - ev)))),
 * from |sqrt(a) - sqrt(b)| <= sqrt(|a - b|) and = |a - b| / (sqrt(a) +
 * sqrt(b)). */
double gzs_bound_sqrt(double v, double ev, double low);
/* The claim: stage = point_bound (the largest per-point bound: Ev, or the
 * largest gzs_bound_sqrt) + 2^-51 result_max (the division and the square
 * root), f32 as in gzs_bound_claim. */
gzs_claim_t gzs_moment_claim(gz_dtype_t dtype, double point_bound, double result_max);

#endif
