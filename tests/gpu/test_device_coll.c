/* test_device_coll.c - the device-centric allreduce and scatter against the
 * CPU algorithms, bit for bit (same codes, same integer totals).
 *   ops: host buffers, a context with a device pool and GZCOLL_BACKEND=ops,
 *        so the device algorithms run with the CPU operations (runs
 *        everywhere: the CPU coverage of the device rows of
 *        allreduce_recursive_doubling.c and scatter_binomial.c);
 *   gpu: the same buffers copied to the GPU (all ranks may share one),
 *        exits 77 without a device.
 * Counts 0, 1, fewer than the ranks, ragged, several segments; float32 and
 * float64; scatter roots first, last and middle (the CPU root encodes in the
 * quantization's pass and reorders the records: the ops row does not); SUM, MAX, MIN and
 * the mean; escape values (NaN) that take the uncompressed path; the result equals the
 * CPU redoub's bytes on every rank, and is within the reported bound of the double
 * reference. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"
#include "gz_device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, gpu;

static gz_ctx_t make_ctx(int device, const char *algo, double e) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_result_t rc;
  cfg.error_bound = e;
  snprintf(cfg.algo, sizeof cfg.algo, "%s", algo);
  cfg.device_pool_bytes = device ? (size_t)256 << 20 : 0;
  if (device && !gpu)
    setenv("GZCOLL_BACKEND", "ops", 1);
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
  unsetenv("GZCOLL_BACKEND");
  GZ_CHECK(rc == GZ_OK, "ctx (device %d): %s", device, gz_strerror(rc));
  return rc == GZ_OK ? ctx : NULL;
}

/* A buffer on the side under test: device memory in gpu mode. */
static void *to_side(const void *host, size_t bytes) {
  void *d = NULL;
  if (!gpu) {
    d = malloc(bytes + 1);
    memcpy(d, host, bytes);
    return d;
  }
  if (gz_dev_malloc(&d, bytes + 1) != GZ_DEV_OK ||
      gz_dev_memcpy_async(d, host, bytes, NULL) != GZ_DEV_OK ||
      gz_dev_stream_sync(NULL) != GZ_DEV_OK)
    GZ_CHECK(0, "device buffer: %s", gz_dev_last_error());
  return d;
}
static void from_side(void *host, const void *side, size_t bytes) {
  if (!gpu)
    memcpy(host, side, bytes);
  else if (gz_dev_memcpy_async(host, side, bytes, NULL) != GZ_DEV_OK ||
           gz_dev_stream_sync(NULL) != GZ_DEV_OK)
    GZ_CHECK(0, "device copy: %s", gz_dev_last_error());
}
static void free_side(void *p) {
  if (gpu)
    gz_dev_free(p);
  else
    free(p);
}

static void test_allreduce(gz_ctx_t cpu, gz_ctx_t dev, gz_dtype_t dtype, gz_op_t op,
                           size_t n, int mean, int nan_at) {
  size_t esz = gz_dtype_size(dtype);
  void *in = cu_alloc(dtype, n), *ref = cu_alloc(dtype, n), *got = cu_alloc(dtype, n);
  void *din, *dout;
  gz_report_t r1, r2;
  gz_result_t a, b;
  char what[96];
  cu_fill(dtype, in, n, 1000 + (uint64_t)rank * 7 + n, 10.0);
  if (nan_at >= 0 && (size_t)nan_at < n && rank == size - 1)
    cu_set(dtype, in, (size_t)nan_at, NAN);
  din = to_side(in, n * esz);
  dout = to_side(in, n * esz);
  snprintf(what, sizeof what, "allreduce %s %s n %zu%s%s", cu_dtype_name(dtype),
           mean ? "mean" : cu_op_name(op), n, nan_at >= 0 ? " nan" : "",
           gpu ? " gpu" : " ops");
  a = mean ? gz_allreduce_mean(cpu, in, ref, n, dtype, 3.0, &r1)
           : gz_allreduce(cpu, in, ref, n, dtype, op, &r1);
  b = mean ? gz_allreduce_mean(dev, din, dout, n, dtype, 3.0, &r2)
           : gz_allreduce(dev, din, dout, n, dtype, op, &r2);
  from_side(got, dout, n * esz);
  GZ_CHECK(a == GZ_OK && b == GZ_OK, "%s: %s / %s", what, gz_strerror(a), gz_strerror(b));
  GZ_CHECK(memcmp(ref, got, n * esz) == 0, "%s: differs from the CPU redoub", what);
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, got, n * esz), "%s: same bytes everywhere",
           what);
  GZ_CHECK(r1.compressed == r2.compressed && r1.result_bound == r2.result_bound,
           "%s: report (compressed %d/%d, bound %g/%g, %s)", what, r1.compressed,
           r2.compressed, r1.result_bound, r2.result_bound, r2.reason);
  GZ_CHECK(!r2.compressed || strstr(r2.reason, gpu ? "redoub on cuda" : "redoub on cpu"),
           "%s: the device algorithm ran (%s)", what, r2.reason);
  if (n && nan_at < 0) {
    double *dref = malloc(n * sizeof *dref), *slop = malloc(n * sizeof *slop);
    cu_reference(MPI_COMM_WORLD, dtype, op, in, n, dref, slop);
    if (mean)
      for (size_t i = 0; i < n; i++)
        dref[i] /= 3.0, slop[i] /= 3.0;
    GZ_CHECK(cu_count_wrong(dtype, got, dref, slop, n, r2.result_bound, what) == 0,
             "%s: within the bound", what);
    free(dref);
    free(slop);
  }
  free_side(din);
  free_side(dout);
  free(in);
  free(ref);
  free(got);
}

static void test_scatter(gz_ctx_t cpu, gz_ctx_t dev, gz_dtype_t dtype, size_t n, int root,
                         int nan_at) {
  size_t esz = gz_dtype_size(dtype), total = n * (size_t)size;
  void *in = cu_alloc(dtype, total), *ref = cu_alloc(dtype, n), *got = cu_alloc(dtype, n);
  void *din, *dout;
  gz_report_t r1, r2;
  gz_result_t a, b;
  char what[96];
  cu_fill(dtype, in, total, 77 + n, 5.0);
  if (nan_at >= 0 && (size_t)nan_at < total)
    cu_set(dtype, in, (size_t)nan_at, NAN);
  din = to_side(in, total * esz);
  dout = to_side(ref, n * esz);
  snprintf(what, sizeof what, "scatter %s n %zu root %d%s%s", cu_dtype_name(dtype), n,
           root, nan_at >= 0 ? " nan" : "", gpu ? " gpu" : " ops");
  a = gz_scatter(cpu, rank == root ? in : NULL, ref, n, dtype, root, &r1);
  b = gz_scatter(dev, rank == root ? din : NULL, dout, n, dtype, root, &r2);
  from_side(got, dout, n * esz);
  GZ_CHECK(a == GZ_OK && b == GZ_OK, "%s: %s / %s", what, gz_strerror(a), gz_strerror(b));
  GZ_CHECK(memcmp(ref, got, n * esz) == 0, "%s: differs from the CPU binomial", what);
  GZ_CHECK(r1.compressed == r2.compressed, "%s: compressed %d vs %d (%s)", what,
           r1.compressed, r2.compressed, r2.reason);
  GZ_CHECK(!r2.compressed || strstr(r2.reason, "device-centric binomial"),
           "%s: the device algorithm ran (%s)", what, r2.reason);
  free_side(din);
  free_side(dout);
  free(in);
  free(ref);
  free(got);
}

int main(int argc, char **argv) {
  static const size_t counts[] = {0, 1, 5, 1000, 33333, 70001};
  static const gz_dtype_t types[] = {GZ_FLOAT32, GZ_FLOAT64};
  gz_ctx_t cpu_r, dev_r, cpu_b, dev_b;
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
  if (gpu)
    gz_test_require_device_mpi();
  cpu_r = make_ctx(0, "redoub", 1e-3);
  dev_r = make_ctx(1, "redoub", 1e-3);
  cpu_b = make_ctx(0, "binomial", 1e-3);
  dev_b = make_ctx(1, "binomial", 1e-3);
  if (cpu_r && dev_r && cpu_b && dev_b) {
    for (size_t t = 0; t < 2; t++) {
      for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
          test_allreduce(cpu_r, dev_r, types[t], (gz_op_t)op, counts[c], 0, -1);
        test_allreduce(cpu_r, dev_r, types[t], GZ_OP_SUM, counts[c], 1, -1);
        test_scatter(cpu_b, dev_b, types[t], counts[c], 0, -1);
        test_scatter(cpu_b, dev_b, types[t], counts[c], size - 1, -1);
        test_scatter(cpu_b, dev_b, types[t], counts[c], size / 2, -1); /* rotated */
      }
      test_allreduce(cpu_r, dev_r, types[t], GZ_OP_SUM, 1000, 0, 17);
      test_scatter(cpu_b, dev_b, types[t], 1000, 0, 999);
    }
  }
  gz_ctx_destroy(cpu_r);
  gz_ctx_destroy(dev_r);
  gz_ctx_destroy(cpu_b);
  gz_ctx_destroy(dev_b);
  return gz_test_end_mpi();
}
