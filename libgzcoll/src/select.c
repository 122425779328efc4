/*
 * select.c - which algorithm runs, and why: the registry of algorithms per
 * collective, the cost model behind `auto`, the overrides (config and
 * GZCOLL_ALGO, resolved in ctx.c), gz_explain and gz_algo_parse.
 *
 * Cost model (seconds). P ranks, L = ceil(log2 P), n elements of s bytes,
 * D = n s, alpha per message, beta = 1 / link bandwidth, CR the measured
 * compression ratio of integer codes against 4-byte values (so D / CR below
 * stands for 4 n / CR bytes whatever the type), t = 1 / (codec elements per
 * second of one pass: quantize, encode, decode(-reduce) or dequantize),
 * g = L alpha for one small status allreduce (every path has one; compressed
 * paths three with the final outcome and, for REL, the range).
 *   allreduce  mpi     g + min(L (alpha + D beta), 2(P-1) alpha + 2(P-1)/P D beta)
 *              redoub  3g + S (alpha + D beta / CR) + (2 + 2S) n t,
 *                      S = floor(log2 P) + 2 if P is not a power of two
 *              ring    3g + 2 n t + (P-1) [alpha + max(D beta / (P CR), 2 n t / P)]
 *                         + n t / P + (P-1) [alpha + max(D beta / (P CR), n t / P)]
 *   reduce_scatter (n per block)
 *              mpi     g + (P-1)(alpha + D beta)
 *              ring    3g + (P + 1) n t + (P-1) [alpha + max(D beta / CR, 2 n t)]
 *   allgather  mpi     g + (P-1)(alpha + D beta)
 *              ring    3g + 2 n t + (P-1) [alpha + max(D beta / CR, 2 n t)]
 *   bcast      mpi     g + min(L (alpha + D beta), (L + P - 1) alpha + 2 (P-1)/P D beta)
 *              binomial 3g + 5 n t + L (alpha + D beta / CR)
 *   scatter    mpi     g + L alpha + (P-1) D beta
 *              binomial 3g + 2 P n t + L alpha + (P-1) D beta / CR
 *   alltoall   mpi     g + (P-1)(alpha + D beta)
 *              pairwise 3g + P n t + (P-1)(alpha + D beta / CR + 3 n t)
 *   p2p        mpi     alpha + D beta;  compressed alpha + D beta / CR + 4 n t
 * Auto takes the cheapest, except: one rank -> mpi (a local copy), fewer than
 * GZ_AUTO_MIN_BYTES per rank -> mpi (latency-bound: compression cannot pay).
 * The inputs (alpha, beta, codec speed, ratio) are the same on every rank
 * (ctx.c), so every rank makes the same choice. Codec speed: calibrated at
 * gz_ctx_create, then measured by every compressed call large enough to
 * time; ratio: 4 until a compressed call measured one (one estimate for all
 * collectives of the context, the latest, minimum over ranks).
 */
#include "coll_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The registry: which compressed algorithm serves which collective. mpi and
 * auto apply everywhere. For p2p any compressed name means "compressed". */
static const struct {
  gz_coll_t coll;
  gz_algo_t algo;
} registry[] = {
    {GZ_COLL_ALLREDUCE, GZ_ALGO_REDOUB},    {GZ_COLL_ALLREDUCE, GZ_ALGO_RING},
    {GZ_COLL_REDUCE_SCATTER, GZ_ALGO_RING}, {GZ_COLL_ALLGATHER, GZ_ALGO_RING},
    {GZ_COLL_BCAST, GZ_ALGO_BINOMIAL},      {GZ_COLL_SCATTER, GZ_ALGO_BINOMIAL},
    {GZ_COLL_ALLTOALL, GZ_ALGO_PAIRWISE},
};

int gz_algo_applies(gz_coll_t coll, gz_algo_t algo) {
  if (algo == GZ_ALGO_AUTO || algo == GZ_ALGO_MPI || coll == GZ_COLL_P2P)
    return (int)algo >= 0 && algo < GZ_ALGO_COUNT;
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (registry[i].coll == coll && registry[i].algo == algo)
      return 1;
  return 0;
}

const char *gz_coll_name(gz_coll_t coll) {
  static const char *const names[GZ_COLL_COUNT] = {
      "allreduce", "reduce_scatter", "allgather", "bcast", "scatter", "alltoall", "p2p"};
  return (int)coll >= 0 && coll < GZ_COLL_COUNT ? names[coll] : "unknown";
}

gz_result_t gz_algo_parse(const char *name, gz_algo_t *algo) {
  static const struct {
    const char *name;
    gz_algo_t algo;
  } aliases[] = {{"recursive_doubling", GZ_ALGO_REDOUB},
                 {"rd", GZ_ALGO_REDOUB},
                 {"tree", GZ_ALGO_BINOMIAL},
                 {"none", GZ_ALGO_MPI}};
  char low[32];
  size_t len;
  if (!name || !algo)
    return GZ_ERR_ARG;
  while (isspace((unsigned char)*name))
    name++;
  len = strlen(name);
  while (len && isspace((unsigned char)name[len - 1]))
    len--;
  if (len == 0 || len >= sizeof low)
    return GZ_ERR_ARG;
  for (size_t i = 0; i < len; i++)
    low[i] = (char)tolower((unsigned char)name[i]);
  low[len] = '\0';
  for (int a = 0; a < GZ_ALGO_COUNT; a++) {
    if (strcmp(low, gz_algo_name((gz_algo_t)a)) == 0) {
      *algo = (gz_algo_t)a;
      return GZ_OK;
    }
  }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    if (strcmp(low, aliases[i].name) == 0) {
      *algo = aliases[i].algo;
      return GZ_OK;
    }
  }
  return GZ_ERR_ARG;
}

static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }

/* Modelled seconds of one algorithm; < 0 when it does not apply. */
static double model(gz_ctx_t ctx, gz_coll_t coll, gz_algo_t algo, size_t count,
                    size_t esz) {
  double P = ctx->size, n = (double)count, D = n * (double)esz;
  double a = ctx->alpha, b = 1.0 / ctx->link_bps;
  double C = n * 4.0 / ctx->ratio; /* compressed bytes: the ratio is vs 4-byte values */
  double t = 1.0 / ctx->codec_eps;
  double L = ctx->size > 1 ? ceil(log2(P)) : 0, g = L * a;
  if (algo == GZ_ALGO_AUTO || !gz_algo_applies(coll, algo))
    return -1;
  switch (coll) {
  case GZ_COLL_ALLREDUCE:
    if (algo == GZ_ALGO_MPI)
      return g + dmin(L * (a + D * b), 2 * (P - 1) * a + 2 * (P - 1) / P * D * b);
    if (algo == GZ_ALGO_REDOUB) {
      double k = floor(log2(P)), S = k + (ldexp(1.0, (int)k) != P ? 2 : 0);
      return 3 * g + S * (a + C * b) + (2 + 2 * S) * n * t;
    }
    return 3 * g + 2 * n * t + (P - 1) * (a + dmax(C * b / P, 2 * n * t / P)) +
           n * t / P + (P - 1) * (a + dmax(C * b / P, n * t / P));
  case GZ_COLL_REDUCE_SCATTER:
    if (algo == GZ_ALGO_MPI)
      return g + (P - 1) * (a + D * b);
    return 3 * g + (P + 1) * n * t + (P - 1) * (a + dmax(C * b, 2 * n * t));
  case GZ_COLL_ALLGATHER:
    if (algo == GZ_ALGO_MPI)
      return g + (P - 1) * (a + D * b);
    return 3 * g + 2 * n * t + (P - 1) * (a + dmax(C * b, 2 * n * t));
  case GZ_COLL_BCAST:
    if (algo == GZ_ALGO_MPI)
      return g + dmin(L * (a + D * b), (L + P - 1) * a + 2 * (P - 1) / P * D * b);
    return 3 * g + 5 * n * t + L * (a + C * b);
  case GZ_COLL_SCATTER:
    if (algo == GZ_ALGO_MPI)
      return g + L * a + (P - 1) * D * b;
    return 3 * g + 2 * P * n * t + L * a + (P - 1) * C * b;
  case GZ_COLL_ALLTOALL:
    if (algo == GZ_ALGO_MPI)
      return g + (P - 1) * (a + D * b);
    return 3 * g + P * n * t + (P - 1) * (a + C * b + 3 * n * t);
  case GZ_COLL_P2P:
    if (algo == GZ_ALGO_MPI)
      return a + D * b;
    return a + C * b + 4 * n * t;
  default:
    return -1;
  }
}

/* "ring 41.2 ms, redoub 63 ms, mpi 130 ms" in increasing cost. */
static void format_costs(const gz_choice_t *ch, gz_coll_t coll, char *buf, size_t len) {
  int used[GZ_ALGO_COUNT] = {0};
  size_t pos = 0;
  buf[0] = '\0';
  for (;;) {
    int best = -1;
    for (int a = 0; a < GZ_ALGO_COUNT; a++)
      if (!used[a] && ch->cost[a] >= 0 && (best < 0 || ch->cost[a] < ch->cost[best]))
        best = a;
    if (best < 0 || pos >= len)
      break;
    used[best] = 1;
    pos += (size_t)snprintf(
        buf + pos, len - pos, "%s%s %.3g ms", pos ? ", " : "",
        coll == GZ_COLL_P2P && best != GZ_ALGO_MPI ? "compressed" : gz_algo_name(best),
        ch->cost[best] * 1e3);
  }
}

gz_result_t gz_select(gz_ctx_t ctx, gz_coll_t coll, size_t count, gz_dtype_t dtype,
                      gz_choice_t *ch) {
  size_t esz = gz_dtype_size(dtype) ? gz_dtype_size(dtype) : 4;
  gz_algo_t best = GZ_ALGO_MPI, second = GZ_ALGO_AUTO;
  double bytes = (double)count * (double)esz;
  memset(ch, 0, sizeof *ch);
  for (int a = 0; a < GZ_ALGO_COUNT; a++)
    ch->cost[a] = model(ctx, coll, (gz_algo_t)a, count, esz);
  if (coll == GZ_COLL_P2P) { /* one compressed variant: price it once */
    for (int a = GZ_ALGO_REDOUB; a < GZ_ALGO_COUNT; a++)
      ch->cost[a] = -1;
    ch->cost[GZ_ALGO_PAIRWISE] = model(ctx, coll, GZ_ALGO_PAIRWISE, count, esz);
  }
  if (ctx->force_bad[coll]) {
    ch->algo = ctx->cfg.algo;
    ch->forced = 1;
    snprintf(ch->reason, sizeof ch->reason, "%s does not apply to %s",
             gz_algo_name(ctx->cfg.algo), gz_coll_name(coll));
    return GZ_ERR_ARG;
  }
  if (ctx->forced[coll] != GZ_ALGO_AUTO) {
    ch->algo = ctx->forced[coll];
    ch->forced = 1;
    snprintf(ch->reason, sizeof ch->reason, "forced by %s",
             ctx->force_src[coll] == GZ_FORCE_ENV ? "GZCOLL_ALGO" : "config");
    return GZ_OK;
  }
  if (ctx->size == 1) {
    ch->algo = GZ_ALGO_MPI;
    snprintf(ch->reason, sizeof ch->reason, "single rank: local copy");
    return GZ_OK;
  }
  if (bytes < GZ_AUTO_MIN_BYTES) {
    ch->algo = GZ_ALGO_MPI;
    snprintf(ch->reason, sizeof ch->reason,
             "below %u B per rank: compression does not pay", GZ_AUTO_MIN_BYTES);
    return GZ_OK;
  }
  for (int a = 0; a < GZ_ALGO_COUNT; a++)
    if (ch->cost[a] >= 0 && ch->cost[a] < ch->cost[best])
      best = (gz_algo_t)a;
  for (int a = 0; a < GZ_ALGO_COUNT; a++)
    if (a != (int)best && ch->cost[a] >= 0 &&
        (second == GZ_ALGO_AUTO || ch->cost[a] < ch->cost[second]))
      second = (gz_algo_t)a;
  ch->algo = best;
  ch->by_model = 1;
  snprintf(ch->reason, sizeof ch->reason, "auto: cost model %s %.3g ms < %s %.3g ms",
           coll == GZ_COLL_P2P && best != GZ_ALGO_MPI ? "compressed" : gz_algo_name(best),
           ch->cost[best] * 1e3,
           coll == GZ_COLL_P2P && second != GZ_ALGO_MPI ? "compressed"
                                                        : gz_algo_name(second),
           ch->cost[second] * 1e3);
  return GZ_OK;
}

gz_result_t gz_explain(gz_ctx_t ctx, const char *collective, size_t count,
                       gz_dtype_t dtype, char *buf, size_t buflen) {
  static const struct {
    const char *name;
    gz_coll_t coll;
  } names[] = {{"allreduce", GZ_COLL_ALLREDUCE},
               {"reduce_scatter", GZ_COLL_REDUCE_SCATTER},
               {"reduce_scatter_block", GZ_COLL_REDUCE_SCATTER},
               {"allgather", GZ_COLL_ALLGATHER},
               {"bcast", GZ_COLL_BCAST},
               {"scatter", GZ_COLL_SCATTER},
               {"alltoall", GZ_COLL_ALLTOALL},
               {"send", GZ_COLL_P2P},
               {"recv", GZ_COLL_P2P},
               {"p2p", GZ_COLL_P2P}};
  gz_choice_t ch;
  gz_coll_t coll = GZ_COLL_COUNT;
  gz_result_t rc;
  char costs[160];
  const char *chosen;
  if (!ctx || !collective || !buf || buflen == 0 || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(collective, names[i].name) == 0)
      coll = names[i].coll;
  if (coll == GZ_COLL_COUNT)
    return GZ_ERR_ARG;
  rc = gz_select(ctx, coll, count, dtype, &ch);
  format_costs(&ch, coll, costs, sizeof costs);
  chosen = coll == GZ_COLL_P2P && ch.algo != GZ_ALGO_MPI ? "compressed"
                                                         : gz_algo_name(ch.algo);
  if (rc != GZ_OK)
    snprintf(buf, buflen, "%s %zu x %s on %d ranks: error (%s)", gz_coll_name(coll),
             count, dtype == GZ_FLOAT32 ? "float32" : "float64", ctx->size, ch.reason);
  else
    snprintf(buf, buflen,
             "%s %zu x %s on %d ranks: %s (%s%scost model: %s at %.3g B/s, codec "
             "%.3g B/s, ratio %.3g)",
             gz_coll_name(coll), count, dtype == GZ_FLOAT32 ? "float32" : "float64",
             ctx->size, chosen, ch.by_model ? "" : ch.reason, ch.by_model ? "" : "; ",
             costs, ctx->link_bps, ctx->codec_eps * (double)gz_dtype_size(dtype),
             ctx->ratio);
  return rc;
}
