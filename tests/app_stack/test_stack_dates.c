/*
 * test_stack_dates.c - the CF time axis of --years / --months / --seasons
 * (app/stack_dates.c) and the option lists (app/stack_select.c), no MPI, no
 * file: hand-computed dates in each calendar, day boundaries, the refused
 * units and calendars, and the parsed selections.
 */
#include "gz_test.h"
#include "stack_internal.h"

#include <string.h>

static int date_of(const char *units, const char *cal, double v, long long y, int m) {
  gzs_time_axis_t ax;
  char err[256];
  long long yy = 0;
  int mm = 0;
  if (gzs_time_axis(units, cal, &ax, err, sizeof err) != 0) {
    fprintf(stderr, "%s / %s: %s\n", units, cal ? cal : "(none)", err);
    return 0;
  }
  if (gzs_time_date(&ax, v, &yy, &mm) != 0)
    return 0;
  if (yy != y || mm != m)
    fprintf(stderr, "%s %s %g: %lld-%d, expected %lld-%d\n", units, cal ? cal : "", v, yy,
            mm, y, m);
  return yy == y && mm == m;
}

static int refused(const char *units, const char *cal) {
  gzs_time_axis_t ax;
  char err[256] = "";
  return gzs_time_axis(units, cal, &ax, err, sizeof err) != 0 && err[0];
}

int main(void) {
  const char *ersst = "days since 1800-1-1 00:00:00";
  gzs_opts_t o;
  unsigned mask;
  /* standard: 2015-03-01 is day 78586 after 1800-01-01 (Python's date);
   * the day before is in February */
  GZ_CHECK(date_of(ersst, NULL, 78586, 2015, 3), "standard 2015-03-01");
  GZ_CHECK(date_of(ersst, "gregorian", 78585.5, 2015, 2), "standard 2015-02-28 12h");
  GZ_CHECK(date_of(ersst, "standard", 0, 1800, 1), "the reference date itself");
  GZ_CHECK(date_of(ersst, "standard", -1, 1799, 12), "before the reference");
  /* proleptic_gregorian before 1582: 1600 is a leap year, 1600-02-29 is
   * 6346 days after 1582-10-15; 1500-01-01 + 59 days = 1500-03-01 (1500 not
   * leap in Gregorian) */
  GZ_CHECK(date_of("days since 1582-10-15", "proleptic_gregorian", 6346, 1600, 2),
           "1600-02-29");
  GZ_CHECK(date_of("days since 1500-01-01", "proleptic_gregorian", 59, 1500, 3),
           "1500-03-01 proleptic");
  /* noleap: day 59 after 2001-01-01 is 03-01; 365 days is one year */
  GZ_CHECK(date_of("days since 2000-01-01", "noleap", 59, 2000, 3), "noleap no 02-29");
  GZ_CHECK(date_of("days since 2000-01-01", "365_day", 365, 2001, 1), "noleap year");
  GZ_CHECK(date_of("days since 2000-01-01", "all_leap", 59, 2000, 2), "all_leap 02-29");
  /* 360_day: 30-day months */
  GZ_CHECK(date_of("days since 2000-01-01", "360_day", 59.9, 2000, 2), "360: day 59");
  GZ_CHECK(date_of("days since 2000-01-01", "360_day", 60, 2000, 3), "360: day 60");
  GZ_CHECK(date_of("days since 2000-01-01", "360_day", 360, 2001, 1), "360: a year");
  /* other units and a time of day in the reference */
  GZ_CHECK(date_of("hours since 2000-01-31 12:00:00", NULL, 12, 2000, 2), "hours");
  GZ_CHECK(date_of("seconds since 2000-01-31 23:59:00", NULL, 60, 2000, 2), "seconds");
  GZ_CHECK(date_of("minutes since 2000-01-31T23:00:00", NULL, 59, 2000, 1), "minutes");
  /* refused */
  GZ_CHECK(refused("days since 1500-01-01", "standard"), "standard before 1582");
  GZ_CHECK(refused("days since 2000-01-01", "julian"), "julian calendar");
  GZ_CHECK(refused("days", NULL), "no reference date");
  GZ_CHECK(refused("fortnights since 2000-01-01", NULL), "unknown unit");
  GZ_CHECK(refused("days since 2000-13-01", NULL), "month 13");
  GZ_CHECK(refused(NULL, NULL), "no units");

  /* the lists */
  memset(&o, 0, sizeof o);
  GZ_CHECK(gzs_parse_years("1990/1999,2005", &o) == NULL && o.nyears == 2 &&
               o.year_lo[0] == 1990 && o.year_hi[0] == 1999 && o.year_lo[1] == 2005 &&
               o.year_hi[1] == 2005,
           "years list");
  GZ_CHECK(gzs_parse_years("1999/1990", &o) != NULL, "years range backwards");
  GZ_CHECK(gzs_parse_years("19x", &o) != NULL && gzs_parse_years("", &o) != NULL,
           "years garbage");
  GZ_CHECK(gzs_parse_months("12,1,2", &mask) == NULL && mask == (1u << 11 | 3u),
           "months");
  GZ_CHECK(gzs_parse_months("6/8", &mask) == NULL && mask == (7u << 5), "month range");
  GZ_CHECK(gzs_parse_months("13", &mask) != NULL && gzs_parse_months("0", &mask) != NULL,
           "months out of range");
  GZ_CHECK(gzs_parse_seasons("djf,SON", &mask) == NULL &&
               mask == (1u << 11 | 3u | 7u << 8),
           "seasons");
  GZ_CHECK(gzs_parse_seasons("DJFM", &mask) != NULL &&
               gzs_parse_seasons("", &mask) != NULL,
           "bad season");
  o.months_mask = 1u << 11 | 1u | 4u; /* Dec, Jan, Mar */
  o.seasons_mask = 1u << 11 | 3u;     /* DJF */
  o.nyears = 1;
  o.year_lo[0] = 1990;
  o.year_hi[0] = 1999;
  /* both masks must hold (Dec, Jan), and the year */
  GZ_CHECK(gzs_dates_selected(&o, 1995, 12) && gzs_dates_selected(&o, 1990, 1) &&
               !gzs_dates_selected(&o, 2000, 12) && !gzs_dates_selected(&o, 1995, 3) &&
               !gzs_dates_selected(&o, 1995, 2),
           "years, months and seasons together");
  return gz_test_finish();
}
