/*
 * model.c - the measured cost model: the probe at gz_ctx_create, learning
 * from the measured time of every call, and the model's part of the status
 * agreements. The formulas live in select.c; docs/performance-model.md
 * explains the whole.
 *
 * Probe (P > 1 and some collective left to auto, unless GZCOLL_LINK_BPS /
 * cfg.link_bytes_per_s and GZCOLL_ALPHA pin both). Its cost is a handful of
 * collective steps in a row, not bytes: where ranks share cores (8 emulated
 * hosts on 2 cores) one small collective took ~20 ms and the probe's 19 of
 * them 324-488 ms. So it runs a fixed plan with a single agreement at the
 * end; its buffers are allocated before gz_ctx_create's configuration
 * agreement, which says whether every rank has them. Every rank measures
 *   - the codec: one pass of each phase over 256 Ki float32 values, all
 *     ranks at once (beyond a core's caches; ranks sharing cores slow each
 *     other as in a call), slowest rank (replaces the small calibration).
 *     The codec's speed does not depend on the communicator: a process
 *     measures it at its first probe only and later probes agree on the
 *     value kept (a program or test creating many contexts would otherwise
 *     pay tens of ms each); learning refines it per context;
 *   - 2 ring steps of GZ_PROBE_LARGE (send to rank + 1, receive from
 *     rank - 1: the ring algorithms' pattern, every link busy in both
 *     directions), the fastest; the first also connects lazy transports;
 *   - between them one ring-neighbour sendrecv of 8 bytes: alpha, the fixed
 *     cost of one step (two, the first connecting, when the link is pinned
 *     and no large step runs);
 *   - one MPI_Allreduce of GZ_PROBE_AR (MPI's own path), timed: the
 *     collective's time is its fastest rank's (the one that entered last
 *     waited for nobody); its payload is the fastest rank's
 *     GZ_PROBE_LARGE step, so every rank knows whether that was under
 *     GZ_PROBE_ENOUGH (a fast link or shared memory) and then times 3 more
 *     ring steps of GZ_PROBE_MAX (the fastest of 3: one descheduled step
 *     is not the link) - unless the link is already known fast enough for
 *     MPI to win every choice (gz_model_mpi_wins_anyway: its payload also
 *     agrees on the codec), where the probe stops;
 *   - one MPI_MAX of all the times: every rank holds the slowest rank's
 *     (and the fastest rank's allreduce time, the collective's own, and
 *     8-byte step, alpha: the slowest one's adds its wait for late
 *     neighbours);
 *   - only when repeats are cheap (that allreduce under GZ_PROBE_ENOUGH,
 *     or under a sixteenth of the probe so far) or it looks disturbed
 *     (longer than the host's steps explain: a rank descheduled inside it,
 *     all ranks wait; on shared memory under load that put the MPI path
 *     25x low) - gz_model_probe_repeats, from agreed times - and a faster
 *     MPI path (the most a repeat can make of it: up to the link) could
 *     still change a choice by more than 10 % (gz_model_mpi_rate_moot: not
 *     on 1 Gbit links, where the ring wins big sizes anyway),
 *     GZ_PROBE_AR_REPS - 1 more repeats and a small MAX of their times;
 *     the model takes the fastest. Each collective step costs 20-80 ms
 *     where 8 ranks share 2 cores: 3 repeats every time cost ~0.2 s of an
 *     8-host stack's setup.
 * link_bps = the slope between the two sizes timed, (s2 - s1) / (t2 - t1),
 * so that fixed costs of a step (scheduling on a busy host, handshakes)
 * cancel, and at least s2 / t2 (those bytes crossed the link in that time;
 * alone when t2 is not clearly above t1). MPI's allreduce bandwidth: its
 * formula inverted at its size (with the measured alpha) for the fastest
 * rank's time, between what it
 * moved in its whole time and link_bps (its bytes cross the same links).
 * Each rank keeps its stage times for gz_explain (ctx->probe_stage).
 *
 * Learning: every timed call (a collective with P > 1 and learning on)
 * yields an agreed time T (the slowest rank's work before the first
 * agreement plus the slowest rank's time after it). The model's formula of
 * the algorithm that ran is inverted for the bandwidth of that path:
 * bw_sample such that model(bw_sample) = T (bisection in log space; one
 * sample is taken within 1/100 and 100 times the current value, and at
 * most 10 x link_bps). The
 * path's bandwidth moves geometrically towards it: log bw += w (log
 * bw_sample - log bw), w = GZ_LEARN_WEIGHT, so a first guess wrong by 10x is
 * within 1.5x after two calls and 1.2x after three; a learnt MPI path
 * raises link_bps to its rate (its bytes crossed the links). Codec speed and ratio
 * are learnt by the codec samples of the agreement (ctx.c). The compressed
 * paths' time is agreed by their final agreement (the same call); the MPI
 * path has none, its local time rides with the next call's first agreement.
 * Every input the choice reads is agreed, so every rank decides the same.
 */
#include "coll_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GZ_PROBE_ENOUGH 3e-3 /* seconds: a step that long is timed well enough */
#define GZ_PROBE_LARGE ((size_t)512 << 10)
#define GZ_PROBE_MAX ((size_t)2 << 20) /* only where GZ_PROBE_LARGE is quick */
#define GZ_PROBE_AR ((size_t)64 << 10)
#define GZ_PROBE_CODEC_N ((size_t)1 << 18) /* 1 MiB of float32, 2 MiB of codes */
#define GZ_BW_MIN 1e3

/* This process's codec speed from its first probe (0: not measured yet). */
static _Atomic double process_codec_eps;
#define GZ_BW_MAX 1e13

/* The bandwidth at which the model of algo takes T seconds. */
static double invert_bw(const gz_model_t *m, const gz_algorithm_t *algo, double count,
                        size_t esz, double T) {
  double lo = log(GZ_BW_MIN), hi = log(GZ_BW_MAX);
  if (gz_model_time(m, algo, count, esz, GZ_BW_MAX) >= T)
    return GZ_BW_MAX; /* faster than the other terms allow: not the wire */
  if (gz_model_time(m, algo, count, esz, GZ_BW_MIN) <= T)
    return GZ_BW_MIN;
  for (int i = 0; i < 60; i++) {
    double mid = 0.5 * (lo + hi);
    if (gz_model_time(m, algo, count, esz, exp(mid)) > T)
      lo = mid;
    else
      hi = mid;
  }
  return exp(0.5 * (lo + hi));
}

static double scaled(gz_ctx_t ctx, int compressed, double t) {
  double s = ctx->test_scale[compressed ? 1 : 0];
  return s > 0 ? s * t : t;
}

static gz_result_t ring_xfer(gz_ctx_t ctx, unsigned char *sbuf, unsigned char *rbuf,
                             size_t bytes) {
  int right = (ctx->rank + 1) % ctx->size, left = (ctx->rank + ctx->size - 1) % ctx->size;
  return MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, right, 0, rbuf, (int)bytes, MPI_BYTE,
                      left, 0, ctx->comm, MPI_STATUS_IGNORE) == MPI_SUCCESS
             ? GZ_OK
             : GZ_ERR_MPI;
}

/* The fastest of reps ring steps of bytes (a busy host's preemption is
 * neither latency nor the link), folded into *t. */
static gz_result_t ring_time(gz_ctx_t ctx, unsigned char *buf, size_t bytes, int reps,
                             double *t) {
  gz_result_t rc = GZ_OK;
  for (int r = 0; r < reps && rc == GZ_OK; r++) {
    double t0 = MPI_Wtime();
    rc = ring_xfer(ctx, buf, buf + GZ_PROBE_MAX, bytes);
    t0 = MPI_Wtime() - t0;
    *t = rc == GZ_OK && t0 < *t ? t0 : *t;
  }
  return rc;
}

/* Does gz_ctx_create probe? P > 1, some collective left to auto, link and
 * alpha not both pinned (the configuration is agreed, so every rank alike). */
static int probe_wanted(gz_ctx_t ctx) {
  int chooses = 0; /* does auto choose anything on this context? */
  for (int c = 0; c < GZ_COLL_COUNT; c++)
    chooses |= !ctx->forced[c] && !ctx->force_bad[c];
  return ctx->size > 1 && chooses &&
         !((ctx->pinned & GZ_PIN_LINK) && (ctx->pinned & GZ_PIN_ALPHA));
}

int gz_model_probe_prepare(gz_ctx_t ctx) {
  ctx->probe_buf = NULL;
  if (!probe_wanted(ctx))
    return 1;
  /* send and receive halves (calloc: only what a step touches is mapped) */
  ctx->probe_buf = calloc(2, GZ_PROBE_MAX);
  return ctx->probe_buf != NULL;
}

/* Is the link already known fast enough? lb: a lower bound of its
 * bandwidth (GZ_PROBE_LARGE over the fastest rank's step), eps: the codec
 * (agreed). For every collective at 1 MiB and 64 MiB per rank: MPI at lb
 * beats every compressed algorithm even on an unlimited link (the codec's
 * passes alone), and the compressed ones at lb take at most 10 % longer
 * than on an unlimited link. A larger step could only raise the link: MPI
 * (at most capped at lb) keeps winning, the compressed paths move by less
 * than 10 %; the probe stops there (on shared memory and on true 10 Gbit
 * links with this codec: two 2 MiB steps fewer). alpha 0: the compressed
 * rows carry at least MPI's fixed costs. Every input is agreed: every rank
 * stops alike. */
int gz_model_mpi_wins_anyway(gz_ctx_t ctx, double lb, double eps) {
  gz_model_t m;
  gz_model_of_ctx(ctx, &m);
  m.alpha = 0;
  m.codec_eps = eps;
  for (int i = 0; i < GZ_ROWS; i++) {
    const gz_algorithm_t *row = gz_row(i);
    const gz_algorithm_t *mpi = gz_algorithm(row->coll, GZ_ALGO_MPI_NAME);
    if (row->device || !row->cost || gz_row_is_mpi(row) || row->coll >= GZ_COLL_P2P ||
        !mpi)
      continue;
    for (double count = 1 << 18; count <= (1 << 24); count *= 64) {
      double fastest = gz_model_time(&m, row, count, 4, GZ_BW_MAX);
      if (gz_model_time(&m, mpi, count, 4, lb) > fastest ||
          gz_model_time(&m, row, count, 4, lb) > 1.1 * fastest)
        return 0;
    }
  }
  return 1;
}

/* Seconds of the row named algo among n predicted rows (HUGE_VAL if absent). */
static double seconds_of(const gz_prediction_t *rows, size_t n, const char *algo) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].algo, algo) == 0)
      return rows[i].seconds;
  return HUGE_VAL;
}

#define GZ_MOOT_RATES 8

/* Can the probe's repeats of MPI's allreduce still matter? They can only
 * raise the MPI path's rate (their fastest is at most the first), and no
 * higher than the link (gz_model_probe_apply caps it there). They are moot
 * when, at every size from the probe's allreduce (GZ_PROBE_AR, the size
 * whose rate they measure) to 1 GiB per rank, float32 and float64, what
 * auto picks at the present rate is within 10 % of the cheapest row (the
 * tolerance of gz_model_mpi_wins_anyway) at every rate up to the link
 * (GZ_MOOT_RATES rates, geometric). On 1 Gbit links the ring wins there
 * even against MPI at the link's rate (below 64 KiB, where redoub's
 * exchange at MPI's rate competes with the ring, a call is tens of us, and
 * MPI's rate there is the 64 KiB one extrapolated, repeats or not). The
 * repeats cost 3 of the probe's 8 collective steps there, each a
 * scheduling round where ranks share cores. Agreed inputs only: every rank
 * alike. */
int gz_model_mpi_rate_moot(gz_ctx_t ctx) {
  static const gz_dtype_t types[2] = {GZ_FLOAT32, GZ_FLOAT64};
  gz_prediction_t now[GZ_ROWS], alt[GZ_ROWS];
  gz_model_t m, r;
  double hi;
  gz_model_of_ctx(ctx, &m);
  hi = fmax(m.link_bps, m.mpi_bps);
  r = m;
  for (int d = 0; d < 2; d++) {
    size_t esz = gz_dtype_size(types[d]), n, nr;
    for (size_t count = GZ_PROBE_AR / esz; count * esz <= ((size_t)1 << 30); count *= 2) {
      /* what auto picks at the present rate: the cheapest row, now[0] */
      if (gz_model_predict(&m, "allreduce", count, types[d], now, GZ_ROWS, &n) != GZ_OK ||
          n == 0)
        return 0;
      for (int k = 1; k <= GZ_MOOT_RATES; k++) {
        r.mpi_bps = m.mpi_bps * pow(hi / m.mpi_bps, (double)k / GZ_MOOT_RATES);
        if (gz_model_predict(&r, "allreduce", count, types[d], alt, GZ_ROWS, &nr) !=
                GZ_OK ||
            nr == 0 || seconds_of(alt, nr, now[0].algo) > 1.1 * alt[0].seconds)
          return 0;
      }
    }
  }
  return 1;
}

#define GZ_PROBE_MAX_REPS 3

/* Does the probe time the other repeats of MPI's allreduce? From the
 * first one's fastest rank's time t1 (agreed inputs only):
 *   - when they are cheap: t1 under GZ_PROBE_ENOUGH (a few ms at most:
 *     shared memory, fast links), or two more under an eighth of what the
 *     probe took so far (a busy host whose steps were slow); one repeat
 *     alone is not enough there (8 ranks on shared memory, 2 cores, load
 *     8: one probe in 14 put the MPI path at 8e7 B/s against 1.4-5e8 and
 *     auto picked the ring at 1 MiB);
 *   - longer: only when it looks disturbed, longer than this host's steps
 *     explain: an allreduce of GZ_PROBE_AR is at least 2 ceil(log2 P)
 *     steps, each at most the slowest rank's 8-byte step (its wait for late
 *     neighbours included: ~24 ms at 8 ranks on 2 cores), and its bytes per
 *     link are under a quarter of the 512 KiB step (the slowest rank's).
 *     Within that, one repeat is taken as MPI's own: each repeat costs
 *     20-80 ms where 8 ranks share 2 cores (a path still wrong is
 *     corrected by the calls' learning). */
int gz_model_probe_repeats(const double *v, int size) {
  double t1 = -v[GZ_PV_NAR];
  int steps = 0;
  while ((1 << steps) < size)
    steps++;
  return t1 > 0 && (t1 < GZ_PROBE_ENOUGH || 2 * t1 < v[GZ_PV_ELAPSED] / 8 ||
                    t1 > 2.0 * steps * v[GZ_PV_T8] + v[GZ_PV_LARGE]);
}

void gz_model_probe_apply(gz_ctx_t ctx, const double *v, size_t s1, size_t s2, int ar_n) {
  /* one step's fixed cost: the fastest rank's 8-byte step (the slowest
   * rank's adds its wait for neighbours that entered late: 24 ms against
   * the fastest's 10 us at 8 ranks on 2 cores, which put the ring's
   * predicted time 60 % high), and no step took less (on a busy host an 8-byte step
   * can be descheduled longer than a larger one takes) */
  if (!(ctx->pinned & GZ_PIN_ALPHA) && -v[GZ_PV_NT8] > 0)
    ctx->alpha = fmin(-v[GZ_PV_NT8], v[GZ_PV_LARGE]);
  if (s2 > 0) {
    /* the fastest rank's steps, as for alpha and MPI's allreduce: the
     * slowest rank's add its wait for a neighbour descheduled on a busy
     * host (4 ranks on 2 shared cores at load 18: the link came out at
     * 1.3-7.9e8 B/s, the MPI path capped there, and auto compressed where
     * MPI was 2x faster) */
    double t1 = s1 > 8 ? -v[GZ_PV_NLARGE] : -v[GZ_PV_NT8];
    double t2 = s1 > 8 ? -v[GZ_PV_NMAX] : -v[GZ_PV_NLARGE], t_ar = HUGE_VAL;
    gz_model_t m;
    /* MPI's allreduce: the fastest repeat (per repeat, the fastest rank's) */
    for (int k = 0; k < GZ_PROBE_AR_REPS; k++)
      if (-v[GZ_PV_NAR + k] > 0)
        t_ar = fmin(t_ar, -v[GZ_PV_NAR + k]);
    /* the slope between the two sizes: the fixed costs of a step
     * (scheduling on a busy host, a handshake) cancel. A slope is the
     * difference of two noisy times: one descheduled rank on a busy host
     * made it 30x too small, after which auto kept mpi. The link carried
     * the larger step's bytes in that step's whole time: at least that
     * (alone when t2 is not clearly above t1; never the default 10 Gbit
     * of an unmeasured link). */
    ctx->link_bps = (double)s2 / t2;
    if (t2 > 1.2 * t1)
      ctx->link_bps = fmax(ctx->link_bps, (double)(s2 - s1) / (t2 - t1));
    gz_model_of_ctx(ctx, &m);
    /* the MPI path: its formula inverted at the allreduce's size (alpha,
     * measured, carries the fixed costs) for the fastest repeat of the
     * fastest rank's time: no rank leaves an allreduce before the last one
     * entered, so that rank's time is the collective's own, the others' add
     * their wait for it (on shared memory at load 15, one descheduled rank
     * put the slowest time 25x above the link's and auto compressed); a
     * rank descheduled inside the collective delays all ranks of that
     * repeat, not the others; then bounded: its 2 (P-1)/P D
     * bytes crossed the same links, so at least that over the call's whole
     * time, at most the link (a slope over sizes this small once came out
     * 40x above the link at 8 oversubscribed hosts, and auto then sent
     * 64 MiB through MPI) */
    if (t_ar < HUGE_VAL)
      ctx->bw[GZ_COLL_ALLREDUCE][0] = fmin(
          fmax(invert_bw(&m, gz_algorithm(GZ_COLL_ALLREDUCE, GZ_ALGO_MPI_NAME),
                         (double)ar_n, sizeof(double), t_ar),
               2.0 * (ctx->size - 1) / ctx->size * (double)ar_n * sizeof(double) / t_ar),
          ctx->link_bps);
  }
}

gz_result_t gz_model_probe(gz_ctx_t ctx, int go) {
  unsigned char *buf = ctx->probe_buf;
  double t_start = MPI_Wtime(), t, v[GZ_PV_N] = {0}, *ar = (double *)(void *)buf;
  int want_bw = !(ctx->pinned & GZ_PIN_LINK), ar_n = (int)(GZ_PROBE_AR / sizeof(double));
  size_t s1 = 8, s2 = GZ_PROBE_LARGE;
  gz_result_t rc = GZ_OK;
  ctx->probe_buf = NULL;
  if (!go || !buf || !probe_wanted(ctx))
    goto done; /* no memory for the probe somewhere (agreed): keep the defaults */
  /* the codec at a realistic size, every rank at once (ranks sharing cores
   * slow each other down, as in a call); the slowest rank */
  if (!(ctx->pinned & GZ_PIN_CODEC)) {
    double eps = atomic_load(&process_codec_eps);
    if (!(eps > 0)) {
      eps = gz_calibrate(GZ_PROBE_CODEC_N, 1);
      atomic_store(&process_codec_eps, eps);
    }
    v[GZ_PV_EPS] = -eps;
  }
  t = MPI_Wtime();
  ctx->probe_stage[0] = t - t_start;
  /* bandwidth: ring steps (the ring algorithms' pattern, every link busy in
   * both directions) of a fixed plan, so that no agreement is needed between
   * them: the fastest of two of GZ_PROBE_LARGE, with the latency step
   * between them; then MPI's own allreduce, whose payload agrees on the
   * fastest rank's time of that step (the rank that entered last waited for
   * nobody): a fast link (under GZ_PROBE_ENOUGH) gets steps of
   * GZ_PROBE_MAX, also where a descheduled rank made the others wait (on
   * shared memory under load the link then came out from 512 KiB steps
   * alone, far low). The first step also connects the ring's neighbours
   * (some transports connect lazily): a large one, which is timed twice
   * anyway, so that one 8-byte step suffices for the latency (each step
   * costs a scheduling round where ranks share cores) */
  v[GZ_PV_T8] = v[GZ_PV_LARGE] = v[GZ_PV_MAX] = HUGE_VAL;
  if (want_bw) {
    rc = ring_time(ctx, buf, s2, 1, &v[GZ_PV_LARGE]);
    ctx->probe_stage[2] = MPI_Wtime() - t;
  }
  /* latency: one 8-byte step on connected links (two with the link pinned:
   * the first one connects) */
  t = MPI_Wtime();
  if (rc == GZ_OK)
    rc = ring_time(ctx, buf, 8, want_bw ? 1 : 2, &v[GZ_PV_T8]);
  v[GZ_PV_NT8] = -v[GZ_PV_T8]; /* MAX of the negative: the fastest rank's */
  ctx->probe_stage[1] = MPI_Wtime() - t;
  if (want_bw && rc == GZ_OK) {
    t = MPI_Wtime();
    rc = ring_time(ctx, buf, s2, 1, &v[GZ_PV_LARGE]);
    ctx->probe_stage[2] += MPI_Wtime() - t;
  }
  if (want_bw && rc == GZ_OK) {
    memset(buf, 0, GZ_PROBE_AR);
    ar[0] = -v[GZ_PV_LARGE]; /* MAX of the negative: the fastest rank's */
    ar[1] = v[GZ_PV_EPS];    /* the slowest rank's codec (0: pinned, agreed) */
    t = MPI_Wtime();
    if (MPI_Allreduce(MPI_IN_PLACE, ar, ar_n, MPI_DOUBLE, MPI_MAX, ctx->comm) !=
        MPI_SUCCESS)
      rc = GZ_ERR_MPI;
    ctx->probe_stage[3] = MPI_Wtime() - t;
    v[GZ_PV_NAR] = -ctx->probe_stage[3]; /* MAX of the negative: the fastest rank's */
    ctx->probe_ar_reps = 1;
  }
  if (want_bw && rc == GZ_OK && -ar[0] < GZ_PROBE_ENOUGH &&
      !gz_model_mpi_wins_anyway(ctx, (double)s2 / -ar[0],
                                ar[1] < 0 ? -ar[1] : ctx->codec_eps)) {
    t = MPI_Wtime();
    rc = ring_time(ctx, buf, GZ_PROBE_MAX, GZ_PROBE_MAX_REPS, &v[GZ_PV_MAX]);
    s1 = s2;
    s2 = GZ_PROBE_MAX;
    ctx->probe_stage[2] += MPI_Wtime() - t;
  }
  v[GZ_PV_NLARGE] = -v[GZ_PV_LARGE]; /* MAX of the negative: the fastest rank's */
  v[GZ_PV_NMAX] = -v[GZ_PV_MAX];
  ctx->probe_bytes = want_bw ? (double)s2 : 0;
  if (rc != GZ_OK)
    goto done; /* an MPI failure: the caller's agreement fails on it */
  t = MPI_Wtime();
  v[GZ_PV_ELAPSED] = t - t_start;
  if (MPI_Allreduce(MPI_IN_PLACE, v, GZ_PV_N, MPI_DOUBLE, MPI_MAX, ctx->comm) !=
      MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto done;
  }
  ctx->probe_stage[4] = MPI_Wtime() - t;
  if (!(ctx->pinned & GZ_PIN_CODEC) && v[GZ_PV_EPS] < 0)
    ctx->codec_eps = -v[GZ_PV_EPS];
  gz_model_probe_apply(ctx, v, want_bw ? s1 : 0, want_bw ? s2 : 0, ar_n);
  /* the first allreduce was quick or looks disturbed, and MPI's rate can
   * still change a choice (agreed: every rank alike): the other repeats,
   * timed, then a small agreement of their fastest rank's times (the
   * payload of ar stays: they reduce the same values again) */
  if (want_bw && gz_model_probe_repeats(v, ctx->size) && !gz_model_mpi_rate_moot(ctx)) {
    double more[GZ_PROBE_AR_REPS] = {0};
    for (int k = 1; k < GZ_PROBE_AR_REPS && rc == GZ_OK; k++) {
      t = MPI_Wtime();
      if (MPI_Allreduce(MPI_IN_PLACE, ar, ar_n, MPI_DOUBLE, MPI_MAX, ctx->comm) !=
          MPI_SUCCESS)
        rc = GZ_ERR_MPI;
      t = MPI_Wtime() - t;
      ctx->probe_stage[3] += t;
      more[k] = -t; /* MAX of the negative: the fastest rank's */
    }
    t = MPI_Wtime();
    if (rc != GZ_OK || MPI_Allreduce(MPI_IN_PLACE, more + 1, GZ_PROBE_AR_REPS - 1,
                                     MPI_DOUBLE, MPI_MAX, ctx->comm) != MPI_SUCCESS) {
      rc = GZ_ERR_MPI;
      goto done;
    }
    ctx->probe_stage[4] += MPI_Wtime() - t;
    for (int k = 1; k < GZ_PROBE_AR_REPS; k++)
      v[GZ_PV_NAR + k] = more[k];
    ctx->probe_ar_reps = GZ_PROBE_AR_REPS;
    gz_model_probe_apply(ctx, v, s1, s2, ar_n);
  }
  ctx->probe_seconds = MPI_Wtime() - t_start;
  if (!(ctx->probe_seconds > 0))
    ctx->probe_seconds = 1e-9;
done:
  free(buf);
  return rc;
}

void gz_model_learn(gz_ctx_t ctx, const gz_algorithm_t *algo, double count, size_t esz,
                    double seconds, double predicted) {
  int c = gz_size_class(count * (double)esz), x = gz_row_index(algo);
  gz_seen_t *sn;
  gz_model_t m;
  double sample, cur;
  if (x < 0 || algo->device || algo->coll >= GZ_COLL_P2P || !algo->cost ||
      !(seconds > 0) || !isfinite(seconds))
    return;
  sn = &ctx->seen[c][x];
  sn->n++;
  sn->last = ctx->class_calls[algo->coll][c];
  sn->seconds = seconds;
  sn->predicted = predicted;
  if (ctx->pinned & GZ_PIN_NOLEARN)
    return;
  gz_model_of_ctx(ctx, &m);
  sample = invert_bw(&m, algo, count, esz, seconds);
  cur = gz_path_bw(ctx, algo);
  /* faster than any bandwidth of this path explains, and the path's
   * bandwidth does not change the row's time here (redoub's exchange at the
   * MPI path's slower rate, a codec-bound ring): no news about this path */
  if (sample >= GZ_BW_MAX && gz_model_time(&m, algo, count, esz, cur) ==
                                 gz_model_time(&m, algo, count, esz, GZ_BW_MAX))
    return;
  /* one sample moves the path by at most 100^w (16x): a time that the codec
   * terms alone exceed (codec speed underestimated) sends the inversion to
   * its upper end, which is no news about the wire */
  sample = fmin(fmax(sample, cur / 100), cur * 100);
  /* and never beyond 10 x the link: a path learnt far above it would need
   * many calls to come back when the wire does slow it down */
  sample = fmin(sample, 10 * ctx->link_bps);
  ctx->bw[algo->coll][gz_row_is_mpi(algo) ? 0 : 1] =
      exp(log(cur) + GZ_LEARN_WEIGHT * (log(sample) - log(cur)));
  /* MPI's own path moved its bytes over the links at that rate: the link is
   * at least as fast (a probe on a busy host can put it 30x low, and the
   * cap above would then hold the compressed paths down) */
  if (gz_row_is_mpi(algo) && !(ctx->pinned & GZ_PIN_LINK))
    ctx->link_bps = fmax(ctx->link_bps, ctx->bw[algo->coll][0]);
}

/* v: valid, -valid, key, -key, bytes, -bytes, pre, post, predicted, unused */
void gz_model_pack(gz_ctx_t ctx, double *v) {
  const gz_pending_t *p = &ctx->pend;
  double key = p->valid ? (double)gz_row_index(p->algo) * 16 + (double)p->esz : 0;
  double bytes = p->valid ? p->count * (double)p->esz : 0;
  v[0] = p->valid;
  v[1] = -(double)p->valid;
  v[2] = key;
  v[3] = -key;
  v[4] = bytes;
  v[5] = -bytes;
  v[6] = p->valid ? p->pre : 0;
  v[7] = p->valid ? p->post : 0;
  v[8] = p->valid ? p->predicted : 0;
  v[9] = 0;
}

void gz_model_unpack(gz_ctx_t ctx, const double *v) {
  int explore = ctx->pend.explore;
  memset(&ctx->pend, 0, sizeof ctx->pend);
  /* learn only when every rank had the same sample */
  if (v[0] > 0 && v[1] < 0 && v[2] == -v[3] && v[4] == -v[5]) {
    int key = (int)v[2], esz = key % 16;
    const gz_algorithm_t *algo = gz_row(key / 16);
    if (esz > 0 && algo) /* explore: the same on every rank (agreed decisions) */
      gz_model_measured(ctx, algo, v[4] / esz, (size_t)esz, v[6] + v[7], v[8], explore);
  }
}

void gz_model_end_call(gz_ctx_t ctx, const gz_algorithm_t *ran, int compressed,
                       gz_report_t *report) {
  gz_call_t *cur = &ctx->cur;
  double predicted = 0, measured = 0, now = MPI_Wtime();
  int explored = cur->timed && cur->explore;
  if (cur->timed) {
    /* the host row of what ran (a device row stands for its host twin) */
    const gz_algorithm_t *algo = gz_algorithm(cur->coll, ran->name);
    predicted = algo == cur->algo
                    ? cur->predicted
                    : gz_ctx_model_time(ctx, algo, (size_t)cur->count, cur->esz);
    if (compressed && cur->final_seen) {
      measured = cur->measured;
    } else if (!compressed && cur->t_out > 0) {
      gz_pending_t *p = &ctx->pend;
      p->valid = algo != NULL;
      p->algo = algo;
      p->count = cur->count;
      p->esz = cur->esz;
      p->pre = scaled(ctx, 0, cur->t_in - cur->t0);
      p->post = scaled(ctx, 0, now - cur->t_out);
      p->predicted = predicted;
      p->explore = cur->explore;
      measured = p->pre + p->post;
    }
    cur->timed = 0; /* one sample per call */
  }
  if (report) {
    report->predicted_seconds = predicted > 0 ? predicted : 0;
    report->measured_seconds = measured;
    report->explored = explored;
  }
}

/* The final agreement's share: this call's time so far (pre, post). */
void gz_model_final_pack(gz_ctx_t ctx, double *v) {
  gz_call_t *cur = &ctx->cur;
  int on = cur->timed && cur->t_out > 0 && !cur->final_seen;
  v[0] = on ? scaled(ctx, 1, cur->t_in - cur->t0) : -1;
  v[1] = on ? scaled(ctx, 1, MPI_Wtime() - cur->t_out) : -1;
}

void gz_model_final_unpack(gz_ctx_t ctx, const double *v, int ok) {
  gz_call_t *cur = &ctx->cur;
  if (!ok || !cur->timed || cur->final_seen || !(v[0] >= 0) || !(v[1] >= 0))
    return;
  cur->final_seen = 1;
  cur->measured = v[0] + v[1];
  gz_model_measured(ctx, cur->algo, cur->count, cur->esz, cur->measured, cur->predicted,
                    cur->explore);
}

void gz_model_measured(gz_ctx_t ctx, const gz_algorithm_t *algo, double count, size_t esz,
                       double seconds, double predicted, int explore) {
  if (!algo || algo->coll >= GZ_COLL_P2P || !(seconds > 0) || !isfinite(seconds))
    return;
  ctx->class_time[algo->coll][gz_size_class(count * (double)esz)] += seconds;
  gz_model_learn(ctx, algo, count, esz, seconds, predicted);
  if (explore)
    gz_explore_measured(ctx, algo->coll, count * (double)esz, seconds);
}

gz_result_t gz_ctx_model(gz_ctx_t ctx, gz_model_t *model) {
  if (!ctx || !model)
    return GZ_ERR_ARG;
  gz_model_of_ctx(ctx, model);
  return GZ_OK;
}
