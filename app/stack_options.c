/*
 * stack_options.c - options of `gzstack stack`: the command line, INI
 * config files, validation, glob expansion, --help and the settings echo.
 *
 * Every option is declared once, as a row of `options` below: its config
 * key, command-line names, type, default, help text, where its value goes
 * in gzs_opts_t and what else checks it. The argtable of the command line,
 * the INI keys (and their aliases), the --help text, the messages naming an
 * option and the "settings" object of the metrics JSON (the same keys as
 * the INI file, so a run can be repeated from its JSON) are all derived
 * from those rows. docs/contributing.md shows how to add one.
 *
 * The command line overrides the file; the file overrides the defaults.
 * INI format: `key = value` lines, optionally under [stack]; `#` or `;`
 * start comments; `input` takes several whitespace-separated paths or
 * globs; booleans are true/false/yes/no/on/off/1/0; `${NAME}` and
 * `${NAME:-default}` in a value expand from the environment (e.g.
 * ${GZ_DATA_DIR:-../shared/data}). Relative paths are relative to the
 * current directory, as on the command line.
 *
 * Collective: rank 0 reads the config file and expands globs, every rank
 * receives the same text and list, so every rank reaches the same verdict.
 */
#define _POSIX_C_SOURCE 200809L /* glob, strtok_r */
#include "app.h"
#include "stack.h"
#include "stack_internal.h"

#include <argtable2.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the options --------------------------------------------------------- */

typedef enum {
  OPT_LIST,   /* char ** + count: -i repeated, whitespace-separated in the file */
  OPT_STRING, /* char * (owned copy) */
  OPT_NUMBER, /* double */
  OPT_BOOL,   /* int 0/1; a flag on the command line */
  OPT_CHOICE  /* int: the value of the matching choice */
} opt_kind_t;

typedef struct choice {
  const char *name; /* NULL ends the list */
  int value;
  int alias; /* accepted, but not listed nor echoed */
} choice_t;

typedef struct opt_row {
  const char *key;     /* config key = settings key */
  const char *aliases; /* other config keys, space-separated (may be NULL) */
  const char *shorts;  /* argtable short options ("i"), may be NULL */
  const char *longs;   /* argtable long options ("var,dataset") */
  const char *argname; /* "FILE", "E", ...; NULL for a flag */
  opt_kind_t kind;
  const char *def;         /* default as text; NULL: unset */
  const choice_t *choices; /* OPT_CHOICE */
  size_t offset;           /* of the value in gzs_opts_t */
  /* OPT_NUMBER: 1 when the value is acceptable */
  int (*valid)(double v);
  /* after the value is stored: further parsing or checks; NULL or the
   * reason the value is refused (after "OPTION VALUE: ") */
  const char *(*check)(gzs_opts_t *o, const char *v);
  const char *bad;      /* reason for a refused number or string */
  const char *required; /* message when no value at all (NULL: optional) */
  int group;            /* help section (groups[]) */
  const char *help;     /* one paragraph; --help wraps it and adds [key] */
} opt_row_t;

#define AT(field) offsetof(gzs_opts_t, field)

static const choice_t eb_modes[] = {{"abs", GZ_EB_ABS, 0}, {"rel", GZ_EB_REL, 0}, {0}};
static const choice_t bounds[] = {{"strict", GZ_BOUND_STRICT, 0},
                                  {"per-message", GZ_BOUND_PER_MESSAGE, 0},
                                  {"per_message", GZ_BOUND_PER_MESSAGE, 1},
                                  {0}};
static const choice_t ops[] = {{"mean", GZS_OP_MEAN, 0}, {"sum", GZS_OP_SUM, 0},
                               {"max", GZS_OP_MAX, 0},   {"min", GZS_OP_MIN, 0},
                               {"var", GZS_OP_VAR, 0},   {"var1", GZS_OP_VAR1, 0},
                               {"std", GZS_OP_STD, 0},   {"std1", GZS_OP_STD1, 0},
                               {"rms", GZS_OP_RMS, 0},   {0}};
/* libgzcoll's names of the allreduce algorithms (selected by name) */
static const choice_t algos[] = {
    {"auto", 0, 0}, {"redoub", 1, 0}, {"ring", 2, 0}, {"mpi", 3, 0}, {0}};
static const choice_t reads[] = {{"parallel", 0, 0}, {"root", 1, 0}, {0}};
static const choice_t devices[] = {{"cpu", 0, 0}, {"gpu", 1, 0}, {0}};
static const choice_t dtypes[] = {{"f32", GZ_FLOAT32, 0},
                                  {"f64", GZ_FLOAT64, 0},
                                  {"float32", GZ_FLOAT32, 1},
                                  {"float64", GZ_FLOAT64, 1},
                                  {0}};
static const choice_t endians[] = {{"little", 0, 0}, {"big", 1, 0}, {0}};
static const choice_t normalizes[] = {{"fold", 0, 0}, {"live", 1, 0}, {0}};
static const choice_t segy_formats[] = {{"ieee", 0, 0}, {"ibm", 1, 0}, {0}};

static int bound_ok(double v) { return isfinite(v) && v >= 0; }
static int slab_ok(double v) { return v > 0 && v <= 1e9; }
static const char *check_var(gzs_opts_t *o, const char *v);
static const char *check_dims(gzs_opts_t *o, const char *v);
static const char *check_output(gzs_opts_t *o, const char *v);
static const char *check_png(gzs_opts_t *o, const char *v);
static const char *check_stats_png(gzs_opts_t *o, const char *v);
static const char *check_slice(gzs_opts_t *o, const char *v);
static const char *check_read(gzs_opts_t *o, const char *v);
static const char *check_steps(gzs_opts_t *o, const char *v);
static const char *check_years(gzs_opts_t *o, const char *v);
static const char *check_months(gzs_opts_t *o, const char *v);
static const char *check_seasons(gzs_opts_t *o, const char *v);
static const char *check_dates(gzs_opts_t *o, const char *v);
static const char *check_group(gzs_opts_t *o, const char *v);
static const char *check_running(gzs_opts_t *o, const char *v);
static const char *check_weights(gzs_opts_t *o, const char *v);
static const char *check_file_weights(gzs_opts_t *o, const char *v);
static const char *check_ensemble(gzs_opts_t *o, const char *v);
static const char *check_chunks(gzs_opts_t *o, const char *v);
static const char *check_reproducible(gzs_opts_t *o, const char *v);
static int deflate_ok(double v) { return v >= 0 && v <= 9 && v == floor(v); }
static const choice_t on_off[] = {{"on", 1, 0}, {"off", 0, 0}, {0}};
static int running_ok(double v) { return v >= 1 && v <= 4294967295.0 && v == floor(v); }

static const char *const groups[] = {
    "Input (config-file key in brackets):", "Stacking and bound:", "Output:"};

/* Config-file / settings order. */
static const opt_row_t options[] = {
    {"input", "inputs", "i", "input", "FILE|GLOB...", OPT_LIST, NULL, NULL, AT(patterns),
     NULL, NULL, NULL, "no input: give -i FILE... (or input = in the config file)", 0,
     "netCDF, HDF5 or raw files; each holds one or more snapshots along its first "
     "(time, record, shot) dimension"},
    {"var", "dataset", NULL, "var,dataset", "NAME", OPT_STRING, NULL, NULL, AT(var), NULL,
     check_var, NULL, NULL, 0,
     "netCDF variable or HDF5 dataset path (--dataset); default: the only data "
     "variable; a,b,c: several variables along the same stacking axis, in one run, "
     "into one .nc output; all: every numeric variable along the first input's record "
     "dimension"},
    {"steps", NULL, NULL, "steps", "START[:STOP[:STRIDE]]", OPT_STRING, NULL, NULL,
     AT(steps_text), NULL, check_steps, NULL, NULL, 0,
     "stack only records START, START+STRIDE, ... up to STOP inclusive, counted from 0 "
     "along the stacking axis across all inputs in order (as ncra -d time,START,STOP,"
     "STRIDE; cdo seltimestep counts from 1); START alone: that record; STOP empty: the "
     "last record"},
    {"years", NULL, NULL, "years", "Y|Y1/Y2,...", OPT_STRING, NULL, NULL, AT(years_text),
     NULL, check_years, NULL, NULL, 0,
     "stack only records whose date (CF time coordinate and calendar) falls in these "
     "years or inclusive ranges (as cdo selyear)"},
    {"months", NULL, NULL, "months", "M|M1/M2,...", OPT_STRING, NULL, NULL,
     AT(months_text), NULL, check_months, NULL, NULL, 0,
     "only records of these months 1-12 (as cdo selmon)"},
    {"seasons", NULL, NULL, "seasons", "DJF|MAM|JJA|SON,...", OPT_STRING, NULL, NULL,
     AT(seasons_text), NULL, check_seasons, NULL, NULL, 0,
     "only records of these seasons' months (as cdo selseason; with --months: both "
     "must hold)"},
    {"dates", NULL, NULL, "dates", "START[/END]", OPT_STRING, NULL, NULL, AT(dates_text),
     NULL, check_dates, NULL, NULL, 0,
     "only records whose time (CF time coordinate and calendar) lies between START "
     "and END inclusive, each YYYY-MM-DD[Thh:mm:ss] (as cdo seldate; END as a date "
     "alone: the whole day; START alone: that day)"},
    {"dims", NULL, NULL, "dims", "AxB[xC]", OPT_STRING, NULL, NULL, AT(dims_text), NULL,
     check_dims, NULL, NULL, 0,
     "raw: shape of ONE snapshot; the snapshot count of a file follows from its size"},
    {"dtype", NULL, NULL, "dtype", "f32|f64", OPT_CHOICE, "f32", dtypes, AT(raw.dtype),
     NULL, NULL, NULL, NULL, 0, "raw: element type (default f32)"},
    {"endian", NULL, NULL, "endian", "little|big", OPT_CHOICE, "little", endians,
     AT(raw.big_endian), NULL, NULL, NULL, NULL, 0, "raw: byte order (default little)"},
    {"error_bound", "e error eb", "e", "error-bound", "E", OPT_NUMBER, NULL, NULL, AT(e),
     bound_ok, NULL, "the error bound must be a finite number >= 0",
     "-e/--error-bound is required (or error_bound = in the config)", 1,
     "error bound of the result (required); 0 = exact (plain MPI)"},
    {"eb_mode", NULL, NULL, "eb-mode", "abs|rel", OPT_CHOICE, "abs", eb_modes,
     AT(eb_mode), NULL, NULL, NULL, NULL, 1,
     "rel: E times the value range of the valid inputs (default abs)"},
    {"bound", NULL, NULL, "bound", "strict|per-message", OPT_CHOICE, "strict", bounds,
     AT(bound), NULL, NULL, NULL, NULL, 1,
     "strict: the written result is within E of the exact stack (plus the float32 "
     "rounding of the output); per-message: E bounds each quantization and the implied "
     "bound is reported (default strict)"},
    {"op", NULL, NULL, "op", "mean|sum|max|min|var|var1|std|std1|rms", OPT_CHOICE, "mean",
     ops, AT(op), NULL, NULL, NULL, NULL, 1,
     "reduction (default mean); missing values (_FillValue, missing_value, NaN, Inf) "
     "are skipped and the mean divides by the per-point count. var / std: population "
     "variance / standard deviation (divisor n, CDO timvar / timstd), var1 / std1: "
     "sample (n - 1, CDO timvar1 / timstd1), two passes (mean, then squared deviations "
     "from it); rms: sqrt(mean of squares) (ncra -y rms). E bounds the written var "
     "(squared units), std or rms; with --eb-mode rel E times the range (var: its "
     "square)"},
    {"group", NULL, NULL, "group", "month|season|year|all|N", OPT_STRING, NULL, NULL,
     AT(group_text), NULL, check_group, NULL, NULL, 1,
     "one stacked field per group of the selected records, written along the record "
     "dimension with CF bounds and cell_methods: month = each month of the year over "
     "all years (cdo ymonmean), season = DJF, MAM, JJA, SON (cdo yseasmean; climatology "
     "bounds), year = each calendar year (cdo yearmean), N = every N records (cdo "
     "timselmean,N; the last group may hold fewer), all = one group of every record: "
     "the single stack with a time axis of length 1 and its bounds (as cdo timmean, "
     "ncra); any --op, each group within E"},
    {"running", NULL, NULL, "running", "N", OPT_NUMBER, NULL, NULL, AT(running),
     running_ok, check_running, "the window must be a whole number of records >= 1", NULL,
     1,
     "one stacked field per window of N consecutive records, sliding by one (cdo "
     "runmean,N); any --op, each window within E"},
    {"ensemble", NULL, NULL, "ensemble", NULL, OPT_BOOL, "false", NULL, AT(ensemble),
     NULL, check_ensemble, NULL, NULL, 1,
     "stack record k of every input (the ensemble members) into record k of the output, "
     "keeping the time axis of the first input (cdo ensmean / ensstd1 ..., nces); every "
     "input holds the same number of (selected) records; any --op"},
    {"weights", NULL, NULL, "weights", "W1,W2,...|FILE|days", OPT_STRING, NULL, NULL,
     AT(weights_text), NULL, check_weights, NULL, NULL, 1,
     "weighted mean: sum w x / sum w at each point over its valid values (ncra -w); "
     "with --op var / std / rms the weighted moments (var1 / std1: reliability weights, "
     "sum w (x - m)^2 / (W - sum w^2 / W)); one "
     "weight >= 0 per selected record in order across the inputs, as a list, a file of "
     "numbers, or days = the length of each record's month from the CF time coordinate "
     "(with --group year: cdo yearmonmean); with --group / --running each group divides "
     "by its own weights"},
    {"file_weights", NULL, NULL, "file-weights", "W1,W2,...", OPT_STRING, NULL, NULL,
     AT(file_weights_text), NULL, check_file_weights, NULL, NULL, 1,
     "weights with one weight >= 0 per input file, in order (mean, var, std, rms): every "
     "selected "
     "record of a file weighs its file's weight (ncra -w across files, nces -w for "
     "ensemble members with --ensemble); excludes --weights"},
    {"algo", NULL, NULL, "algo", "auto|redoub|ring|mpi", OPT_CHOICE, "auto", algos,
     AT(algo), NULL, NULL, NULL, NULL, 1,
     "allreduce algorithm (default auto; mpi = the uncompressed MPI_Allreduce)"},
    {"read", NULL, NULL, "read", "parallel|root", OPT_CHOICE, "parallel", reads,
     AT(read_root), NULL, check_read, NULL, NULL, 0,
     "parallel: every rank reads its own snapshots (MPI-IO hyperslabs for HDF5); root: "
     "rank 0 reads and sends them with the compressed scatter (default parallel)"},
    {"device", NULL, NULL, "device", "cpu|gpu", OPT_CHOICE, "cpu", devices,
     AT(device_gpu), NULL, NULL, NULL, NULL, 1,
     "gpu: the allreduce runs on each rank's GPU (by node-local rank); without one, the "
     "CPU with a note (default cpu)"},
    {"output", NULL, "o", "output", "FILE", OPT_STRING, NULL, NULL, AT(output), NULL,
     check_output, NULL, "-o/--output is required (.nc, .h5, .raw, .sgy or .rsf)", 2,
     ".nc, .h5, .raw, .sgy or .rsf: the stacked field with its dimensions, coordinates, "
     "units and "
     "provenance; points without data are NaN (_FillValue NaN)"},
    {"deflate", NULL, NULL, "deflate", "0-9", OPT_NUMBER, "0", NULL, AT(deflate),
     deflate_ok, NULL, "the deflate level must be a whole number 0-9", NULL, 2,
     ".nc output: zlib deflate level of the data variables (ncks -L; 0: none, the "
     "default)"},
    {"shuffle", NULL, NULL, "shuffle", "on|off", OPT_CHOICE, "on", on_off, AT(shuffle),
     NULL, NULL, NULL, NULL, 2,
     ".nc output with --deflate: the byte shuffle filter "
     "(default on, as NCO)"},
    {"chunks", NULL, NULL, "chunks", "AxBx...", OPT_STRING, NULL, NULL, AT(chunks_text),
     NULL, check_chunks, NULL, NULL, 2,
     ".nc output: chunk sizes of the output variable's dimensions, in order (ncks "
     "--cnk_dmn; default: contiguous, or netCDF's chunks with --deflate)"},
    {"png", NULL, NULL, "png", "FILE.png", OPT_STRING, NULL, NULL, AT(png), NULL,
     check_png, NULL, NULL, 2,
     "render of the result; with --verify also FILE_exact.png and FILE_error.png (error "
     "map symmetric at +-bound)"},
    {"metrics", NULL, NULL, "metrics", "FILE.json", OPT_STRING, NULL, NULL, AT(metrics),
     NULL, NULL, NULL, NULL, 2,
     "metrics, timings, error statistics and the effective settings"},
    {"stats_png", NULL, NULL, "stats-png", "FILE.png", OPT_STRING, NULL, NULL,
     AT(stats_png), NULL, check_stats_png, NULL, NULL, 2,
     "histogram of the allreduce errors with the fitted, paper and quantizer densities "
     "(implies --verify)"},
    {"verify", NULL, NULL, "verify", NULL, OPT_BOOL, "false", NULL, AT(verify), NULL,
     NULL, NULL, NULL, 2,
     "also compute the exact stack with plain MPI and report max/mean error, PSNR, "
     "NRMSE, SSIM, the bound and whether it held (exit 1 if not)"},
    {"force", NULL, NULL, "force", NULL, OPT_BOOL, "false", NULL, AT(force), NULL, NULL,
     NULL, NULL, 2, "replace existing output files"},
    {"quiet", NULL, "q", "quiet", NULL, OPT_BOOL, "false", NULL, AT(quiet), NULL, NULL,
     NULL, NULL, 2, "no progress, notes or summary"},
    {"slice", NULL, NULL, "slice", "AXIS=INDEX", OPT_STRING, NULL, NULL, AT(slice_text),
     NULL, check_slice, NULL, NULL, 2,
     "3-D fields: the slice rendered (AXIS a number or a dimension name; default the "
     "middle of axis 0)"},
    {"slab_mb", NULL, NULL, "slab-mb", "MB", OPT_NUMBER, "256", NULL, AT(slab_mb),
     slab_ok, NULL, "the slab size must be a positive number of MiB", NULL, 0,
     "read and reduce in slabs of at most MB MiB of doubles (default 256)"},
    {"key", NULL, NULL, "key", "FIELD", OPT_STRING, NULL, NULL, AT(key_text), NULL,
     gzs_check_key, NULL, NULL, 1,
     "SEG-Y: traces with the same value of this trace header field become one trace, "
     "across all inputs (as sustack key=cdp): a Seismic Unix name (cdp, offset, fldr, "
     "...), a segyio TraceField name (CDP, FieldRecord, ...) or a byte number; output "
     "traces in the order of each group's first trace, headers from that trace"},
    {"fold_key", NULL, NULL, "fold-key", "FIELD", OPT_STRING, "nhs", NULL, AT(fold_text),
     NULL, gzs_check_fold_key, NULL, NULL, 1,
     "--key: the trace header field the fold (traces stacked) is written to (default "
     "nhs, bytes 33-34, as sustack)"},
    {"normalize", NULL, NULL, "normalize", "fold|live", OPT_CHOICE, "fold", normalizes,
     AT(normalize_live), NULL, gzs_check_normalize, NULL, NULL, 1,
     "--op mean / rms: divide by the samples stacked (fold) or, live, by the number of "
     "non-zero samples at each point (sustack normpow=1, sfstack norm=y); a point with "
     "no live sample is 0 (default fold)"},
    {"segy_format", NULL, NULL, "segy-format", "ieee|ibm", OPT_CHOICE, "ieee",
     segy_formats, AT(segy_ibm), NULL, gzs_check_segy_format, NULL, NULL, 2,
     "SEG-Y output samples: IEEE float (format 5) or IBM float (format 1; the claimed "
     "bound adds its rounding, 2^-20 of the largest value) (default ieee)"},
    {"png_section", NULL, NULL, "png-section", "AXIS=VALUE", OPT_STRING, NULL, NULL,
     AT(section_text), NULL, gzs_check_png_section, NULL, NULL, 2,
     "3-D fields: the slice --png renders, by coordinate value: inline=N or "
     "crossline=N (line numbers), time=T (ms, the nearest sample) or any dimension; "
     "SEG-Y and RSF sections are drawn with time down and the diverging map"},
    {"scale", NULL, NULL, "scale", "S1,S2,...", OPT_STRING, NULL, NULL, AT(scale_text),
     NULL, gzs_check_scale, NULL, NULL, 1,
     "multiply each stacked record (each input file with --key) by its factor before "
     "stacking (sfstack scale=); the bound holds for the stack of the scaled values"},
    {"reproducible", NULL, NULL, "reproducible", NULL, OPT_BOOL, "false", NULL,
     AT(reproducible), NULL, check_reproducible, NULL, NULL, 1,
     "the same output bytes at any rank count: every input value is quantized on one "
     "grid (step a power of two <= 2E, mean / max / min, or 2E/N, sum of N), the ranks "
     "sum integer codes exactly, the result is formed once (var / std / rms: each "
     "pass so); needs -e > 0 absolute; not with --weights or --read root"},
};

#define NKEYS ((int)(sizeof options / sizeof options[0]))

static void *field(gzs_opts_t *o, const opt_row_t *row) {
  return (char *)o + row->offset;
}
static const void *cfield(const gzs_opts_t *o, const opt_row_t *row) {
  return (const char *)o + row->offset;
}

/* Choice values live in enum or int fields of the same size. */
_Static_assert(sizeof(gz_eb_mode_t) == sizeof(int) &&
                   sizeof(gz_bound_policy_t) == sizeof(int) &&
                   sizeof(gzs_op_t) == sizeof(int) && sizeof(gz_dtype_t) == sizeof(int),
               "choice fields are int-sized");

/* "abs or rel", "mean, sum, max or min" (aliases left out). */
static void choice_list(const choice_t *c, char *buf, size_t len) {
  int n = 0, k = 0;
  while (c[n].name)
    n++;
  while (n > 0 && c[n - 1].alias)
    n--;
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (c[i].alias)
      continue;
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
             k == 0       ? ""
             : i == n - 1 ? " or "
                          : ", ",
             c[i].name);
    k++;
  }
}

static const char *choice_name(const choice_t *c, int value) {
  for (; c->name; c++)
    if (c->value == value && !c->alias)
      return c->name;
  return "unknown";
}

const char *gzs_op_name(gzs_op_t op) { return choice_name(ops, (int)op); }

const char *gzs_algo_name(const gzs_opts_t *o) { return choice_name(algos, o->algo); }

/* The row of a config key (or alias, `-` read as `_`, any case), or -1. */
static int key_index(const char *name) {
  char k[64];
  size_t n = strlen(name);
  if (n >= sizeof k)
    return -1;
  for (size_t i = 0; i <= n; i++)
    k[i] = name[i] == '-' ? '_' : (char)tolower((unsigned char)name[i]);
  for (int i = 0; i < NKEYS; i++) {
    const char *a = options[i].aliases;
    if (!strcmp(k, options[i].key))
      return i;
    while (a && *a) {
      size_t l = strcspn(a, " ");
      if (l == n && !strncmp(a, k, l))
        return i;
      a += l + (a[l] == ' ');
    }
  }
  return -1;
}

/* ---- help ---------------------------------------------------------------- */

/* "  SYNOPSIS" then the paragraph wrapped to 78 columns, from column 28. */
static void print_option(FILE *out, const char *synopsis, const char *help,
                         const char *key) {
  const int indent = 28, width = 78;
  char text[1024];
  const char *p = text;
  int col;
  snprintf(text, sizeof text, key ? "%s [%s]" : "%s", help, key);
  col = fprintf(out, "  %s", synopsis);
  if (col > indent - 2) {
    fprintf(out, "\n");
    col = 0;
  }
  while (*p) {
    size_t w = strcspn(p, " ");
    if (col > indent && col + 1 + (int)w > width) {
      fprintf(out, "\n");
      col = 0;
    }
    if (col < indent)
      col += fprintf(out, "%*s", indent - col, "");
    else
      col += fprintf(out, " ");
    col += fprintf(out, "%.*s", (int)w, p);
    p += w;
    while (*p == ' ')
      p++;
  }
  fprintf(out, "\n");
}

static void synopsis_of(const opt_row_t *row, char *buf, size_t len) {
  size_t l = strcspn(row->longs, ",");
  snprintf(buf, len, "%s%s%s--%.*s%s%s", row->shorts ? "-" : "",
           row->shorts ? row->shorts : "", row->shorts ? ", " : "", (int)l, row->longs,
           row->argname ? " " : "", row->argname ? row->argname : "");
}

void gz_stack_print_help(FILE *out) {
  static const char *examples[] = {
      "  mpirun -np 4 gzstack -i TREFHT.nc --var TREFHT -e 1e-3 -o mean.nc --verify",
      "  mpirun -np 3 gzstack -i sst.mnmean.nc --var sst -e 1e-4 --eb-mode rel \\",
      "      -o sst_mean.h5 --png sst.png --metrics sst.json --verify",
      "  mpirun -np 4 gzstack -i soda_lakes_24x96x2048_f32le.raw --dims 96x2048 \\",
      "      --dtype f32 -e 1e-5 --read root -o shots.raw --png shots.png --verify",
      "  mpirun -np 4 gzstack -i wrf.nc --var T --op max -e 0.01 -o tmax.nc \\",
      "      --png tmax.png --slice bottom_top=0",
      "  mpirun -np 4 gzstack --config configs/ersst_mean.ini --force",
      "  mpirun -np 4 gzstack -i 'run/snap_*.h5' --var /wavefield -e 1e-4 -o stack.nc"};
  char syn[128];
  fprintf(out,
          "gzstack stack - stack snapshots (mean, sum, max, min) across MPI ranks with\n"
          "an error-bounded compressed allreduce\n\n"
          "  mpirun -np N gzstack [stack] -i INPUT... -e E -o OUT [options]\n\n");
  for (int g = 0; g < (int)(sizeof groups / sizeof groups[0]); g++) {
    fprintf(out, "%s\n", groups[g]);
    for (int k = 0; k < NKEYS; k++) {
      if (options[k].group != g)
        continue;
      synopsis_of(&options[k], syn, sizeof syn);
      print_option(out, syn, options[k].help, options[k].key);
    }
  }
  print_option(out, "--config FILE.ini",
               "options from an INI file (`key = value`, keys in brackets above, "
               "${VAR:-default} expands); the command line overrides it",
               NULL);
  print_option(out, "-h, --help", "this text", NULL);
  fprintf(out, "\nExamples:\n");
  for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
    fprintf(out, "%s\n", examples[i]);
}

/* ---- small helpers ------------------------------------------------------- */

static char *dup_str(const char *s) {
  size_t n = s ? strlen(s) : 0;
  char *d = s ? malloc(n + 1) : NULL;
  if (d)
    memcpy(d, s, n + 1);
  return d;
}

static int parse_bool(const char *v, int *out) {
  static const char *yes[] = {"1", "true", "yes", "on"},
                    *no[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(v, yes[i]))
      return *out = 1, 0;
    if (!strcasecmp(v, no[i]))
      return *out = 0, 0;
  }
  return -1;
}

static int parse_number(const char *v, double *out) {
  char *end;
  errno = 0;
  *out = strtod(v, &end);
  while (end && isspace((unsigned char)*end))
    end++;
  return (end == v || *end || errno == ERANGE) ? -1 : 0;
}

/* Expand ${NAME} and ${NAME:-default} from the environment. */
static char *expand_env(const char *v) {
  size_t cap = strlen(v) + 256, n = 0;
  char *out = malloc(cap);
  if (!out)
    return NULL;
  for (const char *p = v; *p;) {
    const char *add = p, *close;
    size_t len = 1;
    char name[256], *def = NULL;
    if (p[0] == '$' && p[1] == '{' && (close = strchr(p + 2, '}')) != NULL &&
        (size_t)(close - p - 2) < sizeof name) {
      const char *val;
      memcpy(name, p + 2, (size_t)(close - p - 2));
      name[close - p - 2] = '\0';
      if ((def = strstr(name, ":-")) != NULL) {
        *def = '\0';
        def += 2;
      }
      val = getenv(name);
      if (!val || (!*val && def))
        val = def ? def : "";
      add = val;
      len = strlen(val);
      p = close + 1;
    } else {
      p++;
    }
    if (n + len + 1 > cap) {
      char *bigger;
      cap = 2 * (n + len + 1);
      bigger = realloc(out, cap);
      if (!bigger) {
        free(out);
        return NULL;
      }
      out = bigger;
    }
    memcpy(out + n, add, len);
    n += len;
  }
  out[n] = '\0';
  return out;
}

/* ---- config file --------------------------------------------------------- */

typedef struct ini_state {
  char *val[NKEYS];
  char err[GZS_ERRLEN];
  const char *path;
} ini_state_t;

static int on_ini_entry(void *user, const char *section, const char *name,
                        const char *value) {
  ini_state_t *st = user;
  int k;
  if (st->err[0])
    return 0;
  if (section[0] && strcasecmp(section, "stack") && strcasecmp(section, "gzstack")) {
    snprintf(st->err, sizeof st->err,
             "config %s: unknown section [%s] (use [stack] or no section)", st->path,
             section);
    return 0;
  }
  if ((k = key_index(name)) < 0) {
    char keys[512] = "";
    for (int i = 0; i < NKEYS; i++)
      snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? " " : "",
               options[i].key);
    snprintf(st->err, sizeof st->err, "config %s: unknown key '%s' (keys: %s)", st->path,
             name, keys);
    return 0;
  }
  {
    /* a list (input) may continue on indented lines (inih calls again with
     * the same name): append; other keys: the last one wins */
    char *v = expand_env(value), *old = st->val[k];
    if (v && options[k].kind == OPT_LIST && old) {
      char *both = malloc(strlen(old) + strlen(v) + 2);
      if (both)
        sprintf(both, "%s %s", old, v);
      free(v);
      v = both;
    }
    free(old);
    st->val[k] = v;
  }
  if (!st->val[k]) {
    snprintf(st->err, sizeof st->err, "config %s: out of memory", st->path);
    return 0;
  }
  return 1;
}

/* Parse text into st; 0, or -1 with st->err set. */
static int parse_config(const char *text, const char *path, ini_state_t *st) {
  int line;
  st->path = path;
  line = ini_parse_string(text, on_ini_entry, st);
  if (line != 0 && !st->err[0])
    snprintf(st->err, sizeof st->err, "config %s: line %d: expected `key = value`", path,
             line);
  return st->err[0] ? -1 : 0;
}

/* Rank 0 reads path; every rank gets the text (NULL on failure, err set). */
static char *read_config_text(const char *path, MPI_Comm comm, int rank, char *err,
                              size_t errlen) {
  long len = -1;
  char *text = NULL;
  if (rank == 0) {
    FILE *f = fopen(path, "rb");
    if (!f) {
      snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
    } else {
      if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
          fseek(f, 0, SEEK_SET) == 0 && len < (1L << 24)) {
        text = malloc((size_t)len + 1);
        if (text && fread(text, 1, (size_t)len, f) != (size_t)len) {
          free(text);
          text = NULL;
        }
      }
      fclose(f);
      if (!text) {
        snprintf(err, errlen, "--config %s: cannot read the file", path);
        len = -1;
      }
    }
  }
  MPI_Bcast(&len, 1, MPI_LONG, 0, comm);
  if (len < 0) {
    MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, comm);
    return NULL;
  }
  if (rank != 0)
    text = malloc((size_t)len + 1);
  {
    int ok = text != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
      snprintf(err, errlen, "--config %s: out of memory", path);
      free(text);
      return NULL;
    }
  }
  MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm);
  text[len] = '\0';
  return text;
}

static char *join_command_line(int argc, char **argv) {
  size_t len = 16;
  char *s, *p;
  for (int i = 0; i < argc; i++)
    len += 3 * strlen(argv[i]) + 3;
  if (!(s = malloc(len)))
    return NULL;
  p = s + sprintf(s, "gzstack");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int quote = !*a || strpbrk(a, " \t\"'*?[$\\") != NULL;
    *p++ = ' ';
    if (quote)
      *p++ = '\'';
    for (; *a; a++) {
      if (*a == '\'' && quote) {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *a;
      }
    }
    if (quote)
      *p++ = '\'';
  }
  *p = '\0';
  return s;
}

/* ---- inputs: split and glob ---------------------------------------------- */

static int push_str(char ***list, int *n, const char *s) {
  char **bigger = realloc(*list, sizeof(char *) * (size_t)(*n + 1));
  if (!bigger)
    return -1;
  *list = bigger;
  if (!(bigger[*n] = dup_str(s)))
    return -1;
  (*n)++;
  return 0;
}

/* Rank 0: expand the patterns into o->inputs. */
static int expand_globs(gzs_opts_t *o, char *err, size_t errlen) {
  for (int i = 0; i < o->npatterns; i++) {
    const char *p = o->patterns[i];
    if (strpbrk(p, "*?[")) {
      glob_t g;
      int rc = glob(p, 0, NULL, &g);
      if (rc == GLOB_NOMATCH) {
        snprintf(err, errlen, "-i %s: no file matches the pattern", p);
        return -1;
      }
      if (rc != 0) {
        snprintf(err, errlen, "-i %s: cannot expand the pattern", p);
        return -1;
      }
      for (size_t k = 0; k < g.gl_pathc; k++) {
        if (push_str(&o->inputs, &o->ninputs, g.gl_pathv[k]) != 0) {
          globfree(&g);
          snprintf(err, errlen, "out of memory");
          return -1;
        }
      }
      globfree(&g);
    } else if (push_str(&o->inputs, &o->ninputs, p) != 0) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
  }
  return 0;
}

/* Rank 0's list to every rank. */
static int bcast_inputs(gzs_opts_t *o, MPI_Comm comm, int rank) {
  long total = 0;
  char *buf = NULL;
  int n = o->ninputs;
  if (rank == 0)
    for (int i = 0; i < n; i++)
      total += (long)strlen(o->inputs[i]) + 1;
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  MPI_Bcast(&total, 1, MPI_LONG, 0, comm);
  buf = malloc((size_t)total + 1);
  if (!buf)
    return -1;
  if (rank == 0) {
    char *p = buf;
    for (int i = 0; i < n; i++) {
      size_t l = strlen(o->inputs[i]) + 1;
      memcpy(p, o->inputs[i], l);
      p += l;
    }
  }
  MPI_Bcast(buf, (int)total, MPI_CHAR, 0, comm);
  if (rank != 0) {
    const char *p = buf;
    for (int i = 0; i < n; i++) {
      if (push_str(&o->inputs, &o->ninputs, p) != 0) {
        free(buf);
        return -1;
      }
      p += strlen(p) + 1;
    }
  }
  free(buf);
  return 0;
}

/* ---- values into the options --------------------------------------------- */

static const char *check_var(gzs_opts_t *o, const char *v) {
  if (!*v) { /* `var =` in a file: the only data variable */
    free(o->var);
    o->var = NULL;
  }
  return NULL;
}

static const char *check_dims(gzs_opts_t *o, const char *v) {
  if (gz_parse_dims(v, &o->raw) != 0 || o->raw.ndims >= GZ_IO_MAXDIMS)
    return "expected the positive sizes of one snapshot, like 96x2048";
  o->have_raw = 1;
  return NULL;
}

static const char *check_output(gzs_opts_t *o, const char *v) {
  (void)o;
  if (gz_io_format_from_path(v) == GZ_FMT_UNKNOWN)
    return "the output format follows the extension: use .nc, .h5, .raw, .sgy or .rsf";
  return NULL;
}

static int is_png(const char *v) {
  return strlen(v) >= 5 && !strcasecmp(v + strlen(v) - 4, ".png");
}

static const char *check_png(gzs_opts_t *o, const char *v) {
  (void)o;
  return is_png(v) ? NULL : "the render must be a .png file";
}

static const char *check_steps(gzs_opts_t *o, const char *v) {
  const char *why = gzs_parse_steps(v, &o->step_start, &o->step_stop, &o->step_stride);
  o->have_steps = why == NULL;
  return why;
}

static const char *check_years(gzs_opts_t *o, const char *v) {
  const char *why = gzs_parse_years(v, o);
  o->have_dates |= why == NULL;
  return why;
}

static const char *check_months(gzs_opts_t *o, const char *v) {
  const char *why = gzs_parse_months(v, &o->months_mask);
  o->have_dates |= why == NULL;
  return why;
}

static const char *check_seasons(gzs_opts_t *o, const char *v) {
  const char *why = gzs_parse_seasons(v, &o->seasons_mask);
  o->have_dates |= why == NULL;
  return why;
}

static const char *check_dates(gzs_opts_t *o, const char *v) {
  const char *why = gzs_parse_date_range(v, o);
  o->have_dates |= why == NULL;
  return why;
}

static const char *check_group(gzs_opts_t *o, const char *v) {
  return gzs_parse_group(v, o);
}

/* The running row follows the group row. */
static const char *check_running(gzs_opts_t *o, const char *v) {
  (void)v;
  return o->group_kind ? "--group and --running exclude each other" : NULL;
}

/* The ensemble row follows the group and running rows. */
static const char *check_ensemble(gzs_opts_t *o, const char *v) {
  (void)v;
  return o->ensemble && (o->group_kind || o->running > 0)
             ? "--ensemble excludes --group and --running"
             : NULL;
}

/* The reproducible row comes last: every other option is known. */
static const char *check_reproducible(gzs_opts_t *o, const char *v) {
  (void)v;
  if (!o->reproducible)
    return NULL;
  if (!(o->e > 0))
    return "needs an error bound -e > 0 (-e 0 is the plain MPI sum in double)";
  if (o->eb_mode == GZ_EB_REL)
    return "needs an absolute bound (--eb-mode abs): the grid is fixed before reading, "
           "the range is known only after";
  if (o->bound == GZ_BOUND_PER_MESSAGE)
    return "the bound is strict (--bound per-message does not apply)";
  if (o->weights_kind)
    return "not with --weights or --file-weights (a weighted sum of codes is not exact)";
  if (o->read_root)
    return "reads in parallel only (use --read parallel)";
  return NULL;
}

static const char *check_chunks(gzs_opts_t *o, const char *v) {
  const char *p = v;
  o->nchunks = 0;
  while (*p) {
    char *e;
    unsigned long long n;
    if (!isdigit((unsigned char)*p))
      return "expected positive chunk sizes like 1x89x180";
    errno = 0;
    n = strtoull(p, &e, 10);
    if (errno || n == 0 || o->nchunks == GZ_IO_MAXDIMS)
      return "expected at most 8 positive chunk sizes like 1x89x180";
    o->chunks[o->nchunks++] = (size_t)n;
    p = e;
    if (*p == 'x' && p[1])
      p++;
    else if (*p)
      return "expected positive chunk sizes like 1x89x180";
  }
  return o->nchunks ? NULL : "expected positive chunk sizes like 1x89x180";
}

/* The weights row follows the op row. */
static const char *check_weights(gzs_opts_t *o, const char *v) {
  return gzs_parse_weights(v, o);
}

/* The file_weights row follows the weights and op rows. */
static const char *check_file_weights(gzs_opts_t *o, const char *v) {
  return gzs_parse_file_weights(v, o);
}

/* The read row follows the op row: the op is known here. */
static const char *check_read(gzs_opts_t *o, const char *v) {
  (void)v;
  if (o->read_root && gzs_op_is_moment(o->op))
    return "--op var/var1/std/std1/rms read in parallel only (use --read parallel)";
  return NULL;
}

static const char *check_stats_png(gzs_opts_t *o, const char *v) {
  (void)o;
  return is_png(v) ? NULL : "the plot must be a .png file";
}

static const char *check_slice(gzs_opts_t *o, const char *v) {
  const char *eq = strchr(v, '=');
  char *end;
  if (!eq || eq == v)
    return "expected AXIS=INDEX, like 0=7 or bottom_top=0";
  errno = 0;
  o->slice_index = strtol(eq + 1, &end, 10);
  if (errno || end == eq + 1 || *end || o->slice_index < 0)
    return "the index must be a non-negative integer";
  o->have_slice = 1;
  /* the axis is resolved against the shape after the scan */
  o->slice_axis = -1;
  if (isdigit((unsigned char)v[0])) {
    long a = strtol(v, &end, 10);
    if (end == eq && a >= 0 && a < GZ_IO_MAXDIMS)
      o->slice_axis = (int)a;
  }
  return NULL;
}

/* "--op foo" or "config x.ini: op = foo". */
static void where(char *buf, size_t len, const opt_row_t *row, int from_cli,
                  const char *cfg, const char *value) {
  if (from_cli)
    snprintf(buf, len, "--%.*s %s", (int)strcspn(row->longs, ","), row->longs, value);
  else
    snprintf(buf, len, "config %s: %s = %s", cfg, row->key, value);
}

/* One row's value v (may be NULL: unset) into o; 0, or -1 with err set. */
static int apply_one(gzs_opts_t *o, const opt_row_t *row, const char *v, int cli,
                     const char *cfg, char *err, size_t errlen) {
  char w[600], list[128];
  const char *why = NULL;
  void *at = field(o, row);
  if (!v) {
    if (row->required) {
      snprintf(err, errlen, "%s", row->required);
      return -1;
    }
    return 0;
  }
  switch (row->kind) {
  case OPT_LIST:
    if (!cli) { /* the file's whitespace-separated list (-i values came as they are) */
      char *copy = dup_str(v), *save = NULL;
      for (char *tok = copy ? strtok_r(copy, " \t\r\n", &save) : NULL; tok;
           tok = strtok_r(NULL, " \t\r\n", &save))
        if (push_str(&o->patterns, &o->npatterns, tok) != 0)
          break;
      free(copy);
    }
    if (o->npatterns == 0 && row->required) {
      snprintf(err, errlen, "%s", row->required);
      return -1;
    }
    return 0;
  case OPT_STRING:
    if (!(*(char **)at = dup_str(v)))
      why = "out of memory";
    break;
  case OPT_NUMBER:
    if (parse_number(v, (double *)at) != 0 || !row->valid(*(double *)at))
      why = row->bad;
    break;
  case OPT_BOOL:
    if (parse_bool(v, (int *)at) != 0)
      why = "use true or false";
    break;
  case OPT_CHOICE: {
    const choice_t *c = row->choices;
    while (c->name && strcmp(c->name, v))
      c++;
    if (c->name) {
      memcpy(at, &c->value, sizeof(int));
    } else {
      choice_list(row->choices, list, sizeof list);
      snprintf(w, sizeof w, "use %s", list);
      why = w;
    }
    break;
  }
  }
  if (!why && row->check)
    why = row->check(o, v);
  if (why) {
    char place[600];
    where(place, sizeof place, row, cli, cfg, v);
    snprintf(err, errlen, "%s: %s", place, why);
    return -1;
  }
  return 0;
}

/* val[k]: the effective text of row k (NULL: unset); cli[k]: it came from
 * the command line (for messages). */
static int apply_values(gzs_opts_t *o, char *const *val, const int *cli, const char *cfg,
                        char *err, size_t errlen) {
  for (int k = 0; k < NKEYS; k++)
    if (apply_one(o, &options[k], val[k], cli[k], cfg, err, errlen) != 0)
      return -1;
  if (o->stats_png)
    o->verify = 1;
  return 0;
}

/* The config-file half of gzs_options_parse() on text in memory: no command
 * line, no MPI, no glob expansion (tests and tests/fuzz/fuzz_config.c). */
int gzs_options_from_config_text(const char *text, const char *path, gzs_opts_t *o,
                                 char *err, size_t errlen) {
  ini_state_t st;
  char *val[NKEYS];
  int cli[NKEYS], rc = -1;
  memset(o, 0, sizeof *o);
  memset(&st, 0, sizeof st);
  if (parse_config(text, path, &st) != 0) {
    snprintf(err, errlen, "%s", st.err);
    goto done;
  }
  for (int k = 0; k < NKEYS; k++) {
    cli[k] = 0;
    val[k] = st.val[k] ? st.val[k] : (char *)options[k].def;
  }
  rc = apply_values(o, val, cli, path, err, errlen);
done:
  for (int k = 0; k < NKEYS; k++)
    free(st.val[k]);
  if (rc != 0)
    gzs_opts_free(o);
  return rc;
}

/* ---- command line -------------------------------------------------------- */

/* The argtable: one entry a row, then --config, --help and the end. */
enum { A_CONFIG = NKEYS, A_HELP, A_END, NARGS };

static void make_table(void **t) {
  for (int k = 0; k < NKEYS; k++) {
    const opt_row_t *row = &options[k];
    if (row->kind == OPT_LIST)
      t[k] = arg_strn(row->shorts, row->longs, row->argname, 0, 100000, row->key);
    else if (row->kind == OPT_BOOL)
      t[k] = arg_lit0(row->shorts, row->longs, row->key);
    else
      t[k] = arg_str0(row->shorts, row->longs, row->argname, row->key);
  }
  t[A_CONFIG] = arg_str0(NULL, "config", "FILE", "config file");
  t[A_HELP] = arg_lit0("h", "help", "help");
  t[A_END] = arg_end(20);
}

int gzs_options_parse(int argc, char **argv, MPI_Comm comm, gzs_opts_t *o) {
  void *t[NARGS];
  char err[GZS_ERRLEN] = "", *cli_val[NKEYS], *val[NKEYS], *text = NULL;
  const char *cfg_path = NULL;
  int cli[NKEYS], rank, nargc = 0, nerr, rc = 2;
  char **nargv = NULL;
  ini_state_t st;

  memset(o, 0, sizeof *o);
  memset(&st, 0, sizeof st);
  memset(cli_val, 0, sizeof cli_val);
  MPI_Comm_rank(comm, &rank);
  make_table(t);
  nargv = gz_split_inputs(argc, argv, &nargc);
  if (arg_nullcheck(t) != 0 || !nargv) {
    if (rank == 0)
      fprintf(stderr, "gzstack stack: out of memory\n");
    goto done;
  }
  nerr = arg_parse(nargc, nargv, t);
  if (((struct arg_lit *)t[A_HELP])->count) {
    if (rank == 0)
      gz_stack_print_help(stdout);
    rc = 1;
    goto done;
  }
  if (nerr) {
    if (rank == 0) {
      arg_print_errors(stderr, t[A_END], "gzstack stack");
      fprintf(stderr, "(see gzstack stack --help)\n");
    }
    goto done;
  }
  o->command_line = join_command_line(argc, argv);

  /* command-line values as text */
  for (int k = 0; k < NKEYS; k++) {
    cli[k] = 0;
    if (options[k].kind == OPT_BOOL) {
      if (((struct arg_lit *)t[k])->count) {
        cli[k] = 1;
        cli_val[k] = "true";
      }
    } else if (((struct arg_str *)t[k])->count) {
      struct arg_str *a = t[k];
      cli[k] = 1;
      cli_val[k] = (char *)a->sval[0];
      if (options[k].kind == OPT_LIST)
        for (int i = 0; i < a->count; i++)
          if (push_str(&o->patterns, &o->npatterns, a->sval[i]) != 0)
            goto done;
    }
  }

  /* config file */
  if (((struct arg_str *)t[A_CONFIG])->count) {
    cfg_path = ((struct arg_str *)t[A_CONFIG])->sval[0];
    o->config = dup_str(cfg_path);
    text = read_config_text(cfg_path, comm, rank, err, sizeof err);
    if (!text) {
      if (rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", err);
      goto done;
    }
    if (parse_config(text, cfg_path, &st) != 0) {
      if (rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", st.err);
      goto done;
    }
  }
  for (int k = 0; k < NKEYS; k++)
    val[k] = cli[k] ? cli_val[k] : st.val[k] ? st.val[k] : (char *)options[k].def;
  if (apply_values(o, val, cli, cfg_path ? cfg_path : "", err, sizeof err) != 0) {
    if (rank == 0)
      fprintf(stderr, "gzstack stack: %s\n(see gzstack stack --help)\n", err);
    goto done;
  }

  /* globs on rank 0, the list to everyone */
  {
    int bad = 0;
    if (rank == 0 && expand_globs(o, err, sizeof err) != 0) {
      fprintf(stderr, "gzstack stack: %s\n", err);
      bad = 1;
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
    if (bad || bcast_inputs(o, comm, rank) != 0)
      goto done;
  }
  rc = 0;
done:
  for (int k = 0; k < NKEYS; k++)
    free(st.val[k]);
  free(text);
  free(nargv);
  arg_freetable(t, NARGS);
  if (rc != 0)
    gzs_opts_free(o);
  return rc;
}

void gzs_opts_free(gzs_opts_t *o) {
  for (int i = 0; i < o->ninputs; i++)
    free(o->inputs[i]);
  for (int i = 0; i < o->npatterns; i++)
    free(o->patterns[i]);
  free(o->inputs);
  free(o->patterns);
  free(o->var);
  free(o->dims_text);
  free(o->output);
  free(o->png);
  free(o->metrics);
  free(o->stats_png);
  free(o->config);
  free(o->command_line);
  free(o->slice_text);
  free(o->steps_text);
  free(o->years_text);
  free(o->dates_text);
  free(o->months_text);
  free(o->seasons_text);
  free(o->key_text);
  free(o->fold_text);
  free(o->group_text);
  free(o->weights_text);
  free(o->file_weights_text);
  free(o->chunks_text);
  free(o->weights);
  free(o->section_text);
  free(o->scale_text);
  free(o->scales);
  memset(o, 0, sizeof *o);
}

/* The settings object: every row under its config key, then the file. */
void gzs_opts_json(const gzs_opts_t *o, gz_json_t *j) {
  gz_json_object(j, "settings");
  for (int k = 0; k < NKEYS; k++) {
    const opt_row_t *row = &options[k];
    const void *at = cfield(o, row);
    switch (row->kind) {
    case OPT_LIST: {
      size_t len = 1;
      char *inputs, *p;
      for (int i = 0; i < o->ninputs; i++)
        len += strlen(o->inputs[i]) + 1;
      inputs = malloc(len);
      if (inputs) {
        p = inputs;
        *p = '\0';
        for (int i = 0; i < o->ninputs; i++)
          p += sprintf(p, "%s%s", i ? " " : "", o->inputs[i]);
      }
      gz_json_string(j, row->key, inputs ? inputs : "");
      free(inputs);
      break;
    }
    case OPT_STRING:
      gz_json_string(j, row->key, *(char *const *)at ? *(char *const *)at : "");
      break;
    case OPT_NUMBER:
      gz_json_number(j, row->key, *(const double *)at);
      break;
    case OPT_BOOL:
      gz_json_bool(j, row->key, *(const int *)at);
      break;
    case OPT_CHOICE: {
      int v;
      memcpy(&v, at, sizeof v);
      gz_json_string(j, row->key, choice_name(row->choices, v));
      break;
    }
    }
  }
  gz_json_string(j, "config", o->config ? o->config : "");
  gz_json_end_object(j);
}
