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
 *   GZCOLL_P2P           on (default) | off: honour a program's
 *                        gzcoll_assert_p2p_pairs communicator info assertion
 *                        (MPI_Send / MPI_Recv of float data, p2p.c); never
 *                        compresses point to point on its own
 *   GZCOLL_VERBOSE       on | off (default): one report line per call kind at
 *                        MPI_Finalize
 * Booleans accept 1/0, on/off, yes/no, true/false. The values are parsed by
 * libgzcoll's getters (libgzcoll/src/gz_env.h), as the library reads its own
 * variables. A value that does not
 * parse gives one warning line naming the variable (rank 0) and the whole
 * library passes through: a typo must never silently change the numbers.
 * Every variable must be the same on every rank (mpirun -x sets them so);
 * MPI_Init checks it (gzp_config_agree) and switches the library off on
 * every rank if the parsed settings differ anywhere.
 */
#include "gzcoll_pmpi.h"

#include "gz_env.h"

#include <ctype.h>
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

/* Case-insensitive comparison of s[0..len) with word. */
static int word_eq(const char *s, size_t len, const char *word) {
  return strlen(word) == len && strncasecmp(s, word, len) == 0;
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

static void load(void) {
  /* the library's names (index = value); per_message an alias */
  const char *const eb_modes[] = {gz_eb_mode_name(GZ_EB_ABS), gz_eb_mode_name(GZ_EB_REL),
                                  gz_eb_mode_name(GZ_EB_PWREL), NULL};
  const char *const bounds[] = {gz_bound_name(GZ_BOUND_STRICT),
                                gz_bound_name(GZ_BOUND_PER_MESSAGE), "per_message", NULL};
  gzp_config_t c;
  const char *s, *bad = NULL;
  int st, index;

  memset(&c, 0, sizeof c);
  c.gz = (gz_config_t)GZ_CONFIG_INIT;
  c.gz.mpi_sum_bound = 0; /* no bound is reported: spare MPI's path a read */
  c.min_bytes = GZP_DEFAULT_MIN_BYTES;
  c.collectives = (1u << (GZP_ALLTOALL + 1)) - 1u;
  c.p2p = 1;

  if (gz_env_bool("GZCOLL_VERBOSE", &c.verbose) == GZ_ENV_BAD)
    bad = "GZCOLL_VERBOSE";
  if (!bad &&
      (st = gz_env_double("GZCOLL_ERROR_BOUND", &c.gz.error_bound)) != GZ_ENV_UNSET) {
    if (st == GZ_ENV_BAD)
      bad = "GZCOLL_ERROR_BOUND";
    c.enabled = 1;
  }
  if (!bad && (st = gz_env_enum("GZCOLL_EB_MODE", eb_modes, &index)) != GZ_ENV_UNSET) {
    if (st == GZ_ENV_BAD)
      bad = "GZCOLL_EB_MODE";
    else
      c.gz.eb_mode = (gz_eb_mode_t)index;
  }
  if (!bad && (st = gz_env_enum("GZCOLL_BOUND", bounds, &index)) != GZ_ENV_UNSET) {
    if (st == GZ_ENV_BAD)
      bad = "GZCOLL_BOUND";
    else
      c.gz.bound_policy = index == 0 ? GZ_BOUND_STRICT : GZ_BOUND_PER_MESSAGE;
  }
  if (!bad && gz_env_size("GZCOLL_MIN_BYTES", &c.min_bytes) == GZ_ENV_BAD)
    bad = "GZCOLL_MIN_BYTES";
  if (!bad && (s = gz_env_get("GZCOLL_COLLECTIVES")) &&
      !parse_collectives(s, &c.collectives))
    bad = "GZCOLL_COLLECTIVES";
  /* which algorithm applies to which collective is libgzcoll's decision (a
   * context it refuses is reported by comm_cache.c): the grammar only here */
  if (!bad && (s = gz_env_get("GZCOLL_ALGO"))) {
    if (gz_env_algo("GZCOLL_ALGO", NULL, NULL) == GZ_ENV_BAD)
      bad = "GZCOLL_ALGO";
    snprintf(c.algo, sizeof c.algo, "%s", s);
  }
  if (!bad && gz_env_bool("GZCOLL_P2P", &c.p2p) == GZ_ENV_BAD)
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

void gzp_config_disable_p2p(void) {
  pthread_once(&config_once, load);
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
