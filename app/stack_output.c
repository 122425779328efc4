/*
 * stack_output.c - what `gzstack stack` writes, all on rank 0:
 *  - the stacked field (-o: .nc, .h5 or .raw by extension) in the input's
 *    type, with the snapshot's dimensions, coordinates, units and variable
 *    attributes, a CF cell_methods entry, the history line and gzstack_*
 *    provenance attributes; points without a valid sample are NaN and the
 *    _FillValue is NaN;
 *  - PNG renders (--png FILE.png): the result; with --verify also
 *    FILE_exact.png (same colour range) and FILE_error.png (diverging map
 *    fixed at +-claimed bound, so any violation saturates); 3-D fields are
 *    rendered as the --slice; masked points grey;
 *  - the error histogram (--stats-png) from the library's error statistics;
 *  - the metrics JSON (--metrics), keys documented in examples/README.md;
 *  - the human summary on stdout.
 * Every file goes through a temporary name and a rename; an existing file is
 * refused without --force (checked before any work).
 */
#define _POSIX_C_SOURCE 200809L /* glob, strtok_r, gmtime_r, isatty, access */
#include "stack_internal.h"

#include "gz_io_commit.h"
#include "gz_render.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"

/* ---- targets ------------------------------------------------------------- */

int gzs_derived_png(const char *png, const char *suffix, char *out, size_t len) {
  size_t n = strlen(png);
  int w;
  if (n >= 4 && !strcasecmp(png + n - 4, ".png"))
    n -= 4;
  w = snprintf(out, len, "%.*s%s.png", (int)n, png, suffix);
  return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

int gzs_check_targets(const gzs_opts_t *o, char *err, size_t errlen) {
  char exact[GZS_PATHLEN] = "", error[GZS_PATHLEN] = "";
  const char *t[6];
  int n = 0;
  if ((o->deflate > 0 || o->nchunks) &&
      gz_io_format_from_path(o->output) != GZ_FMT_NETCDF) {
    snprintf(err, errlen, "%s: %s applies to .nc outputs only", o->output,
             o->deflate > 0 ? "--deflate" : "--chunks");
    return -1;
  }
  t[n++] = o->output;
  if (o->png) {
    t[n++] = o->png;
    if (o->verify) {
      if (gzs_derived_png(o->png, "_exact", exact, sizeof exact) != 0 ||
          gzs_derived_png(o->png, "_error", error, sizeof error) != 0) {
        snprintf(err, errlen, "--png %s: path too long", o->png);
        return -1;
      }
      t[n++] = exact;
      t[n++] = error;
    }
  }
  if (o->metrics)
    t[n++] = o->metrics;
  if (o->stats_png)
    t[n++] = o->stats_png;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) {
      if (!strcmp(t[i], t[k])) {
        snprintf(err, errlen, "%s is named for two outputs", t[i]);
        return -1;
      }
    }
    if (gz_io_check_target(t[i], o->force, err, errlen) != 0)
      return -1;
    if (gz_io_check_folder(t[i], err, errlen) != 0)
      return -1;
  }
  return 0;
}

static void add_written(gzs_run_t *r, const char *path) {
  char **w = realloc(r->written, sizeof(char *) * (size_t)(r->nwritten + 1));
  if (!w)
    return;
  r->written = w;
  if ((w[r->nwritten] = malloc(strlen(path) + 1)) != NULL)
    strcpy(w[r->nwritten++], path);
}

void gzs_remove_written(gzs_run_t *r) {
  for (int i = 0; i < r->nwritten; i++)
    unlink(r->written[i]);
}

/* ---- the 2-D view -------------------------------------------------------- */

static const char *snap_dim_name(const gzs_run_t *r, int d) {
  if (r->has_meta0 && r->meta0.dim_names[d + 1][0])
    return r->meta0.dim_names[d + 1];
  return NULL;
}

static void shape_str(const gzs_run_t *r, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 0; d < r->snap_ndims && n + 24 < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%zu", d ? "x" : "", r->snap_dims[d]);
  if (!r->snap_ndims)
    snprintf(buf, len, "1");
}

const char *gzs_check_png_section(gzs_opts_t *o, const char *v) {
  const char *eq = strchr(v, '=');
  char *end;
  if (!eq || eq == v || (size_t)(eq - v) >= sizeof o->section_axis)
    return "expected AXIS=VALUE, like inline=111, crossline=1200 or time=500";
  memcpy(o->section_axis, v, (size_t)(eq - v));
  o->section_axis[eq - v] = '\0';
  errno = 0;
  o->section_value = strtod(eq + 1, &end);
  if (errno || end == eq + 1 || *end || !isfinite(o->section_value))
    return "the value must be a number (a line number, or a time in the axis' units)";
  if (o->have_slice)
    return "give --slice (by index) or --png-section (by value), not both";
  o->have_section = 1;
  return NULL;
}

/* SEG-Y and RSF results are drawn as seismic sections: time down. */
static int seismic_view(const gzs_run_t *r) {
  return r->files && r->nfiles > 0 &&
         (r->files[0].format == GZ_FMT_SEGY || r->files[0].format == GZ_FMT_RSF);
}

/* --png-section: the dimension and the index of the value; -1 with desc. */
static int section_index(const gzs_opts_t *o, const gzs_run_t *r, int *axis, size_t *sidx,
                         char *desc, size_t desclen) {
  const gz_coord_t *c;
  size_t best = 0;
  *axis = -1;
  for (int d = 0; d < r->snap_ndims; d++)
    if (snap_dim_name(r, d) && !strcasecmp(snap_dim_name(r, d), o->section_axis))
      *axis = d;
  if (*axis < 0) {
    size_t n = (size_t)snprintf(desc, desclen,
                                "--png-section %s: no dimension of that name; the "
                                "result's dimensions are",
                                o->section_text);
    for (int d = 0; d < r->snap_ndims && n < desclen; d++)
      n += (size_t)snprintf(desc + n, desclen - n, " %s",
                            snap_dim_name(r, d) ? snap_dim_name(r, d) : "?");
    return -1;
  }
  c = &r->meta0.coords[*axis + 1];
  if (!c->values || c->count != r->snap_dims[*axis]) { /* no coordinate: an index */
    if (o->section_value < 0 || o->section_value != floor(o->section_value) ||
        o->section_value >= (double)r->snap_dims[*axis]) {
      snprintf(desc, desclen,
               "--png-section %s: %s has no coordinates; give an index 0..%zu",
               o->section_text, o->section_axis, r->snap_dims[*axis] - 1);
      return -1;
    }
    *sidx = (size_t)o->section_value;
    return 0;
  }
  for (size_t i = 1; i < c->count; i++)
    if (fabs(c->values[i] - o->section_value) < fabs(c->values[best] - o->section_value))
      best = i;
  {
    /* the nearest value, within half the spacing around it */
    double step =
        c->count > 1
            ? fabs(c->values[best > 0 ? best : 1] - c->values[best > 0 ? best - 1 : 0])
            : 0;
    if (fabs(c->values[best] - o->section_value) > step / 2) {
      snprintf(desc, desclen, "--png-section %s: no %s %g (%g .. %g)", o->section_text,
               o->section_axis, o->section_value, c->values[0], c->values[c->count - 1]);
      return -1;
    }
  }
  *sidx = best;
  return 0;
}

int gzs_render_view(const gzs_opts_t *o, const gzs_run_t *r, size_t *rows, size_t *cols,
                    size_t **index, char *desc, size_t desclen) {
  int nd = r->snap_ndims, axis = 0, rowd, cold, others[GZ_IO_MAXDIMS], no = 0;
  size_t stride[GZ_IO_MAXDIMS], sidx = 0;
  char shape[256];

  *index = NULL;
  desc[0] = '\0';
  shape_str(r, shape, sizeof shape);
  if (nd == 0) {
    snprintf(desc, desclen,
             "the snapshots are single values: there is nothing to render");
    return -1;
  }
  if (o->have_slice) {
    axis = o->slice_axis;
    if (axis < 0) { /* by name */
      const char *eq = strchr(o->slice_text, '=');
      size_t len = (size_t)(eq - o->slice_text);
      for (int d = 0; d < nd; d++) {
        const char *nm = snap_dim_name(r, d);
        if (nm && strlen(nm) == len && !strncmp(nm, o->slice_text, len))
          axis = d;
      }
      if (axis < 0) {
        size_t n =
            (size_t)snprintf(desc, desclen,
                             "--slice %s: no dimension of that name; the snapshot's "
                             "dimensions are",
                             o->slice_text);
        for (int d = 0; d < nd && n < desclen; d++)
          n += (size_t)snprintf(desc + n, desclen - n, " %d=%s", d,
                                snap_dim_name(r, d) ? snap_dim_name(r, d) : "?");
        return -1;
      }
    }
    if (nd < 3) {
      snprintf(desc, desclen,
               "--slice %s: the snapshots are %d-D (%s); --slice selects a 2-D slice of "
               "a 3-D field",
               o->slice_text, nd, shape);
      return -1;
    }
    if (axis >= nd || (size_t)o->slice_index >= r->snap_dims[axis]) {
      snprintf(desc, desclen, "--slice %s: out of range for snapshots of shape %s",
               o->slice_text, shape);
      return -1;
    }
    sidx = (size_t)o->slice_index;
  } else if (o->have_section) {
    if (nd < 3) {
      snprintf(desc, desclen,
               "--png-section %s: the result is %d-D (%s); --png renders it whole",
               o->section_text, nd, shape);
      return -1;
    }
    if (section_index(o, r, &axis, &sidx, desc, desclen) != 0)
      return -1;
  } else if (nd >= 3) {
    sidx = r->snap_dims[0] / 2;
  }
  stride[nd - 1] = 1;
  for (int d = nd - 2; d >= 0; d--)
    stride[d] = stride[d + 1] * r->snap_dims[d + 1];
  if (nd == 1) {
    *rows = 1;
    *cols = r->snap_dims[0];
    rowd = cold = 0;
  } else if (nd == 2) {
    *rows = r->snap_dims[0];
    *cols = r->snap_dims[1];
    rowd = 0;
    cold = 1;
  } else {
    for (int d = 0; d < nd; d++)
      if (d != axis)
        others[no++] = d;
    rowd = others[no - 2];
    cold = others[no - 1];
    *rows = r->snap_dims[rowd];
    *cols = r->snap_dims[cold];
    if (o->have_section && r->meta0.coords[axis + 1].values)
      snprintf(desc, desclen, "%s=%g", snap_dim_name(r, axis),
               r->meta0.coords[axis + 1].values[sidx]);
    else if (snap_dim_name(r, axis))
      snprintf(desc, desclen, "%s=%zu", snap_dim_name(r, axis), sidx);
    else
      snprintf(desc, desclen, "axis %d=%zu", axis, sidx);
  }
  *index = malloc(sizeof(size_t) * *rows * *cols + 1);
  if (!*index) {
    snprintf(desc, desclen, "out of memory for the render");
    return -1;
  }
  {
    size_t base = nd >= 3 ? sidx * stride[axis] : 0;
    for (size_t i = 0; i < *rows; i++)
      for (size_t j = 0; j < *cols; j++)
        (*index)[i * *cols + j] =
            nd == 1 ? j : base + i * stride[rowd] + j * stride[cold];
  }
  if (seismic_view(r) && nd >= 2 && cold == nd - 1) {
    /* a section: traces across, samples (time) down */
    size_t *t = malloc(sizeof(size_t) * *rows * *cols + 1), n;
    if (!t) {
      free(*index);
      *index = NULL;
      snprintf(desc, desclen, "out of memory for the render");
      return -1;
    }
    for (size_t i = 0; i < *rows; i++)
      for (size_t j = 0; j < *cols; j++)
        t[j * *rows + i] = (*index)[i * *cols + j];
    free(*index);
    *index = t;
    n = *rows;
    *rows = *cols;
    *cols = n;
  }
  return 0;
}

/* Rows stored south to north are drawn with north up. */
static int row_flip(const gzs_run_t *r, int nd) {
  int rowd = nd >= 3 ? -1 : 0;
  const gz_coord_t *c;
  char name[64];
  if (!r->has_meta0 || nd < 2)
    return 0;
  if (nd >= 3) { /* the second-to-last dimension that is not sliced */
    rowd = nd - 2;
  }
  for (size_t i = 0; i < sizeof name; i++) {
    name[i] = (char)tolower((unsigned char)r->meta0.dim_names[rowd + 1][i]);
    if (!name[i])
      break;
  }
  name[sizeof name - 1] = '\0';
  c = &r->meta0.coords[rowd + 1];
  if (c->values && c->count >= 2) {
    int lat = !strncmp(name, "lat", 3) || strstr(c->units, "north") != NULL;
    return lat && c->values[c->count - 1] > c->values[0];
  }
  return !strncmp(name, "south_north", 11) || !strncmp(name, "lat", 3);
}

/* ---- verification metrics ------------------------------------------------ */

static double out_value(const gzs_run_t *r, size_t i) {
  return r->dtype == GZ_FLOAT32 ? (double)((const float *)r->out)[i]
                                : ((const double *)r->out)[i];
}

static unsigned char *make_mask(const gzs_run_t *r) {
  unsigned char *m;
  if (!r->counts)
    return NULL;
  if ((m = malloc(r->npoints + 1)) != NULL)
    for (size_t i = 0; i < r->npoints; i++)
      m[i] = r->counts[i] == 0;
  return m;
}

void gzs_verify_metrics(const gzs_opts_t *o, gzs_run_t *r) {
  size_t M = r->npoints, rows, cols, *index = NULL;
  double *approx = malloc(sizeof(double) * M + 1);
  unsigned char *mask = make_mask(r);
  char desc[256];

  r->ssim = NAN;
  r->within = 0;
  if (!approx)
    goto done;
  for (size_t i = 0; i < M; i++)
    approx[i] = out_value(r, i);
  gz_quality_compute(r->exact_result, approx, mask, M, &r->q);
  r->within = r->q.max_abs_error <= r->claimed && r->q.nonfinite_mismatch == 0;

  /* SSIM on the 2-D field or the rendered slice */
  if (r->snap_ndims >= 1 &&
      gzs_render_view(o, r, &rows, &cols, &index, desc, sizeof desc) == 0 && rows > 1) {
    double *e = malloc(sizeof(double) * rows * cols + 1);
    double *a = malloc(sizeof(double) * rows * cols + 1);
    unsigned char *m = malloc(rows * cols + 1);
    if (e && a && m) {
      for (size_t k = 0; k < rows * cols; k++) {
        e[k] = r->exact_result[index[k]];
        a[k] = approx[index[k]];
        m[k] = mask ? mask[index[k]] : 0;
      }
      r->ssim = gz_ssim_2d(e, a, m, rows, cols);
    }
    free(e);
    free(a);
    free(m);
  }
  free(index);

  /* error statistics of the compressed allreduce (on the reduced values);
   * --reproducible: of N quantizations of step h per point (one for max /
   * min) */
  if ((r->compressed && r->quant_bound > 0 && !o->reproducible) ||
      (o->reproducible && r->repro_step > 0 && !r->any_mask)) {
    gz_error_stats_params_t p = GZ_ERROR_STATS_PARAMS_INIT;
    const double *ref = r->have_scatter ? r->exact_part : r->exact;
    p.kind = o->op == GZS_OP_MAX   ? GZ_STATS_MAX
             : o->op == GZS_OP_MIN ? GZ_STATS_MIN
                                   : GZ_STATS_SUM;
    p.eb = o->reproducible ? r->repro_step / 2 : r->quant_bound;
    p.nq = !o->reproducible         ? (unsigned)r->size
           : p.kind == GZ_STATS_SUM ? (unsigned)(o->key_text ? r->c_max : r->nsnap)
                                    : 1u;
    p.scale = 1.0;
    if (ref && gz_error_stats(&p, ref, r->reduced, mask, M, &r->stats) == GZ_OK) {
      r->have_stats = 1;
      if (gz_error_stats_summary(&r->stats, r->stats_line, sizeof r->stats_line) != GZ_OK)
        r->stats_line[sizeof r->stats_line - 1] = '\0';
    }
  }
done:
  free(approx);
  free(mask);
}

/* ---- output file --------------------------------------------------------- */

static void drop_attr(gz_meta_t *m, const char *name) {
  for (size_t i = 0; i < m->nattrs; i++) {
    if (!strcmp(m->attrs[i].name, name)) {
      free(m->attrs[i].text);
      free(m->attrs[i].values);
      memmove(&m->attrs[i], &m->attrs[i + 1], sizeof(gz_attr_t) * (m->nattrs - i - 1));
      m->nattrs--;
      return;
    }
  }
}

/* The date of the history line: now, or SOURCE_DATE_EPOCH (seconds since
 * 1970, the reproducible-builds convention) when set, so that files
 * written by --reproducible runs can be identical to the byte. */
static time_t history_time(void) {
  const char *s = getenv("SOURCE_DATE_EPOCH");
  char *end;
  long long v;
  if (!s || !*s)
    return time(NULL);
  errno = 0;
  v = strtoll(s, &end, 10);
  return errno || *end || v < 0 ? time(NULL) : (time_t)v;
}

static int build_meta(const gzs_opts_t *o, const gzs_run_t *r, gz_meta_t *m) {
  char buf[8192], when[64];
  const gz_attr_t *a;
  time_t now = history_time();
  struct tm tmv;
  int rc = 0;

  gz_meta_init(m);
  if (r->has_meta0 && gz_meta_copy(m, &r->meta0) != 0)
    return -1;
  if (r->ngroups) { /* one value per group along the record dimension */
    m->ndims = r->snap_ndims + 1;
    m->dims[0] = r->ngroups;
    for (int d = 0; d < r->snap_ndims; d++)
      m->dims[d + 1] = r->snap_dims[d];
    if (gz_meta_set_coord(m, 0, NULL, NULL, r->have_gtime ? r->gtime : NULL,
                          r->have_gtime ? r->ngroups : 0) != 0)
      return -1;
  } else { /* drop the record dimension */
    free(m->coords[0].values);
    for (int d = 0; d + 1 < GZ_IO_MAXDIMS; d++) {
      m->dims[d] = m->dims[d + 1];
      memcpy(m->dim_names[d], m->dim_names[d + 1], sizeof m->dim_names[d]);
      m->coords[d] = m->coords[d + 1];
    }
    memset(&m->coords[GZ_IO_MAXDIMS - 1], 0, sizeof m->coords[0]);
    m->ndims = r->snap_ndims;
    for (int d = 0; d < r->snap_ndims; d++)
      m->dims[d] = r->snap_dims[d];
    if (m->ndims == 0) {
      m->ndims = 1;
      m->dims[0] = 1;
      snprintf(m->dim_names[0], sizeof m->dim_names[0], "value");
    }
  }
  m->dtype = r->dtype;
  m->has_scale = 0;
  m->scale_factor = 1;
  m->add_offset = 0;
  m->has_fill = 1;
  m->fill_value = NAN;
  drop_attr(m, "actual_range");
  drop_attr(m, "missing_value");
  drop_attr(m, "_FillValue");
  /* valid_*: a sum or a spread is not an input value, and a result within
   * e > 0 of the exact one can lie outside the inputs' valid range, where
   * readers (cdo) would take it for missing */
  if (o->e > 0 || o->op == GZS_OP_SUM ||
      (gzs_op_is_moment(o->op) && o->op != GZS_OP_RMS)) {
    drop_attr(m, "valid_range");
    drop_attr(m, "valid_min");
    drop_attr(m, "valid_max");
  }

  /* CF cell_methods: "<record dim>: mean" appended to any existing one */
  {
    char method[256];
    a = gz_meta_find_attr(m, "cell_methods");
    gzs_cell_method(
        o, r->has_meta0 && r->meta0.dim_names[0][0] ? r->meta0.dim_names[0] : "record",
        method, sizeof method);
    snprintf(buf, sizeof buf, "%s%s%s", a && a->is_text ? a->text : "",
             a && a->is_text && method[0] ? " " : "", method);
  }
  if (buf[0])
    rc |= gz_meta_add_attr_text(m, "cell_methods", buf);

  /* history: this run first, then the input's */
  gmtime_r(&now, &tmv);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  a = gz_meta_find_global(m, "history");
  snprintf(buf, sizeof buf, "%s: %s%s%s", when,
           o->command_line ? o->command_line : "gzstack", a && a->is_text ? "\n" : "",
           a && a->is_text ? a->text : "");
  rc |= gz_meta_add_global_text(m, "history", buf);
  rc |= gz_meta_add_global_text(m, "gzstack_version",
                                GZ_VERSION " (git " GZ_GIT_REVISION ")");
  rc |= gz_meta_add_global_text(m, "gzstack_command",
                                o->command_line ? o->command_line : "gzstack");
  rc |= gz_meta_add_global_text(m, "gzstack_operation", gzs_op_name(o->op));
  rc |= gz_meta_add_global_number(m, "gzstack_snapshots",
                                  (double)(o->key_text ? r->key_traces : r->nsnap));
  if (r->ngroups) {
    char g[64];
    if (o->running > 0)
      snprintf(g, sizeof g, "running %.0f", o->running);
    else if (o->ensemble)
      snprintf(g, sizeof g, "ensemble");
    else
      snprintf(g, sizeof g, "%s", o->group_text ? o->group_text : "");
    rc |= gz_meta_add_global_text(m, "gzstack_group", g);
    rc |= gz_meta_add_global_number(m, "gzstack_groups", (double)r->ngroups);
  }
  if (!o->reproducible) /* the same bytes at any rank count: no rank count */
    rc |= gz_meta_add_global_number(m, "gzstack_ranks", (double)r->size);
  else
    rc |= gz_meta_add_global_number(m, "gzstack_grid_step", r->repro_step);
  rc |= gz_meta_add_global_number(m, "gzstack_error_bound", o->e);
  rc |= gz_meta_add_global_text(m, "gzstack_eb_mode", gz_eb_mode_name(o->eb_mode));
  rc |= gz_meta_add_global_number(m, "gzstack_error_bound_abs", r->e_abs);
  rc |= gz_meta_add_global_text(m, "gzstack_bound_policy", gz_bound_name(o->bound));
  rc |= gz_meta_add_global_number(m, "gzstack_claimed_bound", r->claimed);
  rc |=
      gz_meta_add_global_text(m, "gzstack_algorithm",
                              o->reproducible ? "reproducible: exact sums of int64 codes"
                              : r->algo_name  ? r->algo_name
                                              : "");
  rc |= gz_meta_add_global_text(m, "gzstack_read", o->read_root ? "root" : "parallel");
  rc |= gz_meta_add_global_number(m, "gzstack_masked_points", (double)r->masked_points);
  if (o->segy_ibm)
    rc |= gz_meta_add_global_text(m, "segy_output_format", "ibm");
  {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < o->ninputs && n + 8 < sizeof buf; i++)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", o->inputs[i]);
    rc |= gz_meta_add_global_text(m, "gzstack_inputs", buf);
  }
  return rc ? -1 : 0;
}

void gzs_claim_ibm(const gzs_opts_t *o, gzs_run_t *r, double result_max) {
  r->ibm_term =
      o->segy_ibm ? gzs_bound_ibm(result_max + r->stage_bound + r->f32_term) : 0;
  r->claimed += r->ibm_term;
}

const char *gzs_check_segy_format(gzs_opts_t *o, const char *v) {
  (void)v;
  if (o->segy_ibm && (!o->output || gz_io_format_from_path(o->output) != GZ_FMT_SEGY))
    return "IBM samples are for a SEG-Y output (-o FILE.sgy)";
  return NULL;
}

int gzs_write_output(const gzs_opts_t *o, gzs_run_t *runs, int nruns, char *err,
                     size_t errlen) {
  gzs_run_t *r = &runs[0];
  gz_meta_t *m = calloc((size_t)nruns + 1, sizeof(gz_meta_t));
  const gz_meta_t **metas = calloc((size_t)nruns + 1, sizeof(gz_meta_t *));
  const void **datas = calloc((size_t)nruns + 1, sizeof(void *));
  int rc = -1, built = 0;
  gzs_progress(o, r, 0, "writing %s", o->output);
  if (!m || !metas || !datas)
    goto oom;
  for (built = 0; built < nruns; built++) {
    gzs_run_t *rk = &runs[built];
    if (build_meta(o, rk, &m[built]) != 0 ||
        (nruns > 1 && gz_meta_add_attr_numbers(&m[built], "gzstack_claimed_bound",
                                               &rk->claimed, 1) != 0)) {
      built++;
      goto oom;
    }
    metas[built] = &m[built];
    datas[built] = rk->ngroups ? rk->gout : rk->out;
  }
  if (gz_io_format_from_path(o->output) == GZ_FMT_NETCDF) {
    /* CF: the input's coordinate attributes, time or climatology bounds */
    gz_cf_extra_t x = {NULL, NULL, 0, 0, 0, NULL, 0};
    x.deflate = (int)o->deflate;
    x.shuffle = o->shuffle;
    x.chunks = o->chunks;
    x.nchunks = o->nchunks;
    x.source = r->files[0].format == GZ_FMT_NETCDF ? o->inputs[0] : NULL;
    /* (ensemble members keep the first input's time, with its own bounds) */
    if (r->ngroups && r->have_gtime && (!o->ensemble || r->gbnd_own)) {
      x.bounds = r->gbnd;
      x.climatology =
          o->group_kind == GZS_GROUP_MONTH || o->group_kind == GZS_GROUP_SEASON;
    }
    rc = gz_io_write_netcdf_cf(o->output, metas, datas, nruns, &x, o->force, err, errlen);
  } else {
    rc = gz_io_write(o->output, gz_io_format_from_path(o->output), metas[0], datas[0],
                     o->force, err, errlen);
  }
  if (rc == 0)
    add_written(r, o->output);
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory for the metadata", o->output);
done:
  for (int k = 0; m && k < built; k++)
    gz_meta_free(&m[k]);
  free(m);
  free(metas);
  free(datas);
  return rc;
}

/* ---- renders ------------------------------------------------------------- */

/* The rendered picture: the view's values, binned along an axis that is
 * more than 4 times longer than the other (a 96 x 2048 shot gather becomes
 * 96 x 342): the mean of the valid values of a bin for fields, the value
 * of largest magnitude for error maps (so that a violation still
 * saturates). A bin without valid values is masked. */
typedef struct picture {
  double *v;
  unsigned char *m;
  size_t rows, cols, kr, kc;
} picture_t;

static int picture_make(picture_t *p, const double *field, const size_t *index,
                        const unsigned char *mask, size_t rows, size_t cols, int maxabs) {
  size_t kr = rows > 4 * cols ? (rows + 4 * cols - 1) / (4 * cols) : 1;
  size_t kc = cols > 4 * rows ? (cols + 4 * rows - 1) / (4 * rows) : 1;
  p->rows = (rows + kr - 1) / kr;
  p->cols = (cols + kc - 1) / kc;
  p->kr = kr;
  p->kc = kc;
  p->v = malloc(sizeof(double) * p->rows * p->cols + 1);
  p->m = malloc(p->rows * p->cols + 1);
  if (!p->v || !p->m)
    return -1;
  for (size_t i = 0; i < p->rows; i++) {
    for (size_t j = 0; j < p->cols; j++) {
      double sum = 0, best = NAN;
      size_t n = 0;
      for (size_t a = i * kr; a < (i + 1) * kr && a < rows; a++) {
        for (size_t b = j * kc; b < (j + 1) * kc && b < cols; b++) {
          size_t k = index[a * cols + b];
          double x = field[k];
          if ((mask && mask[k]) || !isfinite(x))
            continue;
          sum += x;
          if (!(fabs(x) <= fabs(best)))
            best = x;
          n++;
        }
      }
      p->v[i * p->cols + j] = n == 0 ? NAN : maxabs ? best : sum / (double)n;
      p->m[i * p->cols + j] = n == 0;
    }
  }
  return 0;
}

static void picture_free(picture_t *p) {
  free(p->v);
  free(p->m);
  p->v = NULL;
  p->m = NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Signed, heavy-tailed data (seismic amplitudes decaying with time): clip
 * the symmetric colour range at the 98th percentile of |v| when that is
 * less than half the maximum. Returns the clip, or 0 for the full range. */
static double signed_clip(const picture_t *p) {
  size_t n = 0, N = p->rows * p->cols;
  double *a = malloc(sizeof(double) * N + 1), lo = INFINITY, hi = -INFINITY, clip = 0;
  if (!a)
    return 0;
  for (size_t i = 0; i < N; i++) {
    if (p->m[i])
      continue;
    lo = p->v[i] < lo ? p->v[i] : lo;
    hi = p->v[i] > hi ? p->v[i] : hi;
    a[n++] = fabs(p->v[i]);
  }
  if (n >= 100 && lo < 0 && hi > 0) {
    qsort(a, n, sizeof(double), cmp_double);
    clip = a[(size_t)(0.98 * (double)(n - 1))];
    if (!(clip > 0 && clip < 0.5 * a[n - 1]))
      clip = 0;
  }
  free(a);
  return clip;
}

/* Render k of the run (0 result, 1 exact, 2 error) to path and note it. */
static int render_pic(gzs_run_t *r, int k, const char *path, const picture_t *p,
                      const gz_render_opts_t *ro, int force, gz_render_layout_t *layout,
                      char *err, size_t errlen) {
  if (gz_render_field_ex(path, p->v, p->m, p->rows, p->cols, ro, force, layout, err,
                         errlen) != 0)
    return -1;
  add_written(r, path);
  r->png_w[k] = layout->width;
  r->png_h[k] = layout->height;
  r->nrenders = k + 1;
  return 0;
}

static int stats_plot(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen) {
  enum { NB = 61, NP = 241 };
  double dens[NB], x[NP], fit[NP], paper[NP], pred[NP];
  gz_error_hist_t h;
  gz_plot_curve_t c[3];
  gz_plot_t p;
  char title[256];
  const double *ref = r->have_scatter ? r->exact_part : r->exact;
  unsigned char *mask = make_mask(r);
  gz_result_t grc;
  int rc;

  memset(&h, 0, sizeof h);
  h.nbins = NB;
  h.density = dens;
  h.npoints = NP;
  h.x = x;
  h.pdf_fit = fit;
  h.pdf_paper = paper;
  h.pdf_pred = pred;
  grc = gz_error_stats_histogram(&r->stats, ref, r->reduced, mask, r->npoints, &h);
  free(mask);
  if (grc != GZ_OK) {
    snprintf(err, errlen, "%s: error histogram: %s", o->stats_png, gz_strerror(grc));
    return -1;
  }
  memset(c, 0, sizeof c);
  c[0] = (gz_plot_curve_t){x, fit, NP, {0, 0, 0}, "normal fit"};
  c[1] = (gz_plot_curve_t){x, paper, NP, {214, 39, 40}, "paper: N(0, (eb/3)^2 P)"};
  c[2] = (gz_plot_curve_t){x, pred, NP, {31, 119, 180}, "quantizer: sum of U(-eb, eb)"};
  snprintf(title, sizeof title, "allreduce error (%s of %d quantizations, eb %.3g)",
           o->op == GZS_OP_MAX || o->op == GZS_OP_MIN ? gzs_op_name(o->op) : "sum",
           r->size, r->quant_bound);
  memset(&p, 0, sizeof p);
  p.title = title;
  p.xlabel = "error of the reduced value (approx - exact)";
  p.ylabel = "density";
  p.x0 = h.x0;
  p.x1 = h.x1;
  p.hist = dens;
  p.nbins = NB;
  p.curves = c;
  p.ncurves = 3;
  rc = gz_render_plot(o->stats_png, &p, o->force, err, errlen);
  if (rc == 0)
    add_written(r, o->stats_png);
  return rc;
}

/* Group k's field (from the output type) and its mask (NaN: no data). */
static void group_field(const gzs_run_t *r, size_t k, double *field,
                        unsigned char *mask) {
  size_t M = r->npoints;
  for (size_t i = 0; i < M; i++) {
    field[i] = r->dtype == GZ_FLOAT32 ? (double)((const float *)r->gout)[k * M + i]
                                      : ((const double *)r->gout)[k * M + i];
    mask[i] = isnan(field[i]);
  }
}

/* Group k's name in a title: its time stamp's date, or its number. */
static void group_label(const gzs_run_t *r, size_t k, char *buf, size_t len) {
  gzs_time_axis_t ax;
  char why[256];
  long long y;
  int m;
  snprintf(buf, len, "group %zu of %zu", k + 1, r->ngroups);
  if (r->have_gtime && r->has_meta0 &&
      gzs_time_axis(r->meta0.coords[0].units, r->meta0.coords[0].calendar, &ax, why,
                    sizeof why) == 0 &&
      gzs_time_date(&ax, r->gtime[k], &y, &m) == 0)
    snprintf(buf + strlen(buf), len - strlen(buf), ", time %04lld-%02d", y, m);
}

/* --png --verify with groups: group k's exact field (FILE_gK_exact.png, the
 * colour scale of the results) and its error, stack - exact
 * (FILE_gK_error.png, colours at +- the group's claimed bound). */
static int group_verify_pngs(const gzs_opts_t *o, gzs_run_t *r, size_t k,
                             const size_t *index, size_t rows, size_t cols,
                             const char *what, const gz_render_opts_t *ro, int width,
                             char *err, size_t errlen) {
  size_t M = r->npoints;
  double *field = malloc(sizeof(double) * M + 1), *diff = malloc(sizeof(double) * M + 1);
  unsigned char *mask = malloc(M + 1);
  char path[GZS_PATHLEN], suffix[48], label[128], title[1024];
  picture_t pic = {0};
  gz_render_opts_t re = *ro;
  gz_render_layout_t lay;
  int rc = -1;
  if (!field || !diff || !mask) {
    snprintf(err, errlen, "--png %s: out of memory", o->png);
    goto done;
  }
  group_field(r, k, field, mask);
  for (size_t i = 0; i < M; i++)
    diff[i] = field[i] - r->gexact[k * M + i];
  group_label(r, k, label, sizeof label);
  for (int j = 0; j < 2; j++) {
    if (j == 0) {
      snprintf(title, sizeof title, "exact %s (plain MPI, double), %s: %s",
               gzs_op_name(o->op), label, what);
    } else {
      re.cmap = GZ_CMAP_DIVERGING;
      re.fixed_range = 1;
      re.vmax = r->gclaim[k] > 0 ? r->gclaim[k] : DBL_MIN;
      re.vmin = -re.vmax;
      snprintf(title, sizeof title,
               "error (stack - exact), colours at +-bound %.3g, %s: %s", r->gclaim[k],
               label, what);
    }
    re.title = title;
    if (picture_make(&pic, j ? diff : r->gexact + k * M, index, mask, rows, cols, j) !=
        0) {
      snprintf(err, errlen, "--png %s: out of memory", o->png);
      goto done;
    }
    snprintf(suffix, sizeof suffix, "_g%0*zu%s", width, k + 1, j ? "_error" : "_exact");
    if (gzs_derived_png(o->png, suffix, path, sizeof path) != 0 ||
        gz_render_field_ex(path, pic.v, pic.m, pic.rows, pic.cols, &re, o->force, &lay,
                           err, errlen) != 0)
      goto done;
    add_written(r, path);
    picture_free(&pic);
    r->png_w[1 + j] = lay.width;
    r->png_h[1 + j] = lay.height;
    r->nrenders = 3;
  }
  rc = 0;
done:
  picture_free(&pic);
  free(field);
  free(diff);
  free(mask);
  return rc;
}

/* --png with --group / --running / --ensemble: every group, FILE_gK.png (K
 * from 1, as wide as the last), on one colour scale so that the groups
 * compare; paths are checked before any is drawn. */
static int group_pngs(const gzs_opts_t *o, gzs_run_t *r, const size_t *index, size_t rows,
                      size_t cols, const char *what, gz_render_opts_t *ro, char *err,
                      size_t errlen) {
  size_t M = r->npoints, G = r->ngroups;
  double *field = malloc(sizeof(double) * M + 1), lo = INFINITY, hi = -INFINITY, clip = 0;
  unsigned char *mask = malloc(M + 1);
  char path[GZS_PATHLEN], suffix[32], label[128], title[1024];
  int width = snprintf(NULL, 0, "%zu", G), rc = -1;
  picture_t pic = {0};
  gz_render_layout_t lay;
  if (!field || !mask)
    goto oom;
  for (size_t k = 0; k < G; k++) { /* the common range, the targets */
    group_field(r, k, field, mask);
    if (picture_make(&pic, field, index, mask, rows, cols, 0) != 0)
      goto oom;
    for (size_t i = 0; i < pic.rows * pic.cols; i++)
      if (!pic.m[i]) {
        lo = pic.v[i] < lo ? pic.v[i] : lo;
        hi = pic.v[i] > hi ? pic.v[i] : hi;
      }
    clip = fmax(clip, signed_clip(&pic));
    picture_free(&pic);
    snprintf(suffix, sizeof suffix, "_g%0*zu", width, k + 1);
    if (gzs_derived_png(o->png, suffix, path, sizeof path) != 0) {
      snprintf(err, errlen, "--png %s: path too long", o->png);
      goto done;
    }
    if (gz_io_check_target(path, o->force, err, errlen) != 0)
      goto done;
    for (int j = 0; r->gexact && j < 2; j++) { /* --verify: its exact and error maps */
      snprintf(suffix, sizeof suffix, "_g%0*zu%s", width, k + 1, j ? "_error" : "_exact");
      if (gzs_derived_png(o->png, suffix, path, sizeof path) != 0) {
        snprintf(err, errlen, "--png %s: path too long", o->png);
        goto done;
      }
      if (gz_io_check_target(path, o->force, err, errlen) != 0)
        goto done;
    }
  }
  ro->fixed_range = hi > lo;
  ro->vmin = clip > 0 ? -clip : lo;
  ro->vmax = clip > 0 ? clip : hi;
  if (clip > 0)
    ro->cmap = GZ_CMAP_DIVERGING;
  for (size_t k = 0; k < G; k++) {
    group_field(r, k, field, mask);
    if (picture_make(&pic, field, index, mask, rows, cols, 0) != 0)
      goto oom;
    group_label(r, k, label, sizeof label);
    snprintf(title, sizeof title, "%s, %s: %s", gzs_op_name(o->op), label, what);
    ro->title = title;
    snprintf(suffix, sizeof suffix, "_g%0*zu", width, k + 1);
    if (gzs_derived_png(o->png, suffix, path, sizeof path) != 0 ||
        gz_render_field_ex(path, pic.v, pic.m, pic.rows, pic.cols, ro, o->force, &lay,
                           err, errlen) != 0)
      goto done;
    add_written(r, path);
    picture_free(&pic);
    r->png_w[0] = lay.width;
    r->png_h[0] = lay.height;
    r->nrenders = 1;
    r->render_scale = lay.scale;
    if (r->gexact &&
        group_verify_pngs(o, r, k, index, rows, cols, what, ro, width, err, errlen) != 0)
      goto done;
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "--png %s: out of memory", o->png);
done:
  picture_free(&pic);
  free(field);
  free(mask);
  return rc;
}

int gzs_write_pngs(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen) {
  size_t rows, cols, *index = NULL;
  char desc[256], title[1024], what[600], label[300], path[GZS_PATHLEN], bins[64] = "";
  const char *var = r->has_meta0 && r->meta0.var[0] ? r->meta0.var : "data";
  /* a dimensionless "1" says nothing on a colour bar */
  const char *units = r->has_meta0 && r->meta0.units[0] && strcmp(r->meta0.units, "1")
                          ? r->meta0.units
                          : "";
  unsigned char *mask = NULL;
  double *diff = NULL, clip;
  picture_t pic = {0}, pex = {0}, per = {0};
  gz_render_opts_t ro = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t lay;
  int rc = -1;

  if (o->stats_png && r->have_stats && stats_plot(o, r, err, errlen) != 0)
    return -1;
  if (o->stats_png && !r->have_stats && !o->quiet)
    fprintf(stderr,
            "gzstack stack: --stats-png: the allreduce ran uncompressed (%s); no "
            "error statistics to plot\n",
            r->algo_reason);
  if (!o->png)
    return 0;
  if (gzs_render_view(o, r, &rows, &cols, &index, desc, sizeof desc) != 0) {
    snprintf(err, errlen, "--png %s: %s", o->png, desc);
    return -1;
  }
  mask = make_mask(r);
  if ((r->counts && !mask) ||
      picture_make(&pic, r->result, index, mask, rows, cols, 0) != 0)
    goto oom;
  if (pic.kr > 1 || pic.kc > 1)
    snprintf(bins, sizeof bins, ", %s binned by %zu", pic.kr > 1 ? "rows" : "columns",
             pic.kr > 1 ? pic.kr : pic.kc);
  snprintf(what, sizeof what, "%s%s%s%s%s", var, desc[0] ? " [" : "", desc,
           desc[0] ? "]" : "", bins);
  ro.title = title;
  ro.label = label;
  ro.flip_vertical = seismic_view(r) ? 0 : row_flip(r, r->snap_ndims);
  snprintf(label, sizeof label, "%s", units);
  if (seismic_view(r)) /* amplitudes: white at zero, symmetric */
    ro.cmap = GZ_CMAP_DIVERGING;
  if ((clip = signed_clip(&pic)) > 0) {
    ro.cmap = GZ_CMAP_DIVERGING;
    ro.fixed_range = 1;
    ro.vmin = -clip;
    ro.vmax = clip;
    snprintf(label, sizeof label, "%s%scolours clipped at the 98th percentile of |value|",
             units, units[0] ? ", " : "");
  }
  if (o->key_text)
    snprintf(title, sizeof title, "%s by %s of %llu traces: %s", gzs_op_name(o->op),
             o->key_text, (unsigned long long)r->key_traces, what);
  else
    snprintf(title, sizeof title, "%s of %llu snapshots: %s", gzs_op_name(o->op),
             (unsigned long long)r->nsnap, what);
  if (r->ngroups > 1) { /* every group, one colour scale; --verify: its maps too */
    r->view_rows = rows;
    r->view_cols = cols;
    snprintf(r->view_desc, sizeof r->view_desc, "%s", desc);
    rc = group_pngs(o, r, index, rows, cols, what, &ro, err, errlen);
    goto done;
  }
  if (render_pic(r, 0, o->png, &pic, &ro, o->force, &lay, err, errlen) != 0)
    goto done;
  r->view_rows = rows;
  r->view_cols = cols;
  r->bin_rows = pic.kr;
  r->bin_cols = pic.kc;
  r->render_scale = lay.scale;
  snprintf(r->view_desc, sizeof r->view_desc, "%s", desc);

  if (o->verify && r->exact_result) {
    gz_render_opts_t re = ro;
    gz_render_layout_t l2;
    re.scale = lay.scale; /* the three pictures at the same magnification */
    re.cmap = lay.cmap;
    re.fixed_range = lay.vmax > lay.vmin;
    re.vmin = lay.vmin;
    re.vmax = lay.vmax;
    snprintf(title, sizeof title, "exact %s (plain MPI, double): %s", gzs_op_name(o->op),
             what);
    if (picture_make(&pex, r->exact_result, index, mask, rows, cols, 0) != 0)
      goto oom;
    if (gzs_derived_png(o->png, "_exact", path, sizeof path) != 0 ||
        render_pic(r, 1, path, &pex, &re, o->force, &l2, err, errlen) != 0)
      goto done;

    if (!(diff = malloc(sizeof(double) * r->npoints + 1)))
      goto oom;
    for (size_t i = 0; i < r->npoints; i++)
      diff[i] = out_value(r, i) - r->exact_result[i];
    if (picture_make(&per, diff, index, mask, rows, cols, 1) != 0)
      goto oom;
    re.cmap = GZ_CMAP_DIVERGING;
    re.fixed_range = 1;
    re.vmax = r->claimed > 0 ? r->claimed : DBL_MIN;
    re.vmin = -re.vmax;
    re.label = units;
    snprintf(title, sizeof title, "error (stack - exact), colours at +-bound %.3g: %s%s",
             r->claimed, var, bins[0] ? " (largest |error| per bin)" : "");
    if (gzs_derived_png(o->png, "_error", path, sizeof path) != 0 ||
        render_pic(r, 2, path, &per, &re, o->force, &l2, err, errlen) != 0)
      goto done;
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "--png %s: out of memory", o->png);
done:
  picture_free(&pic);
  picture_free(&pex);
  picture_free(&per);
  free(index);
  free(mask);
  free(diff);
  return rc;
}
/* ---- metrics JSON -------------------------------------------------------- */

int gzs_write_metrics(const gzs_opts_t *o, gzs_run_t *r, char *err, size_t errlen) {
  char tmp[GZS_PATHLEN + 64], shape[256], path[GZS_PATHLEN], stats[4096];
  gz_json_t j;
  FILE *f;
  int ok;
  double ratio = r->bytes_sent ? (double)r->bytes_raw / (double)r->bytes_sent : NAN;

  if (gz_io_temp_path(o->metrics, tmp, sizeof tmp) != 0) {
    snprintf(err, errlen, "%s: path too long", o->metrics);
    return -1;
  }
  if (!(f = fopen(tmp, "w"))) {
    snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    return -1;
  }
  shape_str(r, shape, sizeof shape);
  gz_json_begin(&j, f);
  gz_json_string(&j, "tool", "gzstack stack");
  gz_json_string(&j, "gzstack_version", GZ_VERSION);
  gz_json_string(&j, "git_revision", GZ_GIT_REVISION);
  gz_json_string(&j, "command", o->command_line ? o->command_line : "");
  gzs_opts_json(o, &j);

  gz_json_object(&j, "input");
  gz_json_number(&j, "files", o->ninputs);
  gz_json_string(&j, "variable", r->has_meta0 ? r->meta0.var : "");
  gz_json_string(&j, "units", r->has_meta0 ? r->meta0.units : "");
  gz_json_string(&j, "dtype", r->dtype == GZ_FLOAT32 ? "f32" : "f64");
  gz_json_string(&j, "shape", shape);
  gz_json_number(&j, "snapshots", (double)r->nsnap);
  gz_json_number(&j, "points", (double)r->npoints);
  gz_json_number(&j, "value_min", r->lo);
  gz_json_number(&j, "value_max", r->hi);
  gz_json_end_object(&j);

  gz_json_number(&j, "ranks", r->size);
  gz_json_number(&j, "snapshots", (double)r->nsnap);
  gz_json_string(&j, "op", gzs_op_name(o->op));
  gz_json_string(&j, "read", o->read_root ? "root" : "parallel");
  gz_json_string(&j, "algorithm", r->algo_name ? r->algo_name : "");
  gz_json_string(&j, "algorithm_reason", r->algo_reason);
  gz_json_bool(&j, "compressed", r->compressed);
  gz_json_bool(&j, "reproducible", o->reproducible);
  if (o->reproducible) /* the grid every input value was quantized on */
    gz_json_number(&j, "grid_step", r->repro_step);
  /* cost model (libgzcoll): predicted and measured seconds of the allreduce */
  gz_json_number(&j, "allreduce_predicted_s", r->ar.predicted_seconds);
  gz_json_number(&j, "allreduce_measured_s", r->ar.measured_seconds);
  if (r->have_scatter) {
    gz_json_object(&j, "scatter");
    gz_json_string(&j, "algorithm", r->sc.algo);
    gz_json_bool(&j, "compressed", r->sc.compressed);
    gz_json_string(&j, "reason", r->sc.reason);
    gz_json_end_object(&j);
  }
  gz_json_number(&j, "compression_ratio", ratio);
  gz_json_number(&j, "bytes_raw", (double)r->bytes_raw);
  gz_json_number(&j, "bytes_sent", (double)r->bytes_sent);

  gz_json_object(&j, "mask");
  gz_json_bool(&j, "any", r->any_mask);
  gz_json_number(&j, "masked_points", (double)r->masked_points);
  gz_json_number(&j, "min_count", r->c_min);
  gz_json_number(&j, "max_count", r->c_max);
  gz_json_end_object(&j);

  gz_json_object(&j, "bound");
  gz_json_string(&j, "policy", gz_bound_name(o->bound));
  gz_json_string(&j, "eb_mode", gz_eb_mode_name(o->eb_mode));
  gz_json_number(&j, "error_bound", o->e);
  gz_json_number(&j, "error_bound_abs", r->e_abs);
  gz_json_number(&j, "allreduce_budget", r->e_allreduce);
  gz_json_number(&j, "quant_bound", r->quant_bound);
  gz_json_number(&j, "allreduce_result_bound", r->ar_bound);
  if (r->have_scatter) {
    gz_json_number(&j, "scatter_budget", r->e_scatter);
    gz_json_number(&j, "scatter_result_bound", r->sc_bound);
  }
  gz_json_number(&j, "stage_bound", r->stage_bound);
  gz_json_number(&j, "float32_rounding", r->f32_term);
  gz_json_number(&j, "claimed", r->claimed);
  gz_json_end_object(&j);

  /* rank 0's parts (it also writes and renders), adding up to its total */
  gz_json_object(&j, "time");
  gz_json_number(&j, "total", r->t.total);
  gz_json_number(&j, "startup", r->t.startup);
  gz_json_number(&j, "scan", r->t.scan);
  gz_json_number(&j, "read", r->t.read);
  gz_json_number(&j, "accumulate", r->t.accumulate);
  gz_json_number(&j, "setup", r->t.setup);
  gz_json_number(&j, "compress", r->t.compress);
  gz_json_number(&j, "communicate", r->t.communicate);
  gz_json_number(&j, "result", r->t.result);
  gz_json_number(&j, "verify", r->t.reference);
  gz_json_number(&j, "write", r->t.write);
  gz_json_number(&j, "render", r->t.render);
  gz_json_number(&j, "finish", r->t.finish);
  gz_json_end_object(&j);

  gz_json_object(&j, "memory");
  gz_json_number(&j, "peak_rss_bytes", r->peak_rss_max);
  gz_json_number(&j, "peak_rss_bytes_min_rank", r->peak_rss_min);
  gz_json_number(&j, "snapshot_bytes",
                 (double)r->npoints * (double)(r->dtype == GZ_FLOAT32 ? 4 : 8));
  gz_json_end_object(&j);

  gz_json_object(&j, "verify");
  gz_json_bool(&j, "enabled", o->verify);
  gz_json_number(&j, "bound", r->claimed);
  if (o->verify) {
    gz_json_bool(&j, "within_bound", r->within);
    gz_json_number(&j, "max_abs_error", r->q.max_abs_error);
    gz_json_number(&j, "max_rel_error", r->q.max_rel_error);
    gz_json_number(&j, "mean_error", r->q.mean_error);
    gz_json_number(&j, "rmse", r->q.rmse);
    gz_json_number(&j, "psnr", r->q.psnr);
    gz_json_number(&j, "nrmse", r->q.nrmse);
    gz_json_number(&j, "ssim", r->ssim);
    gz_json_number(&j, "value_range", r->q.range);
    gz_json_number(&j, "points", (double)r->q.count);
    gz_json_number(&j, "nonfinite_mismatch", (double)r->q.nonfinite_mismatch);
  } else {
    static const char *keys[] = {"within_bound",
                                 "max_abs_error",
                                 "max_rel_error",
                                 "mean_error",
                                 "rmse",
                                 "psnr",
                                 "nrmse",
                                 "ssim",
                                 "value_range",
                                 "points",
                                 "nonfinite_mismatch"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
      gz_json_null(&j, keys[i]);
  }
  gz_json_end_object(&j);

  if (r->have_stats &&
      gz_error_stats_json(&r->stats, stats, sizeof stats, NULL) == GZ_OK) {
    gz_json_raw(&j, "error_stats", stats);
    gz_json_string(&j, "error_stats_summary", r->stats_line);
  } else {
    gz_json_null(&j, "error_stats");
  }

  if (r->nrenders) {
    static const char *names[3] = {"png", "png_exact", "png_error"};
    gz_json_object(&j, "render");
    gz_json_string(&j, "view", r->view_desc);
    gz_json_number(&j, "rows", (double)r->view_rows);
    gz_json_number(&j, "cols", (double)r->view_cols);
    gz_json_number(&j, "bin_rows", (double)r->bin_rows);
    gz_json_number(&j, "bin_cols", (double)r->bin_cols);
    gz_json_number(&j, "scale", r->render_scale);
    for (int k = 0; k < r->nrenders; k++) {
      gz_json_object(&j, names[k]);
      gz_json_number(&j, "width", r->png_w[k]);
      gz_json_number(&j, "height", r->png_h[k]);
      gz_json_end_object(&j);
    }
    gz_json_end_object(&j);
  }
  gz_json_object(&j, "outputs");
  gz_json_string(&j, "output", o->output);
  /* with groups the pictures are FILE_gK*.png: the names with K for the number */
  if (o->png && r->ngroups > 1)
    gzs_derived_png(o->png, "_gK", path, sizeof path);
  gz_json_string(&j, "png", !o->png ? "" : r->ngroups > 1 ? path : o->png);
  if (o->png && o->verify) {
    gzs_derived_png(o->png, r->ngroups > 1 ? "_gK_exact" : "_exact", path, sizeof path);
    gz_json_string(&j, "png_exact", path);
    gzs_derived_png(o->png, r->ngroups > 1 ? "_gK_error" : "_error", path, sizeof path);
    gz_json_string(&j, "png_error", path);
  }
  if (o->png && r->ngroups > 1)
    gz_json_number(&j, "png_groups", (double)r->ngroups);
  gz_json_string(&j, "stats_png", o->stats_png && r->have_stats ? o->stats_png : "");
  gz_json_end_object(&j);
  gz_json_finish(&j);

  ok = !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    snprintf(err, errlen, "cannot write %s: %s", o->metrics, strerror(errno));
    gz_io_discard(tmp);
    return -1;
  }
  if (gz_io_commit(tmp, o->metrics, o->force, err, errlen) != 0)
    return -1;
  add_written(r, o->metrics);
  return 0;
}

/* ---- summary ------------------------------------------------------------- */

static const char *human_bytes(double b, char *buf, size_t len) {
  static const char *u[] = {"B", "KB", "MB", "GB", "TB"};
  int k = 0;
  while (b >= 1000 && k < 4) {
    b /= 1000;
    k++;
  }
  snprintf(buf, len, "%.3g %s", b, u[k]);
  return buf;
}

void gzs_print_summary(const gzs_opts_t *o, const gzs_run_t *r) {
  char shape[256], b1[32], b2[32];
  shape_str(r, shape, sizeof shape);
  if (o->key_text)
    printf("gzstack: --key %s: %llu traces into %zu, fold up to %llu%s\n", o->key_text,
           (unsigned long long)r->key_traces, r->key_groups, (unsigned long long)r->nsnap,
           o->normalize_live ? ", normalised by the live (non-zero) samples" : "");
  printf("gzstack: %s of %llu %s (%s %s %s, %d file%s) on %d rank%s -> %s\n",
         gzs_op_name(o->op), (unsigned long long)(o->key_text ? r->key_traces : r->nsnap),
         o->key_text ? "traces" : "snapshots",
         r->has_meta0 && r->meta0.var[0] ? r->meta0.var : "data", shape,
         r->dtype == GZ_FLOAT32 ? "f32" : "f64", o->ninputs, o->ninputs == 1 ? "" : "s",
         r->size, r->size == 1 ? "" : "s", o->output);
  if (r->masked_points || r->any_mask)
    printf("  %s: per-point counts %u..%u, %zu point%s without data (%s)\n",
           o->normalize_live ? "live samples"
           : o->key_text     ? "folds"
                             : "missing values",
           r->c_min, r->c_max, r->masked_points, r->masked_points == 1 ? "" : "s",
           o->normalize_live ? "0" : "NaN");
  if (r->have_scatter)
    printf("  scatter %s (%s), ", r->sc.algo,
           r->sc.compressed ? "compressed" : "uncompressed");
  else
    printf("  ");
  printf("allreduce %s (%s%s): ", r->algo_name ? r->algo_name : "?",
         r->compressed ? "compressed" : "uncompressed",
         o->reproducible ? ", reproducible: exact int64 codes" : "");
  if (r->bytes_sent)
    printf("ratio %.3f (%s sent for %s raw)\n",
           (double)r->bytes_raw / (double)r->bytes_sent,
           human_bytes((double)r->bytes_sent, b1, sizeof b1),
           human_bytes((double)r->bytes_raw, b2, sizeof b2));
  else
    printf("nothing sent (1 rank)\n");
  printf("  bound %s, e = %g%s: |error| <= %.6g", gz_bound_name(o->bound), o->e,
         o->eb_mode == GZ_EB_REL ? " x range" : "", r->stage_bound);
  if (r->f32_term > 0)
    printf(" + float32 rounding %.3g", r->f32_term);
  if (r->ibm_term > 0)
    printf(" + IBM rounding %.3g", r->ibm_term);
  if (r->f32_term > 0 || r->ibm_term > 0)
    printf(" = %.6g", r->claimed);
  printf("\n");
  if (r->f32_term > r->e_abs && r->e_abs > 0)
    printf("  note: half an ulp of float32 at the result (%.3g) exceeds e: the float32 "
           "output "
           "cannot hold the requested precision\n",
           r->f32_term);
  if (o->verify) {
    printf("  verify: max abs error %.6g, mean error %.3g, PSNR %.2f dB, NRMSE %.3g",
           r->q.max_abs_error, r->q.mean_error, r->q.psnr, r->q.nrmse);
    if (isfinite(r->ssim))
      printf(", SSIM %.6f", r->ssim);
    printf(": %s\n", r->within ? "within the bound" : "BOUND VIOLATED");
    if (r->have_stats)
      printf("  error model (a finding on how the errors spread; the bound is checked "
             "above):\n    %s\n",
             r->stats_line);
  }
  printf("  time: total %.3f s, read %.3f, compress %.3f, communicate %.3f, write %.3f "
         "(start-up %.3f, library set-up %.3f, verify %.3f, render %.3f)\n",
         r->t.total, r->t.read, r->t.compress, r->t.communicate, r->t.write, r->t.startup,
         r->t.setup, r->t.reference, r->t.render);
}
