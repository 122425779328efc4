/*
 * cmd_stack.c - `gzstack stack`: options, scan, read, compressed allreduce,
 * reference, outputs, metrics, in that order (stack_internal.h lists where
 * each step lives).
 *
 * Failures: after every step that can fail on some ranks only, the ranks
 * agree (gzs_agree: an MPI_Allreduce of the status, then the lowest failing
 * rank's message goes to rank 0, which prints it); every rank then returns
 * the same non-zero code. Nothing calls MPI_Abort. Outputs are only written
 * after every input was read and reduced; a failure while writing removes
 * what this run had written.
 *
 * Exit codes: 0 success; 1 a run-time failure (unreadable input, shape
 * mismatch, write error, an existing output without --force, a violated
 * bound under --verify); 2 a usage error (unknown option, bad value).
 */
#define _POSIX_C_SOURCE 200809L /* glob, strtok_r, gmtime_r, isatty, access */
#include "app.h"
#include "stack.h"
#include "stack_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Complete a non-blocking collective without spinning: a rank that waits
 * for others (rank 0 writing the outputs alone, a slower reader) naps
 * between tests instead of polling MPI at full speed, so it leaves the CPU
 * to the ranks still working where ranks share cores. Costs at most a nap
 * (0.1 ms) of latency. */
static void wait_quietly(MPI_Request *req) {
  const struct timespec nap = {0, 100000};
  int done = 0;
  MPI_Test(req, &done, MPI_STATUS_IGNORE);
  while (!done) {
    nanosleep(&nap, NULL);
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
  }
}

int gzs_agree(MPI_Comm comm, int failed, const char *err) {
  int rank, size, any = 0, first;
  char msg[GZS_ERRLEN];
  MPI_Request req;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  failed = failed != 0;
  MPI_Iallreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm, &req);
  wait_quietly(&req);
  if (!any)
    return 0;
  first = failed ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (rank == first)
    snprintf(msg, sizeof msg, "%s", err && *err ? err : "failed (no message)");
  MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
  if (rank == 0)
    fprintf(stderr, "gzstack stack: %s\n", msg); /* the failing rank's own message */
  return 1;
}

void gzs_progress(const gzs_opts_t *o, gzs_run_t *r, int force, const char *fmt, ...) {
  static double last = -1;
  double now = MPI_Wtime();
  va_list ap;
  if (o->quiet || r->rank != 0)
    return;
  if (!force && (now - r->t.t0 < 1.0 || now - last < 1.0))
    return;
  last = now;
  fprintf(stderr, "gzstack: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, ", %.1f s%s", now - r->t.t0, isatty(2) ? "        \r" : "\n");
  fflush(stderr);
}

/* Slice / render checks need the shape (known everywhere) and the
 * dimension names (rank 0). */
static int check_view(const gzs_opts_t *o, const gzs_run_t *r, MPI_Comm comm) {
  char err[GZS_ERRLEN] = "", desc[256];
  size_t rows, cols, *index = NULL;
  int failed = 0;
  if (r->rank == 0 && (o->png || o->have_slice || o->have_section)) {
    if (gzs_render_view(o, r, &rows, &cols, &index, desc, sizeof desc) != 0) {
      snprintf(err, sizeof err, "%s", desc);
      failed = 1;
    }
    free(index);
  }
  return gzs_agree(comm, failed, err);
}

void gzs_run_free(gzs_run_t *r) {
  for (int i = 0; r->files && i < r->nfiles; i++)
    free(r->files[i].recs);
  free(r->files);
  if (r->has_meta0)
    gz_meta_free(&r->meta0);
  free(r->acc);
  free(r->counts);
  free(r->reduced);
  free(r->result);
  free(r->out);
  free(r->exact);
  free(r->exact_part);
  free(r->exact_result);
  free(r->key_group_of);
  free(r->codes);
  free(r->rec_days);
  free(r->rec_ym);
  free(r->rec_mlen);
  free(r->rec_bnd);
  free(r->sel_w);
  free(r->snap_w);
  free(r->wsum);
  free(r->wsq);
  free(r->gout);
  free(r->gtime);
  free(r->gexact);
  free(r->gclaim);
  free(r->gbnd);
  for (int i = 0; i < r->nwritten; i++)
    free(r->written[i]);
  free(r->written);
  memset(r, 0, sizeof *r);
}

/* The phase clock: the time since the last mark goes to *own, less what
 * the sub-timers took meanwhile (they keep their share). */
typedef struct phase_clock {
  double mark, sub;
} phase_clock_t;

static double sub_timers(const gzs_times_t *t) {
  return t->read + t->setup + t->compress + t->communicate;
}

static void phase_end(phase_clock_t *c, gzs_times_t *t, double *own) {
  double now = gz_app_clock(), sub = sub_timers(t);
  *own += (now - c->mark) - (sub - c->sub);
  c->mark = now;
  c->sub = sub;
}

/* --var all: rank 0 lists the first input's variables along its record
 * dimension, every rank receives them as o->var = "a,b,c". */
static int all_vars(gzs_opts_t *o, MPI_Comm comm, int rank) {
  char err[GZS_ERRLEN] = "", list[GZS_ERRLEN * 8];
  int len = 0;
  if (rank == 0) {
    if (gz_io_detect(o->inputs[0]) != GZ_FMT_NETCDF)
      snprintf(err, sizeof err, "--var all: %s is not a netCDF file", o->inputs[0]);
    else if (gz_io_netcdf_vars_along(o->inputs[0], list, sizeof list, err, sizeof err) ==
             0)
      len = (int)strlen(list) + 1;
    if (len == 0)
      fprintf(stderr, "gzstack stack: --var all: %s\n", err);
  }
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  if (len == 0)
    return -1;
  MPI_Bcast(list, len, MPI_CHAR, 0, comm);
  free(o->var);
  o->var = malloc((size_t)len);
  if (gzs_agree(comm, !o->var, "out of memory"))
    return -1;
  memcpy(o->var, list, (size_t)len);
  if (rank == 0 && !o->quiet)
    fprintf(stderr, "gzstack: --var all: %s\n", list);
  return 0;
}

/* Rank 0: variable k is stacked along the first variable's stacking axis
 * (the same first dimension, by name and length). */
static int same_axis(const gzs_run_t *a, const gzs_run_t *b, const gzs_opts_t *o,
                     char *err, size_t errlen) {
  const gz_meta_t *x = &a->meta0, *y = &b->meta0;
  if (y->ndims >= 1 && !strcmp(x->dim_names[0], y->dim_names[0]) &&
      x->dims[0] == y->dims[0])
    return 0;
  snprintf(err, errlen,
           "--var %s: %s: variable %s has no dimension %s (the stacking axis of %s, %zu "
           "records); its first dimension is %s",
           o->var, o->inputs[0], y->var, x->dim_names[0], x->var, x->dims[0],
           y->ndims >= 1 ? y->dim_names[0] : "none (a scalar)");
  return -1;
}

/* One variable: scan, then every group / the moments / the plain stack,
 * with its reference. */
static int stack_one(const gzs_opts_t *o, const gzs_opts_t *all, const gzs_run_t *first,
                     gzs_run_t *r, phase_clock_t *clock, MPI_Comm comm, char *err,
                     size_t errlen) {
  int rc;
  if (gzs_grouped(o) && (o->scales || o->key_text)) { /* the same on every rank */
    snprintf(err, errlen,
             "%s: not with --group, --running or --ensemble (one stack over the "
             "selection only)",
             o->scales ? "--scale" : "--key");
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    return -1;
  }
  rc = o->key_text ? gzs_key_scan(o, r, comm, err, errlen)
                   : gzs_scan(o, r, comm, err, errlen);
  if (rc != 0 || check_view(o, r, comm))
    return -1;
  if (gzs_scale_count(o, r, err, errlen) != 0) { /* the same on every rank */
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    return -1;
  }
  /* --var a,b,c: every variable along the first one's stacking axis */
  if (gzs_agree(comm, first && r->rank == 0 && same_axis(first, r, all, err, errlen) != 0,
                err))
    return -1;
  if (gzs_weights_setup(o, r, comm, err, errlen) != 0)
    return -1;
  phase_end(clock, &r->t, &r->t.scan);
  if (gzs_grouped(o)) {
    /* one stack per group, each with its reference */
    if (gzs_groups(o, r, comm, err, errlen) != 0)
      return -1;
    phase_end(clock, &r->t, &r->t.result);
  } else if (gzs_op_is_moment(o->op)) {
    /* two readings and reductions (one for rms), reference included */
    if (gzs_moments(o, r, comm, err, errlen) != 0)
      return -1;
    phase_end(clock, &r->t, &r->t.result);
  } else {
    if (gzs_read(o, r, comm, err, errlen) != 0)
      return -1;
    phase_end(clock, &r->t, &r->t.accumulate);
    gzs_progress(o, r, 0, "read %llu snapshots, reducing", (unsigned long long)r->nsnap);
    r->out_on_rank0 = 1; /* the other ranks neither write nor render */
    if (gzs_reduce(o, r, comm, err, errlen) != 0)
      return -1;
    phase_end(clock, &r->t, &r->t.result);
    if (o->verify && gzs_reference(o, r, comm, err, errlen) != 0)
      return -1;
    phase_end(clock, &r->t, &r->t.reference);
  }
  return 0;
}

/* --var a,b,c: the names (in one allocation, *names[0] owns the text);
 * NULL var: one unnamed (the only data variable). -1: an empty name. */
static int split_vars(const char *var, char ***names, int *n, char *err, size_t errlen) {
  size_t len = var ? strlen(var) : 0;
  char *text = malloc(len + 1), *p;
  *n = 1;
  for (size_t i = 0; i < len; i++)
    *n += var[i] == ',';
  *names = calloc((size_t)*n + 1, sizeof(char *));
  if (!text || !*names) {
    free(text);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (!var) {
    free(text);
    return 0;
  }
  memcpy(text, var, len + 1);
  p = text;
  (*names)[0] = text; /* owns the text, also after an error */
  for (int k = 0; k < *n; k++) {
    size_t l = strcspn(p, ",");
    (*names)[k] = p;
    if (l == 0) {
      snprintf(err, errlen, "--var %s: an empty variable name", var);
      return -1;
    }
    p[l] = '\0';
    p += l + 1;
  }
  return 0;
}

int gz_cmd_stack(int argc, char **argv, MPI_Comm comm) {
  gzs_opts_t o;
  gzs_run_t *runs = NULL, *r;
  char err[GZS_ERRLEN] = "", **names = NULL;
  int rc, failed = 0, code = 1, nvars = 0, rank;
  phase_clock_t clock = {gz_app_start(), 0};

  rc = gzs_options_parse(argc, argv, comm, &o);
  if (rc == 1)
    return 0;
  if (rc != 0)
    return 2;
  MPI_Comm_rank(comm, &rank);
  if (o.var && !strcmp(o.var, "all") && all_vars(&o, comm, rank) != 0) {
    code = 1;
    goto done;
  }
  failed = split_vars(o.var, &names, &nvars, err, sizeof err) != 0;
  if (!failed && nvars > 1 && gz_io_format_from_path(o.output) != GZ_FMT_NETCDF) {
    snprintf(err, sizeof err,
             "--var %s: several variables are written to a .nc output only", o.var);
    failed = 1;
  }
  if (failed) { /* the same verdict on every rank */
    if (rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    code = 2;
    goto done;
  }
  runs = calloc((size_t)nvars, sizeof *runs);
  if (gzs_agree(comm, !runs, "out of memory"))
    goto done;
  for (int k = 0; k < nvars; k++) {
    runs[k].t.t0 = MPI_Wtime();
    runs[k].rank = rank;
    MPI_Comm_size(comm, &runs[k].size);
  }
  r = &runs[0];
  gzs_device_note(&o, r->rank);

  /* outputs: refuse existing ones (without --force) before any work */
  if (r->rank == 0 && gzs_check_targets(&o, err, sizeof err) != 0)
    failed = 1;
  if (gzs_agree(comm, failed, err))
    goto done;
  phase_end(&clock, &r->t, &r->t.startup);
  for (int k = 0; k < nvars; k++) {
    gzs_opts_t one = o; /* the same options, one variable */
    one.var = names[k];
    if (nvars > 1)
      gzs_progress(&o, r, 1, "variable %s (%d of %d)", names[k], k + 1, nvars);
    if (stack_one(&one, &o, k > 0 ? r : NULL, &runs[k], &clock, comm, err, sizeof err) !=
        0)
      goto done;
  }

  /* rank 0 writes; all agree on the outcome */
  if (r->rank == 0 && gzs_write_output(&o, runs, nvars, err, sizeof err) != 0)
    failed = 1;
  phase_end(&clock, &r->t, &r->t.write);
  if (r->rank == 0 && !failed && gzs_write_pngs(&o, r, err, sizeof err) != 0)
    failed = 1;
  phase_end(&clock, &r->t, &r->t.render);
  {
    /* peak resident memory of the largest and smallest rank so far */
    struct rusage ru;
    double rss[2] = {0, 0};
    if (getrusage(RUSAGE_SELF, &ru) == 0)
      rss[0] = rss[1] = 1024.0 * (double)ru.ru_maxrss; /* Linux: KiB */
    MPI_Request req;
    rss[1] = -rss[1];
    /* the other ranks wait here while rank 0 writes */
    MPI_Iallreduce(MPI_IN_PLACE, rss, 2, MPI_DOUBLE, MPI_MAX, comm, &req);
    wait_quietly(&req);
    r->peak_rss_max = rss[0];
    r->peak_rss_min = -rss[1];
  }
  phase_end(&clock, &r->t, &r->t.finish);
  r->t.total = clock.mark - gz_app_start(); /* the metrics show rank 0's */
  if (!failed && r->rank == 0 && o.metrics &&
      gzs_write_metrics(&o, r, err, sizeof err) != 0)
    failed = 1;
  if (failed && r->rank == 0)
    gzs_remove_written(r);
  if (gzs_agree(comm, failed, err))
    goto done;
  for (int k = 0; k < nvars && r->rank == 0 && !o.quiet; k++)
    gzs_print_summary(&o, &runs[k]);
  fflush(stdout);
  code = 0;
  if (o.verify) {
    int within = 1;
    for (int k = 0; k < nvars; k++)
      within &= runs[k].within;
    MPI_Bcast(&within, 1, MPI_INT, 0, comm);
    for (int k = 0; k < nvars && !within && r->rank == 0; k++)
      if (!runs[k].within)
        fprintf(stderr,
                "gzstack stack: --verify: %s: the error %.6g exceeds the claimed bound "
                "%.6g\n",
                runs[k].meta0.var, runs[k].q.max_abs_error, runs[k].claimed);
    if (!within)
      code = 1;
  }
done:
  for (int k = 0; runs && k < nvars; k++)
    gzs_run_free(&runs[k]);
  free(runs);
  if (names)
    free(names[0]);
  free(names);
  gzs_opts_free(&o);
  return code;
}
