/*
 * test_pmpi_comms.c - many communicators under libgzcoll_pmpi: split,
 * duplicated, created from groups and freed in varying orders, each used by
 * a compressed collective. Checks that every result is within the bound of
 * the exact one (computed through PMPI_ in double on the same
 * communicator), that a context is created once per communicator on first
 * use (MPI_Comm_dup does not inherit one) and destroyed when the
 * communicator is freed, so that only MPI_COMM_WORLD's is alive at the end.
 * Run under ASan in the sanitizer build.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 1024
#define ITERS 30

static int rank, nranks;
static double e;

static unsigned long long alive(void) { return pmpi_counter("contexts", 2); }
static unsigned long long created(void) { return pmpi_counter("contexts", 0); }

/* Compressed allreduce SUM on comm vs the exact sum (PMPI_ in double). */
static void allreduce_on(MPI_Comm comm, int salt) {
  float x[N], y[N];
  double xd[N], exact[N];
  int csize, bad = 0;
  MPI_Comm_size(comm, &csize);
  for (int i = 0; i < N; i++) {
    x[i] = (float)pmpi_real(rank, (size_t)i, salt);
    xd[i] = x[i];
  }
  PMPI_Allreduce(xd, exact, N, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, comm);
  for (int i = 0; i < N; i++)
    bad +=
        !(fabs(y[i] - exact[i]) <= pmpi_tol(exact[i], e, 1) + ldexp(fabs(exact[i]), -48));
  GZ_CHECK(bad == 0, "allreduce on a %d-rank communicator: %d values off", csize, bad);
}

/* Compressed bcast from the last rank of comm. */
static void bcast_on(MPI_Comm comm, int salt) {
  double v[N];
  int crank, csize, root, bad = 0, world_root;
  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  root = csize - 1;
  world_root = crank == root ? rank : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &world_root, 1, MPI_INT, MPI_MAX, comm);
  for (int i = 0; i < N; i++)
    v[i] = crank == root ? pmpi_real(world_root, (size_t)i, salt) : 0.0;
  MPI_Bcast(v, N, MPI_DOUBLE, root, comm);
  for (int i = 0; i < N; i++)
    bad += !(fabs(v[i] - pmpi_real(world_root, (size_t)i, salt)) <= e * (1 + 1e-12));
  GZ_CHECK(bad == 0, "bcast on a %d-rank communicator: %d values off", csize, bad);
}

static int size_of(MPI_Comm comm) {
  int s = 0;
  if (comm != MPI_COMM_NULL)
    MPI_Comm_size(comm, &s);
  return s;
}

int main(int argc, char **argv) {
  unsigned long long base;
  MPI_Group world_group, even_group;
  int *evens;
  int nevens;

  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");

  allreduce_on(MPI_COMM_WORLD, 1);
  GZ_CHECK(pmpi_counters("contexts", (unsigned long long[7]){0}) == 0,
           "libgzcoll_pmpi is not loaded");
  base = alive();
  GZ_CHECK(base == (nranks > 1 ? 1u : 0u), "world context: %llu alive", base);

  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  nevens = (nranks + 1) / 2;
  evens = malloc((size_t)nevens * sizeof *evens);
  for (int i = 0; i < nevens; i++)
    evens[i] = 2 * i;
  MPI_Group_incl(world_group, nevens, evens, &even_group);

  for (int it = 0; it < ITERS; it++) {
    MPI_Comm split, dup, dup2, grp;
    unsigned long long expect = base, before;
    int color = (rank + it) % 3;
    MPI_Comm_split(MPI_COMM_WORLD, color, (it % 2) ? -rank : rank, &split);
    MPI_Comm_dup(split, &dup);
    MPI_Comm_create(MPI_COMM_WORLD, even_group, &grp);

    allreduce_on(split, 100 + it);
    expect += size_of(split) > 1;
    /* the duplicate has no context until it is used */
    before = created();
    MPI_Comm_dup(dup, &dup2);
    GZ_CHECK(created() == before, "MPI_Comm_dup copied a context");
    bcast_on(dup, 200 + it);
    expect += size_of(dup) > 1;
    if (grp != MPI_COMM_NULL) {
      allreduce_on(grp, 300 + it);
      bcast_on(grp, 400 + it);
      expect += size_of(grp) > 1;
    }
    if (it % 3 == 0) {
      allreduce_on(dup2, 500 + it);
      expect += size_of(dup2) > 1;
    }
    GZ_CHECK(alive() == expect, "iteration %d: %llu contexts alive, expected %llu", it,
             alive(), expect);

    /* free in varying orders: parent before or after its duplicates */
    if (it % 2) {
      MPI_Comm_free(&split);
      MPI_Comm_free(&dup2);
      MPI_Comm_free(&dup);
    } else {
      MPI_Comm_free(&dup);
      MPI_Comm_free(&dup2);
      MPI_Comm_free(&split);
    }
    if (grp != MPI_COMM_NULL)
      MPI_Comm_free(&grp);
    GZ_CHECK(alive() == base, "iteration %d: %llu contexts alive after the frees", it,
             alive());
  }
  MPI_Group_free(&even_group);
  MPI_Group_free(&world_group);
  free(evens);

  allreduce_on(MPI_COMM_WORLD, 2); /* the world context still works */
  GZ_CHECK(alive() == base, "%llu contexts alive at the end", alive());
  {
    unsigned long long c[7];
    pmpi_counters("allreduce", c);
    GZ_CHECK(c[PC_FALLBACK] == 0, "%llu allreduce fallbacks", c[PC_FALLBACK]);
    GZ_CHECK(nranks == 1 || c[PC_COMPRESSED] > 0, "no compressed allreduce");
  }
  return gz_test_end_mpi();
}
