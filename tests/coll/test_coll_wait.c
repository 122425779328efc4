/*
 * test_coll_wait.c - the collectives' waiting code (libgzcoll/src/
 * coll_common.c), white-box: gz_transfer's parts (a short part ends a
 * message) delivered alike whether each side waits quietly or with MPI's
 * wait, and an MPI_Test that fails inside gz_wait_quietly (injected by this
 * file's own MPI_Test, which the library's calls reach) returns the error
 * with the request completed, not left pending, for a receive and for a
 * nonblocking collective (gz_allreduce_max).
 */
#include "coll_internal.h"

#include "gz_test.h"

#include <mpi.h>
#include <string.h>

static int rank, size;

/* MPI_Test seen by the library: the next `pending` calls report "not done"
 * without testing, then `fail` calls fail without testing; then MPI's. */
static int pending, fail, tests;

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
  tests++;
  if (pending > 0) {
    pending--;
    *flag = 0;
    return MPI_SUCCESS;
  }
  if (fail > 0) {
    fail--;
    *flag = 0;
    return MPI_ERR_OTHER;
  }
  return PMPI_Test(req, flag, st);
}

static unsigned char byte_of(int from, size_t i) {
  return (unsigned char)(from * 31 + (int)i * 7 + 1);
}

/* A ring exchange (to rank + 1, from rank - 1) of m bytes in parts of 8:
 * sizes below, at and across multiples of the part (where an empty part
 * ends the message), every rank quiet or not by turns. */
static void test_transfer(gz_ctx_t ctx) {
  static const size_t sizes[] = {0, 1, 7, 8, 9, 16, 17, 40, 1000};
  unsigned char sbuf[1000], rbuf[1000 + 8];
  int to = (rank + 1) % size, from = (rank - 1 + size) % size;
  ctx->part_bytes = 8;
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
    size_t m = sizes[c], got = SIZE_MAX, bad = 0;
    gz_run_t run;
    int quiet = (rank + (int)c) % 2;
    gz_result_t rc;
    memset(&run, 0, sizeof run);
    memset(rbuf, 0xee, sizeof rbuf);
    for (size_t i = 0; i < m; i++)
      sbuf[i] = byte_of(rank, i);
    rc = gz_transfer(ctx, 99, sbuf, m, to, rbuf, sizeof rbuf, from, &got, &run, quiet);
    for (size_t i = 0; i < m; i++)
      bad += rbuf[i] != byte_of(from, i);
    GZ_CHECK(
        rc == GZ_OK && got == m && bad == 0 && run.bytes_sent == m && rbuf[m] == 0xee,
        "transfer of %zu bytes (quiet %d): rc %d, %zu received, %zu wrong, %llu sent", m,
        quiet, (int)rc, got, bad, (unsigned long long)run.bytes_sent);
  }
  /* receive only, quietly, as a scatter's receiver: rank 0 sends to 1 */
  if (size > 1 && rank < 2) {
    size_t got = 0;
    gz_result_t rc =
        rank == 0 ? gz_xfer(ctx, 98, sbuf, 17, 1, NULL, 0, MPI_PROC_NULL, NULL, NULL)
                  : gz_transfer(ctx, 98, NULL, 0, MPI_PROC_NULL, rbuf, sizeof rbuf, 0,
                                &got, NULL, 1);
    GZ_CHECK(rc == GZ_OK && (rank == 0 || (got == 17 && rbuf[16] == byte_of(0, 16))),
             "receive only, quietly: rc %d, %zu bytes", (int)rc, got);
  }
  ctx->part_bytes = GZ_DEFAULT_PART;
}

/* A receive from this rank whose message is already sent: the first test
 * (or, with pending, a later one) fails; the request must come back
 * completed (MPI_REQUEST_NULL, its data in place) and the error returned. */
static void test_wait_fails(int n_pending) {
  int x = 0, y = 42 + rank;
  MPI_Request rreq, sreq;
  gz_result_t rc;
  MPI_Irecv(&x, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &rreq);
  MPI_Isend(&y, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &sreq);
  pending = n_pending;
  fail = 1;
  tests = 0;
  rc = gz_wait_quietly(&rreq, MPI_STATUS_IGNORE);
  GZ_CHECK(rc == GZ_ERR_MPI && tests == n_pending + 1,
           "failed MPI_Test after %d pending: rc %d after %d tests", n_pending, (int)rc,
           tests);
  GZ_CHECK(rreq == MPI_REQUEST_NULL && x == 42 + rank,
           "failed MPI_Test after %d pending: the receive left %s (x = %d)", n_pending,
           rreq == MPI_REQUEST_NULL ? "completed" : "pending", x);
  if (rreq != MPI_REQUEST_NULL) /* the leak found: complete it for the next case */
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);
  pending = fail = 0;
}

/* gz_allreduce_max's quiet Iallreduce (a collective request cannot be cancelled):
 * its first test fails on every rank; the allreduce still completes (the
 * maximum is there) and the error is returned. */
static void test_max_fails(gz_ctx_t ctx) {
  double v[2] = {(double)rank, -(double)rank};
  gz_result_t rc;
  fail = 1;
  rc = gz_allreduce_max(ctx, v, 2, 1);
  GZ_CHECK(rc == GZ_ERR_MPI && v[0] == size - 1 && v[1] == 0,
           "failed test of the allreduce: rc %d, max %g %g", (int)rc, v[0], v[1]);
  fail = 0;
  rc = gz_allreduce_max(ctx, v, 2, 1); /* the communicator is still usable */
  GZ_CHECK(rc == GZ_OK && v[0] == size - 1, "allreduce after: rc %d", (int)rc);
}

/* A quiet transfer whose receive's test fails: the error comes back, both
 * parts' requests completed (a send to this rank, received). */
static void test_transfer_fails(gz_ctx_t ctx) {
  unsigned char s[5] = {1, 2, 3, 4, 5}, r[8] = {0};
  size_t got = 0;
  gz_result_t rc;
  fail = 1;
  rc = gz_transfer(ctx, 97, s, sizeof s, rank, r, sizeof r, rank, &got, NULL, 1);
  GZ_CHECK(rc == GZ_ERR_MPI && r[4] == 5 && fail == 0,
           "quiet transfer, failed test: rc %d, r[4] %d", (int)rc, r[4]);
  fail = 0;
}

int main(int argc, char **argv) {
  gz_ctx_t ctx = NULL;
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK && ctx, "context");
  if (ctx) {
    test_transfer(ctx);
    test_wait_fails(0);
    test_wait_fails(3);
    test_max_fails(ctx);
    test_transfer_fails(ctx);
    gz_ctx_destroy(ctx);
  }
  return gz_test_end_mpi();
}
