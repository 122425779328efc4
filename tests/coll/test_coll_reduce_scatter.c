/* test_coll_reduce_scatter.c - gz_reduce_scatter_block against MPI's
 * MPI_Reduce_scatter_block in double: auto, mpi and ring forced in turn,
 * both types, all ops, counts 0, 1, P-1, odd and large, in place, a split
 * sub-communicator, int32 against int64 codes, the escape path and failure
 * agreement. The compressed result of block r must be bit-identical to
 * block r of gz_allreduce on the same input (the integer total does not
 * depend on the algorithm). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E 1e-3

static const char *const algos[3] = {"auto", "mpi", "ring"};
static int world_rank, world_size;

static void run_case(MPI_Comm comm, gz_ctx_t ctx[3], gz_ctx_t redoub, gz_dtype_t dt,
                     gz_op_t op, size_t n, int inplace) {
  int P, r;
  size_t esz = gz_dtype_size(dt), total;
  void *in, *out, *all;
  double *ref, *slop, *dref, *dslop, rmax;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &r);
  total = n * (size_t)P;
  in = cu_alloc(dt, total);
  out = cu_alloc(dt, total);
  all = cu_alloc(dt, total);
  ref = malloc((n + 1) * sizeof *ref);
  slop = malloc((n + 1) * sizeof *slop);
  dref = malloc((total + 1) * sizeof *dref);
  dslop = malloc((total + 1) * sizeof *dslop);
  cu_fill(dt, in, total, 77ull * (uint64_t)(r + 1) + 13ull * n + (uint64_t)op + 5ull * dt,
          4.0);
  /* reference: allreduce in double, keep block r */
  cu_reference(comm, dt, op, in, total, dref, dslop);
  memcpy(ref, dref + (size_t)r * n, n * sizeof *ref);
  memcpy(slop, dslop + (size_t)r * n, n * sizeof *slop);
  rmax = cu_absmax(ref, n);
  /* the same input through ReDoub allreduce: block r must match bit for bit */
  if (gz_allreduce(redoub, in, all, total, dt, op, NULL) != GZ_OK)
    GZ_CHECK(0, "allreduce for comparison failed");
  for (int a = 0; a < 3; a++) {
    gz_report_t rep;
    gz_result_t rc;
    char what[128];
    long wrong;
    memset(&rep, 0, sizeof rep);
    if (inplace)
      memcpy(out, in, total * esz);
    snprintf(what, sizeof what, "reduce_scatter %s %s %s n=%zu P=%d%s", algos[a],
             cu_dtype_name(dt), cu_op_name(op), n, P, inplace ? " in-place" : "");
    rc =
        gz_reduce_scatter_block(ctx[a], inplace ? GZ_IN_PLACE : in, out, n, dt, op, &rep);
    GZ_CHECK(rc == GZ_OK, "%s: %s", what, gz_strerror(rc));
    if (rc != GZ_OK)
      continue;
    if (!strcmp(algos[a], "ring"))
      GZ_CHECK(!strcmp(rep.algo, "ring") && rep.compressed, "%s: report %s (%s)", what,
               rep.algo, rep.reason);
    if (!strcmp(algos[a], "mpi"))
      GZ_CHECK(!strcmp(rep.algo, "mpi") && !rep.compressed, "%s: report", what);
    if (rep.compressed) {
      GZ_CHECK(rep.result_bound <= E * (1 + 1e-9) + cu_round_allow(dt, rmax) + 1e-12,
               "%s: bound %g > e", what, rep.result_bound);
      GZ_CHECK(memcmp(out, (char *)all + (size_t)r * n * esz, n * esz) == 0,
               "%s: differs from block %d of the allreduce", what, r);
    }
    wrong = cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, what);
    GZ_CHECK(wrong == 0, "%s: %ld elements outside the bound %g", what, wrong,
             rep.result_bound);
  }
  free(in);
  free(out);
  free(all);
  free(ref);
  free(slop);
  free(dref);
  free(dslop);
}

static void test_matrix(MPI_Comm comm, const size_t *counts, int ncounts) {
  gz_ctx_t ctx[3], redoub;
  for (int a = 0; a < 3; a++)
    ctx[a] = cu_ctx(comm, algos[a], E, GZ_EB_ABS, GZ_BOUND_STRICT);
  redoub = cu_ctx(comm, "redoub", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  for (int t = 0; t < 2; t++)
    for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
      for (int c = 0; c < ncounts; c++)
        for (int ip = 0; ip < 2; ip++)
          run_case(comm, ctx, redoub, t ? GZ_FLOAT64 : GZ_FLOAT32, (gz_op_t)op, counts[c],
                   ip);
  for (int a = 0; a < 3; a++)
    gz_ctx_destroy(ctx[a]);
  gz_ctx_destroy(redoub);
}

/* int32 codes allowed and int64 codes forced (GZCOLL_WIDE_CODES) give the
 * same bytes and bounds, within the bound of MPI's result in double: kind 0
 * fits int32; kind 1 has one large value in the last block of the last rank
 * (quantized late: that rank widens, the agreed range makes every rank
 * wide); kind 2 puts on every rank a code that fits int32 at the same index
 * of block 0, whose sum over the ranks does not (SUM must be wide). */
static void test_code_width(void) {
  const size_t n = 4099, total = n * (size_t)world_size, at = 5;
  for (int t = 0; t < 2; t++)
    for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
      for (int kind = 0; kind < 3; kind++) {
        gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
        size_t esz = gz_dtype_size(dt);
        void *in = cu_alloc(dt, total), *out = cu_alloc(dt, n), *wide = cu_alloc(dt, n);
        double *dref = malloc(total * sizeof *dref),
               *dslop = malloc(total * sizeof *dslop);
        double eb = op == GZ_OP_SUM ? E / world_size : E;
        gz_report_t rep, rep_wide;
        gz_ctx_t ctx, ctx_wide;
        gz_result_t rc, rc_wide;
        char what[128];
        cu_fill(dt, in, total, 31ull * (uint64_t)(world_rank + 1) + (uint64_t)op, 5.0);
        if (kind == 1 && world_rank == world_size - 1)
          cu_set(dt, in, total - 3, 1e7);
        if (kind == 2) /* |code| = 1.5 * 2^31 / P on every rank: the sum does not fit */
          cu_set(dt, in, at, ldexp(1.5, 31) / world_size * 2 * eb);
        cu_reference(MPI_COMM_WORLD, dt, (gz_op_t)op, in, total, dref, dslop);
        snprintf(what, sizeof what, "code width %s %s kind %d P=%d", cu_dtype_name(dt),
                 cu_op_name((gz_op_t)op), kind, world_size);
        ctx = cu_ctx(MPI_COMM_WORLD, "ring", E, GZ_EB_ABS, GZ_BOUND_STRICT);
        setenv("GZCOLL_WIDE_CODES", "1", 1);
        ctx_wide = cu_ctx(MPI_COMM_WORLD, "ring", E, GZ_EB_ABS, GZ_BOUND_STRICT);
        unsetenv("GZCOLL_WIDE_CODES");
        rc = gz_reduce_scatter_block(ctx, in, out, n, dt, (gz_op_t)op, &rep);
        rc_wide =
            gz_reduce_scatter_block(ctx_wide, in, wide, n, dt, (gz_op_t)op, &rep_wide);
        GZ_CHECK(rc == GZ_OK && rc_wide == GZ_OK, "%s: %s / %s", what, gz_strerror(rc),
                 gz_strerror(rc_wide));
        if (rc == GZ_OK && rc_wide == GZ_OK && world_size > 1) {
          const double *ref = dref + (size_t)world_rank * n;
          const double *slop = dslop + (size_t)world_rank * n;
          GZ_CHECK(rep.compressed && rep_wide.compressed, "%s: compressed", what);
          GZ_CHECK(memcmp(out, wide, n * esz) == 0, "%s: int32 and int64 codes differ",
                   what);
          GZ_CHECK(rep.result_bound == rep_wide.result_bound, "%s: bounds %g / %g", what,
                   rep.result_bound, rep_wide.result_bound);
          GZ_CHECK(cu_count_wrong(dt, out, ref, slop, n, rep.result_bound, what) == 0,
                   "%s: elements outside the bound %g", what, rep.result_bound);
        }
        gz_ctx_destroy(ctx);
        gz_ctx_destroy(ctx_wide);
        free(in);
        free(out);
        free(wide);
        free(dref);
        free(dslop);
      }
}

static void test_escape_and_failures(void) {
  const size_t n = 2001, total = n * (size_t)world_size;
  double *in = cu_alloc(GZ_FLOAT64, total), *out = cu_alloc(GZ_FLOAT64, total);
  double *want = cu_alloc(GZ_FLOAT64, total);
  gz_ctx_t ctx = cu_ctx(MPI_COMM_WORLD, "ring", E, GZ_EB_ABS, GZ_BOUND_STRICT);
  gz_report_t rep;
  gz_result_t rc;
  long bad = 0;
  int last = world_rank == world_size - 1;
  cu_fill(GZ_FLOAT64, in, total, 99 + (uint64_t)world_rank, 2.0);
  if (world_rank == 0)
    in[total - 1] = -INFINITY;
  MPI_Reduce_scatter_block(in, want, (int)n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  rc = gz_reduce_scatter_block(ctx, in, out, n, GZ_FLOAT64, GZ_OP_MIN, &rep);
  GZ_CHECK(rc == GZ_OK && !rep.compressed && strstr(rep.reason, "non-finite"),
           "escape: %s compressed %d", gz_strerror(rc), rep.compressed);
  for (size_t i = 0; i < n; i++)
    bad += out[i] != want[i];
  GZ_CHECK(bad == 0, "escape: %ld values differ from MPI", bad);
  /* a bad type on the last rank */
  rc = gz_reduce_scatter_block(ctx, in, out, n, last ? (gz_dtype_t)9 : GZ_FLOAT64,
                               GZ_OP_SUM, NULL);
  GZ_CHECK(rc == (last ? GZ_ERR_ARG : GZ_ERR_REMOTE), "bad dtype: %s", gz_strerror(rc));
  rc = gz_reduce_scatter_block(ctx, in, out, n, GZ_FLOAT64, GZ_OP_SUM, NULL);
  GZ_CHECK(rc == GZ_OK, "after failure: %s", gz_strerror(rc));
  gz_ctx_destroy(ctx);
  free(in);
  free(out);
  free(want);
}

int main(int argc, char **argv) {
  MPI_Comm half;
  gz_test_init_mpi(&argc, &argv, &world_rank, &world_size);
  {
    size_t counts[5] = {0, 1, (size_t)(world_size - 1), 1001, 25007};
    test_matrix(MPI_COMM_WORLD, counts, 5);
  }
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 3, world_rank, &half);
  {
    size_t counts[2] = {2, 9001};
    test_matrix(half, counts, 2);
  }
  MPI_Comm_free(&half);
  test_code_width();
  test_escape_and_failures();
  return gz_test_end_mpi();
}
