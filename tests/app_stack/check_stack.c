/* check_stack.c - independent check of one `gzstack stack` run.
 *
 * Recomputes the stack from the inputs in double precision with a plain loop
 * (its own masking: NaN, +-Inf and the file's fill value), then checks:
 *  - the output: shape = snapshot shape, units kept, NaN exactly where no
 *    input value was valid, |out - reference| <= the claimed bound
 *    (bound.claimed of the metrics JSON) everywhere else;
 *  - the claim itself (strict policy): claimed <= e_abs + half an ulp of
 *    float32 at the largest result (float32 outputs) + rounding slop, and
 *    e_abs = e (abs) or e times the range of the valid inputs (rel);
 *  - the metrics JSON: required keys present, ranks, snapshots, op, the
 *    bound echoed, compression_ratio = bytes_raw / bytes_sent, time.* >= 0,
 *    verify.within_bound true and verify.max_abs_error <= verify.bound and
 *    equal to the error measured here, settings echoed;
 *  - PNG files: decode with libpng as 8-bit RGB; the render, exact and
 *    error maps have the same size, at least the field's (binned) size;
 *    --grey: the render shows missing-data grey; --plot: an 800 x 500 plot.
 *
 * Usage: check_stack -o OUT -j METRICS.json -n RANKS [--var V] [--dims AxB
 *        --dtype f32|f64] [--op mean|sum|max|min] [--per-message]
 *        [--png PNG [--grey]] [--plot PNG] INPUT...
 * Prints "N passed, N failed"; exit 0 only when everything held. */
#define _POSIX_C_SOURCE 200809L

#include "gz_test.h"

#include "app.h"
#include "gz_io.h"

#include <ctype.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny JSON reader: flattens objects into "a.b.c" -> value text ---- */

typedef struct kv {
  char key[128];
  char val[256]; /* numbers, true/false/null as written; strings unquoted */
  int is_string;
} kv_t;

typedef struct json {
  kv_t *kv;
  size_t n, cap;
  const char *p;
  int bad;
} json_t;

static void skip_ws(json_t *j) {
  while (*j->p && isspace((unsigned char)*j->p))
    j->p++;
}

static int parse_string(json_t *j, char *out, size_t len) {
  size_t n = 0;
  if (*j->p != '"')
    return -1;
  j->p++;
  while (*j->p && *j->p != '"') {
    char c = *j->p++;
    if (c == '\\' && *j->p) {
      c = *j->p++;
      if (c == 'u') { /* keep \uXXXX as '?' */
        for (int k = 0; k < 4 && *j->p; k++)
          j->p++;
        c = '?';
      } else if (c == 'n') {
        c = '\n';
      }
    }
    if (n + 1 < len)
      out[n++] = c;
  }
  out[n] = '\0';
  if (*j->p != '"')
    return -1;
  j->p++;
  return 0;
}

static void add_kv(json_t *j, const char *key, const char *val, int is_string) {
  if (j->n == j->cap) {
    kv_t *bigger = realloc(j->kv, sizeof(kv_t) * (j->cap ? 2 * j->cap : 64));
    if (!bigger) {
      j->bad = 1;
      return;
    }
    j->kv = bigger;
    j->cap = j->cap ? 2 * j->cap : 64;
  }
  snprintf(j->kv[j->n].key, sizeof j->kv[j->n].key, "%s", key);
  snprintf(j->kv[j->n].val, sizeof j->kv[j->n].val, "%s", val);
  j->kv[j->n].is_string = is_string;
  j->n++;
}

static void parse_value(json_t *j, const char *path);

static void parse_object(json_t *j, const char *path) {
  char key[128], sub[256];
  j->p++; /* { */
  skip_ws(j);
  if (*j->p == '}') {
    j->p++;
    return;
  }
  while (!j->bad) {
    skip_ws(j);
    if (parse_string(j, key, sizeof key) != 0) {
      j->bad = 1;
      return;
    }
    skip_ws(j);
    if (*j->p++ != ':') {
      j->bad = 1;
      return;
    }
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    parse_value(j, sub);
    skip_ws(j);
    if (*j->p == ',') {
      j->p++;
      continue;
    }
    if (*j->p == '}') {
      j->p++;
      return;
    }
    j->bad = 1;
  }
}

static void parse_value(json_t *j, const char *path) {
  char buf[256];
  size_t n = 0;
  skip_ws(j);
  if (*j->p == '{') {
    add_kv(j, path, "{object}", 0);
    parse_object(j, path);
  } else if (*j->p == '"') {
    if (parse_string(j, buf, sizeof buf) != 0)
      j->bad = 1;
    else
      add_kv(j, path, buf, 1);
  } else if (*j->p == '[') {
    int depth = 0;
    do { /* arrays are skipped, kept as present */
      depth += *j->p == '[' ? 1 : *j->p == ']' ? -1 : 0;
      j->p++;
    } while (*j->p && depth > 0);
    add_kv(j, path, "[array]", 0);
  } else {
    while (*j->p && !strchr(",}] \t\r\n", *j->p) && n + 1 < sizeof buf)
      buf[n++] = *j->p++;
    buf[n] = '\0';
    if (!n)
      j->bad = 1;
    else
      add_kv(j, path, buf, 0);
  }
}

static const kv_t *jget(const json_t *j, const char *key) {
  for (size_t i = 0; i < j->n; i++)
    if (!strcmp(j->kv[i].key, key))
      return &j->kv[i];
  return NULL;
}

static double jnum(const json_t *j, const char *key) {
  const kv_t *v = jget(j, key);
  return v && !v->is_string && strcmp(v->val, "null") ? strtod(v->val, NULL) : NAN;
}

static const char *jstr(const json_t *j, const char *key) {
  const kv_t *v = jget(j, key);
  return v ? v->val : "";
}

/* ---- data ---------------------------------------------------------------- */

typedef struct args {
  const char *out, *json, *var, *dims, *dtype, *op, *png, *plot;
  int ranks, per_message, grey;
  char **inputs;
  int ninputs;
} args_t;

static gz_reader_t *open_raw_or(const char *path, const char *var, const args_t *a,
                                int record_dim) {
  gz_raw_opts_t raw;
  gz_reader_t *r = NULL;
  char err[1024];
  memset(&raw, 0, sizeof raw);
  raw.dtype = a->dtype && !strcmp(a->dtype, "f64") ? GZ_FLOAT64 : GZ_FLOAT32;
  if (a->dims) {
    if (gz_parse_dims(a->dims, &raw) != 0)
      return NULL;
    if (record_dim) {
      memmove(raw.dims + 1, raw.dims, sizeof(size_t) * (size_t)raw.ndims);
      raw.dims[0] = 0;
      raw.ndims++;
    }
  }
  if (gz_reader_open(path, var, a->dims ? &raw : NULL, MPI_COMM_SELF, &r, err,
                     sizeof err)) {
    fprintf(stderr, "check_stack: %s\n", err);
    return NULL;
  }
  return r;
}

/* The reference: sum / max / min and counts over every input snapshot. */
static double *reference(const args_t *a, size_t *npoints, uint32_t **counts, double *lo,
                         double *hi, size_t *nsnap, char *units, size_t ulen) {
  double *acc = NULL, *buf = NULL;
  uint32_t *cnt = NULL;
  size_t M = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  *nsnap = 0;
  for (int f = 0; f < a->ninputs; f++) {
    gz_reader_t *r = open_raw_or(a->inputs[f], a->var, a, 1);
    const gz_meta_t *m;
    char err[512];
    if (!r)
      return NULL;
    m = gz_reader_meta(r);
    if (f == 0) {
      M = gz_reader_record_size(r);
      acc = calloc(M, sizeof(double));
      cnt = calloc(M, sizeof(uint32_t));
      buf = malloc(M * sizeof(double));
      snprintf(units, ulen, "%s", m->units);
      if (!acc || !cnt || !buf)
        return NULL;
      if (strcmp(a->op, "mean") && strcmp(a->op, "sum"))
        for (size_t i = 0; i < M; i++)
          acc[i] = NAN;
    }
    for (size_t rec = 0; rec < gz_reader_records(r); rec++) {
      if (gz_reader_read(r, rec, 1, GZ_FLOAT64, buf, err, sizeof err) != 0) {
        fprintf(stderr, "check_stack: %s\n", err);
        return NULL;
      }
      for (size_t i = 0; i < M; i++) {
        double v = buf[i];
        if (!isfinite(v) || (m->has_fill && v == m->fill_value))
          continue;
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
        cnt[i]++;
        if (!strcmp(a->op, "max"))
          acc[i] = isnan(acc[i]) || v > acc[i] ? v : acc[i];
        else if (!strcmp(a->op, "min"))
          acc[i] = isnan(acc[i]) || v < acc[i] ? v : acc[i];
        else
          acc[i] += v;
      }
      (*nsnap)++;
    }
    gz_reader_close(r);
  }
  for (size_t i = 0; i < M; i++)
    acc[i] = cnt[i] == 0 ? NAN : !strcmp(a->op, "mean") ? acc[i] / cnt[i] : acc[i];
  free(buf);
  *npoints = M;
  *counts = cnt;
  return acc;
}

/* ---- PNG ----------------------------------------------------------------- */

/* Decode path fully; width/height out; *grey counts missing-data pixels. */
static int png_decode(const char *path, unsigned *w, unsigned *h, size_t *grey) {
  png_image img;
  png_bytep px;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path))
    return -1;
  img.format = PNG_FORMAT_RGB;
  px = malloc(PNG_IMAGE_SIZE(img));
  if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
    free(px);
    png_image_free(&img);
    return -1;
  }
  *w = img.width;
  *h = img.height;
  *grey = 0;
  for (size_t i = 0; i < (size_t)img.width * img.height; i++)
    *grey += px[3 * i] == 128 && px[3 * i + 1] == 128 && px[3 * i + 2] == 128;
  free(px);
  return 0;
}

static void derived(const char *png, const char *suffix, char *out, size_t len) {
  size_t n = strlen(png);
  snprintf(out, len, "%.*s%s.png", (int)(n - 4), png, suffix);
}

/* ---- main ---------------------------------------------------------------- */

static int parse(int argc, char **argv, args_t *a) {
  memset(a, 0, sizeof *a);
  a->op = "mean";
  a->inputs = malloc(sizeof(char *) * (size_t)argc);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(s, "--per-message"))
      a->per_message = 1;
    else if (!strcmp(s, "--grey"))
      a->grey = 1;
    else if (s[0] == '-' && !v)
      return -1;
    else if (!strcmp(s, "-o") && ++i)
      a->out = v;
    else if (!strcmp(s, "-j") && ++i)
      a->json = v;
    else if (!strcmp(s, "-n") && ++i)
      a->ranks = atoi(v);
    else if (!strcmp(s, "--var") && ++i)
      a->var = v;
    else if (!strcmp(s, "--dims") && ++i)
      a->dims = v;
    else if (!strcmp(s, "--dtype") && ++i)
      a->dtype = v;
    else if (!strcmp(s, "--op") && ++i)
      a->op = v;
    else if (!strcmp(s, "--png") && ++i)
      a->png = v;
    else if (!strcmp(s, "--plot") && ++i)
      a->plot = v;
    else if (s[0] == '-')
      return -1;
    else
      a->inputs[a->ninputs++] = argv[i];
  }
  return a->out && a->json && a->ranks > 0 && a->ninputs > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  args_t a;
  json_t j;
  size_t M = 0, nsnap = 0, n_out = 0, tlen;
  uint32_t *cnt = NULL;
  double *ref, *out = NULL, lo, hi, claimed, e, e_abs, maxerr = 0, maxabs = 0;
  char units[128] = "", *text;
  gz_reader_t *r;
  size_t bad_nan = 0, bad_bound = 0;
  static const char *required[] = {"compression_ratio",
                                   "bytes_raw",
                                   "bytes_sent",
                                   "ranks",
                                   "snapshots",
                                   "op",
                                   "algorithm",
                                   "time.total",
                                   "time.read",
                                   "time.compress",
                                   "time.communicate",
                                   "time.write",
                                   "time.startup",
                                   "time.scan",
                                   "time.accumulate",
                                   "time.setup",
                                   "time.result",
                                   "time.render",
                                   "time.finish",
                                   "verify.max_abs_error",
                                   "verify.mean_error",
                                   "verify.psnr",
                                   "verify.nrmse",
                                   "verify.ssim",
                                   "verify.bound",
                                   "verify.within_bound",
                                   "bound.policy",
                                   "bound.claimed",
                                   "bound.error_bound_abs",
                                   "settings.input",
                                   "settings.error_bound",
                                   "settings.eb_mode",
                                   "settings.bound",
                                   "settings.op",
                                   "settings.algo",
                                   "settings.read",
                                   "settings.output",
                                   "command",
                                   "gzstack_version",
                                   "input.shape",
                                   "mask.masked_points"};

  MPI_Init(&argc, &argv);
  if (parse(argc, argv, &a) != 0) {
    fprintf(stderr,
            "usage: check_stack -o OUT -j METRICS -n RANKS [--var V] [--dims AxB "
            "--dtype f32] [--op OP] [--per-message] [--png P [--grey]] [--plot P] "
            "INPUT...\n");
    MPI_Finalize();
    return 2;
  }

  /* metrics JSON */
  memset(&j, 0, sizeof j);
  text = gz_test_read_file(a.json, &tlen);
  GZ_CHECK(text != NULL, "%s: cannot read", a.json);
  if (text) {
    j.p = text;
    skip_ws(&j);
    if (*j.p == '{')
      parse_object(&j, "");
    else
      j.bad = 1;
    GZ_CHECK(!j.bad, "%s: not valid JSON (near: %.40s)", a.json, j.p);
  }
  for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
    GZ_CHECK(jget(&j, required[k]) != NULL, "%s: key %s missing", a.json, required[k]);

  /* reference and output */
  ref = reference(&a, &M, &cnt, &lo, &hi, &nsnap, units, sizeof units);
  GZ_CHECK(ref != NULL, "reference could not be computed");
  r = open_raw_or(a.out, NULL, &a, 0);
  GZ_CHECK(r != NULL, "%s: cannot open the output", a.out);
  if (r && ref) {
    const gz_meta_t *m = gz_reader_meta(r);
    char err[512];
    n_out = gz_reader_records(r) * gz_reader_record_size(r);
    GZ_CHECK(n_out == M, "output has %zu values, a snapshot %zu", n_out, M);
    if (gz_reader_format(r) != GZ_FMT_RAW)
      GZ_CHECK(!strcmp(m->units, units), "units '%s' in the output, '%s' in the input",
               m->units, units);
    out = malloc(sizeof(double) * n_out + 1);
    if (out && n_out == M &&
        gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT64, out, err, sizeof err) !=
            0) {
      GZ_CHECK(0, "%s", err);
      free(out);
      out = NULL;
    }
  }
  gz_reader_close(r);

  claimed = jnum(&j, "bound.claimed");
  e = jnum(&j, "settings.error_bound");
  e_abs = jnum(&j, "bound.error_bound_abs");
  if (out && ref && n_out == M) {
    for (size_t i = 0; i < M; i++) {
      if (cnt[i] == 0) {
        bad_nan += !isnan(out[i]);
        continue;
      }
      double d = fabs(out[i] - ref[i]);
      if (!(d <= claimed))
        bad_bound++;
      if (!(d <= maxerr))
        maxerr = isnan(d) ? INFINITY : d;
      maxabs = fmax(maxabs, fabs(ref[i]));
    }
    GZ_CHECK(bad_nan == 0, "%zu points without valid samples are not NaN", bad_nan);
    GZ_CHECK(bad_bound == 0, "%zu points beyond the claimed bound %g (max error %g)",
             bad_bound, claimed, maxerr);
    GZ_CHECK(fabs(maxerr - jnum(&j, "verify.max_abs_error")) <= 1e-9 * (hi - lo) + 1e-300,
             "max error %.17g here, %.17g in the JSON", maxerr,
             jnum(&j, "verify.max_abs_error"));
    printf("check_stack: %s: %zu points, %zu snapshots, max error %.6g <= claimed %.6g\n",
           a.out, M, nsnap, maxerr, claimed);
  }

  /* the claim itself */
  if (!strcmp(jstr(&j, "settings.eb_mode"), "rel"))
    GZ_CHECK(fabs(e_abs - e * (hi - lo)) <= 1e-12 * e_abs, "e_abs %g != e x range %g",
             e_abs, e * (hi - lo));
  else
    GZ_CHECK(e_abs == e, "e_abs %g != e %g", e_abs, e);
  if (!a.per_message && ref) {
    double f32 = 0, slop;
    if (jnum(&j, "bound.float32_rounding") > 0)
      f32 = ldexp(1.0, ilogb(maxabs + e_abs) - 24);
    slop = ldexp((double)(nsnap + (size_t)a.ranks) * fmax(fabs(lo), fabs(hi)), -50) *
           (!strcmp(a.op, "sum") ? (double)nsnap : 1.0);
    GZ_CHECK(claimed <= e_abs * (1 + 1e-9) + f32 + slop,
             "strict claim %g > e %g + %g + %g", claimed, e_abs, f32, slop);
  }

  /* JSON consistency */
  GZ_CHECK(jnum(&j, "ranks") == a.ranks, "ranks %g, expected %d", jnum(&j, "ranks"),
           a.ranks);
  GZ_CHECK(jnum(&j, "snapshots") == (double)nsnap, "snapshots %g, expected %zu",
           jnum(&j, "snapshots"), nsnap);
  GZ_CHECK(!strcmp(jstr(&j, "op"), a.op), "op %s, expected %s", jstr(&j, "op"), a.op);
  GZ_CHECK(!strcmp(jstr(&j, "verify.within_bound"), "true"), "verify.within_bound is %s",
           jstr(&j, "verify.within_bound"));
  GZ_CHECK(jnum(&j, "verify.max_abs_error") <= jnum(&j, "verify.bound"),
           "verify: max error above the bound");
  GZ_CHECK(jnum(&j, "verify.bound") == claimed, "verify.bound != bound.claimed");
  {
    double raw = jnum(&j, "bytes_raw"), sent = jnum(&j, "bytes_sent");
    double ratio = jnum(&j, "compression_ratio");
    if (sent > 0)
      GZ_CHECK(fabs(ratio - raw / sent) <= 1e-9 * ratio, "ratio %g != %g / %g", ratio,
               raw, sent);
    else
      GZ_CHECK(isnan(ratio), "ratio should be null when nothing was sent");
  }
  {
    /* the whole run is accounted for: every part of time.* is >= 0, no
     * larger than the total, and the parts add up to the total within 5 %
     * (a consistency check, not a speed limit) */
    static const char *tk[] = {"startup", "scan",     "read",        "accumulate",
                               "setup",   "compress", "communicate", "result",
                               "verify",  "write",    "render",      "finish"};
    double total = jnum(&j, "time.total"), sum = 0;
    char key[64];
    size_t parts = 0;
    GZ_CHECK(total > 0, "time.total = %g", total);
    for (size_t k = 0; k < sizeof tk / sizeof tk[0]; k++) {
      snprintf(key, sizeof key, "time.%s", tk[k]);
      GZ_CHECK(jnum(&j, key) >= 0 && jnum(&j, key) <= total + 1e-3, "%s = %g (total %g)",
               key, jnum(&j, key), total);
      sum += jnum(&j, key);
    }
    for (size_t i = 0; i < j.n; i++) /* no part left out of the list above */
      parts += !strncmp(j.kv[i].key, "time.", 5) && strcmp(j.kv[i].key, "time.total");
    GZ_CHECK(parts == sizeof tk / sizeof tk[0], "%zu parts of time, %zu checked", parts,
             sizeof tk / sizeof tk[0]);
    GZ_CHECK(fabs(sum - total) <= 0.05 * total, "time parts add up to %g, total %g", sum,
             total);
  }
  GZ_CHECK(!strcmp(jstr(&j, "settings.output"), a.out), "settings.output %s",
           jstr(&j, "settings.output"));

  /* PNG files */
  if (a.png) {
    char ex[4096], er[4096];
    unsigned w[3] = {0, 0, 0}, h[3] = {0, 0, 0};
    size_t grey[3];
    const char *paths[3] = {a.png, ex, er};
    derived(a.png, "_exact", ex, sizeof ex);
    derived(a.png, "_error", er, sizeof er);
    for (int k = 0; k < 3; k++)
      GZ_CHECK(png_decode(paths[k], &w[k], &h[k], &grey[k]) == 0, "%s does not decode",
               paths[k]);
    {
      static const char *keys[3] = {"render.png", "render.png_exact", "render.png_error"};
      double rows = jnum(&j, "render.rows"), cols = jnum(&j, "render.cols");
      double kr = jnum(&j, "render.bin_rows"), kc = jnum(&j, "render.bin_cols");
      double scale = jnum(&j, "render.scale");
      char key[64];
      /* the view is the snapshot (2-D) or a slice of it */
      GZ_CHECK(rows >= 1 && cols >= 1 && fmod((double)M, rows * cols) == 0,
               "render view %gx%g does not fit snapshots of %zu values", rows, cols, M);
      GZ_CHECK(scale >= 1 && kr >= 1 && kc >= 1, "render scale %g, bins %gx%g", scale, kr,
               kc);
      for (int k = 0; k < 3; k++) {
        snprintf(key, sizeof key, "%s.width", keys[k]);
        GZ_CHECK(w[k] == jnum(&j, key), "%s: width %u, expected %g", paths[k], w[k],
                 jnum(&j, key));
        snprintf(key, sizeof key, "%s.height", keys[k]);
        GZ_CHECK(h[k] == jnum(&j, key), "%s: height %u, expected %g", paths[k], h[k],
                 jnum(&j, key));
        /* the field, framed, fits inside the image at its scale */
        GZ_CHECK(w[k] >= ceil(cols / kc) * scale && h[k] >= ceil(rows / kr) * scale,
                 "%s: %ux%u smaller than the %gx%g field at scale %g", paths[k], w[k],
                 h[k], ceil(rows / kr), ceil(cols / kc), scale);
      }
    }
    if (a.grey)
      GZ_CHECK(grey[0] > 100 && grey[2] > 100, "no missing-data grey in the renders");
  }
  if (a.plot) {
    unsigned w = 0, h = 0;
    size_t grey;
    GZ_CHECK(png_decode(a.plot, &w, &h, &grey) == 0, "%s does not decode", a.plot);
    GZ_CHECK(w == 800 && h == 500, "plot size %ux%u, expected 800x500", w, h);
    GZ_CHECK(jget(&j, "error_stats") != NULL && strcmp(jstr(&j, "error_stats"), "null"),
             "error_stats missing from the JSON");
  }

  free(text);
  free(j.kv);
  free(ref);
  free(cnt);
  free(out);
  free(a.inputs);
  {
    int code = gz_test_finish();
    MPI_Finalize();
    return code;
  }
}
