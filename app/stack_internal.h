/* stack_internal.h - what the parts of `gzstack stack` share, one stage
 * a file:
 *   stack_options.c     command line, INI config files, validation, --help
 *   stack_scan.c        1. the inputs' shapes, types and record counts
 *   stack_accumulate.c  2. snapshot values into the double accumulator
 *   stack_read.c        2. parallel reading (each rank its own snapshots)
 *   stack_read_root.c   2. root reading + compressed scatter
 *   stack_counts.c      3. agreed range, missing-value flag, per-point counts
 *   stack_bound.c       3. the error budget and the claimed bound (pure)
 *   stack_device.c      3. --device gpu: device choice and staging
 *   stack_reduce.c      3. the compressed allreduce in slabs, the result
 *   stack_reference.c   4. the exact reference of --verify
 *   stack_moments.c     var / std (two passes) and rms: steps 2-4 as sums
 *                       of squares, their bound and --verify reference
 *   stack_output.c      output file, PNG renders, metrics JSON, summary
 *   cmd_stack.c         gz_cmd_stack: the steps in order, the agreement of
 *                       every rank on every failure, progress, timings
 * Nothing here is used outside app/stack*.c and app/cmd_stack.c. */
#ifndef GZ_STACK_INTERNAL_H
#define GZ_STACK_INTERNAL_H

#include "gz_io.h"
#include "gzcoll.h"
#include "json.h"
#include "metrics.h"
#include "stack_bound.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define GZS_ERRLEN 1024
#define GZS_PATHLEN 4096
#define GZS_MPI_CHUNK (1 << 28) /* elements per MPI call */
/* Values per read into the reading buffer (at most a slab): a reused 32 MiB
 * of doubles instead of a fresh buffer the size of a snapshot */
#define GZS_READ_VALUES ((size_t)1 << 22)

/* Effective options: command line over config file over defaults. Strings
 * are owned copies (freed by gzs_opts_free). */
typedef struct gzs_opts {
  char **inputs; /* after glob expansion (rank 0 expands, all receive) */
  int ninputs;
  char **patterns; /* -i / input as given, for the settings echo */
  int npatterns;
  char *var;         /* NULL: the only data variable */
  char *dims_text;   /* --dims as given */
  gz_raw_opts_t raw; /* raw inputs: snapshot shape (record dim prepended later) */
  int have_raw;
  double e;
  gz_eb_mode_t eb_mode;
  gz_bound_policy_t bound;
  gzs_op_t op;
  int algo;       /* --algo: a choice of the option; gzs_algo_name() */
  int read_root;  /* --read root */
  int device_gpu; /* --device gpu */
  char *output, *png, *metrics, *stats_png, *config;
  int verify, force, quiet;
  int have_slice, slice_axis; /* slice_axis -1: a dimension name in slice_text */
  long slice_index;
  char *slice_text; /* --slice as given */
  char *steps_text; /* --steps as given (NULL: every record) */
  int have_steps;
  uint64_t step_start, step_stop, step_stride;   /* stop inclusive (UINT64_MAX: last) */
  char *years_text, *months_text, *seasons_text; /* as given (NULL: any) */
  int have_dates;                                /* any of the three */
  int nyears; /* year ranges [year_lo[i], year_hi[i]] (0: any year) */
  long long year_lo[64], year_hi[64];
  unsigned months_mask, seasons_mask; /* bit m-1 for month m (0: any) */
  char *dates_text;                   /* --dates START[/END] as given (cdo seldate) */
  int have_date_range;
  int date_lo[6], date_hi[6]; /* Y M D h m s (year as int); hi: -1 s = the day's end */
  double slab_mb;             /* read / reduce granularity in MiB of doubles */
  char *group_text;           /* --group as given (NULL: one stack) */
  int group_kind;             /* GZS_GROUP_* */
  uint64_t group_n;           /* --group N: records per group */
  double running;             /* --running N: window length (0: none) */
  int ensemble;               /* --ensemble: record k of every input */
  double deflate;             /* --deflate 0-9 (netCDF output) */
  int shuffle;                /* --shuffle on|off (with --deflate) */
  char *chunks_text;          /* --chunks AxBxC as given */
  size_t chunks[GZ_IO_MAXDIMS];
  int nchunks;
  char *weights_text;      /* --weights as given */
  char *file_weights_text; /* --file-weights as given (weights_kind PER_FILE) */
  int weights_kind;        /* GZS_WEIGHTS_* */
  double *weights;         /* --weights W1,W2,...: nweights values */
  size_t nweights;
  char *command_line; /* for provenance */
  /* SEG-Y (stack_key.c): --key groups traces by a trace header field
   * (key_text as given, its 1-based byte and size 2 or 4), --fold-key the
   * field the fold is written to; --normalize live: zeros are not samples
   * (the mean divides by the live count); --segy-format ibm */
  char *key_text, *fold_text;
  int key_byte, key_size, fold_byte, fold_size;
  int normalize_live;
  int segy_ibm;
  /* --png-section AXIS=VALUE: the slice rendered, by coordinate value */
  char *section_text;
  int have_section;
  char section_axis[64];
  double section_value;
  /* --scale: a factor per stacked record (per input file with --key) */
  char *scale_text;
  double *scales;
  int nscales;
  /* --reproducible: every input value quantized on one grid, integer codes
   * summed exactly (the output bytes do not depend on the rank count) */
  int reproducible;
} gzs_opts_t;

/* Parse argv (argv[0] = "stack") and the config file it names. Collective:
 * rank 0 reads the config file and expands globs, every rank receives the
 * same result. Returns 0 ok, 1 help printed (exit 0), 2 usage error (rank 0
 * printed it). */
int gzs_options_parse(int argc, char **argv, MPI_Comm comm, gzs_opts_t *o);
void gzs_opts_free(gzs_opts_t *o);
/* Only the config file, from text in memory (no MPI, no globs): 0, or -1
 * with the message in err (o then empty). For tests and fuzzing. */
int gzs_options_from_config_text(const char *text, const char *path, gzs_opts_t *o,
                                 char *err, size_t errlen);
const char *gzs_op_name(gzs_op_t op);
/* The name of the algorithm --algo chose ("auto", "ring", ...), as libgzcoll
 * spells it. */
const char *gzs_algo_name(const gzs_opts_t *o);
/* The settings object (same keys as the INI file) into the JSON. */
void gzs_opts_json(const gzs_opts_t *o, gz_json_t *j);

/* One input file as scanned. */
typedef struct gzs_file {
  uint64_t records;      /* snapshots stacked from it (after --steps) */
  uint64_t first;        /* global index of its first snapshot */
  uint64_t base;         /* global index of its record 0 among all input records */
  uint64_t rec0, stride; /* its k-th snapshot is record rec0 + k stride (stride 0: 1) */
  uint64_t *recs;        /* or recs[k] (dates selected; NULL: the stride rule) */
  int format;            /* gz_format_t */
  int dtype;             /* gz_dtype_t */
  int ndims;             /* of the variable, record dim included */
  uint64_t dims[GZ_IO_MAXDIMS];
  int has_fill;
  double fill;
} gzs_file_t;

/* Where the time of a run goes (seconds). cmd_stack.c marks the end of each
 * phase and gives the phase's time to its own part, less what the
 * sub-timers (read, setup, compress, communicate: measured where they
 * happen, in any phase) took meanwhile; so on every rank the parts add up
 * to total, from the start of main to the metrics. The metrics report
 * rank 0's (the rank that writes; waits for the others show in the phase
 * they happen in). */
typedef struct gzs_times {
  double total;
  double startup;     /* main to the options agreed: MPI_Init, options, globs */
  double scan;        /* shapes of the inputs */
  double read;        /* sub-timer: opening and reading files */
  double accumulate;  /* the rest of reading: sums, counts, masks */
  double setup;       /* sub-timer: gz_ctx_create (the library's set-up) */
  double compress;    /* sub-timer: the library's codec time */
  double communicate; /* sub-timer: data movement and agreements in MPI */
  double result;      /* the rest of the reduction: bounds, mean, output type */
  double reference;   /* --verify: exact reference, metrics, statistics */
  double write;       /* the output file */
  double render;      /* PNG renders and the statistics plot */
  double finish;      /* the closing agreements (memory, outcome) */
  double t0;          /* MPI_Wtime at the start of the command (progress) */
} gzs_times_t;

/* Everything the pipeline computes. Arrays of npoints values. */
typedef struct gzs_run {
  int rank, size;
  gzs_file_t *files;
  int nfiles;
  uint64_t nsnap;    /* N */
  uint64_t my_first; /* parallel read: my block [my_first, my_first+my_count) */
  uint64_t my_count; /* snapshots stacked on this rank */
  size_t npoints;    /* values per snapshot */
  gz_dtype_t dtype;  /* of the inputs and of the output */
  int snap_ndims;    /* snapshot dims (record dim dropped) */
  size_t snap_dims[GZ_IO_MAXDIMS];
  gz_meta_t meta0; /* rank 0: the first file's metadata */
  int has_meta0;

  double *acc;      /* local partial: sum, or max/min (NaN = none yet) */
  uint32_t *counts; /* per-point valid samples: local, then global; NULL = no mask */
  int any_mask;     /* agreed: some input value was missing somewhere */
  double lo, hi;    /* agreed: range of the valid input values */
  uint32_t c_min, c_max;
  size_t masked_points; /* points with no valid sample (written as fill) */

  double e_abs;       /* the user's bound in absolute units */
  double e_scatter;   /* root read: per-value bound given to gz_scatter */
  double e_allreduce; /* bound given to gz_allreduce (its error_bound) */
  double *reduced;    /* compressed allreduce result (sum / max / min) */
  double *result;     /* final field in double (fill = NaN) */
  void *out;          /* result in the output dtype (NULL on ranks other than 0 under
                         out_on_rank0) */
  int out_on_rank0;   /* only rank 0 needs out (the plain stack: rank 0 writes) */
  gz_report_t ar;     /* aggregated over slabs */
  gz_report_t sc;     /* scatter, aggregated (root read) */
  int have_scatter;
  double ar_bound;                /* agreed max result_bound of the allreduce */
  double sc_bound;                /* agreed max result_bound of the scatter */
  double quant_bound;             /* one quantization of the allreduce */
  uint64_t bytes_raw, bytes_sent; /* summed over ranks */
  uint64_t mask_bytes;            /* root read: mask bits sent by rank 0 */
  double stage_bound;             /* final error bound before the output rounding */
  double f32_term;                /* half an ulp of float32 at the largest output */
  double ibm_term;                /* --segy-format ibm: the IBM rounding */
  double claimed;                 /* stage_bound + f32_term + ibm_term */
  const char *algo_name;
  char algo_reason[96];
  int compressed;

  /* --verify (rank 0) */
  double *exact;        /* exact reduced values (sum / max / min), rank 0 */
  double *exact_part;   /* root read: allreduce-stage reference, rank 0 */
  double *exact_result; /* exact final field, rank 0 */
  gz_quality_t q;
  double ssim;
  int within;
  int have_stats;
  gz_error_stats_t stats;
  char stats_line[512];

  /* renders (rank 0): view, binning and the size of each PNG written */
  size_t view_rows, view_cols, bin_rows, bin_cols;
  int render_scale, nrenders;
  char view_desc[256];
  int png_w[3], png_h[3]; /* result, exact, error */

  /* second moments (stack_moments.c): the pass under way (0: none, 1: the
   * mean of var / std, 2: the sums of squares), the user's options (the
   * budget of each pass), the agreed mean pass 2 squares deviations from
   * (NULL: the values themselves, rms) and that mean's bound */
  int moment_pass;
  const gzs_opts_t *moment_o;
  const double *center;
  double mean_bound;

  /* --key (stack_key.c): traces and groups, each trace's group (every
   * rank), the global trace index of each group's first trace and fold */
  uint64_t key_traces;
  size_t key_groups;
  uint32_t *key_group_of; /* key_traces entries */
  int key_lsb;            /* the first file's byte order (for messages) */

  /* --group / --running (stack_group.c): per input record (all inputs,
   * before selection) its time in days of the calendar and year * 12 +
   * month - 1 (NaN: no time coordinate); then one field per group */
  double *rec_days, *rec_ym, *rec_mlen; /* rec_mlen: days in its month */
  double *rec_bnd; /* its cell bounds in days of the calendar, 2 a record (the
                      input's CF `bounds` of the time coordinate; NaN: none) */
  int has_time;    /* agreed: every input has a readable CF time axis */
  size_t ngroups;
  void *gout;           /* ngroups fields in the output dtype */
  double *gtime, *gbnd; /* per group: its time and bounds (input units) */
  double *gexact;       /* --png --verify, rank 0: every group's exact field */
  double *gclaim;       /* and its claimed bound (the colour scale of its error) */
  int have_gtime;
  int gbnd_own;       /* the group bounds span the input's own cell bounds */
  double q_max_error; /* --verify: the largest error over the groups */
  /* --weights (stack_weights.c): per selected record (sel_w) and per
   * snapshot of the stack under way (snap_w, NULL: unweighted); per-point
   * sums of the weights of the valid samples (wsum, NULL: every point has
   * them all, w_tot) and the smallest positive one (w_min) */
  double *sel_w, *snap_w, *wsum;
  double w_tot, w_min;
  /* weighted var / std (stack_moments.c): per-point sums of the squared
   * weights of the valid samples (wsq, allocated with wsum) and their total */
  double *wsq;
  double q_tot;
  /* keep_ctx: gzs_reduce keeps its contexts for later calls of the same
   * configuration (groups: one set-up instead of one per group); freed by
   * gzs_release_contexts (collective) */
  int keep_ctx, nctx;
  gz_config_t ctx_cfg[8];
  gz_ctx_t ctx_kept[8];

  /* --reproducible (stack_reduce.c): the grid step h (a power of two) and
   * this rank's int64 codes (sums of rint(x / h), or max / min), npoints */
  double repro_step;
  int64_t *codes;
  int repro_overflow; /* a code left int64 on this rank */

  gzs_times_t t;
  double peak_rss_max, peak_rss_min; /* bytes, over the ranks (getrusage) */
  char **written;                    /* files written by this run (rank 0), for cleanup */
  int nwritten;
} gzs_run_t;

/* Agree on a failure: every rank passes its status (0 ok) and message; if
 * any failed, rank 0 prints the lowest failing rank's message and every
 * rank returns nonzero. */
int gzs_agree(MPI_Comm comm, int failed, const char *err);

/* Progress on stderr from rank 0 (no-op when quiet); at most every second
 * unless force. */
void gzs_progress(const gzs_opts_t *o, gzs_run_t *r, int force, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Pipeline steps; each returns 0 or -1 with err set, already agreed by
 * every rank. */
int gzs_scan(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen);
int gzs_read(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen);
int gzs_read_root(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                  size_t errlen);
int gzs_reduce(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
               size_t errlen);
/* Destroy the contexts kept under keep_ctx (collective). stack_reduce.c */
void gzs_release_contexts(gzs_run_t *r);
int gzs_reference(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                  size_t errlen);
/* var / var1 / std / std1 / rms: read, reduce and (--verify) reference in
 * one step (stack_moments.c). */
int gzs_moments(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                size_t errlen);
/* The budget of the pass under way (r->moment_pass): sets e_abs and
 * e_allreduce from the agreed range and counts. stack_moments.c */
void gzs_moment_budget(gzs_run_t *r);
void gzs_run_free(gzs_run_t *r);

/* ---- shared by the stages ------------------------------------------------ */

/* Open one input (raw inputs: --dims describes one snapshot, the record
 * count follows from the file size). stack_scan.c */
int gzs_open_input(const gzs_opts_t *o, const char *path, MPI_Comm comm, gz_reader_t **rd,
                   char *err, size_t errlen);

/* --scale (stack_accumulate.c): parse the list (option check); after the
 * scan, -1 with err unless there is one factor per stacked record (per
 * file with --key); multiply n values of record / file k by its factor
 * (values equal to the fill value are left as they are: still missing). */
const char *gzs_check_scale(gzs_opts_t *o, const char *v);
int gzs_scale_count(const gzs_opts_t *o, const gzs_run_t *r, char *err, size_t errlen);
void gzs_scale(const gzs_opts_t *o, uint64_t k, double *x, size_t n, int has_fill,
               double fill);

/* Values per slab of --slab-mb (at least 1024). stack_accumulate.c */
size_t gzs_slab_values(const gzs_opts_t *o);

/* A running sum / max / min of snapshots (stack_accumulate.c). */
typedef struct gzs_acc {
  gzs_op_t op;
  /* square: (x - center[p])^2 (center NULL: x^2) is accumulated instead of
   * x (stack_moments.c); lo / hi stay the range of x */
  int square;
  const double *center;
  int zero_missing;  /* --normalize live: a zero is not a sample */
  double *acc;       /* npoints values (gzs_acc_alloc) */
  uint32_t **counts; /* per-point counts, allocated at the first missing value */
  size_t npoints;
  uint64_t done; /* snapshots fully accumulated before the current one */
  /* --weights: the current snapshot's weight w multiplies its values (mean),
   * wdone the weights of the snapshots done; *wsum per-point sums of the
   * weights of valid samples, allocated with the counts (wsum NULL:
   * unweighted) */
  double w, wdone;
  double **wsum;
  double wqdone; /* the squared weights of the snapshots done */
  double **wsq;  /* per-point sums of squared weights (NULL: not kept) */
  double lo, hi; /* range of the valid values seen */
  /* --reproducible: codes (NULL: off) receive rint(v / step) of every valid
   * value as well (sum, or max / min); overflow set when one leaves int64 */
  int64_t *codes;
  double step;
  int overflow;
  /* init: the values initialise the accumulator's points instead of joining
   * them (the rank's first snapshot: sum / mean / max / min only); x may
   * then be acc + off itself (read in place, no reading buffer) */
  int init;
} gzs_acc_t;

/* --reproducible: the code array of an accumulator for op (sum / mean:
 * zeros; max / min: INT64_MIN / INT64_MAX, no sample yet); sets
 * r->repro_step for nterms terms at most per point and points s at it. 0,
 * or -1 out of memory. No-op without --reproducible. */
int gzs_acc_codes(const gzs_opts_t *o, gzs_run_t *r, gzs_acc_t *s, uint64_t nterms);
/* sum / mean: zeros; max / min: NaN (no sample yet). */
double *gzs_acc_alloc(gzs_op_t op, size_t n);
/* After the snapshots were read: their range (lo, hi) and the --reproducible
 * overflow of s into r. */
void gzs_acc_report(const gzs_acc_t *s, gzs_run_t *r);
void gzs_acc_init(gzs_acc_t *s, gzs_op_t op, double *acc, uint32_t **counts,
                  size_t npoints);
/* x: n values of points [off, off+n) of one snapshot. Missing values are
 * non-finite, equal to fill (has_fill), or flagged in bits (may be NULL).
 * -1: out of memory for the counts. */
int gzs_accumulate(gzs_acc_t *s, const double *x, size_t off, size_t n, int has_fill,
                   double fill, const unsigned char *bits);
/* --steps (stack_select.c): the selected records of each file (records,
 * first, rec0, stride) and their count nsnap; the inputs' own record counts
 * on entry. -1 with err naming --steps when nothing is selected. */
int gzs_select_steps(const gzs_opts_t *o, gzs_run_t *r, const unsigned char *dates,
                     char *err, size_t errlen);
/* dates (NULL: no date option): per global record, selected by --years /
 * --months / --seasons; then each file gets the list of its records. The
 * flags of one file's records from its time coordinate: */
int gzs_date_flags(const gzs_opts_t *o, const char *path, const gz_meta_t *m,
                   unsigned char *flags, char *err, size_t errlen);
/* Parse START[:STOP[:STRIDE]] (STOP inclusive, as NCO's -d); NULL or why
 * not. */
const char *gzs_parse_steps(const char *v, uint64_t *start, uint64_t *stop,
                            uint64_t *stride);
/* The CF time axis of a file (stack_dates.c). */
enum { GZS_CAL_GREGORIAN = 0, GZS_CAL_NOLEAP, GZS_CAL_ALLLEAP, GZS_CAL_360 };
typedef struct gzs_time_axis {
  int cal;
  int mixed;     /* standard / gregorian: proleptic from 1582-10-15 only */
  double origin; /* the reference date, in days of the calendar */
  double scale;  /* days per unit */
} gzs_time_axis_t;
/* From the coordinate's units and calendar attributes; -1 with err. */
int gzs_time_axis(const char *units, const char *calendar, gzs_time_axis_t *ax, char *err,
                  size_t errlen);
/* Year and month (1-12) of time value v; -1 when v is not a date. */
int gzs_time_date(const gzs_time_axis_t *ax, double v, long long *year, int *month);
/* --years / --months / --seasons: parse into o (NULL or why not). */
const char *gzs_parse_years(const char *v, gzs_opts_t *o);
const char *gzs_parse_months(const char *v, unsigned *mask);
const char *gzs_parse_seasons(const char *v, unsigned *mask);
/* --dates START[/END]: ISO dates Y-M-D[Thh[:mm[:ss]]] (END alone: the
 * whole day), parsed into o (NULL or why not). */
const char *gzs_parse_date_range(const char *v, gzs_opts_t *o);
/* The instants of --dates in days of a calendar (stack_dates.c): [lo, hi]. */
void gzs_date_range_days(const gzs_opts_t *o, int cal, double *lo, double *hi);
/* Is a record of this year and month selected? */
int gzs_dates_selected(const gzs_opts_t *o, long long year, int month);

/* --group / --running (stack_group.c). */
enum {
  GZS_GROUP_NONE = 0,
  GZS_GROUP_MONTH,
  GZS_GROUP_SEASON,
  GZS_GROUP_YEAR,
  GZS_GROUP_N,
  GZS_GROUP_ALL /* one group of every selected record: a time axis of length 1 */
};
static inline int gzs_grouped(const gzs_opts_t *o) {
  return o->group_kind != GZS_GROUP_NONE || o->running > 0 || o->ensemble;
}
/* "month", "season", "year", "all" or N >= 1 into o (NULL or why not). */
const char *gzs_parse_group(const char *v, gzs_opts_t *o);
/* Rank that scanned file `path`: per record its days in the calendar and
 * year * 12 + month - 1, NaN when the file has no readable time axis
 * (an error naming --group when the groups need dates); bnd (2 a record):
 * a netCDF input's own cell bounds of the time coordinate (its `bounds`
 * attribute) in days of the calendar, NaN without them (bounds that
 * cannot be read: an error naming the file). */
int gzs_record_times(const gzs_opts_t *o, const char *path, const gz_meta_t *m,
                     int netcdf, double *days, double *ym, double *mlen, double *bnd,
                     char *err, size_t errlen);
/* Do the records need their times (--group, --running, --weights days)? */
int gzs_need_times(const gzs_opts_t *o);
/* Every group through the pipeline (after gzs_scan): r->gout etc. */
int gzs_groups(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
               size_t errlen);
/* The CF cell_methods of the output for the record dimension dim. */
void gzs_cell_method(const gzs_opts_t *o, const char *dim, char *buf, size_t len);
/* Days in the calendar <-> CF time value (stack_dates.c). */
double gzs_time_value(const gzs_time_axis_t *ax, double days);
double gzs_month_start(int cal, long long year, int month);

enum {
  GZS_WEIGHTS_NONE = 0,
  GZS_WEIGHTS_LIST,
  GZS_WEIGHTS_FILE,
  GZS_WEIGHTS_DAYS,
  GZS_WEIGHTS_PER_FILE /* --file-weights: one per input file */
};
/* --weights W1,W2,...|FILE|days into o (NULL or why not). */
const char *gzs_parse_weights(const char *v, gzs_opts_t *o);
/* --file-weights W1,W2,...: one weight per input file (ncra -w / nces -w
 * across files): every selected record of file f weighs W_f. */
const char *gzs_parse_file_weights(const char *v, gzs_opts_t *o);
/* After gzs_scan: r->sel_w, one weight per selected record (collective;
 * -1 with the message, agreed, naming --weights). */
int gzs_weights_setup(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                      size_t errlen);
/* The weights of snapshots [0, n) of the stack under way (from sel_w by
 * the selected index of each; idx NULL: the identity): r->snap_w. */
int gzs_weights_select(gzs_run_t *r, const uint64_t *idx, uint64_t n);

/* The record in file fi of its k-th stacked snapshot. */
static inline uint64_t gzs_file_record(const gzs_file_t *fi, uint64_t k) {
  return fi->recs ? fi->recs[k] : fi->rec0 + k * (fi->stride ? fi->stride : 1);
}
/* Global snapshot g -> its file, and the record in that file. */
int gzs_locate(const gzs_run_t *r, uint64_t g, uint64_t *rec);
/* Part [off, off+n) of record rec as doubles. */
int gzs_read_part(gz_reader_t *rd, uint64_t rec, size_t off, size_t n, size_t npoints,
                  double *dst, char *err, size_t errlen);

/* Agree on the value range and the missing-value flag; sum the per-point
 * counts exactly; set c_min, c_max, masked_points. stack_counts.c */
int gzs_agree_counts(gzs_run_t *r, MPI_Comm comm);

/* Add one call's report to a running total (first: copy). stack_reduce.c */
void gzs_report_add(gz_report_t *sum, const gz_report_t *one, int first);
/* Mean / sum / max / min at each point from the reduced values (NaN where
 * no sample). stack_reduce.c */
void gzs_finish_field(const gzs_opts_t *o, const gzs_run_t *r, const double *red,
                      double *res);

/* --device gpu (stack_device.c). */
typedef struct gzs_device {
  double *buf; /* device: a slab's input, then its output */
  size_t slab; /* values per slab */
} gzs_device_t;
/* Rank 0's note on what --device gpu will do. Collective only in that every
 * rank queries its own devices. */
void gzs_device_note(const gzs_opts_t *o, int rank);
/* Collective: choose a device on every rank and stage buffers for slabs of
 * up to slab values. Returns the device pool the context needs, 0 when
 * some rank has no device (then the CPU path, d->buf NULL). */
size_t gzs_device_open(gzs_device_t *d, size_t slab, MPI_Comm comm);
/* Collective: one slab through the device allreduce (host in, host out);
 * the outcome is agreed. */
gz_result_t gzs_device_allreduce(gzs_device_t *d, gz_ctx_t ctx, const double *in,
                                 double *out, size_t n, gz_op_t op, MPI_Comm comm,
                                 gz_report_t *rep);
void gzs_device_close(gzs_device_t *d);

/* --key (stack_key.c): key-based stacking of SEG-Y traces, as Seismic
 * Unix's sustack. The scan (replaces gzs_scan) groups every trace of every
 * input by its key; the read (gzs_read calls it) accumulates each rank's
 * contiguous range of traces into its groups' points. */
int gzs_key_scan(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                 size_t errlen);
int gzs_key_read(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                 size_t errlen);
/* Option checks of the rows --key, --fold-key, --normalize, --segy-format
 * (NULL or why the value is refused). */
const char *gzs_check_key(gzs_opts_t *o, const char *v);
const char *gzs_check_fold_key(gzs_opts_t *o, const char *v);
const char *gzs_check_normalize(gzs_opts_t *o, const char *v);

/* --segy-format ibm: the IBM rounding into ibm_term and claimed (after the
 * claim; result_max the largest |result|). stack_output.c */
void gzs_claim_ibm(const gzs_opts_t *o, gzs_run_t *r, double result_max);
const char *gzs_check_segy_format(gzs_opts_t *o, const char *v);
const char *gzs_check_png_section(gzs_opts_t *o, const char *v);

/* Outputs (stack_output.c), rank 0. */
int gzs_check_targets(const gzs_opts_t *o, char *err, size_t errlen);
/* The output file: runs[0] (.nc: and runs[1..nruns-1], --var a,b,c). */
int gzs_write_output(const gzs_opts_t *o, gzs_run_t *runs, int nruns, char *err,
                     size_t errlen);
int gzs_write_pngs(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen);
int gzs_write_metrics(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen);
void gzs_print_summary(const gzs_opts_t *o, const gzs_run_t *r);
void gzs_remove_written(gzs_run_t *r);
/* The derived render names: "<png without .png>_exact.png", "_error.png". */
int gzs_derived_png(const char *png, const char *suffix, char *out, size_t len);
/* Verification metrics from exact_result and result (rank 0). */
void gzs_verify_metrics(const gzs_opts_t *o, gzs_run_t *r);
/* The 2-D view rendered and used for SSIM: rows x cols and the flat index
 * of each pixel (caller frees *index). -1 when the field is not at least
 * 1-D. */
int gzs_render_view(const gzs_opts_t *o, const gzs_run_t *r, size_t *rows, size_t *cols,
                    size_t **index, char *desc, size_t desclen);

#endif
