/*
 * report.c - counters of libgzcoll_pmpi, the GZCOLL_VERBOSE exit report and
 * gzcoll_pmpi_counters(), the one exported query call.
 *
 * Counters are per process, updated with C11 atomics (an application may
 * call collectives on different communicators from different threads).
 * Per call kind:
 *   routed      calls that went through libgzcoll
 *   compressed  of which libgzcoll moved compressed data (its report)
 *   passed      calls that did not qualify: PMPI_ with arguments unchanged
 *   fallback    routed calls that libgzcoll refused and PMPI_ redid
 *   bytes_raw   bytes this rank would have sent uncompressed (routed calls)
 *   bytes_sent  bytes this rank actually sent (routed calls)
 *   ns          wall time of the routed calls, nanoseconds
 *   explored    routed calls that were `auto`'s exploration trials: the path
 *               its model did not choose, run to measure it (its report)
 *
 * The report (rank 0, stderr, at MPI_Finalize) has a settings line and one
 * line per call kind that was called at all, e.g.
 *   gzcoll_pmpi: allreduce calls 40 routed 32 compressed 32 passed 8
 *     fallback 0 bytes 1.05e+07 -> 2.61e+06 (4.02x) time 0.0312 s explored 0
 * (one line): call counts of rank 0, bytes summed over ranks, time the
 * largest over ranks. Collective: GZCOLL_VERBOSE must be the same on every
 * rank, as every GZCOLL_* variable.
 */
#include "gzcoll_pmpi.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum {
  C_ROUTED,
  C_COMPRESSED,
  C_PASSED,
  C_FALLBACK,
  C_RAW,
  C_SENT,
  C_NS,
  C_EXPLORED,
  C_N
};

static atomic_ullong counters[GZP_KIND_COUNT][C_N];
static atomic_ullong ctx_created, ctx_destroyed;

static const char *const kind_names[GZP_KIND_COUNT] = {
    "allreduce", "reduce_scatter_block",
    "allgather", "bcast",
    "scatter",   "alltoall",
    "send",      "recv"};

const char *gzp_kind_name(gzp_kind_t kind) {
  return (int)kind >= 0 && kind < GZP_KIND_COUNT ? kind_names[kind] : "unknown";
}

void gzp_count_routed(gzp_kind_t kind, const gz_report_t *rep, double seconds,
                      int fellback) {
  atomic_ullong *c = counters[kind];
  atomic_fetch_add(&c[C_ROUTED], 1);
  if (fellback)
    atomic_fetch_add(&c[C_FALLBACK], 1);
  if (rep) {
    if (rep->compressed)
      atomic_fetch_add(&c[C_COMPRESSED], 1);
    if (rep->explored)
      atomic_fetch_add(&c[C_EXPLORED], 1);
    atomic_fetch_add(&c[C_RAW], rep->bytes_raw);
    atomic_fetch_add(&c[C_SENT], rep->bytes_sent);
  }
  if (seconds > 0)
    atomic_fetch_add(&c[C_NS], (unsigned long long)(seconds * 1e9));
}

void gzp_count_passed(gzp_kind_t kind) { atomic_fetch_add(&counters[kind][C_PASSED], 1); }

void gzp_count_ctx(int created) {
  atomic_fetch_add(created ? &ctx_created : &ctx_destroyed, 1);
}

/* Exported (gzcoll_pmpi.map) for tests and tools that look it up with
 * dlsym(RTLD_DEFAULT, "gzcoll_pmpi_counters"), so that they need no header.
 * kind: a call kind name ("allreduce", ...) -> out[0..6] = routed,
 * compressed, passed, fallback, bytes_raw, bytes_sent, nanoseconds; or
 * "contexts" -> out[0..2] = created, destroyed, alive (others 0). Returns 0,
 * or -1 for an unknown kind or a NULL argument. Unchanged since 0.1: the
 * counters added later come from gzcoll_pmpi_counters_n. */
int gzcoll_pmpi_counters(const char *kind, unsigned long long out[7]);
/* The same, n counters (at most 8: the 7 above, then explored): a caller built for fewer
 * reads a prefix. Returns the number written, or -1 for an unknown kind, a NULL argument
 * or n < 0. */
int gzcoll_pmpi_counters_n(const char *kind, unsigned long long *out, int n);

int gzcoll_pmpi_counters_n(const char *kind, unsigned long long *out, int n) {
  unsigned long long v[C_N] = {0};
  int found = 0;
  if (!kind || !out || n < 0)
    return -1;
  if (strcmp(kind, "contexts") == 0) {
    v[0] = atomic_load(&ctx_created);
    v[1] = atomic_load(&ctx_destroyed);
    v[2] = v[0] - v[1];
    found = 1;
  }
  for (int k = 0; !found && k < GZP_KIND_COUNT; k++) {
    if (strcmp(kind, kind_names[k]) == 0) {
      for (int i = 0; i < C_N; i++)
        v[i] = atomic_load(&counters[k][i]);
      found = 1;
    }
  }
  n = n < C_N ? n : C_N;
  if (!found)
    n = 0;
  memcpy(out, v, (size_t)n * sizeof out[0]);
  return found ? n : -1;
}

int gzcoll_pmpi_counters(const char *kind, unsigned long long out[7]) {
  if (out)
    memset(out, 0, 7 * sizeof out[0]);
  return gzcoll_pmpi_counters_n(kind, out, 7) < 0 ? -1 : 0;
}

void gzp_report_finalize(void) {
  const gzp_config_t *cfg = gzp_config();
  double local[GZP_KIND_COUNT][3], total[GZP_KIND_COUNT][3];
  unsigned long long n[GZP_KIND_COUNT][5];
  int rank = 0, size = 0;

  if (!cfg->verbose)
    return;
  for (int k = 0; k < GZP_KIND_COUNT; k++) {
    local[k][0] = (double)atomic_load(&counters[k][C_RAW]);
    local[k][1] = (double)atomic_load(&counters[k][C_SENT]);
    local[k][2] = -(double)atomic_load(&counters[k][C_NS]) * 1e-9; /* max via MIN */
    n[k][0] = atomic_load(&counters[k][C_ROUTED]);
    n[k][1] = atomic_load(&counters[k][C_COMPRESSED]);
    n[k][2] = atomic_load(&counters[k][C_PASSED]);
    n[k][3] = atomic_load(&counters[k][C_FALLBACK]);
    n[k][4] = atomic_load(&counters[k][C_EXPLORED]);
  }
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  /* bytes: sum; time: largest, as the minimum of the negated times */
  PMPI_Reduce(local, total, GZP_KIND_COUNT * 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  {
    double t[GZP_KIND_COUNT], tmin[GZP_KIND_COUNT];
    for (int k = 0; k < GZP_KIND_COUNT; k++)
      t[k] = local[k][2];
    PMPI_Reduce(t, tmin, GZP_KIND_COUNT, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    for (int k = 0; k < GZP_KIND_COUNT; k++)
      total[k][2] = -tmin[k];
  }
  if (rank != 0)
    return;
  if (cfg->enabled)
    fprintf(stderr,
            "gzcoll_pmpi: settings e=%g %s %s min_bytes=%zu algo=%s ranks=%d "
            "contexts=%llu\n",
            cfg->gz.error_bound, gz_eb_mode_name(cfg->gz.eb_mode),
            gz_bound_name(cfg->gz.bound_policy), cfg->min_bytes,
            cfg->algo[0] ? cfg->algo : "auto", size,
            (unsigned long long)atomic_load(&ctx_created));
  else
    fprintf(stderr, "gzcoll_pmpi: settings pass-through (not configured) ranks=%d\n",
            size);
  for (int k = 0; k < GZP_KIND_COUNT; k++) {
    unsigned long long calls = n[k][0] + n[k][2];
    if (!calls)
      continue;
    fprintf(stderr,
            "gzcoll_pmpi: %s calls %llu routed %llu compressed %llu passed %llu "
            "fallback %llu bytes %.3e -> %.3e (%.2fx) time %.4f s explored %llu\n",
            kind_names[k], calls, n[k][0], n[k][1], n[k][2], n[k][3], total[k][0],
            total[k][1], total[k][1] > 0 ? total[k][0] / total[k][1] : 1.0, total[k][2],
            n[k][4]);
  }
  fflush(stderr);
}
