/*
 * test_pmpi_off.c - libgzcoll_pmpi preloaded but not (validly) configured
 * must be a pure pass-through: all six collectives on real-valued float
 * data give exactly the PMPI_ result, nothing is routed and no context is
 * created. Run with GZCOLL_ERROR_BOUND unset, and with bad values; with
 * --warn VAR the rank-0 stderr of the run must hold one warning line naming
 * VAR (the library warns and passes through, it never aborts).
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <stdlib.h>
#include <string.h>

#define N 3000

static int rank, nranks;

static void same(const char *what, const void *a, const void *b, size_t bytes) {
  GZ_CHECK(memcmp(a, b, bytes) == 0, "%s: differs from PMPI_", what);
}

int main(int argc, char **argv) {
  const pmpi_type_t *t = &pmpi_types[0];
  const char *warn = argc > 2 && strcmp(argv[1], "--warn") == 0 ? argv[2] : NULL;
  int h = pmpi_capture_begin(), rc;
  size_t all;
  float *a, *b, *r;
  char *text;

  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  all = (size_t)N * (size_t)nranks;
  a = malloc(all * sizeof *a);
  b = malloc(all * sizeof *b);
  r = malloc(all * sizeof *r);
  pmpi_fill(t, 0, a, all, rank, 0, 1);

  PMPI_Allreduce(a, r, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  same("allreduce", b, r, N * sizeof *b);
  PMPI_Reduce_scatter_block(a, r, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(a, b, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  same("reduce_scatter_block", b, r, N * sizeof *b);
  PMPI_Allgather(a, N, MPI_FLOAT, r, N, MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Allgather(a, N, MPI_FLOAT, b, N, MPI_FLOAT, MPI_COMM_WORLD);
  same("allgather", b, r, all * sizeof *b);
  memcpy(b, a, N * sizeof *b);
  memcpy(r, a, N * sizeof *r);
  PMPI_Bcast(r, N, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Bcast(b, N, MPI_FLOAT, 0, MPI_COMM_WORLD);
  same("bcast", b, r, N * sizeof *b);
  PMPI_Scatter(a, N, MPI_FLOAT, r, N, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Scatter(a, N, MPI_FLOAT, b, N, MPI_FLOAT, 0, MPI_COMM_WORLD);
  same("scatter", b, r, N * sizeof *b);
  PMPI_Alltoall(a, N, MPI_FLOAT, r, N, MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Alltoall(a, N, MPI_FLOAT, b, N, MPI_FLOAT, MPI_COMM_WORLD);
  same("alltoall", b, r, all * sizeof *b);

  for (int k = 0; k < 6; k++) {
    unsigned long long c[7];
    GZ_CHECK(pmpi_counters(pmpi_kinds[k], c) == 0, "libgzcoll_pmpi is not loaded");
    GZ_CHECK(c[PC_ROUTED] == 0 && c[PC_PASSED] == 1, "%s: routed %llu passed %llu",
             pmpi_kinds[k], c[PC_ROUTED], c[PC_PASSED]);
  }
  GZ_CHECK(pmpi_counter("contexts", 0) == 0, "%llu contexts created",
           pmpi_counter("contexts", 0));

  text = pmpi_capture_end(h);
  GZ_CHECK(text != NULL, "stderr capture failed");
  if (text && rank == 0) {
    if (warn) {
      const char *line = strstr(text, "gzcoll_pmpi: ");
      GZ_CHECK(line && strstr(line, warn), "no warning naming %s in: %s", warn, text);
    } else {
      GZ_CHECK(strstr(text, "gzcoll_pmpi") == NULL, "unexpected output: %s", text);
    }
  }
  free(text);
  rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  free(a);
  free(b);
  free(r);
  MPI_Finalize();
  return rc;
}
