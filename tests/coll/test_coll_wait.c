/*
 * test_coll_wait.c - the collectives' waiting code (libgzcoll/src/
 * coll_common.c), white-box: gz_transfer's parts (a short part ends a
 * message) delivered alike whether each side waits quietly or with MPI's
 * wait.
 */
#include "coll_internal.h"

#include "gz_test.h"

#include <mpi.h>
#include <string.h>

static int rank, size;

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

int main(int argc, char **argv) {
  gz_ctx_t ctx = NULL;
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK && ctx, "context");
  if (ctx) {
    test_transfer(ctx);
    gz_ctx_destroy(ctx);
  }
  return gz_test_end_mpi();
}
