/*
 * scatter.c - gz_scatter: checks, selection, plan and status agreement
 * around scatter_binomial.c and scatter_mpi.c.
 *
 * The root quantizes the P blocks once (eb = e; REL: e times the range of
 * the root's whole send buffer); each other rank dequantizes its block once
 * (reported bound eb); the root copies its own block exactly (reported
 * bound 0). recvbuf == GZ_IN_PLACE at the root (MPI_IN_PLACE semantics):
 * the root's block stays where it is in sendbuf. Device buffers (a context
 * with cfg.device_pool_bytes): scatter_binomial_device.c.
 */
#include "coll_internal.h"

static gz_result_t plain(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, int root, gz_agree_t *ag, int agreed,
                         gz_run_t *run, gz_report_t *report, const char *reason) {
  gz_result_t rc = GZ_OK;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_scatter_mpi(ctx, sendbuf, recvbuf, count, dtype, root);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ctx->rank == root)
    run->bytes_raw = run->bytes_sent = (uint64_t)(ctx->size - 1) * count * run->esz;
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, 0.0, reason);
fn_exit:
  return rc;
}

gz_result_t gz_scatter(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                       gz_dtype_t dtype, int root, gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  size_t esz = gz_dtype_size(dtype), total = 0;
  int P, is_root, agreed = 0;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  P = ctx->size;
  is_root = ctx->rank == root;
  { /* device buffers (contexts with a device pool only) */
    int any = 0, local_dev = 0;
    if ((rc = gz_dev_path(ctx, is_root ? sendbuf : NULL, recvbuf, &any, &local_dev)) !=
        GZ_OK)
      return rc;
    if (any)
      return gz_scatter_device(ctx, sendbuf, recvbuf, count, dtype, root, local_dev,
                               report);
  }
  if (!esz || root < 0 || root >= P || count > SIZE_MAX / 16 / (size_t)P ||
      (count && !recvbuf) || (count && is_root && !sendbuf) ||
      (recvbuf == GZ_IN_PLACE && !is_root))
    local = GZ_ERR_ARG;
  else
    total = count * (size_t)P;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)dtype;
  ag.sig[2] = (double)root;
  rc = gz_select(ctx, GZ_COLL_SCATTER, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  if (is_root)
    gz_local_range(dtype, sendbuf, total, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  /* the root quantizes all P blocks; every other rank holds its own codes */
  local =
      gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, is_root ? total : count, sizeof(int64_t)),
                                   gz_scatter_binomial_ws(ctx, count, root), 1));
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, is_root ? total : count, sizeof(int64_t));
    if (is_root)
      local =
          gz_run_quantize(&run, dtype, sendbuf, total, plan.eb, plan.code_limit, codes);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  rc = gz_scatter_binomial(ctx, codes, codes, count, root, &run);
  rc = gz_agree_final(ctx, rc);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!is_root)
    rc = gz_run_dequantize(&run, dtype, codes, count, plan.eb, recvbuf);
  else if (recvbuf != GZ_IN_PLACE)
    gz_copy(dtype, recvbuf, (const char *)sendbuf + (size_t)root * count * esz, count);
  if (rc != GZ_OK)
    goto fn_exit;
  gz_run_report(ctx, &run, report, ch.algo, 1, plan.eb,
                is_root ? 0.0 : plan.eb + gz_round_slop(dtype, ag.absmax + plan.eb),
                ch.reason);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, sendbuf, recvbuf, count, dtype, root, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
