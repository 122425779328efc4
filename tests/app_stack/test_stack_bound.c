/*
 * test_stack_bound.c - the error budget and the claimed bound of `gzstack
 * stack` (app/stack_bound.c) on their own: no MPI, no file. Hand-derived
 * cases first (each worked out in the comment above it), then properties
 * over seeded random parameters: the budget given to the library, spent in
 * full, never adds up to more than e; the float32 term covers the rounding
 * of any value up to the result; the claim grows with what it is made of.
 */
#include "gz_test.h"
#include "stack_bound.h"

#include <math.h>
#include <stdio.h>

/* Equal up to a relative 1e-15 (the hand values are typed in decimal). */
static int near(double a, double b) {
  return fabs(a - b) <= 1e-15 * fmax(fabs(a), fabs(b));
}

static void hand_budget(void) {
  gzs_split_t s;
  /* abs: e itself; rel: e times the range; an empty or flat range: 0 */
  GZ_CHECK(gzs_bound_abs(1e-3, GZ_EB_ABS, -5, 5) == 1e-3, "abs keeps e");
  GZ_CHECK(near(gzs_bound_abs(1e-4, GZ_EB_REL, -1.8, 34.1), 1e-4 * 35.9),
           "rel: e x range");
  GZ_CHECK(gzs_bound_abs(1e-4, GZ_EB_REL, 7, 7) == 0, "rel: one value, 0");
  GZ_CHECK(gzs_bound_abs(1e-4, GZ_EB_REL, INFINITY, -INFINITY) == 0, "rel: no value, 0");

  /* parallel reading: everything to the allreduce, no scatter */
  s = gzs_bound_split(GZS_OP_MEAN, GZ_BOUND_STRICT, 0, 1e-3, 110);
  GZ_CHECK(s.e_scatter == 0 && s.e_allreduce == 1e-3, "parallel: e to the allreduce");
  /* root reading, strict mean: half each (a mean of values each within
   * e/2 is within e/2) */
  s = gzs_bound_split(GZS_OP_MEAN, GZ_BOUND_STRICT, 1, 1e-3, 110);
  GZ_CHECK(s.e_scatter == 5e-4 && s.e_allreduce == 5e-4, "root mean: e/2 + e/2");
  /* root reading, strict sum of N = 110: 110 scattered values add up at a
   * point, so each gets e / 2 / 110 = 4.5454...e-6 */
  s = gzs_bound_split(GZS_OP_SUM, GZ_BOUND_STRICT, 1, 1e-3, 110);
  GZ_CHECK(near(s.e_scatter, 1e-3 / 220) && s.e_allreduce == 5e-4,
           "root sum: e/2N = %.17g and e/2", s.e_scatter);
  /* root reading, max: one value survives, e/2 each */
  s = gzs_bound_split(GZS_OP_MAX, GZ_BOUND_STRICT, 1, 1e-2, 110);
  GZ_CHECK(s.e_scatter == 5e-3 && s.e_allreduce == 5e-3, "root max: e/2 + e/2");
  /* per-message: e for every quantization, the implied bound is reported */
  s = gzs_bound_split(GZS_OP_SUM, GZ_BOUND_PER_MESSAGE, 1, 1e-3, 110);
  GZ_CHECK(s.e_scatter == 1e-3 && s.e_allreduce == 1e-3, "per-message: e each");

  /* the allreduce of the sums of a mean over S = 120 snapshots: the sum may
   * be off by e S, the mean by e */
  GZ_CHECK(near(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_STRICT, 1e-3, 120), 0.12),
           "mean of 120: error_bound 0.12");
  /* with missing values the smallest positive count c_min = 100 rules */
  GZ_CHECK(near(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_STRICT, 1e-3, 100), 0.1),
           "mean, c_min 100: error_bound 0.1");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_PER_MESSAGE, 1e-3, 120) == 1e-3,
           "per-message mean: e per quantization");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_SUM, GZ_BOUND_STRICT, 1e-3, 120) == 1e-3,
           "sum: e (the library divides by P)");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_MIN, GZ_BOUND_STRICT, 1e-3, 120) == 1e-3, "min: e");
  /* nothing to compress against: the plain MPI allreduce */
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_STRICT, 0, 120) == 0, "-e 0: MPI");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_STRICT, 1e-3, 0) == 0,
           "no point with data: MPI");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_SUM, GZ_BOUND_STRICT, INFINITY, 1) == 0,
           "infinite bound: MPI");
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_SUM, GZ_BOUND_STRICT, NAN, 1) == 0,
           "NaN bound: MPI");

  /* the per-rank step of a mean of S = 120 snapshots on P = 4 ranks with
   * e = 1e-3: error_bound e S = 0.12, each rank's partial sum quantized
   * with eb = 0.12 / 4 = 0.03, i.e. codes of step 2 eb = 0.06 = 2 e S / P */
  {
    double eb = gzs_bound_rank_eb(GZS_OP_MEAN, GZ_BOUND_STRICT, 0.12, 4);
    GZ_CHECK(near(eb, 0.03) && near(2 * eb, 2 * 1e-3 * 120 / 4),
             "mean of 120 on 4 ranks: eb 0.03, step 0.06 (eb %.17g)", eb);
  }
  GZ_CHECK(gzs_bound_rank_eb(GZS_OP_SUM, GZ_BOUND_STRICT, 1e-3, 8) == 1e-3 / 8,
           "strict sum on 8 ranks: e / 8");
  GZ_CHECK(gzs_bound_rank_eb(GZS_OP_MAX, GZ_BOUND_STRICT, 1e-3, 8) == 1e-3,
           "max: one quantization, eb = e whatever P");
  GZ_CHECK(gzs_bound_rank_eb(GZS_OP_SUM, GZ_BOUND_PER_MESSAGE, 1e-3, 8) == 1e-3,
           "per-message: eb = e");
}

static void hand_claim(void) {
  gzs_claim_t c;
  /* mean of N = 120 snapshots on P = 4 ranks, values in [200, 300],
   * float64 output: the library's sum bound P eb = 0.12 over c_min = 120,
   * plus the double rounding 2^-52 (N + P) amax = 124 * 300 * 2^-52 */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT64, 0.12, 0, 200, 300, 120,
                                        120, 120, 4, 280});
  GZ_CHECK(near(c.stage, 0.001 + 37200.0 / 4503599627370496.0), "mean f64: stage %.17g",
           c.stage);
  GZ_CHECK(c.f32 == 0 && c.claimed == c.stage, "f64: no float32 term");

  /* weighted mean (--weights): the same sum bound over the smallest sum
   * of weights w_min = 30 (not c_min), rounding 2^-52 (2 (N + P) + 2) amax
   * = 250 * 300 * 2^-52 */
  c = gzs_bound_claim_w(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT64, 0.12, 0, 200, 300, 120,
                                          120, 120, 4, 280},
                        30.0);
  GZ_CHECK(near(c.stage, 0.004 + 75000.0 / 4503599627370496.0),
           "weighted mean f64: stage %.17g", c.stage);
  GZ_CHECK(gzs_bound_allreduce(GZS_OP_MEAN, GZ_BOUND_STRICT, 1e-3, 30.0) == 0.03,
           "weighted mean: the sum's bound e * w_min");

  /* the same in float32: half an ulp at 280.001 (2^8 <= x < 2^9) is
   * 2^(8 - 24) = 2^-16 = 1.52587890625e-05 */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT32, 0.12, 0, 200, 300, 120,
                                        120, 120, 4, 280});
  GZ_CHECK(c.f32 == 1.52587890625e-05, "f32 term 2^-16 (got %.17g)", c.f32);
  GZ_CHECK(c.claimed == c.stage + c.f32, "claimed = stage + f32");

  /* a real run before this module existed (TREFHT, 110 snapshots on 3
   * ranks, values 212.278..302.987 K, the MPI allreduce reporting
   * 7.50896954397574e-12): gzstack's metrics said stage 7.670528517484991e-12,
   * claimed 1.525879673302852e-05 */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT32, 7.50896954397574e-12, 0,
                                        212.27809143066406, 302.98724365234375, 110, 110,
                                        110, 3, 302.9});
  GZ_CHECK(c.stage == 7.670528517484991e-12 && c.claimed == 1.525879673302852e-05,
           "TREFHT run: stage %.17g, claimed %.17g", c.stage, c.claimed);

  /* sum of N = 110 on P = 4, values in [-310, 0]: the library's 0.01 plus
   * 2^-52 (N + P) N amax = 114 * 110 * 310 * 2^-52 */
  c = gzs_bound_claim(
      &(gzs_claim_in_t){GZS_OP_SUM, GZ_FLOAT64, 0.01, 0, -310, 0, 110, 110, 110, 4, 3e4});
  GZ_CHECK(near(c.stage, 0.01 + 114.0 * 110 * 310 / 4503599627370496.0), "sum: stage");

  /* root reading, sum: c_max scattered values at a point each within
   * e / 2N = 1e-3 / 220, so with c_max = N the scatter adds e/2 */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_SUM, GZ_FLOAT64, 5e-4, 1e-3 / 220, 0, 0,
                                        110, 110, 110, 2, 0});
  GZ_CHECK(near(c.stage, 1e-3), "root sum: e/2 + N e/2N = e (%.17g)", c.stage);

  /* root reading, mean: the scatter's e/2 adds once, the allreduce's
   * c_min e/2 is divided by c_min */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT64, 55 * 5e-4, 5e-4, 0, 0,
                                        55, 110, 110, 3, 0});
  GZ_CHECK(near(c.stage, 1e-3), "root mean: e/2 + e/2 (%.17g)", c.stage);

  /* max / min: one quantization each stage, no summation rounding */
  c = gzs_bound_claim(
      &(gzs_claim_in_t){GZS_OP_MAX, GZ_FLOAT64, 0.01, 0.005, -1e6, 1e6, 3, 3, 3, 3, 1e6});
  GZ_CHECK(c.stage == 0.015, "max: ar + sc exactly");

  /* every point masked (c_min 0): divide by 1, and no float32 term for an
   * all-NaN result */
  c = gzs_bound_claim(&(gzs_claim_in_t){GZS_OP_MEAN, GZ_FLOAT32, 0, 0, INFINITY,
                                        -INFINITY, 0, 0, 5, 2, 0});
  GZ_CHECK(c.stage == 0 && c.f32 == 0 && c.claimed == 0, "no data: claim 0");
}

/* Properties over seeded random parameters. */
static void properties(void) {
  gz_rng_t rng;
  int bad_budget = 0, bad_f32 = 0, bad_mono = 0, bad_split = 0;
  gz_rng_seed(&rng, 16);
  for (int t = 0; t < 20000; t++) {
    gzs_op_t op = (gzs_op_t)(gz_rng_next(&rng) % 4);
    int P = 1 + (int)(gz_rng_next(&rng) % 512), root = (int)(gz_rng_next(&rng) & 1);
    uint64_t N = (uint64_t)P + gz_rng_next(&rng) % 5000;
    uint32_t cmax = (uint32_t)N, cmin = 1 + (uint32_t)(gz_rng_next(&rng) % N);
    double e = ldexp(1.0 + gz_rng_uniform(&rng), -(int)(gz_rng_next(&rng) % 30));
    double amax = ldexp(gz_rng_uniform(&rng), (int)(gz_rng_next(&rng) % 40) - 10);
    gzs_split_t s = gzs_bound_split(op, GZ_BOUND_STRICT, root, e, N);
    double eb_lib = gzs_bound_allreduce(op, GZ_BOUND_STRICT, s.e_allreduce, cmin);
    double eb_rank = gzs_bound_rank_eb(op, GZ_BOUND_STRICT, eb_lib, P);
    int summed = op == GZS_OP_MEAN || op == GZS_OP_SUM;
    /* the library spends its budget in full: P eb per point for a sum */
    double ar = summed ? (double)P * eb_rank : eb_rank;
    gzs_claim_in_t in = {op,   GZ_FLOAT32, ar, s.e_scatter, -amax, amax,
                         cmin, cmax,       N,  P,           amax};
    gzs_claim_t c = gzs_bound_claim(&in), c2;
    double slop = summed ? ldexp((double)(N + (uint64_t)P) * (double)N * amax, -52) : 0;

    /* strict: the stages together stay within e (plus the double rounding) */
    if (!(c.stage <= e * (1 + 1e-12) + slop))
      bad_budget++;
    if (root && !(s.e_allreduce + (op == GZS_OP_SUM ? (double)N : 1.0) * s.e_scatter <=
                  e * (1 + 1e-15)))
      bad_split++;
    /* float32: any value up to the result (plus the stage bound) rounds
     * within the f32 term */
    {
      double x = (amax + c.stage) * gz_rng_uniform(&rng);
      if (amax > 0 && !(fabs((double)(float)x - x) <= c.f32))
        bad_f32++;
    }
    /* more error in a stage never claims less */
    in.ar_bound = ar * 2 + 1e-300;
    c2 = gzs_bound_claim(&in);
    if (!(c2.claimed >= c.claimed) || !(c.claimed >= c.stage))
      bad_mono++;
  }
  GZ_CHECK(bad_budget == 0, "strict budgets within e: %d violations", bad_budget);
  GZ_CHECK(bad_split == 0, "root split within e: %d violations", bad_split);
  GZ_CHECK(bad_f32 == 0, "float32 term covers the output rounding: %d misses", bad_f32);
  GZ_CHECK(bad_mono == 0, "claim monotone in the stage bounds: %d", bad_mono);
}

/* Second moments, by hand. */
static void hand_moments(void) {
  gzs_moment_plan_t p;
  gzs_moment_in_t in;
  double slop, ev;
  /* var, e = 1e-3, c = 110: Ev = e; the sums get Ev/2 c = 0.055, the mean
   * sqrt(Ev/2) (then c d^2 / c = Ev/2) */
  p = gzs_moment_plan(GZS_OP_VAR, 1e-3, 110, 212, 303);
  GZ_CHECK(p.ev == 1e-3 && near(p.e_sum, 0.055) && near(p.e_mean, sqrt(5e-4)),
           "var plan: %g %g %g", p.ev, p.e_sum, p.e_mean);
  /* var1: divisor 109: sums 5e-4 x 109, mean sqrt(5e-4 x 109 / 110) */
  p = gzs_moment_plan(GZS_OP_VAR1, 1e-3, 110, 212, 303);
  GZ_CHECK(near(p.e_sum, 5e-4 * 109) && near(p.e_mean, sqrt(5e-4 * 109 / 110)),
           "var1 plan: %g %g", p.e_sum, p.e_mean);
  /* std, e = 1e-2: Ev = e^2 = 1e-4 (sqrt(Ev) = e at var = 0) */
  p = gzs_moment_plan(GZS_OP_STD1, 1e-2, 10, -1, 1);
  GZ_CHECK(near(p.ev, 1e-4) && near(p.e_sum, 5e-5 * 9), "std1 plan: %g %g", p.ev,
           p.e_sum);
  /* rms of values in [212, 303]: rms >= 212, Ev = e x 212 = 0.212; the
   * sums get Ev c */
  p = gzs_moment_plan(GZS_OP_RMS, 1e-3, 110, 212, 303);
  GZ_CHECK(near(p.ev, 0.212) && near(p.e_sum, 0.212 * 110) && p.e_mean == 0,
           "rms plan, positive range: %g %g", p.ev, p.e_sum);
  /* rms of values across 0: no floor, Ev = e^2 */
  p = gzs_moment_plan(GZS_OP_RMS, 1e-3, 110, -1.8, 34.1);
  GZ_CHECK(near(p.ev, 1e-6), "rms plan across 0: %g", p.ev);
  GZ_CHECK(gzs_moment_floor(-5, -2) == 2 && gzs_moment_floor(-1, 3) == 0 &&
               gzs_moment_floor(INFINITY, -INFINITY) == 0,
           "floor of the range");
  /* no count above ddof, e = 0, e = NaN: all exact (plan 0) */
  p = gzs_moment_plan(GZS_OP_VAR1, 1e-3, 1, 0, 1);
  GZ_CHECK(p.ev == 0 && p.e_sum == 0 && p.e_mean == 0, "var1 with c = 1: exact");
  p = gzs_moment_plan(GZS_OP_STD, 0, 10, 0, 1);
  GZ_CHECK(p.ev == 0 && p.e_sum == 0 && p.e_mean == 0, "e = 0: exact");
  p = gzs_moment_plan(GZS_OP_STD, NAN, 10, 0, 1);
  GZ_CHECK(p.ev == 0 && p.e_sum == 0, "e = NaN: exact");

  /* Ev of var1: ar 0.05, mean within 0.02, range [0, 1], c = 10 (also
   * c_max and N), P = 2: slop 2^-52 (10 + 2 + 4) 10 (1 + 0.02)^2;
   * (0.05 + slop + 10 x 0.02^2) / 9 */
  in.op = GZS_OP_VAR1;
  in.ar_bound = 0.05;
  in.mean_bound = 0.02;
  in.lo = 0;
  in.hi = 1;
  in.c_lo = 10;
  in.c_max = 10;
  in.nsnap = 10;
  in.ranks = 2;
  slop = ldexp(16.0 * 10 * 1.02 * 1.02, -52);
  ev = gzs_moment_sq_bound(&in);
  GZ_CHECK(near(ev, (0.05 + slop + 10 * 0.0004) / 9), "var1 Ev %.17g", ev);
  /* rms: (ar + 2^-52 16 c_max amax^2) / c_lo */
  in.op = GZS_OP_RMS;
  in.lo = -3;
  in.hi = 2;
  slop = ldexp(16.0 * 10 * 9, -52);
  GZ_CHECK(near(gzs_moment_sq_bound(&in), (0.05 + slop) / 10), "rms Ev");
  in.c_lo = 0;
  GZ_CHECK(gzs_moment_sq_bound(&in) == 0, "no point: 0");

  /* sqrt: at v~ = 4 with Ev = 0.01: 0.01 / (2 + sqrt(3.99)); near 0 the
   * sqrt(Ev) = 0.1 bound; a floor 1 at v~ = 0: 0.01 / 1 */
  GZ_CHECK(near(gzs_bound_sqrt(4, 0.01, 0), 0.01 / (2 + sqrt(3.99))), "sqrt at 4");
  GZ_CHECK(near(gzs_bound_sqrt(1e-3, 0.01, 0), 0.1), "sqrt near 0: sqrt(Ev)");
  GZ_CHECK(near(gzs_bound_sqrt(-1e-3, 0.01, 0), 0.1), "negative v~: sqrt(Ev)");
  GZ_CHECK(near(gzs_bound_sqrt(0, 0.01, 1), 0.01), "floor 1: Ev / 1");
  GZ_CHECK(gzs_bound_sqrt(5, 0, 0) == 0, "Ev 0: 0");
  {
    /* the claim: 2^-51 x result for the division and sqrt, f32 as usual */
    gzs_claim_t c = gzs_moment_claim(GZ_FLOAT32, 1e-3, 2.0);
    GZ_CHECK(near(c.stage, 1e-3 + ldexp(2.0, -51)) && c.f32 == ldexp(1.0, -23),
             "moment claim %.17g %g", c.stage, c.f32);
    c = gzs_moment_claim(GZ_FLOAT64, 1e-3, 2.0);
    GZ_CHECK(c.f32 == 0 && c.claimed == c.stage, "f64 moment claim");
  }
  {
    /* IBM float: truncation to 24 mantissa bits behind a hexadecimal
     * exponent, worst just above a power of 16 (three leading zero bits) */
    const double xs[] = {
        1.0 / 16 * (1 + 0x1p-21), 1.0000001, 15.999999, 0.0627, 3.1e7, -257.3, 1.5e-5};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
      double a = fabs(xs[i]), p16 = 1, m;
      while (a >= p16)
        p16 *= 16;
      while (a < p16 / 16)
        p16 /= 16;
      m = floor(a / p16 * 0x1p24) * p16 * 0x1p-24; /* truncated */
      GZ_CHECK(a - m <= gzs_bound_ibm(a), "IBM: %.17g truncated by %g > %g", xs[i], a - m,
               gzs_bound_ibm(a));
    }
    GZ_CHECK(gzs_bound_ibm(16.0) == 16.0 * 0x1p-20 && gzs_bound_ibm(0) == 0 &&
                 gzs_bound_ibm(NAN) == 0,
             "IBM bound 2^-20 m");
  }
}

/* The input of gzs_moment_sq_bound[_w] for one simulated field of c
 * values in [lo, hi] on one rank: the sums within the plan's e_sum, the
 * mean (rms: none) within e_mean around mt, rounded to double. */
static gzs_moment_in_t moment_in(gzs_op_t op, gzs_moment_plan_t p, double mt, double lo,
                                 double hi, uint32_t c) {
  double mean_bound =
      op == GZS_OP_RMS ? 0 : p.e_mean * (1 + 0x1p-50) + fabs(mt) * 0x1p-52;
  return (gzs_moment_in_t){.op = op,
                           .ar_bound = p.e_sum,
                           .mean_bound = mean_bound,
                           .lo = lo,
                           .hi = hi,
                           .c_lo = c,
                           .c_max = c,
                           .nsnap = c,
                           .ranks = 1};
}

/* One simulated field's verdict. *res and exact are squares (var, or std
 * and rms before the root), ev the bound on the square: std and rms take
 * both roots and carry ev through gzs_bound_sqrt (rms above its floor,
 * left in *low, else 0); a *res (now rooted) outside the claim's stage of
 * exact counts in *bad, the first five printed after tag. */
static void judge_moment(const char *tag, gzs_op_t op, uint32_t c, double off,
                         double scale, double e, double lo, double hi, double ev,
                         double *res, double exact, double *low, int *bad) {
  int rms = op == GZS_OP_RMS, isvar = op == GZS_OP_VAR || op == GZS_OP_VAR1;
  double bound;
  gzs_claim_t cl;
  *low = 0;
  if (rms) {
    *low = gzs_moment_floor(lo, hi);
    *low *= *low;
  }
  if (!isvar) {
    *res = sqrt(*res);
    exact = sqrt(exact);
  }
  bound = isvar ? ev : gzs_bound_sqrt(*res * *res, ev, *low);
  cl = gzs_moment_claim(GZ_FLOAT64, bound, fabs(*res));
  if (!(fabs(*res - exact) <= cl.stage)) {
    if (*bad < 5)
      fprintf(stderr, "%sop %d c %u off %g scale %g e %g: error %g > bound %g\n", tag,
              (int)op, c, off, scale, e, fabs(*res - exact), cl.stage);
    (*bad)++;
  }
}

/* Second moments, simulated: values with a large offset (cancellation
 * would show), the mean pass's result anywhere within its bound, the sums
 * of squares anywhere within theirs; the field computed as
 * app/stack_moments.c does must be within the claimed bound of the exact
 * (long double) value, and the bound spent in full stays within e. */
static void moment_properties(void) {
  static const gzs_op_t ops[] = {GZS_OP_VAR, GZS_OP_VAR1, GZS_OP_STD, GZS_OP_STD1,
                                 GZS_OP_RMS};
  gz_rng_t rng;
  double x[64];
  int bad = 0, bad_budget = 0, trials = 0;
  gz_rng_seed(&rng, 19);
  for (int t = 0; t < 20000; t++) {
    gzs_op_t op = ops[gz_rng_next(&rng) % 5];
    int ddof = gzs_op_ddof(op), rms = op == GZS_OP_RMS;
    int isvar = op == GZS_OP_VAR || op == GZS_OP_VAR1;
    uint32_t c = 1 + (uint32_t)(gz_rng_next(&rng) % 64);
    double off = ldexp(gz_rng_uniform(&rng) - 0.3, (int)(gz_rng_next(&rng) % 24));
    double scale = ldexp(gz_rng_uniform(&rng), -(int)(gz_rng_next(&rng) % 20));
    double e = ldexp(1.0 + gz_rng_uniform(&rng), -(int)(gz_rng_next(&rng) % 40));
    double lo = INFINITY, hi = -INFINITY, mt, s = 0, ev, res, exact, low;
    long double m = 0, ss = 0;
    gzs_moment_plan_t p;
    gzs_moment_in_t in;
    if (t % 7 == 0)
      scale = 0; /* constant data: var 0, where sqrt is steepest */
    for (uint32_t i = 0; i < c; i++) {
      x[i] = off + scale * (gz_rng_uniform(&rng) - 0.5);
      lo = fmin(lo, x[i]);
      hi = fmax(hi, x[i]);
      m += x[i];
    }
    m /= c;
    for (uint32_t i = 0; i < c; i++)
      ss += rms ? (long double)x[i] * x[i] : (x[i] - m) * (x[i] - m);
    if (c <= (uint32_t)ddof)
      continue;
    trials++;
    p = gzs_moment_plan(op, e, c, lo, hi);
    /* the mean pass: anywhere within e_mean (rounded to double) */
    mt = (double)m + (rms ? 0 : p.e_mean * (2 * gz_rng_uniform(&rng) - 1));
    for (uint32_t i = 0; i < c; i++) {
      double d = rms ? x[i] : x[i] - mt;
      s += d * d;
    }
    s += p.e_sum * (2 * gz_rng_uniform(&rng) - 1); /* the compressed sums */
    in = moment_in(op, p, mt, lo, hi, c);
    ev = gzs_moment_sq_bound(&in);
    res = s > 0 ? s / (double)(c - (uint32_t)ddof) : 0;
    exact = (double)(ss / (c - (uint32_t)ddof));
    judge_moment("", op, c, off, scale, e, lo, hi, ev, &res, exact, &low, &bad);
    /* spent in full, the budget stays within e (up to the double slop) */
    {
      double d = hi - lo + in.mean_bound;
      double amax = fmax(fabs(lo), fabs(hi));
      double slop = ldexp((c + 5.0) * c * (rms ? amax * amax : d * d), -52) /
                    (double)(c - (uint32_t)ddof);
      double within = isvar ? e : e * (1 + 1e-12);
      double vb =
          ev - slop -
          (rms ? 0 : c * in.mean_bound * in.mean_bound - c * p.e_mean * p.e_mean) /
              (double)(c - (uint32_t)ddof);
      double b = isvar ? vb : gzs_bound_sqrt(res * res, fmax(vb, 0), low);
      if (!(b <= within * (1 + 1e-9)))
        bad_budget++;
    }
  }
  GZ_CHECK(trials > 15000, "moment trials run: %d", trials);
  GZ_CHECK(bad == 0, "var/std/rms within the claim: %d violations", bad);
  GZ_CHECK(bad_budget == 0, "moment budgets within e: %d violations", bad_budget);
}

/* Weighted moments (--weights): hand cases, then the simulation above with
 * weights (0 to 2^10, a few zero): W, Q and the divisor as
 * app/stack_moments.c computes them, the weighted mean anywhere within
 * the plan's e_mean, the weighted sums of squares anywhere within e_sum;
 * the field within gzs_moment_sq_bound_w (through the claim) of the long
 * double value, and the plan spent in full within e. Hand: weights 1 give
 * the divisors c and c - 1 and the plan of gzs_moment_plan; weights 1, 3
 * give var1's divisor 4 - 10 / 4 = 1.5; one valid value: no var1. */
static void weighted_moments(void) {
  static const gzs_op_t ops[] = {GZS_OP_VAR, GZS_OP_VAR1, GZS_OP_STD, GZS_OP_STD1,
                                 GZS_OP_RMS};
  gz_rng_t rng;
  double x[64], w[64];
  int bad = 0, bad_budget = 0, trials = 0;
  gzs_moment_plan_t a = gzs_moment_plan(GZS_OP_VAR1, 1e-3, 10, 0, 1);
  gzs_moment_plan_t b = gzs_moment_plan_w(GZS_OP_VAR1, 1e-3, 9, 0.9, 10, 0, 1);
  GZ_CHECK(gzs_moment_divisor_w(GZS_OP_VAR1, 10, 10) == 9 &&
               gzs_moment_divisor_w(GZS_OP_VAR, 10, 10) == 10,
           "weights 1: divisors 9 and 10 for a count of 10");
  GZ_CHECK(near(a.e_mean, b.e_mean) && near(a.e_sum, b.e_sum) && near(a.ev, b.ev),
           "weights 1: the plan of gzs_moment_plan (%g %g, %g %g)", a.e_mean, b.e_mean,
           a.e_sum, b.e_sum);
  GZ_CHECK(gzs_moment_divisor_w(GZS_OP_STD1, 4, 10) == 1.5, "weights 1, 3: divisor 1.5");
  GZ_CHECK(gzs_moment_divisor_w(GZS_OP_VAR1, 3, 9) == 0 &&
               gzs_moment_divisor_w(GZS_OP_VAR, 0, 0) == 0,
           "one valid value (var1), no weight: no estimate");
  gz_rng_seed(&rng, 1919);
  for (int t = 0; t < 20000; t++) {
    gzs_op_t op = ops[gz_rng_next(&rng) % 5];
    int rms = op == GZS_OP_RMS, isvar = op == GZS_OP_VAR || op == GZS_OP_VAR1;
    uint32_t c = 1 + (uint32_t)(gz_rng_next(&rng) % 64);
    double off = ldexp(gz_rng_uniform(&rng) - 0.3, (int)(gz_rng_next(&rng) % 24));
    double scale = ldexp(gz_rng_uniform(&rng), -(int)(gz_rng_next(&rng) % 20));
    double e = ldexp(1.0 + gz_rng_uniform(&rng), -(int)(gz_rng_next(&rng) % 40));
    double lo = INFINITY, hi = -INFINITY, W = 0, Q = 0, D, mt, s = 0, ev, res, exact;
    double low;
    long double m = 0, ss = 0, lw = 0;
    gzs_moment_plan_t p;
    gzs_moment_in_t in;
    if (t % 7 == 0)
      scale = 0;
    for (uint32_t i = 0; i < c; i++) {
      x[i] = off + scale * (gz_rng_uniform(&rng) - 0.5);
      w[i] = gz_rng_next(&rng) % 5 == 0
                 ? 0.0
                 : ldexp(gz_rng_uniform(&rng), (int)(gz_rng_next(&rng) % 11));
      lo = fmin(lo, x[i]);
      hi = fmax(hi, x[i]);
      W += w[i];
      Q += w[i] * w[i];
      lw += w[i];
      m += (long double)w[i] * x[i];
    }
    D = gzs_moment_divisor_w(op, W, Q);
    if (!(D > 0))
      continue;
    m /= lw;
    for (uint32_t i = 0; i < c; i++)
      ss +=
          (long double)w[i] * (rms ? (long double)x[i] * x[i] : (x[i] - m) * (x[i] - m));
    trials++;
    p = gzs_moment_plan_w(op, e, D, D / W, W, lo, hi);
    mt = (double)m + (rms ? 0 : p.e_mean * (2 * gz_rng_uniform(&rng) - 1));
    for (uint32_t i = 0; i < c; i++) {
      double d = rms ? x[i] : x[i] - mt;
      s += d * d * w[i];
    }
    s += p.e_sum * (2 * gz_rng_uniform(&rng) - 1);
    in = moment_in(op, p, mt, lo, hi, c);
    res = s > 0 ? s / (rms ? W : D) : 0;
    exact = (double)(ss / (rms ? lw : (long double)D));
    if (gzs_op_ddof(op)) /* the exact divisor, not D rounded */
      exact = (double)(ss / (lw - (long double)Q / lw));
    ev = gzs_moment_sq_bound_w(&in, W, rms ? W : D, res);
    judge_moment("weighted ", op, c, off, scale, e, lo, hi, ev, &res, exact, &low, &bad);
    { /* the plan spent in full: ar / D + W d^2 / D <= Ev */
      double vb = p.e_sum / (rms ? W : D) + (rms ? 0 : W * p.e_mean * p.e_mean / D);
      double vr = isvar ? vb : gzs_bound_sqrt(res * res, vb, low);
      if (!(vr <= e * (1 + 1e-9)))
        bad_budget++;
    }
  }
  GZ_CHECK(trials > 10000, "weighted moment trials run: %d", trials);
  GZ_CHECK(bad == 0, "weighted var/std/rms within the claim: %d violations", bad);
  GZ_CHECK(bad_budget == 0, "weighted moment budgets within e: %d violations",
           bad_budget);
}

/* --reproducible: the grid and the claim. Hand cases: e = 1e-3, a mean:
 * 2e = 0.002 lies in [2^-9, 2^-8) so h = 2^-9 = 0.001953125 (per-input
 * bound h/2 = 0.0009765625 <= e); a sum of N = 110: 2e/N = 1.818e-5 in
 * [2^-16, 2^-15), h = 2^-16. Then a simulation: values quantized on h,
 * their codes summed in int64 in two different orders (the same integer,
 * so the same double S h), every mean and sum within the claim of the
 * exact one (long double). */
static void reproducible(void) {
  gz_rng_t rng;
  gzs_claim_in_t in = {0};
  GZ_CHECK(gzs_repro_step(GZS_OP_MEAN, 1e-3, 110) == 0x1p-9, "mean: h = 2^-9");
  GZ_CHECK(gzs_repro_step(GZS_OP_MAX, 1e-3, 110) == 0x1p-9, "max: h = 2^-9");
  GZ_CHECK(gzs_repro_step(GZS_OP_SUM, 1e-3, 110) == 0x1p-16, "sum of 110: h = 2^-16");
  GZ_CHECK(gzs_repro_step(GZS_OP_MEAN, 0.5, 3) == 1.0, "2e a power of two: h = 2e");
  GZ_CHECK(gzs_repro_step(GZS_OP_MEAN, 0, 3) == 0 &&
               gzs_repro_step(GZS_OP_SUM, NAN, 3) == 0 &&
               gzs_repro_step(GZS_OP_MEAN, 1e-320, 3) == 0,
           "no grid for e = 0, NaN or a subnormal step");
  /* claim, mean of values up to 300 on h = 2^-9: h/2 + 2^-52 (300 + h/2) */
  in.op = GZS_OP_MEAN;
  in.dtype = GZ_FLOAT64;
  in.lo = -300;
  in.hi = 20;
  in.c_max = 110;
  GZ_CHECK(gzs_repro_claim(&in, 0x1p-9).claimed == 0x1p-10 + ldexp(300 + 0x1p-10, -52),
           "mean claim h/2 + 2^-52 (amax + h/2)");
  in.op = GZS_OP_SUM;
  GZ_CHECK(near(gzs_repro_claim(&in, 0x1p-16).claimed,
                110 * (0x1p-17 + ldexp(300 + 0x1p-17, -52))),
           "sum claim c_max (h/2 + ...)");
  /* moments: var e = 1e-3: mean pass sqrt(e/2), squares e/2; std1 e =
   * 0.01: Ev = 1e-4, k = 4: mean 0.005, squares 2.5e-5; rms: e^2 */
  GZ_CHECK(near(gzs_repro_moment_eq(GZS_OP_VAR, 1e-3, 1), sqrt(5e-4)) &&
               near(gzs_repro_moment_eq(GZS_OP_VAR, 1e-3, 2), 5e-4),
           "var passes");
  GZ_CHECK(near(gzs_repro_moment_eq(GZS_OP_STD1, 0.01, 1), 0.005) &&
               near(gzs_repro_moment_eq(GZS_OP_STD1, 0.01, 2), 2.5e-5),
           "std1 passes");
  GZ_CHECK(near(gzs_repro_moment_eq(GZS_OP_RMS, 0.01, 2), 1e-4), "rms: e^2");
  /* at the worst count c = 1 + ddof the two passes add up to Ev */
  GZ_CHECK(near(2 * (gzs_repro_moment_eq(GZS_OP_VAR1, 1e-3, 2) +
                     pow(gzs_repro_moment_eq(GZS_OP_VAR1, 1e-3, 1), 2)),
                1e-3),
           "var1 at c = 2: (c q + c d^2) / (c - 1) = Ev");
  gz_rng_seed(&rng, 20);
  for (int t = 0; t < 200; t++) {
    int n = 1 + (int)(gz_rng_next(&rng) % 300), sum = t % 2;
    double e = pow(10, -1 - 6 * gz_rng_uniform(&rng)),
           scale = pow(10, 4 * gz_rng_uniform(&rng));
    double h = gzs_repro_step(sum ? GZS_OP_SUM : GZS_OP_MEAN, e, (uint64_t)n), x[300];
    long double exact = 0;
    int64_t fwd = 0, bwd = 0;
    double got, want, claim;
    for (int i = 0; i < n; i++) {
      x[i] = (2 * gz_rng_uniform(&rng) - 1) * scale;
      exact += x[i];
    }
    for (int i = 0; i < n; i++) {
      fwd += (int64_t)rint(x[i] / h);
      bwd += (int64_t)rint(x[n - 1 - i] / h);
    }
    in.op = sum ? GZS_OP_SUM : GZS_OP_MEAN;
    in.lo = -scale;
    in.hi = scale;
    in.c_max = (uint32_t)n;
    claim = gzs_repro_claim(&in, h).stage;
    got = sum ? (double)fwd * h : (double)fwd * h / n;
    want = (double)(sum ? exact : exact / n);
    GZ_CHECK(fwd == bwd, "codes summed in two orders differ");
    GZ_CHECK(fabs(got - want) <= claim &&
                 claim <= e * (1 + 1e-12) + ldexp(scale, -50) * n,
             "trial %d (%s of %d, e %g): error %g, claim %g", t, sum ? "sum" : "mean", n,
             e, fabs(got - want), claim);
  }
}

int main(void) {
  hand_budget();
  hand_claim();
  properties();
  hand_moments();
  moment_properties();
  weighted_moments();
  reproducible();
  return gz_test_finish();
}
