/*
 * test_pmpi_pwrel.c - an unmodified MPI program under
 * GZCOLL_EB_MODE=pwrel (see CMakeLists.txt): MPI_Alltoall of double and
 * float data is compressed (cast to a narrower format) with every element
 * within GZCOLL_ERROR_BOUND |x| of what PMPI_Alltoall delivers, and fewer
 * bytes sent; an MPI_Allreduce on the same communicator goes to MPI
 * unchanged (bit-identical to PMPI_Allreduce).
 */
#include "gz_test.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void test_alltoall(MPI_Datatype type, size_t esz, size_t n, double e) {
  size_t all = n * (size_t)nranks, bad = 0;
  char *send = malloc(all * esz), *recv = malloc(all * esz), *ref = malloc(all * esz);
  unsigned long long before = pmpi_counter("alltoall", PC_COMPRESSED);
  for (size_t i = 0; i < all; i++) {
    double v = pmpi_real(rank, i, 3) * (i % 5 ? 1.0 : 1e-3);
    if (esz == 4) {
      float f = (float)v;
      memcpy(send + 4 * i, &f, 4);
    } else {
      memcpy(send + 8 * i, &v, 8);
    }
  }
  PMPI_Alltoall(send, (int)n, type, ref, (int)n, type, MPI_COMM_WORLD);
  MPI_Alltoall(send, (int)n, type, recv, (int)n, type, MPI_COMM_WORLD);
  for (size_t i = 0; i < all; i++) {
    double g, x;
    if (esz == 4) {
      float a, b;
      memcpy(&a, recv + 4 * i, 4);
      memcpy(&b, ref + 4 * i, 4);
      g = a;
      x = b;
    } else {
      memcpy(&g, recv + 8 * i, 8);
      memcpy(&x, ref + 8 * i, 8);
    }
    bad += !(fabs(g - x) <= e * fabs(x));
  }
  GZ_CHECK(bad == 0, "alltoall (%zu-byte values): %zu of %zu beyond e |x|", esz, bad,
           all);
  if (nranks > 1)
    GZ_CHECK(pmpi_counter("alltoall", PC_COMPRESSED) == before + 1,
             "alltoall (%zu-byte values) not compressed", esz);
  free(send);
  free(recv);
  free(ref);
}

int main(int argc, char **argv) {
  const size_t n = 3001;
  double e, *x, *y, *z;
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  GZ_CHECK(e > 0 && pmpi_env_is("GZCOLL_EB_MODE", "pwrel"), "the test sets the mode");
  test_alltoall(MPI_DOUBLE, 8, n, e);
  test_alltoall(MPI_FLOAT, 4, n, e);
  if (nranks > 1)
    GZ_CHECK(pmpi_counter("alltoall", PC_SENT) <
                 pmpi_counter("alltoall", PC_RAW) / 2 + 64,
             "alltoall sent %llu of %llu bytes", pmpi_counter("alltoall", PC_SENT),
             pmpi_counter("alltoall", PC_RAW));
  x = malloc(n * sizeof *x);
  y = malloc(n * sizeof *y);
  z = malloc(n * sizeof *z);
  for (size_t i = 0; i < n; i++)
    x[i] = pmpi_real(rank, i, 5);
  PMPI_Allreduce(x, z, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  GZ_CHECK(memcmp(y, z, n * sizeof *y) == 0, "allreduce not exact under pwrel");
  GZ_CHECK(pmpi_counter("allreduce", PC_COMPRESSED) == 0, "allreduce compressed");
  free(x);
  free(y);
  free(z);
  return gz_test_end_mpi();
}
