/* test_render_plot.c - gz_render_plot: a histogram of seeded normal samples
 * with density curves, decoded back: size, bar and curve colours, text
 * bands; clipping of wild curves; argument errors. */
#include "gz_render.h"
#include "gz_test.h"
#include "render_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBINS 48
#define NPTS 200

static const unsigned char red[3] = {214, 39, 40}, green[3] = {44, 160, 44},
                           orange[3] = {255, 127, 14}, purple[3] = {148, 103, 189};

static long count_rgb(const rt_image_t *img, const unsigned char c[3]) {
  return rt_count(img, 0, 0, img->width, img->height, c[0], c[1], c[2]);
}

static void test_histogram_with_curves(void) {
  static const unsigned char bar[3] = GZ_PLOT_BAR_RGB;
  double hist[NBINS] = {0}, x[NPTS], normal[NPTS], laplace[NPTS];
  const double x0 = -4.0, x1 = 4.0, bw = (x1 - x0) / NBINS;
  const int nsamples = 20000;
  gz_plot_curve_t curves[2];
  gz_plot_t p;
  gz_rng_t rng;
  rt_image_t img;
  char err[512] = "";
  const char *path = rt_path("plot_histogram.png");
  int i;

  gz_rng_seed(&rng, 12345);
  for (i = 0; i < nsamples; i++) {
    double v = gz_rng_normal(&rng);
    int b = (int)floor((v - x0) / bw);
    if (b >= 0 && b < NBINS)
      hist[b] += 1.0 / (nsamples * bw); /* density */
  }
  for (i = 0; i < NPTS; i++) {
    x[i] = x0 + (x1 - x0) * i / (NPTS - 1);
    normal[i] = exp(-0.5 * x[i] * x[i]) / sqrt(2.0 * 3.14159265358979323846);
    laplace[i] = 0.5 * exp(-fabs(x[i]) * 1.4) * 1.4;
  }
  memset(curves, 0, sizeof curves);
  curves[0].x = x;
  curves[0].y = normal;
  curves[0].npts = NPTS;
  memcpy(curves[0].rgb, red, 3);
  curves[0].legend = "normal fit (sigma=1.00)";
  curves[1].x = x;
  curves[1].y = laplace;
  curves[1].npts = NPTS;
  memcpy(curves[1].rgb, green, 3);
  curves[1].legend = "Laplace, b=0.714";
  memset(&p, 0, sizeof p);
  p.title = "Pointwise error distribution (eb = 1e-3)";
  p.xlabel = "error / bound";
  p.ylabel = "density";
  p.x0 = x0;
  p.x1 = x1;
  p.hist = hist;
  p.nbins = NBINS;
  p.curves = curves;
  p.ncurves = 2;

  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == 0, "plot: %s", err);
  if (GZ_CHECK(rt_read_png(path, &img) == 0, "decode %s", path)) {
    GZ_CHECK(img.width == 800 && img.height == 500, "default size 800 x 500, got %d x %d",
             img.width, img.height);
    GZ_CHECK(img.file_is_rgb8, "8-bit RGB");
    GZ_CHECK(count_rgb(&img, bar) > 20000, "histogram bars drawn (%ld px)",
             count_rgb(&img, bar));
    GZ_CHECK(count_rgb(&img, red) > 500, "red curve drawn (%ld px)",
             count_rgb(&img, red));
    GZ_CHECK(count_rgb(&img, green) > 500, "green curve drawn (%ld px)",
             count_rgb(&img, green));
    GZ_CHECK(rt_count_not_white(&img, 0, 0, img.width, 30) > 200, "title at the top");
    GZ_CHECK(rt_count_not_white(&img, 0, img.height - 30, img.width, img.height) > 100,
             "x label at the bottom");
    GZ_CHECK(rt_count_not_white(&img, 0, 100, 30, 400) > 50, "y label at the left");
    /* the red peak (0.399 at x = 0, y axis to about 0.71) lies in the middle
     * third of the height, round the centre of the x axis */
    GZ_CHECK(rt_count(&img, 380, img.height / 3, 490, img.height / 2, red[0], red[1],
                      red[2]) > 20,
             "peak of the normal curve where expected");
  }
  rt_free(&img);
}

static void test_curves_only(void) {
  double x[NPTS], y[4][NPTS];
  const unsigned char *cols[4] = {red, green, orange, purple};
  gz_plot_curve_t curves[4];
  gz_plot_t p;
  rt_image_t img;
  char err[512] = "";
  const char *path = rt_path("plot_curves.png");
  int i, k;
  memset(curves, 0, sizeof curves);
  for (i = 0; i < NPTS; i++) {
    x[i] = 1e-4 * i;
    for (k = 0; k < 4; k++)
      y[k][i] = (k + 1) * sin(x[i] * 3e2 + k) + (k - 1.5);
  }
  y[0][50] = NAN; /* a gap */
  x[70] = -1e300; /* far off the axis: clipped */
  for (k = 0; k < 4; k++) {
    curves[k].x = x;
    curves[k].y = y[k];
    curves[k].npts = NPTS;
    memcpy(curves[k].rgb, cols[k], 3);
    curves[k].legend = k == 2 ? NULL : "a curve";
  }
  memset(&p, 0, sizeof p);
  p.title = "Four curves, no histogram";
  p.x0 = 0.0;
  p.x1 = 0.02;
  p.curves = curves;
  p.ncurves = 4;
  p.width = 640;
  p.height = 480;
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == 0, "plot: %s", err);
  if (GZ_CHECK(rt_read_png(path, &img) == 0, "decode")) {
    GZ_CHECK(img.width == 640 && img.height == 480, "640 x 480, got %d x %d", img.width,
             img.height);
    for (k = 0; k < 4; k++)
      GZ_CHECK(count_rgb(&img, cols[k]) > 200, "curve %d colour present (%ld px)", k,
               count_rgb(&img, cols[k]));
  }
  rt_free(&img);
}

static void test_wild_values(void) {
  double x[3] = {-1e300, 0.5, 1e300}, y[3] = {1e300, 0.5, -1e300}, h[3] = {1, NAN, -0.5};
  gz_plot_curve_t c;
  gz_plot_t p;
  char err[512] = "";
  clock_t t0 = clock();
  memset(&c, 0, sizeof c);
  c.x = x;
  c.y = y;
  c.npts = 3;
  c.rgb[0] = 200;
  memset(&p, 0, sizeof p);
  p.x0 = 0.0;
  p.x1 = 1.0;
  p.hist = h;
  p.nbins = 3;
  p.curves = &c;
  p.ncurves = 1;
  p.width = 300;
  p.height = 240;
  GZ_CHECK(gz_render_plot(rt_path("plot_wild.png"), &p, 1, err, sizeof err) == 0,
           "huge, NaN and negative values: %s", err);
  GZ_CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0, "and quickly");
  p.curves = NULL;
  p.ncurves = 0;
  p.hist = NULL;
  p.nbins = 0;
  GZ_CHECK(gz_render_plot(rt_path("plot_empty.png"), &p, 1, err, sizeof err) == 0,
           "empty plot (axes only): %s", err);
}

static void test_errors(void) {
  double h[2] = {1, 2};
  gz_plot_curve_t five[5];
  gz_plot_t p;
  char err[512];
  const char *path = rt_path("plot_errors.png");
  const char *missing_dir = rt_path("no_such_dir/plot.png");
  remove(path);
  memset(five, 0, sizeof five);
  memset(&p, 0, sizeof p);
  p.x0 = 0.0;
  p.x1 = 1.0;
  p.hist = h;
  p.nbins = 2;
  p.curves = five;
  p.ncurves = 5;
  err[0] = '\0';
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == -1 && strstr(err, path),
           "5 curves refused: '%s'", err);
  p.ncurves = 0;
  p.x1 = 0.0;
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == -1, "empty x range refused");
  p.x1 = NAN;
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == -1, "NaN x range refused");
  p.x1 = 1.0;
  p.hist = NULL;
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == -1, "bins without heights");
  p.hist = h;
  p.width = 100;
  p.height = 100;
  GZ_CHECK(gz_render_plot(path, &p, 1, err, sizeof err) == -1, "100 x 100 refused");
  p.width = p.height = 0;
  GZ_CHECK(gz_render_plot(path, NULL, 1, err, sizeof err) == -1, "no plot refused");
  GZ_CHECK(!rt_exists(path), "nothing written for bad arguments");
  GZ_CHECK(gz_render_plot(path, &p, 0, err, sizeof err) == 0, "write: %s", err);
  err[0] = '\0';
  GZ_CHECK(gz_render_plot(path, &p, 0, err, sizeof err) == -1 && strstr(err, path),
           "existing refused without force: '%s'", err);
  err[0] = '\0';
  GZ_CHECK(gz_render_plot(missing_dir, &p, 1, err, sizeof err) == -1 &&
               strstr(err, missing_dir),
           "unwritable folder named: '%s'", err);
  GZ_CHECK(rt_temp_files() == 0, "no temporary files left");
}

int main(void) {
  test_histogram_with_curves();
  test_curves_only();
  test_wild_values();
  test_errors();
  return gz_test_finish();
}
