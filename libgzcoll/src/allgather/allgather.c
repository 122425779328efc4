/*
 * allgather.c - gz_allgather: checks, selection, plan and status agreement
 * around allgather_ring.c and allgather_mpi.c.
 *
 * Each rank quantizes its own block once (eb = e; REL: e times the range
 * over all blocks), the ring forwards compressed chunks, and every rank
 * dequantizes all P blocks, its own included, so every rank holds the same
 * bytes. Reported bound: eb. In place (GZ_IN_PLACE): the own block is read
 * from recvbuf + rank * count.
 */
#include "coll_internal.h"

static gz_result_t plain(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_agree_t *ag, int agreed, gz_run_t *run,
                         gz_report_t *report, const char *reason) {
  gz_result_t rc = GZ_OK;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_allgather_mpi(ctx, sendbuf, recvbuf, count, dtype);
  if (rc != GZ_OK)
    goto fn_exit;
  run->bytes_raw = run->bytes_sent = (uint64_t)(ctx->size - 1) * count * run->esz;
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, 0.0, reason);
fn_exit:
  return rc;
}

gz_result_t gz_allgather(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const void *in = sendbuf;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  size_t total = 0, esz = gz_dtype_size(dtype);
  int agreed = 0;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  if (!esz || count > SIZE_MAX / 8 / (size_t)ctx->size || (count && !recvbuf)) {
    local = GZ_ERR_ARG;
  } else {
    total = count * (size_t)ctx->size;
    if (sendbuf == GZ_IN_PLACE)
      in = (const char *)recvbuf + (size_t)ctx->rank * count * esz;
    if (count && !in)
      local = GZ_ERR_ARG;
  }
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)dtype;
  rc = gz_select(ctx, GZ_COLL_ALLGATHER, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  gz_local_range(dtype, in, count, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  local = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, total, sizeof(int64_t)),
                                       gz_allgather_ring_ws(ctx, total), 1));
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, total, sizeof(int64_t));
    local = gz_run_quantize(&run, dtype, in, count, plan.eb, plan.code_limit,
                            codes + (size_t)ctx->rank * count);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  rc = gz_allgather_ring(ctx, codes, total, &run);
  rc = gz_finish_codes(ctx, rc, &run, dtype, codes, total, recvbuf, &plan, &ag, &ch,
                       report);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, sendbuf, recvbuf, count, dtype, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
