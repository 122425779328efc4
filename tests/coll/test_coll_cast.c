/* test_coll_cast.c - gz_alltoall under a pointwise relative bound
 * (GZ_EB_PWREL): the values travel cast to bfloat16, float16 or float32, or
 * exactly where no format is close enough. Every element within e |x| of
 * what MPI_Alltoall delivers, specials and the own block bit-exact, the
 * report's format, bound and bytes; the other collectives take the exact
 * MPI path under this mode. Both types, counts 0..20011, in place. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static gz_ctx_t pwrel_ctx(double e) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_result_t rc;
  cfg.error_bound = e;
  cfg.eb_mode = GZ_EB_PWREL;
  setenv("GZCOLL_ALGO", "alltoall=pairwise", 1); /* small counts: auto takes MPI's */
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
  unsetenv("GZCOLL_ALGO");
  GZ_CHECK(rc == GZ_OK, "PWREL context e=%g: %s", e, gz_strerror(rc));
  return ctx;
}

/* Rank `from`'s values for rank `to`, with specials every 97 values. */
static void fill(gz_dtype_t dt, void *buf, size_t n, int from, int to) {
  static const double specials[] = {0.0, 1e30, 1e-30, -0.0, 70000.0, 1e-6};
  cu_fill(dt, buf, n, 100ull * (uint64_t)from + (uint64_t)to + 7 * n, 50.0);
  for (size_t i = 0; i < n; i += 97)
    cu_set(dt, buf, i, specials[(i / 97) % 6]);
  if (n > 5) {
    cu_set(dt, buf, 3, INFINITY);
    cu_set(dt, buf, 4, NAN);
  }
}

/* Elements of got outside e |want| (want's specials: bit-exact); returns
 * the largest |got - want| in *maxerr. */
static long count_wrong(gz_dtype_t dt, const void *got, const void *want, size_t n,
                        double e, double *maxerr, const char *what) {
  size_t esz = gz_dtype_size(dt);
  long wrong = 0;
  for (size_t i = 0; i < n; i++) {
    double w = cu_get(dt, want, i), g = cu_get(dt, got, i);
    int exact =
        memcmp((const char *)got + i * esz, (const char *)want + i * esz, esz) == 0;
    int ok = isfinite(w) && w != 0 ? fabs(g - w) <= e * fabs(w) : exact;
    if (isfinite(w) && fabs(g - w) > *maxerr)
      *maxerr = fabs(g - w);
    if (!ok && wrong++ < 3)
      printf("  %s: [%zu] %.17g -> %.17g\n", what, i, w, g);
  }
  return wrong;
}

static void test_alltoall(gz_ctx_t ctx, double e, const char *format, gz_dtype_t dt,
                          size_t n) {
  size_t esz = gz_dtype_size(dt), total = n * (size_t)size;
  for (int ip = 0; ip < 2; ip++) {
    void *send = cu_alloc(dt, total), *recv = cu_alloc(dt, total),
         *want = cu_alloc(dt, n);
    double maxerr = 0;
    long wrong = 0;
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    snprintf(what, sizeof what, "PWREL %g alltoall %s n=%zu P=%d%s", e, cu_dtype_name(dt),
             n, size, ip ? " in place" : "");
    for (int d = 0; d < size; d++)
      fill(dt, (char *)(ip ? recv : send) + (size_t)d * n * esz, n, rank, d);
    rc = gz_alltoall(ctx, ip ? GZ_IN_PLACE : send, recv, n, dt, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc == GZ_OK) {
      for (int s = 0; s < size; s++) {
        fill(dt, want, n, s, rank);
        wrong += count_wrong(dt, (char *)recv + (size_t)s * n * esz, want, n,
                             s == rank ? 0.0 : e, &maxerr, what);
      }
      GZ_CHECK(wrong == 0, "%s: %ld elements beyond e |x|", what, wrong);
      if (format && size > 1) {
        GZ_CHECK(rep.compressed && strstr(rep.reason, format), "%s: report %d (%s)", what,
                 rep.compressed, rep.reason);
        GZ_CHECK(maxerr <= rep.result_bound, "%s: error %g beyond the reported %g", what,
                 maxerr, rep.result_bound);
        if (n >= 1001) /* a 2- or 4-byte format and few escapes */
          GZ_CHECK(rep.bytes_sent < 0.6 * (double)rep.bytes_raw, "%s: sent %llu of %llu",
                   what, (unsigned long long)rep.bytes_sent,
                   (unsigned long long)rep.bytes_raw);
      } else if (!format) {
        GZ_CHECK(!rep.compressed, "%s: compressed without a format (%s)", what,
                 rep.reason);
      }
    }
    free(send);
    free(recv);
    free(want);
  }
}

/* Collectives that do not cast: the MPI library's path, exact. */
static void test_others_exact(gz_ctx_t ctx) {
  const size_t n = 5000;
  double *x = cu_alloc(GZ_FLOAT64, n), *y = cu_alloc(GZ_FLOAT64, n),
         *z = cu_alloc(GZ_FLOAT64, n);
  gz_report_t rep;
  cu_fill(GZ_FLOAT64, x, n, 77 + (uint64_t)rank, 10.0);
  GZ_CHECK(gz_allreduce(ctx, x, y, n, GZ_FLOAT64, GZ_OP_MAX, &rep) == GZ_OK, "allreduce");
  MPI_Allreduce(x, z, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  GZ_CHECK(!rep.compressed && memcmp(y, z, n * sizeof *y) == 0,
           "PWREL allreduce: compressed %d (%s) or not exact", rep.compressed,
           rep.reason);
  GZ_CHECK(gz_bcast(ctx, x, n, GZ_FLOAT64, 0, &rep) == GZ_OK && !rep.compressed,
           "PWREL bcast: compressed %d", rep.compressed);
  free(x);
  free(y);
  free(z);
}

int main(int argc, char **argv) {
  /* bound, then the format named by the report for float64 and float32
   * (NULL: sent exactly) */
  static const struct {
    double e;
    const char *f64, *f32;
  } cases[] = {{0.01, "bfloat16", "bfloat16"},
               {1e-3, "float16", "float16"},
               {1e-6, "float32", NULL},
               {1e-12, NULL, NULL}};
  const size_t counts[] = {0, 1, 1001, 20011};
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  {
    gz_config_t cfg = GZ_CONFIG_INIT;
    gz_ctx_t bad = NULL;
    cfg.eb_mode = GZ_EB_PWREL;
    cfg.error_bound = 0;
    GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &bad) == GZ_ERR_ARG,
             "PWREL e = 0 accepted");
  }
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    gz_ctx_t ctx = pwrel_ctx(cases[c].e);
    if (!ctx)
      continue;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
      test_alltoall(ctx, cases[c].e, cases[c].f64, GZ_FLOAT64, counts[k]);
      test_alltoall(ctx, cases[c].e, cases[c].f32, GZ_FLOAT32, counts[k]);
    }
    if (c == 0)
      test_others_exact(ctx);
    gz_ctx_destroy(ctx);
  }
  return gz_test_end_mpi();
}
