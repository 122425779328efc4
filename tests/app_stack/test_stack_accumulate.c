/*
 * test_stack_accumulate.c - the accumulator of `gzstack stack`
 * (app/stack_accumulate.c), no MPI, no file: a rank's first snapshot read
 * in place into the accumulator and initialising it (gzs_acc_t.init) must
 * leave the same bits, counts and range as that snapshot added to a fresh
 * accumulator; the tight loop of a plain sum must hand over to the general
 * one at the first missing value with the right counts. Signed zeros,
 * NaN, infinities, fill values and --normalize live zeros included, in one
 * part and in several.
 */
#include "gz_test.h"
#include "stack_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NPTS = 1000 };

typedef struct outcome {
  double *acc;
  uint32_t *counts;
  double lo, hi;
} outcome_t;

/* Snapshot k's value at point i: mostly smooth, with signed zeros and, when
 * holes, NaN, infinities, the fill value and zeros at scattered points. */
static double value(int k, size_t i, int holes) {
  double v = sin(0.01 * (double)i + k) * (1.0 + k);
  if (i % 97 == 3)
    v = -0.0;
  if (i % 89 == 5)
    v = 0.0;
  if (holes && (i + (size_t)k) % 53 == 7)
    v = NAN;
  if (holes && (i + (size_t)k) % 71 == 11)
    v = k % 2 ? INFINITY : -INFINITY;
  if (holes && (i + 3 * (size_t)k) % 61 == 13)
    v = -999.0; /* the fill value */
  return v;
}

/* Two snapshots into a fresh accumulator for op, each read in parts of
 * `part` values. in_place: the first one is read into the accumulator and
 * initialises it (as stack_read.c does), else it comes from a buffer. */
static outcome_t stack_two(gzs_op_t op, int holes, int zero_missing, size_t part,
                           int in_place) {
  outcome_t r = {gzs_acc_alloc(op, NPTS), NULL, 0, 0};
  double *buf = malloc(sizeof(double) * NPTS);
  gzs_acc_t s;
  gzs_acc_init(&s, op, r.acc, &r.counts, NPTS);
  s.zero_missing = zero_missing;
  for (int k = 0; k < 2 && r.acc && buf; k++) {
    s.init = in_place && k == 0;
    for (size_t off = 0; off < NPTS; off += part) {
      size_t n = NPTS - off < part ? NPTS - off : part;
      double *x = s.init ? r.acc + off : buf;
      for (size_t i = 0; i < n; i++)
        x[i] = value(k, off + i, holes);
      GZ_CHECK(gzs_accumulate(&s, x, off, n, holes, -999.0, NULL) == 0, "accumulate");
    }
    s.done++;
  }
  r.lo = s.lo;
  r.hi = s.hi;
  free(buf);
  return r;
}

static int same_bits(const void *a, const void *b, size_t bytes) {
  return (a == NULL) == (b == NULL) && (!a || memcmp(a, b, bytes) == 0);
}

int main(void) {
  const gzs_op_t ops[] = {GZS_OP_SUM, GZS_OP_MEAN, GZS_OP_MAX, GZS_OP_MIN};
  const size_t parts[] = {NPTS, 300, 7};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int holes = 0; holes < 2; holes++)
      for (int zm = 0; zm < 2; zm++)
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
          outcome_t ref = stack_two(ops[o], holes, zm, parts[p], 0);
          outcome_t got = stack_two(ops[o], holes, zm, parts[p], 1);
          const char *what = gzs_op_name(ops[o]);
          GZ_CHECK(ref.acc && got.acc, "%s: memory", what);
          GZ_CHECK(same_bits(ref.acc, got.acc, sizeof(double) * NPTS),
                   "%s holes %d zero_missing %d part %zu: in place = added to fresh",
                   what, holes, zm, parts[p]);
          GZ_CHECK(same_bits(ref.counts, got.counts, sizeof(uint32_t) * NPTS),
                   "%s holes %d zero_missing %d part %zu: the same counts", what, holes,
                   zm, parts[p]);
          GZ_CHECK(ref.lo == got.lo && ref.hi == got.hi, "%s: the same range", what);
          free(ref.acc);
          free(ref.counts);
          free(got.acc);
          free(got.counts);
        }

  /* The values themselves: a sum's signed zeros become +0 (0.0 + -0.0), a
   * max keeps -0; counts start at the first missing value (point 7 of
   * snapshot 0) with every earlier point counted; missing points of a sum
   * hold 0, of a max NaN. */
  {
    outcome_t sum = stack_two(GZS_OP_SUM, 1, 0, NPTS, 1);
    outcome_t max = stack_two(GZS_OP_MAX, 1, 0, NPTS, 1);
    size_t bad = 0;
    GZ_CHECK(sum.counts && max.counts, "counts started");
    for (size_t i = 0; i < NPTS && sum.counts && max.counts; i++) {
      double a = value(0, i, 1), b = value(1, i, 1), want = 0.0, wmax = NAN;
      uint32_t c = 0;
      if (isfinite(a) && a != -999.0) {
        want += a;
        wmax = a;
        c++;
      }
      if (isfinite(b) && b != -999.0) {
        want += b;
        wmax = isnan(wmax) || b > wmax ? b : wmax;
        c++;
      }
      bad += sum.counts[i] != c || max.counts[i] != c ||
             memcmp(&sum.acc[i], &want, sizeof want) != 0 ||
             (isnan(wmax) ? !isnan(max.acc[i]) : max.acc[i] != wmax);
      if (i == 3) /* -0.0 in both snapshots */
        GZ_CHECK(!signbit(sum.acc[i]) && signbit(max.acc[i]), "signed zeros");
    }
    GZ_CHECK(bad == 0, "%zu points with a wrong sum, max or count", bad);
    free(sum.acc);
    free(sum.counts);
    free(max.acc);
    free(max.counts);
  }
  return gz_test_finish();
}
