/*
 * pmpi_bench_bcast.c - latency of MPI_Bcast of n floats as an unmodified
 * program sees it (mpi.h only), to measure what libgzcoll_pmpi's routing
 * agreement adds (docs/pmpi.md). Not a test: run it with and without the
 * library, or with two builds of it, on the same data:
 *
 *   mpirun -np 4 -x LD_PRELOAD=.../libgzcoll_pmpi.so -x GZCOLL_ERROR_BOUND=1e-3 \
 *          -x GZCOLL_ALGO=bcast=binomial build/tests/pmpi/pmpi_bench_bcast 16384 300
 *
 * Each repetition: barrier, one MPI_Bcast from rank 0, the slowest rank's
 * time; after 10 warm-up calls, prints the median, the 10th and 90th
 * percentile over the repetitions, and the median of one PMPI_Allreduce of
 * one unsigned (MPI_BAND) on a duplicate of MPI_COMM_WORLD (the agreement's
 * own cost on this machine).
 * Arguments: floats per call (default 16384), repetitions (default 200).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *t, int n, double p) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  return t[(int)(p * (n - 1) + 0.5)];
}

int main(int argc, char **argv) {
  int rank, size, reps;
  long n;
  float *buf;
  double *t;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  n = argc > 1 ? atol(argv[1]) : 16384;
  reps = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 1 || n > 1L << 28 || reps < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: pmpi_bench_bcast [floats per call] [repetitions]\n");
    MPI_Finalize();
    return 2;
  }
  buf = malloc((size_t)n * sizeof *buf);
  t = malloc((size_t)reps * sizeof *t);
  if (!buf || !t) {
    fprintf(stderr, "pmpi_bench_bcast: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long i = 0; i < n; i++)
    buf[i] = (float)(100.0 * sin(1e-3 * (double)i));
  for (int k = -10; k < reps; k++) {
    double t0, dt, dmax;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Bcast(buf, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    dt = MPI_Wtime() - t0;
    PMPI_Allreduce(&dt, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (k >= 0)
      t[k] = dmax;
  }
  if (rank == 0)
    printf("ranks %d  floats %ld  bcast median %.2f us  p10 %.2f us  p90 %.2f us\n", size,
           n, 1e6 * pct(t, reps, 0.5), 1e6 * pct(t, reps, 0.1), 1e6 * pct(t, reps, 0.9));
  /* the agreement alone: one unsigned, MPI_BAND, on a private duplicate */
  PMPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int k = -10; k < reps; k++) {
    unsigned w = 3u, all = 0;
    double t0, dt, dmax;
    PMPI_Barrier(dup);
    t0 = MPI_Wtime();
    PMPI_Allreduce(&w, &all, 1, MPI_UNSIGNED, MPI_BAND, dup);
    dt = MPI_Wtime() - t0;
    PMPI_Allreduce(&dt, &dmax, 1, MPI_DOUBLE, MPI_MAX, dup);
    if (k >= 0)
      t[k] = dmax;
  }
  if (rank == 0)
    printf("ranks %d  agreement alone (1 unsigned, BAND) median %.2f us\n", size,
           1e6 * pct(t, reps, 0.5));
  PMPI_Comm_free(&dup);
  free(buf);
  free(t);
  MPI_Finalize();
  return 0;
}
