/*
 * reduce_scatter.c - gz_reduce_scatter_block: checks, selection, plan and
 * status agreement around reduce_scatter_ring.c and reduce_scatter_mpi.c.
 *
 * Every rank quantizes its P blocks of recvcount values once (the same
 * bounds as allreduce: strict SUM eb = e / P, MAX/MIN eb = e), the ring
 * combines codes exactly, and rank r dequantizes block r once. The result
 * of block r is bit-identical to the block r of gz_allreduce on the same
 * input. In place (GZ_IN_PLACE): the input is recvbuf (P * recvcount
 * values), the result its first recvcount values.
 */
#include "coll_internal.h"

#include <math.h>

static gz_result_t plain(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                         size_t recvcount, gz_dtype_t dtype, gz_op_t op, gz_agree_t *ag,
                         int agreed, gz_run_t *run, gz_report_t *report,
                         const char *reason) {
  gz_result_t rc = GZ_OK;
  int P = ctx->size;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_reduce_scatter_mpi(ctx, sendbuf, recvbuf, recvcount, dtype, op);
  if (rc != GZ_OK)
    goto fn_exit;
  run->bytes_raw = run->bytes_sent = (uint64_t)(P - 1) * recvcount * run->esz;
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0,
                op == GZ_OP_SUM ? gz_mpi_sum_bound(dtype, P, ag->absmax) : 0.0, reason);
fn_exit:
  return rc;
}

gz_result_t gz_reduce_scatter_block(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, gz_dtype_t dtype, gz_op_t op,
                                    gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const void *in;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL, *mine;
  int P, agreed = 0;
  size_t total = 0;
  double rmax, rb;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  P = ctx->size;
  in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  if (recvcount > SIZE_MAX / 8 / (size_t)P || !gz_dtype_size(dtype) ||
      (op != GZ_OP_SUM && op != GZ_OP_MAX && op != GZ_OP_MIN) ||
      (recvcount && (!recvbuf || !in)))
    local = GZ_ERR_ARG;
  else
    total = recvcount * (size_t)P;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)recvcount;
  ag.sig[1] = (double)((int)dtype * 4 + (int)op);
  rc = gz_select(ctx, GZ_COLL_REDUCE_SCATTER, recvcount, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local == GZ_OK)
    gz_local_range(dtype, in, total, &ag.lo, &ag.hi, &ag.absmax);
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  rc = gz_plan_agreed(ctx, &ag, op == GZ_OP_SUM ? P : 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  local = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, total, sizeof(int64_t)),
                                       gz_reduce_scatter_ring_ws(ctx, total), 1));
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, total, sizeof(int64_t));
    local = gz_run_quantize(&run, dtype, in, total, plan.eb, plan.code_limit, codes);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  rc = gz_reduce_scatter_ring(ctx, codes, total, op, &run);
  rc = gz_agree_final(ctx, rc);
  if (rc != GZ_OK)
    goto fn_exit;
  mine = codes + (size_t)ctx->rank * recvcount;
  rc = gz_run_dequantize(&run, dtype, mine, recvcount, plan.eb, recvbuf);
  if (rc != GZ_OK)
    goto fn_exit;
  rmax = 2.0 * plan.eb * (double)gz_codes_absmax(mine, recvcount);
  rb = op == GZ_OP_SUM ? gz_sum_bound(dtype, P, plan.eb, ag.absmax, rmax, 1.0)
                       : plan.eb + gz_round_slop(dtype, rmax);
  gz_run_report(ctx, &run, report, ch.algo, 1, plan.eb, rb, ch.reason);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, sendbuf, recvbuf, recvcount, dtype, op, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
