/*
 * plain_allreduce.c - an ordinary MPI program (mpi.h only, nothing of
 * gzstack): times MPI_Allreduce (SUM) and MPI_Bcast of a smooth float field
 * and prints the largest deviation from the exact sum. Run it as is, then
 * with libgzcoll_pmpi preloaded to see the same program compressed:
 *
 *   mpirun -np 4 ./plain_allreduce 1048576 20
 *   mpirun -np 4 -x LD_PRELOAD=$PWD/build/pmpi/libgzcoll_pmpi.so \
 *          -x GZCOLL_ERROR_BOUND=1e-4 -x GZCOLL_VERBOSE=1 ./plain_allreduce 1048576 20
 *
 * Arguments: values per rank (default 1048576), repetitions (default 20).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double value(int rank, long i) { return sin(1e-3 * (double)i + rank) * 100.0; }

/* Mean time per call on the slowest rank, after one warm-up call. */
static double timed(int iters, int which, float *in, float *out, long n) {
  double t = 0, tmax = 0;
  for (int k = 0; k < iters + 1; k++) {
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (which == 0)
      MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Bcast(out, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (k > 0) /* the first call is a warm-up */
      t += MPI_Wtime() - t0;
  }
  t /= iters;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return tmax;
}

int main(int argc, char **argv) {
  int rank, size, iters;
  long n;
  float *in, *out;
  double t_ar, t_bc, err = 0, gerr = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  n = argc > 1 ? atol(argv[1]) : 1048576;
  iters = argc > 2 ? atoi(argv[2]) : 20;
  if (n < 1 || n > 1L << 30 || iters < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: plain_allreduce [values per rank] [repetitions]\n");
    MPI_Finalize();
    return 2;
  }
  in = malloc((size_t)n * sizeof *in);
  out = malloc((size_t)n * sizeof *out);
  if (!in || !out) {
    fprintf(stderr, "plain_allreduce: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long i = 0; i < n; i++)
    in[i] = (float)value(rank, i);
  t_ar = timed(iters, 0, in, out, n);
  for (long i = 0; i < n; i++) {
    double exact = 0;
    for (int r = 0; r < size; r++)
      exact += (float)value(r, i);
    err = fmax(err, fabs(out[i] - exact));
  }
  for (long i = 0; i < n; i++)
    out[i] = rank == 0 ? in[i] : 0.0f;
  t_bc = timed(iters, 1, in, out, n);
  MPI_Reduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("ranks %d  values %ld  allreduce %.6f s  bcast %.6f s  max |sum error| %.3g\n",
           size, n, t_ar, t_bc, gerr);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
