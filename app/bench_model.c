#define _POSIX_C_SOURCE 200809L /* strtok_r */
/*
 * bench_model.c - `gzbench model`: libgzcoll's cost model (the formulas of
 * `auto`, docs/performance-model.md) evaluated for any rank count, link,
 * latency and size, from codec figures measured on this host (or given).
 *
 *   gzbench model --ranks 2,4,8,512 --link 1gbit --size 64MiB
 *   gzbench model --ranks 512 --link 25GBps --alpha 2e-6 --codec-eps 5e9
 *   mpirun -np 4 gzbench model --probe --ranks 4,512
 *
 * --probe: every rank of MPI_COMM_WORLD creates a libgzcoll context, whose
 * probe measures the link, latency, MPI's own allreduce and the codec on the
 * network it runs on (as `auto` does), then runs --learn-calls allreduces of
 * --learn-size under auto, from which the context learns the compressed
 * paths' bandwidth, codec speed and ratio as in any program, and as many on
 * a second context forced to MPI's own path (auto seldom tries a path it
 * does not choose); those inputs replace the defaults, and options given
 * explicitly still override them.
 * Codec figures otherwise: unless --codec-eps and --ratio are given, one pass of each
 * codec phase (quantize, encode, decode-and-reduce, dequantize) runs over a
 * float32 field of --field-mb MiB (gzbench coll's smooth data) at bound -e; codec_eps =
 * 4 n / (total seconds), ratio = 4 n / encoded bytes (the model's units).
 * Prints one row per rank count and size: each algorithm's modelled time
 * and the one `auto` would pick. Without --probe it runs on rank 0 only.
 *
 * --check K (with --probe): the prediction checked in the same run, on the
 * same data: for every algorithm of allreduce at the first --size, the
 * model's time on these ranks (inputs as printed, fixed before any check
 * call), then one warm-up and K calls on a context forced to that
 * algorithm; measured = the median over the K calls of the slowest rank's
 * time. Prints model, measured and their difference per algorithm.
 */
#include "app.h"
#include "bench.h"

#include "gzcoll.h"

#include <argtable2.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* "1gbit", "10gbit", "25GBps", "125MB/s", "1.25e9" (bytes/s) -> bytes/s. */
#define GZ_BENCH_MAX_ALGOS 16 /* algorithms of one collective, at most */

static int parse_rate(const char *s, double *bps) {
  static const struct {
    const char *unit;
    double mul;
  } units[] = {{"", 1},           {"bps", 1},        {"b/s", 1},        {"kbps", 1e3},
               {"kb/s", 1e3},     {"mbps", 1e6},     {"mb/s", 1e6},     {"gbps", 1e9},
               {"gb/s", 1e9},     {"bit", 1.0 / 8},  {"kbit", 1e3 / 8}, {"mbit", 1e6 / 8},
               {"gbit", 1e9 / 8}, {"tbit", 1e12 / 8}};
  char *end, low[16];
  double v = strtod(s, &end);
  size_t k = 0;
  if (end == s || !(v > 0) || !isfinite(v) || strlen(end) >= sizeof low)
    return -1;
  for (; end[k]; k++)
    low[k] = (char)tolower((unsigned char)end[k]);
  low[k] = '\0';
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(low, units[i].unit)) {
      *bps = v * units[i].mul;
      return 0;
    }
  return -1;
}

/* Measure the codec on a smooth generated field (the model's units). */
static int measure_codec(double mb, double eb, double *eps, double *ratio) {
  size_t n = (size_t)(mb * 1024 * 1024 / 4);
  float *x = malloc(n * sizeof *x);
  int64_t *q = malloc(n * sizeof *q);
  size_t cap = gz_codes_bound(n), size = 0;
  unsigned char *buf = malloc(cap);
  double t;
  int rc = -1;
  gz_result_t qrc;
  if (!x || !q || !buf || n < 1024)
    goto done;
  for (size_t i = 0; i < n; i++) /* gzbench coll's default data */
    x[i] = (float)gz_bench_smooth(0, i);
  t = MPI_Wtime();
  /* no limit of ours: the quantizer's own per-code limit applies */
  qrc = gz_quantize(GZ_FLOAT32, x, n, eb, INT64_MAX, q);
  /* GZ_ERR_RANGE: a value at an exact tie (the collectives re-examine those;
   * every code is written): fine for timing */
  if ((qrc != GZ_OK && qrc != GZ_ERR_RANGE) ||
      gz_codes_encode(q, n, buf, cap, &size) != GZ_OK ||
      gz_codes_decode_reduce(GZ_OP_MAX, buf, size, q, n) != GZ_OK ||
      gz_dequantize(GZ_FLOAT32, q, n, eb, x) != GZ_OK)
    goto done;
  t = MPI_Wtime() - t;
  *eps = 4.0 * (double)n / t;
  *ratio = 4.0 * (double)n / (double)size;
  rc = 0;
done:
  free(x);
  free(q);
  free(buf);
  return rc;
}

/* The inputs a context measures on comm (collective): its probe, then what
 * it learns from `calls` allreduces of `bytes` per rank of gzbench coll's
 * smooth data under auto; auto rarely tries the path it does not choose
 * (its exploration budget), so MPI's own path is then learnt from `calls`
 * allreduces on a second context forced to it. */
static int probe_model(MPI_Comm comm, double eb, int calls, double bytes, gz_model_t *m) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL, mctx = NULL;
  gz_model_t mm;
  gz_result_t rc;
  size_t n = (size_t)(bytes / 4);
  float *x = NULL, *y = NULL;
  int rank = 0, nomem;
  MPI_Comm_rank(comm, &rank);
  cfg.error_bound = eb;
  rc = gz_ctx_create(comm, &cfg, &ctx);
  if (rc == GZ_OK && calls > 0 && n > 0) {
    x = malloc(n * sizeof *x);
    y = malloc(n * sizeof *y);
    nomem = !x || !y;
    MPI_Allreduce(MPI_IN_PLACE, &nomem, 1, MPI_INT, MPI_MAX, comm);
    for (size_t i = 0; !nomem && i < n; i++)
      x[i] = (float)gz_bench_smooth(rank, i);
    for (int k = 0; !nomem && k < calls && rc == GZ_OK; k++)
      rc = gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, NULL);
    snprintf(cfg.algo, sizeof cfg.algo, "mpi");
    if (!nomem && rc == GZ_OK)
      rc = gz_ctx_create(comm, &cfg, &mctx);
    for (int k = 0; !nomem && k < calls && rc == GZ_OK; k++)
      rc = gz_allreduce(mctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, NULL);
    if (nomem)
      rc = GZ_ERR_NOMEM;
  }
  if (rc == GZ_OK)
    rc = gz_ctx_model(ctx, m);
  if (rc == GZ_OK && mctx && gz_ctx_model(mctx, &mm) == GZ_OK)
    m->mpi_bps = mm.mpi_bps > 0 ? mm.mpi_bps : mm.link_bps;
  gz_ctx_destroy(mctx);
  gz_ctx_destroy(ctx);
  free(x);
  free(y);
  return rc == GZ_OK ? 0 : -1;
}

/* --check: each algorithm of allreduce forced for `calls` timed calls of
 * `bytes` per rank after one warm-up, beside the model m's time, computed
 * before any of them. Collective (m the same on every rank); rank 0
 * prints. Returns 0, or -1 on a failed call. */
static int check_model(MPI_Comm comm, double eb, int calls, double bytes,
                       const gz_model_t *m) {
  gz_prediction_t model[GZ_BENCH_MAX_ALGOS];
  size_t n = (size_t)(bytes / 4), nmodel = 0;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *t = malloc((size_t)calls * sizeof *t);
  int rank = 0, fail = 0,
      bad = !x || !y || !t || calls < 1 || n == 0 ||
            gz_model_predict(m, "allreduce", n, GZ_FLOAT32, model, GZ_BENCH_MAX_ALGOS,
                             &nmodel) != GZ_OK;
  MPI_Comm_rank(comm, &rank);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (bad)
    goto done;
  for (size_t i = 0; i < n; i++)
    x[i] = (float)gz_bench_smooth(rank, i);
  if (rank == 0)
    printf("# check: allreduce of %.0f bytes per rank, %d calls per algorithm after one "
           "warm-up, median of the slowest rank\n%12s %12s %12s %8s\n",
           bytes, calls, "algorithm", "model ms", "measured ms", "diff");
  for (size_t a = 0; a < nmodel && !fail; a++) { /* cheapest first */
    gz_config_t cfg = GZ_CONFIG_INIT;
    gz_ctx_t ctx = NULL;
    gz_result_t rc;
    if (model[a].seconds < 0)
      continue; /* does not apply here */
    cfg.error_bound = eb;
    snprintf(cfg.algo, sizeof cfg.algo, "%s", model[a].algo);
    rc = gz_ctx_create(comm, &cfg, &ctx);
    for (int k = -1; k < calls && rc == GZ_OK; k++) {
      double t0;
      MPI_Barrier(comm);
      t0 = MPI_Wtime();
      rc = gz_allreduce(ctx, x, y, n, GZ_FLOAT32, GZ_OP_SUM, NULL);
      t0 = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t0, 1, MPI_DOUBLE, MPI_MAX, comm);
      if (k >= 0)
        t[k] = t0;
    }
    gz_ctx_destroy(ctx);
    fail = rc != GZ_OK;
    if (!fail && rank == 0) {
      double med = gz_bench_median(t, calls);
      printf("%12s %12.4g %12.4g %+7.0f%%\n", model[a].algo, model[a].seconds * 1e3,
             med * 1e3, 100.0 * (model[a].seconds - med) / med);
    }
  }
done:
  free(x);
  free(y);
  free(t);
  return bad || fail ? -1 : 0;
}

int gz_bench_model(int argc, char **argv, MPI_Comm comm) {
  struct arg_str *ranks = arg_str0(NULL, "ranks", "LIST", "rank counts (2,4,8,512)");
  struct arg_str *link = arg_str0(NULL, "link", "RATE", "link: 1gbit, 25GBps... (1gbit)");
  struct arg_str *mpi = arg_str0(NULL, "mpi-rate", "RATE", "MPI path's rate (= link)");
  struct arg_dbl *alpha = arg_dbl0(NULL, "alpha", "S", "seconds per message (50e-6)");
  struct arg_str *sizes = arg_str0(NULL, "size", "LIST", "bytes per rank (64MiB)");
  struct arg_str *coll =
      arg_str0(NULL, "collective", "NAME", "allreduce, bcast... (allreduce)");
  struct arg_dbl *eps = arg_dbl0(NULL, "codec-eps", "EPS", "codec elements/s (measured)");
  struct arg_dbl *ratio = arg_dbl0(NULL, "ratio", "R", "compression ratio (measured)");
  struct arg_dbl *e = arg_dbl0("e", "error-bound", "E", "bound of the codec run (1e-4)");
  struct arg_dbl *fmb = arg_dbl0(NULL, "field-mb", "MB", "codec run field size (64)");
  struct arg_lit *probe =
      arg_lit0(NULL, "probe", "measure the inputs on this run's ranks (under mpirun)");
  struct arg_int *lcalls =
      arg_int0(NULL, "learn-calls", "K", "--probe: then learn from K allreduces (6)");
  struct arg_str *lsize =
      arg_str0(NULL, "learn-size", "BYTES", "--probe: bytes per rank of those (16MiB)");
  struct arg_int *check =
      arg_int0(NULL, "check", "K",
               "--probe: then time K calls of each algorithm, beside the model");
  struct arg_lit *help = arg_lit0("h", "help", "this help");
  struct arg_end *end = arg_end(10);
  void *table[] = {ranks, link, mpi,   alpha,  sizes, coll,  eps,  ratio,
                   e,     fmb,  probe, lcalls, lsize, check, help, end};
  gz_model_t m = GZ_MODEL_INIT;
  const char *cname;
  char list[256], *tok, *save = NULL;
  double size_list[16], link_bps = 1.25e8;
  int rank_list[16], nr = 0, ns = 0, code = 0, nerr, rank = 0, probed = -1;
  const char *cols[GZ_BENCH_MAX_ALGOS];
  size_t ncols = 0;
  double eb = 1e-4, learn_bytes = 16.0 * 1024 * 1024;
  int learn_calls, learnt, bad_lsize, check_go = 0;
  double check_bytes = 0;
  MPI_Comm_rank(comm, &rank);
  nerr = arg_parse(argc, argv, table);
  learn_calls = lcalls->count ? lcalls->ival[0] : 6;
  learnt = probe->count && learn_calls > 0;
  if (e->count)
    eb = e->dval[0];
  /* collective, before anything rank 0 alone could stop at */
  bad_lsize = lsize->count && gz_bench_parse_bytes(lsize->sval[0], &learn_bytes) != 0;
  if (!help->count && !nerr && !bad_lsize && probe->count)
    probed = probe_model(comm, eb, learn_calls, learn_bytes, &m);
  if (rank != 0)
    goto share; /* rank 0 reports; gzbench_main shares its exit code */
  if (help->count) {
    printf("Usage: gzbench model [options]\n  The cost model's per-algorithm times "
           "(docs/performance-model.md).\n");
    arg_print_glossary(stdout, table, "  %-24s %s\n");
    goto share;
  }
  if (nerr || bad_lsize) {
    if (bad_lsize)
      fprintf(stderr, "gzbench model: --learn-size: bad size '%s'\n", lsize->sval[0]);
    arg_print_errors(stderr, end, "gzbench model");
    code = 2;
    goto share;
  }
  cname = coll->count ? coll->sval[0] : "allreduce";
  snprintf(list, sizeof list, "%s", ranks->count ? ranks->sval[0] : "2,4,8,512");
  for (tok = strtok_r(list, ",", &save); tok && nr < 16; tok = strtok_r(NULL, ",", &save))
    if ((rank_list[nr++] = atoi(tok)) < 1) {
      fprintf(stderr, "gzbench model: --ranks: bad rank count '%s'\n", tok);
      code = 2;
      goto share;
    }
  snprintf(list, sizeof list, "%s", sizes->count ? sizes->sval[0] : "64MiB");
  for (tok = strtok_r(list, ",", &save); tok && ns < 16; tok = strtok_r(NULL, ",", &save))
    if (gz_bench_parse_bytes(tok, &size_list[ns++]) != 0) {
      fprintf(stderr, "gzbench model: --size: bad size '%s' (e.g. 64MiB, 4096)\n", tok);
      code = 2;
      goto share;
    }
  if (link->count && parse_rate(link->sval[0], &link_bps) != 0) {
    fprintf(stderr, "gzbench model: --link: bad rate '%s' (e.g. 1gbit, 25GBps)\n",
            link->sval[0]);
    code = 2;
    goto share;
  }
  if (probed == 0 && !link->count)
    link_bps = m.link_bps;
  else if (probed != 0 && probe->count) {
    fprintf(stderr,
            "gzbench model: --probe: libgzcoll could not create a context here\n");
    code = 1;
    goto share;
  }
  m.link_bps = link_bps;
  if (mpi->count && parse_rate(mpi->sval[0], &m.mpi_bps) != 0) {
    fprintf(stderr, "gzbench model: --mpi-rate: bad rate '%s'\n", mpi->sval[0]);
    code = 2;
    goto share;
  }
  if (alpha->count || probed != 0)
    m.alpha = alpha->count ? alpha->dval[0] : 50e-6;
  /* the probe alone times the codec but has no data to take a ratio from:
   * the ratio is then taken at the per-rank bound of a strict SUM over the
   * probed ranks (e / P), which is what their allreduce codes; after
   * learning calls the context's own ratio stands */
  if ((probed != 0 && !eps->count) || (!ratio->count && !(probed == 0 && learnt))) {
    double me = 0, mr = 0;
    int nranks = 1;
    if (probed == 0)
      MPI_Comm_size(comm, &nranks);
    if (measure_codec(fmb->count ? fmb->dval[0] : 64, eb / nranks, &me, &mr) != 0) {
      fprintf(stderr, "gzbench model: codec measurement failed (memory?)\n");
      code = 1;
      goto share;
    }
    if (probed != 0)
      m.codec_eps = me;
    m.ratio = mr;
  }
  if (eps->count)
    m.codec_eps = eps->dval[0];
  if (ratio->count)
    m.ratio = ratio->dval[0];
  printf("# gzbench model: %s, link %.4g B/s (%s), mpi path %.4g B/s, compressed path "
         "%.4g B/s, alpha %.3g us, codec %.4g el/s per pass (%s), ratio %.3g (%s)\n",
         cname, m.link_bps,
         link->count             ? "given"
         : probed == 0 && learnt ? "probed and learnt on these ranks"
         : probed == 0           ? "probed on these ranks"
                                 : "default",
         m.mpi_bps > 0 ? m.mpi_bps : m.link_bps, m.comp_bps > 0 ? m.comp_bps : m.link_bps,
         m.alpha * 1e6, m.codec_eps,
         eps->count              ? "given"
         : probed == 0 && learnt ? "learnt"
         : probed == 0           ? "probed"
                                 : "measured",
         m.ratio,
         ratio->count            ? "given"
         : probed == 0 && learnt ? "learnt"
         : probed == 0           ? "measured at e / P"
                                 : "measured");
  /* one column per algorithm of the collective, in the order of the first
   * prediction; auto: the cheapest */
  for (int i = 0; i < nr; i++)
    for (int k = 0; k < ns; k++) {
      gz_prediction_t p[GZ_BENCH_MAX_ALGOS];
      size_t np = 0;
      m.ranks = rank_list[i];
      if (gz_model_predict(&m, cname, (size_t)(size_list[k] / 4), GZ_FLOAT32, p,
                           GZ_BENCH_MAX_ALGOS, &np) != GZ_OK) {
        fprintf(stderr, "gzbench model: unknown collective '%s' or bad inputs\n", cname);
        code = 2;
        goto share;
      }
      if (ncols == 0) {
        printf("%8s %12s", "ranks", "bytes/rank");
        for (ncols = 0; ncols < np; ncols++) {
          cols[ncols] = p[ncols].algo;
          printf(" %12s", cols[ncols]);
        }
        printf(" %10s\n", "auto");
      }
      printf("%8d %12.0f", m.ranks, size_list[k]);
      for (size_t c = 0; c < ncols; c++) {
        size_t j = 0;
        while (j < np && strcmp(p[j].algo, cols[c]) != 0)
          j++;
        if (j == np || p[j].seconds < 0)
          printf(" %12s", "-");
        else
          printf(" %10.4g ms", p[j].seconds * 1e3);
      }
      printf(" %10s\n", m.ranks == 1 || np == 0 ? "mpi" : p[0].algo);
    }
  if (check->count && probed == 0) {
    MPI_Comm_size(comm, &m.ranks);
    check_bytes = size_list[0];
    check_go = strcmp(cname, "allreduce") == 0;
    if (!check_go) {
      fprintf(stderr, "gzbench model: --check times allreduce only\n");
      code = 2;
    }
  }
share: /* --check: every rank times the calls of rank 0's model (its inputs) */
  if (check->count && probed == 0) {
    MPI_Bcast(&check_go, 1, MPI_INT, 0, comm);
    MPI_Bcast(&check_bytes, 1, MPI_DOUBLE, 0, comm);
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, comm);
    if (check_go && check_model(comm, eb, check->ival[0], check_bytes, &m) != 0 &&
        rank == 0) {
      fprintf(stderr, "gzbench model: --check: a timed call failed (memory?)\n");
      code = 1;
    }
  }
  arg_freetable(table, sizeof table / sizeof *table);
  return code;
}
