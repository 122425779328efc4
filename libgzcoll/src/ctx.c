/*
 * ctx.c - the collectives' context: configuration and environment overrides,
 * private communicators, the workspace pool, codec calibration and the status
 * agreement every collective runs before (and after) moving data.
 *
 * Context
 *   gz_ctx_create duplicates the communicator twice (collective traffic and
 *   gz_send/gz_recv traffic never mix with the application's or with each
 *   other) and sets MPI_ERRORS_RETURN on the duplicates, so an MPI failure
 *   becomes GZ_ERR_MPI instead of an abort. It agrees on the configuration:
 *   a configuration or environment that differs between ranks (which would
 *   make ranks pick different algorithms and hang) is GZ_ERR_ARG on all.
 *   A context serves one call at a time (its workspace is shared by the
 *   calls): not thread-safe; use one context per thread.
 *   Defaults of the cost model: link 1.25e9 B/s (10 Gb/s), alpha 5 us,
 *   ratio 4; the codec speed is calibrated here (16 Ki float32 values
 *   through the four passes, best of three, slowest rank) unless the probe
 *   (model.c) measures it.
 *
 * Environment (read at gz_ctx_create, after the config; must be the same on
 * every rank):
 *   GZCOLL_ALGO        one algorithm name, applied to every collective where
 *                      it applies (auto elsewhere), or a list
 *                      "allreduce=ring,bcast=binomial,..." (a name that does
 *                      not apply to the collective named is an error).
 *   GZCOLL_LINK_BPS    link bandwidth of the cost model, bytes per second.
 *   GZCOLL_CHUNK       ring pipeline chunk in elements (testing knob).
 *   GZCOLL_PART_BYTES  largest single MPI message (testing knob; larger
 *                      compressed buffers travel in parts).
 *   GZCOLL_BACKEND     "ops": calls on host buffers also run the device-
 *                      centric algorithms, with the CPU operations (testing
 *                      knob for device/; needs cfg.device_pool_bytes > 0).
 *   GZCOLL_CUDA_AWARE  0 or 1: override the detection of CUDA-aware MPI.
 *   GZCOLL_ALPHA, GZCOLL_CODEC_EPS, GZCOLL_RATIO, GZCOLL_LEARN: the cost
 *                      model (docs/performance-model.md).
 *   All are read through env.c (gz_env.h), as pmpi/ reads its own: numbers
 *   > 0 and finite, GZCOLL_LEARN and GZCOLL_CUDA_AWARE 0 or 1 (and "auto"),
 *   other words in any case; an unset or empty variable keeps the default,
 *   an invalid one makes gz_ctx_create return GZ_ERR_ARG.
 *
 * Device pool (device/device_ctx.c): with cfg.device_pool_bytes > 0 each
 *   rank that sees a device allocates that much device memory, as much
 *   pinned host staging and GZ_DEV_STREAMS streams here, once.
 *
 * Workspace pool (pool.c)
 *   One aligned buffer. Each call computes the bytes it needs up front,
 *   gz_ws_reserve grows the buffer if needed (the only allocation, agreed on
 *   like any local failure) and gz_ws_take carves it. The buffer is kept, so
 *   calls of the same shape allocate nothing; cfg->pool_bytes preallocates.
 *
 * Status agreement
 *   gz_agree packs, as doubles under MPI_MAX: a local-error flag, the escape
 *   flag (some value cannot be quantized within the bound), the largest
 *   finite |x|, -min and max of the finite values (REL range), the call's
 *   signature as +s and -s (equal on all ranks iff max(s) == -max(-s)), and
 *   the codec samples of the previous compressed call as -sample (so the
 *   context learns the minimum over ranks, identically everywhere).
 *   gz_agree_final is one MPI_MAX of a flag after the data moved (overflow
 *   or a corrupt message on one rank becomes an error on all).
 *   Cost: one small allreduce, ceil(log2 P) alpha, each. Rooted calls
 *   (bcast, scatter) wait in them quietly (gz_allreduce_max, quiet):
 *   receivers wait while the root compresses, the root while they decode, and a
 *   waiting rank that naps instead of spinning in MPI leaves the core to
 *   the working ones where ranks share cores. Unrooted calls spin (every
 *   rank works alike; a nap there only adds wake-up latency).
 */
#include "coll_internal.h"
#include "gz_env.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GZ_CALIB_N 16384
#define GZ_CALIB_FALLBACK 2.5e8 /* elements/s when it cannot run */

/* ---- agreement ---------------------------------------------------------- */

void gz_agree_init(gz_agree_t *a) {
  memset(a, 0, sizeof *a);
  a->err = GZ_OK;
  a->lo = HUGE_VAL;
  a->hi = -HUGE_VAL;
}

enum {
  AG_ERR,
  AG_ESC,
  AG_ABSMAX,
  AG_NLO,
  AG_HI,
  AG_SIG,
  AG_RATIO = AG_SIG + 8,
  AG_EPS,
  AG_MODEL,
  AG_N = AG_MODEL + GZ_MODEL_AG_N
};

gz_result_t gz_agree(gz_ctx_t ctx, gz_agree_t *a) {
  double v[AG_N];
  int first;
  v[AG_ERR] = a->err != GZ_OK ? 1.0 : 0.0;
  v[AG_ESC] = a->escape ? 1.0 : 0.0;
  v[AG_ABSMAX] = a->absmax;
  v[AG_NLO] = -a->lo;
  v[AG_HI] = a->hi;
  for (int i = 0; i < 4; i++) {
    v[AG_SIG + 2 * i] = a->sig[i];
    v[AG_SIG + 2 * i + 1] = -a->sig[i];
  }
  v[AG_RATIO] = ctx->sample_ratio > 0 ? -ctx->sample_ratio : -HUGE_VAL;
  v[AG_EPS] = ctx->sample_eps > 0 ? -ctx->sample_eps : -HUGE_VAL;
  ctx->sample_ratio = 0;
  ctx->sample_eps = 0;
  first = ctx->cur.t_in == 0; /* the call's first agreement carries the model */
  if (first)
    gz_model_pack(ctx, v + AG_MODEL);
  else
    memset(v + AG_MODEL, 0, GZ_MODEL_AG_N * sizeof *v);
  ctx->cur.t_in = MPI_Wtime();
  if (gz_allreduce_max(ctx, v, AG_N, a->quiet) != GZ_OK)
    return GZ_ERR_MPI;
  if (first) {
    ctx->cur.t_out = MPI_Wtime();
    gz_model_unpack(ctx, v + AG_MODEL);
  }
  if (v[AG_RATIO] > -HUGE_VAL && !(ctx->pinned & (GZ_PIN_RATIO | GZ_PIN_NOLEARN)))
    ctx->ratio = -v[AG_RATIO];
  if (v[AG_EPS] > -HUGE_VAL && !(ctx->pinned & (GZ_PIN_CODEC | GZ_PIN_NOLEARN)))
    ctx->codec_eps = -v[AG_EPS];
  if (v[AG_ERR] > 0)
    return a->err != GZ_OK ? a->err : GZ_ERR_REMOTE;
  for (int i = 0; i < 4; i++)
    if (v[AG_SIG + 2 * i] != -v[AG_SIG + 2 * i + 1])
      return GZ_ERR_ARG;
  a->escape = v[AG_ESC] > 0;
  a->absmax = v[AG_ABSMAX];
  a->lo = -v[AG_NLO];
  a->hi = v[AG_HI];
  return GZ_OK;
}

gz_result_t gz_agree_final(gz_ctx_t ctx, gz_result_t local, int quiet) {
  double v[3];
  if (local == GZ_ERR_MPI)
    return local; /* the communicator itself failed: do not wait on it */
  v[0] = local != GZ_OK;
  gz_model_final_pack(ctx, v + 1); /* the call's time so far, slowest rank */
  if (gz_allreduce_max(ctx, v, 3, quiet) != GZ_OK)
    return GZ_ERR_MPI;
  gz_model_final_unpack(ctx, v + 1, v[0] == 0);
  if (v[0] == 0)
    return GZ_OK;
  return local != GZ_OK ? local : GZ_ERR_REMOTE;
}

/* ---- configuration and environment -------------------------------------- */

/* One GZCOLL_ALGO item (gz_env_algo): coll -1 forces algo on every
 * collective it applies to; a named collective must accept it. */
static int apply_env_algo(void *arg, int coll, const char *algo) {
  gz_ctx_t ctx = arg;
  int is_auto = strcmp(algo, "auto") == 0;
  for (int c = 0; c < GZ_COLL_COUNT; c++) {
    const gz_algorithm_t *row = gz_algorithm((gz_coll_t)c, algo);
    if (coll >= 0 ? c != coll : !row && !is_auto)
      continue;
    if (!row && !is_auto)
      return 0;
    ctx->forced[c] = row;
    ctx->force_src[c] = row ? GZ_FORCE_ENV : GZ_FORCE_NONE;
    ctx->force_bad[c] = 0;
  }
  return 1;
}

static gz_result_t configure(gz_ctx_t ctx, const gz_config_t *cfg) {
  static const char *const learn_settings[] = {"0", "1", NULL};
  const char *algo;
  double v;
  int st, learn = 1;
  if (cfg) {
    /* versions 1 and 2 carried the algorithm as an enum: another layout */
    if (cfg->version != GZ_CONFIG_VERSION)
      return GZ_ERR_VERSION;
    ctx->cfg = *cfg;
  } else {
    ctx->cfg = (gz_config_t)GZ_CONFIG_INIT;
  }
  /* the name, terminated inside its array, known to some collective */
  algo = memchr(ctx->cfg.algo, '\0', sizeof ctx->cfg.algo) == NULL ? NULL
         : ctx->cfg.algo[0] ? gz_algo_canon(ctx->cfg.algo)
                            : "auto";
  if (!algo)
    return GZ_ERR_ARG;
  snprintf(ctx->cfg.algo, sizeof ctx->cfg.algo, "%s", algo);
  if (!(ctx->cfg.error_bound > 0) || !isfinite(ctx->cfg.error_bound) ||
      (ctx->cfg.eb_mode != GZ_EB_ABS && ctx->cfg.eb_mode != GZ_EB_REL &&
       ctx->cfg.eb_mode != GZ_EB_PWREL) ||
      (ctx->cfg.bound_policy != GZ_BOUND_STRICT &&
       ctx->cfg.bound_policy != GZ_BOUND_PER_MESSAGE) ||
      !(ctx->cfg.link_bytes_per_s >= 0) || !isfinite(ctx->cfg.link_bytes_per_s) ||
      (ctx->cfg.mpi_sum_bound != 0 && ctx->cfg.mpi_sum_bound != 1))
    return GZ_ERR_ARG;
  for (int c = 0; c < GZ_COLL_COUNT; c++) {
    const gz_algorithm_t *row = gz_algorithm((gz_coll_t)c, algo);
    ctx->forced[c] = row;
    ctx->force_src[c] = row ? GZ_FORCE_CONFIG : GZ_FORCE_NONE;
    ctx->force_bad[c] = !row && strcmp(algo, "auto") != 0;
  }
  if (gz_env_algo("GZCOLL_ALGO", apply_env_algo, ctx) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  ctx->link_bps =
      ctx->cfg.link_bytes_per_s > 0 ? ctx->cfg.link_bytes_per_s : GZ_DEFAULT_LINK_BPS;
  if (ctx->cfg.link_bytes_per_s > 0)
    ctx->pinned |= GZ_PIN_LINK;
  ctx->alpha = GZ_DEFAULT_ALPHA;
  ctx->ratio = GZ_DEFAULT_RATIO;
  ctx->codec_eps = 0; /* calibrated unless pinned */
  {
    static const struct {
      const char *name;
      int pin;
      size_t off;
    } pins[] = {{"GZCOLL_LINK_BPS", GZ_PIN_LINK | GZ_PIN_LINK_ENV,
                 offsetof(struct gz_ctx, link_bps)},
                {"GZCOLL_ALPHA", GZ_PIN_ALPHA, offsetof(struct gz_ctx, alpha)},
                {"GZCOLL_CODEC_EPS", GZ_PIN_CODEC, offsetof(struct gz_ctx, codec_eps)},
                {"GZCOLL_RATIO", GZ_PIN_RATIO, offsetof(struct gz_ctx, ratio)}};
    for (size_t k = 0; k < sizeof pins / sizeof pins[0]; k++) {
      double *field = (double *)(void *)((char *)ctx + pins[k].off);
      st = gz_env_double(pins[k].name, field);
      if (st == GZ_ENV_BAD)
        return GZ_ERR_ARG;
      if (st == GZ_ENV_SET)
        ctx->pinned |= pins[k].pin;
    }
    if (gz_env_enum("GZCOLL_LEARN", learn_settings, &learn) == GZ_ENV_BAD)
      return GZ_ERR_ARG;
    if (learn == 0)
      ctx->pinned |= GZ_PIN_NOLEARN;
  }
  v = GZ_DEFAULT_CHUNK;
  if (gz_env_double("GZCOLL_CHUNK", &v) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  ctx->chunk_elems = v < GZ_BLOCK ? GZ_BLOCK : (size_t)v / GZ_BLOCK * GZ_BLOCK;
  v = (double)GZ_DEFAULT_PART;
  if (gz_env_double("GZCOLL_PART_BYTES", &v) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  ctx->part_bytes = v < 1 ? 1 : v > (double)GZ_DEFAULT_PART ? GZ_DEFAULT_PART : (size_t)v;
  /* int64 codes always (tests, comparisons): per rank, results unchanged */
  ctx->wide_codes = 0;
  if (gz_env_bool("GZCOLL_WIDE_CODES", &ctx->wide_codes) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  return GZ_OK;
}

/* FNV-1a over the resolved settings that every rank must share. */
static uint64_t config_hash(gz_ctx_t ctx) {
  uint64_t h = 1469598103934665603ull;
  double d[10] = {ctx->cfg.error_bound,
                  ctx->link_bps,
                  (double)ctx->chunk_elems,
                  (double)ctx->part_bytes,
                  (double)ctx->cfg.device_pool_bytes,
                  (double)ctx->dev_ops,
                  ctx->alpha,
                  ctx->ratio,
                  ctx->pinned & GZ_PIN_CODEC ? ctx->codec_eps : 0.0,
                  (double)ctx->pinned};
  int i[3 + 3 * GZ_COLL_COUNT];
  const unsigned char *p;
  i[0] = (int)ctx->cfg.eb_mode;
  i[1] = (int)ctx->cfg.bound_policy;
  i[2] = ctx->cfg.mpi_sum_bound; /* the name: hashed below with the forced rows */
  for (int c = 0; c < GZ_COLL_COUNT; c++) {
    i[3 + 3 * c] = gz_row_index(ctx->forced[c]);
    i[4 + 3 * c] = (int)ctx->force_src[c];
    i[5 + 3 * c] = ctx->force_bad[c];
  }
  p = (const unsigned char *)d;
  for (size_t k = 0; k < sizeof d; k++)
    h = (h ^ p[k]) * 1099511628211ull;
  p = (const unsigned char *)i;
  for (size_t k = 0; k < sizeof i; k++)
    h = (h ^ p[k]) * 1099511628211ull;
  p = (const unsigned char *)ctx->cfg.algo;
  for (size_t k = 0; k < strlen(ctx->cfg.algo); k++)
    h = (h ^ p[k]) * 1099511628211ull;
  return h;
}

/* Elements per second of one codec pass (quantize, encode, decode-reduce,
 * dequantize) over n smooth float32 values, best of reps. */
double gz_calibrate(size_t n, int reps) {
  float *x = malloc(n * sizeof *x);
  int64_t *q = malloc(n * sizeof *q);
  size_t cap = gz_codes_bound(n), size = 0;
  unsigned char *buf = malloc(cap);
  double best = HUGE_VAL, eps = 0;
  if (!x || !q || !buf)
    goto done;
  {
    /* sin(0.01 i) + 0.1 cos(0.37 i) by rotating two unit vectors: libm's
     * sin and cos took twice as long as the timed passes (the probe runs
     * this at every first context of a process) */
    double s1 = 0, c1 = 1, s2 = 0, c2 = 1, ca = cos(0.01), sa = sin(0.01), cb = cos(0.37),
           sb = sin(0.37), t;
    for (size_t i = 0; i < n; i++) {
      x[i] = (float)(s1 + 0.1 * c2);
      t = s1 * ca + c1 * sa;
      c1 = c1 * ca - s1 * sa;
      s1 = t;
      t = s2 * cb + c2 * sb;
      c2 = c2 * cb - s2 * sb;
      s2 = t;
    }
  }
  for (int rep = 0; rep < reps; rep++) {
    double t = MPI_Wtime();
    gz_result_t qr = gz_quantize(GZ_FLOAT32, x, n, 1e-4, GZ_COLL_CODE_LIMIT, q);
    if ((qr != GZ_OK && qr != GZ_ERR_RANGE) || /* RANGE: an exact tie, timing is fine */
        gz_codes_encode(q, n, buf, cap, &size) != GZ_OK ||
        gz_codes_decode_reduce(GZ_OP_MAX, buf, size, q, n) != GZ_OK ||
        gz_dequantize(GZ_FLOAT32, q, n, 1e-4, x) != GZ_OK)
      goto done;
    t = MPI_Wtime() - t;
    if (t < best)
      best = t;
  }
  if (best > 0 && best < HUGE_VAL)
    eps = 4.0 * (double)n / best;
done:
  free(x);
  free(q);
  free(buf);
  return eps > 0 ? eps : GZ_CALIB_FALLBACK;
}

gz_result_t gz_ctx_create(MPI_Comm comm, const gz_config_t *cfg, gz_ctx_t *out) {
  struct gz_ctx *ctx = NULL;
  MPI_Comm dup = MPI_COMM_NULL;
  gz_result_t local = GZ_OK, rc = GZ_OK;
  double v[7];
  uint64_t h = 0;

  if (out)
    *out = NULL;
  if (comm == MPI_COMM_NULL)
    return GZ_ERR_ARG; /* nothing to agree over */
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
    return GZ_ERR_MPI;
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);

  ctx = calloc(1, sizeof *ctx);
  if (ctx)
    ctx->ws.grows = 1; /* the host workspace */
  if (!ctx)
    local = GZ_ERR_NOMEM;
  else if (!out)
    local = GZ_ERR_ARG;
  else
    local = configure(ctx, cfg);
  if (local == GZ_OK) {
    ctx->comm = dup;
    ctx->p2p = MPI_COMM_NULL;
    MPI_Comm_rank(dup, &ctx->rank);
    MPI_Comm_size(dup, &ctx->size);
    if (ctx->cfg.pool_bytes)
      local = gz_ws_reserve(ctx, ctx->cfg.pool_bytes);
    if (local == GZ_OK)
      local = gz_dev_ctx_setup(ctx);
  }
  if (local == GZ_OK) {
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(dup, MPI_TAG_UB, &ub, &flag);
    ctx->tag_ub = flag && ub ? *ub : 32767;
    h = config_hash(ctx);
  }
  v[6] = local == GZ_OK && !gz_model_probe_prepare(ctx); /* no memory for the probe */
  /* the small calibration, unless the probe measures the codec (a rank
   * without its buffers calibrates: the agreement takes the slowest one
   * that did, every rank alike) */
  if (local == GZ_OK && !(ctx->pinned & GZ_PIN_CODEC) && !ctx->probe_buf)
    ctx->codec_eps = gz_calibrate(GZ_CALIB_N, 3);

  /* agree: any local failure, identical settings, slowest codec */
  v[0] = local != GZ_OK;
  v[1] = (double)(h >> 32);
  v[2] = -(double)(h >> 32);
  v[3] = (double)(h & 0xffffffffu);
  v[4] = -(double)(h & 0xffffffffu);
  v[5] = local == GZ_OK && ctx->codec_eps > 0 ? -ctx->codec_eps : -HUGE_VAL;
  if (MPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_MAX, dup) != MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto fail;
  }
  if (v[0] > 0) {
    rc = local != GZ_OK ? local : GZ_ERR_REMOTE;
    goto fail;
  }
  if (v[1] != -v[2] || v[3] != -v[4]) {
    rc = GZ_ERR_ARG; /* configuration or environment differs between ranks */
    goto fail;
  }
  ctx->codec_eps =
      v[5] > -HUGE_VAL ? -v[5] : GZ_CALIB_FALLBACK; /* the probe measures it */
  if ((rc = gz_model_probe(ctx, v[6] == 0)) != GZ_OK)
    goto fail; /* only an MPI failure (every rank takes part in the probe) */
  if (MPI_Comm_dup(dup, &ctx->p2p) != MPI_SUCCESS) {
    ctx->p2p = MPI_COMM_NULL;
    rc = GZ_ERR_MPI;
    goto fail;
  }
  MPI_Comm_set_errhandler(ctx->p2p, MPI_ERRORS_RETURN);
  ctx->ws.used = ctx->ws.reserved = 0;
  *out = ctx;
  return GZ_OK;

fail:
  if (ctx) {
    free(ctx->probe_buf);
    gz_dev_ctx_teardown(ctx);
    gz_pool_free(&ctx->ws);
  }
  free(ctx);
  MPI_Comm_free(&dup);
  return rc;
}

void gz_ctx_destroy(gz_ctx_t ctx) {
  if (!ctx)
    return;
  if (ctx->p2p != MPI_COMM_NULL)
    MPI_Comm_free(&ctx->p2p);
  if (ctx->comm != MPI_COMM_NULL)
    MPI_Comm_free(&ctx->comm);
  gz_dev_ctx_teardown(ctx);
  gz_pool_free(&ctx->ws);
  free(ctx);
}
