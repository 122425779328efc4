/*
 * coll_driver.c - the one collective driver: every collective call runs
 * this skeleton; the collective itself is a descriptor (gz_coll_desc_t: its
 * checks, whether it reduces, whose values are quantized, where its own
 * block goes), its algorithms are rows of the registry (registry.def).
 *
 * Skeleton (coll_internal.h lists the steps):
 *   device?  the descriptor may send the call to its device front-end;
 *   check    local, remembered: an invalid argument fails on every rank at
 *            the first agreement, never before it (no rank left waiting);
 *   select   gz_select, the same on every rank (a forced algorithm that
 *            does not apply: GZ_ERR_ARG, the same on every rank);
 *   range    the finite range of the values this rank quantizes (a->in):
 *            a SUM needs it for its bound on every path, REL for the plan,
 *            data movement for the rounding of its bound;
 *   plan     eb and the code limit (REL: after agreeing on the range);
 *            SUM plans for P terms, everything else for one;
 *   reserve, quantize, agree (escape -> the MPI path on the original
 *            values), run the algorithm on codes, agree on its outcome;
 *   result   dequantize a->n_out codes once into a->out (a mean divides
 *            the step by the divisor), the own block copied exactly;
 *   report   bound: SUM  P eb + roundings (gz_sum_bound),
 *                   MAX/MIN and data movement  eb + the final rounding,
 *                   a rank holding its own values exactly  0;
 *            the MPI path: a SUM's floating-point error, else 0.
 * The arithmetic of the bounds: coll_common.c and docs/design.md.
 */
#include "coll_internal.h"

#include <math.h>

/* The MPI path (agreed: the status agreement already ran). */
static gz_result_t plain(gz_ctx_t ctx, const gz_coll_desc_t *d, const gz_args_t *a,
                         gz_agree_t *ag, int agreed, gz_run_t *run, gz_report_t *report,
                         const char *why) {
  const gz_algorithm_t *mpi = gz_algorithm(d->coll, GZ_ALGO_MPI);
  gz_job_t job = {a, NULL, 0.0, run};
  gz_result_t rc = GZ_OK;
  double rb = 0, u = a->dtype == GZ_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  int P = ctx->size;
  if (!agreed)
    rc = gz_agree(ctx, ag);
  if (rc == GZ_OK)
    rc = mpi->run(ctx, &job);
  if (rc != GZ_OK)
    goto fn_exit;
  if (d->reduces && a->op == GZ_OP_SUM)
    rb = gz_mpi_sum_bound(a->dtype, P, ag->absmax) / a->divisor +
         (a->divisor != 1.0 ? u * P * ag->absmax / a->divisor : 0.0);
  gz_run_report(ctx, run, report, GZ_ALGO_MPI, 0, 0.0, rb, why);
fn_exit:
  return rc;
}

/* The bound of a compressed call (after the result is in place). */
static double result_bound(gz_ctx_t ctx, const gz_coll_desc_t *d, const gz_args_t *a,
                           const int64_t *codes, const gz_plan_t *plan,
                           const gz_agree_t *ag) {
  double rmax;
  if (!d->reduces)
    return a->exact ? 0.0 : plan->eb + gz_round_slop(a->dtype, ag->absmax + plan->eb);
  rmax =
      2.0 * plan->eb * (double)gz_codes_absmax(codes + a->out_off, a->n_out) / a->divisor;
  return a->op == GZ_OP_SUM
             ? gz_sum_bound(a->dtype, ctx->size, plan->eb, ag->absmax, rmax, a->divisor)
             : plan->eb + gz_round_slop(a->dtype, rmax);
}

gz_result_t gz_coll_run(gz_ctx_t ctx, const gz_coll_desc_t *d, gz_args_t *a,
                        gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  gz_agree_t ag;
  gz_plan_t plan;
  gz_job_t job;
  const gz_algorithm_t *alg;
  gz_result_t rc = GZ_OK, local;
  const char *why = NULL; /* the reason for taking the MPI path */
  int64_t *codes = NULL;
  int agreed = 0, ranged = 0, sum;

  if (!ctx)
    return GZ_ERR_ARG; /* no communicator to agree over */
  gz_run_begin(&run, a->dtype);
  if (d->device) {
    int taken = 0;
    rc = d->device(ctx, a, report, &taken);
    if (rc != GZ_OK || taken)
      return rc;
  }
  a->quantizes = !d->rooted || ctx->rank == a->root;
  local = d->check(ctx, a);
  gz_agree_init(&ag);
  ag.err = local;
  ag.sig[0] = (double)a->count;
  ag.sig[1] = (double)((int)a->dtype * 4 + (int)a->op);
  ag.sig[2] = (double)a->root;
  ag.sig[3] = a->divisor;
  rc = gz_select(ctx, d->coll, a->count, a->dtype, &ch);
  if (rc != GZ_OK)
    goto fn_exit; /* a forced algorithm that does not apply: same on every rank */
  sum = d->reduces && a->op == GZ_OP_SUM;
  if (local == GZ_OK && sum) { /* the MPI path's bound needs it too */
    gz_local_range(a->dtype, a->in, a->n_in, &ag.lo, &ag.hi, &ag.absmax);
    ranged = 1;
  }
  alg = gz_algorithm(d->coll, ch.algo);
  if (local != GZ_OK || ch.algo == GZ_ALGO_MPI || !alg || !alg->ws) {
    why = ch.reason;
    goto uncompressed;
  }

  /* the plan: REL agrees on the global range first */
  if (!ranged && a->quantizes && (!d->reduces || ctx->cfg.eb_mode == GZ_EB_REL))
    gz_local_range(a->dtype, a->in, a->n_in, &ag.lo, &ag.hi, &ag.absmax);
  rc = gz_plan_agreed(ctx, &ag, sum ? ctx->size : 1, sum ? a->divisor : 1.0, &plan,
                      &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (!plan.usable) {
    why = GZ_WHY_DEGENERATE;
    goto uncompressed;
  }

  /* reserve everything, quantize once, agree */
  local = gz_ws_reserve(
      ctx, gz_ws_add(gz_ws_add(0, a->n_codes, sizeof(int64_t)), alg->ws(ctx, a), 1));
  if (local == GZ_OK) {
    codes = gz_ws_take(ctx, a->n_codes, sizeof(int64_t));
    if (a->quantizes)
      local = gz_run_quantize(&run, a->dtype, a->in, a->n_in, plan.eb, plan.code_limit,
                              codes + a->in_off);
  }
  rc = gz_agree_quantized(ctx, &ag, local, &agreed);
  if (rc != GZ_OK)
    goto fn_exit;
  if (ag.escape) {
    why = GZ_WHY_ESCAPE;
    goto uncompressed;
  }

  /* the algorithm on codes, agree on its outcome, dequantize once */
  job.a = a;
  job.codes = codes;
  job.eb = plan.eb;
  job.run = &run;
  rc = gz_agree_final(ctx, alg->run(ctx, &job));
  if (rc != GZ_OK)
    goto fn_exit;
  if (a->n_out) {
    rc = gz_run_dequantize(&run, a->dtype, codes + a->out_off, a->n_out,
                           plan.eb / a->divisor, a->out);
    if (rc != GZ_OK)
      goto fn_exit;
  }
  if (d->own)
    d->own(ctx, a);
  gz_run_report(ctx, &run, report, ch.algo, 1, plan.eb,
                result_bound(ctx, d, a, codes, &plan, &ag), ch.reason);
  goto fn_exit;

uncompressed:
  rc = plain(ctx, d, a, &ag, agreed, &run, report, why);
fn_exit:
  return rc;
}
