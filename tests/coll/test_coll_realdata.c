/* test_coll_realdata.c - every collective on real data from ../shared/data
 * (skips cleanly when absent):
 *   - soda lakes seismic survey, 24 shots x 96 channels x 2048 samples,
 *     float32: each rank stacks the shots r, r + P, ...; gz_allreduce (SUM,
 *     every algorithm), gz_allreduce_mean over the 24 shots and
 *     gz_reduce_scatter_block (MAX) give the stack of all shots;
 *   - F3 North Sea cube, 23 x 18 x 75 float32 (integer-valued): gz_bcast,
 *     gz_scatter, gz_allgather, gz_alltoall and gz_send/gz_recv move parts
 *     of it.
 * Each result is checked element by element against MPI in double. */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SODA "seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw"
#define F3 "seismic_f3_cube/f3_23x18x75_f32le.raw"
#define SHOTS 24
#define TRACE (96 * 2048)
#define CUBE (23 * 18 * 75)

static int rank, size;

static int read_at(const char *path, size_t offset, float *out, size_t n) {
  FILE *f = fopen(path, "rb");
  int ok =
      f && fseek(f, (long)offset, SEEK_SET) == 0 && fread(out, sizeof *out, n, f) == n;
  if (f)
    fclose(f);
  return ok;
}

static void note(const char *what, const gz_report_t *rep) {
  if (rank == 0)
    printf("  %-28s %-8s ratio %5.2f  bound %.3g  (%s)\n", what, rep->algo,
           rep->bytes_sent ? (double)rep->bytes_raw / (double)rep->bytes_sent : 0.0,
           rep->result_bound, rep->reason);
}

/* A float32 result of TRACE values: the call succeeded, its report noted,
 * every value within the reported bound of ref (give or take slop).
 * Returns whether the call succeeded. */
static int check_trace(const char *what, gz_result_t rc, const gz_report_t *rep,
                       const float *out, const double *ref, const double *slop) {
  GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
  if (rc != GZ_OK)
    return 0;
  note(what, rep);
  GZ_CHECK(cu_count_wrong(GZ_FLOAT32, out, ref, slop, TRACE, rep->result_bound, what) ==
               0,
           "%s: values outside %g", what, rep->result_bound);
  return 1;
}

static void test_stack(const char *path) {
  float *partial = cu_alloc(GZ_FLOAT32, TRACE), *shot = cu_alloc(GZ_FLOAT32, TRACE);
  float *out = cu_alloc(GZ_FLOAT32, TRACE);
  double *ref = malloc(TRACE * sizeof *ref), *slop = malloc(TRACE * sizeof *slop);
  double *mref = malloc(TRACE * sizeof *mref);
  const double e = 1e-3;
  int ok = 1;
  for (int s = rank; s < SHOTS; s += size) {
    ok &= read_at(path, (size_t)s * TRACE * sizeof(float), shot, TRACE);
    for (size_t i = 0; i < TRACE; i++)
      partial[i] += shot[i];
  }
  GZ_CHECK(ok, "read %s", path);
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT32, GZ_OP_SUM, partial, TRACE, ref, slop);
  for (int a = 0; a < 4; a++) {
    const char *algo = cu_allreduce_algos[a];
    gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, algo, e, GZ_EB_ABS, GZ_BOUND_STRICT);
    gz_report_t rep;
    char what[64];
    gz_result_t rc = gz_allreduce(ctx, partial, out, TRACE, GZ_FLOAT32, GZ_OP_SUM, &rep);
    snprintf(what, sizeof what, "soda stack %s", algo);
    if (check_trace(what, rc, &rep, out, ref, slop)) {
      GZ_CHECK(rep.result_bound <= e + cu_round_allow(GZ_FLOAT32, cu_absmax(ref, TRACE)),
               "%s: bound %g > e", what, rep.result_bound);
      GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, out, TRACE * sizeof *out),
               "%s: bytes differ", what);
    }
    /* the stack's mean over the 24 shots, within e */
    for (size_t i = 0; i < TRACE; i++) {
      mref[i] = ref[i] / SHOTS;
      slop[i] /= SHOTS;
    }
    rc = gz_allreduce_mean(ctx, partial, out, TRACE, GZ_FLOAT32, SHOTS, &rep);
    snprintf(what, sizeof what, "soda mean %s", algo);
    check_trace(what, rc, &rep, out, mref, slop);
    for (size_t i = 0; i < TRACE; i++)
      slop[i] *= SHOTS;
    gz_ctx_destroy(ctx);
  }
  /* reduce-scatter: the largest amplitude of each sample over the ranks */
  {
    size_t n = TRACE / (size_t)size;
    gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, "ring", e, GZ_EB_ABS, GZ_BOUND_STRICT);
    gz_report_t rep;
    gz_result_t rc;
    cu_reference(MPI_COMM_WORLD, GZ_FLOAT32, GZ_OP_MAX, partial, n * (size_t)size, ref,
                 NULL);
    rc = gz_reduce_scatter_block(ctx, partial, out, n, GZ_FLOAT32, GZ_OP_MAX, &rep);
    GZ_CHECK(rc == GZ_OK, "soda reduce_scatter: %s", gz_strerror(rc));
    if (rc == GZ_OK) {
      note("soda reduce_scatter max", &rep);
      GZ_CHECK(cu_count_wrong(GZ_FLOAT32, out, ref + (size_t)rank * n, NULL, n,
                              rep.result_bound, "soda rs") == 0,
               "soda reduce_scatter values");
    }
    gz_ctx_destroy(ctx);
  }
  free(partial);
  free(shot);
  free(out);
  free(ref);
  free(slop);
  free(mref);
}

static void expect(const float *got, const float *want, size_t n, double bound,
                   const char *what) {
  double *ref = malloc((n + 1) * sizeof *ref);
  for (size_t i = 0; i < n; i++)
    ref[i] = want[i];
  GZ_CHECK(cu_count_wrong(GZ_FLOAT32, got, ref, NULL, n, bound, what) == 0,
           "%s: values outside %g", what, bound);
  free(ref);
}

static void test_cube(const char *path) {
  float *cube = cu_alloc(GZ_FLOAT32, CUBE), *buf = cu_alloc(GZ_FLOAT32, CUBE);
  float *buf2 = cu_alloc(GZ_FLOAT32, CUBE);
  size_t blk = CUBE / (size_t)size, sub = blk / (size_t)size;
  gz_ctx_t bin = cu_ctx(MPI_COMM_WORLD, "binomial", 2.0, GZ_EB_ABS, GZ_BOUND_STRICT);
  gz_ctx_t ring = cu_ctx(MPI_COMM_WORLD, "ring", 2.0, GZ_EB_ABS, GZ_BOUND_STRICT);
  gz_ctx_t pw = cu_ctx(MPI_COMM_WORLD, "pairwise", 2.0, GZ_EB_ABS, GZ_BOUND_STRICT);
  gz_ctx_t rel = cu_ctx(MPI_COMM_WORLD, "binomial", 1e-4, GZ_EB_REL, GZ_BOUND_STRICT);
  gz_report_t rep;
  gz_result_t rc;
  GZ_CHECK(read_at(path, 0, cube, CUBE), "read %s", path);

  /* bcast of the whole cube from the last rank */
  if (rank == size - 1)
    memcpy(buf, cube, CUBE * sizeof *buf);
  rc = gz_bcast(bin, buf, CUBE, GZ_FLOAT32, size - 1, &rep);
  GZ_CHECK(rc == GZ_OK && rep.compressed, "f3 bcast: %s", gz_strerror(rc));
  note("f3 bcast", &rep);
  expect(buf, cube, CUBE, rep.result_bound, "f3 bcast");
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, buf, CUBE * sizeof *buf), "f3 bcast bytes");
  /* REL: e relative to the cube's range */
  if (rank == 0)
    memcpy(buf, cube, CUBE * sizeof *buf);
  rc = gz_bcast(rel, buf, CUBE, GZ_FLOAT32, 0, &rep);
  GZ_CHECK(rc == GZ_OK && fabs(rep.quant_bound - 1e-4 * (10827.0 + 10239.0)) < 1.0,
           "f3 bcast REL: %s eb %g", gz_strerror(rc), rep.quant_bound);
  note("f3 bcast REL 1e-4", &rep);
  expect(buf, cube, CUBE, rep.result_bound, "f3 bcast REL");

  /* scatter of P blocks from rank 0 */
  rc = gz_scatter(bin, cube, buf, blk, GZ_FLOAT32, 0, &rep);
  GZ_CHECK(rc == GZ_OK, "f3 scatter: %s", gz_strerror(rc));
  note("f3 scatter", &rep);
  expect(buf, cube + (size_t)rank * blk, blk, rep.result_bound, "f3 scatter");

  /* allgather of everyone's block */
  rc = gz_allgather(ring, cube + (size_t)rank * blk, buf, blk, GZ_FLOAT32, &rep);
  GZ_CHECK(rc == GZ_OK && (rep.compressed || size == 1), "f3 allgather: %s",
           gz_strerror(rc));
  note("f3 allgather", &rep);
  expect(buf, cube, blk * (size_t)size, rep.result_bound, "f3 allgather");
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, buf, blk * (size_t)size * sizeof *buf),
           "f3 allgather bytes");

  /* alltoall: rank r sends sub-block d of its block r to rank d */
  rc = gz_alltoall(pw, cube + (size_t)rank * blk, buf, sub, GZ_FLOAT32, &rep);
  GZ_CHECK(rc == GZ_OK, "f3 alltoall: %s", gz_strerror(rc));
  note("f3 alltoall", &rep);
  for (int s = 0; s < size; s++)
    memcpy(buf2 + (size_t)s * sub, cube + (size_t)s * blk + (size_t)rank * sub,
           sub * sizeof *buf2);
  expect(buf, buf2, sub * (size_t)size, rep.result_bound, "f3 alltoall");

  /* point to point: rank 0 sends the cube to rank 1 */
  if (size > 1 && rank < 2) {
    if (rank == 0)
      rc = gz_send(ring, cube, CUBE, GZ_FLOAT32, 1, 9, &rep);
    else
      rc = gz_recv(ring, buf, CUBE, GZ_FLOAT32, 0, 9, &rep);
    GZ_CHECK(rc == GZ_OK && rep.compressed, "f3 send/recv: %s", gz_strerror(rc));
    if (rank == 1)
      expect(buf, cube, CUBE, rep.result_bound, "f3 recv");
  }
  gz_ctx_destroy(bin);
  gz_ctx_destroy(ring);
  gz_ctx_destroy(pw);
  gz_ctx_destroy(rel);
  free(cube);
  free(buf);
  free(buf2);
}

int main(int argc, char **argv) {
  static char soda[4096];
  const char *f3;
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  /* the helper returns a static string: keep a copy before the next call */
  snprintf(soda, sizeof soda, "%s", gz_test_require_data_mpi(SODA));
  f3 = gz_test_require_data_mpi(F3);
  test_stack(soda);
  test_cube(f3);
  return gz_test_end_mpi();
}
