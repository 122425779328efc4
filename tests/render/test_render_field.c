/* test_render_field.c - gz_render_field: renders of synthetic fields decoded
 * back with libpng; colours of known points, missing points, the colour
 * bar, text bands, layout and errors. */
#include "gz_render.h"
#include "gz_test.h"
#include "render_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Centre pixel of data point (r, c). */
static const unsigned char *data_px(const rt_image_t *img, const gz_render_layout_t *L,
                                    size_t rows, size_t r, size_t c, int flip) {
  size_t rr = flip ? rows - 1 - r : r;
  return rt_px(img, L->field_x + (int)c * L->scale + L->scale / 2,
               L->field_y + (int)rr * L->scale + L->scale / 2);
}

static int same(const unsigned char *a, int r, int g, int b) {
  return a[0] == r && a[1] == g && a[2] == b;
}

static int same_cmap(const unsigned char *p, gz_cmap_t cmap, double t) {
  unsigned char c[3];
  gz_cmap_rgb(cmap, t, c);
  return memcmp(p, c, 3) == 0;
}

/* Render, decode and check the decoded size against the layout. */
static int render(const char *name, const double *f, const unsigned char *mask,
                  size_t rows, size_t cols, const gz_render_opts_t *o,
                  gz_render_layout_t *L, rt_image_t *img) {
  char err[512] = "";
  const char *path = rt_path(name);
  memset(img, 0, sizeof *img);
  if (!GZ_CHECK(gz_render_field_ex(path, f, mask, rows, cols, o, 1, L, err, sizeof err) ==
                    0,
                "%s: %s", name, err))
    return -1;
  if (!GZ_CHECK(rt_read_png(path, img) == 0, "decode %s", path))
    return -1;
  GZ_CHECK(img->file_is_rgb8, "%s is 8-bit RGB", name);
  GZ_CHECK(img->width == L->width && img->height == L->height,
           "%s: decoded %d x %d, layout %d x %d", name, img->width, img->height, L->width,
           L->height);
  GZ_CHECK(L->field_w == (int)cols * L->scale && L->field_h == (int)rows * L->scale,
           "%s: field drawn at %d px per point", name, L->scale);
  GZ_CHECK(L->field_x >= 1 && L->field_y >= 1 && L->field_x + L->field_w < img->width &&
               L->field_y + L->field_h < img->height,
           "%s: field inside the image", name);
  GZ_CHECK(rt_px_is(img, L->field_x - 1, L->field_y - 1, 0, 0, 0) &&
               rt_px_is(img, L->field_x + L->field_w, L->field_y + L->field_h, 0, 0, 0),
           "%s: field framed", name);
  return 0;
}

/* A one-signed ramp: viridis, masked and non-finite points grey, title and
 * tick labels present, horizontal colour bar from viridis(0) to (1). */
static void test_ramp_viridis(void) {
  const size_t rows = 40, cols = 100;
  double *f = malloc(rows * cols * sizeof *f);
  unsigned char *mask = calloc(rows * cols, 1);
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  size_t r, c;
  for (r = 0; r < rows; r++)
    for (c = 0; c < cols; c++)
      f[r * cols + c] = 10.0 + (double)(r * cols + c); /* 10 .. 4009 */
  mask[5 * cols + 7] = 1;
  f[5 * cols + 7] = 1e30; /* masked: must not stretch the range */
  f[10 * cols + 10] = NAN;
  f[11 * cols + 11] = INFINITY;
  f[12 * cols + 12] = -INFINITY;
  o.title = "Ramp 40 x 100: mean (K), 64 snapshots";
  o.label = "temperature (K)";
  if (render("field_ramp_viridis.png", f, mask, rows, cols, &o, &L, &img) == 0) {
    int th_band = L.field_y - 1, bar_bottom = L.bar_y + L.bar_h + 1;
    GZ_CHECK(L.cmap == GZ_CMAP_VIRIDIS, "one-signed data get viridis");
    GZ_CHECK(L.scale == 6, "auto scale for 100 columns = ceil(512/100) = 6, got %d",
             L.scale);
    GZ_CHECK(L.vmin == 10.0 && L.vmax == 4009.0,
             "range of the unmasked finite data: %g..%g", L.vmin, L.vmax);
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 0, 0), 68, 1, 84),
             "minimum is viridis' purple");
    GZ_CHECK(same(data_px(&img, &L, rows, rows - 1, cols - 1, 0), 253, 231, 37),
             "maximum is viridis' yellow");
    GZ_CHECK(same_cmap(data_px(&img, &L, rows, 20, 50, 0), GZ_CMAP_VIRIDIS,
                       (f[20 * cols + 50] - 10.0) / 3999.0),
             "an inner point has its viridis colour");
    GZ_CHECK(same(data_px(&img, &L, rows, 5, 7, 0), 128, 128, 128), "masked point grey");
    GZ_CHECK(same(data_px(&img, &L, rows, 10, 10, 0), 128, 128, 128), "NaN grey");
    GZ_CHECK(same(data_px(&img, &L, rows, 11, 11, 0), 128, 128, 128), "+Inf grey");
    GZ_CHECK(same(data_px(&img, &L, rows, 12, 12, 0), 128, 128, 128), "-Inf grey");
    GZ_CHECK(rt_count(&img, L.field_x, L.field_y, L.field_x + L.field_w,
                      L.field_y + L.field_h, 128, 128, 128) == 4L * L.scale * L.scale,
             "exactly the 4 missing points are grey");
    GZ_CHECK(rt_count_not_white(&img, 0, 0, img.width, th_band) > 100,
             "title text in the band above the field");
    GZ_CHECK(!L.bar_vertical && L.bar_y > L.field_y + L.field_h,
             "wide field: horizontal bar below");
    GZ_CHECK(
        same_cmap(rt_px(&img, L.bar_x, L.bar_y + L.bar_h / 2), GZ_CMAP_VIRIDIS, 0.0) &&
            same_cmap(rt_px(&img, L.bar_x + L.bar_w - 1, L.bar_y + L.bar_h / 2),
                      GZ_CMAP_VIRIDIS, 1.0),
        "bar runs from viridis(0) on the left to viridis(1) on the right");
    GZ_CHECK(rt_count_not_white(&img, 0, bar_bottom + 1, img.width, img.height) > 100,
             "tick labels and label below the bar");
    GZ_CHECK(rt_count_not_white(&img, 0, bar_bottom + 1, L.bar_x + L.bar_w / 4,
                                img.height) > 20,
             "min tick label at the left end");
    GZ_CHECK(rt_count_not_white(&img, L.bar_x + 3 * L.bar_w / 4, bar_bottom + 1,
                                img.width, img.height) > 20,
             "max tick label at the right end");
  }
  rt_free(&img);

  /* The same without title: nothing above the field frame. */
  o.title = NULL;
  if (render("field_ramp_notitle.png", f, mask, rows, cols, &o, &L, &img) == 0)
    GZ_CHECK(rt_count_not_white(&img, 0, 0, img.width, L.field_y - 1) == 0,
             "no title: the band above the field is empty");
  rt_free(&img);
  free(f);
  free(mask);
}

/* Both signs: AUTO picks the symmetric diverging map; 0 is white. */
static void test_diverging(void) {
  const size_t rows = 50, cols = 81;
  double *f = malloc(rows * cols * sizeof *f);
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  size_t r, c;
  for (r = 0; r < rows; r++)
    for (c = 0; c < cols; c++)
      f[r * cols + c] = ((double)c - 40.0) / 40.0 * 2.0 * (1.0 + 0.01 * (double)r);
  f[0] = -3.0; /* max |v| = 3 on the negative side only */
  o.title = "Difference, diverging";
  o.label = "error";
  if (render("field_diverging.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    const unsigned char *zero = data_px(&img, &L, rows, 20, 40, 0);
    int bar_mid_x = L.bar_x + (L.bar_w - 1) / 2;
    GZ_CHECK(L.cmap == GZ_CMAP_DIVERGING, "mixed signs get the diverging map");
    GZ_CHECK(L.vmin == -3.0 && L.vmax == 3.0, "symmetric range +-max|v|: %g..%g", L.vmin,
             L.vmax);
    GZ_CHECK(zero[0] >= 250 && zero[1] >= 250 && zero[2] >= 250, "0 is white (%d,%d,%d)",
             zero[0], zero[1], zero[2]);
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 0, 0), 59, 76, 192), "-max is blue");
    GZ_CHECK(same_cmap(data_px(&img, &L, rows, 0, 80, 0), GZ_CMAP_DIVERGING,
                       0.5 + 0.5 * 2.0 / 3.0),
             "+2 of 3 is two thirds of the way to red");
    GZ_CHECK(data_px(&img, &L, rows, 25, 10, 0)[2] >
                 data_px(&img, &L, rows, 25, 10, 0)[0],
             "negative values bluish");
    GZ_CHECK(data_px(&img, &L, rows, 25, 70, 0)[0] >
                 data_px(&img, &L, rows, 25, 70, 0)[2],
             "positive values reddish");
    GZ_CHECK(rt_px_is(&img, bar_mid_x, L.bar_y + L.bar_h / 2, 255, 255, 255) ||
                 rt_px_is(&img, bar_mid_x + 1, L.bar_y + L.bar_h / 2, 255, 255, 255),
             "colour bar white in the middle (where the 0 tick is)");
  }
  rt_free(&img);
  free(f);
}

/* fixed_range: out-of-range values saturate; AUTO follows the range's signs. */
static void test_fixed_range(void) {
  const size_t rows = 8, cols = 64;
  double f[8 * 64];
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  size_t i;
  for (i = 0; i < rows * cols; i++)
    f[i] = 0.5;
  f[0] = 10.0;  /* far above +bound */
  f[1] = -10.0; /* far below -bound */
  f[2] = 1.0;
  f[3] = 0.0;
  o.fixed_range = 1;
  o.vmin = -1.0;
  o.vmax = 1.0;
  o.title = "abs error vs bound 1";
  if (render("field_fixed_range.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    GZ_CHECK(L.cmap == GZ_CMAP_DIVERGING, "fixed range across 0: diverging");
    GZ_CHECK(L.vmin == -1.0 && L.vmax == 1.0, "the fixed range is used");
    GZ_CHECK(L.scale == 8, "64 columns: scale 8");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 0, 0), 180, 4, 38), "+10 saturates to red");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 1, 0), 59, 76, 192),
             "-10 saturates to blue");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 2, 0), 180, 4, 38), "+bound is red");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 3, 0), 255, 255, 255), "0 is white");
    GZ_CHECK(same_cmap(data_px(&img, &L, rows, 3, 30, 0), GZ_CMAP_DIVERGING, 0.75),
             "0.5 of bound 1 is three quarters up the map");
  }
  rt_free(&img);

  /* asymmetric fixed range with viridis: linear, ends saturate */
  o.cmap = GZ_CMAP_VIRIDIS;
  o.vmin = 0.0;
  o.vmax = 0.5;
  if (render("field_fixed_viridis.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 0, 0), 253, 231, 37), "above vmax: yellow");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 1, 0), 68, 1, 84), "below vmin: purple");
    GZ_CHECK(same(data_px(&img, &L, rows, 5, 5, 0), 253, 231, 37), "vmax itself: yellow");
  }
  rt_free(&img);

  /* a one-value range: below it, at it, above it */
  o.vmin = o.vmax = 0.5;
  if (render("field_fixed_single.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 0, 0), 253, 231, 37),
             "above the value: yellow");
    GZ_CHECK(same(data_px(&img, &L, rows, 0, 1, 0), 68, 1, 84),
             "below the value: purple");
    GZ_CHECK(same_cmap(data_px(&img, &L, rows, 5, 5, 0), GZ_CMAP_VIRIDIS, 0.5),
             "at the value: the middle colour");
  }
  rt_free(&img);
}

/* flip_vertical puts data row 0 at the bottom. */
static void test_flip(void) {
  const size_t rows = 20, cols = 30;
  double f[20 * 30];
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  size_t i;
  for (i = 0; i < rows * cols; i++)
    f[i] = i < cols ? 1.0 : 0.0; /* row 0 = 1 (yellow), the rest 0 (purple) */
  o.flip_vertical = 1;
  o.title = "flipped: row 0 (south) at the bottom";
  if (render("field_flip.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    GZ_CHECK(rt_px_is(&img, L.field_x + 3, L.field_y + L.field_h - 1, 253, 231, 37),
             "flip: row 0 on the bottom line of the field");
    GZ_CHECK(rt_px_is(&img, L.field_x + 3, L.field_y, 68, 1, 84),
             "flip: last row on top");
  }
  rt_free(&img);
  o.flip_vertical = 0;
  if (render("field_noflip.png", f, NULL, rows, cols, &o, &L, &img) == 0)
    GZ_CHECK(rt_px_is(&img, L.field_x + 3, L.field_y, 253, 231, 37),
             "no flip: row 0 on top");
  rt_free(&img);
}

/* A tall field gets a vertical bar, max on top, label turned to its right. */
static void test_vertical_bar(void) {
  const size_t rows = 120, cols = 40;
  double *f = malloc(rows * cols * sizeof *f);
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  size_t r, c;
  for (r = 0; r < rows; r++)
    for (c = 0; c < cols; c++)
      f[r * cols + c] = sin(0.05 * (double)r) * cos(0.1 * (double)c) * 1e-3;
  o.title = "Tall field";
  o.label = "anomaly (m/s)";
  o.cmap = GZ_CMAP_DIVERGING;
  if (render("field_tall_vertical.png", f, NULL, rows, cols, &o, &L, &img) == 0) {
    int right = L.bar_x + L.bar_w + 1;
    GZ_CHECK(L.bar_vertical, "tall field: vertical bar");
    GZ_CHECK(L.scale == 8, "auto scale capped at 8 (got %d)", L.scale);
    GZ_CHECK(L.bar_x > L.field_x + L.field_w && L.bar_h >= L.field_h,
             "bar right of the field, as tall");
    GZ_CHECK(
        same_cmap(rt_px(&img, L.bar_x + L.bar_w / 2, L.bar_y), GZ_CMAP_DIVERGING, 1.0),
        "bar top is the max colour");
    GZ_CHECK(same_cmap(rt_px(&img, L.bar_x + L.bar_w / 2, L.bar_y + L.bar_h - 1),
                       GZ_CMAP_DIVERGING, 0.0),
             "bar bottom is the min colour");
    GZ_CHECK(rt_count_not_white(&img, right + 1, L.bar_y, img.width, L.bar_y + 30) > 10,
             "max tick label at the top right of the bar");
    GZ_CHECK(rt_count_not_white(&img, right + 1, L.bar_y + L.bar_h - 30, img.width,
                                L.bar_y + L.bar_h) > 10,
             "min tick label at the bottom right of the bar");
    GZ_CHECK(rt_count_not_white(&img, img.width - 40, L.bar_y + L.bar_h / 3, img.width,
                                L.bar_y + 2 * L.bar_h / 3) > 50,
             "turned label at the right edge");
  }
  rt_free(&img);
  /* forced horizontal on the same field */
  o.colorbar = GZ_COLORBAR_HORIZONTAL;
  if (render("field_tall_horizontal.png", f, NULL, rows, cols, &o, &L, &img) == 0)
    GZ_CHECK(!L.bar_vertical && L.bar_y > L.field_y + L.field_h, "forced horizontal bar");
  rt_free(&img);
  free(f);
}

/* Degenerate fields: constant, all missing, one point, gray map, scales. */
static void test_degenerate(void) {
  double c5[6] = {5, 5, 5, 5, 5, 5}, nan6[6], one = -2.0, g[4] = {0, 1, 2, 3};
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  int i;
  for (i = 0; i < 6; i++)
    nan6[i] = NAN;
  if (render("field_constant.png", c5, NULL, 2, 3, &o, &L, &img) == 0)
    GZ_CHECK(same_cmap(data_px(&img, &L, 2, 1, 1, 0), GZ_CMAP_VIRIDIS, 0.5),
             "constant field: middle colour");
  rt_free(&img);
  if (render("field_all_nan.png", nan6, NULL, 2, 3, &o, &L, &img) == 0)
    GZ_CHECK(rt_count(&img, L.field_x, L.field_y, L.field_x + L.field_w,
                      L.field_y + L.field_h, 128, 128,
                      128) == (long)L.field_w * L.field_h,
             "all-NaN field entirely grey");
  rt_free(&img);
  if (render("field_one_point.png", &one, NULL, 1, 1, &o, &L, &img) == 0)
    GZ_CHECK(L.scale == 8 && img.width > 8, "1 x 1 field: scale 8, room for the bar");
  rt_free(&img);
  o.cmap = GZ_CMAP_GRAY;
  if (render("field_gray.png", g, NULL, 2, 2, &o, &L, &img) == 0) {
    GZ_CHECK(same(data_px(&img, &L, 2, 0, 0, 0), 0, 0, 0), "gray: min black");
    GZ_CHECK(same(data_px(&img, &L, 2, 1, 1, 0), 255, 255, 255), "gray: max white");
  }
  rt_free(&img);
  o.cmap = GZ_CMAP_AUTO;
  o.scale = 3;
  if (render("field_scale3.png", g, NULL, 2, 2, &o, &L, &img) == 0)
    GZ_CHECK(L.scale == 3, "explicit scale kept");
  rt_free(&img);
}

static void test_auto_scale_and_title(void) {
  const size_t rows = 3000, cols = 100;
  double *f = calloc(rows * cols, sizeof *f);
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  gz_render_layout_t L;
  rt_image_t img;
  f[0] = 1.0;
  if (render("field_very_tall.png", f, NULL, rows, cols, &o, &L, &img) == 0)
    GZ_CHECK(L.scale == 1,
             "3000 rows: scale lowered to keep the height at most 2048 -> 1");
  rt_free(&img);
  o.title = "A title much longer than the field is wide, so the image has to grow";
  if (render("field_long_title.png", f, NULL, 4, 4, &o, &L, &img) == 0)
    GZ_CHECK(img.width >= gz_text_width(o.title, 1), "image widened for the title");
  rt_free(&img);
  free(f);
}

static void test_errors(void) {
  double f[4] = {1, 2, 3, 4};
  gz_render_opts_t o = GZ_RENDER_OPTS_INIT;
  char err[512];
  const char *path = rt_path("field_errors.png");
  const char *missing_dir = rt_path("no_such_dir/field.png");
  remove(path);

  GZ_CHECK(gz_render_field(path, f, NULL, 0, 4, NULL, 1, err, sizeof err) == -1 &&
               strstr(err, path),
           "0 rows refused: '%s'", err);
  GZ_CHECK(gz_render_field(path, NULL, NULL, 2, 2, NULL, 1, err, sizeof err) == -1,
           "no data refused");
  GZ_CHECK(gz_render_field(NULL, f, NULL, 2, 2, NULL, 1, err, sizeof err) == -1,
           "no path refused");
  o.fixed_range = 1;
  o.vmin = 1.0;
  o.vmax = -1.0;
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, &o, 1, err, sizeof err) == -1 &&
               strstr(err, path),
           "vmin > vmax refused: '%s'", err);
  o.vmin = NAN;
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, &o, 1, err, sizeof err) == -1,
           "NaN range refused");
  o = (gz_render_opts_t)GZ_RENDER_OPTS_INIT;
  o.scale = -1;
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, &o, 1, err, sizeof err) == -1,
           "negative scale refused");
  o.scale = 0;
  o.cmap = (gz_cmap_t)42;
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, &o, 1, err, sizeof err) == -1,
           "unknown colour map refused");
  GZ_CHECK(gz_render_field(path, f, NULL, 200000, 1, NULL, 1, err, sizeof err) == -1,
           "image too large refused");
  GZ_CHECK(!rt_exists(path), "nothing written for bad arguments");

  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, NULL, 0, err, sizeof err) == 0,
           "write: %s", err);
  err[0] = '\0';
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, NULL, 0, err, sizeof err) == -1 &&
               strstr(err, path),
           "existing file refused without force: '%s'", err);
  GZ_CHECK(gz_render_field(path, f, NULL, 2, 2, NULL, 1, err, sizeof err) == 0,
           "replaced with force: %s", err);
  err[0] = '\0';
  GZ_CHECK(gz_render_field(missing_dir, f, NULL, 2, 2, NULL, 1, err, sizeof err) == -1 &&
               strstr(err, missing_dir),
           "unwritable folder: error names the path: '%s'", err);
  GZ_CHECK(rt_temp_files() == 0, "no temporary files left");
}

int main(void) {
  test_ramp_viridis();
  test_diverging();
  test_fixed_range();
  test_flip();
  test_vertical_bar();
  test_degenerate();
  test_auto_scale_and_title();
  test_errors();
  return gz_test_finish();
}
