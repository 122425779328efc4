/* render_plot.c - gz_render_plot: a histogram with overlaid curves, axes with
 * "nice" ticks (steps of 1, 2 or 5 times a power of ten), a legend, axis
 * labels and a title (see gz_render.h).
 *
 * Layout, lengths in units of the text scale ts (1 when a side is under
 * 400 px, 2 up to 999, then 1 + the shorter side / 500, at most 5): margin
 * 8; the title (up to ts + 1) on top; the y label turned upwards at the
 * left, then the y tick labels, the 4-long tick marks and the plot area;
 * under the plot area the x ticks, their labels and the x label. The number
 * of ticks is the largest (up to 10 on x, 8 on y) whose labels do not
 * collide. The legend sits inside the top-right corner of the plot area, or
 * the top-left one when that hides fewer data pixels. */
#include "gz_render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLOT_DEFAULT_W 800
#define PLOT_DEFAULT_H 500
#define PLOT_MIN_SIDE 240
#define PLOT_MAX_SIDE 8192
#define MAX_TICKS 16
#define CURVE_THICKNESS 2

static const unsigned char bg_rgb[3] = {255, 255, 255};
static const unsigned char ink_rgb[3] = {0, 0, 0};
static const unsigned char grid_rgb[3] = {228, 228, 228};
static const unsigned char bar_rgb[3] = GZ_PLOT_BAR_RGB;
static const unsigned char bar_edge_rgb[3] = {98, 130, 178};

typedef struct ticks {
  int n;
  double v[MAX_TICKS];
  char text[MAX_TICKS][32];
  int max_w; /* widest label, px */
} ticks_t;

/* Ticks at multiples of a nice step inside [lo, hi], about target of them. */
static void nice_ticks(double lo, double hi, int target, int ts, ticks_t *t) {
  double raw = (hi - lo) / target, mag, norm, step;
  long i, i0, i1;
  t->n = 0;
  t->max_w = 0;
  if (!(raw > 0.0) || !isfinite(raw))
    return;
  mag = pow(10.0, floor(log10(raw)));
  norm = raw / mag;
  step = (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
  i0 = (long)ceil(lo / step - 1e-9);
  i1 = (long)floor(hi / step + 1e-9);
  for (i = i0; i <= i1 && t->n < MAX_TICKS; i++) {
    double v = (double)i * step;
    int w;
    if (v == 0.0 || fabs(v) < 1e-12 * step)
      v = 0.0;
    t->v[t->n] = v;
    snprintf(t->text[t->n], sizeof t->text[0], "%.4g", v);
    w = gz_text_width(t->text[t->n], ts);
    if (w > t->max_w)
      t->max_w = w;
    t->n++;
  }
}

/* The most ticks (target down from max_target) whose labels keep min_gap px
 * apart along an axis of len px spanning [lo, hi]; widths count on x
 * (horizontal labels), the text height on y. */
static void fit_ticks(double lo, double hi, int len, int max_target, int horizontal,
                      int ts, ticks_t *t) {
  int target;
  for (target = max_target; target >= 2; target--) {
    double spacing;
    nice_ticks(lo, hi, target, ts, t);
    if (t->n < 2)
      continue;
    spacing = (t->v[1] - t->v[0]) / (hi - lo) * len;
    if (horizontal ? spacing >= t->max_w + 3 * GZ_FONT_CELL_W * ts
                   : spacing >= 2.5 * gz_text_height(ts))
      return;
  }
  nice_ticks(lo, hi, 2, ts, t);
}

static int check_plot(const char *path, const gz_plot_t *p, char *err, size_t errlen) {
  size_t k;
  if (!path || !*path) {
    snprintf(err, errlen, "plot render: no file name given");
    return -1;
  }
  if (!p) {
    snprintf(err, errlen, "%s: no plot given", path);
    return -1;
  }
  if (!isfinite(p->x0) || !isfinite(p->x1) || !(p->x1 > p->x0) ||
      !isfinite(p->x1 - p->x0)) {
    snprintf(err, errlen, "%s: invalid x range [%g, %g]", path, p->x0, p->x1);
    return -1;
  }
  if (p->nbins > 0 && !p->hist) {
    snprintf(err, errlen, "%s: %zu histogram bins but no heights", path, p->nbins);
    return -1;
  }
  if (p->ncurves > GZ_PLOT_MAX_CURVES || (p->ncurves > 0 && !p->curves)) {
    snprintf(err, errlen, "%s: %zu curves given (at most %d)", path, p->ncurves,
             GZ_PLOT_MAX_CURVES);
    return -1;
  }
  for (k = 0; k < p->ncurves; k++)
    if (p->curves[k].npts > 0 && (!p->curves[k].x || !p->curves[k].y)) {
      snprintf(err, errlen, "%s: curve %zu has %zu points but no data", path, k,
               p->curves[k].npts);
      return -1;
    }
  if ((p->width || p->height) &&
      (p->width < PLOT_MIN_SIDE || p->width > PLOT_MAX_SIDE ||
       p->height < PLOT_MIN_SIDE || p->height > PLOT_MAX_SIDE)) {
    snprintf(err, errlen, "%s: invalid plot size %d x %d (0 x 0, or %d..%d each)", path,
             p->width, p->height, PLOT_MIN_SIDE, PLOT_MAX_SIDE);
    return -1;
  }
  return 0;
}

/* The y range: 0 and every finite bar and curve value, 5% headroom beyond
 * the highest and (when below 0) the lowest. */
static void y_range(const gz_plot_t *p, double *ylo, double *yhi) {
  double lo = 0.0, hi = 0.0;
  size_t i, k;
  for (i = 0; i < p->nbins; i++)
    if (isfinite(p->hist[i])) {
      lo = fmin(lo, p->hist[i]);
      hi = fmax(hi, p->hist[i]);
    }
  for (k = 0; k < p->ncurves; k++)
    for (i = 0; i < p->curves[k].npts; i++)
      if (isfinite(p->curves[k].y[i]) && isfinite(p->curves[k].x[i])) {
        lo = fmin(lo, p->curves[k].y[i]);
        hi = fmax(hi, p->curves[k].y[i]);
      }
  if (!(hi > lo) || !isfinite(hi - lo)) {
    hi = lo + 1.0;
  }
  *ylo = lo < 0.0 ? lo - 0.05 * (hi - lo) : lo;
  *yhi = hi + 0.05 * (hi - lo);
  if (!isfinite(*ylo) || !isfinite(*yhi - *ylo)) {
    *ylo = lo;
    *yhi = hi;
  }
}

/* Plot area and its value ranges: value -> pixel. */
typedef struct axes {
  int x, y, w, h;
  double x0, x1, y0, y1;
} axes_t;

static double px_of(const axes_t *a, double x) {
  return a->x + (x - a->x0) / (a->x1 - a->x0) * a->w;
}
static double py_of(const axes_t *a, double y) {
  return a->y + a->h - (y - a->y0) / (a->y1 - a->y0) * a->h;
}

static void draw_hist(gz_canvas_t *c, const axes_t *a, const gz_plot_t *p) {
  double bw = (p->x1 - p->x0) / (double)p->nbins;
  int base = (int)lround(py_of(a, 0.0));
  size_t i;
  for (i = 0; i < p->nbins; i++) {
    double h = p->hist[i];
    int xa, xb, ya, top, bot;
    if (!isfinite(h) || h == 0.0)
      continue;
    xa = (int)lround(px_of(a, p->x0 + (double)i * bw));
    xb = (int)lround(px_of(a, p->x0 + (double)(i + 1) * bw));
    if (xb <= xa)
      xb = xa + 1;
    ya = (int)lround(py_of(a, h));
    top = ya < base ? ya : base;
    bot = ya < base ? base : ya;
    gz_canvas_fill(c, xa, top, xb - xa, bot - top, bar_rgb);
    if (xb - xa >= 4)
      gz_canvas_frame(c, xa, top, xb - xa + 1, bot - top + 1, bar_edge_rgb);
  }
}

static void draw_curve(gz_canvas_t *c, const axes_t *a, const gz_plot_curve_t *cv) {
  size_t i;
  for (i = 0; i + 1 < cv->npts; i++) {
    double xa = cv->x[i], ya = cv->y[i], xb = cv->x[i + 1], yb = cv->y[i + 1];
    if (!isfinite(xa) || !isfinite(ya) || !isfinite(xb) || !isfinite(yb))
      continue; /* a gap in the line */
    gz_canvas_line(c, px_of(a, xa), py_of(a, ya), px_of(a, xb), py_of(a, yb),
                   CURVE_THICKNESS, cv->rgb);
  }
  if (cv->npts == 1 && isfinite(cv->x[0]) && isfinite(cv->y[0]))
    gz_canvas_line(c, px_of(a, cv->x[0]), py_of(a, cv->y[0]), px_of(a, cv->x[0]),
                   py_of(a, cv->y[0]), 2 * CURVE_THICKNESS, cv->rgb);
}

/* Pixels in a rectangle that are neither background nor grid. */
static long data_pixels(const gz_canvas_t *c, int x, int y, int w, int h) {
  long n = 0;
  int i, j;
  for (j = y > 0 ? y : 0; j < y + h && j < c->height; j++)
    for (i = x > 0 ? x : 0; i < x + w && i < c->width; i++) {
      const unsigned char *p = c->rgb + ((size_t)j * (size_t)c->width + (size_t)i) * 3;
      n += memcmp(p, bg_rgb, 3) != 0 && memcmp(p, grid_rgb, 3) != 0;
    }
  return n;
}

static void draw_legend(gz_canvas_t *c, const axes_t *a, const gz_plot_t *p, int ts) {
  int th = gz_text_height(ts), pad = 4 * ts, swatch = 16 * ts, row_h = th + 3 * ts;
  int n = 0, text_w = 0, w, h, x, y;
  size_t k;
  for (k = 0; k < p->ncurves; k++)
    if (p->curves[k].legend && *p->curves[k].legend) {
      int tw = gz_text_width(p->curves[k].legend, ts);
      text_w = tw > text_w ? tw : text_w;
      n++;
    }
  if (n == 0)
    return;
  w = pad + swatch + pad + text_w + pad;
  h = pad + n * row_h - 3 * ts + pad;
  y = a->y + 6 * ts;
  x = a->x + a->w - w - 6 * ts;
  if (data_pixels(c, a->x + 6 * ts, y, w, h) < data_pixels(c, x, y, w, h))
    x = a->x + 6 * ts; /* the top-left corner hides less of the data */
  gz_canvas_fill(c, x, y, w, h, bg_rgb);
  gz_canvas_frame(c, x, y, w, h, ink_rgb);
  y += pad;
  for (k = 0; k < p->ncurves; k++) {
    const gz_plot_curve_t *cv = &p->curves[k];
    int mid = y + (GZ_FONT_GLYPH_H * ts) / 2;
    if (!cv->legend || !*cv->legend)
      continue;
    gz_canvas_fill(c, x + pad, mid - ts, swatch, 2 * ts + 1, cv->rgb);
    gz_text_draw(c, x + pad + swatch + pad, y, cv->legend, ts, ink_rgb);
    y += row_h;
  }
}

int gz_render_plot(const char *path, const gz_plot_t *plot, int force, char *err,
                   size_t errlen) {
  gz_canvas_t canvas = {0};
  ticks_t xt, yt;
  axes_t ax;
  int W, H, ts, th, tick_len, margin, title_scale = 1, title_h = 0, left, bottom, right,
                                      k, rc;
  const char *title, *xlabel, *ylabel;

  if (check_plot(path, plot, err, errlen) != 0)
    return -1;
  title = plot->title && *plot->title ? plot->title : NULL;
  xlabel = plot->xlabel && *plot->xlabel ? plot->xlabel : NULL;
  ylabel = plot->ylabel && *plot->ylabel ? plot->ylabel : NULL;
  W = plot->width ? plot->width : PLOT_DEFAULT_W;
  H = plot->height ? plot->height : PLOT_DEFAULT_H;
  ts = W < H ? W : H;
  ts = ts < 400 ? 1 : (ts < 1000 ? 2 : (ts / 500 + 1 > 5 ? 5 : ts / 500 + 1));
  th = gz_text_height(ts);
  tick_len = 4 * ts;
  margin = 8 * ts;
  if (title) {
    for (title_scale = ts + 1; title_scale > 1; title_scale--)
      if (gz_text_width(title, title_scale) <= W - 2 * margin)
        break;
    title_h = gz_text_height(title_scale) + 8 * ts;
  }

  ax.x0 = plot->x0;
  ax.x1 = plot->x1;
  y_range(plot, &ax.y0, &ax.y1);
  /* y tick labels set the left margin; x tick labels (centred on their
   * ticks) the right one. The vertical extent is fixed first. */
  ax.y = margin + title_h;
  bottom = tick_len + 2 * ts + th + (xlabel ? 5 * ts + th : 0) + margin;
  ax.h = H - ax.y - bottom;
  fit_ticks(ax.y0, ax.y1, ax.h, 8, 0, ts, &yt);
  left = margin + (ylabel ? th + 5 * ts : 0) + yt.max_w + 2 * ts + tick_len;
  nice_ticks(ax.x0, ax.x1, 2, ts, &xt);
  right = margin + xt.max_w / 2;
  ax.x = left;
  ax.w = W - left - right;
  fit_ticks(ax.x0, ax.x1, ax.w, 10, 1, ts, &xt);
  if (ax.w < 40 || ax.h < 40) {
    snprintf(err, errlen, "%s: plot %d x %d too small for its labels", path, W, H);
    return -1;
  }
  if (gz_canvas_init(&canvas, W, H, bg_rgb) != 0) {
    snprintf(err, errlen, "%s: cannot allocate a %d x %d image", path, W, H);
    return -1;
  }

  /* grid, bars and curves, clipped to the plot area */
  gz_canvas_clip(&canvas, ax.x, ax.y, ax.w, ax.h);
  for (k = 0; k < xt.n; k++)
    gz_canvas_fill(&canvas, (int)lround(px_of(&ax, xt.v[k])), ax.y, 1, ax.h, grid_rgb);
  for (k = 0; k < yt.n; k++)
    gz_canvas_fill(&canvas, ax.x, (int)lround(py_of(&ax, yt.v[k])), ax.w, 1, grid_rgb);
  if (plot->nbins > 0)
    draw_hist(&canvas, &ax, plot);
  for (k = 0; k < (int)plot->ncurves; k++)
    draw_curve(&canvas, &ax, &plot->curves[k]);
  gz_canvas_unclip(&canvas);

  /* axes frame, ticks and their labels */
  gz_canvas_frame(&canvas, ax.x - 1, ax.y - 1, ax.w + 2, ax.h + 2, ink_rgb);
  for (k = 0; k < xt.n; k++) {
    int x = (int)lround(px_of(&ax, xt.v[k]));
    int w = gz_text_width(xt.text[k], ts);
    gz_canvas_fill(&canvas, x - (ts - 1) / 2, ax.y + ax.h + 1, ts, tick_len, ink_rgb);
    int lx = x - w / 2;
    lx = lx + w > W - ts ? W - ts - w : lx; /* keep the end labels on the image */
    gz_text_draw(&canvas, lx < ts ? ts : lx, ax.y + ax.h + 1 + tick_len + 2 * ts,
                 xt.text[k], ts, ink_rgb);
  }
  for (k = 0; k < yt.n; k++) {
    int y = (int)lround(py_of(&ax, yt.v[k]));
    int w = gz_text_width(yt.text[k], ts);
    gz_canvas_fill(&canvas, ax.x - 1 - tick_len, y - (ts - 1) / 2, tick_len, ts, ink_rgb);
    gz_text_draw(&canvas, ax.x - 1 - tick_len - 2 * ts - w,
                 y - (GZ_FONT_GLYPH_H * ts) / 2, yt.text[k], ts, ink_rgb);
  }
  draw_legend(&canvas, &ax, plot, ts);

  if (title)
    gz_text_draw(&canvas, (W - gz_text_width(title, title_scale)) / 2, margin, title,
                 title_scale, ink_rgb);
  if (xlabel)
    gz_text_draw(&canvas, ax.x + (ax.w - gz_text_width(xlabel, ts)) / 2, H - margin - th,
                 xlabel, ts, ink_rgb);
  if (ylabel)
    gz_text_draw_up(&canvas, margin, ax.y + (ax.h + gz_text_width(ylabel, ts)) / 2,
                    ylabel, ts, ink_rgb);

  rc = gz_png_write_rgb(path, canvas.rgb, W, H, force, err, errlen);
  gz_canvas_free(&canvas);
  return rc;
}
