/*
 * stack_options.c - options of `gzstack stack`: the command line, INI
 * config files, validation, glob expansion and --help.
 *
 * Every option has one key, used by the INI file and echoed under
 * "settings" in the metrics JSON (so a run can be repeated from its JSON):
 *   input var dims dtype endian error_bound eb_mode bound op algo read
 *   device output png metrics stats_png verify force quiet slice slab_mb
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
#define _POSIX_C_SOURCE 200809L /* glob, strtok_r, gmtime_r, isatty, access */
#include "app.h"
#include "stack.h"
#include "stack_internal.h"

#include <argtable2.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- keys ---------------------------------------------------------------- */

enum {
  K_INPUT,
  K_VAR,
  K_DIMS,
  K_DTYPE,
  K_ENDIAN,
  K_EB,
  K_EB_MODE,
  K_BOUND,
  K_OP,
  K_ALGO,
  K_READ,
  K_DEVICE,
  K_OUTPUT,
  K_PNG,
  K_METRICS,
  K_STATS_PNG,
  K_VERIFY,
  K_FORCE,
  K_QUIET,
  K_SLICE,
  K_SLAB,
  NKEYS
};

/* Config key, the option that sets it (for messages), the default. */
static const struct {
  const char *key, *option, *def;
} keys[NKEYS] = {
    {"input", "-i/--input", NULL},    {"var", "--var", NULL},
    {"dims", "--dims", NULL},         {"dtype", "--dtype", "f32"},
    {"endian", "--endian", "little"}, {"error_bound", "-e/--error-bound", NULL},
    {"eb_mode", "--eb-mode", "abs"},  {"bound", "--bound", "strict"},
    {"op", "--op", "mean"},           {"algo", "--algo", "auto"},
    {"read", "--read", "parallel"},   {"device", "--device", "cpu"},
    {"output", "-o/--output", NULL},  {"png", "--png", NULL},
    {"metrics", "--metrics", NULL},   {"stats_png", "--stats-png", NULL},
    {"verify", "--verify", "false"},  {"force", "--force", "false"},
    {"quiet", "--quiet", "false"},    {"slice", "--slice", NULL},
    {"slab_mb", "--slab-mb", "256"},
};

static int key_index(const char *name) {
  char k[64];
  size_t n = strlen(name);
  if (n >= sizeof k)
    return -1;
  for (size_t i = 0; i <= n; i++)
    k[i] = name[i] == '-' ? '_' : (char)tolower((unsigned char)name[i]);
  if (!strcmp(k, "e") || !strcmp(k, "error") || !strcmp(k, "eb"))
    return K_EB;
  if (!strcmp(k, "dataset"))
    return K_VAR;
  if (!strcmp(k, "inputs"))
    return K_INPUT;
  for (int i = 0; i < NKEYS; i++)
    if (!strcmp(k, keys[i].key))
      return i;
  return -1;
}

const char *gzs_op_name(gzs_op_t op) {
  static const char *names[] = {"mean", "sum", "max", "min"};
  return (unsigned)op < 4 ? names[op] : "unknown";
}

/* ---- help ---------------------------------------------------------------- */

void gz_stack_print_help(FILE *out) {
  static const char *text[] = {
      "gzstack stack - stack snapshots (mean, sum, max, min) across MPI ranks with",
      "an error-bounded compressed allreduce",
      "",
      "  mpirun -np N gzstack [stack] -i INPUT... -e E -o OUT [options]",
      "",
      "Input (config-file key in brackets):",
      "  -i, --input FILE|GLOB...  netCDF, HDF5 or raw files; each holds one or more",
      "                            snapshots along its first (time, record, shot)",
      "                            dimension [input]",
      "  --var NAME                netCDF variable or HDF5 dataset path (--dataset);",
      "                            default: the only data variable [var]",
      "  --dims AxB[xC]            raw: shape of ONE snapshot; the snapshot count",
      "                            of a file follows from its size [dims]",
      "  --dtype f32|f64           raw: element type (default f32) [dtype]",
      "  --endian little|big       raw: byte order (default little) [endian]",
      "  --read parallel|root      parallel: every rank reads its own snapshots",
      "                            (MPI-IO hyperslabs for HDF5); root: rank 0 reads",
      "                            and sends them with the compressed scatter",
      "                            (default parallel) [read]",
      "  --slab-mb MB              read and reduce in slabs of at most MB MiB of",
      "                            doubles (default 256) [slab_mb]",
      "Stacking and bound:",
      "  -e, --error-bound E       error bound of the result (required); 0 = exact",
      "                            (plain MPI) [error_bound]",
      "  --eb-mode abs|rel         rel: E times the value range of the valid inputs",
      "                            (default abs) [eb_mode]",
      "  --bound strict|per-message",
      "                            strict: the written result is within E of the",
      "                            exact stack (plus the float32 rounding of the",
      "                            output); per-message: E bounds each quantization",
      "                            and the implied bound is reported (default",
      "                            strict) [bound]",
      "  --op mean|sum|max|min     reduction (default mean); missing values",
      "                            (_FillValue, missing_value, NaN, Inf) are skipped",
      "                            and the mean divides by the per-point count [op]",
      "  --algo auto|redoub|ring|mpi",
      "                            allreduce algorithm (default auto; mpi = the",
      "                            uncompressed MPI_Allreduce) [algo]",
      "  --device cpu|gpu          gpu: the allreduce runs on each rank's GPU (by",
      "                            node-local rank); without one, the CPU with a",
      "                            note (default cpu) [device]",
      "Output:",
      "  -o, --output FILE         .nc, .h5 or .raw: the stacked field with its",
      "                            dimensions, coordinates, units and provenance;",
      "                            points without data are NaN (_FillValue NaN)",
      "                            [output]",
      "  --png FILE.png            render of the result; with --verify also",
      "                            FILE_exact.png and FILE_error.png (error map",
      "                            symmetric at +-bound) [png]",
      "  --slice AXIS=INDEX        3-D fields: the slice rendered (AXIS a number or",
      "                            a dimension name; default the middle of axis 0)",
      "                            [slice]",
      "  --verify                  also compute the exact stack with plain MPI and",
      "                            report max/mean error, PSNR, NRMSE, SSIM, the",
      "                            bound and whether it held (exit 1 if not) [verify]",
      "  --metrics FILE.json       metrics, timings, error statistics and the",
      "                            effective settings [metrics]",
      "  --stats-png FILE.png      histogram of the allreduce errors with the fitted,",
      "                            paper and quantizer densities (implies --verify)",
      "                            [stats_png]",
      "  --force                   replace existing output files [force]",
      "  -q, --quiet               no progress, notes or summary [quiet]",
      "  --config FILE.ini         options from an INI file (`key = value`, keys in",
      "                            brackets above, ${VAR:-default} expands); the",
      "                            command line overrides it",
      "  -h, --help                this text",
      "",
      "Examples:",
      "  mpirun -np 4 gzstack -i TREFHT.nc --var TREFHT -e 1e-3 -o mean.nc --verify",
      "  mpirun -np 3 gzstack -i sst.mnmean.nc --var sst -e 1e-4 --eb-mode rel \\",
      "      -o sst_mean.h5 --png sst.png --metrics sst.json --verify",
      "  mpirun -np 4 gzstack -i soda_lakes_24x96x2048_f32le.raw --dims 96x2048 \\",
      "      --dtype f32 -e 1e-5 --read root -o shots.raw --png shots.png --verify",
      "  mpirun -np 4 gzstack -i wrf.nc --var T --op max -e 0.01 -o tmax.nc \\",
      "      --png tmax.png --slice bottom_top=0",
      "  mpirun -np 4 gzstack --config configs/ersst_mean.ini --force",
      "  mpirun -np 4 gzstack -i 'run/snap_*.h5' --var /wavefield -e 1e-4 -o stack.nc"};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
    fprintf(out, "%s\n", text[i]);
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
    snprintf(
        st->err, sizeof st->err,
        "config %s: unknown key '%s' (keys: input var dims dtype endian error_bound "
        "eb_mode bound op algo read device output png metrics stats_png verify force "
        "quiet slice slab_mb)",
        st->path, name);
    return 0;
  }
  {
    /* `input` may continue on indented lines (inih calls again with the
     * same name): append; other keys: the last one wins */
    char *v = expand_env(value), *old = st->val[k];
    if (v && k == K_INPUT && old) {
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

/* ---- command line -------------------------------------------------------- */

enum {
  A_INPUT,
  A_VAR,
  A_DIMS,
  A_DTYPE,
  A_ENDIAN,
  A_EB,
  A_EB_MODE,
  A_BOUND,
  A_OP,
  A_ALGO,
  A_READ,
  A_DEVICE,
  A_OUTPUT,
  A_PNG,
  A_METRICS,
  A_STATS_PNG,
  A_VERIFY,
  A_FORCE,
  A_QUIET,
  A_SLICE,
  A_SLAB,
  A_CONFIG,
  A_HELP,
  A_END,
  NARGS
};

static void make_table(void **t) {
  t[A_INPUT] = arg_strn("i", "input", "FILE", 0, 100000, "inputs");
  t[A_VAR] = arg_str0(NULL, "var,dataset", "NAME", "variable");
  t[A_DIMS] = arg_str0(NULL, "dims", "AxB", "raw snapshot shape");
  t[A_DTYPE] = arg_str0(NULL, "dtype", "f32|f64", "raw type");
  t[A_ENDIAN] = arg_str0(NULL, "endian", "little|big", "raw byte order");
  t[A_EB] = arg_str0("e", "error-bound", "E", "error bound");
  t[A_EB_MODE] = arg_str0(NULL, "eb-mode", "abs|rel", "bound mode");
  t[A_BOUND] = arg_str0(NULL, "bound", "strict|per-message", "bound policy");
  t[A_OP] = arg_str0(NULL, "op", "mean|sum|max|min", "reduction");
  t[A_ALGO] = arg_str0(NULL, "algo", "NAME", "algorithm");
  t[A_READ] = arg_str0(NULL, "read", "parallel|root", "reading");
  t[A_DEVICE] = arg_str0(NULL, "device", "cpu|gpu", "device");
  t[A_OUTPUT] = arg_str0("o", "output", "FILE", "output");
  t[A_PNG] = arg_str0(NULL, "png", "FILE", "render");
  t[A_METRICS] = arg_str0(NULL, "metrics", "FILE", "metrics");
  t[A_STATS_PNG] = arg_str0(NULL, "stats-png", "FILE", "stats plot");
  t[A_VERIFY] = arg_lit0(NULL, "verify", "verify");
  t[A_FORCE] = arg_lit0(NULL, "force", "force");
  t[A_QUIET] = arg_lit0("q", "quiet", "quiet");
  t[A_SLICE] = arg_str0(NULL, "slice", "AXIS=INDEX", "slice");
  t[A_SLAB] = arg_str0(NULL, "slab-mb", "MB", "slab size");
  t[A_CONFIG] = arg_str0(NULL, "config", "FILE", "config file");
  t[A_HELP] = arg_lit0("h", "help", "help");
  t[A_END] = arg_end(20);
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

/* ---- validation ---------------------------------------------------------- */

/* "--op foo" or "config x.ini: op = foo". */
static void where(char *buf, size_t len, int k, int from_cli, const char *cfg,
                  const char *value) {
  if (from_cli)
    snprintf(buf, len, "%s %s",
             strchr(keys[k].option, '/') ? strchr(keys[k].option, '/') + 1
                                         : keys[k].option,
             value);
  else
    snprintf(buf, len, "config %s: %s = %s", cfg, keys[k].key, value);
}

static int apply_values(gzs_opts_t *o, char *const *val, const int *cli, const char *cfg,
                        char *err, size_t errlen) {
  char w[600];
  const char *v;

#define WHERE(k) (where(w, sizeof w, k, cli[k], cfg, val[k]), w)
#define CHOICE(k, ...)                                                                   \
  do {                                                                                   \
    snprintf(err, errlen, "%s: use %s", WHERE(k), __VA_ARGS__);                          \
    return -1;                                                                           \
  } while (0)

  /* inputs: whitespace-separated in the file, one per -i on the line */
  if ((v = val[K_INPUT]) != NULL && !cli[K_INPUT]) {
    char *copy = dup_str(v), *save = NULL;
    for (char *tok = copy ? strtok_r(copy, " \t\r\n", &save) : NULL; tok;
         tok = strtok_r(NULL, " \t\r\n", &save))
      if (push_str(&o->patterns, &o->npatterns, tok) != 0)
        break;
    free(copy);
  }
  if (o->npatterns == 0) {
    snprintf(err, errlen, "no input: give -i FILE... (or input = in the config file)");
    return -1;
  }
  o->var = val[K_VAR] && *val[K_VAR] ? dup_str(val[K_VAR]) : NULL;

  v = val[K_EB];
  if (!v) {
    snprintf(err, errlen,
             "-e/--error-bound is required (or error_bound = in the config)");
    return -1;
  }
  if (parse_number(v, &o->e) != 0 || !isfinite(o->e) || o->e < 0) {
    snprintf(err, errlen, "%s: the error bound must be a finite number >= 0",
             WHERE(K_EB));
    return -1;
  }
  v = val[K_EB_MODE];
  if (!strcmp(v, "abs"))
    o->eb_mode = GZ_EB_ABS;
  else if (!strcmp(v, "rel"))
    o->eb_mode = GZ_EB_REL;
  else
    CHOICE(K_EB_MODE, "abs or rel");
  v = val[K_BOUND];
  if (!strcmp(v, "strict"))
    o->bound = GZ_BOUND_STRICT;
  else if (!strcmp(v, "per-message") || !strcmp(v, "per_message"))
    o->bound = GZ_BOUND_PER_MESSAGE;
  else
    CHOICE(K_BOUND, "strict or per-message");
  v = val[K_OP];
  if (!strcmp(v, "mean"))
    o->op = GZS_OP_MEAN;
  else if (!strcmp(v, "sum"))
    o->op = GZS_OP_SUM;
  else if (!strcmp(v, "max"))
    o->op = GZS_OP_MAX;
  else if (!strcmp(v, "min"))
    o->op = GZS_OP_MIN;
  else
    CHOICE(K_OP, "mean, sum, max or min");
  v = val[K_ALGO];
  if (!strcmp(v, "auto") || !strcmp(v, "redoub") || !strcmp(v, "ring") ||
      !strcmp(v, "mpi"))
    gz_algo_parse(v, &o->algo);
  else
    CHOICE(K_ALGO, "auto, redoub, ring or mpi");
  v = val[K_READ];
  if (!strcmp(v, "parallel") || !strcmp(v, "root"))
    o->read_root = !strcmp(v, "root");
  else
    CHOICE(K_READ, "parallel or root");
  v = val[K_DEVICE];
  if (!strcmp(v, "cpu") || !strcmp(v, "gpu"))
    o->device_gpu = !strcmp(v, "gpu");
  else
    CHOICE(K_DEVICE, "cpu or gpu");

  /* raw shape */
  o->dtype_text = dup_str(val[K_DTYPE]);
  o->endian_text = dup_str(val[K_ENDIAN]);
  if (!strcmp(val[K_DTYPE], "f32") || !strcmp(val[K_DTYPE], "float32"))
    o->raw.dtype = GZ_FLOAT32;
  else if (!strcmp(val[K_DTYPE], "f64") || !strcmp(val[K_DTYPE], "float64"))
    o->raw.dtype = GZ_FLOAT64;
  else
    CHOICE(K_DTYPE, "f32 or f64");
  if (!strcmp(val[K_ENDIAN], "little") || !strcmp(val[K_ENDIAN], "big"))
    o->raw.big_endian = !strcmp(val[K_ENDIAN], "big");
  else
    CHOICE(K_ENDIAN, "little or big");
  if ((v = val[K_DIMS]) != NULL) {
    if (gz_parse_dims(v, &o->raw) != 0 || o->raw.ndims >= GZ_IO_MAXDIMS) {
      snprintf(err, errlen,
               "%s: expected the positive sizes of one snapshot, like 96x2048",
               WHERE(K_DIMS));
      return -1;
    }
    o->have_raw = 1;
    o->dims_text = dup_str(v);
  }

  if (!(o->output = val[K_OUTPUT] ? dup_str(val[K_OUTPUT]) : NULL)) {
    snprintf(err, errlen, "-o/--output is required (.nc, .h5 or .raw)");
    return -1;
  }
  if (gz_io_format_from_path(o->output) == GZ_FMT_UNKNOWN) {
    snprintf(err, errlen,
             "%s: the output format follows the extension: use .nc, .h5 or .raw",
             WHERE(K_OUTPUT));
    return -1;
  }
  o->png = val[K_PNG] ? dup_str(val[K_PNG]) : NULL;
  o->metrics = val[K_METRICS] ? dup_str(val[K_METRICS]) : NULL;
  o->stats_png = val[K_STATS_PNG] ? dup_str(val[K_STATS_PNG]) : NULL;
  if (o->png && (strlen(o->png) < 5 || strcasecmp(o->png + strlen(o->png) - 4, ".png"))) {
    snprintf(err, errlen, "%s: the render must be a .png file", WHERE(K_PNG));
    return -1;
  }
  if (o->stats_png && (strlen(o->stats_png) < 5 ||
                       strcasecmp(o->stats_png + strlen(o->stats_png) - 4, ".png"))) {
    snprintf(err, errlen, "%s: the plot must be a .png file", WHERE(K_STATS_PNG));
    return -1;
  }
  if (parse_bool(val[K_VERIFY], &o->verify) != 0)
    CHOICE(K_VERIFY, "true or false");
  if (parse_bool(val[K_FORCE], &o->force) != 0)
    CHOICE(K_FORCE, "true or false");
  if (parse_bool(val[K_QUIET], &o->quiet) != 0)
    CHOICE(K_QUIET, "true or false");
  if (o->stats_png)
    o->verify = 1;

  if ((v = val[K_SLICE]) != NULL) {
    const char *eq = strchr(v, '=');
    char *end;
    if (!eq || eq == v) {
      snprintf(err, errlen, "%s: expected AXIS=INDEX, like 0=7 or bottom_top=0",
               WHERE(K_SLICE));
      return -1;
    }
    errno = 0;
    o->slice_index = strtol(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end || o->slice_index < 0) {
      snprintf(err, errlen, "%s: the index must be a non-negative integer",
               WHERE(K_SLICE));
      return -1;
    }
    o->have_slice = 1;
    /* the axis is resolved against the shape after the scan */
    o->slice_axis = -1;
    if (isdigit((unsigned char)v[0])) {
      long a = strtol(v, &end, 10);
      if (end == eq && a >= 0 && a < GZ_IO_MAXDIMS)
        o->slice_axis = (int)a;
    }
  }
  if (parse_number(val[K_SLAB], &o->slab_mb) != 0 || !(o->slab_mb > 0) ||
      o->slab_mb > 1e9) {
    snprintf(err, errlen, "%s: the slab size must be a positive number of MiB",
             WHERE(K_SLAB));
    return -1;
  }
  return 0;
#undef WHERE
#undef CHOICE
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
  st.path = path;
  {
    int line = ini_parse_string(text, on_ini_entry, &st);
    if (line != 0 && !st.err[0])
      snprintf(st.err, sizeof st.err, "config %s: line %d: expected `key = value`", path,
               line);
  }
  if (st.err[0]) {
    snprintf(err, errlen, "%s", st.err);
    goto done;
  }
  for (int k = 0; k < NKEYS; k++) {
    cli[k] = 0;
    val[k] = st.val[k] ? st.val[k] : (char *)keys[k].def;
  }
  rc = apply_values(o, val, cli, path, err, errlen);
done:
  for (int k = 0; k < NKEYS; k++)
    free(st.val[k]);
  if (rc != 0)
    gzs_opts_free(o);
  return rc;
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

  /* command-line values as strings */
  {
    static const int map[NKEYS] = {
        A_INPUT,   A_VAR,       A_DIMS,   A_DTYPE, A_ENDIAN, A_EB,     A_EB_MODE,
        A_BOUND,   A_OP,        A_ALGO,   A_READ,  A_DEVICE, A_OUTPUT, A_PNG,
        A_METRICS, A_STATS_PNG, A_VERIFY, A_FORCE, A_QUIET,  A_SLICE,  A_SLAB};
    for (int k = 0; k < NKEYS; k++) {
      void *a = t[map[k]];
      cli[k] = 0;
      if (k == K_VERIFY || k == K_FORCE || k == K_QUIET) {
        if (((struct arg_lit *)a)->count) {
          cli[k] = 1;
          cli_val[k] = "true";
        }
      } else if (((struct arg_str *)a)->count) {
        cli[k] = 1;
        cli_val[k] = (char *)((struct arg_str *)a)->sval[0];
      }
    }
    for (int i = 0; i < ((struct arg_str *)t[A_INPUT])->count; i++)
      if (push_str(&o->patterns, &o->npatterns,
                   ((struct arg_str *)t[A_INPUT])->sval[i]) != 0)
        goto done;
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
    st.path = cfg_path;
    {
      int line = ini_parse_string(text, on_ini_entry, &st);
      if (line != 0 && !st.err[0])
        snprintf(st.err, sizeof st.err, "config %s: line %d: expected `key = value`",
                 cfg_path, line);
    }
    if (st.err[0]) {
      if (rank == 0)
        fprintf(stderr, "gzstack stack: %s\n", st.err);
      goto done;
    }
  }
  for (int k = 0; k < NKEYS; k++)
    val[k] = cli[k] ? cli_val[k] : st.val[k] ? st.val[k] : (char *)keys[k].def;
  if (apply_values(o, val, cli, cfg_path ? cfg_path : "", err, sizeof err) != 0) {
    if (rank == 0)
      fprintf(stderr, "gzstack stack: %s\n(see gzstack stack --help)\n", err);
    goto done;
  }
  o->slice_text = val[K_SLICE] ? dup_str(val[K_SLICE]) : NULL;

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
  free(o->dtype_text);
  free(o->endian_text);
  free(o->output);
  free(o->png);
  free(o->metrics);
  free(o->stats_png);
  free(o->config);
  free(o->command_line);
  free(o->slice_text);
  memset(o, 0, sizeof *o);
}

void gzs_opts_json(const gzs_opts_t *o, gz_json_t *j) {
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
  gz_json_object(j, "settings");
  gz_json_string(j, "input", inputs ? inputs : "");
  gz_json_string(j, "var", o->var ? o->var : "");
  gz_json_string(j, "dims", o->dims_text ? o->dims_text : "");
  gz_json_string(j, "dtype", o->dtype_text ? o->dtype_text : "f32");
  gz_json_string(j, "endian", o->endian_text ? o->endian_text : "little");
  gz_json_number(j, "error_bound", o->e);
  gz_json_string(j, "eb_mode", o->eb_mode == GZ_EB_REL ? "rel" : "abs");
  gz_json_string(j, "bound", o->bound == GZ_BOUND_STRICT ? "strict" : "per-message");
  gz_json_string(j, "op", gzs_op_name(o->op));
  gz_json_string(j, "algo", gz_algo_name(o->algo));
  gz_json_string(j, "read", o->read_root ? "root" : "parallel");
  gz_json_string(j, "device", o->device_gpu ? "gpu" : "cpu");
  gz_json_string(j, "output", o->output);
  gz_json_string(j, "png", o->png ? o->png : "");
  gz_json_string(j, "metrics", o->metrics ? o->metrics : "");
  gz_json_string(j, "stats_png", o->stats_png ? o->stats_png : "");
  gz_json_bool(j, "verify", o->verify);
  gz_json_bool(j, "force", o->force);
  gz_json_bool(j, "quiet", o->quiet);
  gz_json_string(j, "slice", o->slice_text ? o->slice_text : "");
  gz_json_number(j, "slab_mb", o->slab_mb);
  gz_json_string(j, "config", o->config ? o->config : "");
  gz_json_end_object(j);
  free(inputs);
}
