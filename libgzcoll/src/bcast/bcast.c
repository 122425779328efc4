/*
 * bcast.c - gz_bcast: checks, selection, plan and status agreement around
 * bcast_binomial.c and bcast_mpi.c.
 *
 * The root quantizes once (eb = e; REL: e times the range of the root's
 * data), the tree moves encoded codes, every rank dequantizes once. The root
 * too replaces its buffer by the dequantized values, so that every rank
 * holds the same bytes (each element within eb of the root's original).
 * Values that cannot be quantized (NaN, Inf, out of range) at the root send
 * the whole call through MPI_Bcast, exact.
 */
#include "coll_internal.h"

static gz_result_t plain(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype,
                         int root, gz_agree_t *ag, int agreed, gz_run_t *run,
                         gz_report_t *report, const char *reason) {
  gz_result_t rc = GZ_OK;
  int P = ctx->size, rr = (ctx->rank - root + P) % P, children = 0;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_bcast_mpi(ctx, buf, count, dtype, root);
  if (rc != GZ_OK)
    goto fn_exit;
  for (int m = 1; m < P; m <<= 1) /* children in a binomial tree (model) */
    if (!(rr & (2 * m - 1)) && rr + m < P)
      children++;
  run->bytes_raw = run->bytes_sent = (uint64_t)children * count * run->esz;
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, 0.0, reason);
fn_exit:
  return rc;
}

gz_result_t gz_bcast(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype, int root,
                     gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  int is_root, agreed = 0;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  is_root = ctx->rank == root;
  if (!gz_dtype_size(dtype) || root < 0 || root >= ctx->size || (count && !buf) ||
      count > SIZE_MAX / 16)
    local = GZ_ERR_ARG;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)dtype;
  ag.sig[2] = (double)root;
  rc = gz_select(ctx, GZ_COLL_BCAST, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  if (is_root)
    gz_local_range(dtype, buf, count, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  local = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, count, sizeof(int64_t)),
                                       gz_bcast_binomial_ws(ctx, count), 1));
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, count, sizeof(int64_t));
    if (is_root)
      local = gz_run_quantize(&run, dtype, buf, count, plan.eb, plan.code_limit, codes);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  rc = gz_bcast_binomial(ctx, codes, count, root, &run);
  rc = gz_finish_codes(ctx, rc, &run, dtype, codes, count, buf, &plan, &ag, &ch, report);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, buf, count, dtype, root, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
