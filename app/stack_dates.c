/*
 * stack_dates.c - --years, --months, --seasons: the date of each record
 * from the CF time coordinate ("UNIT since Y-M-D[ h:m[:s]]", UNIT days,
 * hours, minutes or seconds) in its calendar: standard / gregorian (dates
 * from 1582-10-15 on: proleptic Gregorian), proleptic_gregorian, noleap /
 * 365_day, all_leap / 366_day, 360_day; absent means standard (CF). Pure
 * (no MPI, no I/O): stack_select.c applies it to each file's coordinate.
 */
#include "stack_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const int cum365[13] = {0,   31,  59,  90,  120, 151, 181,
                               212, 243, 273, 304, 334, 365};
static const int cum366[13] = {0,   31,  60,  91,  121, 152, 182,
                               213, 244, 274, 305, 335, 366};

/* Days from 0000-03-01-based eras (proleptic Gregorian): day number of
 * y-m-d with 1970-01-01 = 0, and back. */
static long long greg_days(long long y, int m, int d) {
  long long era, yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = y - era * 400;
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void greg_date(long long z, long long *y, int *m) {
  long long era, doe, yoe, doy, mp;
  z += 719468;
  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = z - era * 146097;
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static long long floordiv(long long a, long long b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static long long cal_days(int cal, long long y, int m, int d) {
  switch (cal) {
  case GZS_CAL_NOLEAP:
    return y * 365 + cum365[m - 1] + d - 1;
  case GZS_CAL_ALLLEAP:
    return y * 366 + cum366[m - 1] + d - 1;
  case GZS_CAL_360:
    return y * 360 + (m - 1) * 30 + d - 1;
  default:
    return greg_days(y, m, d);
  }
}

static void cal_date(int cal, long long n, long long *y, int *m) {
  const int *cum = cal == GZS_CAL_ALLLEAP ? cum366 : cum365;
  long long len = cal == GZS_CAL_NOLEAP ? 365 : cal == GZS_CAL_ALLLEAP ? 366 : 360;
  long long doy;
  if (cal == GZS_CAL_GREGORIAN) {
    greg_date(n, y, m);
    return;
  }
  *y = floordiv(n, len);
  doy = n - *y * len;
  if (cal == GZS_CAL_360) {
    *m = (int)(doy / 30) + 1;
    return;
  }
  *m = 1;
  while (*m < 12 && doy >= cum[*m])
    (*m)++;
}

int gzs_time_axis(const char *units, const char *calendar, gzs_time_axis_t *ax, char *err,
                  size_t errlen) {
  char unit[16];
  long long y;
  int m, d, hh = 0, mm = 0, n = 0, k;
  double ss = 0;
  const char *p;
  memset(ax, 0, sizeof *ax);
  if (!calendar || !*calendar || !strcasecmp(calendar, "standard") ||
      !strcasecmp(calendar, "gregorian")) {
    ax->cal = GZS_CAL_GREGORIAN;
    ax->mixed = 1;
  } else if (!strcasecmp(calendar, "proleptic_gregorian")) {
    ax->cal = GZS_CAL_GREGORIAN;
  } else if (!strcasecmp(calendar, "noleap") || !strcasecmp(calendar, "365_day")) {
    ax->cal = GZS_CAL_NOLEAP;
  } else if (!strcasecmp(calendar, "all_leap") || !strcasecmp(calendar, "366_day")) {
    ax->cal = GZS_CAL_ALLLEAP;
  } else if (!strcasecmp(calendar, "360_day")) {
    ax->cal = GZS_CAL_360;
  } else {
    snprintf(err, errlen,
             "calendar \"%s\" is not supported (standard, gregorian, "
             "proleptic_gregorian, noleap, 365_day, all_leap, 366_day, 360_day)",
             calendar);
    return -1;
  }
  if (!units || sscanf(units, "%15s since %n", unit, &n) != 1 || n == 0) {
    snprintf(err, errlen, "time units \"%s\" are not \"UNIT since DATE\"",
             units ? units : "");
    return -1;
  }
  p = units + n;
  k = sscanf(p, "%lld-%d-%d%*[ T]%d:%d:%lf", &y, &m, &d, &hh, &mm, &ss);
  if (k < 3 || m < 1 || m > 12 || d < 1 || d > 31 || hh < 0 || hh > 24 || mm < 0 ||
      mm > 59 || !(ss >= 0 && ss < 61)) {
    snprintf(err, errlen, "time units \"%s\": no reference date Y-M-D[ h:m:s]", units);
    return -1;
  }
  if (!strncasecmp(unit, "day", 3))
    ax->scale = 1.0;
  else if (!strncasecmp(unit, "hour", 4) || !strcasecmp(unit, "h"))
    ax->scale = 1.0 / 24;
  else if (!strncasecmp(unit, "min", 3))
    ax->scale = 1.0 / 1440;
  else if (!strncasecmp(unit, "sec", 3) || !strcasecmp(unit, "s"))
    ax->scale = 1.0 / 86400;
  else {
    snprintf(err, errlen,
             "time units \"%s\": unit \"%s\" is not days, hours, minutes or "
             "seconds",
             units, unit);
    return -1;
  }
  if (ax->mixed && (y < 1582 || (y == 1582 && (m < 10 || (m == 10 && d < 15))))) {
    snprintf(err, errlen,
             "time units \"%s\": a standard-calendar reference before "
             "1582-10-15 (Julian dates) is not supported",
             units);
    return -1;
  }
  ax->origin =
      (double)cal_days(ax->cal, y, m, d) + (hh * 3600.0 + mm * 60.0 + ss) / 86400;
  return 0;
}

int gzs_time_date(const gzs_time_axis_t *ax, double v, long long *year, int *month) {
  double t = ax->origin + v * ax->scale;
  if (!isfinite(t) || fabs(t) > 1e15)
    return -1;
  /* a record stamped at midnight belongs to the day it starts (+1 ms) */
  cal_date(ax->cal, (long long)floor(t + 1e-8), year, month);
  return 0;
}

double gzs_time_value(const gzs_time_axis_t *ax, double days) {
  return (days - ax->origin) / ax->scale;
}

double gzs_month_start(int cal, long long year, int month) {
  year += floordiv(month - 1, 12);
  month = (int)(month - 1 - 12 * floordiv(month - 1, 12)) + 1;
  return (double)cal_days(cal, year, month, 1);
}

/* One date Y-M-D[Thh[:mm[:ss]]] (or a blank for T) into f[6]; -1 when not
 * a date. f[5] = -1 when no time was given. */
static int parse_date(const char *p, const char *end, int f[6]) {
  char buf[64];
  int n = 0, k;
  size_t len = (size_t)(end - p);
  if (len == 0 || len >= sizeof buf)
    return -1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  f[3] = f[4] = 0;
  f[5] = -1;
  k = sscanf(buf, "%d-%d-%d%n", &f[0], &f[1], &f[2], &n);
  if (k != 3 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31)
    return -1;
  if (buf[n] == 'T' || buf[n] == ' ') {
    int m = 0;
    f[5] = 0;
    k = sscanf(buf + n + 1, "%d%n:%d%n:%d%n", &f[3], &m, &f[4], &m, &f[5], &m);
    if (k < 1 || f[3] < 0 || f[3] > 24 || f[4] < 0 || f[4] > 59 || f[5] < 0 || f[5] > 60)
      return -1;
    n += 1 + m;
  }
  return buf[n] ? -1 : 0;
}

const char *gzs_parse_date_range(const char *v, gzs_opts_t *o) {
  const char *slash = strchr(v, '/'), *end = v + strlen(v);
  o->have_date_range = 0;
  if (parse_date(v, slash ? slash : end, o->date_lo) != 0)
    return "expected START[/END] as YYYY-MM-DD[Thh:mm:ss], like 2012-01-01/2015-12-31";
  if (o->date_lo[5] < 0)
    o->date_lo[5] = 0; /* START alone: from the day's beginning */
  if (!slash) {        /* START alone: that day, or that instant */
    memcpy(o->date_hi, o->date_lo, sizeof o->date_hi);
    if (!strpbrk(v, "T "))
      o->date_hi[5] = -1;
  } else if (parse_date(slash + 1, end, o->date_hi) != 0) {
    return "END: expected YYYY-MM-DD[Thh:mm:ss], like 2015-12-31";
  }
  o->have_date_range = 1;
  return NULL;
}

static double date_days(int cal, const int f[6], int end_of_day) {
  double d = (double)cal_days(cal, f[0], f[1], f[2]);
  if (end_of_day && f[5] < 0)
    return d + 1 -
           1e-6; /* a date alone as END: the whole day (to 0.09 s before midnight) */
  return d + (f[3] * 3600.0 + f[4] * 60.0 + (f[5] > 0 ? f[5] : 0)) / 86400;
}

void gzs_date_range_days(const gzs_opts_t *o, int cal, double *lo, double *hi) {
  *lo = date_days(cal, o->date_lo, 0);
  *hi = date_days(cal, o->date_hi, 1);
}
