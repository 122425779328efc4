/* render_canvas.c - an in-memory RGB surface with clipped rectangles and
 * thick lines, the drawing layer under gz_render_field and gz_render_plot. */
#include "gz_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CANVAS_MAX_PIXELS (1L << 28)

int gz_canvas_init(gz_canvas_t *c, int width, int height, const unsigned char bg[3]) {
  size_t n, i;
  memset(c, 0, sizeof *c);
  if (width <= 0 || height <= 0 || (long)width * (long)height > CANVAS_MAX_PIXELS)
    return -1;
  n = (size_t)width * (size_t)height;
  c->rgb = malloc(n * 3);
  if (!c->rgb)
    return -1;
  for (i = 0; i < n; i++)
    memcpy(c->rgb + 3 * i, bg, 3);
  c->width = width;
  c->height = height;
  gz_canvas_unclip(c);
  return 0;
}

void gz_canvas_free(gz_canvas_t *c) {
  free(c->rgb);
  memset(c, 0, sizeof *c);
}

void gz_canvas_unclip(gz_canvas_t *c) {
  c->clip_x0 = 0;
  c->clip_y0 = 0;
  c->clip_x1 = c->width;
  c->clip_y1 = c->height;
}

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

void gz_canvas_clip(gz_canvas_t *c, int x, int y, int w, int h) {
  c->clip_x0 = clamp_int(x, 0, c->width);
  c->clip_y0 = clamp_int(y, 0, c->height);
  c->clip_x1 = clamp_int(x + (w > 0 ? w : 0), c->clip_x0, c->width);
  c->clip_y1 = clamp_int(y + (h > 0 ? h : 0), c->clip_y0, c->height);
}

void gz_canvas_fill(gz_canvas_t *c, int x, int y, int w, int h,
                    const unsigned char rgb[3]) {
  /* Widen before adding so huge sizes cannot overflow int. */
  long x0 = x, y0 = y, x1 = (long)x + (w > 0 ? w : 0), y1 = (long)y + (h > 0 ? h : 0);
  long i, j;
  if (x0 < c->clip_x0)
    x0 = c->clip_x0;
  if (y0 < c->clip_y0)
    y0 = c->clip_y0;
  if (x1 > c->clip_x1)
    x1 = c->clip_x1;
  if (y1 > c->clip_y1)
    y1 = c->clip_y1;
  for (j = y0; j < y1; j++) {
    unsigned char *p = c->rgb + ((size_t)j * (size_t)c->width + (size_t)x0) * 3;
    for (i = x0; i < x1; i++, p += 3)
      memcpy(p, rgb, 3);
  }
}

void gz_canvas_frame(gz_canvas_t *c, int x, int y, int w, int h,
                     const unsigned char rgb[3]) {
  if (w <= 0 || h <= 0)
    return;
  gz_canvas_fill(c, x, y, w, 1, rgb);
  gz_canvas_fill(c, x, y + h - 1, w, 1, rgb);
  gz_canvas_fill(c, x, y, 1, h, rgb);
  gz_canvas_fill(c, x + w - 1, y, 1, h, rgb);
}

/* Liang-Barsky: shrink the segment p0 + s (p1 - p0), s in [0, 1], to the part
 * inside [xmin, xmax] x [ymin, ymax]; 0 when nothing is left. */
static int clip_segment(double *x0, double *y0, double *x1, double *y1, double xmin,
                        double ymin, double xmax, double ymax) {
  double dx = *x1 - *x0, dy = *y1 - *y0, s0 = 0.0, s1 = 1.0;
  double p[4] = {-dx, dx, -dy, dy};
  double q[4] = {*x0 - xmin, xmax - *x0, *y0 - ymin, ymax - *y0};
  int k;
  for (k = 0; k < 4; k++) {
    if (p[k] == 0.0) {
      if (q[k] < 0.0)
        return 0;
    } else {
      double s = q[k] / p[k];
      if (p[k] < 0.0) {
        if (s > s1)
          return 0;
        if (s > s0)
          s0 = s;
      } else {
        if (s < s0)
          return 0;
        if (s < s1)
          s1 = s;
      }
    }
  }
  *x1 = *x0 + s1 * dx;
  *y1 = *y0 + s1 * dy;
  *x0 = *x0 + s0 * dx;
  *y0 = *y0 + s0 * dy;
  return 1;
}

void gz_canvas_line(gz_canvas_t *c, double x0, double y0, double x1, double y1,
                    int thickness, const unsigned char rgb[3]) {
  double len, half;
  long n, k;
  if (thickness < 1)
    thickness = 1;
  if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
    return;
  half = 0.5 * (double)(thickness - 1);
  /* Only the part that can touch the clip rectangle is walked, so a segment
   * with far-away ends costs no more than one across the canvas. */
  if (!clip_segment(&x0, &y0, &x1, &y1, c->clip_x0 - thickness, c->clip_y0 - thickness,
                    c->clip_x1 + thickness, c->clip_y1 + thickness))
    return;
  len = fmax(fabs(x1 - x0), fabs(y1 - y0));
  n = (long)ceil(2.0 * len) + 1;
  for (k = 0; k < n; k++) {
    double s = n > 1 ? (double)k / (double)(n - 1) : 0.0;
    double px = x0 + s * (x1 - x0), py = y0 + s * (y1 - y0);
    gz_canvas_fill(c, (int)floor(px - half + 0.5), (int)floor(py - half + 0.5), thickness,
                   thickness, rgb);
  }
}
