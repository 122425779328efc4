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
  if (!ctx)
    goto done;
  cu_fill(GZ_FLOAT32, x, n, 5 + (uint64_t)rank, 1.0);
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT32, GZ_OP_SUM, x, n, ref, slop);

  /* phase A: uncompressed data moves 1000x slower (a slow link) */
  ctx->test_scale[0] = 1000;
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
  gz_ctx_destroy(ctx);
done:
  free(x);
  free(y);
  free(ref);
  free(slop);
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

/* Exploration's budget: a compressed path predicted r times slower than the
 * MPI choice, never measured, is tried only once its extra time (r - 1 calls
 * of the choice) fits GZ_EXPLORE_SHARE of the calls made so far: not in a
 * short run, once in a long one. The class's explorations share that
 * budget: a trial is charged its measured extra time, and the next one
 * waits until all of them together fit (checked on the library's own
 * agreed numbers at every trial, no timing). */
static void test_explore_budget(void) {
  const size_t n = (size_t)1 << 14; /* 64 KiB of float32 per rank */
  const gz_algorithm_t *mpi = gz_algorithm(GZ_COLL_ALLREDUCE, "mpi");
  const int c = gz_size_class((double)n * 4);
  float *x = cu_alloc(GZ_FLOAT32, n), *y = cu_alloc(GZ_FLOAT32, n);
  gz_ctx_t ctx = NULL;
  double r, r_then = 0, r_first = 0;
  int calls = 0, first = -1, trials = 0, wrong = 0;
  if (size == 1)
    goto done;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx) == GZ_OK, "budget context");
  if (!ctx)
    goto done;
  cu_fill(GZ_FLOAT32, x, n, 11 + (uint64_t)rank, 1.0);
  /* a slow codec (pinned, the same on every rank: the inputs are agreed)
   * makes the compressed paths predicted 4-8x slower than MPI's */
  ctx->pinned |= GZ_PIN_CODEC;
  ctx->codec_eps = 1e9;
  for (int k = 0; k < 100 && ((r = compressed_over_mpi(ctx, n)) < 4 || r > 8); k++)
    ctx->codec_eps *= r < 4 ? 1 / 1.3 : 1.3;
  GZ_CHECK(r >= 4 && r <= 8, "setup: compressed predicted %.3g x MPI", r);
  for (; calls < 3000 && trials < 2; calls++) {
    gz_report_t rep;
    uint64_t explored = ctx->explored;
    double spent = ctx->explore_spent[GZ_COLL_ALLREDUCE][c];
    double cx = gz_ctx_model_time(ctx, mpi, n, 4); /* the choice's model time */
    double now = (double)ctx->class_calls[GZ_COLL_ALLREDUCE][c] + 1;
    r_then = compressed_over_mpi(ctx, n); /* what this call's choice sees */
    wrong += gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, &rep) != GZ_OK;
    if (ctx->explored == explored)
      continue;
    if (++trials == 1) {
      first = calls + 1;
      r_first = r_then;
    }
    /* what was spent before, and this trial's predicted extra, fit */
    GZ_CHECK(spent + rep.predicted_seconds - cx <= GZ_EXPLORE_SHARE * now * cx * 1.000001,
             "budget: trial %d at call %d: %g s spent + %g s > %g s", trials, calls + 1,
             spent, rep.predicted_seconds - cx, GZ_EXPLORE_SHARE * now * cx);
    /* a compressed trial is measured in its own call: charged its measured
     * extra from then on (an MPI trial, when the measured host turned the
     * choice compressed, is agreed one call later) */
    GZ_CHECK(!rep.compressed || fabs(ctx->explore_spent[GZ_COLL_ALLREDUCE][c] -
                                     fmax(0.0, spent + rep.measured_seconds - cx)) <=
                                    1e-9 * (spent + rep.measured_seconds + cx),
             "budget: trial %d charged %g s, measured extra %g s", trials,
             ctx->explore_spent[GZ_COLL_ALLREDUCE][c] - spent, rep.measured_seconds - cx);
  }
  if (rank == 0)
    printf("  budget: first exploration at call %d (compressed predicted %.3g x mpi), %d "
           "in %d calls\n",
           first, r_first, trials, calls);
  GZ_CHECK(wrong == 0, "budget: %d calls failed", wrong);
  GZ_CHECK(first > 0, "budget: never explored in 3000 calls (%.3g x)", r_then);
  /* one trial costs r - 1 calls of the choice: at most 5 % of the calls so
   * far, so not before call 20 (r - 1) (60 at least here) */
  GZ_CHECK(first < 0 || first >= 20 * (r_first - 1) * 0.999,
           "budget: explored at call %d with compressed %.3g x mpi: a short run paid",
           first, r_first);
  gz_ctx_destroy(ctx);
done:
  free(x);
  free(y);
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

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  test_probe();
  test_learning();
  test_explore_budget();
  test_link_from_mpi();
  test_predict();
  return gz_test_end_mpi();
}
