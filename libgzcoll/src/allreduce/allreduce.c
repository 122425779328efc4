/*
 * allreduce.c - gz_allreduce and gz_allreduce_mean, described for the
 * collective driver (coll_driver.c): the checks, a SUM of P terms, the
 * device front-end.
 *
 * Reduction in the quantized-integer domain: each rank quantizes its
 * contribution once with step 2eb; the algorithms combine int64 codes
 * exactly; the total is dequantized once. The integer total does not depend
 * on the algorithm or the order of combination, so every rank gets the same
 * bytes whichever compressed algorithm ran.
 *   strict (default): SUM eb = e / P, MAX/MIN eb = e; the mean helper
 *     bounds the mean by e, i.e. eb = e * divisor / P.
 *   per-message: eb = e; the reported bound is what that implies (SUM P e).
 *   REL: e is first multiplied by the global value range (one more small
 *     allreduce).
 *   Codes are limited to 2^52 / P per rank (SUM) so that the total fits and
 *   its reconstruction is exact in double.
 * Reported bound: SUM P eb, MAX/MIN eb, plus the rounding of the final
 * conversion (half an ulp of float32 for float32 results, a few ulps of
 * double otherwise; see coll_common.c).
 * Escape: a value that cannot be quantized (NaN, Inf, out of the code range)
 * on any rank sends the whole call through MPI on the original values
 * (exact; compressed = 0 in the report).
 * Device buffers (a context with cfg.device_pool_bytes): the call runs the
 * device row of allreduce_recursive_doubling.c, same codes, same result
 * bytes.
 * Algorithms: allreduce_mpi.c, allreduce_recursive_doubling.c,
 * allreduce_ring.c (rows of registry.def); the skeleton: coll_driver.c.
 */
#include "coll_internal.h"

#include <math.h>

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  (void)ctx;
  a->in = a->sendbuf == GZ_IN_PLACE ? a->recvbuf : a->sendbuf;
  a->n_in = a->n_codes = a->n_out = a->count; /* every rank: the whole buffer */
  a->out = a->recvbuf;
  if (!gz_dtype_size(a->dtype) || !gz_op_valid(a->op) ||
      (a->count && (!a->recvbuf || !a->in)) || !(a->divisor > 0) ||
      !isfinite(a->divisor) || (a->ex && a->count > (size_t)INT32_MAX * GZ_DEV_PIECE))
    return GZ_ERR_ARG;
  return GZ_OK;
}

static const gz_coll_desc_t allreduce = {
    .coll = GZ_COLL_ALLREDUCE, .reduces = 1, .check = check, .device = 1};

gz_result_t gz_allreduce(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_op_t op, gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, count, dtype);
  a.op = op;
  return gz_coll_run(ctx, &allreduce, &a, report);
}

gz_result_t gz_allreduce_mean(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                              size_t count, gz_dtype_t dtype, double divisor,
                              gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, count, dtype);
  a.op = GZ_OP_SUM;
  a.divisor = divisor;
  return gz_coll_run(ctx, &allreduce, &a, report);
}
