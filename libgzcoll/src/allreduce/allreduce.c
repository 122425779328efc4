/*
 * allreduce.c - gz_allreduce and gz_allreduce_mean: argument checks,
 * algorithm selection, the quantization plan and the status agreement
 * around the algorithms (allreduce_recursive_doubling.c, allreduce_ring.c,
 * allreduce_mpi.c).
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
 * Device buffers (a context with cfg.device_pool_bytes): the call goes to
 * allreduce_recursive_doubling_device.c, same codes, same result bytes.
 */
#include "coll_internal.h"

#include <math.h>

static void scale_values(gz_dtype_t dtype, void *buf, size_t n, double divisor) {
  if (dtype == GZ_FLOAT32) {
    float *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = (float)((double)x[i] / divisor);
  } else {
    double *x = buf;
    for (size_t i = 0; i < n; i++)
      x[i] = x[i] / divisor;
  }
}

/* The MPI path; agreed says whether the status agreement already ran. */
static gz_result_t plain(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_op_t op, double divisor, gz_agree_t *ag,
                         int agreed, gz_run_t *run, gz_report_t *report,
                         const char *reason) {
  gz_result_t rc = GZ_OK;
  double rb = 0, u = dtype == GZ_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  int P = ctx->size;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_allreduce_mpi(ctx, sendbuf, recvbuf, count, dtype, op);
  if (rc != GZ_OK)
    goto fn_exit;
  if (divisor != 1.0)
    scale_values(dtype, recvbuf, count, divisor);
  if (op == GZ_OP_SUM)
    rb = gz_mpi_sum_bound(dtype, P, ag->absmax) / divisor +
         (divisor != 1.0 ? u * P * ag->absmax / divisor : 0.0);
  run->bytes_raw = run->bytes_sent =
      (uint64_t)(2.0 * (P - 1) / P * (double)count * (double)run->esz);
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, rb, reason);
fn_exit:
  return rc;
}

static gz_result_t allreduce(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                             size_t count, gz_dtype_t dtype, gz_op_t op, double divisor,
                             gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const void *in;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  int P, agreed = 0;
  size_t ws;
  double rmax, rb;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  P = ctx->size;
  in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  { /* device buffers (contexts with a device pool only) */
    int any = 0, local_dev = 0;
    if ((rc = gz_dev_path(ctx, in, recvbuf, &any, &local_dev)) != GZ_OK)
      return rc;
    if (any)
      return gz_allreduce_device(ctx, sendbuf, recvbuf, count, dtype, op, divisor,
                                 local_dev, report);
  }
  if (!gz_dtype_size(dtype) || (op != GZ_OP_SUM && op != GZ_OP_MAX && op != GZ_OP_MIN) ||
      (count && (!recvbuf || !in)) || !(divisor > 0) || !isfinite(divisor))
    local = GZ_ERR_ARG;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)((int)dtype * 4 + (int)op);
  ag.sig[3] = divisor;
  rc = gz_select(ctx, GZ_COLL_ALLREDUCE, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local == GZ_OK && op == GZ_OP_SUM)
    gz_local_range(dtype, in, count, &ag.lo, &ag.hi, &ag.absmax);
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  /* REL: the bound depends on the global range, agreed first */
  if (ctx->cfg.eb_mode == GZ_EB_REL && op != GZ_OP_SUM)
    gz_local_range(dtype, in, count, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, op == GZ_OP_SUM ? P : 1, op == GZ_OP_SUM ? divisor : 1.0,
                      &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  /* reserve everything, quantize once, agree */
  ws = gz_ws_add(0, count, sizeof(int64_t));
  ws =
      gz_ws_add(ws,
                ch.algo == GZ_ALGO_REDOUB ? gz_allreduce_recursive_doubling_ws(ctx, count)
                                          : gz_allreduce_ring_ws(ctx, count),
                1);
  local = gz_ws_reserve(ctx, ws);
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, count, sizeof(int64_t));
    local = gz_run_quantize(&run, dtype, in, count, plan.eb, plan.code_limit, codes);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  /* combine codes exactly, agree on the outcome, dequantize once */
  if (ch.algo == GZ_ALGO_REDOUB)
    rc = gz_allreduce_recursive_doubling(ctx, codes, count, op, &run);
  else
    rc = gz_allreduce_ring(ctx, codes, count, op, &run);
  rc = gz_agree_final(ctx, rc);
  if (rc != GZ_OK)
    goto fn_exit;
  rc = gz_run_dequantize(&run, dtype, codes, count, plan.eb / divisor, recvbuf);
  if (rc != GZ_OK)
    goto fn_exit;
  rmax = 2.0 * plan.eb * (double)gz_codes_absmax(codes, count) / divisor;
  rb = op == GZ_OP_SUM ? gz_sum_bound(dtype, P, plan.eb, ag.absmax, rmax, divisor)
                       : plan.eb + gz_round_slop(dtype, rmax);
  gz_run_report(ctx, &run, report, ch.algo, 1, plan.eb, rb, ch.reason);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, sendbuf, recvbuf, count, dtype, op, divisor, &ag, agreed, &run, report,
             why);
fn_exit:
  return rc;
}

gz_result_t gz_allreduce(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_op_t op, gz_report_t *report) {
  return allreduce(ctx, sendbuf, recvbuf, count, dtype, op, 1.0, report);
}

gz_result_t gz_allreduce_mean(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                              size_t count, gz_dtype_t dtype, double divisor,
                              gz_report_t *report) {
  return allreduce(ctx, sendbuf, recvbuf, count, dtype, GZ_OP_SUM, divisor, report);
}
