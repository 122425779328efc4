/* test_coll_p2p.c - gz_send / gz_recv between rank pairs (r, r ^ 1):
 * compressed, uncompressed (mpi) and auto, both types, counts 0, 1, odd and
 * large, the escape path (NaN sent raw and exact), a count mismatch at the
 * receiver, a failed sender, wildcard source and tag, and payloads larger
 * than the largest single message (GZCOLL_PART_BYTES). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E 1e-3

static int rank, size;

static void data_of(gz_dtype_t dt, void *buf, size_t n, int from, int salt) {
  cu_fill(dt, buf, n, 555ull * (uint64_t)from + 3ull * n + (uint64_t)salt, 6.0);
}

/* Lower rank of the pair sends first, the higher receives first. */
static void exchange(gz_ctx_t ctx, const char *algo, gz_dtype_t dt, size_t n, int salt,
                     int nan_at) {
  int partner = rank ^ 1, tag = 5 + salt;
  void *mine = cu_alloc(dt, n), *got = cu_alloc(dt, n), *want = cu_alloc(dt, n);
  double *ref = malloc((n + 1) * sizeof *ref);
  gz_report_t srep, rrep;
  gz_result_t src = GZ_OK, rrc = GZ_OK;
  char what[128];
  if (nan_at >= 0 && (size_t)nan_at >= n)
    nan_at = -1; /* no room for the NaN */
  if (partner >= size)
    goto done;
  snprintf(what, sizeof what, "p2p %s %s n=%zu P=%d%s", algo, cu_dtype_name(dt), n, size,
           nan_at >= 0 ? " with NaN" : "");
  data_of(dt, mine, n, rank, salt);
  data_of(dt, want, n, partner, salt);
  if (nan_at >= 0 && (size_t)nan_at < n) {
    cu_set(dt, mine, (size_t)nan_at, NAN);
    cu_set(dt, want, (size_t)nan_at, NAN);
  }
  if (rank < partner) {
    src = gz_send(ctx, mine, n, dt, partner, tag, &srep);
    rrc = gz_recv(ctx, got, n, dt, partner, tag, &rrep);
  } else {
    rrc = gz_recv(ctx, got, n, dt, MPI_ANY_SOURCE, MPI_ANY_TAG, &rrep);
    src = gz_send(ctx, mine, n, dt, partner, tag, &srep);
  }
  GZ_CHECK(src == GZ_OK && rrc == GZ_OK, "%s: send %s recv %s", what, gz_strerror(src),
           gz_strerror(rrc));
  if (src != GZ_OK || rrc != GZ_OK)
    goto done;
  GZ_CHECK(srep.compressed == rrep.compressed, "%s: sender and receiver disagree", what);
  if (!strcmp(algo, "ring") && nan_at < 0)
    GZ_CHECK(rrep.compressed && rrep.quant_bound == E, "%s: not compressed (%s)", what,
             srep.reason);
  if (!strcmp(algo, "mpi") || nan_at >= 0)
    GZ_CHECK(!rrep.compressed && rrep.result_bound == 0, "%s: compressed", what);
  if (rrep.compressed)
    GZ_CHECK(rrep.result_bound <= E + cu_round_allow(dt, 8.0), "%s: bound %g", what,
             rrep.result_bound);
  for (size_t i = 0; i < n; i++)
    ref[i] = cu_get(dt, want, i);
  if (nan_at >= 0 && (size_t)nan_at < n) {
    GZ_CHECK(isnan(cu_get(dt, got, (size_t)nan_at)), "%s: NaN lost", what);
    cu_set(dt, got, (size_t)nan_at, 0.0);
    ref[nan_at] = 0.0;
  }
  GZ_CHECK(cu_count_wrong(dt, got, ref, NULL, n, rrep.result_bound, what) == 0,
           "%s: values outside the bound %g", what, rrep.result_bound);
done:
  free(mine);
  free(got);
  free(want);
  free(ref);
}

static void test_matrix(void) {
  const char *const algos[3] = {"auto", "mpi", "ring"};
  const size_t counts[4] = {0, 1, 1001, 100003};
  for (int a = 0; a < 3; a++) {
    gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
    for (int t = 0; t < 2; t++)
      for (int c = 0; c < 4; c++) {
        exchange(ctx, algos[a], t ? GZ_FLOAT64 : GZ_FLOAT32, counts[c], c, -1);
        exchange(ctx, algos[a], t ? GZ_FLOAT64 : GZ_FLOAT32, counts[c], c, 0);
      }
    gz_ctx_destroy(ctx);
  }
}

static void test_errors(void) {
  gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, "ring", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  int partner = rank ^ 1;
  float buf[64] = {0};
  gz_result_t rc;
  GZ_CHECK(gz_send(ctx, buf, 4, GZ_FLOAT32, size + 3, 0, NULL) == GZ_ERR_ARG, "bad dest");
  GZ_CHECK(gz_recv(ctx, buf, 4, GZ_FLOAT32, -7, 0, NULL) == GZ_ERR_ARG, "bad source");
  GZ_CHECK(gz_send(ctx, buf, 4, GZ_FLOAT32, MPI_PROC_NULL, 0, NULL) == GZ_OK,
           "PROC_NULL");
  if (partner < size) {
    if (rank < partner) {
      /* a count the receiver does not expect, then a failed send */
      rc = gz_send(ctx, buf, 10, GZ_FLOAT32, partner, 1, NULL);
      GZ_CHECK(rc == GZ_OK, "send 10: %s", gz_strerror(rc));
      rc = gz_send(ctx, buf, 10, (gz_dtype_t)5, partner, 2, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "send bad dtype: %s", gz_strerror(rc));
      rc = gz_send(ctx, buf, 12, GZ_FLOAT32, partner, 3, NULL);
      GZ_CHECK(rc == GZ_OK, "send 12: %s", gz_strerror(rc));
    } else {
      rc = gz_recv(ctx, buf, 11, GZ_FLOAT32, partner, 1, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "count mismatch: %s", gz_strerror(rc));
      rc = gz_recv(ctx, buf, 10, GZ_FLOAT32, partner, 2, NULL);
      GZ_CHECK(rc == GZ_ERR_REMOTE, "failed sender: %s", gz_strerror(rc));
      rc = gz_recv(ctx, buf, 12, GZ_FLOAT64, partner, 3, NULL);
      GZ_CHECK(rc == GZ_ERR_ARG, "type mismatch: %s", gz_strerror(rc));
    }
  }
  gz_ctx_destroy(ctx);
}

/* Payloads above the part size travel in parts. */
static void test_parts(void) {
  gz_ctx_t ctx;
  setenv("GZCOLL_PART_BYTES", "1000", 1);
  ctx = cu_ctx(MPI_COMM_WORLD, "ring", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  unsetenv("GZCOLL_PART_BYTES");
  exchange(ctx, "ring", GZ_FLOAT64, 10007, 40, -1);
  exchange(ctx, "ring", GZ_FLOAT32, 3000, 41, 17);
  exchange(ctx, "ring", GZ_FLOAT32, 242, 42, -1);
  gz_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  test_matrix();
  test_errors();
  test_parts();
  GZ_CHECK(1, "done");
  return gz_test_end_mpi();
}
