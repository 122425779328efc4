/*
 * test_pmpi_colls.c - an unmodified MPI program (mpi.h only) calling the six
 * collectives on float and double, run with libgzcoll_pmpi preloaded and
 * GZCOLL_* set by the test (see CMakeLists.txt).
 *
 * Default mode: real-valued data; every result element must lie within the
 * configured bound of the exact result, computed here in double from the
 * deterministic inputs of every rank (SUM: e under GZCOLL_BOUND=strict,
 * P e under per-message; MAX/MIN and data movement: e), and reductions,
 * allgather and bcast must leave the same bytes on every rank.
 * --exact: integer-valued data with GZCOLL_ERROR_BOUND=0.25 (a quantization
 * step of 1/2 under per-message): every result must be bit-identical to what
 * the PMPI_ call (the MPI library itself) returns on the same input.
 * Both: every qualifying call (P > 1) went through libgzcoll compressed,
 * calls below GZCOLL_MIN_BYTES passed through exactly, and with
 * GZCOLL_VERBOSE=1 the exit report states those counts.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_ALLREDUCE, K_RSB, K_ALLGATHER, K_BCAST, K_SCATTER, K_ALLTOALL };

static int rank, nranks, exact_mode;
static double e;
static size_t min_bytes;
static unsigned long long routed[6], passed[6];

/* Count a call we made: routed when it must qualify. */
static void expect(int kind, size_t bytes) {
  if (nranks > 1 && bytes >= min_bytes)
    routed[kind]++;
  else
    passed[kind]++;
}

/* Compare n results against the exact values; bound per element. */
static void compare(const char *what, const pmpi_type_t *t, const void *got,
                    const double *exact, size_t n, double bound) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double g = pmpi_get(t, got, i), err = fabs(g - exact[i]);
    int ok = exact_mode ? g == exact[i] : err <= pmpi_tol(exact[i], bound, t->is_float);
    if (!ok && !bad++)
      first = i;
    if (err > worst)
      worst = err;
  }
  GZ_CHECK(bad == 0, "%s %s: %zu of %zu elements off (first %zu, max |err| %g, bound %g)",
           what, t->name, bad, n, first, worst, exact_mode ? 0.0 : bound);
}

/* In --exact mode, the same call through PMPI_ must give the same bytes. */
static void compare_mpi(const char *what, const pmpi_type_t *t, const void *got,
                        const void *ref, size_t n) {
  if (exact_mode)
    GZ_CHECK(memcmp(got, ref, n * t->esz) == 0, "%s %s: differs from PMPI_", what,
             t->name);
}

static double combine(MPI_Op op, double a, double b) {
  return op == MPI_SUM ? a + b : op == MPI_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* The exact reduction of element j over every rank's input, in double. */
static double reduced(const pmpi_type_t *t, MPI_Op op, size_t j, int salt) {
  double x = pmpi_input(t, exact_mode, 0, j, salt);
  for (int r = 1; r < nranks; r++)
    x = combine(op, x, pmpi_input(t, exact_mode, r, j, salt));
  return x;
}

/* A reduction's bound: P e for a sum under GZCOLL_BOUND=per-message. */
static double op_bound(MPI_Op op) {
  return op == MPI_SUM && pmpi_env_is("GZCOLL_BOUND", "per-message") ? nranks * e : e;
}

/* The end of every case: the call counted as kind moving bytes; the n
 * results in got within bound of exact and (--exact) the bytes of PMPI_'s
 * ref; with same_all, the same bytes on every rank; then the case's four
 * buffers freed. */
static void finish(const char *what, const pmpi_type_t *t, int kind, size_t bytes,
                   void *send, void *got, void *ref, double *exact, size_t n,
                   double bound, int same_all) {
  expect(kind, bytes);
  compare(what, t, got, exact, n, bound);
  compare_mpi(what, t, got, ref, n);
  if (same_all)
    GZ_CHECK(pmpi_same_on_all(got, n * t->esz, MPI_COMM_WORLD), "%s %s: ranks differ",
             what, t->name);
  free(send);
  free(got);
  free(ref);
  free(exact);
}

static void test_allreduce(const pmpi_type_t *t, size_t n, MPI_Op op, int in_place,
                           int salt) {
  void *send = malloc(n * t->esz), *recv = malloc(n * t->esz), *ref = malloc(n * t->esz);
  double *exact = malloc(n * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "allreduce %s n=%zu%s",
           op == MPI_SUM   ? "sum"
           : op == MPI_MAX ? "max"
                           : "min",
           n, in_place ? " in place" : "");
  pmpi_fill(t, exact_mode, send, n, rank, 0, salt);
  for (size_t i = 0; i < n; i++)
    exact[i] = reduced(t, op, i, salt);
  PMPI_Allreduce(send, ref, (int)n, t->type, op, MPI_COMM_WORLD);
  if (in_place) {
    memcpy(recv, send, n * t->esz);
    GZ_CHECK(MPI_Allreduce(MPI_IN_PLACE, recv, (int)n, t->type, op, MPI_COMM_WORLD) ==
                 MPI_SUCCESS,
             "%s", what);
  } else {
    GZ_CHECK(MPI_Allreduce(send, recv, (int)n, t->type, op, MPI_COMM_WORLD) ==
                 MPI_SUCCESS,
             "%s", what);
  }
  finish(what, t, K_ALLREDUCE, n * t->esz, send, recv, ref, exact, n, op_bound(op), 1);
}

static void test_reduce_scatter(const pmpi_type_t *t, size_t n, MPI_Op op, int in_place,
                                int salt) {
  size_t all = n * (size_t)nranks;
  void *send = malloc(all * t->esz), *recv = malloc(all * t->esz),
       *ref = malloc(n * t->esz);
  double *exact = malloc(n * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "reduce_scatter_block n=%zu%s", n,
           in_place ? " in place" : "");
  pmpi_fill(t, exact_mode, send, all, rank, 0, salt);
  for (size_t i = 0; i < n; i++)
    exact[i] = reduced(t, op, (size_t)rank * n + i, salt);
  PMPI_Reduce_scatter_block(send, ref, (int)n, t->type, op, MPI_COMM_WORLD);
  if (in_place) {
    memcpy(recv, send, all * t->esz);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, (int)n, t->type, op, MPI_COMM_WORLD);
  } else {
    MPI_Reduce_scatter_block(send, recv, (int)n, t->type, op, MPI_COMM_WORLD);
  }
  finish(what, t, K_RSB, all * t->esz, send, recv, ref, exact, n, op_bound(op), 0);
}

static void test_allgather(const pmpi_type_t *t, size_t n, int in_place, int salt) {
  size_t all = n * (size_t)nranks;
  void *send = malloc(n * t->esz), *recv = calloc(all, t->esz),
       *ref = malloc(all * t->esz);
  double *exact = malloc(all * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "allgather n=%zu%s", n, in_place ? " in place" : "");
  pmpi_fill(t, exact_mode, send, n, rank, 0, salt);
  for (int r = 0; r < nranks; r++)
    for (size_t i = 0; i < n; i++)
      exact[(size_t)r * n + i] = pmpi_input(t, exact_mode, r, i, salt);
  PMPI_Allgather(send, (int)n, t->type, ref, (int)n, t->type, MPI_COMM_WORLD);
  if (in_place) {
    memcpy((char *)recv + (size_t)rank * n * t->esz, send, n * t->esz);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)n, t->type,
                  MPI_COMM_WORLD);
  } else {
    MPI_Allgather(send, (int)n, t->type, recv, (int)n, t->type, MPI_COMM_WORLD);
  }
  finish(what, t, K_ALLGATHER, all * t->esz, send, recv, ref, exact, all, e, 1);
}

static void test_bcast(const pmpi_type_t *t, size_t n, int root, int salt) {
  void *buf = calloc(n, t->esz), *ref = calloc(n, t->esz);
  double *exact = malloc(n * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "bcast n=%zu root=%d", n, root);
  for (size_t i = 0; i < n; i++)
    exact[i] = pmpi_input(t, exact_mode, root, i, salt);
  if (rank == root) {
    pmpi_fill(t, exact_mode, buf, n, root, 0, salt);
    memcpy(ref, buf, n * t->esz);
  }
  PMPI_Bcast(ref, (int)n, t->type, root, MPI_COMM_WORLD);
  MPI_Bcast(buf, (int)n, t->type, root, MPI_COMM_WORLD);
  finish(what, t, K_BCAST, n * t->esz, NULL, buf, ref, exact, n, e, 1);
}

static void test_scatter(const pmpi_type_t *t, size_t n, int root, int in_place,
                         int salt) {
  size_t all = n * (size_t)nranks;
  void *send = calloc(all, t->esz), *recv = calloc(n, t->esz), *ref = calloc(n, t->esz);
  double *exact = malloc(n * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "scatter n=%zu root=%d%s", n, root,
           in_place ? " in place" : "");
  if (rank == root)
    pmpi_fill(t, exact_mode, send, all, root, 0, salt);
  for (size_t i = 0; i < n; i++)
    exact[i] = pmpi_input(t, exact_mode, root, (size_t)rank * n + i, salt);
  PMPI_Scatter(send, (int)n, t->type, ref, (int)n, t->type, root, MPI_COMM_WORLD);
  if (in_place && rank == root) {
    MPI_Scatter(send, (int)n, t->type, MPI_IN_PLACE, (int)n, t->type, root,
                MPI_COMM_WORLD);
    memcpy(recv, (char *)send + (size_t)root * n * t->esz, n * t->esz);
  } else {
    MPI_Scatter(send, (int)n, t->type, recv, (int)n, t->type, root, MPI_COMM_WORLD);
  }
  finish(what, t, K_SCATTER, all * t->esz, send, recv, ref, exact, n, e, 0);
}

static void test_alltoall(const pmpi_type_t *t, size_t n, int in_place, int salt) {
  size_t all = n * (size_t)nranks;
  void *send = malloc(all * t->esz), *recv = calloc(all, t->esz),
       *ref = malloc(all * t->esz);
  double *exact = malloc(all * sizeof *exact);
  char what[64];
  snprintf(what, sizeof what, "alltoall n=%zu%s", n, in_place ? " in place" : "");
  pmpi_fill(t, exact_mode, send, all, rank, 0, salt);
  for (int s = 0; s < nranks; s++)
    for (size_t i = 0; i < n; i++)
      exact[(size_t)s * n + i] = pmpi_input(t, exact_mode, s, (size_t)rank * n + i, salt);
  PMPI_Alltoall(send, (int)n, t->type, ref, (int)n, t->type, MPI_COMM_WORLD);
  if (in_place) {
    memcpy(recv, send, all * t->esz);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)n, t->type,
                 MPI_COMM_WORLD);
  } else {
    MPI_Alltoall(send, (int)n, t->type, recv, (int)n, t->type, MPI_COMM_WORLD);
  }
  finish(what, t, K_ALLTOALL, all * t->esz, send, recv, ref, exact, all, e, 0);
}

/* A call below GZCOLL_MIN_BYTES: passed through, so bit-identical to MPI. */
static void test_small(const pmpi_type_t *t) {
  size_t n = 7;
  void *send = malloc(n * t->esz), *recv = malloc(n * t->esz), *ref = malloc(n * t->esz);
  pmpi_fill(t, 0, send, n, rank, 0, 99);
  PMPI_Allreduce(send, ref, (int)n, t->type, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(send, recv, (int)n, t->type, MPI_SUM, MPI_COMM_WORLD);
  expect(K_ALLREDUCE, n * t->esz);
  GZ_CHECK(memcmp(recv, ref, n * t->esz) == 0, "small allreduce %s: not MPI's result",
           t->name);
  free(send);
  free(recv);
  free(ref);
}

static void check_counters(void) {
  unsigned long long c[7], raw = 0, sent = 0;
  for (int k = 0; k < 6; k++) {
    GZ_CHECK(pmpi_counters(pmpi_kinds[k], c) == 0, "libgzcoll_pmpi is not loaded");
    GZ_CHECK(
        c[PC_ROUTED] == routed[k] && c[PC_PASSED] == passed[k] && c[PC_FALLBACK] == 0,
        "%s: routed %llu passed %llu fallback %llu, expected %llu %llu 0", pmpi_kinds[k],
        c[PC_ROUTED], c[PC_PASSED], c[PC_FALLBACK], routed[k], passed[k]);
    /* forced compressed algorithms: every routed call compressed */
    GZ_CHECK(c[PC_COMPRESSED] == c[PC_ROUTED], "%s: %llu of %llu routed calls compressed",
             pmpi_kinds[k], c[PC_COMPRESSED], c[PC_ROUTED]);
    raw += c[PC_RAW];
    sent += c[PC_SENT];
  }
  if (nranks > 1)
    GZ_CHECK(sent > 0 && sent < raw, "compressed bytes %llu not below raw %llu", sent,
             raw);
}

/* The GZCOLL_VERBOSE report printed by rank 0 inside MPI_Finalize. */
static int check_report(const char *text) {
  long before = gz_test_failed();
  GZ_CHECK(text && strstr(text, "gzcoll_pmpi: settings e="),
           "no settings line in report");
  for (int k = 0; text && k < 6; k++) {
    char want[160];
    /* +1 passed allreduce: gz_test_finish_mpi's MPI_LONG reduction */
    unsigned long long p = passed[k] + (k == K_ALLREDUCE);
    snprintf(want, sizeof want,
             "gzcoll_pmpi: %s calls %llu routed %llu compressed %llu "
             "passed %llu fallback 0 bytes ",
             pmpi_kinds[k], routed[k] + p, routed[k], routed[k], p);
    GZ_CHECK(strstr(text, want) != NULL, "report lacks \"%s\"", want);
  }
  return gz_test_failed() > before;
}

int main(int argc, char **argv) {
  int rc, verbose, h = -1;
  const size_t counts[2] = {1500, 4099};
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  exact_mode = argc > 1 && strcmp(argv[1], "--exact") == 0;
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  min_bytes = (size_t)pmpi_env_double("GZCOLL_MIN_BYTES", 65536);
  verbose = pmpi_env_is("GZCOLL_VERBOSE", "1");
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  GZ_CHECK(pmpi_counter("contexts", 0) == 0, "a context before any collective");

  for (int ti = 0; ti < 2; ti++) {
    const pmpi_type_t *t = &pmpi_types[ti];
    for (int ci = 0; ci < 2; ci++) {
      size_t n = counts[ci];
      int salt = 10 * ti + ci, ip = ci; /* the ragged count runs in place */
      test_allreduce(t, n, MPI_SUM, ip, salt);
      test_allreduce(t, n, MPI_MAX, !ip, salt + 1);
      test_allreduce(t, n, MPI_MIN, ip, salt + 2);
      test_reduce_scatter(t, n, MPI_SUM, ip, salt + 3);
      test_reduce_scatter(t, n, ci ? MPI_MIN : MPI_MAX, !ip, salt + 4);
      test_allgather(t, n, ip, salt + 5);
      test_bcast(t, n, nranks - 1, salt + 6);
      test_scatter(t, n, nranks / 2, ip, salt + 7);
      test_alltoall(t, n, ip, salt + 8);
    }
    test_small(t);
  }
  check_counters();
  GZ_CHECK(pmpi_counter("contexts", 0) == (nranks > 1 ? 1u : 0u),
           "contexts created: %llu", pmpi_counter("contexts", 0));
  rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  if (verbose && rank == 0)
    h = pmpi_capture_begin();
  MPI_Finalize();
  if (verbose && rank == 0) {
    char *text = pmpi_capture_end(h);
    if (check_report(text)) {
      printf("exit report: %ld failed\n", gz_test_failed());
      rc = 1;
    }
    free(text);
  }
  return rc;
}
