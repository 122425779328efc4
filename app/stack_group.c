/*
 * stack_group.c - --group month|season|year|N and --running N: one stacked
 * field per group of the selected records, as cdo ymonmean / yseasmean /
 * yearmean / timselmean,N / runmean,N (any --op). Each group goes through
 * the whole pipeline (reading, the compressed allreduce with its strict
 * bound, --verify) on its own records; the written bound is the largest
 * of the groups'. Groups:
 *   month    one per month of the year present, in month order (ymonmean)
 *   season   DJF, MAM, JJA, SON, those present, in that order (yseasmean)
 *   year     one per calendar year, in order (yearmean)
 *   N        records 0..N-1, N..2N-1, ... (the last may hold fewer)
 *   running  windows of N consecutive records, sliding by one (runmean)
 * Month, season and year need the CF time coordinate (stack_dates.c).
 * The output keeps the record dimension, one value per group, with its
 * bounds: climatology bounds for month and season (first to last month
 * covered; the time is the middle of the first month), the calendar year
 * for year, first to last record time otherwise (the time is the middle
 * of the bounds).
 */
#include "stack_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *gzs_parse_group(const char *v, gzs_opts_t *o) {
  char *e;
  unsigned long long n;
  if (!strcasecmp(v, "month"))
    o->group_kind = GZS_GROUP_MONTH;
  else if (!strcasecmp(v, "season"))
    o->group_kind = GZS_GROUP_SEASON;
  else if (!strcasecmp(v, "year"))
    o->group_kind = GZS_GROUP_YEAR;
  else if (!strcasecmp(v, "all"))
    o->group_kind = GZS_GROUP_ALL;
  else {
    errno = 0;
    n = strtoull(v, &e, 10);
    if (e == v || *e || errno || v[0] == '-' || v[0] == '+' || n == 0 || n > UINT32_MAX)
      return "expected month, season, year, all or a number of records N >= 1";
    o->group_kind = GZS_GROUP_N;
    o->group_n = (uint64_t)n;
  }
  return NULL;
}

static int needs_dates(const gzs_opts_t *o) {
  return o->group_kind == GZS_GROUP_MONTH || o->group_kind == GZS_GROUP_SEASON ||
         o->group_kind == GZS_GROUP_YEAR;
}

int gzs_need_times(const gzs_opts_t *o) {
  return gzs_grouped(o) || o->weights_kind == GZS_WEIGHTS_DAYS;
}

int gzs_record_times(const gzs_opts_t *o, const char *path, const gz_meta_t *m,
                     int netcdf, double *days, double *ym, double *mlen, double *bnd,
                     char *err, size_t errlen) {
  const gz_coord_t *c = &m->coords[0];
  gzs_time_axis_t ax;
  char why[400], opt[300];
  int need = needs_dates(o) || o->weights_kind == GZS_WEIGHTS_DAYS;
  if (needs_dates(o))
    snprintf(opt, sizeof opt, "--group %s", o->group_text);
  else
    snprintf(opt, sizeof opt, "--weights days");
  int found = 0;
  for (size_t j = 0; j < m->dims[0]; j++)
    days[j] = ym[j] = mlen[j] = bnd[2 * j] = bnd[2 * j + 1] = NAN;
  if (!c->values || c->count != m->dims[0]) {
    if (need)
      snprintf(err, errlen,
               "%s: %s: variable %s has no time coordinate along its first dimension %s",
               opt, path, m->var, m->dim_names[0]);
    return need ? -1 : 0;
  }
  if (gzs_time_axis(c->units, c->calendar, &ax, why, sizeof why) != 0) {
    if (need)
      snprintf(err, errlen, "%s: %s: coordinate %s: %s", opt, path, c->name, why);
    return need ? -1 : 0;
  }
  for (size_t j = 0; j < c->count; j++) {
    long long y;
    int mo;
    if (gzs_time_date(&ax, c->values[j], &y, &mo) != 0) {
      if (!need)
        continue;
      snprintf(err, errlen, "%s: %s: %s[%zu] = %g is not a date", opt, path, c->name, j,
               c->values[j]);
      return -1;
    }
    days[j] = ax.origin + c->values[j] * ax.scale;
    ym[j] = (double)y * 12.0 + (mo - 1);
    mlen[j] = gzs_month_start(ax.cal, y, mo + 1) - gzs_month_start(ax.cal, y, mo);
  }
  /* the input's own cell bounds (CDO's group bounds span them) */
  if (netcdf && gzs_grouped(o) &&
      gz_io_netcdf_coord_bounds(path, c->name, bnd, c->count, &found, why, sizeof why) !=
          0) {
    snprintf(err, errlen, "%s: %s", opt, why);
    return -1;
  }
  for (size_t j = 0; j < 2 * c->count; j++)
    bnd[j] = found && isfinite(bnd[j]) ? ax.origin + bnd[j] * ax.scale : NAN;
  return 0;
}

/* The groups as lists of selected snapshot indices. */
typedef struct groups {
  size_t n;
  uint64_t *start, *count; /* group g: members[start[g] .. +count[g]) */
  uint64_t *members;
  long long *key; /* month 1-12, season 0-3, year, or the group's index */
} groups_t;

static void groups_free(groups_t *g) {
  free(g->start);
  free(g->count);
  free(g->members);
  free(g->key);
  memset(g, 0, sizeof *g);
}

static long long floor_div(long long a, long long b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The key of selected snapshot s (its original record orig). */
static long long key_of(const gzs_opts_t *o, const gzs_run_t *r, uint64_t s,
                        uint64_t orig) {
  long long ym = (long long)r->rec_ym[orig], month = ym - 12 * floor_div(ym, 12) + 1;
  switch (o->group_kind) {
  case GZS_GROUP_MONTH:
    return month;
  case GZS_GROUP_SEASON:
    return (month % 12) / 3; /* DJF 0, MAM 1, JJA 2, SON 3 */
  case GZS_GROUP_YEAR:
    return floor_div(ym, 12);
  case GZS_GROUP_ALL:
    return 0;
  default:
    return (long long)(s / o->group_n);
  }
}

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

static size_t key_index(const long long *keys, size_t n, long long k) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (keys[mid] <= k)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* --ensemble: every input holds as many selected records (the members). */
static int same_members(const gzs_run_t *r, const gzs_opts_t *o, char *err,
                        size_t errlen) {
  for (int f = 1; f < r->nfiles; f++)
    if (r->files[f].records != r->files[0].records) {
      snprintf(err, errlen,
               "--ensemble: %s holds %llu selected records and %s %llu (every member the "
               "same number, as cdo ensmean)",
               o->inputs[f], (unsigned long long)r->files[f].records, o->inputs[0],
               (unsigned long long)r->files[0].records);
      return -1;
    }
  return 0;
}

/* orig[s]: the original record index of selected snapshot s, in file
 * sel_file[s]. */
static int make_groups(const gzs_opts_t *o, const gzs_run_t *r, const uint64_t *orig,
                       const int *sel_file, groups_t *g, char *err, size_t errlen) {
  uint64_t N = r->nsnap;
  long long *keys = NULL;
  memset(g, 0, sizeof *g);
  if (o->running > 0) {
    uint64_t w = (uint64_t)o->running;
    if (w > N) {
      snprintf(err, errlen,
               "--running %llu: a window needs %llu records and the selection holds %llu",
               (unsigned long long)w, (unsigned long long)w, (unsigned long long)N);
      return -1;
    }
    g->n = (size_t)(N - w + 1);
    g->start = malloc(sizeof(uint64_t) * g->n + 1);
    g->count = malloc(sizeof(uint64_t) * g->n + 1);
    g->key = malloc(sizeof(long long) * g->n + 1);
    g->members = malloc(sizeof(uint64_t) * N + 1);
    if (!g->start || !g->count || !g->key || !g->members)
      goto oom;
    for (uint64_t s = 0; s < N; s++)
      g->members[s] = s;
    for (size_t k = 0; k < g->n; k++) {
      g->start[k] = k; /* windows overlap in members[] */
      g->count[k] = w;
      g->key[k] = (long long)k;
    }
    return 0;
  }
  if (o->group_kind == GZS_GROUP_N && o->group_n > N) {
    snprintf(err, errlen,
             "--group %s: a group of %llu records is longer than the selection (%llu "
             "records)",
             o->group_text, (unsigned long long)o->group_n, (unsigned long long)N);
    return -1;
  }
  if (o->ensemble && same_members(r, o, err, errlen) != 0)
    return -1;
  keys = malloc(sizeof(long long) * N + 1);
  g->members = malloc(sizeof(uint64_t) * N + 1);
  if (!keys || !g->members)
    goto oom;
  for (uint64_t s = 0; s < N; s++) {
    if (needs_dates(o) && isnan(r->rec_ym[orig[s]])) {
      snprintf(err, errlen, "--group %s: record %llu has no date", o->group_text,
               (unsigned long long)orig[s]);
      free(keys);
      groups_free(g);
      return -1;
    }
    keys[s] = o->ensemble ? (long long)(s - r->files[sel_file[s]].first) /* its record */
                          : key_of(o, r, s, orig[s]);
  }
  g->key = malloc(sizeof(long long) * N + 1);
  if (!g->key)
    goto oom;
  memcpy(g->key, keys, sizeof(long long) * N);
  qsort(g->key, N, sizeof(long long), cmp_ll);
  for (uint64_t s = 0; s < N; s++)
    if (g->n == 0 || g->key[g->n - 1] != g->key[s])
      g->key[g->n++] = g->key[s];
  g->start = calloc(g->n + 1, sizeof(uint64_t));
  g->count = calloc(g->n + 1, sizeof(uint64_t));
  if (!g->start || !g->count)
    goto oom;
  for (uint64_t s = 0; s < N; s++)
    g->count[key_index(g->key, g->n, keys[s])]++;
  for (size_t k = 1; k < g->n; k++)
    g->start[k] = g->start[k - 1] + g->count[k - 1];
  {
    uint64_t *fill = calloc(g->n + 1, sizeof(uint64_t));
    if (!fill)
      goto oom;
    for (uint64_t s = 0; s < N; s++) {
      size_t k = key_index(g->key, g->n, keys[s]);
      g->members[g->start[k] + fill[k]++] = s;
    }
    free(fill);
  }
  free(keys);
  return 0;
oom:
  free(keys);
  groups_free(g);
  snprintf(err, errlen, "out of memory for the groups");
  return -1;
}

/* Rank 0: the group's time and bounds in the first input's time units. */
/* Group k's time and bounds; 1 when they come from the input's own bounds. */
static int group_time(const gzs_opts_t *o, gzs_run_t *r, const groups_t *g, size_t k,
                      const uint64_t *orig, const gzs_time_axis_t *ax) {
  const uint64_t *mem = g->members + g->start[k];
  double lo = INFINITY, hi = -INFINITY, ylo = 0, yhi = 0, blo = INFINITY, bhi = -INFINITY;
  double first_mid = 0;
  int own = 1; /* every member has the input's own bounds */
  for (uint64_t i = 0; i < g->count[k]; i++) {
    uint64_t j = orig[mem[i]];
    double d = r->rec_days[j], b0 = r->rec_bnd[2 * j], b1 = r->rec_bnd[2 * j + 1];
    if (d < lo) {
      lo = d;
      ylo = r->rec_ym[j];
      first_mid = 0.5 * (b0 + b1);
    }
    if (d > hi) {
      hi = d;
      yhi = r->rec_ym[j];
    }
    own &= isfinite(b0) && isfinite(b1);
    blo = fmin(blo, fmin(b0, b1));
    bhi = fmax(bhi, fmax(b0, b1));
  }
  if (o->ensemble) { /* the members' common time: the first input's */
    uint64_t j = orig[mem[0]];
    r->gtime[k] = r->gbnd[2 * k] = r->gbnd[2 * k + 1] =
        gzs_time_value(ax, r->rec_days[j]);
    if (own) { /* and its own bounds */
      r->gbnd[2 * k] = gzs_time_value(ax, r->rec_bnd[2 * j]);
      r->gbnd[2 * k + 1] = gzs_time_value(ax, r->rec_bnd[2 * j + 1]);
    }
    return own;
  }
  if (own && g->count[k] > 0) { /* the input's bounds: the group spans its cells (CDO) */
    r->gbnd[2 * k] = gzs_time_value(ax, blo);
    r->gbnd[2 * k + 1] = gzs_time_value(ax, bhi);
    r->gtime[k] = 0.5 * (r->gbnd[2 * k] + r->gbnd[2 * k + 1]);
    if (needs_dates(o) &&
        o->group_kind != GZS_GROUP_YEAR) /* a climatology: its first cell */
      r->gtime[k] = gzs_time_value(ax, first_mid);
    return 1;
  }
  if (o->group_kind == GZS_GROUP_YEAR) {
    lo = gzs_month_start(ax->cal, g->key[k], 1);
    hi = gzs_month_start(ax->cal, g->key[k] + 1, 1);
  } else if (needs_dates(o)) { /* first to last month covered */
    long long a = (long long)ylo, b = (long long)yhi;
    lo = gzs_month_start(ax->cal, floor_div(a, 12), (int)(a - 12 * floor_div(a, 12)) + 1);
    hi = gzs_month_start(ax->cal, floor_div(b, 12), (int)(b - 12 * floor_div(b, 12)) + 2);
  }
  r->gbnd[2 * k] = gzs_time_value(ax, lo);
  r->gbnd[2 * k + 1] = gzs_time_value(ax, hi);
  r->gtime[k] = 0.5 * (r->gbnd[2 * k] + r->gbnd[2 * k + 1]);
  if (needs_dates(o) && o->group_kind != GZS_GROUP_YEAR) {
    /* a climatology's time: the middle of its first month (as CF 7.4's
     * examples), not of the years it spans */
    long long a = (long long)ylo;
    double end =
        gzs_month_start(ax->cal, floor_div(a, 12), (int)(a - 12 * floor_div(a, 12)) + 2);
    r->gtime[k] = gzs_time_value(ax, 0.5 * (lo + end));
  }
  return 0;
}

/* The files' record lists for group k; nsnap and this rank's share. */
static int select_group(const gzs_opts_t *o, gzs_run_t *r, const groups_t *g, size_t k,
                        const int *sel_file, const uint64_t *sel_rec) {
  const uint64_t *mem = g->members + g->start[k];
  uint64_t n = g->count[k], first = 0, P = (uint64_t)r->size, q = (uint64_t)r->rank;
  for (int f = 0; f < r->nfiles; f++) {
    gzs_file_t *fi = &r->files[f];
    uint64_t c = 0;
    free(fi->recs);
    fi->recs = malloc(sizeof(uint64_t) * n + 1);
    if (!fi->recs)
      return -1;
    for (uint64_t i = 0; i < n; i++)
      if (sel_file[mem[i]] == f)
        fi->recs[c++] = sel_rec[mem[i]];
    fi->records = c;
    fi->first = first;
    first += c;
  }
  r->nsnap = n;
  if (r->sel_w && gzs_weights_select(r, mem, n) != 0)
    return -1;
  if (o->read_root) {
    r->my_first = 0;
    r->my_count = n / P + (q < n % P);
  } else {
    r->my_first = n * q / P;
    r->my_count = n * (q + 1) / P - r->my_first;
  }
  return 0;
}

/* One group through the pipeline. */
static int run_group(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                     size_t errlen) {
  if (gzs_op_is_moment(o->op))
    return gzs_moments(o, r, comm, err, errlen);
  if (gzs_read(o, r, comm, err, errlen) != 0 || gzs_reduce(o, r, comm, err, errlen) != 0)
    return -1;
  return o->verify ? gzs_reference(o, r, comm, err, errlen) : 0;
}

/* The state of one group out of the way of the next. */
static void reset_group(gzs_run_t *r) {
  void **arrays[] = {
      (void **)&r->acc,        (void **)&r->counts,       (void **)&r->reduced,
      (void **)&r->result,     (void **)&r->out,          (void **)&r->exact,
      (void **)&r->exact_part, (void **)&r->exact_result, (void **)&r->wsum,
      (void **)&r->wsq,        (void **)&r->codes};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
    free(*arrays[i]);
    *arrays[i] = NULL;
  }
  r->have_scatter = 0;
  r->mask_bytes = 0;
  r->have_stats = 0;
}

int gzs_groups(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
               size_t errlen) {
  uint64_t N = r->nsnap, *orig = malloc(sizeof(uint64_t) * N + 1);
  uint64_t *sel_rec = malloc(sizeof(uint64_t) * N + 1);
  int *sel_file = malloc(sizeof(int) * N + 1), failed = 0, within = 1;
  size_t dsize = gz_dtype_size(r->dtype), M = r->npoints;
  uint64_t raw = 0, sent = 0, masked = 0;
  double claimed = 0, stage = 0, f32 = 0, e_abs = 0, worst = -1;
  gz_quality_t q_worst;
  gzs_time_axis_t ax;
  groups_t g;
  int rc = -1;

  memset(&g, 0, sizeof g);
  memset(&q_worst, 0, sizeof q_worst);
  if (gzs_agree(comm, !orig || !sel_rec || !sel_file, "out of memory for the groups"))
    goto done;
  for (uint64_t s = 0; s < N; s++) {
    sel_file[s] = gzs_locate(r, s, &sel_rec[s]);
    orig[s] = r->files[sel_file[s]].base + sel_rec[s];
  }
  /* every rank makes the same groups from the same agreed table */
  if (make_groups(o, r, orig, sel_file, &g, err, errlen) != 0) {
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    goto done;
  }
  r->ngroups = g.n;
  r->gout = malloc(dsize * M * g.n + 1);
  r->gtime = malloc(sizeof(double) * g.n + 1);
  r->gbnd = malloc(sizeof(double) * 2 * g.n + 1);
  failed = !r->gout || !r->gtime || !r->gbnd;
  /* the first input's time axis (rank 0 writes) */
  r->have_gtime = 0;
  if (!failed && r->rank == 0 && r->has_time && r->has_meta0 &&
      gzs_time_axis(r->meta0.coords[0].units, r->meta0.coords[0].calendar, &ax, err,
                    errlen) == 0) {
    r->have_gtime = 1;
    r->gbnd_own = g.n > 0;
    for (size_t k = 0; k < g.n; k++)
      r->gbnd_own &= group_time(o, r, &g, k, orig, &ax);
  }
  if (!failed && o->png && o->verify && r->rank == 0) {
    r->gexact = malloc(sizeof(double) * M * g.n + 1);
    r->gclaim = malloc(sizeof(double) * g.n + 1);
    failed = !r->gexact || !r->gclaim;
  }
  if (gzs_agree(comm, failed, "out of memory for the groups"))
    goto done;
  r->keep_ctx = 1; /* groups of the same budget share a context */
  for (size_t k = 0; k < g.n; k++) {
    if (k > 0)
      reset_group(r);
    failed = select_group(o, r, &g, k, sel_file, sel_rec) != 0;
    if (gzs_agree(comm, failed, "out of memory for a group's records"))
      goto done;
    gzs_progress(o, r, 0, "group %zu/%zu (%llu records)", k + 1, g.n,
                 (unsigned long long)r->nsnap);
    if (run_group(o, r, comm, err, errlen) != 0)
      goto done;
    memcpy((char *)r->gout + k * M * dsize, r->out, M * dsize);
    raw += r->bytes_raw;
    sent += r->bytes_sent;
    masked += r->masked_points;
    claimed = r->claimed > claimed ? r->claimed : claimed;
    stage = r->stage_bound > stage ? r->stage_bound : stage;
    f32 = r->f32_term > f32 ? r->f32_term : f32;
    e_abs = r->e_abs > e_abs ? r->e_abs : e_abs;
    if (r->gexact && r->exact_result) { /* --png --verify: the group's maps */
      memcpy(r->gexact + k * M, r->exact_result, sizeof(double) * M);
      r->gclaim[k] = r->claimed;
    }
    if (o->verify && r->rank == 0) {
      within &= r->within;
      if (r->q.max_abs_error > worst) {
        worst = r->q.max_abs_error;
        q_worst = r->q;
      }
    }
  }
  /* the run's totals: every record selected, the largest bound */
  r->nsnap = N;
  r->bytes_raw = raw;
  r->bytes_sent = sent;
  r->masked_points = (size_t)masked;
  r->claimed = claimed;
  r->stage_bound = stage;
  r->f32_term = f32;
  r->e_abs = e_abs;
  if (o->verify && r->rank == 0) {
    r->q = q_worst;
    r->within = within;
    r->q_max_error = worst;
  }
  rc = 0;
done:
  gzs_release_contexts(r); /* every rank reaches here (agreed failures) */
  groups_free(&g);
  free(orig);
  free(sel_rec);
  free(sel_file);
  return rc;
}

void gzs_cell_method(const gzs_opts_t *o, const char *dim, char *buf, size_t len) {
  static const char *names[] = {"mean",
                                "sum",
                                "maximum",
                                "minimum",
                                "variance",
                                "variance",
                                "standard_deviation",
                                "standard_deviation",
                                "root_mean_square"};
  const char *m = names[o->op];
  if (o->ensemble) /* across the members, not along time: nothing to add */
    snprintf(buf, len, "%s", "");
  else if (o->group_kind == GZS_GROUP_MONTH || o->group_kind == GZS_GROUP_SEASON)
    snprintf(buf, len, "%s: mean within years %s: %s over years", dim, dim, m);
  else
    snprintf(buf, len, "%s: %s", dim, m);
}
