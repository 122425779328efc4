/* test_model.c - the measured cost model of libgzcoll (model.c, select.c).
 *  - probe: with P > 1 a context measures alpha and the link; the numbers
 *    are plausible and the same on every rank; one rank, or pinned link and
 *    alpha, pay no probe; pins reach the model; different pins on different
 *    ranks are refused;
 *  - learning: a link that changes speed between calls, simulated by scaling
 *    the measured time of one path (ctx->test_scale): auto flips to the
 *    other path within a few calls (at most 7; the MPI path learns one call
 *    late), identically on every rank, and
 *    exploration of the path not chosen stays rare.
 * No timing assertion: what is asserted holds on a slow or busy host too
 * (the scale factors dwarf any host noise). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_internal.h"
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* The probe's stages: each one timed, together within the probe's time,
 * and (explained: the link was measured) named by gz_explain as the link's
 * source (this rank's figures). */
static void check_stages(gz_ctx_t ctx, int explained) {
  char buf[512];
  double sum = 0;
  for (int k = 0; k < 5; k++) {
    GZ_CHECK(ctx->probe_stage[k] >= 0, "stage %d: %g s", k, ctx->probe_stage[k]);
    sum += ctx->probe_stage[k];
  }
  GZ_CHECK(sum <= ctx->probe_seconds, "stages %g s beyond the probe's %g s", sum,
           ctx->probe_seconds);
  if (!explained)
    return;
  GZ_CHECK(gz_explain(ctx, "allreduce", 1 << 20, GZ_FLOAT32, buf, sizeof buf) == GZ_OK,
           "explain");
  GZ_CHECK(strstr(buf, "(measured in ") && strstr(buf, " ms: codec ") &&
               strstr(buf, ", latency ") && strstr(buf, ", ring ") &&
               strstr(buf, ", mpi ") && strstr(buf, ", agree "),
           "explain without the probe's stages: %s", buf);
  /* its largest step: 512 KiB, or 2 MiB on a fast link MPI does not
   * already win (model.c, gz_model_mpi_wins_anyway) */
  GZ_CHECK((ctx->probe_bytes == 512 << 10 && strstr(buf, "(to 512 KiB)")) ||
               (ctx->probe_bytes == 2 << 20 && strstr(buf, "(to 2048 KiB)")),
           "probe's largest step %g B: %s", ctx->probe_bytes, buf);
}

static void test_probe(void) {
  gz_ctx_t ctx = NULL;
  gz_model_t m;
  gz_result_t rc = gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
  GZ_CHECK(rc == GZ_OK, "create: %s", gz_strerror(rc));
  if (rc != GZ_OK)
    return;
  GZ_CHECK(gz_ctx_model(ctx, &m) == GZ_OK && m.version == GZ_MODEL_VERSION, "model");
  if (rank == 0)
    printf("  probe %.3g ms: alpha %.3g us, link %.3g B/s, mpi %.3g B/s, codec %.3g "
           "el/s\n",
           ctx->probe_seconds * 1e3, m.alpha * 1e6, m.link_bps, m.mpi_bps, m.codec_eps);
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, &m, sizeof m), "model differs between ranks");
  GZ_CHECK(m.ranks == size, "ranks %d", m.ranks);
  if (size == 1) {
    GZ_CHECK(ctx->probe_seconds == 0, "one rank paid a probe");
    GZ_CHECK(m.link_bps == GZ_DEFAULT_LINK_BPS && m.alpha == GZ_DEFAULT_ALPHA,
             "one rank: defaults");
  } else {
    GZ_CHECK(ctx->probe_seconds > 0, "no probe with %d ranks", size);
    GZ_CHECK(m.alpha > 0 && m.alpha < 1.0, "alpha %g", m.alpha);
    GZ_CHECK(m.link_bps >= 1e5 && m.link_bps <= 1e13, "link %g", m.link_bps);
    GZ_CHECK(m.mpi_bps >= 1e3 && m.mpi_bps <= 1e13, "mpi %g", m.mpi_bps);
    /* MPI's allreduce moved its bytes over the probed links */
    GZ_CHECK(m.link_bps >= m.mpi_bps, "link %g below MPI's allreduce %g", m.link_bps,
             m.mpi_bps);
    /* measured, never the assumed 10 Gbit (a slope that came out unusable
     * once left the default in place, and auto then chose mpi) */
    GZ_CHECK(m.link_bps != GZ_DEFAULT_LINK_BPS, "link left at the default");
    check_stages(ctx, 1);
  }
  GZ_CHECK(m.codec_eps > 0 && m.ratio == GZ_DEFAULT_RATIO, "codec %g ratio %g",
           m.codec_eps, m.ratio);
  gz_ctx_destroy(ctx);

  /* pins: no probe, the model uses them */
  setenv("GZCOLL_LINK_BPS", "3e8", 1);
  setenv("GZCOLL_ALPHA", "2e-5", 1);
  setenv("GZCOLL_CODEC_EPS", "1e8", 1);
  setenv("GZCOLL_RATIO", "10", 1);
  rc = gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
  GZ_CHECK(rc == GZ_OK, "pinned: %s", gz_strerror(rc));
  if (rc == GZ_OK) {
    char buf[512];
    GZ_CHECK(ctx->probe_seconds == 0, "pinned link and alpha: probe ran");
    gz_ctx_model(ctx, &m);
    GZ_CHECK(m.link_bps == 3e8 && m.alpha == 2e-5 && m.codec_eps == 1e8 && m.ratio == 10,
             "pins: link %g alpha %g codec %g ratio %g", m.link_bps, m.alpha, m.codec_eps,
             m.ratio);
    GZ_CHECK(gz_explain(ctx, "allreduce", 1 << 20, GZ_FLOAT32, buf, sizeof buf) == GZ_OK,
             "explain");
    GZ_CHECK(strstr(buf, "link 3e+08 B/s (GZCOLL_LINK_BPS), alpha 20 us") &&
                 strstr(buf, "codec 4e+08 B/s, ratio 10"),
             "explain pins: %s", buf);
    gz_ctx_destroy(ctx);
  }
  /* the link pinned, alpha not: the probe measures the latency alone (no
   * ring bandwidth, no MPI allreduce) */
  unsetenv("GZCOLL_ALPHA");
  setenv("GZCOLL_LINK_BPS", "3e8", 1);
  rc = gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
  GZ_CHECK(rc == GZ_OK, "pinned link: %s", gz_strerror(rc));
  if (rc == GZ_OK) {
    gz_ctx_model(ctx, &m);
    GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, &m, sizeof m), "pinned link: models differ");
    GZ_CHECK(m.link_bps == 3e8, "pinned link: %g", m.link_bps);
    if (size > 1) {
      GZ_CHECK(ctx->probe_seconds > 0 && m.alpha != GZ_DEFAULT_ALPHA && m.alpha > 0,
               "pinned link: alpha %g not measured", m.alpha);
      GZ_CHECK(ctx->probe_stage[3] == 0, "pinned link: MPI's allreduce timed");
      GZ_CHECK(ctx->probe_stage[2] == 0, "pinned link: ring steps timed");
      check_stages(ctx, 0);
    }
    gz_ctx_destroy(ctx);
  }
  unsetenv("GZCOLL_LINK_BPS");
  /* a pin that differs between ranks: every rank refuses */
  if (size > 1) {
    setenv("GZCOLL_ALPHA", rank == 0 ? "1e-5" : "2e-5", 1);
    rc = gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
    GZ_CHECK(rc == GZ_ERR_ARG, "differing GZCOLL_ALPHA: %s", gz_strerror(rc));
  }
  setenv("GZCOLL_LEARN", "maybe", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_ERR_ARG, "GZCOLL_LEARN=maybe");
  unsetenv("GZCOLL_LEARN");
  unsetenv("GZCOLL_LINK_BPS");
  unsetenv("GZCOLL_ALPHA");
  unsetenv("GZCOLL_CODEC_EPS");
  unsetenv("GZCOLL_RATIO");
}

static void free_all(void *x, void *y, void *ref, void *slop) {
  free(x);
  free(y);
  free(ref);
  free(slop);
}

/* Calls one_call saw reported as exploration trials (gz_report_t.explored). */
static uint64_t reported_trials;

/* One auto allreduce; returns the algorithm that ran (same on all ranks is
 * checked), checks the result against the bound. */
static const char *one_call(gz_ctx_t ctx, const float *x, float *y, const double *ref,
                            const double *slop, size_t n, const char *what, int i) {
  gz_report_t rep;
  char a[GZ_ALGO_NAME_MAX] = {0};
  gz_result_t rc = gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, &rep);
  GZ_CHECK(rc == GZ_OK, "%s call %d: %s", what, i, gz_strerror(rc));
  if (rc != GZ_OK)
    return "auto";
  GZ_CHECK(cu_count_wrong(GZ_FLOAT32, y, ref, slop, n, rep.result_bound, what) == 0,
           "%s call %d values", what, i);
  reported_trials += rep.explored != 0;
  GZ_CHECK(rep.explored == 0 || rep.explored == 1, "%s call %d: explored %d", what, i,
           rep.explored);
  snprintf(a, sizeof a, "%s", rep.algo);
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, a, sizeof a), "%s call %d: algorithms differ",
           what, i);
  GZ_CHECK(rep.predicted_seconds > 0 || size == 1, "%s call %d: no prediction", what, i);
  GZ_CHECK(rep.measured_seconds > 0 || size == 1, "%s call %d: not measured", what, i);
  if (rank == 0)
    printf("  %s %2d: %-6s predicted %.3g ms measured %.3g ms (%s)\n", what, i, rep.algo,
           rep.predicted_seconds * 1e3, rep.measured_seconds * 1e3, rep.reason);
  return rep.algo;
}

static void test_learning(void) {
  const size_t n = (size_t)1 << 18; /* 1 MiB of float32 per rank */
  float *x = cu_alloc(GZ_FLOAT32, n), *y = cu_alloc(GZ_FLOAT32, n);
  double *ref = cu_alloc(GZ_FLOAT64, n), *slop = cu_alloc(GZ_FLOAT64, n);
  gz_ctx_t ctx = NULL;
  const char *a = "auto";
  int flip = -1;
  uint64_t explored0;
  if (size == 1)
    goto done; /* one rank: a local copy, nothing to learn */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "learning context");
  reported_trials = 0;
  if (!ctx)
    goto done;
  cu_fill(GZ_FLOAT32, x, n, 5 + (uint64_t)rank, 1.0);
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT32, GZ_OP_SUM, x, n, ref, slop);

  /* phase A: uncompressed data moves 1e5x slower than compressed data (a
   * slow link). MPI's path learns at most 16x per call (and one call late),
   * so after its 2 calls it is predicted ~256x its probed time, a few
   * hundred ms: the compressed paths' times are scaled down 100x as well, so
   * that a ring call a busy host stretches (at load 25-28 some took longer
   * than that, and auto went back to mpi once more) stays far below it */
  ctx->test_scale[0] = 1000;
  ctx->test_scale[1] = 0.01;
  for (int i = 0; i < 10; i++) {
    a = one_call(ctx, x, y, ref, slop, n, "slow mpi", i);
    if (strcmp(a, "mpi") && flip < 0)
      flip = i;
  }
  GZ_CHECK(flip >= 0 && flip <= 6, "slow MPI path: auto still on mpi (flip %d)", flip);
  GZ_CHECK(strcmp(a, "mpi"), "slow MPI path: back on mpi at the end");

  /* phase B: the MPI path is fast again, the compressed paths 1e5x slower
   * (far beyond the 1000x the MPI path still carries from phase A, so the
   * flip does not depend on the host's relative speed of the two paths) */
  ctx->test_scale[0] = 1;
  ctx->test_scale[1] = 1e5;
  flip = -1;
  for (int i = 0; i < 10; i++) {
    a = one_call(ctx, x, y, ref, slop, n, "slow comp", i);
    if (!strcmp(a, "mpi") && flip < 0)
      flip = i;
  }
  GZ_CHECK(flip >= 0 && flip <= 6, "slow compressed paths: auto stays compressed (%d)",
           flip);
  GZ_CHECK(!strcmp(a, "mpi"), "slow compressed paths: not on mpi at the end");

  /* phase C: steady; the path not chosen is tried rarely */
  explored0 = ctx->explored;
  for (int i = 0; i < 48; i++)
    a = one_call(ctx, x, y, ref, slop, n, "steady", i);
  GZ_CHECK(!strcmp(a, "mpi"), "steady: left mpi");
  GZ_CHECK(ctx->explored - explored0 <= 3, "steady: %llu explorations in 48 calls",
           (unsigned long long)(ctx->explored - explored0));
  /* every trial decided was reported as one, no other call (what the
   * interposer's "explored" counter sums) */
  GZ_CHECK(reported_trials == ctx->explored, "%llu calls reported explored, %llu trials",
           (unsigned long long)reported_trials, (unsigned long long)ctx->explored);
  gz_ctx_destroy(ctx);
done:
  free_all(x, y, ref, slop);
}

/* The cheapest compressed algorithm's predicted time over MPI's for an
 * allreduce of n float32 on ctx (its current, agreed inputs). */
static double compressed_over_mpi(gz_ctx_t ctx, size_t n) {
  gz_model_t m;
  gz_prediction_t p[8];
  size_t np = 0;
  double best = -1, mpi = -1;
  if (gz_ctx_model(ctx, &m) != GZ_OK ||
      gz_model_predict(&m, "allreduce", n, GZ_FLOAT32, p, 8, &np) != GZ_OK)
    return -1;
  for (size_t k = 0; k < np; k++) {
    if (!strcmp(p[k].algo, "mpi"))
      mpi = p[k].seconds;
    else if (p[k].seconds > 0 && (best < 0 || p[k].seconds < best))
      best = p[k].seconds;
  }
  return mpi > 0 ? best / mpi : -1;
}

/* The seconds of the row named name, -1 when there is none. */
static double seconds_of(const gz_prediction_t *p, size_t np, const char *name) {
  for (size_t k = 0; k < np; k++)
    if (!strcmp(p[k].algo, name))
      return p[k].seconds;
  return -1;
}

/* One simulated auto allreduce of n float32: the choice of gz_select, then
 * the simulated time of the path it ran fed to the model as an agreed
 * measurement (gz_model_measured, what the agreements call). Nothing is
 * timed: every rank computes the same. Returns the algorithm; *trial: the
 * call explored. */
static const char *sim_call(gz_ctx_t ctx, size_t n, double t_mpi, double t_comp,
                            int *trial, double *t) {
  gz_choice_t ch;
  uint64_t explored = ctx->explored;
  if (gz_select(ctx, GZ_COLL_ALLREDUCE, n, GZ_FLOAT32, &ch) != GZ_OK || !ch.algo)
    return "error";
  *trial = ctx->explored != explored;
  *t = gz_row_is_mpi(ch.algo) ? t_mpi : t_comp;
  gz_model_measured(ctx, ch.algo, (double)n, 4, *t, ctx->cur.predicted, ctx->cur.explore);
  ctx->cur.timed = 0;
  return ch.algo->name;
}

/* A context whose model inputs are set by hand (the same on every rank):
 * 4 MiB per rank, the cheapest compressed algorithm predicted r_comp times
 * MPI's time (the codec's speed tuned to it). */
static gz_ctx_t sim_ctx(size_t n, double r_comp) {
  gz_ctx_t ctx = NULL;
  double r = -1;
  if (gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) != GZ_OK || !ctx)
    return NULL;
  ctx->alpha = 1e-5;
  ctx->link_bps = 1e9;
  ctx->ratio = 4;
  ctx->codec_eps = 1e9;
  memset(ctx->bw, 0, sizeof ctx->bw);
  for (int k = 0; k < 200 && fabs((r = compressed_over_mpi(ctx, n)) / r_comp - 1) > 0.02;
       k++)
    ctx->codec_eps *= r < r_comp ? 1 / 1.05 : 1.05;
  GZ_CHECK(fabs(r / r_comp - 1) <= 0.02, "setup: compressed predicted %.3g x MPI", r);
  return ctx;
}

/* Exploration pays its own way (simulated times, no timing). The model has
 * ring just behind MPI (1.1x) but ring really takes 2.85x MPI's time (what
 * the interposer met on shared memory: 57 ms against 20 ms):
 *  - a 6-call program runs MPI only, no trial;
 *  - a long one tries ring, each trial admitted only when the earlier
 *    trials' measured extra plus one call of the choice fits
 *    GZ_EXPLORE_SHARE of the time of the calls so far (the rule, checked
 *    from outside on the simulated times), and its trials cost at most
 *    that share plus the last trial's overrun at the end. */
static void test_explore_budget(void) {
  const size_t n = (size_t)1 << 20;
  const gz_algorithm_t *mpi = gz_algorithm(GZ_COLL_ALLREDUCE, "mpi");
  gz_ctx_t ctx;
  double t_mpi, t_comp, total = 0, extra = 0, last = 0;
  int trials = 0, first = -1, calls;
  if (size == 1)
    return;
  ctx = sim_ctx(n, 1.1);
  if (!ctx)
    return;
  t_mpi = gz_ctx_model_time(ctx, mpi, n, 4);
  t_comp = 2.85 * t_mpi;
  for (calls = 1; calls <= 3000; calls++) {
    double t;
    int trial;
    const char *a = sim_call(ctx, n, t_mpi, t_comp, &trial, &t);
    if (calls <= 6)
      GZ_CHECK(!strcmp(a, "mpi") && !trial, "short program: call %d ran %s%s", calls, a,
               trial ? " (a trial)" : "");
    if (trial) {
      trials++;
      if (first < 0)
        first = calls;
      GZ_CHECK(extra + t_mpi <= GZ_EXPLORE_SHARE * total * (1 + 1e-9),
               "budget: trial at call %d: %g s spent + %g s > %g s of %g s", calls, extra,
               t_mpi, GZ_EXPLORE_SHARE * total, total);
      last = t - t_mpi;
      extra += last;
    }
    total += t;
  }
  if (rank == 0)
    printf("  budget: ring 2.85x mpi, modelled 1.1x: first trial at call %d, %d trials "
           "in %d calls, %.3g %% of the time\n",
           first, trials, calls - 1, 100 * extra / total);
  GZ_CHECK(first >= 21,
           "budget: first trial at call %d (one call of the choice needs 20)", first);
  GZ_CHECK(trials >= 1, "budget: the long program never tried ring");
  GZ_CHECK(extra <= GZ_EXPLORE_SHARE * total + last, "budget: trials cost %g s of %g s",
           extra, total);
  gz_ctx_destroy(ctx);
}

/* A wrong first guess corrects itself in a long program (simulated times):
 * the probe put MPI's path 4x too slow, so auto runs ring (MPI predicted 2x
 * ring); MPI really takes 0.3x ring's time. Exploration, on the budget, tries
 * MPI once the class's time pays for it, and auto then stays on MPI. */
static void test_explore_corrects(void) {
  const size_t n = (size_t)1 << 20;
  const gz_algorithm_t *mpi = gz_algorithm(GZ_COLL_ALLREDUCE, "mpi");
  gz_ctx_t ctx;
  double t_comp = 0;
  int first = -1, flip = -1, off = 0;
  if (size == 1)
    return;
  ctx = sim_ctx(n, 1.0);
  if (!ctx)
    return;
  /* a pessimistic MPI path: its predicted time 2x ring's */
  ctx->bw[GZ_COLL_ALLREDUCE][0] = ctx->link_bps;
  for (int k = 0; k < 200 && compressed_over_mpi(ctx, n) > 0.5; k++)
    ctx->bw[GZ_COLL_ALLREDUCE][0] /= 1.05;
  t_comp = gz_ctx_model_time(ctx, mpi, n, 4) * compressed_over_mpi(ctx, n);
  for (int calls = 1; calls <= 400; calls++) {
    double t;
    int trial;
    const char *a = sim_call(ctx, n, 0.3 * t_comp, t_comp, &trial, &t);
    if (trial && first < 0)
      first = calls;
    if (!strcmp(a, "mpi") && !trial && flip < 0)
      flip = calls;
    if (calls > 200 && (strcmp(a, "mpi") != 0) != trial)
      off++; /* the last 200 calls: mpi, but for trials of the other path */
  }
  if (rank == 0)
    printf("  wrong guess: first trial at call %d, on mpi from call %d\n", first, flip);
  GZ_CHECK(first >= 21, "wrong guess: explored at call %d, before the budget paid",
           first);
  GZ_CHECK(flip > 0 && flip <= first + 3,
           "wrong guess: trial at call %d, mpi chosen from call %d", first, flip);
  GZ_CHECK(off == 0, "wrong guess: %d of the last 200 calls left mpi", off);
  gz_ctx_destroy(ctx);
}

/* The probe's stop rule, on inputs set by hand (no timing): with a codec of
 * 3e8 values/s per pass, a 10 Gbit link is fast enough for MPI to win every
 * choice at 4 ranks (64 MiB: MPI 81 ms, ring 252 ms), 1 Gbit is not; a codec
 * 100x faster makes compression worth it at 10 Gbit too. */
static void test_probe_stop(void) {
  gz_ctx_t ctx = NULL;
  if (size != 4)
    return; /* the figures above are for 4 ranks */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "stop context");
  if (!ctx)
    return;
  GZ_CHECK(gz_model_mpi_wins_anyway(ctx, 1.25e9, 3e8) == 1,
           "10 Gbit, codec 3e8: the probe would go on");
  GZ_CHECK(gz_model_mpi_wins_anyway(ctx, 1.25e8, 3e8) == 0,
           "1 Gbit, codec 3e8: the probe would stop");
  GZ_CHECK(gz_model_mpi_wins_anyway(ctx, 1.25e9, 3e10) == 0,
           "10 Gbit, codec 3e10: the probe would stop");
  gz_ctx_destroy(ctx);
}

/* The probe's inputs from its agreed vector (gz_model_probe_apply), on
 * simulated times the same on every rank (no timing): shared-memory-like
 * figures (a 2 MiB ring step in 0.6 ms, a 64 KiB allreduce in 0.1 ms). A
 * rank descheduled during one repeat of MPI's allreduce (all ranks wait
 * for it: that repeat's fastest rank 25x slower) or during two of three
 * leaves every input as undisturbed, and auto's choice with it (the other
 * repeats run: the first one is quick); the estimate does follow the
 * collective when every repeat is slower. */
static void apply_sim_steps(gz_ctx_t ctx, const double ar[GZ_PROBE_AR_REPS],
                            double t_large, double t_max, double out[4]) {
  double v[GZ_PV_N] = {0};
  v[GZ_PV_T8] = 4e-5;
  v[GZ_PV_NT8] = -1e-5;
  v[GZ_PV_LARGE] = t_large; /* 512 KiB */
  v[GZ_PV_MAX] = t_max;     /* 2 MiB */
  v[GZ_PV_NLARGE] = -v[GZ_PV_LARGE];
  v[GZ_PV_NMAX] = -t_max;
  /* as the probe: the first repeat rides in the agreement, the inputs follow
   * from it; the others run only when it was quick or looks disturbed and
   * MPI's rate can still matter, and the inputs are taken again */
  v[GZ_PV_NAR] = -ar[0];
  ctx->pinned = 0;
  gz_model_probe_apply(ctx, v, (size_t)512 << 10, (size_t)2 << 20, 8192);
  out[3] = gz_model_probe_repeats(v, ctx->size) && !gz_model_mpi_rate_moot(ctx);
  for (int k = 1; k < GZ_PROBE_AR_REPS && out[3] > 0; k++)
    v[GZ_PV_NAR + k] = -ar[k];
  gz_model_probe_apply(ctx, v, (size_t)512 << 10, (size_t)2 << 20, 8192);
  out[0] = ctx->alpha;
  out[1] = ctx->link_bps;
  out[2] = ctx->bw[GZ_COLL_ALLREDUCE][0];
}

/* Shared-memory-like ring steps: 512 KiB in 0.2 ms. */
static void apply_sim(gz_ctx_t ctx, const double ar[GZ_PROBE_AR_REPS], double t_max,
                      double out[4]) {
  apply_sim_steps(ctx, ar, 2e-4, t_max, out);
}

/* A redoub call faster than its model, where its exchange is priced at the
 * MPI path's rate (slower than the compressed path): no bandwidth of the
 * compressed path explains it, so that path is left alone (it used to be
 * raised 16x a call, and the ring's prediction with it). Inputs by hand. */
static void test_learn_no_news(void) {
  const gz_algorithm_t *rd = gz_algorithm(GZ_COLL_ALLREDUCE, "redoub");
  const size_t n = (size_t)1 << 20;
  gz_ctx_t ctx = NULL;
  double t, before;
  if (size == 1 || !rd)
    return;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "no-news context");
  if (!ctx)
    return;
  ctx->alpha = 1e-5;
  ctx->link_bps = 1e9;
  ctx->ratio = 4;
  ctx->codec_eps = 1e9;
  ctx->bw[GZ_COLL_ALLREDUCE][0] = 1e8; /* MPI's whole-buffer exchange */
  ctx->bw[GZ_COLL_ALLREDUCE][1] = 1e9; /* the ring's pipelined blocks */
  before = ctx->bw[GZ_COLL_ALLREDUCE][1];
  t = gz_ctx_model_time(ctx, rd, n, 4);
  gz_model_measured(ctx, rd, (double)n, 4, 0.5 * t, t, 0);
  GZ_CHECK(ctx->bw[GZ_COLL_ALLREDUCE][1] == before,
           "redoub at half its model moved the compressed path %.3g -> %.3g", before,
           ctx->bw[GZ_COLL_ALLREDUCE][1]);
  /* slower than its model: the compressed path does explain that */
  gz_model_measured(ctx, rd, (double)n, 4, 3 * t, t, 0);
  GZ_CHECK(ctx->bw[GZ_COLL_ALLREDUCE][1] < before, "redoub at 3x its model: path %.3g",
           ctx->bw[GZ_COLL_ALLREDUCE][1]);
  gz_ctx_destroy(ctx);
}

/* When the probe times the other repeats of MPI's allreduce
 * (gz_model_probe_repeats), on simulated agreed times (no timing): a quick
 * first repeat (0.1 ms, shared memory) always, the others cost little; at
 * 8 ranks on 2 shared cores, where a step costs tens of ms, 60 ms is the
 * host's steps (no repeats), 400 ms is disturbed; on a loaded host with
 * 5 ms steps, 10 ms is within them, 50 ms is not; 6 ms in a probe of 240
 * ms so far (steps of 50 ms): the repeats are cheap; no allreduce timed
 * (link pinned): none. */
static void test_probe_repeats(void) {
  double v[GZ_PV_N] = {0};
  v[GZ_PV_T8] = 4e-5;
  v[GZ_PV_LARGE] = 2e-4;
  v[GZ_PV_NAR] = -1e-4;
  GZ_CHECK(gz_model_probe_repeats(v, 4), "shared memory, 0.1 ms: not repeated");
  v[GZ_PV_T8] = 24e-3;
  v[GZ_PV_LARGE] = 50e-3;
  v[GZ_PV_NAR] = -60e-3;
  GZ_CHECK(!gz_model_probe_repeats(v, 8), "8 ranks on 2 cores, 60 ms: repeated");
  v[GZ_PV_NAR] = -0.4;
  GZ_CHECK(gz_model_probe_repeats(v, 8), "8 ranks on 2 cores, 400 ms: not repeated");
  v[GZ_PV_T8] = 5e-3;
  v[GZ_PV_LARGE] = 6e-3;
  v[GZ_PV_NAR] = -10e-3;
  GZ_CHECK(!gz_model_probe_repeats(v, 8), "5 ms steps, 10 ms: repeated");
  v[GZ_PV_NAR] = -50e-3;
  GZ_CHECK(gz_model_probe_repeats(v, 8), "5 ms steps, 50 ms: not repeated");
  v[GZ_PV_NAR] = -6e-3; /* steps of 50 ms, a probe of 240 ms so far */
  v[GZ_PV_T8] = 50e-3;
  v[GZ_PV_LARGE] = 60e-3;
  v[GZ_PV_ELAPSED] = 0.24;
  GZ_CHECK(gz_model_probe_repeats(v, 8), "6 ms in a 240 ms probe: not repeated");
  v[GZ_PV_NAR] = -60e-3;
  GZ_CHECK(!gz_model_probe_repeats(v, 8), "60 ms in a 240 ms probe: repeated");
  v[GZ_PV_NAR] = 0;
  GZ_CHECK(!gz_model_probe_repeats(v, 4), "no allreduce timed: repeated");
}

static void test_probe_descheduled(void) {
  const double quiet[3] = {1e-4, 1.1e-4, 1e-4}, one[3] = {1e-4, 2.5e-3, 1.2e-4},
               two[3] = {3e-3, 1e-4, 2.5e-3}, slow[3] = {3e-4, 3.3e-4, 3e-4};
  double a[4], b[4], c[4], d[4];
  gz_choice_t cha, chb;
  gz_ctx_t ctx = NULL;
  if (size == 1)
    return;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "descheduled context");
  if (!ctx)
    return;
  memset(ctx->bw, 0, sizeof ctx->bw);
  ctx->codec_eps = 1e9;
  ctx->ratio = 4;
  apply_sim(ctx, quiet, 6e-4, a);
  GZ_CHECK(gz_select(ctx, GZ_COLL_ALLREDUCE, (size_t)1 << 22, GZ_FLOAT32, &cha) == GZ_OK,
           "select, quiet");
  ctx->cur.timed = 0;
  apply_sim(ctx, one, 6e-4, b);
  GZ_CHECK(gz_select(ctx, GZ_COLL_ALLREDUCE, (size_t)1 << 22, GZ_FLOAT32, &chb) == GZ_OK,
           "select, one repeat descheduled");
  ctx->cur.timed = 0;
  apply_sim(ctx, two, 6e-4, c);
  apply_sim(ctx, slow, 6e-4, d);
  for (int i = 0; i < 3; i++) {
    GZ_CHECK(a[i] > 0 && a[i] == b[i] && a[i] == c[i],
             "input %d: quiet %.4g, one repeat descheduled %.4g, two %.4g", i, a[i], b[i],
             c[i]);
  }
  GZ_CHECK(cha.algo && chb.algo && cha.algo == chb.algo, "auto's choice moved: %s / %s",
           cha.algo ? cha.algo->name : "-", chb.algo ? chb.algo->name : "-");
  /* shared-memory figures: the repeats are cheap, they always run */
  GZ_CHECK(a[3] == 1 && b[3] == 1 && c[3] == 1,
           "repeats: quiet %g, second disturbed %g, "
           "first disturbed %g",
           a[3], b[3], c[3]);
  GZ_CHECK(d[2] < a[2], "every repeat 3x slower: MPI path %.4g, not below %.4g", d[2],
           a[2]);
  if (rank == 0)
    printf("  descheduled: link %.3g B/s, mpi path %.3g B/s (all repeats 3x slower: "
           "%.3g), auto %s\n",
           a[1], a[2], d[2], cha.algo ? cha.algo->name : "-");
  gz_ctx_destroy(ctx);
}

/* The probe skips the repeats of MPI's allreduce where no rate they could
 * measure matters (gz_model_mpi_rate_moot), on simulated agreed times (no
 * timing): 1 Gbit-like ring steps (512 KiB in 4.2 ms, 2 MiB in 16.8 ms:
 * 1.25e8 B/s), a codec of 1e9 values/s. A first allreduce quick (1.1 ms)
 * or disturbed (a rank descheduled: 30 ms) would be repeated
 * (gz_model_probe_repeats), but the ring wins every size from 64 KiB even
 * against MPI at the link's rate: no repeats, and auto's choice at 16 MiB
 * is the ring either way. On shared memory (test_probe_descheduled) and
 * with a codec 100x slower (MPI at the link's rate would win) they run. */
static void test_probe_moot(void) {
  const double quick[3] = {1.1e-3, 1e-3, 1e-3}, disturbed[3] = {30e-3, 1e-3, 1e-3};
  double a[4], b[4];
  gz_choice_t cha, chb;
  gz_ctx_t ctx = NULL;
  if (size != 4)
    return; /* the figures above are for 4 ranks */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "moot context");
  if (!ctx)
    return;
  memset(ctx->bw, 0, sizeof ctx->bw);
  ctx->codec_eps = 1e9;
  ctx->ratio = 4;
  apply_sim_steps(ctx, quick, 4.2e-3, 16.8e-3, a);
  GZ_CHECK(gz_select(ctx, GZ_COLL_ALLREDUCE, (size_t)1 << 22, GZ_FLOAT32, &cha) == GZ_OK,
           "select, quick");
  ctx->cur.timed = 0;
  apply_sim_steps(ctx, disturbed, 4.2e-3, 16.8e-3, b);
  GZ_CHECK(gz_select(ctx, GZ_COLL_ALLREDUCE, (size_t)1 << 22, GZ_FLOAT32, &chb) == GZ_OK,
           "select, disturbed");
  ctx->cur.timed = 0;
  GZ_CHECK(a[1] > 1.2e8 && a[1] < 1.3e8, "1 Gbit-like link: %.4g B/s", a[1]);
  GZ_CHECK(a[3] == 0 && b[3] == 0, "1 Gbit, ring ahead anyway: repeats ran (%g, %g)",
           a[3], b[3]);
  GZ_CHECK(b[2] < a[2], "the disturbed first allreduce not taken: %.4g / %.4g", b[2],
           a[2]);
  GZ_CHECK(cha.algo && chb.algo && !strcmp(cha.algo->name, "ring") &&
               cha.algo == chb.algo,
           "auto's choice at 16 MiB: %s / %s", cha.algo ? cha.algo->name : "-",
           chb.algo ? chb.algo->name : "-");
  /* a codec 100x slower: MPI at the link's rate would win big sizes */
  ctx->codec_eps = 1e7;
  apply_sim_steps(ctx, disturbed, 4.2e-3, 16.8e-3, b);
  GZ_CHECK(b[3] == 1, "slow codec, a disturbed first allreduce: no repeats");
  gz_ctx_destroy(ctx);
}

/* A learnt MPI path raises a link the probe put far too low (its bytes
 * crossed the links at that rate), so the compressed paths' samples are no
 * longer capped at 10 x a wrong link. Inputs set by hand, the same on every
 * rank; no timing. */
static void test_link_from_mpi(void) {
  const gz_algorithm_t *mpi = gz_algorithm(GZ_COLL_ALLREDUCE, "mpi");
  const size_t n = (size_t)1 << 22;
  gz_ctx_t ctx = NULL;
  gz_model_t m;
  double t;
  if (size == 1)
    return;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK && mpi, "link context");
  if (!ctx || !mpi)
    return;
  ctx->link_bps = 1e6;                 /* what a disturbed probe measured */
  ctx->bw[GZ_COLL_ALLREDUCE][0] = 1e6; /* the MPI path's first guess */
  gz_model_of_ctx(ctx, &m);
  m.mpi_bps = 1e8; /* the time of an allreduce at 1e8 B/s */
  t = gz_model_time(&m, mpi, (double)n, 4, 1e8);
  for (int k = 0; k < 8; k++)
    gz_model_learn(ctx, mpi, (double)n, 4, t, t);
  gz_ctx_model(ctx, &m);
  GZ_CHECK(m.mpi_bps > 5e7 && m.link_bps >= m.mpi_bps,
           "after 8 MPI calls at 1e8 B/s: mpi path %g, link %g", m.mpi_bps, m.link_bps);
  gz_ctx_destroy(ctx);
}

/* gz_model_predict: pure arithmetic, the 512-rank projection of the docs. */
static void test_predict(void) {
  gz_model_t m = GZ_MODEL_INIT;
  gz_prediction_t p[8];
  size_t np = 0;
  double mpi, ring, redoub;
  m.ranks = 512;
  m.link_bps = 25e9;
  m.codec_eps = 1e10;
  m.ratio = 20;
  GZ_CHECK(gz_model_predict(&m, "allreduce", (size_t)1 << 26, GZ_FLOAT32, p, 8, &np) ==
               GZ_OK,
           "predict");
  mpi = seconds_of(p, np, "mpi");
  ring = seconds_of(p, np, "ring");
  redoub = seconds_of(p, np, "redoub");
  GZ_CHECK(np == 3 && mpi > 0 && ring > 0 && redoub > 0, "predict: allreduce's 3 rows");
  GZ_CHECK(p[0].seconds == fmin(mpi, fmin(ring, redoub)) &&
               p[0].seconds <= p[1].seconds && p[1].seconds <= p[2].seconds,
           "predict: cheapest first");
  /* MPI: g + 2 (P-1) alpha + 2 (P-1)/P D / bw (the ring-like branch) */
  GZ_CHECK(
      fabs(mpi / (9 * 5e-6 + 2 * 511 * 5e-6 + 2.0 * 511 / 512 * 4.0 * (1 << 26) / 25e9) -
           1) < 1e-9,
      "mpi allreduce %g s", mpi);
  /* capacity: the count without rows, the first rows when too few */
  GZ_CHECK(gz_model_predict(&m, "bcast", 10, GZ_FLOAT32, NULL, 0, &np) ==
                   GZ_ERR_CAPACITY &&
               np == 2,
           "predict: bcast has 2 rows (%zu)", np);
  GZ_CHECK(gz_model_predict(&m, "bcast", 1 << 20, GZ_FLOAT32, p + 4, 4, &np) == GZ_OK &&
               np == 2 && p[4].seconds < p[5].seconds &&
               gz_model_predict(&m, "bcast", 1 << 20, GZ_FLOAT32, p, 1, &np) ==
                   GZ_ERR_CAPACITY &&
               np == 2 && !strcmp(p[0].algo, p[4].algo) && p[0].seconds == p[4].seconds,
           "predict: one row of bcast's 2 is the cheapest");
  m.ratio = 0;
  GZ_CHECK(gz_model_predict(&m, "allreduce", 10, GZ_FLOAT32, p, 8, &np) == GZ_ERR_ARG,
           "ratio 0");
  m.ratio = 4;
  GZ_CHECK(gz_model_predict(&m, "nonsense", 10, GZ_FLOAT32, p, 8, &np) == GZ_ERR_ARG,
           "name");
}

/* redoub at P = 2: its one exchange is the probe's step (a blocking
 * MPI_Sendrecv with the one other rank), so the link that step measured
 * bounds its rate, beside the MPI path and the compressed path; at P = 4
 * the probe's ring step is another pattern and the link does not enter.
 * The inputs of the 2 emulated hosts at 1 Gbit (BENCHMARKS.md, i15r): the
 * probe's link 6.5e7 B/s below MPI's learnt 1e8 and the ring's 1.3e8. */
static double redoub_at(int ranks, double link, double mpi_bps, double comp_bps) {
  gz_model_t m = GZ_MODEL_INIT;
  gz_prediction_t p[8];
  size_t np = 0;
  m.ranks = ranks;
  m.alpha = 1e-5;
  m.link_bps = link;
  m.mpi_bps = mpi_bps;
  m.comp_bps = comp_bps;
  m.codec_eps = 6.5e8;
  m.ratio = 4;
  if (gz_model_predict(&m, "allreduce", (size_t)1 << 24, GZ_FLOAT32, p, 8, &np) != GZ_OK)
    return -1;
  return seconds_of(p, np, "redoub");
}

static void test_predict_redoub_p2(void) {
  const double n = 16777216.0, C = 4 * n / 4, t = 1 / 6.5e8, a = 1e-5;
  double r2 = redoub_at(2, 6.5e7, 1e8, 1.3e8), r2fast = redoub_at(2, 2e8, 1e8, 1.3e8);
  double r4 = redoub_at(4, 6.5e7, 1e8, 1.3e8);
  /* P = 2: 3g + (alpha + C / link) + 4 n t, g = alpha */
  GZ_CHECK(fabs(r2 / (3 * a + a + C / 6.5e7 + 4 * n * t) - 1) < 1e-12,
           "redoub at P = 2, link below the MPI path: %g s", r2);
  /* a link faster than the MPI path does not speed it up */
  GZ_CHECK(fabs(r2fast / (3 * a + a + C / 1e8 + 4 * n * t) - 1) < 1e-12,
           "redoub at P = 2, link above the MPI path: %g s", r2fast);
  /* P = 4: 3g + 2 (alpha + C / mpi) + 6 n t, g = 2 alpha: the link not used */
  GZ_CHECK(fabs(r4 / (6 * a + 2 * (a + C / 1e8) + 6 * n * t) - 1) < 1e-12,
           "redoub at P = 4: %g s", r4);
}

/* The binomial scatter's and MPI's modelled seconds (n float32 per rank). */
static void scatter_at(int ranks, double link, double alpha, double eps, double ratio,
                       size_t n, double *binomial, double *mpi) {
  gz_model_t m = GZ_MODEL_INIT;
  gz_prediction_t p[4];
  size_t np = 0;
  m.ranks = ranks;
  m.alpha = alpha;
  m.link_bps = link;
  m.codec_eps = eps;
  m.ratio = ratio;
  *binomial = *mpi = -1;
  if (gz_model_predict(&m, "scatter", n, GZ_FLOAT32, p, 4, &np) != GZ_OK)
    return;
  *binomial = seconds_of(p, np, "binomial");
  *mpi = seconds_of(p, np, "mpi");
}

/* The binomial scatter, 2 P n t of codec: the root's one read of its P
 * blocks quantizes P n values and encodes the (P-1) n codes of the others
 * from L1 ((2P - 1) n t: fused, the encoding is still work, 1.5-1.8 t per
 * value measured, and it is what the root's codec sample counts), then a
 * receiver decodes into values (n t); the tree's L alpha and (P-1) C beta
 * out of the root. At odd and non-power-of-two P. And auto's choice with
 * the inputs the probe measured (i17x's runs, BENCHMARKS.md; ratio 4
 * before any call, 61.24 after): binomial on 4 emulated hosts at 1 Gbit,
 * MPI on shared memory. */
static void test_predict_scatter(void) {
  const size_t n = (size_t)1 << 22;
  const double t = 1 / 5.6e8, a = 1e-5, C = 4.0 * (double)n / 61.24;
  double bin, mpi;
  for (int P = 3; P <= 8; P++) {
    int L = (int)ceil(log2(P));
    scatter_at(P, 1e8, a, 5.6e8, 61.24, n, &bin, &mpi);
    double root = (2 * P - 1) * (double)n * t, receiver = (double)n * t;
    GZ_CHECK(fabs(bin / (3 * L * a + root + receiver + L * a + (P - 1) * C / 1e8) - 1) <
                 1e-12,
             "scatter binomial at P = %d: %g s", P, bin);
    GZ_CHECK(fabs(mpi / (L * a + L * a + (P - 1) * 4.0 * (double)n / 1e8) - 1) < 1e-12,
             "scatter mpi at P = %d: %g s", P, mpi);
  }
  for (int k = 0; k < 2; k++) {
    double ratio = k ? 61.24 : 4;
    scatter_at(4, 6.66e7, 1.6e-5, 2.26e9 / 4, ratio, n, &bin, &mpi); /* 4 hosts, 1 Gbit */
    GZ_CHECK(bin > 0 && bin < mpi, "4 hosts, ratio %g: binomial %g s, mpi %g s", ratio,
             bin, mpi);
    scatter_at(4, 1.11e10, 1.57e-6, 2.13e9 / 4, ratio, n, &bin, &mpi); /* shared memory */
    GZ_CHECK(mpi > 0 && mpi < bin, "shared memory, ratio %g: mpi %g s, binomial %g s",
             ratio, mpi, bin);
  }
}

/* A real call that explores reports it (gz_report_t.explored, what the
 * interposer's "explored" counter sums), and the calls around it do not.
 * The model is set by hand to choose mpi, and from call 2 the class looks
 * long-run (its measured time set large, the same on every rank), so that
 * the budget admits a trial at once: the compressed paths were never
 * measured, so one is tried whatever its prediction, then not again before
 * GZ_EXPLORE_FIRST calls. Nothing is timed. */
static void test_explored_report(void) {
  const size_t n = (size_t)1 << 18;
  float *x = cu_alloc(GZ_FLOAT32, n), *y = cu_alloc(GZ_FLOAT32, n);
  double *ref = cu_alloc(GZ_FLOAT64, n), *slop = cu_alloc(GZ_FLOAT64, n);
  gz_ctx_t ctx = NULL;
  const char *a[4];
  int c = gz_size_class((double)n * 4);
  if (size == 1 || gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) != GZ_OK || !ctx)
    goto done;
  cu_fill(GZ_FLOAT32, x, n, 11 + (uint64_t)rank, 1.0);
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT32, GZ_OP_SUM, x, n, ref, slop);
  reported_trials = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t before = reported_trials;
    /* MPI's path far faster than any compressed one, whatever was learnt:
     * the model chooses mpi on every call */
    ctx->bw[GZ_COLL_ALLREDUCE][0] = 1e13;
    if (i == 2)
      ctx->class_time[GZ_COLL_ALLREDUCE][c] = 1e6; /* seconds: a long-run class */
    a[i] = one_call(ctx, x, y, ref, slop, n, "report", i);
    GZ_CHECK((reported_trials - before == 1) == (i == 2),
             "call %d: reported explored %d, trial expected on call 2 only", i,
             (int)(reported_trials - before));
  }
  GZ_CHECK(ctx->explored == 1, "%llu trials in 4 calls",
           (unsigned long long)ctx->explored);
  GZ_CHECK(!strcmp(a[1], "mpi") && !strcmp(a[3], "mpi") && strcmp(a[2], "mpi"),
           "the trial ran %s, the choice %s / %s", a[2], a[1], a[3]);
  gz_ctx_destroy(ctx);
done:
  free_all(x, y, ref, slop);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  test_probe();
  test_learning();
  test_explored_report();
  test_explore_budget();
  test_explore_corrects();
  test_probe_stop();
  test_probe_repeats();
  test_probe_descheduled();
  test_probe_moot();
  test_learn_no_news();
  test_link_from_mpi();
  test_predict();
  test_predict_redoub_p2();
  test_predict_scatter();
  return gz_test_end_mpi();
}
