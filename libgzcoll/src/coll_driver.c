/*
 * coll_driver.c - the one collective driver: every collective call runs
 * this skeleton; the collective itself is a descriptor (gz_coll_desc_t: its
 * checks, whether it reduces, whose values are quantized, where its own
 * block goes), its algorithms are rows of the registry (registry.def).
 *
 * Skeleton (coll_internal.h lists the steps):
 *   device?  a collective with device rows: one agreement says whether the
 *            call is on device buffers; it then runs the device rows, and
 *            range, quantize, dequantize on this rank's backend (a->ex);
 *   check    local, remembered: an invalid argument fails on every rank at
 *            the first agreement, never before it (no rank left waiting);
 *   select   gz_select, the same on every rank (a forced algorithm that
 *            does not apply: GZ_ERR_ARG, the same on every rank);
 *   reserve  the codes, the backend's scratch and the algorithm's
 *            workspace, at once (a failure is agreed at the next agreement);
 *   range    the finite range of the values this rank quantizes (a->in):
 *            a SUM needs it for its bound on every path, REL for the plan,
 *            data movement for the rounding of its bound; an ABS call on
 *            the host reads it in the quantization's pass (REL and device
 *            calls read it first);
 *   plan     eb and the code limit (REL: after agreeing on the range);
 *            SUM plans for P terms, everything else for one;
 *   quantize (with a host row's first message encoded in the same pass),
 *            agree (escape -> the MPI path on the original values), run
 *            the algorithm on codes, agree on its outcome;
 *   result   dequantize a->n_out codes once into a->out, the largest |code|
 *            in the same pass (a mean divides the step by the divisor),
 *            unless the algorithm's last decodes wrote the values
 *            (j->dequantized), the own block copied exactly;
 *   report   bound: SUM  P eb + roundings (gz_sum_bound),
 *                   MAX/MIN and data movement  eb + the final rounding,
 *                   a rank holding its own values exactly  0;
 *            the MPI path: a SUM's floating-point error, else 0.
 * The arithmetic of the bounds: coll_common.c and docs/design.md.
 */
#include "coll_internal.h"

#include "codec/codec.h"

#include <math.h>
#include <stdio.h>

/* ---- the steps that run on the call's backend --------------------------- */
/* The host path keeps the host codec (gz_run_*: blocked, tie-aware); the
 * device path (a->ex) the backend's operations, timed the same way. */

static gz_result_t range(const gz_args_t *a, gz_agree_t *ag) {
  if (!a->ex) {
    gz_local_range(a->dtype, a->in, a->n_in, &ag->lo, &ag->hi, &ag->absmax);
    return GZ_OK;
  }
  return a->ex->be->range(a->ex, a->dtype, a->in, a->n_in, &ag->lo, &ag->hi, &ag->absmax);
}

/* With range (host only; may be NULL): the finite range in the same pass;
 * *narrow in: try int32 codes for sums of terms, out: whether they are.
 * A job with msg0 (device rows with first_msg) gets the codes' encoding in
 * the same pass (quantize_encode_async), a host job with first its first
 * message (msg0 too when that is one piece). */
static gz_result_t quantize(const gz_args_t *a, gz_run_t *run, const gz_plan_t *plan,
                            int64_t *codes, gz_agree_t *range, int *narrow, int terms,
                            gz_job_t *job) {
  gz_exec_t *ex = a->ex;
  gz_result_t rc;
  double t;
  if (!ex) {
    rc = gz_run_quantize_range(run, a->dtype, a->in, a->n_in, plan->eb, plan->code_limit,
                               codes, range, narrow, terms, job->first);
    if (job->first && job->first->piece >= job->first->len) /* one piece: msg0 */
      job->msg0_size = job->first->sizes[0];
    return rc;
  }
  *narrow = 0;
  t = MPI_Wtime();
  if (job->msg0)
    rc = ex->be->quantize_encode_async(ex, a->dtype, a->in, a->n_in, plan->eb,
                                       plan->code_limit, codes, job->msg0,
                                       ex->be->encode_bound(a->n_in));
  else
    rc =
        ex->be->quantize(ex, a->dtype, a->in, a->n_in, plan->eb, plan->code_limit, codes);
  if (rc == GZ_OK)
    rc = ex->be->sync(ex); /* a value not quantizable: GZ_ERR_RANGE */
  if (job->msg0)
    job->msg0_size = rc == GZ_OK ? (size_t)*ex->size_out : 0;
  run->t_codec += MPI_Wtime() - t;
  run->passes += a->n_in;
  return rc;
}

/* Dequantize the result codes; *amax: their largest |code| (reductions). */
static gz_result_t dequantize(const gz_coll_desc_t *d, const gz_args_t *a, gz_run_t *run,
                              const void *codes, int narrow, double eb, int64_t *amax) {
  gz_exec_t *ex = a->ex;
  gz_result_t rc;
  double t;
  *amax = 0;
  if (!ex) {
    return a->n_out ? gz_run_dequantize_absmax(run, a->dtype, codes, narrow, a->n_out, eb,
                                               a->out, d->reduces ? amax : NULL)
                    : GZ_OK;
  }
  if (!a->n_out)
    return GZ_OK;
  t = MPI_Wtime();
  rc = ex->be->dequantize(ex, a->dtype, codes, a->n_out, eb, a->out);
  if (rc == GZ_OK) /* both wait for the dequantize */
    rc = d->reduces ? ex->be->absmax(ex, codes, a->n_out, amax) : ex->be->sync(ex);
  run->t_codec += MPI_Wtime() - t;
  run->passes += a->n_out;
  return rc;
}

/* ---- the skeleton -------------------------------------------------------- */

/* The MPI path (agreed: the status agreement already ran). */
static gz_result_t plain(gz_ctx_t ctx, const gz_coll_desc_t *d, const gz_args_t *a,
                         gz_agree_t *ag, int agreed, gz_run_t *run, gz_report_t *report,
                         const char *why) {
  const gz_algorithm_t *mpi = a->ex ? gz_algorithm_device(d->coll, GZ_ALGO_MPI_NAME)
                                    : gz_algorithm(d->coll, GZ_ALGO_MPI_NAME);
  gz_job_t job = {.a = a, .run = run, .chosen = mpi};
  gz_result_t rc = GZ_OK;
  double rb = 0, u = a->dtype == GZ_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  int P = ctx->size;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = mpi->run(ctx, &job);
  if (rc != GZ_OK)
    goto fn_exit;
  if (d->reduces && a->op == GZ_OP_SUM && !ctx->cfg.mpi_sum_bound)
    rb = HUGE_VAL; /* not asked for: the input was not read for it */
  else if (d->reduces && a->op == GZ_OP_SUM)
    rb = gz_mpi_sum_bound(a->dtype, P, ag->absmax) / a->divisor +
         (a->divisor != 1.0 ? u * P * ag->absmax / a->divisor : 0.0);
  gz_run_report(ctx, run, report, mpi, 0, 0.0, rb, why);
fn_exit:
  return rc;
}

/* The bound of a compressed call; amax: largest |result code| (reductions). */
static double result_bound(gz_ctx_t ctx, const gz_coll_desc_t *d, const gz_args_t *a,
                           int64_t amax, const gz_plan_t *plan, const gz_agree_t *ag) {
  double rmax;
  if (!d->reduces)
    return a->exact ? 0.0 : plan->eb + gz_round_slop(a->dtype, ag->absmax + plan->eb);
  rmax = 2.0 * plan->eb * (double)amax / a->divisor;
  return a->op == GZ_OP_SUM
             ? gz_sum_bound(a->dtype, ctx->size, plan->eb, ag->absmax, rmax, a->divisor)
             : plan->eb + gz_round_slop(a->dtype, rmax);
}

/* GZ_EB_PWREL data movement: the values travel cast to a->cast's format
 * (codec/cast.c), nothing is quantized; the status agreement carries the
 * largest finite |x| for the report's absolute bound (the cast keeps
 * |x' - x| <= 2^-p |x|, non-finite values exact). */
static gz_result_t cast_path(gz_ctx_t ctx, const gz_coll_desc_t *d, gz_args_t *a,
                             const gz_algorithm_t *alg, gz_agree_t *ag, gz_run_t *run,
                             gz_report_t *report) {
  gz_job_t job = {.a = a, .run = run, .chosen = alg};
  double unit = gz_cast_unit((gz_cast_t)a->cast);
  char why[96];
  gz_result_t rc;
  if (ag->err == GZ_OK)
    ag->err = gz_dev_reserve(ctx, 0, alg->ws(ctx, a));
  if (ag->err == GZ_OK && a->quantizes)
    range(a, ag);
  rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = gz_agree_final(ctx, alg->run(ctx, &job), d->rooted);
  if (rc == GZ_OK && d->own)
    rc = d->own(ctx, a);
  if (rc != GZ_OK)
    return rc;
  snprintf(why, sizeof why, "pointwise relative bound: sent as %s, |error| <= %g |x|",
           gz_cast_name((gz_cast_t)a->cast), unit);
  gz_run_report(ctx, run, report, alg, 1, unit * ag->absmax, unit * ag->absmax, why);
  return GZ_OK;
}

/* Device buffers (contexts with a device pool): one agreement decides, and
 * the call then runs the device rows on this rank's backend. */
static gz_result_t device_path(gz_ctx_t ctx, gz_args_t *a) {
  const void *mine = !a->quantizes               ? NULL
                     : a->sendbuf == GZ_IN_PLACE ? a->recvbuf
                                                 : a->sendbuf;
  int any = 0;
  gz_result_t rc = gz_dev_path(ctx, mine, a->recvbuf, &any, &a->local_dev);
  if (rc == GZ_OK && any) {
    gz_exec_make(ctx, a->local_dev > 0 && ctx->dev_ready, 0, &a->exec);
    a->ex = &a->exec;
  }
  return rc;
}

gz_result_t gz_coll_run(gz_ctx_t ctx, const gz_coll_desc_t *d, gz_args_t *a,
                        gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_first_t first = {.piece = 1};
  gz_job_t job = {.a = a};
  const gz_algorithm_t *alg;
  gz_result_t rc = GZ_OK, local;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL, amax = 0;
  int agreed = 0, fused, sum, on_dev, narrow = 0, terms;
  size_t scratch;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, a->dtype);
  a->quantizes = !d->rooted || ctx->rank == a->root;
  if (d->device && (rc = device_path(ctx, a)) != GZ_OK)
    return rc;
  local = d->check(ctx, a);
  if (local == GZ_OK && a->ex && a->local_dev < 0)
    local = GZ_ERR_ARG; /* one buffer on the device, the other on the host */
  else if (local == GZ_OK && a->ex && a->local_dev > 0 && !ctx->dev_ready)
    local = GZ_ERR_UNSUPPORTED;
  gz_agree_init(&ag);
  ag.quiet = d->rooted; /* receivers wait for the root's compress and back */
  ag.err = local;
  ag.sig[0] = (double)a->count;
  ag.sig[1] = (double)((int)a->dtype * 4 + (int)a->op);
  ag.sig[2] = (double)a->root;
  ag.sig[3] = a->divisor;
  rc = gz_select(ctx, d->coll, a->count, a->dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  sum = d->reduces && a->op == GZ_OP_SUM;
  /* the range: an ABS call on the host reads it while quantizing (one pass
   * over the input); REL needs it for the plan, device calls read it first */
  fused = !a->ex && ctx->cfg.eb_mode != GZ_EB_REL;
  alg = a->ex ? gz_algorithm_device(d->coll, ch.algo->name) : ch.algo;
  on_dev = a->ex && a->ex->be->on_device;
  scratch = a->ex ? a->ex->be->tmp_bytes(a->n_codes) : 0;
  if (local != GZ_OK || gz_row_is_mpi(ch.algo) || !alg || !alg->ws) {
    if (local == GZ_OK && sum && !a->ex && ctx->cfg.mpi_sum_bound) /* its bound */
      range(a, &ag);
    why = ch.reason;
    goto uncompressed;
  }
  if (ctx->cfg.eb_mode == GZ_EB_PWREL) { /* cast, or exact */
    a->cast = d->casts && !a->ex ? (int)gz_cast_pick(a->dtype, ctx->cfg.error_bound) : 0;
    if (!a->cast) {
      why = GZ_WHY_PWREL;
      goto uncompressed;
    }
    return cast_path(ctx, d, a, alg, &ag, &run, report);
  }

  /* reserve everything (a device call: with its backend's scratch) */
  local = gz_dev_reserve(
      ctx, on_dev,
      gz_ws_add(gz_ws_add(gz_ws_add(0, a->n_codes, sizeof(int64_t)), scratch, 1),
                alg->ws(ctx, a), 1));
  if (local == GZ_OK) {
    codes = gz_dev_take(ctx, on_dev, a->n_codes, sizeof(int64_t));
    if (a->ex) {
      a->ex->tmp_bytes = scratch;
      a->ex->tmp = gz_dev_take(ctx, on_dev, scratch, 1);
    }
    if (a->ex && alg->first_msg && a->quantizes) /* taken from alg->ws's share */
      job.msg0 = gz_dev_take(ctx, on_dev, a->ex->be->encode_bound(a->n_in), 1);
    if (!a->ex && alg->first && a->quantizes) {
      size_t pieces;
      alg->first(ctx, a, &first);
      pieces = first.len ? (first.len + first.piece - 1) / first.piece : 0;
      first.msg = gz_ws_take(ctx, pieces, first.stride); /* alg->ws's share */
      first.sizes = gz_ws_take(ctx, pieces, sizeof(size_t));
      if (pieces && (!first.msg || !first.sizes))
        local = GZ_ERR_NOMEM; /* alg->ws too small: a bug */
      job.first = first.len ? &first : NULL;
      job.msg0 = pieces == 1 ? first.msg : NULL;
    }
  }
  /* the plan: REL agrees on the global range first */
  if (local == GZ_OK && !fused && a->quantizes &&
      (sum || !d->reduces || ctx->cfg.eb_mode == GZ_EB_REL))
    local = range(a, &ag);
  if (local != GZ_OK) {
    ag.err = local; /* every rank returns at the next agreement */
    why = "setup failed";
    goto uncompressed;
  }
  rc = gz_plan_agreed(ctx, &ag, sum ? ctx->size : 1, sum ? a->divisor : 1.0, &plan,
                      &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    if (fused && sum && ctx->cfg.mpi_sum_bound) /* the MPI path's bound */
      range(a, &ag);
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  /* quantize once (a host reduction into int32 codes while its range fits),
   * agree; the agreed range decides the width on every rank alike */
  terms = sum ? ctx->size : 1;
  narrow = fused && d->reduces && !a->in_off && !ctx->wide_codes;
  if (a->quantizes)
    local = quantize(a, &run, &plan, codes + a->in_off,
                     fused && (sum || !d->reduces || narrow) ? &ag : NULL, &narrow, terms,
                     &job);
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }
  if (fused && d->reduces && !a->in_off && !ctx->wide_codes) {
    int fit = gz_codes_fit32(ag.absmax, plan.eb, terms);
    if (narrow && !fit) /* another rank's range is wider */
      gz_codes_widen(codes, a->n_in);
    else if (!narrow && fit) /* not reached (a rank fits when the agreed range does) */
      gz_codes_narrow(codes, a->n_in);
    narrow = fit;
  }

  /* the algorithm on codes, agree on its outcome, dequantize once */
  job.codes = codes;
  job.eb = plan.eb;
  job.run = &run;
  job.chosen = ch.algo;
  job.narrow = narrow;
  rc = gz_agree_final(ctx, alg->run(ctx, &job), d->rooted);
  if (rc != GZ_OK)
    goto fn_exit;
  if (job.dequantized) /* its last decodes wrote the values */
    amax = job.amax;
  else
    rc = dequantize(d, a, &run, gz_code_at(codes, narrow, a->out_off), narrow,
                    plan.eb / a->divisor, &amax);
  if (rc == GZ_OK && d->own)
    rc = d->own(ctx, a);
  if (rc != GZ_OK)
    goto fn_exit;
  gz_run_report(ctx, &run, report, alg, 1, plan.eb,
                result_bound(ctx, d, a, amax, &plan, &ag),
                job.reason[0] ? job.reason : ch.reason);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, d, a, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
