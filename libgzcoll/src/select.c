/*
 * select.c - which algorithm runs, and why: which algorithm serves which
 * collective (the registry, registry.def), the cost model behind `auto`,
 * the overrides (config and GZCOLL_ALGO, resolved in ctx.c) and gz_explain.
 * Every algorithm is a row of the registry; what is chosen is a row.
 *
 * Cost model (seconds; each formula is the cost function of its algorithm's
 * row, in the algorithm's file). P ranks, L = ceil(log2 P), n elements of s bytes,
 * D = n s, alpha per message, beta = 1 / link bandwidth, CR the measured
 * compression ratio of integer codes against 4-byte values (so D / CR below
 * stands for 4 n / CR bytes whatever the type), t = 1 / (codec elements per
 * second of one pass: quantize, encode, decode(-reduce) or dequantize),
 * g = L alpha for one small status allreduce (every path has one; compressed
 * paths three with the final outcome and, for REL, the range).
 *   allreduce  mpi     g + min(L (alpha + D beta), 2(P-1) alpha + 2(P-1)/P D beta)
 *              redoub  3g + S (alpha + D max(beta, beta_x) / CR) + (2 + 2S) n t,
 *                      S = floor(log2 P) + 2 if P is not a power of two;
 *                      beta_x = 1 / the MPI path's rate: each step is one
 *                      whole-buffer exchange, nothing overlapped, as MPI's
 *                      own allreduce moves its data (the ring's pipelined
 *                      blocks reach the link; on the emulated 1 Gbit hosts
 *                      at P = 2 redoub's exchange ran at 5.8e7 B/s, MPI's
 *                      at 7.8e7, the ring's at 1.36e8); at P = 2 also
 *                      max with beta_link = 1 / link_bps: the one exchange
 *                      is the probe's own step there (a blocking sendrecv
 *                      with the other rank)
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
 *                      (2 P n t: the root's one read quantizes P n values and
 *                      encodes the other blocks' (P-1) n codes from L1, a
 *                      receiver decodes n straight into values)
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

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Collective names (gz_explain, gz_model_predict, gz_algorithms, GZCOLL_ALGO
 * in env.c, reports): the first name of each collective is its own, the
 * others are aliases. */
static const struct {
  const char *name;
  gz_coll_t coll;
} colls[] = {{"allreduce", GZ_COLL_ALLREDUCE},
             {"reduce_scatter", GZ_COLL_REDUCE_SCATTER},
             {"reduce_scatter_block", GZ_COLL_REDUCE_SCATTER},
             {"allgather", GZ_COLL_ALLGATHER},
             {"bcast", GZ_COLL_BCAST},
             {"scatter", GZ_COLL_SCATTER},
             {"alltoall", GZ_COLL_ALLTOALL},
             {"p2p", GZ_COLL_P2P},
             {"send", GZ_COLL_P2P},
             {"recv", GZ_COLL_P2P}};

const char *gz_coll_name(gz_coll_t coll) {
  for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
    if (colls[i].coll == coll)
      return colls[i].name;
  return "unknown";
}

int gz_coll_lookup(const char *s, size_t len, gz_coll_t *coll) {
  for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
    if (strlen(colls[i].name) == len && strncasecmp(colls[i].name, s, len) == 0) {
      *coll = colls[i].coll;
      return 1;
    }
  }
  return 0;
}

gz_result_t gz_algorithms(const char *collective, const char **names, size_t cap,
                          size_t *n) {
  gz_coll_t coll;
  size_t k = 0;
  if (!collective || !n || (!names && cap) ||
      !gz_coll_lookup(collective, strlen(collective), &coll))
    return GZ_ERR_ARG;
  for (int i = 0; i < GZ_ROWS; i++) {
    const gz_algorithm_t *row = gz_row(i);
    if (row->coll != coll || row->device)
      continue;
    if (k < cap)
      names[k] = row->name;
    k++;
  }
  *n = k;
  return k > cap ? GZ_ERR_CAPACITY : GZ_OK;
}

double gz_model_time(const gz_model_t *m, const gz_algorithm_t *row, double count,
                     size_t esz, double bw) {
  gz_cost_t c;
  if (!row || !row->cost)
    return -1;
  c.P = m->ranks;
  c.n = count;
  c.D = count * (double)esz;
  c.alpha = m->alpha;
  c.beta = 1.0 / bw;
  c.C = count * 4.0 / m->ratio; /* compressed bytes: the ratio is vs 4-byte values */
  c.t = 1.0 / m->codec_eps;
  c.L = m->ranks > 1 ? ceil(log2(c.P)) : 0;
  c.g = c.L * c.alpha;
  c.beta_x = 1.0 / (m->mpi_bps > 0 ? m->mpi_bps : m->link_bps);
  c.beta_link = 1.0 / m->link_bps;
  return row->cost(&c);
}

void gz_model_of_ctx(gz_ctx_t ctx, gz_model_t *m) {
  m->version = GZ_MODEL_VERSION;
  m->ranks = ctx->size;
  m->alpha = ctx->alpha;
  m->link_bps = ctx->link_bps;
  m->mpi_bps =
      ctx->bw[GZ_COLL_ALLREDUCE][0] > 0 ? ctx->bw[GZ_COLL_ALLREDUCE][0] : ctx->link_bps;
  m->comp_bps =
      ctx->bw[GZ_COLL_ALLREDUCE][1] > 0 ? ctx->bw[GZ_COLL_ALLREDUCE][1] : ctx->link_bps;
  m->codec_eps = ctx->codec_eps;
  m->ratio = ctx->ratio;
}

double gz_path_bw(gz_ctx_t ctx, const gz_algorithm_t *algo) {
  double bw = ctx->bw[algo->coll][gz_row_is_mpi(algo) ? 0 : 1];
  return bw > 0 ? bw : ctx->link_bps;
}

/* Modelled seconds of one algorithm on the context; < 0 when it does not
 * apply. */
double gz_ctx_model_time(gz_ctx_t ctx, const gz_algorithm_t *algo, size_t count,
                         size_t esz) {
  gz_model_t m;
  if (!algo || !algo->cost)
    return -1;
  gz_model_of_ctx(ctx, &m);
  return gz_model_time(&m, algo, (double)count, esz, gz_path_bw(ctx, algo));
}

int gz_size_class(double bytes) {
  int c = bytes >= 1 ? ilogb(bytes) / 2 : 0;
  return c < 0 ? 0 : c >= GZ_MODEL_CLASSES ? GZ_MODEL_CLASSES - 1 : c;
}

/* The host rows of coll with a cost function: its candidates. */
static int candidate(gz_coll_t coll, int i) {
  const gz_algorithm_t *row = gz_row(i);
  return row->coll == coll && !row->device && row->cost;
}

gz_result_t gz_model_predict(const gz_model_t *model_in, const char *collective,
                             size_t count, gz_dtype_t dtype, gz_prediction_t *rows,
                             size_t cap, size_t *nrows) {
  gz_coll_t coll = GZ_COLL_COUNT;
  gz_model_t m;
  size_t esz = gz_dtype_size(dtype), n = 0;
  if (!model_in || !collective || !nrows || (!rows && cap) || !esz ||
      model_in->version < 1 || model_in->ranks < 1 || !(model_in->alpha >= 0) ||
      !(model_in->link_bps > 0) || !(model_in->codec_eps > 0) || !(model_in->ratio > 0) ||
      !(model_in->mpi_bps >= 0) || !(model_in->comp_bps >= 0))
    return GZ_ERR_ARG;
  m = *model_in;
  if (!gz_coll_lookup(collective, strlen(collective), &coll))
    return GZ_ERR_ARG;
  for (int i = 0; i < GZ_ROWS; i++) {
    const gz_algorithm_t *row = gz_row(i);
    double bw, t;
    size_t k;
    if (!candidate(coll, i))
      continue;
    bw = gz_row_is_mpi(row) ? m.mpi_bps : m.comp_bps;
    t = gz_model_time(&m, row, (double)count, esz, bw > 0 ? bw : m.link_bps);
    /* insert in increasing time (equal times keep the registry's order) */
    for (k = n < cap ? n : cap; k > 0 && rows[k - 1].seconds > t; k--)
      if (k < cap)
        rows[k] = rows[k - 1];
    if (k < cap) {
      rows[k].algo = row->name;
      rows[k].seconds = t;
    }
    n++;
  }
  *nrows = n;
  return n > cap ? GZ_ERR_CAPACITY : GZ_OK;
}

/* "ring 41.2 ms, redoub 63 ms, mpi 130 ms" in increasing cost. */
static void format_costs(const gz_choice_t *ch, char *buf, size_t len) {
  int used[GZ_ROWS] = {0};
  size_t pos = 0;
  buf[0] = '\0';
  for (;;) {
    int best = -1;
    for (int a = 0; a < GZ_ROWS; a++)
      if (!used[a] && ch->cost[a] >= 0 && (best < 0 || ch->cost[a] < ch->cost[best]))
        best = a;
    if (best < 0 || pos >= len)
      break;
    used[best] = 1;
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%s %.3g ms", pos ? ", " : "",
                            gz_row(best)->name, ch->cost[best] * 1e3);
  }
}

static gz_result_t choose(gz_ctx_t ctx, gz_coll_t coll, size_t count, gz_dtype_t dtype,
                          gz_choice_t *ch) {
  size_t esz = gz_dtype_size(dtype) ? gz_dtype_size(dtype) : 4;
  int best = -1, second = -1;
  double bytes = (double)count * (double)esz;
  memset(ch, 0, sizeof *ch);
  for (int a = 0; a < GZ_ROWS; a++)
    ch->cost[a] = candidate(coll, a) ? gz_ctx_model_time(ctx, gz_row(a), count, esz) : -1;
  if (ctx->force_bad[coll]) {
    ch->algo = NULL;
    ch->forced = 1;
    snprintf(ch->reason, sizeof ch->reason, "%s does not apply to %s", ctx->cfg.algo,
             gz_coll_name(coll));
    return GZ_ERR_ARG;
  }
  if (ctx->forced[coll]) {
    ch->algo = ctx->forced[coll];
    ch->forced = 1;
    snprintf(ch->reason, sizeof ch->reason, "forced by %s",
             ctx->force_src[coll] == GZ_FORCE_ENV ? "GZCOLL_ALGO" : "config");
    return GZ_OK;
  }
  ch->algo = gz_algorithm(coll, GZ_ALGO_MPI_NAME);
  if (ctx->size == 1) {
    snprintf(ch->reason, sizeof ch->reason, "single rank: local copy");
    return GZ_OK;
  }
  if (bytes < GZ_AUTO_MIN_BYTES) {
    snprintf(ch->reason, sizeof ch->reason,
             "below %u B per rank: compression does not pay", GZ_AUTO_MIN_BYTES);
    return GZ_OK;
  }
  for (int a = 0; a < GZ_ROWS; a++)
    if (ch->cost[a] >= 0 && (best < 0 || ch->cost[a] < ch->cost[best]))
      best = a;
  for (int a = 0; a < GZ_ROWS; a++)
    if (a != best && ch->cost[a] >= 0 && (second < 0 || ch->cost[a] < ch->cost[second]))
      second = a;
  if (best < 0 || second < 0) /* every collective has mpi and one compressed row */
    return GZ_OK;
  ch->algo = gz_row(best);
  ch->by_model = 1;
  snprintf(ch->reason, sizeof ch->reason, "auto: cost model %s %.3g ms < %s %.3g ms",
           gz_row(best)->name, ch->cost[best] * 1e3, gz_row(second)->name,
           ch->cost[second] * 1e3);
  return GZ_OK;
}

/* Exploration: run the best algorithm of the other path (MPI when a
 * compressed algorithm is chosen, and the reverse) instead of the choice, to
 * measure it, when the choice itself was measured in this size class, that
 * algorithm was not measured for explore_gap calls of the class (first
 * GZ_EXPLORE_FIRST, then doubling while the choice is confirmed) and it is
 * predicted at most GZ_EXPLORE_RATIO times slower - or the other path was
 * never measured for this collective at all (a wrong prior, e.g. a probe
 * disturbed by a busy host, must not hide a path forever).
 * Either way a trial pays its own way: the class's trials may cost at most
 * GZ_EXPLORE_SHARE of the class's measured time (the agreed times of its
 * calls so far), each trial charged its measured extra over the choice's
 * measured time, and the next one is admitted only when its charge fits
 * what is left. Its charge before it is measured: its predicted extra, and
 * no less than one call of the choice - a path not measured may be far
 * slower than predicted (on shared memory one ring trial took 57 ms where
 * the model had it near MPI's 20 ms: +30 % of a 6-call program). So no
 * class explores before GZ_EXPLORE_SHARE of its time covers a whole call (20
 * calls at 5 %): a short program pays no trial, a long one a few per cent.
 * Every input is agreed: every rank makes the same decision. */
static void explore(gz_ctx_t ctx, gz_coll_t coll, size_t count, size_t esz,
                    gz_choice_t *ch) {
  int c = gz_size_class((double)count * (double)esz);
  int x = gz_row_index(ch->algo), y = -1;
  int mpi = gz_row_is_mpi(ch->algo);
  double base, charge;
  for (int a = 0; a < GZ_ROWS; a++) /* the best of the other path */
    if (gz_row_is_mpi(gz_row(a)) != mpi && ch->cost[a] >= 0 &&
        (y < 0 || ch->cost[a] < ch->cost[y]))
      y = a;
  uint64_t now = ++ctx->class_calls[coll][c];
  int never = 1; /* the other path was never measured for this collective */
  if (x < 0 || y < 0)
    return;
  for (int k = 0; k < GZ_MODEL_CLASSES; k++)
    for (int a = 0; a < GZ_ROWS; a++)
      if (gz_row(a)->coll == coll && gz_row_is_mpi(gz_row(a)) != mpi &&
          ctx->seen[k][a].n > 0)
        never = 0;
  if (!ch->by_model || (ctx->pinned & GZ_PIN_NOLEARN) || coll == GZ_COLL_P2P ||
      ctx->seen[c][x].n == 0 || now < ctx->next_explore[coll][c] ||
      (!never && ch->cost[y] > GZ_EXPLORE_RATIO * ch->cost[x]))
    return;
  if (ctx->seen[c][y].n > 0 && now - ctx->seen[c][y].last < GZ_EXPLORE_FIRST)
    return;
  /* the choice's latest measured time; the trial's predicted extra, at
   * least one such call */
  base = ctx->seen[c][x].seconds;
  charge = fmax(ch->cost[y] - ch->cost[x], base);
  if (ctx->explore_spent[coll][c] + charge > GZ_EXPLORE_SHARE * ctx->class_time[coll][c])
    return;
  if (ctx->explore_gap[coll][c] == 0)
    ctx->explore_gap[coll][c] = GZ_EXPLORE_FIRST;
  ctx->next_explore[coll][c] = now + ctx->explore_gap[coll][c];
  if (ctx->explore_gap[coll][c] < GZ_EXPLORE_MAX)
    ctx->explore_gap[coll][c] *= 2;
  ctx->explored++;
  ctx->explore_spent[coll][c] += charge;
  ctx->explore_charge[coll][c] = charge;
  ctx->explore_base[coll][c] = base;
  ctx->cur.explore = 1;
  snprintf(ch->reason, sizeof ch->reason,
           "auto: measuring %s (model %.3g ms; %s %.3g ms)", gz_row(y)->name,
           ch->cost[y] * 1e3, ch->algo->name, ch->cost[x] * 1e3);
  ch->algo = gz_row(y);
}

void gz_explore_measured(gz_ctx_t ctx, gz_coll_t coll, double bytes, double seconds) {
  int c = gz_size_class(bytes);
  double *spent = &ctx->explore_spent[coll][c];
  /* charged explore_charge when decided; it cost seconds - base */
  *spent = fmax(0.0, *spent - ctx->explore_charge[coll][c] + seconds -
                         ctx->explore_base[coll][c]);
  ctx->explore_charge[coll][c] = 0;
}

gz_result_t gz_select(gz_ctx_t ctx, gz_coll_t coll, size_t count, gz_dtype_t dtype,
                      gz_choice_t *ch) {
  size_t esz = gz_dtype_size(dtype) ? gz_dtype_size(dtype) : 4;
  gz_result_t rc = choose(ctx, coll, count, dtype, ch);
  gz_call_t *cur = &ctx->cur;
  int x;
  memset(cur, 0, sizeof *cur);
  cur->t0 = MPI_Wtime();
  if (rc != GZ_OK)
    return rc;
  cur->coll = coll;
  cur->count = (double)count;
  cur->esz = esz;
  cur->timed = ctx->size > 1 && coll != GZ_COLL_P2P && !(ctx->pinned & GZ_PIN_NOLEARN);
  if (cur->timed)
    explore(ctx, coll, count, esz, ch);
  x = gz_row_index(ch->algo);
  cur->algo = ch->algo;
  cur->predicted = x >= 0 && ch->cost[x] > 0 ? ch->cost[x] : 0;
  return GZ_OK;
}

/* The compressed algorithm whose bandwidth explain shows: the cheapest. */
static const gz_algorithm_t *compressed_algo(const gz_choice_t *ch, gz_coll_t coll) {
  int best = -1;
  for (int a = 0; a < GZ_ROWS; a++)
    if (candidate(coll, a) && !gz_row_is_mpi(gz_row(a)) &&
        (best < 0 || (ch->cost[a] >= 0 && ch->cost[a] < ch->cost[best])))
      best = a;
  return gz_row(best); /* every collective has a compressed row */
}

static const char *link_source(gz_ctx_t ctx) {
  if (ctx->pinned & GZ_PIN_LINK)
    return ctx->pinned & GZ_PIN_LINK_ENV ? "GZCOLL_LINK_BPS" : "config";
  if (ctx->probe_seconds > 0) {
    const double *st = ctx->probe_stage; /* this rank's */
    snprintf(
        ctx->probe_note, sizeof ctx->probe_note,
        "measured in %.3g ms: codec %.3g, latency %.3g, ring %.3g (to %.0f KiB), mpi "
        "%.3g (x%d), agree %.3g",
        ctx->probe_seconds * 1e3, st[0] * 1e3, st[1] * 1e3, st[2] * 1e3,
        ctx->probe_bytes / 1024, st[3] * 1e3, ctx->probe_ar_reps, st[4] * 1e3);
    return ctx->probe_note;
  }
  return "default";
}

gz_result_t gz_explain(gz_ctx_t ctx, const char *collective, size_t count,
                       gz_dtype_t dtype, char *buf, size_t buflen) {
  gz_choice_t ch;
  gz_coll_t coll = GZ_COLL_COUNT;
  gz_result_t rc;
  char costs[160], measured[80];
  const char *chosen;
  if (!ctx || !collective || !buf || buflen == 0 || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  if (!gz_coll_lookup(collective, strlen(collective), &coll))
    return GZ_ERR_ARG;
  rc = choose(ctx, coll, count, dtype, &ch); /* no bookkeeping, no exploration */
  format_costs(&ch, costs, sizeof costs);
  chosen = ch.algo ? ch.algo->name : ctx->cfg.algo;
  { /* the latest measured call of this collective, size class and choice */
    int x = gz_row_index(ch.algo);
    const gz_seen_t *sn =
        x < 0
            ? NULL
            : &ctx->seen[gz_size_class((double)count * (double)gz_dtype_size(dtype))][x];
    if (sn && sn->n > 0)
      snprintf(measured, sizeof measured, "; measured %.3g ms (model %.3g ms, %u calls)",
               sn->seconds * 1e3, sn->predicted * 1e3, (unsigned)sn->n);
    else
      snprintf(measured, sizeof measured, "; not measured yet");
  }
  if (rc != GZ_OK)
    snprintf(buf, buflen, "%s %zu x %s on %d ranks: error (%s)", gz_coll_name(coll),
             count, dtype == GZ_FLOAT32 ? "float32" : "float64", ctx->size, ch.reason);
  else
    snprintf(buf, buflen,
             "%s %zu x %s on %d ranks: %s (%s%scost model: %s; inputs: link %.3g B/s "
             "(%s), alpha %.3g us, mpi path %.3g B/s, compressed path %.3g B/s, codec "
             "%.3g B/s, ratio %.3g%s)",
             gz_coll_name(coll), count, dtype == GZ_FLOAT32 ? "float32" : "float64",
             ctx->size, chosen, ch.by_model ? "" : ch.reason, ch.by_model ? "" : "; ",
             costs, ctx->link_bps, link_source(ctx), ctx->alpha * 1e6,
             gz_path_bw(ctx, gz_algorithm(coll, GZ_ALGO_MPI_NAME)),
             gz_path_bw(ctx, compressed_algo(&ch, coll)),
             ctx->codec_eps * (double)gz_dtype_size(dtype), ctx->ratio, measured);
  return rc;
}
