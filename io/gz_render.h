/* gz_render.h - PNG renders of 2-D fields and of error-statistics plots.
 *
 * Everything is drawn in memory on an 8-bit RGB canvas with a built-in bitmap
 * font and written as an RGB PNG through libpng, under a temporary name that
 * is renamed into place only when complete (gz_io_commit). No function exits
 * or aborts: each returns 0 on success and -1 on failure, with a message that
 * names the file and the cause in the caller's err buffer (err may be NULL
 * when errlen is 0).
 *
 * Colour maps (gz_cmap_rgb):
 *   VIRIDIS    piecewise-linear through 9 anchors sampled at equal steps along
 *              matplotlib's viridis: (68,1,84) dark purple at 0 ... (33,145,140)
 *              teal at 0.5 ... (253,231,37) yellow at 1. Sequential,
 *              perceptually ordered and readable in grey-scale print.
 *   DIVERGING  blue (59,76,192) at 0 -> white (255,255,255) at 0.5 -> red
 *              (180,4,38) at 1, linear in RGB on each half; the two ends are
 *              of about equal lightness. In a field render the value 0 sits
 *              at 0.5 (white) whenever the range spans zero.
 *   GRAY       black (0,0,0) at 0 -> white (255,255,255) at 1.
 * Points without data (mask, NaN, +-Inf) are drawn GZ_RENDER_MISSING grey.
 *
 * Font: 5x7 glyphs (cap height 7, lower case x-height 5, two descender rows)
 * in a 6x10 cell, covering printable ASCII 32..126; any other byte is drawn
 * as '?'. Drawn at integer scale. Numbers on colour bars and axes are
 * formatted with "%.4g". */
#ifndef GZ_RENDER_H
#define GZ_RENDER_H

#include <stddef.h>

/* Grey of points without data. */
#define GZ_RENDER_MISSING 128

typedef enum {
  GZ_CMAP_AUTO = 0, /* viridis when the finite data (or a fixed range) are one-signed,
                       diverging when they take both signs */
  GZ_CMAP_VIRIDIS,
  GZ_CMAP_DIVERGING,
  GZ_CMAP_GRAY
} gz_cmap_t;

typedef enum {
  GZ_COLORBAR_AUTO = 0,   /* horizontal below a field at least as wide as it is
                             tall, vertical on the right of a taller one */
  GZ_COLORBAR_HORIZONTAL, /* below the field; min left, max right */
  GZ_COLORBAR_VERTICAL    /* right of the field; max at the top */
} gz_colorbar_t;

/* Options of gz_render_field. All-zero (GZ_RENDER_OPTS_INIT) is a valid
 * default: automatic map, range, scale and colour bar, no text. */
typedef struct gz_render_opts {
  gz_cmap_t cmap;         /* AUTO: see gz_cmap_t */
  int fixed_range;        /* 1: map [vmin, vmax] (values outside saturate at the ends);
                             0: the range of the finite, unmasked data, made symmetric
                             +-max|v| for the diverging map */
  double vmin, vmax;      /* used when fixed_range; finite, vmin <= vmax */
  const char *title;      /* drawn above the field; may be NULL; not kept */
  const char *label;      /* colour-bar label (units); may be NULL; not kept */
  int scale;              /* pixels per data point; 0 = automatic: the smallest that makes
                             the field at least 512 px wide, capped at 8, and lowered so
                             the field is at most 2048 px tall */
  int flip_vertical;      /* 1: row 0 drawn at the bottom (grids stored south to north) */
  gz_colorbar_t colorbar; /* colour-bar placement; AUTO by default */
} gz_render_opts_t;

#define GZ_RENDER_OPTS_INIT                                                              \
  { GZ_CMAP_AUTO, 0, 0.0, 0.0, NULL, NULL, 0, 0, GZ_COLORBAR_AUTO }

/* Where gz_render_field puts things (pixels, origin top left). */
typedef struct gz_render_layout {
  int width, height;    /* whole image */
  int scale;            /* pixels per data point */
  int field_x, field_y; /* top-left pixel of the field (image row of data row 0
                           unless flip_vertical) */
  int field_w, field_h; /* cols * scale, rows * scale */
  int bar_x, bar_y;     /* top-left pixel of the colour ramp */
  int bar_w, bar_h;     /* size of the colour ramp */
  int bar_vertical;     /* 1: ramp runs bottom (min) to top (max); 0: left to right */
  int text_scale;       /* font magnification */
  gz_cmap_t cmap;       /* the map used (never AUTO) */
  double vmin, vmax;    /* the value range mapped to the ends of the ramp */
} gz_render_layout_t;

/* Render a rows x cols field (row-major doubles) as an RGB PNG at path: the
 * title at the top, the field (framed), a colour bar with tick labels for the
 * minimum, the middle (0 for a diverging map spanning zero) and the maximum,
 * and the label beside the bar. field: caller owns, not copied. mask: may be
 * NULL, else rows*cols bytes, nonzero = no data (drawn grey); non-finite
 * values are grey too. opts: may be NULL (defaults). force: 1 replaces an
 * existing file, 0 refuses it. layout: may be NULL, else receives where
 * things were drawn (gz_render_field_ex). */
int gz_render_field(const char *path, const double *field, const unsigned char *mask,
                    size_t rows, size_t cols, const gz_render_opts_t *opts, int force,
                    char *err, size_t errlen);
int gz_render_field_ex(const char *path, const double *field, const unsigned char *mask,
                       size_t rows, size_t cols, const gz_render_opts_t *opts, int force,
                       gz_render_layout_t *layout, char *err, size_t errlen);

/* One curve of a plot: npts (x[i], y[i]) pairs joined by a 2 px line in rgb;
 * non-finite points break the line. x, y: caller owns. legend: may be NULL
 * (no legend entry). */
typedef struct gz_plot_curve {
  const double *x, *y;
  size_t npts;
  unsigned char rgb[3];
  const char *legend;
} gz_plot_curve_t;

#define GZ_PLOT_MAX_CURVES 4

/* A histogram with overlaid curves. hist: nbins bar heights (densities) over
 * equal bins spanning [x0, x1], may be NULL when nbins is 0. curves: up to
 * GZ_PLOT_MAX_CURVES, may be NULL when ncurves is 0. The x axis spans
 * [x0, x1] (curves are clipped to it); the y axis spans 0 (or 5% below the
 * lowest value when that is negative) to 5% above the highest bar or curve
 * value. Ticks are labelled with "%.4g".
 * Strings may be NULL. width, height: 0 = 800 x 500; otherwise 240..8192. */
typedef struct gz_plot {
  const char *title, *xlabel, *ylabel;
  double x0, x1;
  const double *hist;
  size_t nbins;
  const gz_plot_curve_t *curves;
  size_t ncurves;
  int width, height;
} gz_plot_t;

/* Colour of the histogram bars. */
#define GZ_PLOT_BAR_RGB                                                                  \
  { 158, 186, 222 }

int gz_render_plot(const char *path, const gz_plot_t *plot, int force, char *err,
                   size_t errlen);

/* Write width x height 8-bit RGB pixels (row-major, 3 bytes each, top row
 * first) as a PNG at path. rgb: caller owns. */
int gz_png_write_rgb(const char *path, const unsigned char *rgb, int width, int height,
                     int force, char *err, size_t errlen);

/* ---- building blocks (shared by the render_*.c files, usable by tests) ---- */

/* Colour of cmap at t in [0, 1] (clamped; NaN gives missing grey). AUTO is
 * treated as VIRIDIS. */
void gz_cmap_rgb(gz_cmap_t cmap, double t, unsigned char rgb[3]);

/* An RGB drawing surface with a clip rectangle; all drawing is clipped. */
typedef struct gz_canvas {
  unsigned char *rgb; /* width*height*3, owned by the canvas */
  int width, height;
  int clip_x0, clip_y0, clip_x1, clip_y1; /* drawable: x0 <= x < x1, y0 <= y < y1 */
} gz_canvas_t;

/* 0, or -1 when the size is not positive, too large (more than 2^28
 * pixels) or memory runs out. The canvas is filled with bg. */
int gz_canvas_init(gz_canvas_t *c, int width, int height, const unsigned char bg[3]);
void gz_canvas_free(gz_canvas_t *c);
void gz_canvas_clip(gz_canvas_t *c, int x, int y, int w, int h); /* within the canvas */
void gz_canvas_unclip(gz_canvas_t *c);
void gz_canvas_fill(gz_canvas_t *c, int x, int y, int w, int h,
                    const unsigned char rgb[3]);
/* Outline of a rectangle, 1 px wide, inside x..x+w-1, y..y+h-1. */
void gz_canvas_frame(gz_canvas_t *c, int x, int y, int w, int h,
                     const unsigned char rgb[3]);
/* A line from (x0,y0) to (x1,y1) (pixel centres, may lie outside the
 * canvas) drawn with a square pen of thickness px. */
void gz_canvas_line(gz_canvas_t *c, double x0, double y0, double x1, double y1,
                    int thickness, const unsigned char rgb[3]);

/* Font metrics at scale 1. */
#define GZ_FONT_GLYPH_W 5
#define GZ_FONT_GLYPH_H 7 /* cap height; descenders go 2 rows further */
#define GZ_FONT_CELL_W 6
#define GZ_FONT_CELL_H 10

/* Width in pixels of text at scale (no trailing gap); 0 for "" or NULL. */
int gz_text_width(const char *text, int scale);
/* Height of one text line at scale, descenders included (9 * scale). */
int gz_text_height(int scale);
/* Draw text with the top of its cap height at (x, y). */
void gz_text_draw(gz_canvas_t *c, int x, int y, const char *text, int scale,
                  const unsigned char rgb[3]);
/* Draw text turned 90 degrees anticlockwise (reads bottom to top): it
 * occupies x .. x+gz_text_height-1 and y-gz_text_width+1 .. y, the baseline
 * of the glyphs on the right. */
void gz_text_draw_up(gz_canvas_t *c, int x, int y, const char *text, int scale,
                     const unsigned char rgb[3]);
/* The glyph of character ch: bit (4 - col) of row r (0..8) is set where the
 * pixel is drawn; rows 7 and 8 are the descender. Returns '?' for
 * characters outside 32..126. */
void gz_font_glyph(int ch, unsigned char rows[9]);

#endif
