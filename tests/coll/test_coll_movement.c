/* test_coll_movement.c - the data-movement collectives against what MPI
 * would deliver: gz_bcast, gz_scatter, gz_allgather and gz_alltoall, with
 * auto, mpi and their compressed algorithm forced in turn, both types,
 * counts 0, 1, P-1, odd and large, several roots, in place, the world and a
 * split sub-communicator (ranks reversed), REL bounds, the escape path and
 * failure agreement. Every element within the reported bound of the
 * original; same bytes on every rank for bcast and allgather. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E 1e-3

/* The communicator under test (the world, then a split) and this rank in it. */
static MPI_Comm comm;
static int rank, size;

/* Data rank `from` holds for rank `to` (deterministic, known everywhere). */
static void block_of(gz_dtype_t dt, void *buf, size_t n, int from, int to, int salt) {
  cu_fill(dt, buf, n,
          1000ull * (uint64_t)from + 31ull * (uint64_t)to + 7ull * n + (uint64_t)salt,
          3.0);
}

/* Elements of got (n) within bound of want, as a check. */
static void expect_close(gz_dtype_t dt, const void *got, const void *want, size_t n,
                         double bound, const char *what) {
  double *ref = malloc((n + 1) * sizeof *ref);
  long wrong;
  for (size_t i = 0; i < n; i++)
    ref[i] = cu_get(dt, want, i);
  wrong = cu_count_wrong(dt, got, ref, NULL, n, bound, what);
  GZ_CHECK(wrong == 0, "%s: %ld elements outside the bound %g", what, wrong, bound);
  free(ref);
}

static void check_report(const gz_report_t *rep, const char *forced,
                         const char *compressed_algo, double maxabs, gz_dtype_t dt,
                         const char *what) {
  if (forced == compressed_algo)
    GZ_CHECK(!strcmp(rep->algo, forced) && rep->compressed,
             "%s: report %s compressed %d (%s)", what, rep->algo, rep->compressed,
             rep->reason);
  if (!strcmp(forced, "mpi"))
    GZ_CHECK(!strcmp(rep->algo, "mpi") && !rep->compressed && rep->result_bound == 0,
             "%s: mpi report", what);
  if (rep->compressed)
    GZ_CHECK(rep->result_bound <= E + cu_round_allow(dt, maxabs), "%s: bound %g > e",
             what, rep->result_bound);
}

static void test_bcast(gz_ctx_t ctx, const char *algo, gz_dtype_t dt, size_t n) {
  int roots[3] = {0, size - 1, size / 2};
  for (int k = 0; k < 3; k++) {
    int root = roots[k];
    void *buf = cu_alloc(dt, n), *orig = cu_alloc(dt, n);
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    snprintf(what, sizeof what, "bcast %s %s n=%zu root=%d P=%d", algo, cu_dtype_name(dt),
             n, root, size);
    block_of(dt, orig, n, root, -1, 1);
    if (rank == root)
      memcpy(buf, orig, n * gz_dtype_size(dt));
    rc = gz_bcast(ctx, buf, n, dt, root, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc == GZ_OK) {
      check_report(&rep, algo, "binomial", 4.0, dt, what);
      expect_close(dt, buf, orig, n, rep.result_bound, what);
      GZ_CHECK(cu_same_on_all(comm, buf, n * gz_dtype_size(dt)),
               "%s: bytes differ between ranks", what);
    }
    free(buf);
    free(orig);
  }
}

static void test_scatter(gz_ctx_t ctx, const char *algo, gz_dtype_t dt, size_t n) {
  int roots[3] = {0, size - 1, size / 2};
  size_t esz = gz_dtype_size(dt);
  for (int k = 0; k < 3; k++)
    for (int ip = 0; ip < 2; ip++) {
      int root = roots[k];
      void *send = cu_alloc(dt, n * (size_t)size), *recv = cu_alloc(dt, n);
      void *want = cu_alloc(dt, n);
      gz_report_t rep;
      gz_result_t rc;
      char what[128];
      int inplace = ip && rank == root;
      snprintf(what, sizeof what, "scatter %s %s n=%zu root=%d P=%d%s", algo,
               cu_dtype_name(dt), n, root, size, ip ? " in-place" : "");
      if (rank == root)
        for (int d = 0; d < size; d++)
          block_of(dt, (char *)send + (size_t)d * n * esz, n, root, d, 2);
      block_of(dt, want, n, root, rank, 2);
      rc = gz_scatter(ctx, rank == root ? send : NULL,
                      inplace ? (void *)GZ_IN_PLACE : recv, n, dt, root, &rep);
      GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
      if (rc == GZ_OK) {
        check_report(&rep, algo, "binomial", 4.0, dt, what);
        if (rank == root)
          GZ_CHECK(rep.result_bound == 0, "%s: root bound %g", what, rep.result_bound);
        expect_close(dt, inplace ? (char *)send + (size_t)root * n * esz : recv, want, n,
                     rep.result_bound, what);
      }
      free(send);
      free(recv);
      free(want);
    }
}

static void test_allgather(gz_ctx_t ctx, const char *algo, gz_dtype_t dt, size_t n) {
  size_t esz = gz_dtype_size(dt);
  for (int ip = 0; ip < 2; ip++) {
    void *mine = cu_alloc(dt, n), *recv = cu_alloc(dt, n * (size_t)size);
    void *want = cu_alloc(dt, n);
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    snprintf(what, sizeof what, "allgather %s %s n=%zu P=%d%s", algo, cu_dtype_name(dt),
             n, size, ip ? " in-place" : "");
    block_of(dt, mine, n, rank, -1, 3);
    if (ip)
      memcpy((char *)recv + (size_t)rank * n * esz, mine, n * esz);
    rc = gz_allgather(ctx, ip ? GZ_IN_PLACE : mine, recv, n, dt, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc == GZ_OK) {
      check_report(&rep, algo, "ring", 4.0, dt, what);
      for (int s = 0; s < size; s++) {
        block_of(dt, want, n, s, -1, 3);
        expect_close(dt, (char *)recv + (size_t)s * n * esz, want, n, rep.result_bound,
                     what);
      }
      GZ_CHECK(cu_same_on_all(comm, recv, n * (size_t)size * esz),
               "%s: bytes differ between ranks", what);
    }
    free(mine);
    free(recv);
    free(want);
  }
}

static void test_alltoall(gz_ctx_t ctx, const char *algo, gz_dtype_t dt, size_t n) {
  size_t esz = gz_dtype_size(dt), total = n * (size_t)size;
  for (int ip = 0; ip < 2; ip++) {
    void *send = cu_alloc(dt, total), *recv = cu_alloc(dt, total),
         *want = cu_alloc(dt, n);
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    snprintf(what, sizeof what, "alltoall %s %s n=%zu P=%d%s", algo, cu_dtype_name(dt), n,
             size, ip ? " in-place" : "");
    for (int d = 0; d < size; d++)
      block_of(dt, (char *)(ip ? recv : send) + (size_t)d * n * esz, n, rank, d, 4);
    rc = gz_alltoall(ctx, ip ? GZ_IN_PLACE : send, recv, n, dt, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc == GZ_OK) {
      check_report(&rep, algo, "pairwise", 4.0, dt, what);
      for (int s = 0; s < size; s++) {
        block_of(dt, want, n, s, rank, 4);
        expect_close(dt, (char *)recv + (size_t)s * n * esz, want, n,
                     s == rank ? 0.0 : rep.result_bound, what);
      }
    }
    free(send);
    free(recv);
    free(want);
  }
}

static void test_matrix(MPI_Comm c, const size_t *counts, int ncounts) {
  const char *const algos[3][3] = {
      {"auto", "mpi", "binomial"}, {"auto", "mpi", "ring"}, {"auto", "mpi", "pairwise"}};
  comm = c;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int a = 0; a < 3; a++) {
    gz_ctx_t bin = cu_ctx(comm, algos[0][a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    gz_ctx_t ring = cu_ctx(comm, algos[1][a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    gz_ctx_t pw = cu_ctx(comm, algos[2][a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    for (int t = 0; t < 2; t++)
      for (int k = 0; k < ncounts; k++) {
        gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
        test_bcast(bin, algos[0][a], dt, counts[k] == 20011 ? 100003 : counts[k]);
        test_scatter(bin, algos[0][a], dt, counts[k]);
        test_allgather(ring, algos[1][a], dt, counts[k]);
        test_alltoall(pw, algos[2][a], dt, counts[k]);
      }
    gz_ctx_destroy(bin);
    gz_ctx_destroy(ring);
    gz_ctx_destroy(pw);
  }
}

/* REL: eb = e times the range of the data moved. */
static void test_rel(void) {
  const size_t n = 5003;
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  float *buf = cu_alloc(GZ_FLOAT32, n * (size_t)size), *orig = cu_alloc(GZ_FLOAT32, n);
  gz_report_t rep;
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  cfg.error_bound = 1e-3;
  cfg.eb_mode = GZ_EB_REL;
  snprintf(cfg.algo, sizeof cfg.algo, "auto");
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "REL context");
  setenv("GZCOLL_ALGO", "bcast=binomial,allgather=ring", 1);
  gz_ctx_destroy(ctx);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "REL context (env)");
  unsetenv("GZCOLL_ALGO");
  block_of(GZ_FLOAT32, orig, n, 0, -1, 5);
  for (size_t i = 0; i < n; i++) {
    lo = orig[i] < lo ? orig[i] : lo;
    hi = orig[i] > hi ? orig[i] : hi;
  }
  if (rank == 0)
    memcpy(buf, orig, n * sizeof *buf);
  GZ_CHECK(gz_bcast(ctx, buf, n, GZ_FLOAT32, 0, &rep) == GZ_OK, "REL bcast");
  GZ_CHECK(rep.compressed && fabs(rep.quant_bound - 1e-3 * (hi - lo)) < 1e-12,
           "REL bcast: eb %g want %g (%s)", rep.quant_bound, 1e-3 * (hi - lo),
           rep.reason);
  expect_close(GZ_FLOAT32, buf, orig, n, rep.result_bound, "REL bcast");
  /* allgather of a constant field: zero range, sent uncompressed and exact */
  for (size_t i = 0; i < n; i++)
    orig[i] = 2.5f;
  GZ_CHECK(gz_allgather(ctx, orig, buf, n, GZ_FLOAT32, &rep) == GZ_OK, "REL allgather");
  GZ_CHECK(!rep.compressed && strstr(rep.reason, "degenerate"),
           "REL constant field: compressed %d (%s)", rep.compressed, rep.reason);
  gz_ctx_destroy(ctx);
  free(buf);
  free(orig);
}

/* Values that cannot be quantized go through MPI, exactly. */
static void test_escape(void) {
  const size_t n = 777;
  size_t total = n * (size_t)size;
  double *a = cu_alloc(GZ_FLOAT64, total), *b = cu_alloc(GZ_FLOAT64, total);
  double *c = cu_alloc(GZ_FLOAT64, total);
  gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, "auto", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  gz_report_t rep;
  long bad = 0;
  setenv("GZCOLL_ALGO",
         "bcast=binomial,allgather=ring,alltoall=pairwise,scatter=binomial", 1);
  gz_ctx_destroy(ctx);
  ctx = cu_ctx(MPI_COMM_WORLD, "auto", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  unsetenv("GZCOLL_ALGO");
  block_of(GZ_FLOAT64, a, total, size - 1, -1, 6);
  a[1] = NAN;
  if (rank != size - 1)
    memset(a, 0, n * sizeof *a);
  GZ_CHECK(gz_bcast(ctx, a, n, GZ_FLOAT64, size - 1, &rep) == GZ_OK && !rep.compressed,
           "escape bcast: compressed %d", rep.compressed);
  block_of(GZ_FLOAT64, b, total, size - 1, -1, 6);
  b[1] = NAN;
  for (size_t i = 0; i < n; i++)
    bad += !(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])));
  GZ_CHECK(bad == 0, "escape bcast: %ld values differ", bad);
  block_of(GZ_FLOAT64, a, total, rank, -1, 7);
  if (rank == 0)
    a[n - 1] = INFINITY;
  if (rank == size - 1)
    a[0] = 1e308;
  GZ_CHECK(gz_allgather(ctx, a, b, n, GZ_FLOAT64, &rep) == GZ_OK && !rep.compressed,
           "escape allgather: compressed %d", rep.compressed);
  MPI_Allgather(a, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
  GZ_CHECK(memcmp(b, c, total * sizeof *b) == 0, "escape allgather values");
  GZ_CHECK(gz_alltoall(ctx, a, b, n, GZ_FLOAT64, &rep) == GZ_OK && !rep.compressed,
           "escape alltoall: compressed %d", rep.compressed);
  MPI_Alltoall(a, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
  GZ_CHECK(memcmp(b, c, total * sizeof *b) == 0, "escape alltoall values");
  GZ_CHECK(gz_scatter(ctx, a, b, n, GZ_FLOAT64, size - 1, &rep) == GZ_OK &&
               !rep.compressed,
           "escape scatter: compressed %d", rep.compressed);
  MPI_Scatter(a, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
  GZ_CHECK(memcmp(b, c, n * sizeof *b) == 0, "escape scatter values");
  free(c);
  gz_ctx_destroy(ctx);
  free(a);
  free(b);
}

static void test_failures(void) {
  const size_t n = 3000;
  float *a = cu_alloc(GZ_FLOAT32, n * (size_t)size),
        *b = cu_alloc(GZ_FLOAT32, n * (size_t)size);
  const char *forced[2] = {"auto", "mpi"};
  for (int k = 0; k < 2; k++) {
    gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, forced[k], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    gz_result_t rc;
    cu_fill(GZ_FLOAT32, a, n * (size_t)size, 5, 1.0);
    if (size > 1) {
      rc = gz_bcast(ctx, a, n, GZ_FLOAT32, rank == 0 ? 1 : 0, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "bcast root mismatch: %s", gz_strerror(rc));
      rc = gz_alltoall(ctx, a, b, rank == 1 ? n - 1 : n, GZ_FLOAT32, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "alltoall count mismatch: %s", gz_strerror(rc));
    }
    rc = gz_scatter(ctx, NULL, b, n, GZ_FLOAT32, 0, NULL);
    GZ_CHECK(rc == (rank == 0 ? GZ_ERR_ARG : GZ_ERR_REMOTE), "scatter NULL at root: %s",
             gz_strerror(rc));
    rc = gz_allgather(ctx, a, b, n, rank == 0 ? (gz_dtype_t)0 : GZ_FLOAT32, NULL);
    GZ_CHECK(rc == (rank == 0 ? GZ_ERR_ARG : GZ_ERR_REMOTE), "allgather bad type: %s",
             gz_strerror(rc));
    rc = gz_bcast(ctx, a, n, GZ_FLOAT32, size, NULL);
    GZ_CHECK(rc == GZ_ERR_ARG, "bcast root out of range: %s", gz_strerror(rc));
    rc = gz_bcast(ctx, a, n, GZ_FLOAT32, 0, NULL);
    GZ_CHECK(rc == GZ_OK, "bcast after failures: %s", gz_strerror(rc));
    gz_ctx_destroy(ctx);
  }
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, NULL, &size);
  {
    size_t counts[5] = {0, 1, (size_t)(size - 1), 1001, 20011}, few[2] = {2, 3001};
    MPI_Comm split;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split); /* reversed order */
    test_matrix(split, few, 2);
    MPI_Comm_free(&split);
    test_matrix(MPI_COMM_WORLD, counts, 5); /* leaves comm, rank, size on the world */
  }
  test_rel();
  test_escape();
  test_failures();
  return gz_test_end_mpi();
}
