/* test_coll_api.c - the collectives' API around the algorithms: contexts
 * and their agreement on the configuration, GZCOLL_ALGO overrides, forced
 * algorithms that do not apply, algorithm names, gz_explain and the cost
 * model's learning, and the testing knobs GZCOLL_CHUNK / GZCOLL_PART_BYTES
 * that push small calls through the multi-chunk and multi-part paths. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Algorithms by name: gz_algorithms lists each collective's, cfg.algo takes
 * a name in any case or an alias, an unknown or unterminated name fails
 * gz_ctx_create, the report says the name of what ran. */
static void test_names(void) {
  static const struct {
    const char *coll, *names;
  } want[] = {{"allreduce", "mpi redoub ring"},
              {"reduce_scatter", "mpi ring"},
              {"reduce_scatter_block", "mpi ring"},
              {"allgather", "mpi ring"},
              {"bcast", "mpi binomial"},
              {"scatter", "mpi binomial"},
              {"alltoall", "mpi pairwise"},
              {"p2p", "mpi compressed"}};
  static const struct {
    const char *given, *coll, *ran;
  } forced[] = {
      {" RING ", "allreduce", "ring"},    {"Recursive_Doubling", "allreduce", "redoub"},
      {"rd", "allreduce", "redoub"},      {"tree", "bcast", "binomial"},
      {"none", "allreduce", "mpi"},       {"pairwise", "alltoall", "pairwise"},
      {"binomial", "scatter", "binomial"}};
  const char *names[8];
  char joined[128], buf[512], want_text[64];
  size_t n = 0;
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    size_t pos = 0;
    GZ_CHECK(gz_algorithms(want[i].coll, names, 8, &n) == GZ_OK, "algorithms of %s",
             want[i].coll);
    joined[0] = '\0';
    for (size_t k = 0; k < n && k < 8; k++)
      pos += (size_t)snprintf(joined + pos, sizeof joined - pos, "%s%s", k ? " " : "",
                              names[k]);
    GZ_CHECK(!strcmp(joined, want[i].names), "algorithms of %s: '%s'", want[i].coll,
             joined);
  }
  GZ_CHECK(gz_algorithms("gather", names, 8, &n) == GZ_ERR_ARG, "algorithms of gather");
  GZ_CHECK(gz_algorithms("bcast", NULL, 0, &n) == GZ_ERR_CAPACITY && n == 2,
           "algorithms: count only");
  GZ_CHECK(gz_algorithms("bcast", NULL, 2, &n) == GZ_ERR_ARG, "algorithms: NULL rows");
  for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
    snprintf(cfg.algo, sizeof cfg.algo, "%s", forced[i].given);
    GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "name '%s'",
             forced[i].given);
    if (!ctx)
      continue;
    GZ_CHECK(gz_explain(ctx, forced[i].coll, 1 << 20, GZ_FLOAT32, buf, sizeof buf) ==
                 GZ_OK,
             "explain '%s'", forced[i].given);
    snprintf(want_text, sizeof want_text, ": %s (forced by config", forced[i].ran);
    GZ_CHECK(strstr(buf, want_text) != NULL, "name '%s' forces %s: %s", forced[i].given,
             forced[i].ran, buf);
    gz_ctx_destroy(ctx);
    ctx = NULL;
  }
  { /* what ran, by name: a forced ring, auto below its size threshold */
    static const struct {
      const char *given;
      size_t n;
      const char *ran;
    } calls[] = {{"RING", 4096, "ring"}, {"auto", 16, "mpi"}};
    float x[4096], y[4096];
    gz_report_t rep;
    for (int i = 0; i < 4096; i++)
      x[i] = (float)(i % 97);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
      snprintf(cfg.algo, sizeof cfg.algo, "%s", calls[i].given);
      GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "%s", calls[i].given);
      GZ_CHECK(ctx &&
                   gz_allreduce(ctx, x, y, calls[i].n, GZ_FLOAT32, GZ_OP_SUM, &rep) ==
                       GZ_OK &&
                   !strcmp(rep.algo, calls[i].ran),
               "report of %s on %zu values: %s", calls[i].given, calls[i].n,
               ctx ? rep.algo : "-");
      gz_ctx_destroy(ctx);
      ctx = NULL;
    }
  }
  cfg.algo[0] = '\0'; /* empty: auto */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "empty name");
  gz_ctx_destroy(ctx);
  ctx = NULL;
  snprintf(cfg.algo, sizeof cfg.algo, "bogus");
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG && !ctx, "name bogus");
  memset(cfg.algo, 'r', sizeof cfg.algo); /* no terminating NUL */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG && !ctx,
           "unterminated name");
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  cfg.version = 2; /* the enum's layout: refused, never misread */
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_VERSION && !ctx,
           "config version 2");
  for (int r = 0; r < GZ_RESULT_COUNT; r++)
    GZ_CHECK(gz_strerror((gz_result_t)r) && *gz_strerror((gz_result_t)r), "strerror %d",
             r);
}

static void test_contexts(void) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_result_t rc;
  rc = gz_ctx_create(MPI_COMM_WORLD, NULL, &ctx);
  GZ_CHECK(rc == GZ_OK && ctx, "create with NULL config: %s", gz_strerror(rc));
  gz_ctx_destroy(ctx);
  gz_ctx_destroy(NULL);
  cfg.error_bound = 0;
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
  GZ_CHECK(rc == GZ_ERR_ARG && !ctx, "zero bound: %s", gz_strerror(rc));
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  cfg.error_bound = NAN;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG, "NaN bound");
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  cfg.version = 99;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_VERSION, "version");
  /* a bad config on one rank only: that rank its cause, the others REMOTE */
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  cfg.bound_policy = rank == size - 1 ? (gz_bound_policy_t)7 : GZ_BOUND_STRICT;
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
  GZ_CHECK(rc == (rank == size - 1 ? GZ_ERR_ARG : GZ_ERR_REMOTE), "one bad config: %s",
           gz_strerror(rc));
  /* configs that differ between ranks: every rank refuses */
  if (size > 1) {
    cfg = (gz_config_t)GZ_CONFIG_INIT;
    cfg.error_bound = rank == 0 ? 1e-3 : 1e-4;
    rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
    GZ_CHECK(rc == GZ_ERR_ARG, "differing configs: %s", gz_strerror(rc));
  }
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, rank == 0 ? NULL : &ctx);
  GZ_CHECK(rc == (rank == 0 ? GZ_ERR_ARG : GZ_ERR_REMOTE), "NULL out: %s",
           gz_strerror(rc));
  GZ_CHECK(gz_ctx_create(MPI_COMM_NULL, &cfg, &ctx) == GZ_ERR_ARG, "COMM_NULL");
  cfg.pool_bytes = 1 << 20;
  rc = gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
  GZ_CHECK(rc == GZ_OK, "preallocated pool: %s", gz_strerror(rc));
  gz_ctx_destroy(ctx);
}

static void explain(gz_ctx_t ctx, const char *coll, size_t n, char *buf, size_t len) {
  gz_result_t rc = gz_explain(ctx, coll, n, GZ_FLOAT32, buf, len);
  GZ_CHECK(rc == GZ_OK || rc == GZ_ERR_ARG, "explain %s: %s", coll, gz_strerror(rc));
  if (rank == 0)
    printf("  %s\n", buf);
}

static void test_overrides(void) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  char buf[512];
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8 * 16];
  gz_result_t rc;

  setenv("GZCOLL_ALGO", "ring", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "env ring");
  explain(ctx, "allreduce", 1 << 24, buf, sizeof buf);
  GZ_CHECK(strstr(buf, ": ring (forced by GZCOLL_ALGO") != NULL, "env ring: %s", buf);
  explain(ctx, "bcast", 1 << 24, buf, sizeof buf);
  GZ_CHECK(strstr(buf, "forced") == NULL, "env ring does not apply to bcast: %s", buf);
  gz_ctx_destroy(ctx);

  setenv("GZCOLL_ALGO", "allreduce=redoub,bcast=binomial", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "env list");
  explain(ctx, "allreduce", 100, buf, sizeof buf);
  GZ_CHECK(strstr(buf, ": redoub (forced") != NULL, "env list allreduce: %s", buf);
  explain(ctx, "bcast", 100, buf, sizeof buf);
  GZ_CHECK(strstr(buf, ": binomial (forced") != NULL, "env list bcast: %s", buf);
  gz_ctx_destroy(ctx);

  setenv("GZCOLL_ALGO", "allreduce=binomial", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG, "env not applicable");
  setenv("GZCOLL_ALGO", "bogus", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG, "env bogus");
  unsetenv("GZCOLL_ALGO");

  /* a config forcing an algorithm where it does not apply: GZ_ERR_ARG on all */
  snprintf(cfg.algo, sizeof cfg.algo, "ring");
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "config ring");
  rc = gz_bcast(ctx, x, 8, GZ_FLOAT32, 0, NULL);
  GZ_CHECK(rc == GZ_ERR_ARG, "ring for bcast: %s", gz_strerror(rc));
  rc = gz_scatter(ctx, y, x, 8, GZ_FLOAT32, 0, NULL);
  GZ_CHECK(rc == GZ_ERR_ARG, "ring for scatter: %s", gz_strerror(rc));
  rc = gz_allreduce(ctx, x, y, 8, GZ_FLOAT32, GZ_OP_SUM, NULL);
  GZ_CHECK(rc == GZ_OK, "ring for allreduce: %s", gz_strerror(rc));
  rc = gz_allgather(ctx, x, y, 8, GZ_FLOAT32, NULL);
  GZ_CHECK(rc == GZ_OK, "ring for allgather: %s", gz_strerror(rc));
  explain(ctx, "alltoall", 8, buf, sizeof buf);
  GZ_CHECK(strstr(buf, "error (ring does not apply") != NULL, "explain n/a: %s", buf);
  gz_ctx_destroy(ctx);
}

static void test_explain(void) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  char buf[512], before[512];
  const size_t n = 200000;
  float *x = cu_alloc(GZ_FLOAT32, n), *y = cu_alloc(GZ_FLOAT32, n);
  gz_model_t m;
  /* every input pinned: the choice does not depend on the host's speed (a
   * codec at 1.6 MB/s under valgrind once made this compressed choice mpi) */
  cfg.link_bytes_per_s = 1e6;
  setenv("GZCOLL_CODEC_EPS", "2e8", 1);
  setenv("GZCOLL_ALPHA", "5e-6", 1);
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "explain context");
  unsetenv("GZCOLL_CODEC_EPS");
  unsetenv("GZCOLL_ALPHA");
  explain(ctx, "allreduce", 16777216, buf, sizeof buf);
  GZ_CHECK(strncmp(buf, "allreduce 16777216 x float32 on ", 32) == 0 &&
               strstr(buf, "cost model") && strstr(buf, "link 1e+06 B/s (config)") &&
               strstr(buf, "alpha 5 us") && strstr(buf, "codec 8e+08 B/s, ratio 4"),
           "explain format: %s", buf);
  if (size == 1)
    GZ_CHECK(strstr(buf, ": mpi (single rank") != NULL, "explain P=1: %s", buf);
  else
    GZ_CHECK(strstr(buf, ": mpi") == NULL, "slow link, big message: compressed: %s", buf);
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, buf, strlen(buf)), "explain differs by rank");
  explain(ctx, "bcast", 10, buf, sizeof buf);
  GZ_CHECK(size == 1 || strstr(buf, ": mpi (below") != NULL, "explain small: %s", buf);
  explain(ctx, "scatter", 1 << 20, buf, sizeof buf);
  explain(ctx, "send", 1 << 20, buf, sizeof buf);
  GZ_CHECK(gz_explain(ctx, "nonsense", 5, GZ_FLOAT32, buf, sizeof buf) == GZ_ERR_ARG,
           "explain bad name");
  /* the ratio is learnt from compressed calls, identically on every rank */
  explain(ctx, "allreduce", n, before, sizeof before);
  gz_ctx_destroy(ctx);
  snprintf(cfg.algo, sizeof cfg.algo, "ring");
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "learning context");
  cu_fill(GZ_FLOAT32, x, n, 3 + (uint64_t)rank, 1.0);
  GZ_CHECK(gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, NULL) == GZ_OK, "learn 1");
  GZ_CHECK(gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, NULL) == GZ_OK, "learn 2");
  explain(ctx, "allreduce", n, buf, sizeof buf);
  GZ_CHECK(gz_ctx_model(ctx, &m) == GZ_OK, "model");
  GZ_CHECK(size == 1 || (m.ratio != 4.0 && m.ratio > 1), "ratio not learnt: %g", m.ratio);
  GZ_CHECK(size == 1 || strstr(buf, "; measured ") != NULL, "no measured time: %s", buf);
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, buf, strlen(buf)), "learnt model differs");
  GZ_CHECK(cu_same_on_all(MPI_COMM_WORLD, &m, sizeof m), "learnt inputs differ");
  gz_ctx_destroy(ctx);
  free(x);
  free(y);
}

/* Tiny chunks and parts: the ring pipelines many chunks per block, ReDoub,
 * bcast, scatter and alltoall split messages into parts. */
static void test_knobs(void) {
  const size_t n = 20011;
  const char *const algos[6] = {"redoub", "ring", "binomial", "pairwise", "auto", "mpi"};
  double *x = cu_alloc(GZ_FLOAT64, n * (size_t)size),
         *y = cu_alloc(GZ_FLOAT64, n * (size_t)size);
  double *ref = cu_alloc(GZ_FLOAT64, n * (size_t)size),
         *slop = cu_alloc(GZ_FLOAT64, n * (size_t)size);
  gz_ctx_t ctx[6];
  gz_report_t rep;
  setenv("GZCOLL_CHUNK", "64", 1);
  setenv("GZCOLL_PART_BYTES", "512", 1);
  for (int a = 0; a < 6; a++)
    ctx[a] = cu_ctx(MPI_COMM_WORLD, algos[a], 1e-4, GZ_EB_ABS, GZ_BOUND_STRICT);
  unsetenv("GZCOLL_CHUNK");
  unsetenv("GZCOLL_PART_BYTES");
  cu_fill(GZ_FLOAT64, x, n * (size_t)size, 11 + (uint64_t)rank, 2.0);
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT64, GZ_OP_SUM, x, n, ref, slop);
  for (int a = 0; a < 2; a++) {
    GZ_CHECK(gz_allreduce(ctx[a], x, y, n, GZ_FLOAT64, GZ_OP_SUM, &rep) == GZ_OK,
             "knobs allreduce %s", algos[a]);
    GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref, slop, n, rep.result_bound, "knobs") == 0,
             "knobs allreduce %s values", algos[a]);
  }
  cu_reference(MPI_COMM_WORLD, GZ_FLOAT64, GZ_OP_MAX, x, n * (size_t)size, ref, NULL);
  GZ_CHECK(gz_reduce_scatter_block(ctx[1], x, y, n, GZ_FLOAT64, GZ_OP_MAX, &rep) == GZ_OK,
           "knobs reduce_scatter");
  GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref + (size_t)rank * n, NULL, n,
                          rep.result_bound, "knobs rs") == 0,
           "knobs reduce_scatter values");
  /* bcast and scatter from the last rank, allgather, alltoall */
  cu_fill(GZ_FLOAT64, ref, n * (size_t)size, 77, 2.0);
  memcpy(y, ref, n * sizeof *y * (size_t)size);
  GZ_CHECK(gz_bcast(ctx[2], y, n, GZ_FLOAT64, size - 1, &rep) == GZ_OK, "knobs bcast");
  GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref, NULL, n, rep.result_bound, "bcast") == 0,
           "knobs bcast values");
  GZ_CHECK(gz_scatter(ctx[2], ref, y, n, GZ_FLOAT64, size - 1, &rep) == GZ_OK,
           "knobs scatter");
  GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref + (size_t)rank * n, NULL, n,
                          rep.result_bound, "scatter") == 0,
           "knobs scatter values");
  for (size_t i = 0; i < n; i++)
    x[i] = ref[(size_t)rank * n + i];
  GZ_CHECK(gz_allgather(ctx[1], x, y, n, GZ_FLOAT64, &rep) == GZ_OK, "knobs allgather");
  GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref, NULL, n * (size_t)size, rep.result_bound,
                          "allgather") == 0,
           "knobs allgather values");
  for (int d = 0; d < size; d++)
    for (size_t i = 0; i < n; i++)
      x[(size_t)d * n + i] = 1000.0 * rank + d + 1e-3 * (double)i;
  GZ_CHECK(gz_alltoall(ctx[3], x, y, n, GZ_FLOAT64, &rep) == GZ_OK, "knobs alltoall");
  for (int s = 0; s < size; s++)
    for (size_t i = 0; i < n; i++)
      ref[(size_t)s * n + i] = 1000.0 * s + rank + 1e-3 * (double)i;
  GZ_CHECK(cu_count_wrong(GZ_FLOAT64, y, ref, NULL, n * (size_t)size, rep.result_bound,
                          "alltoall") == 0,
           "knobs alltoall values");
  for (int a = 0; a < 6; a++)
    gz_ctx_destroy(ctx[a]);
  free(x);
  free(y);
  free(ref);
  free(slop);
}

/* cfg.mpi_sum_bound: the MPI path's SUM reports its floating-point bound
 * (one more read of the input), or skips that read and claims none; the
 * values are MPI's either way. */
static void test_mpi_sum_bound(void) {
  const size_t n = 4099;
  double *x = cu_alloc(GZ_FLOAT64, n), *y = cu_alloc(GZ_FLOAT64, n),
         *z = cu_alloc(GZ_FLOAT64, n);
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_report_t rep;
  cu_fill(GZ_FLOAT64, x, n, 31 + (uint64_t)rank, 2.0);
  MPI_Allreduce(x, z, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  snprintf(cfg.algo, sizeof cfg.algo, "mpi");
  for (int want = 1; want >= 0; want--) {
    cfg.mpi_sum_bound = want;
    GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK, "mpi_sum_bound %d",
             want);
    if (!ctx)
      continue;
    GZ_CHECK(gz_allreduce(ctx, x, y, n, GZ_FLOAT64, GZ_OP_SUM, &rep) == GZ_OK &&
                 memcmp(y, z, n * sizeof *y) == 0,
             "mpi_sum_bound %d: not MPI's sum", want);
    GZ_CHECK(want ? isfinite(rep.result_bound) && (rep.result_bound > 0 || size == 1)
                  : rep.result_bound == HUGE_VAL,
             "mpi_sum_bound %d: reported bound %g", want, rep.result_bound);
    gz_ctx_destroy(ctx);
  }
  cfg.mpi_sum_bound = 2;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_ARG, "mpi_sum_bound 2");
  free(x);
  free(y);
  free(z);
}

int main(int argc, char **argv) {
  gz_test_init_mpi(&argc, &argv, &rank, &size);
  test_names();
  test_contexts();
  test_overrides();
  test_explain();
  test_knobs();
  test_mpi_sum_bound();
  return gz_test_end_mpi();
}
