/* test_adversarial_coll.c - hostile data through every collective, every
 * algorithm forced in turn. A compressed result must be within the bound
 * the call reports; a call that could not compress (non-finite values,
 * codes out of range) must give exactly what MPI gives, non-finite values
 * bit for bit; reductions and broadcast data must be the same bytes on
 * every rank; no call may fail. */
#include "coll_util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

enum {
  K_NOISE,
  K_ALTERNATING,
  K_CONSTANT,
  K_SUBNORMAL,
  K_EXTREMES,
  K_NAN_INF,
  K_HUGE,
  K_COUNT
};
static const char *kind_name[K_COUNT] = {
    "white noise", "alternating signs", "constant",     "subnormals",
    "+-max",       "NaN/Inf mix",       "code overflow"};

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* Element i of rank r's contribution of kind k. */
static double adversarial(int k, gz_dtype_t dt, int r, size_t i) {
  uint64_t h = mix((uint64_t)r * 1000003u + i + 1);
  double u = (double)(h >> 11) * 0x1p-53 * 2 - 1; /* [-1, 1) */
  double big = dt == GZ_FLOAT32 ? FLT_MAX : DBL_MAX;
  double tiny = dt == GZ_FLOAT32 ? 1e-40 : 1e-310;
  switch (k) {
  case K_NOISE:
    return u;
  case K_ALTERNATING:
    return (i % 2 ? -1.0 : 1.0) * (1.0 + 0.5 * u);
  case K_CONSTANT:
    return 0.75;
  case K_SUBNORMAL:
    return tiny * u;
  case K_EXTREMES:
    return i % 5 == 0 ? (i % 2 ? big : -big) : u;
  case K_NAN_INF:
    return i % 7 == 0 ? NAN : i % 11 == 0 ? (r % 2 ? -INFINITY : INFINITY) : u;
  default: /* K_HUGE: |x| / (2 eb) far beyond the code range */
    return (dt == GZ_FLOAT32 ? 1e30 : 1e200) * u;
  }
}

static void fill(int k, gz_dtype_t dt, int r, void *buf, size_t n) {
  for (size_t i = 0; i < n; i++)
    cu_set(dt, buf, i, adversarial(k, dt, r, i));
}

static MPI_Datatype mpi_type(gz_dtype_t dt) {
  return dt == GZ_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
}

static MPI_Op mpi_op(gz_op_t op) {
  return op == GZ_OP_SUM ? MPI_SUM : op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
}

/* got against want (what MPI gave) and the reported bound: non-finite and
 * uncompressed elements bit-exact, finite compressed ones within bound plus
 * the rounding of a result of their magnitude. Returns the count wrong. */
static long compare(gz_dtype_t dt, const void *got, const void *want, size_t n,
                    const gz_report_t *rep, double slop) {
  size_t es = gz_dtype_size(dt);
  long bad = 0;
  for (size_t i = 0; i < n; i++) {
    double g = cu_get(dt, got, i), w = cu_get(dt, want, i);
    int same = memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0;
    if (!rep->compressed || !isfinite(w))
      bad += !(same || (isnan(g) && isnan(w)));
    else
      bad += !(fabs(g - w) <= rep->result_bound + slop + cu_round_allow(dt, fabs(w)));
  }
  return bad;
}

static void check_reductions(int k, gz_dtype_t dt, size_t n) {
  static const char *const algos[4] = {"auto", "mpi", "redoub", "ring"};
  static const gz_op_t ops[3] = {GZ_OP_SUM, GZ_OP_MAX, GZ_OP_MIN};
  void *in = cu_alloc(dt, n), *got = cu_alloc(dt, n), *want = cu_alloc(dt, n);
  fill(k, dt, rank, in, n);
  for (int o = 0; o < 3; o++) {
    /* SUM of finite inputs: MPI's own float rounding differs from the
     * exact sum by up to P ulps of the partial sums; allow it. */
    double slop = 0;
    MPI_Allreduce(in, want, (int)n, mpi_type(dt), mpi_op(ops[o]), MPI_COMM_WORLD);
    if (ops[o] == GZ_OP_SUM)
      for (size_t i = 0; i < n; i++) {
        double w = fabs(cu_get(dt, want, i));
        if (isfinite(w) && size * cu_round_allow(dt, w + 2.0) > slop)
          slop = size * cu_round_allow(dt, w + 2.0);
      }
    for (int a = 0; a < 4; a++) {
      gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, algos[a], 1e-3, GZ_EB_ABS, GZ_BOUND_STRICT);
      gz_report_t rep;
      gz_result_t rc;
      long bad;
      if (!ctx)
        continue;
      memset(&rep, 0, sizeof rep);
      rc = gz_allreduce(ctx, in, got, n, dt, ops[o], &rep);
      GZ_CHECK(rc == GZ_OK, "allreduce %s %s %s n=%zu: %s", kind_name[k],
               cu_op_name(ops[o]), algos[a], n, gz_strerror(rc));
      bad = rc == GZ_OK ? compare(dt, got, want, n, &rep, slop) : 0;
      GZ_CHECK(bad == 0, "allreduce %s %s %s %s n=%zu: %ld elements wrong (bound %g)",
               kind_name[k], cu_dtype_name(dt), cu_op_name(ops[o]), algos[a], n, bad,
               rep.result_bound);
      GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, got, n * gz_dtype_size(dt)),
               "allreduce %s %s: ranks differ", kind_name[k], algos[a]);
      gz_ctx_destroy(ctx);
    }
  }
  free(in);
  free(got);
  free(want);
}

/* bcast, scatter, allgather, alltoall, reduce_scatter_block: auto, mpi and
 * the compressed algorithm of each, against MPI on the same data. */
static void check_movement(int k, gz_dtype_t dt, size_t n) {
  static const char *const algos[3] = {"auto", "mpi", NULL}; /* NULL: compressed */
  size_t es = gz_dtype_size(dt), total = n * (size_t)size;
  void *src = cu_alloc(dt, total), *got = cu_alloc(dt, total),
       *want = cu_alloc(dt, total);
  fill(k, dt, rank, src, total);
  for (int a = 0; a < 3; a++) {
    for (int c = 0; c < 5; c++) {
      static const char *const compressed[5] = {"binomial", "binomial", "ring",
                                                "pairwise", "ring"};
      static const char *names[5] = {"bcast", "scatter", "allgather", "alltoall",
                                     "reduce_scatter"};
      const char *algo = algos[a] ? algos[a] : compressed[c];
      gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, algo, 1e-3, GZ_EB_ABS, GZ_BOUND_STRICT);
      gz_report_t rep;
      gz_result_t rc = GZ_OK;
      size_t m = n; /* elements compared */
      long bad;
      int same_everywhere = 0;
      if (!ctx)
        continue;
      memset(&rep, 0, sizeof rep);
      switch (c) {
      case 0:
        memcpy(got, src, n * es);
        memcpy(want, src, n * es);
        MPI_Bcast(want, (int)n, mpi_type(dt), 0, MPI_COMM_WORLD);
        rc = gz_bcast(ctx, got, n, dt, 0, &rep);
        same_everywhere = 1;
        break;
      case 1:
        MPI_Scatter(src, (int)n, mpi_type(dt), want, (int)n, mpi_type(dt), 0,
                    MPI_COMM_WORLD);
        rc = gz_scatter(ctx, src, got, n, dt, 0, &rep);
        break;
      case 2:
        MPI_Allgather(src, (int)n, mpi_type(dt), want, (int)n, mpi_type(dt),
                      MPI_COMM_WORLD);
        rc = gz_allgather(ctx, src, got, n, dt, &rep);
        m = total;
        same_everywhere = 1;
        break;
      case 3:
        MPI_Alltoall(src, (int)n, mpi_type(dt), want, (int)n, mpi_type(dt),
                     MPI_COMM_WORLD);
        rc = gz_alltoall(ctx, src, got, n, dt, &rep);
        m = total;
        break;
      default:
        if (k == K_EXTREMES || k == K_HUGE) { /* sums overflow to Inf in MPI's float */
          gz_ctx_destroy(ctx);
          continue;
        }
        MPI_Reduce_scatter_block(src, want, (int)n, mpi_type(dt), MPI_MAX,
                                 MPI_COMM_WORLD);
        rc = gz_reduce_scatter_block(ctx, src, got, n, dt, GZ_OP_MAX, &rep);
        break;
      }
      GZ_CHECK(rc == GZ_OK, "%s %s %s n=%zu: %s", names[c], kind_name[k], algo, n,
               gz_strerror(rc));
      bad = rc == GZ_OK ? compare(dt, got, want, m, &rep, 0) : 0;
      GZ_CHECK(bad == 0,
               "%s %s %s %s n=%zu: %ld elements wrong (bound %g, compressed %d)",
               names[c], kind_name[k], cu_dtype_name(dt), algo, n, bad, rep.result_bound,
               rep.compressed);
      if (same_everywhere)
        GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, got, m * es), "%s %s: ranks differ",
                 names[c], kind_name[k]);
      gz_ctx_destroy(ctx);
    }
  }
  free(src);
  free(got);
  free(want);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  {
    /* counts divisible by neither the rank count nor the block size (32) */
    size_t counts[4] = {1, 31, 33, (size_t)size * 32 + 7};
    for (int t = 0; t < 2; t++) {
      gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
      for (int k = 0; k < K_COUNT; k++)
        for (int c = 0; c < 4; c++) {
          check_reductions(k, dt, counts[c] * 37);
          check_movement(k, dt, counts[c]);
        }
    }
  }
  return gz_test_end_mpi();
}
