/* render_field.c - gz_render_field: a 2-D field as a colour image with a
 * title, a framed field and a labelled colour bar (see gz_render.h).
 *
 * Layout, all lengths in units of the text scale ts (1 for a field less than
 * 360 px wide and tall, 2 up to 1199 px, one more per 600 px, at most 5;
 * see text_scale_for): a margin of 8 round everything; the title (at up
 * to ts + 1, smaller when it would not fit) above the field; the field
 * framed by 1 px; then either
 *   horizontal: 8 below the field a 12-high ramp as wide as the field (at
 *     least 160), tick marks at both ends and the middle, their labels under
 *     them (min left-aligned, mid centred, max right-aligned) and the label
 *     centred under those, or
 *   vertical: 10 right of the field a 14-wide ramp as tall as the field (at
 *     least 160), tick labels to its right (max at the top, mid, min at the
 *     bottom) and the label turned to read upwards right of those.
 * Whatever is narrower than the widest part is centred. */
#include "gz_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_MIN_WIDTH 512
#define AUTO_MAX_SCALE 8
#define AUTO_MAX_HEIGHT 2048
#define MAX_SCALE 64
#define MAX_SIDE 100000
#define MIN_BAR 160 /* shortest colour ramp, in text-scale units */

static const unsigned char bg_rgb[3] = {255, 255, 255};
static const unsigned char ink_rgb[3] = {0, 0, 0};
static const unsigned char missing_rgb[3] = {GZ_RENDER_MISSING, GZ_RENDER_MISSING,
                                             GZ_RENDER_MISSING};

/* The value-to-colour mapping decided from the options and the data. */
typedef struct value_map {
  gz_cmap_t cmap;
  double lo, hi; /* values at the ends of the ramp */
  int two_slope; /* diverging across zero: lo..0 -> 0..0.5, 0..hi -> 0.5..1 */
} value_map_t;

static int is_missing(const double *field, const unsigned char *mask, size_t i) {
  return (mask && mask[i]) || !isfinite(field[i]);
}

static void decide_map(const double *field, const unsigned char *mask, size_t n,
                       const gz_render_opts_t *o, value_map_t *m) {
  double dmin = INFINITY, dmax = -INFINITY, amax = 0.0;
  size_t i;
  for (i = 0; i < n; i++) {
    double v = field[i];
    if (is_missing(field, mask, i))
      continue;
    if (v < dmin)
      dmin = v;
    if (v > dmax)
      dmax = v;
    if (fabs(v) > amax)
      amax = fabs(v);
  }
  if (dmin > dmax) { /* no data at all */
    dmin = 0.0;
    dmax = 1.0;
    amax = 1.0;
  }
  m->cmap = o->cmap;
  if (m->cmap == GZ_CMAP_AUTO) {
    double lo = o->fixed_range ? o->vmin : dmin, hi = o->fixed_range ? o->vmax : dmax;
    m->cmap = (lo < 0.0 && hi > 0.0) ? GZ_CMAP_DIVERGING : GZ_CMAP_VIRIDIS;
  }
  if (o->fixed_range) {
    m->lo = o->vmin;
    m->hi = o->vmax;
  } else if (m->cmap == GZ_CMAP_DIVERGING) {
    if (amax == 0.0)
      amax = 1.0;
    m->lo = -amax;
    m->hi = amax;
  } else {
    m->lo = dmin;
    m->hi = dmax;
  }
  m->two_slope = m->cmap == GZ_CMAP_DIVERGING && m->lo < 0.0 && m->hi > 0.0;
}

/* Position of v on the ramp, in [0, 1]. */
static double map_value(const value_map_t *m, double v) {
  double t;
  if (m->two_slope)
    t = v < 0.0 ? 0.5 - 0.5 * (v / m->lo) : 0.5 + 0.5 * (v / m->hi);
  else if (m->hi > m->lo) /* halves keep hi - lo finite near DBL_MAX */
    t = (0.5 * v - 0.5 * m->lo) / (0.5 * m->hi - 0.5 * m->lo);
  else /* a single value: below, at or above it */
    t = v < m->lo ? 0.0 : (v > m->hi ? 1.0 : 0.5);
  return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

static void format_tick(char *buf, size_t len, double v) {
  if (v == 0.0)
    v = 0.0; /* no "-0" */
  snprintf(buf, len, "%.4g", v);
}

static int imax(int a, int b) { return a > b ? a : b; }

/* Text grows with the field: 1 below 360 px, 2 up to 1199, then one more per
 * 600 px, at most 5. */
static int text_scale_for(int side) {
  int ts = side < 360 ? 1 : side / 600 + 2;
  return ts > 5 ? 5 : ts;
}

static int auto_scale(size_t rows, size_t cols) {
  int s = (int)((AUTO_MIN_WIDTH + cols - 1) / cols);
  if (s > AUTO_MAX_SCALE)
    s = AUTO_MAX_SCALE;
  if (s < 1)
    s = 1;
  while (s > 1 && rows * (size_t)s > AUTO_MAX_HEIGHT)
    s--;
  return s;
}

/* Everything gz_render_field places, computed before anything is drawn. */
typedef struct field_plan {
  gz_render_layout_t L;
  int margin, title_scale, title_x, title_y;
  char ticks[3][32]; /* min, mid, max */
  int tick_w[3];
  int label_x, label_y, label_w;
} field_plan_t;

static void plan_layout(size_t rows, size_t cols, const gz_render_opts_t *o,
                        const value_map_t *m, field_plan_t *p) {
  gz_render_layout_t *L = &p->L;
  int ts, th, title_w = 0, title_h = 0, content_w, block_w, block_h, tick_len, k, y;
  const char *label = (o->label && *o->label) ? o->label : NULL;
  const char *title = (o->title && *o->title) ? o->title : NULL;
  double mid = m->two_slope ? 0.0 : 0.5 * m->lo + 0.5 * m->hi;

  L->scale = o->scale > 0 ? o->scale : auto_scale(rows, cols);
  L->field_w = (int)cols * L->scale;
  L->field_h = (int)rows * L->scale;
  L->cmap = m->cmap;
  L->vmin = m->lo;
  L->vmax = m->hi;
  L->text_scale = ts = text_scale_for(imax(L->field_w, L->field_h));
  th = gz_text_height(ts);
  p->margin = 8 * ts;
  tick_len = 3 * ts;
  format_tick(p->ticks[0], sizeof p->ticks[0], m->lo);
  format_tick(p->ticks[1], sizeof p->ticks[1], mid);
  format_tick(p->ticks[2], sizeof p->ticks[2], m->hi);
  for (k = 0; k < 3; k++)
    p->tick_w[k] = gz_text_width(p->ticks[k], ts);
  p->label_w = gz_text_width(label, ts);

  L->bar_vertical = o->colorbar == GZ_COLORBAR_VERTICAL ||
                    (o->colorbar == GZ_COLORBAR_AUTO && rows > cols);
  if (L->bar_vertical) {
    int labels_w = imax(p->tick_w[0], imax(p->tick_w[1], p->tick_w[2]));
    L->bar_w = 14 * ts;
    L->bar_h = imax(imax(L->field_h, 5 * th), MIN_BAR * ts);
    block_h = imax(L->bar_h + 2, p->label_w);
    block_w = L->field_w + 2 + 10 * ts + L->bar_w + 2 + tick_len + 2 * ts + labels_w +
              (label ? 6 * ts + th : 0);
  } else {
    int need = p->tick_w[0] + p->tick_w[1] + p->tick_w[2] + 4 * GZ_FONT_CELL_W * ts;
    L->bar_w = imax(imax(L->field_w, need), MIN_BAR * ts);
    L->bar_h = 12 * ts;
    block_w = L->bar_w + 2;
    block_h = L->field_h + 2 + 8 * ts + L->bar_h + 2 + tick_len + ts + th +
              (label ? 4 * ts + th : 0);
    if (p->label_w > block_w)
      block_w = p->label_w;
  }
  /* The title shrinks to fit the block; failing that the image widens. */
  if (title) {
    for (p->title_scale = ts + 1; p->title_scale > 1; p->title_scale--)
      if (gz_text_width(title, p->title_scale) <= block_w)
        break;
    title_w = gz_text_width(title, p->title_scale);
    title_h = gz_text_height(p->title_scale) + 6 * ts;
  }
  content_w = imax(block_w, title_w);
  L->width = content_w + 2 * p->margin;
  L->height = p->margin + title_h + block_h + p->margin;
  p->title_x = p->margin + (content_w - title_w) / 2;
  p->title_y = p->margin;

  y = p->margin + title_h; /* top of the block */
  if (L->bar_vertical) {
    int x = p->margin + (content_w - block_w) / 2;
    int labels_w = imax(p->tick_w[0], imax(p->tick_w[1], p->tick_w[2]));
    L->field_x = x + 1;
    L->field_y = y + 1;
    L->bar_x = L->field_x + L->field_w + 1 + 10 * ts + 1;
    L->bar_y = y + 1;
    p->label_x = L->bar_x + L->bar_w + 1 + tick_len + 2 * ts + labels_w + 6 * ts;
    p->label_y = y + (block_h + p->label_w) / 2 - 1; /* bottom end of upward text */
  } else {
    L->field_x = p->margin + (content_w - L->field_w) / 2;
    L->field_y = y + 1;
    L->bar_x = p->margin + (content_w - L->bar_w) / 2;
    L->bar_y = L->field_y + L->field_h + 1 + 8 * ts + 1;
    p->label_x = p->margin + (content_w - p->label_w) / 2;
    p->label_y = L->bar_y + L->bar_h + 1 + tick_len + ts + th + 4 * ts;
  }
}

static void draw_field(gz_canvas_t *c, const gz_render_layout_t *L, const double *field,
                       const unsigned char *mask, size_t rows, size_t cols,
                       const value_map_t *m, int flip) {
  size_t r, col;
  int s = L->scale;
  for (r = 0; r < rows; r++) {
    int y = L->field_y + (int)(flip ? rows - 1 - r : r) * s;
    for (col = 0; col < cols; col++) {
      size_t i = r * cols + col;
      unsigned char rgb[3];
      if (is_missing(field, mask, i))
        memcpy(rgb, missing_rgb, 3);
      else
        gz_cmap_rgb(m->cmap, map_value(m, field[i]), rgb);
      gz_canvas_fill(c, L->field_x + (int)col * s, y, s, s, rgb);
    }
  }
  gz_canvas_frame(c, L->field_x - 1, L->field_y - 1, L->field_w + 2, L->field_h + 2,
                  ink_rgb);
}

static void draw_colorbar(gz_canvas_t *c, const field_plan_t *p, const char *label) {
  const gz_render_layout_t *L = &p->L;
  int ts = L->text_scale, tick_len = 3 * ts, k;
  int len = L->bar_vertical ? L->bar_h : L->bar_w;
  for (k = 0; k < len; k++) {
    unsigned char rgb[3];
    gz_cmap_rgb(L->cmap, len > 1 ? (double)k / (double)(len - 1) : 0.5, rgb);
    if (L->bar_vertical)
      gz_canvas_fill(c, L->bar_x, L->bar_y + L->bar_h - 1 - k, L->bar_w, 1, rgb);
    else
      gz_canvas_fill(c, L->bar_x + k, L->bar_y, 1, L->bar_h, rgb);
  }
  gz_canvas_frame(c, L->bar_x - 1, L->bar_y - 1, L->bar_w + 2, L->bar_h + 2, ink_rgb);
  for (k = 0; k < 3; k++) {
    if (L->bar_vertical) {
      /* k = 0 (min) at the bottom, 2 (max) at the top */
      int ty = L->bar_y + L->bar_h - 1 - (int)((double)(L->bar_h - 1) * k / 2.0 + 0.5);
      int tx = L->bar_x + L->bar_w + 1;
      int ly = ty - (GZ_FONT_GLYPH_H * ts) / 2; /* cap height centred on the tick */
      if (k == 0)
        ly = L->bar_y + L->bar_h - GZ_FONT_GLYPH_H * ts;
      else if (k == 2)
        ly = L->bar_y;
      gz_canvas_fill(c, tx, ty - (ts - 1) / 2, tick_len, ts, ink_rgb);
      gz_text_draw(c, tx + tick_len + 2 * ts, ly, p->ticks[k], ts, ink_rgb);
    } else {
      int tx = L->bar_x + (int)((double)(L->bar_w - 1) * k / 2.0 + 0.5);
      int ty = L->bar_y + L->bar_h + 1;
      int lx =
          k == 0 ? L->bar_x
                 : (k == 1 ? tx - p->tick_w[1] / 2 : L->bar_x + L->bar_w - p->tick_w[2]);
      gz_canvas_fill(c, tx - (ts - 1) / 2, ty, ts, tick_len, ink_rgb);
      gz_text_draw(c, lx, ty + tick_len + ts, p->ticks[k], ts, ink_rgb);
    }
  }
  if (label && *label) {
    if (L->bar_vertical)
      gz_text_draw_up(c, p->label_x, p->label_y, label, ts, ink_rgb);
    else
      gz_text_draw(c, p->label_x, p->label_y, label, ts, ink_rgb);
  }
}

int gz_render_field(const char *path, const double *field, const unsigned char *mask,
                    size_t rows, size_t cols, const gz_render_opts_t *opts, int force,
                    char *err, size_t errlen) {
  return gz_render_field_ex(path, field, mask, rows, cols, opts, force, NULL, err,
                            errlen);
}

int gz_render_field_ex(const char *path, const double *field, const unsigned char *mask,
                       size_t rows, size_t cols, const gz_render_opts_t *opts, int force,
                       gz_render_layout_t *layout, char *err, size_t errlen) {
  static const gz_render_opts_t defaults = GZ_RENDER_OPTS_INIT;
  const gz_render_opts_t *o = opts ? opts : &defaults;
  gz_canvas_t canvas = {0};
  field_plan_t plan;
  value_map_t map;
  int scale, rc = -1;

  memset(&plan, 0, sizeof plan);
  if (!path || !*path) {
    snprintf(err, errlen, "field render: no file name given");
    return -1;
  }
  if (!field || rows == 0 || cols == 0) {
    snprintf(err, errlen, "%s: nothing to render (%zu x %zu field%s)", path, rows, cols,
             field ? "" : ", no data");
    return -1;
  }
  if (o->fixed_range && !(isfinite(o->vmin) && isfinite(o->vmax) && o->vmin <= o->vmax)) {
    snprintf(err, errlen, "%s: invalid colour range [%g, %g]", path, o->vmin, o->vmax);
    return -1;
  }
  if (o->scale < 0 || o->scale > MAX_SCALE) {
    snprintf(err, errlen, "%s: invalid scale %d (0 = automatic, at most %d)", path,
             o->scale, MAX_SCALE);
    return -1;
  }
  if ((unsigned)o->cmap > GZ_CMAP_GRAY || (unsigned)o->colorbar > GZ_COLORBAR_VERTICAL) {
    snprintf(err, errlen, "%s: invalid colour map %d or colour bar %d", path,
             (int)o->cmap, (int)o->colorbar);
    return -1;
  }
  scale = (rows > MAX_SIDE || cols > MAX_SIDE) ? 1
          : o->scale > 0                       ? o->scale
                                               : auto_scale(rows, cols);
  if (rows > MAX_SIDE / (size_t)scale || cols > MAX_SIDE / (size_t)scale) {
    snprintf(err, errlen, "%s: image too large (%zu x %zu points at %d px each)", path,
             rows, cols, scale);
    return -1;
  }
  decide_map(field, mask, rows * cols, o, &map);
  plan_layout(rows, cols, o, &map, &plan);
  if (gz_canvas_init(&canvas, plan.L.width, plan.L.height, bg_rgb) != 0) {
    snprintf(err, errlen, "%s: cannot allocate a %d x %d image", path, plan.L.width,
             plan.L.height);
    return -1;
  }
  if (o->title && *o->title)
    gz_text_draw(&canvas, plan.title_x, plan.title_y, o->title, plan.title_scale,
                 ink_rgb);
  draw_field(&canvas, &plan.L, field, mask, rows, cols, &map, o->flip_vertical);
  draw_colorbar(&canvas, &plan, o->label);
  rc =
      gz_png_write_rgb(path, canvas.rgb, canvas.width, canvas.height, force, err, errlen);
  if (rc == 0 && layout)
    *layout = plan.L;
  gz_canvas_free(&canvas);
  return rc;
}
