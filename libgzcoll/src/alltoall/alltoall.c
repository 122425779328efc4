/*
 * alltoall.c - gz_alltoall: checks, selection, plan and status agreement
 * around alltoall_pairwise.c and alltoall_mpi.c.
 *
 * Every rank quantizes its P outgoing blocks once (eb = e; REL: e times the
 * range over all ranks' data); block s of recvbuf is rank s's block for
 * this rank, dequantized once (within eb); the own block is copied exactly.
 * In place (GZ_IN_PLACE): the blocks are read from recvbuf, which is safe
 * because everything is quantized before anything lands.
 */
#include "coll_internal.h"

static gz_result_t plain(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_agree_t *ag, int agreed, gz_run_t *run,
                         gz_report_t *report, const char *reason) {
  gz_result_t rc = GZ_OK;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_alltoall_mpi(ctx, sendbuf, recvbuf, count, dtype);
  if (rc != GZ_OK)
    goto fn_exit;
  run->bytes_raw = run->bytes_sent = (uint64_t)(ctx->size - 1) * count * run->esz;
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, 0.0, reason);
fn_exit:
  return rc;
}

gz_result_t gz_alltoall(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                        gz_dtype_t dtype, gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_result_t rc = GZ_OK, local = GZ_OK;
  const void *in = sendbuf == GZ_IN_PLACE ? recvbuf : sendbuf;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  size_t esz = gz_dtype_size(dtype), total = 0;
  int agreed = 0;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, dtype);
  if (!esz || count > SIZE_MAX / 16 / (size_t)ctx->size || (count && (!recvbuf || !in)))
    local = GZ_ERR_ARG;
  else
    total = count * (size_t)ctx->size;
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)count;
  ag.sig[1] = (double)dtype;
  rc = gz_select(ctx, GZ_COLL_ALLTOALL, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI) {
    why = ch.reason;
    goto uncompressed;
  }

  gz_local_range(dtype, in, total, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, 1, 1.0, &plan, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  local = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, total, sizeof(int64_t)),
                                       gz_alltoall_pairwise_ws(ctx, count), 1));
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

  if (sendbuf != GZ_IN_PLACE) /* the own block travels nowhere: exact copy */
    gz_copy(dtype, (char *)recvbuf + (size_t)ctx->rank * count * esz,
            (const char *)sendbuf + (size_t)ctx->rank * count * esz, count);
  rc = gz_alltoall_pairwise(ctx, codes, recvbuf, count, dtype, plan.eb, &run);
  /* the pairwise exchange dequantized every block already */
  rc = gz_finish_codes(ctx, rc, &run, dtype, NULL, 0, NULL, &plan, &ag, &ch, report);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, sendbuf, recvbuf, count, dtype, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
