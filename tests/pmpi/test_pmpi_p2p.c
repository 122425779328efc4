/*
 * test_pmpi_p2p.c - MPI_Send / MPI_Recv under libgzcoll_pmpi with
 * GZCOLL_P2P=on: a ring exchange of float and double messages above
 * GZCOLL_MIN_BYTES travels compressed (counters) and arrives within the
 * bound with a correct status (source, tag, count); a message below the
 * threshold, an MPI_INT message and a wildcard receive pass through exactly.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 3000

static int rank, nranks;

/* Send to the right neighbour, receive from the left one (rank 0 sends
 * first, everyone else receives first: no cycle of blocking sends). */
static void ring(const pmpi_type_t *t, int n, int tag, int salt, void *out,
                 MPI_Status *st) {
  void *in = malloc((size_t)n * t->esz);
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  pmpi_fill(t, 0, in, (size_t)n, rank, 0, salt);
  if (rank == 0) {
    MPI_Send(in, n, t->type, right, tag, MPI_COMM_WORLD);
    MPI_Recv(out, n, t->type, left, tag, MPI_COMM_WORLD, st);
  } else {
    MPI_Recv(out, n, t->type, left, tag, MPI_COMM_WORLD, st);
    MPI_Send(in, n, t->type, right, tag, MPI_COMM_WORLD);
  }
  free(in);
}

int main(int argc, char **argv) {
  double e;
  int rc, left, routed = 0;
  unsigned long long c[7];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  left = (rank + nranks - 1) % nranks;
  if (nranks < 2) {
    rc = gz_test_finish_mpi(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc ? rc : GZ_TEST_SKIP;
  }

  for (int ti = 0; ti < 2; ti++) {
    const pmpi_type_t *t = &pmpi_types[ti];
    void *out = malloc(N * t->esz);
    MPI_Status st;
    int got = -1, bad = 0;
    ring(t, N, 10 + ti, ti, out, &st);
    routed++;
    for (size_t i = 0; i < N; i++)
      bad +=
          !(fabs(pmpi_get(t, out, i) - pmpi_input(t, 0, left, i, ti)) <= e * (1 + 1e-12));
    GZ_CHECK(bad == 0, "%s ring: %d values outside the bound", t->name, bad);
    MPI_Get_count(&st, t->type, &got);
    GZ_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 10 + ti && got == N,
             "%s status: source %d tag %d count %d", t->name, st.MPI_SOURCE, st.MPI_TAG,
             got);
    /* below the threshold: exact */
    ring(t, 10, 20 + ti, 5 + ti, out, MPI_STATUS_IGNORE);
    bad = 0;
    for (size_t i = 0; i < 10; i++)
      bad += pmpi_get(t, out, i) != pmpi_input(t, 0, left, i, 5 + ti);
    GZ_CHECK(bad == 0, "small %s message changed", t->name);
    free(out);
  }

  /* MPI_INT, and a wildcard receive of float data: passed through exactly */
  {
    int *iv = malloc(N * sizeof *iv), *io = malloc(N * sizeof *io), bad = 0;
    float *fv = malloc(N * sizeof *fv), *fo = malloc(N * sizeof *fo);
    MPI_Status st;
    for (int i = 0; i < N; i++)
      iv[i] = rank * N + i;
    pmpi_fill(&pmpi_types[0], 0, fv, N, rank, 0, 9);
    if (rank == 0) {
      MPI_Send(iv, N, MPI_INT, 1, 30, MPI_COMM_WORLD);
      /* the receiver's wildcard cannot see a compressed message: this send
       * is made with PMPI_ as an application pairing rule would require */
      PMPI_Send(fv, N, MPI_FLOAT, 1, 31, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(io, N, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(fo, N, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      for (int i = 0; i < N; i++)
        bad +=
            io[i] != i || fo[i] != (float)pmpi_input(&pmpi_types[0], 0, 0, (size_t)i, 9);
      GZ_CHECK(bad == 0 && st.MPI_TAG == 31, "pass-through messages changed (%d)", bad);
    }
    free(iv);
    free(io);
    free(fv);
    free(fo);
  }

  pmpi_counters("send", c);
  GZ_CHECK(c[PC_ROUTED] == (unsigned long long)routed && c[PC_COMPRESSED] == c[PC_ROUTED],
           "send: routed %llu compressed %llu, expected %d", c[PC_ROUTED],
           c[PC_COMPRESSED], routed);
  pmpi_counters("recv", c);
  GZ_CHECK(c[PC_ROUTED] == (unsigned long long)routed && c[PC_COMPRESSED] == c[PC_ROUTED],
           "recv: routed %llu compressed %llu, expected %d", c[PC_ROUTED],
           c[PC_COMPRESSED], routed);
  {
    unsigned long long s = pmpi_counter("send", PC_PASSED),
                       r = pmpi_counter("recv", PC_PASSED);
    /* two small ring messages each; rank 0 the MPI_INT send (the float one
     * went by PMPI_), rank 1 the MPI_INT and the wildcard receive */
    int want_s = 2 + (rank == 0), want_r = 2 + 2 * (rank == 1);
    GZ_CHECK(s == (unsigned long long)want_s && r == (unsigned long long)want_r,
             "passed: send %llu recv %llu, expected %d %d", s, r, want_s, want_r);
  }
  rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
