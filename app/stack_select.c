/*
 * stack_select.c - --steps START:STOP:STRIDE: which records are stacked.
 * Indices count from 0 along the stacking axis across all inputs in order;
 * STOP is inclusive, as in NCO's `ncra -d time,START,STOP,STRIDE`. The
 * selection is arithmetic, so each file keeps its first selected record
 * and the stride (gzs_file_record) and the pipeline sees only the selected
 * snapshots; every rank computes the same table from the agreed record
 * counts.
 */
#include "stack_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One unsigned number of the field [p, end) (empty: dflt). */
static int field_u64(const char *p, const char *end, uint64_t dflt, uint64_t *out) {
  char buf[32], *e;
  size_t n = (size_t)(end - p);
  unsigned long long v;
  if (n == 0) {
    *out = dflt;
    return 0;
  }
  if (n >= sizeof buf || p[0] == '-' || p[0] == '+')
    return -1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  errno = 0;
  v = strtoull(buf, &e, 10);
  if (errno || *e || e == buf)
    return -1;
  *out = (uint64_t)v;
  return 0;
}

const char *gzs_parse_steps(const char *v, uint64_t *start, uint64_t *stop,
                            uint64_t *stride) {
  const char *c1 = strchr(v, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  const char *e0 = c1 ? c1 : v + strlen(v);
  if (c2 && strchr(c2 + 1, ':'))
    return "expected START[:STOP[:STRIDE]], like 0:119:12";
  if (field_u64(v, e0, 0, start) != 0)
    return "START must be a record index >= 0 (expected START[:STOP[:STRIDE]], like "
           "0:119:12)";
  *stop = c1 ? UINT64_MAX : *start; /* "7": record 7 alone, as ncra -d time,7 */
  if (c1 && field_u64(c1 + 1, c2 ? c2 : c1 + 1 + strlen(c1 + 1), UINT64_MAX, stop) != 0)
    return "STOP must be a record index >= START (inclusive) or empty for the last";
  *stride = 1;
  if (c2 && (field_u64(c2 + 1, c2 + 1 + strlen(c2 + 1), 1, stride) != 0 || *stride == 0))
    return "STRIDE must be a whole number >= 1";
  if (*stop < *start)
    return "STOP is before START (STOP is inclusive)";
  return NULL;
}

static int step_selected(const gzs_opts_t *o, uint64_t g) {
  return !o->have_steps || (g >= o->step_start && g <= o->step_stop &&
                            (g - o->step_start) % o->step_stride == 0);
}

/* Dates: an explicit list of records per file. */
/* File f keeps n records, numbered from total among the selected ones;
 * the selected records counted so far. */
static uint64_t keep_records(gzs_file_t *f, uint64_t n, uint64_t total) {
  f->records = n;
  f->first = total;
  return total + n;
}

static int select_listed(const gzs_opts_t *o, gzs_run_t *r, const unsigned char *dates,
                         char *err, size_t errlen) {
  uint64_t g0 = 0, total = 0;
  for (int i = 0; i < r->nfiles; i++) {
    gzs_file_t *f = &r->files[i];
    uint64_t n = 0, R = f->records;
    f->recs = malloc(sizeof(uint64_t) * R + 1);
    if (!f->recs) {
      snprintf(err, errlen, "out of memory for the selected records");
      return -1;
    }
    for (uint64_t j = 0; j < R; j++)
      if (dates[g0 + j] && step_selected(o, g0 + j))
        f->recs[n++] = j;
    g0 += R;
    total = keep_records(f, n, total);
  }
  if ((r->nsnap = total) == 0) {
    snprintf(err, errlen,
             "%s%s%s%s%s%s%s%s%s%s selects no record of the %llu in the inputs",
             o->dates_text ? "--dates " : "", o->dates_text ? o->dates_text : "",
             o->years_text ? " --years " : "", o->years_text ? o->years_text : "",
             o->months_text ? " --months " : "", o->months_text ? o->months_text : "",
             o->seasons_text ? " --seasons " : "", o->seasons_text ? o->seasons_text : "",
             o->have_steps ? " --steps " : "", o->have_steps ? o->steps_text : "",
             (unsigned long long)g0);
    return -1;
  }
  return 0;
}

int gzs_select_steps(const gzs_opts_t *o, gzs_run_t *r, const unsigned char *dates,
                     char *err, size_t errlen) {
  uint64_t a = o->step_start, b = o->step_stop, s = o->step_stride, g0 = 0, total = 0;
  uint64_t all = 0;
  if (dates)
    return select_listed(o, r, dates, err, errlen);
  for (int i = 0; i < r->nfiles; i++)
    all += r->files[i].records;
  if (b > all - 1 || all == 0)
    b = all ? all - 1 : 0;
  for (int i = 0; i < r->nfiles; i++) {
    gzs_file_t *f = &r->files[i];
    uint64_t lo = g0, hi = g0 + f->records, first = lo > a ? lo : a, n = 0;
    if (all && a <= b) {
      first += (s - (first - a) % s) % s; /* the first selected index >= lo */
      if (first < hi && first <= b) {
        uint64_t last = hi - 1 < b ? hi - 1 : b;
        n = (last - first) / s + 1;
      }
    }
    f->rec0 = n ? first - g0 : 0;
    f->stride = s;
    g0 = hi;
    total = keep_records(f, n, total);
  }
  if ((r->nsnap = total) == 0) {
    snprintf(err, errlen,
             "--steps %s selects no record (the inputs hold %llu, counted from 0)",
             o->steps_text, (unsigned long long)all);
    return -1;
  }
  return 0;
}

int gzs_dates_selected(const gzs_opts_t *o, long long year, int month) {
  int in = o->nyears == 0;
  for (int i = 0; i < o->nyears && !in; i++)
    in = year >= o->year_lo[i] && year <= o->year_hi[i];
  if (!in || month < 1 || month > 12)
    return 0;
  return (!o->months_mask || (o->months_mask >> (month - 1) & 1)) &&
         (!o->seasons_mask || (o->seasons_mask >> (month - 1) & 1));
}

/* Rank that scanned file `path`: the date flags of its records. */
int gzs_date_flags(const gzs_opts_t *o, const char *path, const gz_meta_t *m,
                   unsigned char *flags, char *err, size_t errlen) {
  const gz_coord_t *c = &m->coords[0];
  gzs_time_axis_t ax;
  char why[400];
  const char *opt = o->years_text    ? "--years"
                    : o->months_text ? "--months"
                    : o->dates_text  ? "--dates"
                                     : "--seasons";
  double lo = 0, hi = 0;
  if (!c->values || c->count != m->dims[0]) {
    snprintf(err, errlen,
             "%s: %s: variable %s has no time coordinate along its first dimension %s",
             opt, path, m->var, m->dim_names[0]);
    return -1;
  }
  if (gzs_time_axis(c->units, c->calendar, &ax, why, sizeof why) != 0) {
    snprintf(err, errlen, "%s: %s: coordinate %s: %s", opt, path, c->name, why);
    return -1;
  }
  if (o->have_date_range)
    gzs_date_range_days(o, ax.cal, &lo, &hi);
  for (size_t j = 0; j < c->count; j++) {
    long long y;
    int mo;
    double t = ax.origin + c->values[j] * ax.scale; /* days of the calendar */
    if (gzs_time_date(&ax, c->values[j], &y, &mo) != 0) {
      snprintf(err, errlen, "%s: %s: %s[%zu] = %g is not a date", opt, path, c->name, j,
               c->values[j]);
      return -1;
    }
    flags[j] =
        (unsigned char)(gzs_dates_selected(o, y, mo) &&
                        (!o->have_date_range || (t >= lo - 1e-8 && t <= hi + 1e-8)));
  }
  return 0;
}

/* "1990/1999,2005": years or inclusive ranges Y1/Y2 (as cdo selyear). */
const char *gzs_parse_years(const char *v, gzs_opts_t *o) {
  const char *p = v;
  o->nyears = 0;
  while (*p) {
    char *e;
    long long a = strtoll(p, &e, 10), b = a;
    if (e == p)
      return "expected years or ranges Y1/Y2 separated by commas, like 1990/1999,2005";
    p = e;
    if (*p == '/') {
      b = strtoll(p + 1, &e, 10);
      if (e == p + 1)
        return "a range Y1/Y2 needs both years";
      p = e;
    }
    if (b < a)
      return "a range Y1/Y2 needs Y1 <= Y2";
    if (o->nyears >= 64)
      return "at most 64 years or ranges";
    o->year_lo[o->nyears] = a;
    o->year_hi[o->nyears++] = b;
    if (*p == ',')
      p++;
    else if (*p)
      return "expected years or ranges Y1/Y2 separated by commas, like 1990/1999,2005";
  }
  return o->nyears ? NULL : "no year given";
}

/* "1,2,12" or "6/8": months 1-12 or inclusive ranges (as cdo selmon). */
const char *gzs_parse_months(const char *v, unsigned *mask) {
  const char *p = v;
  *mask = 0;
  while (*p) {
    char *e;
    long a = strtol(p, &e, 10), b;
    if (e == p)
      return "expected months 1-12 or ranges M1/M2 separated by commas, like 12,1,2";
    p = e;
    b = a;
    if (*p == '/') {
      b = strtol(p + 1, &e, 10);
      if (e == p + 1)
        return "a range M1/M2 needs both months";
      p = e;
    }
    if (a < 1 || a > 12 || b < 1 || b > 12 || b < a)
      return "months are 1 to 12 (a range M1/M2 with M1 <= M2)";
    for (long m = a; m <= b; m++)
      *mask |= 1u << (m - 1);
    if (*p == ',')
      p++;
    else if (*p)
      return "expected months 1-12 or ranges M1/M2 separated by commas, like 12,1,2";
  }
  return *mask ? NULL : "no month given";
}

/* "DJF,JJA": the months of meteorological seasons. */
const char *gzs_parse_seasons(const char *v, unsigned *mask) {
  static const struct {
    const char *name;
    unsigned mask;
  } seasons[] = {{"DJF", 1u << 11 | 1u | 2u},
                 {"MAM", 4u | 8u | 16u},
                 {"JJA", 32u | 64u | 128u},
                 {"SON", 256u | 512u | 1024u}};
  const char *p = v;
  *mask = 0;
  while (*p) {
    size_t n = strcspn(p, ","), k;
    for (k = 0; k < 4; k++)
      if (n == 3 && strncasecmp(p, seasons[k].name, 3) == 0)
        break;
    if (k == 4)
      return "expected seasons DJF, MAM, JJA or SON separated by commas";
    *mask |= seasons[k].mask;
    p += n;
    if (*p == ',')
      p++;
  }
  return *mask ? NULL : "no season given";
}
