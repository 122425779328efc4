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

int gzs_select_steps(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen) {
  uint64_t a = o->step_start, b = o->step_stop, s = o->step_stride, g0 = 0, total = 0;
  uint64_t all = 0;
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
    f->records = n;
    f->first = total;
    total += n;
  }
  r->nsnap = total;
  if (total == 0) {
    snprintf(err, errlen,
             "--steps %s selects no record (the inputs hold %llu, counted from 0)",
             o->steps_text, (unsigned long long)all);
    return -1;
  }
  return 0;
}
