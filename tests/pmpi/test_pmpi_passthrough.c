/*
 * test_pmpi_passthrough.c - calls that must not qualify reach MPI untouched
 * while libgzcoll_pmpi is preloaded and configured with a coarse bound
 * (GZCOLL_ERROR_BOUND=0.05, alltoall excluded by GZCOLL_COLLECTIVES): had
 * any of them been compressed, its real-valued result would be off by up to
 * the bound. Each must be bit-identical to the same call through PMPI_, and
 * the library's counters must show it passed, not routed:
 *   MPI_INT, MPI_PROD, a derived (contiguous) datatype, a message below
 *   GZCOLL_MIN_BYTES, a collective left out of GZCOLL_COLLECTIVES, an inter-
 *   communicator (allreduce and bcast), a single-rank communicator.
 * One qualifying allreduce is the control: it is routed (P > 1) and within
 * the bound.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 2000

static int rank, nranks;

static void check_same(const char *what, const void *got, const void *ref, size_t bytes) {
  GZ_CHECK(memcmp(got, ref, bytes) == 0, "%s: differs from MPI's own result", what);
}

int main(int argc, char **argv) {
  const pmpi_type_t *tf = &pmpi_types[0];
  float *fa = malloc(N * sizeof *fa), *fb = malloc(N * sizeof *fb),
        *fr = malloc(N * sizeof *fr), *fall, *fall2;
  int *ia = malloc(N * sizeof *ia), *ib = malloc(N * sizeof *ib);
  unsigned long long passed0[6], routed0[6], expect_passed[6] = {0};
  double e;
  MPI_Datatype vec4;
  int rc;

  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  fall = malloc((size_t)N * (size_t)nranks * sizeof *fall);
  fall2 = malloc((size_t)N * (size_t)nranks * sizeof *fall2);
  for (int k = 0; k < 6; k++) {
    unsigned long long c[7];
    GZ_CHECK(pmpi_counters(pmpi_kinds[k], c) == 0, "libgzcoll_pmpi is not loaded");
    passed0[k] = c[PC_PASSED];
    routed0[k] = c[PC_ROUTED];
  }

  /* MPI_INT: exact integer sum, closed form */
  for (int i = 0; i < N; i++)
    ia[i] = rank * 1000 + i;
  MPI_Allreduce(ia, ib, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_passed[0]++;
  {
    int bad = 0;
    for (int i = 0; i < N; i++)
      bad += ib[i] != 1000 * nranks * (nranks - 1) / 2 + nranks * i;
    GZ_CHECK(bad == 0, "MPI_INT allreduce: %d wrong", bad);
  }

  /* MPI_PROD on float */
  for (int i = 0; i < N; i++)
    fa[i] = (float)(1.0 + 0.01 * pmpi_real(rank, (size_t)i, 1) / 100.0);
  PMPI_Allreduce(fa, fr, N, MPI_FLOAT, MPI_PROD, MPI_COMM_WORLD);
  MPI_Allreduce(fa, fb, N, MPI_FLOAT, MPI_PROD, MPI_COMM_WORLD);
  expect_passed[0]++;
  check_same("MPI_PROD allreduce", fb, fr, N * sizeof *fb);

  /* derived datatype: bcast of N/4 contiguous 4-float elements */
  MPI_Type_contiguous(4, MPI_FLOAT, &vec4);
  MPI_Type_commit(&vec4);
  pmpi_fill(tf, 0, fr, N, 0, 0, 2);
  if (rank == 0)
    memcpy(fb, fr, N * sizeof *fb);
  else
    memset(fb, 0, N * sizeof *fb);
  MPI_Bcast(fb, N / 4, vec4, 0, MPI_COMM_WORLD);
  expect_passed[3]++;
  check_same("derived-type bcast", fb, fr, N * sizeof *fb);
  MPI_Type_free(&vec4);

  /* below GZCOLL_MIN_BYTES (1024): 100 floats */
  pmpi_fill(tf, 0, fa, 100, rank, 0, 3);
  PMPI_Allreduce(fa, fr, 100, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(fa, fb, 100, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  expect_passed[0]++;
  check_same("small allreduce", fb, fr, 100 * sizeof *fb);

  /* alltoall is not in GZCOLL_COLLECTIVES */
  pmpi_fill(tf, 0, fall, (size_t)N * (size_t)nranks, rank, 0, 4);
  MPI_Alltoall(fall, N, MPI_FLOAT, fall2, N, MPI_FLOAT, MPI_COMM_WORLD);
  expect_passed[5]++;
  {
    size_t bad = 0;
    for (int s = 0; s < nranks; s++)
      for (size_t i = 0; i < N; i++)
        bad += fall2[(size_t)s * N + i] !=
               (float)pmpi_input(tf, 0, s, (size_t)rank * N + i, 4);
    GZ_CHECK(bad == 0, "excluded alltoall: %zu values changed", bad);
  }

  /* single-rank communicator */
  pmpi_fill(tf, 0, fa, N, rank, 0, 5);
  MPI_Allreduce(fa, fb, N, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
  expect_passed[0]++;
  check_same("MPI_COMM_SELF allreduce", fb, fa, N * sizeof *fb);

  /* inter-communicator: the two halves of MPI_COMM_WORLD */
  if (nranks >= 2) {
    MPI_Comm half, inter;
    int low = rank < nranks / 2, remote_leader = low ? nranks / 2 : 0, hrank;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
    pmpi_fill(tf, 0, fa, N, rank, 0, 6);
    PMPI_Allreduce(fa, fr, N, MPI_FLOAT, MPI_SUM, inter);
    MPI_Allreduce(fa, fb, N, MPI_FLOAT, MPI_SUM, inter);
    expect_passed[0]++;
    check_same("inter-communicator allreduce", fb, fr, N * sizeof *fb);
    /* bcast from rank 0 of the low group to the high group */
    if (low) {
      pmpi_fill(tf, 0, fb, N, 0, 0, 7);
      MPI_Bcast(fb, N, MPI_FLOAT, hrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    } else {
      memset(fb, 0, N * sizeof *fb);
      MPI_Bcast(fb, N, MPI_FLOAT, 0, inter);
      pmpi_fill(tf, 0, fr, N, 0, 0, 7);
      check_same("inter-communicator bcast", fb, fr, N * sizeof *fb);
    }
    expect_passed[3]++;
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }

  /* control: a qualifying call is routed and within the bound */
  pmpi_fill(tf, 0, fa, N, rank, 0, 8);
  MPI_Allreduce(fa, fb, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  {
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
      double x = 0;
      for (int r = 0; r < nranks; r++)
        x += pmpi_input(tf, 0, r, i, 8);
      bad += !(fabs(fb[i] - x) <= pmpi_tol(x, e, 1));
    }
    GZ_CHECK(bad == 0, "control allreduce: %zu values outside the bound", bad);
  }

  for (int k = 0; k < 6; k++) {
    unsigned long long c[7];
    pmpi_counters(pmpi_kinds[k], c);
    GZ_CHECK(c[PC_PASSED] - passed0[k] == expect_passed[k],
             "%s: passed %llu, expected %llu", pmpi_kinds[k], c[PC_PASSED] - passed0[k],
             expect_passed[k]);
    GZ_CHECK(c[PC_ROUTED] - routed0[k] == (k == 0 && nranks > 1 ? 1u : 0u),
             "%s: routed %llu", pmpi_kinds[k], c[PC_ROUTED] - routed0[k]);
  }

  rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  free(fa);
  free(fb);
  free(fr);
  free(fall);
  free(fall2);
  free(ia);
  free(ib);
  MPI_Finalize();
  return rc;
}
