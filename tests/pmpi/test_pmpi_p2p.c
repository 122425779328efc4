/*
 * test_pmpi_p2p.c - MPI_Send / MPI_Recv under libgzcoll_pmpi.
 *
 * 1. Without the program's assertion nothing is compressed, whatever the
 *    environment says: the legal pairings a compressed send could not meet
 *    (MPI_Irecv with a wildcard, MPI_Probe then a larger count, MPI_Sendrecv)
 *    run and arrive exactly (a hang ends at the test's time limit).
 * 2. On a communicator made with MPI_Comm_dup_with_info and
 *    gzcoll_assert_p2p_pairs=true on every rank, a ring of float and double
 *    messages above GZCOLL_MIN_BYTES travels compressed (counters) within the
 *    bound with a correct status; below the threshold and MPI_INT: exact.
 * 3. MPI_Comm_set_info on MPI_COMM_WORLD: true compresses, an info without
 *    the key changes nothing, "false" withdraws it.
 * 4. The key set on one rank only: not asserted, exact.
 * With --off (GZCOLL_P2P=off) every assertion is ignored: nothing is routed
 * and every message is exact.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 3000 /* 12000 bytes as float: above the test's 4096-byte threshold */
#define KEY "gzcoll_assert_p2p_pairs"

static int rank, nranks, off;

/* Send to the right neighbour, receive from the left one (rank 0 sends
 * first, everyone else receives first: no cycle of blocking sends), and
 * check what arrived: exact, or within e when compressed. */
static void ring(MPI_Comm comm, const pmpi_type_t *t, int n, int tag, int salt, double e,
                 const char *what) {
  void *in = malloc((size_t)n * t->esz), *out = malloc((size_t)n * t->esz);
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks, bad = 0, got = -1;
  MPI_Status st;
  pmpi_fill(t, 0, in, (size_t)n, rank, 0, salt);
  if (rank == 0) {
    MPI_Send(in, n, t->type, right, tag, comm);
    MPI_Recv(out, n, t->type, left, tag, comm, &st);
  } else {
    MPI_Recv(out, n, t->type, left, tag, comm, &st);
    MPI_Send(in, n, t->type, right, tag, comm);
  }
  for (int i = 0; i < n; i++) {
    double want = pmpi_input(t, 0, left, (size_t)i, salt),
           v = pmpi_get(t, out, (size_t)i);
    bad += e > 0 ? !(fabs(v - want) <= e * (1 + 1e-12)) : v != want;
  }
  GZ_CHECK(bad == 0, "%s, %s ring: %d values %s", what, t->name, bad,
           e > 0 ? "outside the bound" : "changed");
  MPI_Get_count(&st, t->type, &got);
  GZ_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag && got == n,
           "%s, %s status: source %d tag %d count %d", what, t->name, st.MPI_SOURCE,
           st.MPI_TAG, got);
  free(in);
  free(out);
}

/* Rank 0 sends float data to rank 1 three times; rank 1 receives it in ways
 * a compressed message could not be received, and sends back by
 * MPI_Sendrecv. */
static void unasserted_pairings(void) {
  float *from0 = malloc(N * sizeof *from0), *from1 = malloc(N * sizeof *from1);
  float *out = malloc(3 * N * sizeof *out); /* room for the larger receive */
  MPI_Status st;
  MPI_Request req;
  int bad = 0, count = -1;
  pmpi_fill(&pmpi_types[0], 0, from0, N, 0, 0, 40);
  pmpi_fill(&pmpi_types[0], 0, from1, N, 1, 0, 40);
  if (rank == 0) {
    MPI_Send(from0, N, MPI_FLOAT, 1, 41, MPI_COMM_WORLD);
    MPI_Send(from0, N, MPI_FLOAT, 1, 42, MPI_COMM_WORLD);
    MPI_Send(from0, N, MPI_FLOAT, 1, 43, MPI_COMM_WORLD);
    MPI_Recv(out, N, MPI_FLOAT, 1, 44, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
      bad += out[i] != from1[i];
    GZ_CHECK(bad == 0, "Sendrecv's send half: %d values changed", bad);
  } else if (rank == 1) {
    /* non-blocking, both wildcards */
    MPI_Irecv(out, N, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    GZ_CHECK(st.MPI_TAG == 41, "Irecv: tag %d", st.MPI_TAG);
    /* probe, then a receive naming more than was sent */
    MPI_Probe(0, 42, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_FLOAT, &count);
    GZ_CHECK(count == N, "Probe: count %d, sent %d", count, N);
    MPI_Recv(out + N, N + N / 2, MPI_FLOAT, 0, 42, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_FLOAT, &count);
    GZ_CHECK(count == N, "larger receive: count %d, sent %d", count, N);
    for (int i = 0; i < N; i++)
      bad += out[i] != from0[i] || out[N + i] != from0[i];
    /* the receive half of a Sendrecv */
    MPI_Sendrecv(from1, N, MPI_FLOAT, 0, 44, out, N, MPI_FLOAT, 0, 43, MPI_COMM_WORLD,
                 &st);
    for (int i = 0; i < N; i++)
      bad += out[i] != from0[i];
    GZ_CHECK(bad == 0, "unasserted pairings: %d values changed", bad);
  }
  free(from0);
  free(from1);
  free(out);
}

static MPI_Info info_with(const char *value) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (value)
    MPI_Info_set(info, KEY, value);
  return info;
}

/* routed (= compressed: p2p=ring is forced) sends and receives so far */
static void expect_routed(int want, const char *when) {
  unsigned long long s[7], r[7];
  pmpi_counters("send", s);
  pmpi_counters("recv", r);
  GZ_CHECK(s[PC_ROUTED] == (unsigned long long)want && s[PC_COMPRESSED] == s[PC_ROUTED] &&
               r[PC_ROUTED] == (unsigned long long)want &&
               r[PC_COMPRESSED] == r[PC_ROUTED],
           "%s: routed send %llu recv %llu (compressed %llu %llu), expected %d", when,
           s[PC_ROUTED], r[PC_ROUTED], s[PC_COMPRESSED], r[PC_COMPRESSED], want);
}

int main(int argc, char **argv) {
  double e, ec;
  int rc, routed = 0;
  MPI_Comm asserted, one_sided;
  MPI_Info info;
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  off = argc > 1 && strcmp(argv[1], "--off") == 0;
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  if (nranks < 2) {
    rc = gz_test_finish_mpi(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc ? rc : GZ_TEST_SKIP;
  }
  ec = off ? 0 : e; /* the bound of a compressed ring; 0 = exact */

  /* 1: no assertion anywhere */
  ring(MPI_COMM_WORLD, &pmpi_types[0], N, 1, 1, 0, "no assertion");
  unasserted_pairings();
  expect_routed(0, "without an assertion");

  /* 2: asserted on a duplicate */
  info = info_with("true");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &asserted);
  MPI_Info_free(&info);
  for (int ti = 0; ti < 2; ti++) {
    ring(asserted, &pmpi_types[ti], N, 10 + ti, ti, ec, "asserted duplicate");
    routed += !off;
    ring(asserted, &pmpi_types[ti], 10, 20 + ti, 5 + ti, 0, "below the threshold");
  }
  {
    int *iv = malloc(N * sizeof *iv), *io = malloc(N * sizeof *io), bad = 0;
    for (int i = 0; i < N; i++)
      iv[i] = rank * N + i;
    if (rank == 0)
      MPI_Send(iv, N, MPI_INT, 1, 30, asserted);
    else if (rank == 1) {
      MPI_Recv(io, N, MPI_INT, 0, 30, asserted, MPI_STATUS_IGNORE);
      for (int i = 0; i < N; i++)
        bad += io[i] != i;
    }
    GZ_CHECK(bad == 0, "MPI_INT message changed (%d)", bad);
    free(iv);
    free(io);
  }
  /* the world communicator was not asserted */
  ring(MPI_COMM_WORLD, &pmpi_types[0], N, 2, 2, 0, "world beside an asserted duplicate");
  expect_routed(routed, "asserted duplicate");

  /* 3: asserted on MPI_COMM_WORLD, an unrelated info, then withdrawn */
  info = info_with("true");
  MPI_Comm_set_info(MPI_COMM_WORLD, info);
  MPI_Info_free(&info);
  ring(MPI_COMM_WORLD, &pmpi_types[0], N, 3, 3, ec, "asserted world");
  routed += !off;
  info = info_with(NULL);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
  MPI_Comm_set_info(MPI_COMM_WORLD, info);
  MPI_Info_free(&info);
  ring(MPI_COMM_WORLD, &pmpi_types[1], N, 4, 4, ec, "world after an unrelated info");
  routed += !off;
  info = info_with("false");
  MPI_Comm_set_info(MPI_COMM_WORLD, info);
  MPI_Info_free(&info);
  ring(MPI_COMM_WORLD, &pmpi_types[0], N, 5, 5, 0, "world withdrawn");
  expect_routed(routed, "set_info on the world");

  /* 4: asserted by rank 0 only */
  info = info_with(rank == 0 ? "true" : NULL);
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &one_sided);
  MPI_Info_free(&info);
  ring(one_sided, &pmpi_types[0], N, 6, 6, 0, "asserted on one rank");
  unasserted_pairings();
  expect_routed(routed, "one-sided assertion");

  MPI_Comm_free(&one_sided);
  MPI_Comm_free(&asserted);
  return gz_test_end_mpi();
}
