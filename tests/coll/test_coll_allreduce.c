/* test_coll_allreduce.c - gz_allreduce and gz_allreduce_mean against MPI's
 * allreduce in double: every algorithm forced in turn, both types, all ops,
 * counts 0, 1, P-1, odd and large, in place, a split sub-communicator, the
 * strict and per-message policies, REL bounds, the escape path for values
 * that cannot be quantized, and failure agreement. Checks every element
 * against the reported bound, the bound against the user's e, identical
 * bytes on every rank, and identical bytes from ReDoub and ring. The code
 * width: int32 codes (where the agreed range fits), int64 codes forced
 * (GZCOLL_WIDE_CODES) and chosen by the range (one rank's large value, a sum
 * of codes beyond 2^31) give the same bytes and bounds. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E 1e-3

static int world_rank, world_size;

static uint64_t seed_of(MPI_Comm comm, size_t n, gz_dtype_t dt, gz_op_t op) {
  int r;
  MPI_Comm_rank(comm, &r);
  return 1000003ull * (uint64_t)(r + 1) + 7919ull * n + 31ull * (uint64_t)dt +
         (uint64_t)op;
}

/* One configuration through every algorithm of ctx[]. */
static void run_case(MPI_Comm comm, gz_ctx_t ctx[4], gz_dtype_t dt, gz_op_t op, size_t n,
                     int inplace) {
  size_t esz = gz_dtype_size(dt);
  void *in = cu_alloc(dt, n), *out = cu_alloc(dt, n), *first = cu_alloc(dt, n);
  double *ref = malloc((n + 1) * sizeof *ref), *slop = malloc((n + 1) * sizeof *slop);
  double rmax;
  int have_first = 0, P;
  MPI_Comm_size(comm, &P);
  cu_fill(dt, in, n, seed_of(comm, n, dt, op), 5.0);
  cu_reference(comm, dt, op, in, n, ref, slop);
  rmax = cu_absmax(ref, n);
  for (int a = 0; a < 4; a++) {
    const char *algo = cu_allreduce_algos[a];
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    long wrong;
    memset(&rep, 0, sizeof rep);
    memset(out, 0xff, (n + 1) * esz);
    if (inplace)
      memcpy(out, in, n * esz);
    snprintf(what, sizeof what, "allreduce %s %s %s n=%zu P=%d%s", algo,
             cu_dtype_name(dt), cu_op_name(op), n, P, inplace ? " in-place" : "");
    rc = gz_allreduce(ctx[a], inplace ? GZ_IN_PLACE : in, out, n, dt, op, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc != GZ_OK)
      continue;
    if (!strcmp(algo, "redoub") || !strcmp(algo, "ring"))
      GZ_CHECK(!strcmp(rep.algo, algo) && rep.compressed == 1,
               "%s: report algo %s compressed %d (%s)", what, rep.algo, rep.compressed,
               rep.reason);
    if (!strcmp(algo, "mpi"))
      GZ_CHECK(!strcmp(rep.algo, "mpi") && !rep.compressed, "%s: report", what);
    if (rep.compressed) {
      double want_eb = op == GZ_OP_SUM ? E / P : E;
      GZ_CHECK(fabs(rep.quant_bound - want_eb) <= 1e-15 * want_eb,
               "%s: quant_bound %g want %g", what, rep.quant_bound, want_eb);
      GZ_CHECK(rep.result_bound <=
                   E * (1 + 1e-9) + cu_round_allow(dt, rmax) + ldexp(P * 10.0, -45),
               "%s: strict bound %g exceeds e %g", what, rep.result_bound, E);
      GZ_CHECK(rep.bytes_sent <= rep.bytes_raw + 64 * (uint64_t)P || n < 1000,
               "%s: sent %llu > raw %llu", what, (unsigned long long)rep.bytes_sent,
               (unsigned long long)rep.bytes_raw);
    }
    wrong = cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, what);
    GZ_CHECK(wrong == 0, "%s: %ld elements outside the reported bound %g", what, wrong,
             rep.result_bound);
    GZ_CHECK(cu_same_on_all(comm, out, n * esz), "%s: bytes differ between ranks", what);
    if (rep.compressed) {
      if (!have_first)
        memcpy(first, out, n * esz);
      else
        GZ_CHECK(memcmp(first, out, n * esz) == 0,
                 "%s: differs from the other compressed algorithm", what);
      have_first = 1;
    }
  }
  free(in);
  free(out);
  free(first);
  free(ref);
  free(slop);
}

static void test_matrix(MPI_Comm comm, const size_t *counts, int ncounts) {
  gz_ctx_t ctx[4];
  for (int a = 0; a < 4; a++)
    ctx[a] = cu_ctx(comm, cu_allreduce_algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
  for (int t = 0; t < 2; t++)
    for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
      for (int c = 0; c < ncounts; c++)
        for (int ip = 0; ip < 2; ip++)
          run_case(comm, ctx, t ? GZ_FLOAT64 : GZ_FLOAT32, (gz_op_t)op, counts[c], ip);
  for (int a = 0; a < 4; a++)
    gz_ctx_destroy(ctx[a]);
}

/* Mean helper: strict bounds the mean by e. */
static void test_mean(void) {
  const size_t n = 20011;
  double divisor = 3.0 * world_size;
  for (int a = 0; a < 4; a++) {
    gz_ctx_t ctx =
        cu_ctx(MPI_COMM_WORLD, cu_allreduce_algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    for (int t = 0; t < 2; t++) {
      gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
      void *in = cu_alloc(dt, n), *out = cu_alloc(dt, n);
      double *ref = malloc(n * sizeof *ref), *slop = malloc(n * sizeof *slop);
      gz_report_t rep;
      gz_result_t rc;
      cu_fill(dt, in, n, seed_of(MPI_COMM_WORLD, n, dt, GZ_OP_SUM) + 99, 50.0);
      cu_reference(MPI_COMM_WORLD, dt, GZ_OP_SUM, in, n, ref, slop);
      for (size_t i = 0; i < n; i++) {
        ref[i] /= divisor;
        slop[i] = slop[i] / divisor + ldexp(fabs(ref[i]), -52);
      }
      rc = gz_allreduce_mean(ctx, in, out, n, dt, divisor, &rep);
      GZ_CHECK(rc == GZ_OK, "mean %s: %s", cu_allreduce_algos[a], gz_strerror(rc));
      if (rc == GZ_OK) {
        GZ_CHECK(cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, "mean") == 0,
                 "mean %s %s outside bound %g", cu_allreduce_algos[a], cu_dtype_name(dt),
                 rep.result_bound);
        GZ_CHECK(rep.result_bound <= E * (1 + 1e-9) + cu_round_allow(dt, 100.0),
                 "mean bound %g > e", rep.result_bound);
        if (rep.compressed)
          GZ_CHECK(fabs(rep.quant_bound - E * divisor / world_size) < 1e-12,
                   "mean quant_bound %g", rep.quant_bound);
        GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, out, n * gz_dtype_size(dt)),
                 "mean bytes differ");
      }
      rc = gz_allreduce_mean(ctx, in, out, n, dt, 0.0, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "mean divisor 0: %s", gz_strerror(rc));
      free(in);
      free(out);
      free(ref);
      free(slop);
    }
    gz_ctx_destroy(ctx);
  }
}

/* Per-message policy and REL bounds. */
static void test_policies(void) {
  const size_t n = 30001;
  const gz_dtype_t dt = GZ_FLOAT32;
  void *in = cu_alloc(dt, n), *out = cu_alloc(dt, n);
  double *ref = malloc(n * sizeof *ref), *slop = malloc(n * sizeof *slop);
  double lo = HUGE_VAL, hi = -HUGE_VAL, range;
  cu_fill(dt, in, n, seed_of(MPI_COMM_WORLD, n, dt, GZ_OP_SUM) + 5, 2.0);
  cu_reference(MPI_COMM_WORLD, dt, GZ_OP_SUM, in, n, ref, slop);
  for (size_t i = 0; i < n; i++) {
    double v = cu_get(dt, in, i);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  range = hi - lo;
  for (int a = 2; a < 4; a++) {
    const char *algo = cu_allreduce_algos[a];
    gz_ctx_t pm = cu_ctx(MPI_COMM_WORLD, algo, E, GZ_EB_ABS, GZ_BOUND_PER_MESSAGE);
    gz_ctx_t rel = cu_ctx(MPI_COMM_WORLD, algo, 1e-4, GZ_EB_REL, GZ_BOUND_STRICT);
    gz_report_t rep;
    gz_result_t rc = gz_allreduce(pm, in, out, n, dt, GZ_OP_SUM, &rep);
    GZ_CHECK(rc == GZ_OK && rep.quant_bound == E && rep.result_bound >= world_size * E,
             "per-message %s: rc %s eb %g bound %g", algo, gz_strerror(rc),
             rep.quant_bound, rep.result_bound);
    GZ_CHECK(cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, "per-message") == 0,
             "per-message %s outside bound", algo);
    rc = gz_allreduce(rel, in, out, n, dt, GZ_OP_SUM, &rep);
    GZ_CHECK(rc == GZ_OK &&
                 fabs(rep.quant_bound - 1e-4 * range / world_size) <= 1e-12 * range,
             "REL %s: rc %s eb %g want %g", algo, gz_strerror(rc), rep.quant_bound,
             1e-4 * range / world_size);
    GZ_CHECK(rep.result_bound <=
                 1e-4 * range * (1 + 1e-9) + cu_round_allow(dt, 20.0 * world_size),
             "REL %s bound %g > e range %g", algo, rep.result_bound, 1e-4 * range);
    GZ_CHECK(cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, "REL") == 0,
             "REL %s outside bound", algo);
    /* MAX under REL: eb = e * range, no division by P */
    rc = gz_allreduce(rel, in, out, n, dt, GZ_OP_MAX, &rep);
    GZ_CHECK(rc == GZ_OK && fabs(rep.quant_bound - 1e-4 * range) <= 1e-12 * range,
             "REL max %s: eb %g", algo, rep.quant_bound);
    gz_ctx_destroy(pm);
    gz_ctx_destroy(rel);
  }
  free(in);
  free(out);
  free(ref);
  free(slop);
}

/* NaN, Inf or huge values on one rank: every rank falls back to MPI. */
static void test_escape(void) {
  const size_t n = 4099;
  for (int t = 0; t < 2; t++) {
    gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
    for (int kind = 0; kind < 2; kind++) {
      void *in = cu_alloc(dt, n), *out = cu_alloc(dt, n), *want = cu_alloc(dt, n);
      cu_fill(dt, in, n, seed_of(MPI_COMM_WORLD, n, dt, GZ_OP_SUM) + 17, 3.0);
      if (world_rank == world_size - 1) {
        if (kind == 0) {
          cu_set(dt, in, 3, NAN);
          cu_set(dt, in, 5, INFINITY);
        } else {
          cu_set(dt, in, 7, dt == GZ_FLOAT32 ? 3e38 : 1e300);
        }
      }
      MPI_Allreduce(in, want, (int)n, dt == GZ_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM,
                    MPI_COMM_WORLD);
      for (int a = 2; a < 4; a++) {
        gz_ctx_t ctx =
            cu_ctx(MPI_COMM_WORLD, cu_allreduce_algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
        gz_report_t rep;
        gz_result_t rc = gz_allreduce(ctx, in, out, n, dt, GZ_OP_SUM, &rep);
        long bad = 0;
        GZ_CHECK(rc == GZ_OK, "escape: %s", gz_strerror(rc));
        GZ_CHECK(!rep.compressed && !strcmp(rep.algo, "mpi") &&
                     strstr(rep.reason, "non-finite") != NULL,
                 "escape %s: compressed %d algo %s reason '%s'", cu_allreduce_algos[a],
                 rep.compressed, rep.algo, rep.reason);
        for (size_t i = 0; i < n; i++) {
          double g = cu_get(dt, out, i), w = cu_get(dt, want, i);
          if (!(g == w || (isnan(g) && isnan(w))))
            bad++;
        }
        GZ_CHECK(bad == 0, "escape %s %s: %ld values differ from MPI",
                 cu_allreduce_algos[a], cu_dtype_name(dt), bad);
        gz_ctx_destroy(ctx);
      }
      free(in);
      free(out);
      free(want);
    }
  }
}

/* The same call with int32 codes allowed and with int64 codes forced gives
 * the same bytes and bounds, within the bound of MPI's result in double:
 * kind 0 fits int32; kind 1 has one large value late on the last rank (that
 * rank widens what it quantized; the agreed range makes every rank wide);
 * kind 2 puts on every rank a code that fits int32 at the same index, whose
 * sum over the ranks does not (SUM must be wide). */
static void test_code_width(void) {
  const size_t n = 20011, at = n - 7;
  for (int t = 0; t < 2; t++)
    for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
      for (int kind = 0; kind < 3; kind++) {
        gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
        size_t esz = gz_dtype_size(dt);
        void *in = cu_alloc(dt, n), *out = cu_alloc(dt, n), *wide = cu_alloc(dt, n);
        double *ref = malloc(n * sizeof *ref), *slop = malloc(n * sizeof *slop);
        double eb = op == GZ_OP_SUM ? E / world_size : E;
        cu_fill(dt, in, n, seed_of(MPI_COMM_WORLD, n, dt, (gz_op_t)op) + 5, 5.0);
        if (kind == 1 && world_rank == world_size - 1)
          cu_set(dt, in, at, 1e7);
        if (kind == 2) /* |code| = 1.5 * 2^31 / P on every rank: the sum does not fit */
          cu_set(dt, in, at, ldexp(1.5, 31) / world_size * 2 * eb);
        cu_reference(MPI_COMM_WORLD, dt, (gz_op_t)op, in, n, ref, slop);
        for (int a = 2; a < 4; a++) {
          gz_report_t rep, rep_wide;
          gz_ctx_t ctx, ctx_wide;
          gz_result_t rc, rc_wide;
          char what[128];
          snprintf(what, sizeof what, "code width %s %s %s kind %d P=%d",
                   cu_allreduce_algos[a], cu_dtype_name(dt), cu_op_name((gz_op_t)op),
                   kind, world_size);
          ctx = cu_ctx(MPI_COMM_WORLD, cu_allreduce_algos[a], E, GZ_EB_ABS,
                       GZ_BOUND_STRICT);
          setenv("GZCOLL_WIDE_CODES", "1", 1);
          ctx_wide = cu_ctx(MPI_COMM_WORLD, cu_allreduce_algos[a], E, GZ_EB_ABS,
                            GZ_BOUND_STRICT);
          unsetenv("GZCOLL_WIDE_CODES");
          rc = gz_allreduce(ctx, in, out, n, dt, (gz_op_t)op, &rep);
          rc_wide = gz_allreduce(ctx_wide, in, wide, n, dt, (gz_op_t)op, &rep_wide);
          GZ_CHECK(rc == GZ_OK && rc_wide == GZ_OK, "%s: %s / %s", what, gz_strerror(rc),
                   gz_strerror(rc_wide));
          if (rc == GZ_OK && rc_wide == GZ_OK) {
            GZ_CHECK(rep.compressed && rep_wide.compressed, "%s: compressed", what);
            GZ_CHECK(memcmp(out, wide, n * esz) == 0, "%s: int32 and int64 codes differ",
                     what);
            GZ_CHECK(rep.result_bound == rep_wide.result_bound, "%s: bounds %g / %g",
                     what, rep.result_bound, rep_wide.result_bound);
            GZ_CHECK(cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, what) == 0,
                     "%s: elements outside the bound %g", what, rep.result_bound);
            GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, out, n * esz),
                     "%s: bytes differ between ranks", what);
          }
          gz_ctx_destroy(ctx);
          gz_ctx_destroy(ctx_wide);
        }
        free(in);
        free(out);
        free(wide);
        free(ref);
        free(slop);
      }
}

/* A failure on one rank is returned by every rank; nothing hangs. */
static void test_failures(void) {
  const size_t n = 5000;
  float *in = cu_alloc(GZ_FLOAT32, n + 1), *out = cu_alloc(GZ_FLOAT32, n + 1);
  cu_fill(GZ_FLOAT32, in, n + 1, 4242, 1.0);
  for (int a = 0; a < 4; a++) {
    gz_ctx_t ctx =
        cu_ctx(MPI_COMM_WORLD, cu_allreduce_algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    int last = world_rank == world_size - 1;
    gz_result_t rc;
    const char *name = cu_allreduce_algos[a];
    /* bad op on the last rank */
    rc = gz_allreduce(ctx, in, out, n, GZ_FLOAT32, last ? (gz_op_t)7 : GZ_OP_SUM, NULL);
    GZ_CHECK(rc == (last ? GZ_ERR_ARG : GZ_ERR_REMOTE), "%s bad op: %s", name,
             gz_strerror(rc));
    /* NULL receive buffer on rank 0 */
    rc = gz_allreduce(ctx, in, world_rank == 0 ? NULL : out, n, GZ_FLOAT32, GZ_OP_MAX,
                      NULL);
    GZ_CHECK(rc == (world_rank == 0 ? GZ_ERR_ARG : GZ_ERR_REMOTE), "%s NULL buffer: %s",
             name, gz_strerror(rc));
    /* counts that differ between ranks */
    if (world_size > 1) {
      rc = gz_allreduce(ctx, in, out, world_rank == 0 ? n + 1 : n, GZ_FLOAT32, GZ_OP_SUM,
                        NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "%s count mismatch: %s", name, gz_strerror(rc));
    }
    /* and the context still works afterwards */
    rc = gz_allreduce(ctx, in, out, n, GZ_FLOAT32, GZ_OP_MAX, NULL);
    GZ_CHECK(rc == GZ_OK, "%s after failures: %s", name, gz_strerror(rc));
    gz_ctx_destroy(ctx);
  }
  GZ_CHECK(gz_allreduce(NULL, in, out, n, GZ_FLOAT32, GZ_OP_SUM, NULL) == GZ_ERR_ARG,
           "NULL context");
  free(in);
  free(out);
}

int main(int argc, char **argv) {
  MPI_Comm half;
  gz_test_init_mpi(&argc, &argv, &world_rank, &world_size);
  {
    size_t counts[5] = {0, 1, (size_t)(world_size - 1), 1001, 100003};
    test_matrix(MPI_COMM_WORLD, counts, 5);
  }
  /* a split sub-communicator: even and odd ranks reduce separately */
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  {
    size_t counts[2] = {3, 40009};
    test_matrix(half, counts, 2);
  }
  MPI_Comm_free(&half);
  test_mean();
  test_policies();
  test_escape();
  test_code_width();
  test_failures();
  return gz_test_end_mpi();
}
