/*
 * stack_reduce.c - step 3 of `gzstack stack`: the partial sums (or maxima,
 * minima) of every rank go through gz_allreduce (double) in slabs of
 * --slab-mb; the result field follows, in the output's type, with the bound
 * it is claimed to hold. The stages:
 *   counts   the agreed range, missing-value flag, counts (stack_counts.c)
 *   budget   what the allreduce is asked for (stack_bound.c, pure); -e 0 or
 *            a zero range: the plain MPI allreduce (exact up to double
 *            rounding)
 *   empty    points without a local sample take the global minimum (max) /
 *            maximum (min) of the valid values, which cannot win
 *   slabs    the allreduce, on the CPU or staged on the GPU (stack_device.c)
 *   agree    the largest result bounds and the summed byte counts
 *   result   mean / sum / max / min per point, then the output type
 *   claim    stage bound + float32 rounding (stack_bound.c, pure)
 */
#include "stack_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gzs_report_add(gz_report_t *sum, const gz_report_t *one, int first) {
  if (first) {
    *sum = *one;
    return;
  }
  sum->compressed |= one->compressed;
  if (one->quant_bound > sum->quant_bound)
    sum->quant_bound = one->quant_bound;
  if (one->result_bound > sum->result_bound)
    sum->result_bound = one->result_bound;
  sum->bytes_raw += one->bytes_raw;
  sum->bytes_sent += one->bytes_sent;
  sum->seconds += one->seconds;
  sum->seconds_codec += one->seconds_codec;
  sum->predicted_seconds += one->predicted_seconds;
  sum->measured_seconds += one->measured_seconds;
}

void gzs_finish_field(const gzs_opts_t *o, const gzs_run_t *r, const double *red,
                      double *res) {
  for (size_t i = 0; i < r->npoints; i++) {
    uint32_t c = r->counts ? r->counts[i] : (uint32_t)r->nsnap;
    double w = r->snap_w ? (r->wsum ? r->wsum[i] : r->w_tot) : (double)c;
    if (c == 0) /* no sample; with --normalize live all were zero (sustack: 0) */
      res[i] = o->normalize_live ? 0.0 : NAN;
    else if (!(w > 0)) /* weighted: only weights 0 */
      res[i] = NAN;
    else if (o->op == GZS_OP_MEAN)
      res[i] = red[i] / w;
    else
      res[i] = red[i];
  }
}

static gz_op_t gz_op_of(gzs_op_t op) {
  return op == GZS_OP_MAX ? GZ_OP_MAX : op == GZS_OP_MIN ? GZ_OP_MIN : GZ_OP_SUM;
}

/* The budget: e_abs (parallel reading; root reading set it while reading)
 * and the allreduce's configuration. */
static void plan_allreduce(const gzs_opts_t *o, gzs_run_t *r, gz_config_t *cfg) {
  if (r->moment_pass) {
    gzs_moment_budget(r);
  } else if (!r->have_scatter) {
    gzs_split_t split;
    r->e_abs = gzs_bound_abs(o->e, o->eb_mode, r->lo, r->hi);
    split = gzs_bound_split(o->op, o->bound, 0, r->e_abs, r->nsnap);
    r->e_allreduce = split.e_allreduce;
  }
  cfg->bound_policy = o->bound;
  snprintf(cfg->algo, sizeof cfg->algo, "%s", gzs_algo_name(o));
  cfg->eb_mode = GZ_EB_ABS;
  cfg->error_bound = gzs_bound_allreduce(o->op, o->bound, r->e_allreduce,
                                         r->snap_w ? r->w_min : (double)r->c_min);
  if (cfg->error_bound == 0) {
    cfg->error_bound = 1.0; /* unused: the plain MPI allreduce is exact */
    snprintf(cfg->algo, sizeof cfg->algo, "mpi");
  }
}

/* Points without a local sample cannot win a max / min. */
static void fill_empty_points(const gzs_opts_t *o, gzs_run_t *r) {
  double sentinel;
  if (o->op != GZS_OP_MAX && o->op != GZS_OP_MIN)
    return;
  sentinel = o->op == GZS_OP_MAX ? r->lo : r->hi;
  if (!isfinite(sentinel))
    sentinel = 0.0;
  for (size_t i = 0; i < r->npoints; i++)
    if (isnan(r->acc[i]))
      r->acc[i] = sentinel;
}

/* Every slab through the allreduce; the failure is agreed by the library. */
static int reduce_slabs(const gzs_opts_t *o, gzs_run_t *r, const double *src,
                        gz_ctx_t ctx, gzs_device_t *dev, size_t slab, MPI_Comm comm,
                        char *err, size_t errlen) {
  size_t M = r->npoints;
  for (size_t off = 0; off < M; off += slab) {
    size_t n = M - off < slab ? M - off : slab;
    gz_report_t rep;
    gz_result_t grc =
        dev->buf ? gzs_device_allreduce(dev, ctx, src + off, r->reduced + off, n,
                                        gz_op_of(o->op), comm, &rep)
                 : gz_allreduce(ctx, src == r->reduced ? GZ_IN_PLACE : src + off,
                                r->reduced + off, n, GZ_FLOAT64, gz_op_of(o->op), &rep);
    if (grc != GZ_OK) {
      snprintf(err, errlen, "compressed allreduce failed: %s", gz_strerror(grc));
      if (r->rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", err);
      return -1;
    }
    gzs_report_add(&r->ar, &rep, off == 0);
    gzs_progress(o, r, 0, "stacking: %zu/%zu values reduced", off + n, M);
  }
  return 0;
}

/* What ran, its times, and the agreed bounds and byte counts. */
static void agree_reports(gzs_run_t *r, MPI_Comm comm) {
  double b[2] = {r->ar.result_bound, r->have_scatter ? r->sc.result_bound : 0.0};
  uint64_t bytes[2] = {r->ar.bytes_raw + (r->have_scatter ? r->sc.bytes_raw : 0),
                       r->ar.bytes_sent + (r->have_scatter ? r->sc.bytes_sent : 0) +
                           r->mask_bytes};
  r->t.compress += r->ar.seconds_codec;
  r->t.communicate += r->ar.seconds - r->ar.seconds_codec;
  r->algo_name = r->ar.algo;
  snprintf(r->algo_reason, sizeof r->algo_reason, "%s", r->ar.reason);
  r->compressed = r->ar.compressed;
  r->quant_bound = r->ar.quant_bound;
  MPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, bytes, 2, MPI_UINT64_T, MPI_SUM, comm);
  r->ar_bound = b[0];
  r->sc_bound = b[1];
  r->bytes_raw = bytes[0];
  r->bytes_sent = bytes[1];
}

/* The field, its output-type copy, and the bound claimed for it. */
static void finish_result(const gzs_opts_t *o, gzs_run_t *r) {
  size_t M = r->npoints;
  gzs_claim_in_t in;
  gzs_claim_t claim;
  double maxabs = 0;
  float *f32 = r->dtype == GZ_FLOAT32 ? r->out : NULL;
  if (!r->result) { /* in place: nothing reads the reduced values later */
    r->result = r->reduced;
    r->reduced = NULL;
  }
  /* in place, a sum / max / min of every snapshot at every point (no
   * counts, no weights) already is the field */
  if (r->reduced || o->op == GZS_OP_MEAN || r->counts || r->snap_w || r->nsnap == 0)
    gzs_finish_field(o, r, r->reduced ? r->reduced : r->result, r->result);
  /* one pass: the largest finite |value| and the output type */
  for (size_t i = 0; i < M; i++) {
    double v = r->result[i], a = fabs(v);
    if (a > maxabs && isfinite(v))
      maxabs = a;
    if (f32)
      f32[i] = (float)v;
  }
  if (!f32 && r->out)
    memcpy(r->out, r->result, sizeof(double) * M);
  in = (gzs_claim_in_t){.op = o->op,
                        .dtype = r->dtype,
                        .ar_bound = r->ar_bound,
                        .sc_bound = r->sc_bound,
                        .lo = r->lo,
                        .hi = r->hi,
                        .c_min = r->c_min,
                        .c_max = r->c_max,
                        .nsnap = r->nsnap,
                        .ranks = r->size,
                        .result_max = maxabs};
  claim = o->reproducible && r->codes
              ? gzs_repro_claim(&in, r->repro_step)
              : gzs_bound_claim_w(&in, r->snap_w ? r->w_min : 0.0);
  r->stage_bound = claim.stage;
  r->f32_term = claim.f32;
  r->claimed = claim.claimed;
  gzs_claim_ibm(o, r, maxabs);
}

static int same_config(const gz_config_t *a, const gz_config_t *b) {
  return a->error_bound == b->error_bound && a->eb_mode == b->eb_mode &&
         a->bound_policy == b->bound_policy && !strcmp(a->algo, b->algo) &&
         a->device_pool_bytes == b->device_pool_bytes;
}

/* A new context, or (keep_ctx) one kept from an earlier call with the same
 * configuration; every rank makes the same choice (agreed configurations). */
static gz_result_t get_context(gzs_run_t *r, MPI_Comm comm, const gz_config_t *cfg,
                               gz_ctx_t *ctx, int *kept) {
  gz_result_t grc;
  *kept = 0;
  for (int i = 0; r->keep_ctx && i < r->nctx; i++)
    if (same_config(cfg, &r->ctx_cfg[i])) {
      *ctx = r->ctx_kept[i];
      *kept = 1;
      return GZ_OK;
    }
  grc = gz_ctx_create(comm, cfg, ctx);
  if (grc == GZ_OK && r->keep_ctx && r->nctx < 8) {
    r->ctx_cfg[r->nctx] = *cfg;
    r->ctx_kept[r->nctx++] = *ctx;
    *kept = 1;
  }
  return grc;
}

void gzs_release_contexts(gzs_run_t *r) {
  for (int i = 0; i < r->nctx; i++)
    gz_ctx_destroy(r->ctx_kept[i]);
  r->nctx = 0;
  r->keep_ctx = 0;
}

/* --reproducible: points without a local sample take the code of the
 * global minimum (max) / maximum (min) value, which cannot win; every
 * rank's largest |code| and overflow flag are agreed. 0, or -1 with err
 * (the same on every rank). */
static int agree_codes(const gzs_opts_t *o, gzs_run_t *r, int64_t *amax, MPI_Comm comm,
                       char *err, size_t errlen) {
  int64_t v[2] = {r->repro_overflow, 0};
  double sentinel = o->op == GZS_OP_MAX ? r->lo : r->hi;
  int64_t none = o->op == GZS_OP_MAX ? INT64_MIN : INT64_MAX;
  int minmax = o->op == GZS_OP_MAX || o->op == GZS_OP_MIN;
  sentinel = isfinite(sentinel) ? rint(sentinel / r->repro_step) : 0.0;
  for (size_t i = 0; i < r->npoints; i++) {
    int64_t c = r->codes[i];
    if (minmax && c == none)
      c = r->codes[i] = fabs(sentinel) < 0x1p62 ? (int64_t)sentinel : 0;
    c = c == INT64_MIN ? INT64_MAX : c < 0 ? -c : c; /* INT64_MIN: a flagged overflow */
    v[1] = c > v[1] ? c : v[1];
  }
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, comm);
  *amax = v[1];
  if (v[0] || v[1] > INT64_MAX / r->size) {
    snprintf(err, errlen,
             "--reproducible: the integer codes of the grid step %.17g (-e %g) leave "
             "int64 (values up to %.6g over %llu inputs); use a larger -e",
             r->repro_step, o->e, fmax(fabs(r->lo), fabs(r->hi)),
             (unsigned long long)r->nsnap);
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    return -1;
  }
  return 0;
}

/* --reproducible: the exact total of the ranks' codes into r->reduced as
 * doubles S, then S h. Codes the compressed allreduce can carry (|code| <=
 * 2^51 / P) travel through it as integer-valued doubles with a
 * per-message bound of 1/4: an integer x is quantized to the code 2x with
 * no error, the library combines codes in int64 and dequantizes once, so
 * the result is the exact integer total whatever the algorithm and the
 * rank count (gzcoll.h has no allreduce of int64 codes; this is its public
 * way to move them). Larger codes go through MPI_Allreduce of int64. */
static int reduce_codes(const gzs_opts_t *o, gzs_run_t *r, gz_ctx_t *ctx, int *kept,
                        gzs_device_t *dev, MPI_Comm comm, char *err, size_t errlen) {
  size_t M = r->npoints, slab = gzs_slab_values(o);
  gz_config_t cfg = GZ_CONFIG_INIT;
  int64_t amax = 0;
  int bad = 0;
  double t0;
  if (agree_codes(o, r, &amax, comm, err, errlen) != 0)
    return -1;
  if (amax <= ((int64_t)1 << 51) / r->size) {
    gz_result_t grc;
    for (size_t i = 0; i < M; i++)
      r->result[i] = (double)r->codes[i]; /* r->result: scratch until the field */
    cfg.error_bound = 0.25;
    cfg.bound_policy = GZ_BOUND_PER_MESSAGE;
    cfg.eb_mode = GZ_EB_ABS;
    snprintf(cfg.algo, sizeof cfg.algo, "%s", gzs_algo_name(o));
    if (o->device_gpu)
      cfg.device_pool_bytes = gzs_device_open(dev, slab < M ? slab : M, comm);
    t0 = MPI_Wtime();
    grc = get_context(r, comm, &cfg, ctx, kept);
    r->t.setup += MPI_Wtime() - t0;
    if (grc != GZ_OK) {
      snprintf(err, errlen, "compressed allreduce: %s", gz_strerror(grc));
      if (r->rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", err);
      return -1;
    }
    if (reduce_slabs(o, r, r->result, *ctx, dev, slab, comm, err, errlen) != 0)
      return -1;
    for (size_t i = 0; i < M; i++) /* integers, exactly, or the transport failed */
      bad |= r->reduced[i] != rint(r->reduced[i]) || !(fabs(r->reduced[i]) <= 0x1p53);
  } else {
    t0 = MPI_Wtime();
    for (size_t off = 0; off < M; off += GZS_MPI_CHUNK) {
      int n = (int)(M - off < GZS_MPI_CHUNK ? M - off : GZS_MPI_CHUNK);
      MPI_Allreduce(MPI_IN_PLACE, r->codes + off, n, MPI_INT64_T,
                    o->op == GZS_OP_MAX   ? MPI_MAX
                    : o->op == GZS_OP_MIN ? MPI_MIN
                                          : MPI_SUM,
                    comm);
    }
    for (size_t i = 0; i < M; i++)
      r->reduced[i] = (double)r->codes[i];
    memset(&r->ar, 0, sizeof r->ar);
    r->ar.algo = "mpi";
    r->ar.bytes_raw = r->ar.bytes_sent = sizeof(int64_t) * M;
    r->ar.seconds = MPI_Wtime() - t0;
    snprintf(r->ar.reason, sizeof r->ar.reason, "%s",
             "--reproducible: int64 codes beyond the compressed path's limit");
  }
  if (gzs_agree(comm, bad, "--reproducible: the allreduce of the codes was not exact"))
    return -1;
  for (size_t i = 0; i < M; i++)
    r->reduced[i] *= r->repro_step; /* a power of two: exact below 2^1023 */
  return 0;
}

int gzs_reduce(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
               size_t errlen) {
  size_t M = r->npoints, slab = gzs_slab_values(o);
  gz_config_t cfg = GZ_CONFIG_INIT;
  gzs_device_t dev = {NULL, 0};
  gz_ctx_t ctx = NULL;
  gz_result_t grc;
  int rc = -1, kept = 0, repro = o->reproducible && r->codes;
  /* Without --verify nothing reads the partial stacks after the allreduce,
   * nor (except the moments' second stage) the reduced values after the
   * field: both steps then work in place, on one double buffer instead of
   * three (fresh pages cost the kernel about as much as the work on them) */
  int in_place = !repro && !o->verify;
  int field_in_place = in_place && !r->moment_pass; /* finish_result: r->result NULL */
  int need_out = !r->out_on_rank0 || r->rank == 0;
  double t_setup;

  if (gzs_agree_counts(r, comm) != 0)
    return -1;
  if (!repro)
    plan_allreduce(o, r, &cfg);
  fill_empty_points(o, r); /* also for --verify's reference of --reproducible */
  if (in_place) {
    r->reduced = r->acc; /* the partials become the reduced values */
    r->acc = NULL;
  } else {
    r->reduced = malloc(sizeof(double) * M + 1);
  }
  r->result = field_in_place ? NULL : malloc(sizeof(double) * M + 1);
  r->out = need_out ? malloc(gz_dtype_size(r->dtype) * M + 1) : NULL;
  if (gzs_agree(comm,
                !r->reduced || (!r->result && !field_in_place) || (need_out && !r->out),
                "out of memory for the result"))
    return -1;
  if (repro) {
    r->e_abs = o->e;
    r->e_allreduce = 0.25; /* on the codes */
    if (reduce_codes(o, r, &ctx, &kept, &dev, comm, err, errlen) != 0)
      goto fail;
    agree_reports(r, comm);
    finish_result(o, r);
    rc = 0;
    goto fail;
  }
  /* the slab buffers and the context's device pool are allocated here,
   * outside the calls */
  if (o->device_gpu)
    cfg.device_pool_bytes = gzs_device_open(&dev, slab < M ? slab : M, comm);
  t_setup = MPI_Wtime();
  grc = get_context(r, comm, &cfg, &ctx, &kept);
  r->t.setup += MPI_Wtime() - t_setup;
  if (grc != GZ_OK) {
    snprintf(err, errlen, "compressed allreduce: %s", gz_strerror(grc));
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    goto fail;
  }
  if (reduce_slabs(o, r, in_place ? r->reduced : r->acc, ctx, &dev, slab, comm, err,
                   errlen) != 0)
    goto fail;
  agree_reports(r, comm);
  finish_result(o, r);
  rc = 0;
fail:
  if (!kept)
    gz_ctx_destroy(ctx);
  gzs_device_close(&dev);
  return rc;
}
