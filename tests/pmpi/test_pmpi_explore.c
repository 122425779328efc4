/*
 * test_pmpi_explore.c - the interposer counts `auto`'s exploration trials
 * (calls run on the path the model did not choose, to measure it):
 * gzcoll_pmpi_counters_n's 8th counter and the verbose report's "explored".
 * An unmodified program makes CALLS allreduces of 256 KiB (one size class),
 * each checked against the bound. Checked, without any timing: the old
 * gzcoll_pmpi_counters is the first 7 of the new call; every call routed;
 * trials never more than routed calls, nor than the exploration's spacing
 * allows (GZ_EXPLORE_FIRST = 16 calls, doubling); the same count on every
 * rank (trials are agreed decisions); none at all when the algorithm is
 * forced (--forced, GZCOLL_ALGO set by the test); the report line of rank 0
 * names the count. Whether a trial happens under auto depends on measured
 * times: tests/model checks with simulated times that every trial is
 * reported (gz_report_t.explored), which this counter sums.
 */
#include "gz_test.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 65536
#define CALLS 120

int main(int argc, char **argv) {
  int rank, nranks, forced = argc > 1 && strcmp(argv[1], "--forced") == 0, h = -1, rc;
  int wrong = 0;
  unsigned long long c[PC_COUNT_N], old[7], lo, hi;
  double e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0), *xd, *ref;
  float *x, *y;
  char want[64];

  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  x = malloc(N * sizeof *x);
  y = malloc(N * sizeof *y);
  xd = malloc(N * sizeof *xd);
  ref = malloc(N * sizeof *ref);
  for (size_t i = 0; i < N; i++)
    xd[i] = x[i] = (float)pmpi_real(rank, i, 3);
  PMPI_Allreduce(xd, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int k = 0; k < CALLS; k++) {
    MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < N; i++)
      wrong += !(fabs((double)y[i] - ref[i]) <= pmpi_tol(ref[i], e, 1));
  }
  GZ_CHECK(wrong == 0, "%d result elements beyond the bound", wrong);

  GZ_CHECK(pmpi_counters_n("allreduce", c, PC_COUNT_N) == PC_COUNT_N,
           "gzcoll_pmpi_counters_n: not 8 counters");
  GZ_CHECK(pmpi_counters("allreduce", old) == 0 && memcmp(old, c, sizeof old) == 0,
           "gzcoll_pmpi_counters differs from the first 7 of gzcoll_pmpi_counters_n");
  GZ_CHECK(pmpi_counters_n("nonsense", c + 0, 0) == -1, "an unknown kind accepted");
  pmpi_counters_n("allreduce", c, PC_COUNT_N);
  GZ_CHECK(c[PC_ROUTED] == CALLS, "routed %llu of %d calls", c[PC_ROUTED], CALLS);
  GZ_CHECK(c[PC_EXPLORED] <= c[PC_ROUTED] && c[PC_EXPLORED] <= CALLS / 16 + 1,
           "explored %llu of %llu calls: beyond the exploration's spacing",
           c[PC_EXPLORED], c[PC_ROUTED]);
  if (forced)
    GZ_CHECK(c[PC_EXPLORED] == 0, "forced algorithm: %llu trials", c[PC_EXPLORED]);
  PMPI_Allreduce(&c[PC_EXPLORED], &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
                 MPI_COMM_WORLD);
  PMPI_Allreduce(&c[PC_EXPLORED], &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                 MPI_COMM_WORLD);
  GZ_CHECK(lo == hi, "trials differ between ranks: %llu .. %llu", lo, hi);
  if (rank == 0)
    printf("allreduce: %llu routed, %llu compressed, %llu explored\n", c[PC_ROUTED],
           c[PC_COMPRESSED], c[PC_EXPLORED]);
  free(x);
  free(y);
  free(xd);
  free(ref);
  snprintf(want, sizeof want, " s explored %llu\n", c[PC_EXPLORED]);
  rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  if (rank == 0)
    h = pmpi_capture_begin();
  MPI_Finalize(); /* rank 0 writes the report (GZCOLL_VERBOSE=1) */
  if (rank == 0) {
    char *text = pmpi_capture_end(h);
    const char *line = text ? strstr(text, "gzcoll_pmpi: allreduce calls") : NULL;
    const char *eol = line ? strchr(line, '\n') : NULL;
    size_t w = strlen(want);
    if (!eol || (size_t)(eol - line) + 1 < w || strncmp(eol + 1 - w, want, w) != 0) {
      printf("FAIL: the report's allreduce line does not end in \"%s\"\n", want);
      rc = 1;
    }
    free(text);
  }
  return rc;
}
