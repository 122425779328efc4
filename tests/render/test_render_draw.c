/* test_render_draw.c - the drawing building blocks: colour-map anchors and
 * ordering, the bitmap font (coverage, distinct glyphs, metrics, upright and
 * turned text) and canvas clipping. */
#include "gz_render.h"
#include "gz_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int rgb_is(const unsigned char c[3], int r, int g, int b) {
  return c[0] == r && c[1] == g && c[2] == b;
}

/* Rec. 601 luma, enough to check lightness ordering. */
static double luma(const unsigned char c[3]) {
  return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
}

/* cmap(t) must be (r, g, b). */
static void cmap_is(gz_cmap_t cmap, double t, int r, int g, int b, const char *what) {
  unsigned char c[3];
  gz_cmap_rgb(cmap, t, c);
  GZ_CHECK(rgb_is(c, r, g, b), "%s (%d,%d,%d)", what, c[0], c[1], c[2]);
}

static void test_colormaps(void) {
  unsigned char c[3], d[3];
  double prev = -1.0;
  int k, monotone = 1, symmetric = 1;

  cmap_is(GZ_CMAP_VIRIDIS, 0.0, 68, 1, 84, "viridis(0) =");
  cmap_is(GZ_CMAP_VIRIDIS, 0.5, 33, 145, 140, "viridis(0.5) =");
  gz_cmap_rgb(GZ_CMAP_VIRIDIS, 1.0, c);
  GZ_CHECK(rgb_is(c, 253, 231, 37), "viridis(1) = (%d,%d,%d)", c[0], c[1], c[2]);
  gz_cmap_rgb(GZ_CMAP_AUTO, 1.0, d);
  GZ_CHECK(memcmp(c, d, 3) == 0, "AUTO looks up as viridis");
  for (k = 0; k <= 256; k++) { /* viridis gets lighter all the way */
    gz_cmap_rgb(GZ_CMAP_VIRIDIS, k / 256.0, c);
    if (luma(c) < prev - 1.0) /* 8-bit rounding may wobble by < 1 */
      monotone = 0;
    prev = luma(c);
  }
  GZ_CHECK(monotone, "viridis lightness increases with t");
  cmap_is(GZ_CMAP_VIRIDIS, -3.0, 68, 1, 84, "t < 0 clamps to the low end");
  cmap_is(GZ_CMAP_VIRIDIS, 7.0, 253, 231, 37, "t > 1 clamps to the high end");
  cmap_is(GZ_CMAP_VIRIDIS, NAN, 128, 128, 128, "NaN is missing grey");

  cmap_is(GZ_CMAP_DIVERGING, 0.0, 59, 76, 192, "diverging(0) blue");
  cmap_is(GZ_CMAP_DIVERGING, 0.5, 255, 255, 255, "diverging(0.5) white");
  cmap_is(GZ_CMAP_DIVERGING, 1.0, 180, 4, 38, "diverging(1) red");
  for (k = 0; k <= 64; k++) { /* blue side bluest, red side reddest */
    gz_cmap_rgb(GZ_CMAP_DIVERGING, 0.5 - k / 128.0, c);
    gz_cmap_rgb(GZ_CMAP_DIVERGING, 0.5 + k / 128.0, d);
    if (k > 0 && !(c[2] > c[0] && d[0] > d[2]))
      symmetric = 0;
  }
  GZ_CHECK(symmetric, "diverging: blue below 0.5, red above");

  gz_cmap_rgb(GZ_CMAP_GRAY, 0.0, c);
  GZ_CHECK(rgb_is(c, 0, 0, 0), "gray(0) black");
  gz_cmap_rgb(GZ_CMAP_GRAY, 1.0, c);
  GZ_CHECK(rgb_is(c, 255, 255, 255), "gray(1) white");
}

static int ink(const unsigned char rows[9]) {
  int r, n = 0;
  for (r = 0; r < 9; r++)
    n += rows[r] != 0;
  return n;
}

static void test_font(void) {
  unsigned char g[9], h[9];
  int ch, other, all_inked = 1, distinct = 1, desc_ok = 1;
  const char *descenders = "gjpqy,;_|";

  gz_font_glyph(' ', g);
  GZ_CHECK(ink(g) == 0, "space is blank");
  for (ch = 33; ch <= 126; ch++) {
    gz_font_glyph(ch, g);
    if (ink(g) == 0) {
      all_inked = 0;
      fprintf(stderr, "glyph '%c' is blank\n", ch);
    }
    if ((g[7] || g[8]) && !strchr(descenders, ch)) {
      desc_ok = 0;
      fprintf(stderr, "glyph '%c' reaches below the baseline\n", ch);
    }
    for (other = 33; other < ch; other++) {
      gz_font_glyph(other, h);
      if (memcmp(g, h, 9) == 0) {
        distinct = 0;
        fprintf(stderr, "glyphs '%c' and '%c' are the same\n", other, ch);
      }
    }
  }
  GZ_CHECK(all_inked, "every printable character but space has ink");
  GZ_CHECK(distinct, "no two glyphs are the same");
  GZ_CHECK(desc_ok, "only g j p q y , ; _ | use the descender rows");
  gz_font_glyph(200, g);
  gz_font_glyph('?', h);
  GZ_CHECK(memcmp(g, h, 9) == 0, "non-ASCII draws as '?'");
  gz_font_glyph('1', g);
  GZ_CHECK(g[6] == 0x0e && g[0] == 0x04, "'1': foot .###. and top ..#..");

  GZ_CHECK(gz_text_width("", 2) == 0 && gz_text_width(NULL, 2) == 0, "empty width 0");
  GZ_CHECK(gz_text_width("A", 1) == 5, "one glyph is 5 wide");
  GZ_CHECK(gz_text_width("abc", 2) == 34, "3 glyphs at scale 2: 3*12-2 = 34, got %d",
           gz_text_width("abc", 2));
  GZ_CHECK(gz_text_height(3) == 27, "height at scale 3 = 27");
}

/* Bounding box of non-white pixels. */
static void ink_box(const gz_canvas_t *c, int *x0, int *y0, int *x1, int *y1) {
  int x, y;
  *x0 = c->width;
  *y0 = c->height;
  *x1 = -1;
  *y1 = -1;
  for (y = 0; y < c->height; y++)
    for (x = 0; x < c->width; x++) {
      const unsigned char *p = c->rgb + ((size_t)y * c->width + x) * 3;
      if (p[0] == 255 && p[1] == 255 && p[2] == 255)
        continue;
      if (x < *x0)
        *x0 = x;
      if (y < *y0)
        *y0 = y;
      if (x > *x1)
        *x1 = x;
      if (y > *y1)
        *y1 = y;
    }
}

static void test_text_drawing(void) {
  static const unsigned char white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
  gz_canvas_t c;
  int x0, y0, x1, y1;
  GZ_CHECK(gz_canvas_init(&c, 200, 100, white) == 0, "canvas");
  /* "Hg" at scale 2: H fills the cap height, g reaches 2 descender rows. */
  gz_text_draw(&c, 10, 20, "Hg", 2, black);
  ink_box(&c, &x0, &y0, &x1, &y1);
  GZ_CHECK(x0 == 10 && y0 == 20, "upright text starts at (10,20): (%d,%d)", x0, y0);
  GZ_CHECK(x1 == 10 + gz_text_width("Hg", 2) - 1, "right edge %d", x1);
  GZ_CHECK(y1 == 20 + gz_text_height(2) - 1, "bottom (descender) %d", y1);
  gz_canvas_free(&c);

  GZ_CHECK(gz_canvas_init(&c, 100, 200, white) == 0, "canvas");
  gz_text_draw_up(&c, 30, 150, "Hg", 2, black);
  ink_box(&c, &x0, &y0, &x1, &y1);
  GZ_CHECK(x0 == 30 && x1 == 30 + gz_text_height(2) - 1,
           "turned text spans x 30..%d: %d..%d", 30 + gz_text_height(2) - 1, x0, x1);
  GZ_CHECK(y1 == 150 && y0 == 150 - gz_text_width("Hg", 2) + 1,
           "turned text spans y %d..150: %d..%d", 150 - gz_text_width("Hg", 2) + 1, y0,
           y1);
  /* 'H' comes first, at the bottom: its left stem (glyph column 0, rows
   * 0..6) is the bottom row of pixels, x 30..43. */
  GZ_CHECK(c.rgb[((size_t)150 * 100 + 30) * 3] == 0 &&
               c.rgb[((size_t)150 * 100 + 43) * 3] == 0,
           "first glyph at the bottom, read upwards");
  /* text running off the canvas is clipped, not written out of bounds */
  gz_text_draw(&c, 90, 195, "clipped text", 3, black);
  gz_text_draw_up(&c, -5, 3, "clipped", 2, black);
  gz_canvas_free(&c);
}

static void test_canvas(void) {
  static const unsigned char white[3] = {255, 255, 255}, red[3] = {255, 0, 0};
  gz_canvas_t c;
  int x0, y0, x1, y1;
  clock_t t0;
  GZ_CHECK(gz_canvas_init(&c, 0, 10, white) == -1, "zero width refused");
  GZ_CHECK(gz_canvas_init(&c, 100000, 100000, white) == -1, "10^10 pixels refused");
  GZ_CHECK(gz_canvas_init(&c, 64, 48, white) == 0, "canvas");
  gz_canvas_fill(&c, -10, -10, 1000000000, 11, red); /* huge, no overflow */
  ink_box(&c, &x0, &y0, &x1, &y1);
  GZ_CHECK(x0 == 0 && y0 == 0 && x1 == 63 && y1 == 0, "fill clipped to the canvas");
  gz_canvas_free(&c);

  GZ_CHECK(gz_canvas_init(&c, 64, 48, white) == 0, "canvas");
  gz_canvas_clip(&c, 10, 10, 20, 20);
  gz_canvas_line(&c, -1e300, -1e300, 1e300, 1e300, 3, red);
  gz_canvas_line(&c, 0, 15, 1e12, 15, 1, red);
  gz_canvas_line(&c, NAN, 0, 5, 5, 1, red);
  ink_box(&c, &x0, &y0, &x1, &y1);
  GZ_CHECK(x0 >= 10 && y0 >= 10 && x1 <= 29 && y1 <= 29, "lines stay in the clip box");
  GZ_CHECK(x0 == 10 && x1 == 29, "the clipped diagonal crosses the whole box");
  gz_canvas_unclip(&c);
  t0 = clock();
  gz_canvas_line(&c, -1e15, 3, 1e15, 3, 2, red);
  GZ_CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0, "a far-reaching line is quick");
  gz_canvas_free(&c);
}

int main(void) {
  test_colormaps();
  test_font();
  test_text_drawing();
  test_canvas();
  return gz_test_finish();
}
