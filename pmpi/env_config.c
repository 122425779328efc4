/*
 * env_config.c - the GZCOLL_* environment variables of libgzcoll_pmpi.
 *
 *   GZCOLL_ERROR_BOUND   error bound e (> 0, finite). Unset or empty: nothing
 *                        is configured and every call passes through.
 *   GZCOLL_EB_MODE       abs (default) | rel (e times the value range)
 *   GZCOLL_BOUND         strict (default: e bounds every result element) |
 *                        per-message (e bounds each quantization)
 *   GZCOLL_MIN_BYTES     smallest message routed through libgzcoll, bytes,
 *                        optional suffix k, m, g (x 1024); default 65536
 *   GZCOLL_COLLECTIVES   comma list of allreduce, reduce_scatter_block
 *                        (alias reduce_scatter), allgather, bcast, scatter,
 *                        alltoall; "all" (default) or "none"
 *   GZCOLL_ALGO          algorithm override, read by libgzcoll itself: one
 *                        name or "collective=name,..." (checked here too)
 *   GZCOLL_P2P           on | off (default): MPI_Send / MPI_Recv of float data
 *   GZCOLL_VERBOSE       on | off (default): one report line per call kind at
 *                        MPI_Finalize
 * Booleans accept 1/0, on/off, yes/no, true/false. A value that does not
 * parse gives one warning line naming the variable (rank 0) and the whole
 * library passes through: a typo must never silently change the numbers.
 * Every variable must be the same on every rank (mpirun -x sets them so);
 * MPI_Init checks it (gzp_config_agree) and switches the library off on
 * every rank if the parsed settings differ anywhere.
 */
#include "gzcoll_pmpi.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GZP_DEFAULT_MIN_BYTES 65536u

static gzp_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

void gzp_warn(const char *fmt, ...) {
  int init = 0, fin = 0, rank = 0;
  va_list ap;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    return;
  fputs("gzcoll_pmpi: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
}

static const char *env(const char *name) {
  const char *s = getenv(name);
  return s && *s ? s : NULL;
}

/* Case-insensitive comparison of s[0..len) with word. */
static int word_eq(const char *s, size_t len, const char *word) {
  return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

static int parse_bool(const char *s, int *value) {
  static const char *const yes[] = {"1", "on", "yes", "true"};
  static const char *const no[] = {"0", "off", "no", "false"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0) {
      *value = 1;
      return 1;
    }
    if (strcasecmp(s, no[i]) == 0) {
      *value = 0;
      return 1;
    }
  }
  return 0;
}

static int parse_size(const char *s, size_t *value) {
  char *end;
  unsigned long long v;
  double mult = 1;
  while (isspace((unsigned char)*s))
    s++;
  if (!isdigit((unsigned char)*s))
    return 0;
  v = strtoull(s, &end, 10);
  if (*end == 'k' || *end == 'K')
    mult = 1024.0, end++;
  else if (*end == 'm' || *end == 'M')
    mult = 1024.0 * 1024.0, end++;
  else if (*end == 'g' || *end == 'G')
    mult = 1024.0 * 1024.0 * 1024.0, end++;
  while (isspace((unsigned char)*end))
    end++;
  if (*end || (double)v * mult > 1e18)
    return 0;
  *value = (size_t)((double)v * mult);
  return 1;
}

static int kind_lookup(const char *s, size_t len, gzp_kind_t *kind) {
  if (word_eq(s, len, "reduce_scatter")) {
    *kind = GZP_REDUCE_SCATTER_BLOCK;
    return 1;
  }
  for (int k = 0; k <= GZP_ALLTOALL; k++) {
    if (word_eq(s, len, gzp_kind_name((gzp_kind_t)k))) {
      *kind = (gzp_kind_t)k;
      return 1;
    }
  }
  return 0;
}

static int parse_collectives(const char *s, unsigned *mask) {
  const unsigned all = (1u << (GZP_ALLTOALL + 1)) - 1u;
  *mask = 0;
  if (strcasecmp(s, "all") == 0) {
    *mask = all;
    return 1;
  }
  if (strcasecmp(s, "none") == 0)
    return 1;
  for (;;) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    gzp_kind_t kind;
    while (len && isspace((unsigned char)*s))
      s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
      len--;
    if (!kind_lookup(s, len, &kind))
      return 0;
    *mask |= 1u << kind;
    if (!end)
      break;
    s = end + 1;
  }
  return 1;
}

/* GZCOLL_ALGO, the grammar libgzcoll reads: "name" or "coll=name,...". Which
 * algorithm applies to which collective is libgzcoll's decision (a context
 * it refuses is reported by comm_cache.c). */
static int parse_algo(const char *s) {
  char item[64];
  gz_algo_t algo;
  if (!strchr(s, '='))
    return gz_algo_parse(s, &algo) == GZ_OK;
  while (*s) {
    const char *end = strchr(s, ','), *eq;
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (len == 0 || len >= sizeof item)
      return 0;
    memcpy(item, s, len);
    item[len] = '\0';
    eq = strchr(item, '=');
    if (!eq || gz_algo_parse(eq + 1, &algo) != GZ_OK)
      return 0;
    if (!word_eq(item, (size_t)(eq - item), "p2p") &&
        !word_eq(item, (size_t)(eq - item), "send")) {
      gzp_kind_t kind;
      if (!kind_lookup(item, (size_t)(eq - item), &kind))
        return 0;
    }
    s += len;
    if (*s == ',')
      s++;
  }
  return 1;
}

static void load(void) {
  gzp_config_t c;
  const char *s, *bad = NULL;
  char *end;

  memset(&c, 0, sizeof c);
  c.gz = (gz_config_t)GZ_CONFIG_INIT;
  c.min_bytes = GZP_DEFAULT_MIN_BYTES;
  c.collectives = (1u << (GZP_ALLTOALL + 1)) - 1u;

  if ((s = env("GZCOLL_VERBOSE")) && !parse_bool(s, &c.verbose))
    bad = "GZCOLL_VERBOSE";
  if (!bad && (s = env("GZCOLL_ERROR_BOUND"))) {
    double e = strtod(s, &end);
    while (isspace((unsigned char)*end))
      end++;
    if (*end || !(e > 0) || !isfinite(e))
      bad = "GZCOLL_ERROR_BOUND";
    c.gz.error_bound = e;
    c.enabled = 1;
  }
  if (!bad && (s = env("GZCOLL_EB_MODE"))) {
    if (strcasecmp(s, "abs") == 0)
      c.gz.eb_mode = GZ_EB_ABS;
    else if (strcasecmp(s, "rel") == 0)
      c.gz.eb_mode = GZ_EB_REL;
    else
      bad = "GZCOLL_EB_MODE";
  }
  if (!bad && (s = env("GZCOLL_BOUND"))) {
    if (strcasecmp(s, "strict") == 0)
      c.gz.bound_policy = GZ_BOUND_STRICT;
    else if (strcasecmp(s, "per-message") == 0 || strcasecmp(s, "per_message") == 0)
      c.gz.bound_policy = GZ_BOUND_PER_MESSAGE;
    else
      bad = "GZCOLL_BOUND";
  }
  if (!bad && (s = env("GZCOLL_MIN_BYTES")) && !parse_size(s, &c.min_bytes))
    bad = "GZCOLL_MIN_BYTES";
  if (!bad && (s = env("GZCOLL_COLLECTIVES")) && !parse_collectives(s, &c.collectives))
    bad = "GZCOLL_COLLECTIVES";
  if (!bad && (s = env("GZCOLL_ALGO"))) {
    if (!parse_algo(s))
      bad = "GZCOLL_ALGO";
    snprintf(c.algo, sizeof c.algo, "%s", s);
  }
  if (!bad && (s = env("GZCOLL_P2P")) && !parse_bool(s, &c.p2p))
    bad = "GZCOLL_P2P";

  if (bad) {
    gzp_warn("warning: %s=\"%s\" is not valid (see docs/pmpi.md): "
             "passing every MPI call through uncompressed",
             bad, getenv(bad));
    c.enabled = 0;
  } else if (!c.enabled && c.verbose) {
    gzp_warn("GZCOLL_ERROR_BOUND is not set: passing every MPI call through");
  }
  if (!c.enabled)
    c.p2p = 0;
  config = c;
}

const gzp_config_t *gzp_config(void) {
  pthread_once(&config_once, load);
  return &config;
}

void gzp_config_disable_p2p(const char *why) {
  pthread_once(&config_once, load);
  if (config.p2p)
    gzp_warn("warning: GZCOLL_P2P ignored (%s)", why);
  config.p2p = 0;
}

/* FNV-1a over the bytes of v. */
static unsigned long long fnv(unsigned long long h, const void *v, size_t n) {
  const unsigned char *p = v;
  for (size_t k = 0; k < n; k++)
    h = (h ^ p[k]) * 1099511628211ull;
  return h;
}

void gzp_config_agree(void) {
  unsigned long long h = 1469598103934665603ull, v[2], all[2];
  unsigned long long min_bytes;
  int ints[7];
  pthread_once(&config_once, load);
  /* the parsed values (so "1e-3" and "0.001" agree), field by field */
  ints[0] = config.enabled;
  ints[1] = (int)config.gz.eb_mode;
  ints[2] = (int)config.gz.bound_policy;
  ints[3] = (int)config.collectives;
  ints[4] = config.p2p;
  ints[5] = config.verbose;
  ints[6] = (int)strlen(config.algo);
  min_bytes = config.min_bytes;
  h = fnv(h, ints, sizeof ints);
  h = fnv(h, &config.gz.error_bound, sizeof config.gz.error_bound);
  h = fnv(h, &min_bytes, sizeof min_bytes);
  h = fnv(h, config.algo, strlen(config.algo));
  /* every rank holds the same h iff max(h) == h and max(~h) == ~h */
  v[0] = h;
  v[1] = ~h;
  if (PMPI_Allreduce(v, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      all[0] != h || all[1] != ~h) {
    /* the same outcome on every rank: some rank sees a different maximum */
    config.enabled = 0;
    config.p2p = 0;
    config.verbose = 0;
    gzp_warn("warning: the GZCOLL_* settings differ between ranks (give every rank the "
             "same environment, e.g. mpirun -x): passing every MPI call through");
  }
}
