/* coll_util.c - see coll_util.h. */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cu_allreduce_algos[4] = {"auto", "mpi", "redoub", "ring"};

void *cu_alloc(gz_dtype_t dtype, size_t n) { return calloc(n + 1, gz_dtype_size(dtype)); }

double cu_get(gz_dtype_t dtype, const void *buf, size_t i) {
  return dtype == GZ_FLOAT32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

void cu_set(gz_dtype_t dtype, void *buf, size_t i, double v) {
  if (dtype == GZ_FLOAT32)
    ((float *)buf)[i] = (float)v;
  else
    ((double *)buf)[i] = v;
}

void cu_fill(gz_dtype_t dtype, void *buf, size_t n, uint64_t seed, double amp) {
  gz_rng_t rng;
  double f1, f2, ph;
  gz_rng_seed(&rng, seed);
  f1 = 0.001 + 0.01 * gz_rng_uniform(&rng);
  f2 = 0.05 + 0.1 * gz_rng_uniform(&rng);
  ph = 6.28 * gz_rng_uniform(&rng);
  for (size_t i = 0; i < n; i++) {
    double v = amp * (sin(f1 * (double)i + ph) + 0.3 * cos(f2 * (double)i)) +
               0.01 * amp * (gz_rng_uniform(&rng) - 0.5);
    cu_set(dtype, buf, i, v);
  }
}

const char *cu_dtype_name(gz_dtype_t dtype) {
  return dtype == GZ_FLOAT32 ? "f32" : "f64";
}

const char *cu_op_name(gz_op_t op) {
  return op == GZ_OP_SUM ? "sum" : op == GZ_OP_MAX ? "max" : "min";
}

int cu_same_on_all(MPI_Comm comm, const void *p, size_t bytes) {
  const unsigned char *c = p;
  uint64_t h = 1469598103934665603ull, lo, hi;
  for (size_t i = 0; i < bytes; i++)
    h = (h ^ c[i]) * 1099511628211ull;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  return lo == hi;
}

gz_ctx_t cu_ctx(MPI_Comm comm, const char *algo, double e, gz_eb_mode_t mode,
                gz_bound_policy_t policy) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_result_t rc;
  snprintf(cfg.algo, sizeof cfg.algo, "%s", algo);
  cfg.error_bound = e;
  cfg.eb_mode = mode;
  cfg.bound_policy = policy;
  rc = gz_ctx_create(comm, &cfg, &ctx);
  GZ_CHECK(rc == GZ_OK, "gz_ctx_create(%s): %s", algo, gz_strerror(rc));
  return ctx;
}

void cu_reference(MPI_Comm comm, gz_dtype_t dtype, gz_op_t op, const void *in, size_t n,
                  double *ref, double *slop) {
  int P;
  MPI_Comm_size(comm, &P);
  for (size_t i = 0; i < n; i++) {
    ref[i] = cu_get(dtype, in, i);
    if (slop)
      slop[i] = fabs(ref[i]);
  }
  MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_DOUBLE,
                op == GZ_OP_SUM   ? MPI_SUM
                : op == GZ_OP_MAX ? MPI_MAX
                                  : MPI_MIN,
                comm);
  if (slop) {
    MPI_Allreduce(MPI_IN_PLACE, slop, (int)n, MPI_DOUBLE, MPI_SUM, comm);
    for (size_t i = 0; i < n; i++)
      slop[i] = op == GZ_OP_SUM ? ldexp(P * slop[i], -52) : 0.0;
  }
}

long cu_count_wrong(gz_dtype_t dtype, const void *got, const double *ref,
                    const double *slop, size_t n, double bound, const char *what) {
  long wrong = 0;
  for (size_t i = 0; i < n; i++) {
    double g = cu_get(dtype, got, i), err = fabs(g - ref[i]);
    double allow = bound + (slop ? slop[i] : 0.0);
    if (!(err <= allow)) {
      if (wrong < 3)
        fprintf(stderr, "  %s: element %zu got %.17g want %.17g err %.3g > %.3g\n", what,
                i, g, ref[i], err, allow);
      wrong++;
    }
  }
  return wrong;
}

double cu_round_allow(gz_dtype_t dtype, double rmax) {
  return dtype == GZ_FLOAT32 ? ldexp(rmax, -23) : ldexp(rmax, -49);
}

double cu_absmax(const double *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > m)
      m = fabs(x[i]);
  return m;
}

long cu_sum(MPI_Comm comm, long v) {
  long s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, comm);
  return s;
}
