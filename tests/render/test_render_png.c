/* test_render_png.c - gz_png_write_rgb: exact round trip through libpng,
 * refusal of an existing file without force, no temporary left behind,
 * errors that name the path. */
#include "gz_render.h"
#include "gz_test.h"
#include "render_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_round_trip(void) {
  const int w = 37, h = 23; /* odd sizes: no row padding assumptions */
  unsigned char *rgb = malloc((size_t)w * h * 3);
  char err[512] = "";
  rt_image_t img;
  int x, y, same = 1;
  const char *path = rt_path("roundtrip.png");
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      unsigned char *p = rgb + ((size_t)y * w + x) * 3;
      p[0] = (unsigned char)(x * 7);
      p[1] = (unsigned char)(y * 11);
      p[2] = (unsigned char)(x * y);
    }
  remove(path);
  GZ_CHECK(gz_png_write_rgb(path, rgb, w, h, 0, err, sizeof err) == 0, "write: %s", err);
  GZ_CHECK(rt_read_png(path, &img) == 0, "decode %s", path);
  GZ_CHECK(img.width == w && img.height == h, "size %d x %d", img.width, img.height);
  GZ_CHECK(img.file_is_rgb8, "file is 8-bit RGB without alpha");
  if (img.rgb && img.width == w && img.height == h)
    same = memcmp(img.rgb, rgb, (size_t)w * h * 3) == 0;
  GZ_CHECK(same, "decoded pixels equal the written ones");
  rt_free(&img);
  free(rgb);
}

static void test_existing_and_force(void) {
  unsigned char black[4 * 3] = {0}, white[4 * 3];
  char err[512] = "";
  rt_image_t img;
  const char *path = rt_path("existing.png");
  memset(white, 255, sizeof white);
  remove(path);
  GZ_CHECK(gz_png_write_rgb(path, black, 2, 2, 0, err, sizeof err) == 0, "first: %s",
           err);
  err[0] = '\0';
  GZ_CHECK(gz_png_write_rgb(path, white, 2, 2, 0, err, sizeof err) == -1,
           "existing file refused without force");
  GZ_CHECK(strstr(err, path) != NULL, "message names the file: '%s'", err);
  GZ_CHECK(rt_temp_files() == 0, "no temporary file left after a refusal");
  GZ_CHECK(rt_read_png(path, &img) == 0 && rt_px_is(&img, 0, 0, 0, 0, 0),
           "refused write left the old file as it was");
  rt_free(&img);
  GZ_CHECK(gz_png_write_rgb(path, white, 2, 2, 1, err, sizeof err) == 0, "force: %s",
           err);
  GZ_CHECK(rt_read_png(path, &img) == 0 && rt_px_is(&img, 1, 1, 255, 255, 255),
           "force replaced the file");
  rt_free(&img);
  GZ_CHECK(rt_temp_files() == 0, "no temporary file left after success");
}

static void test_errors(void) {
  unsigned char px[3] = {1, 2, 3};
  char err[512];
  const char *missing_dir = rt_path("no_such_dir/out.png");
  char under_file[1024];
  FILE *f;

  err[0] = '\0';
  GZ_CHECK(gz_png_write_rgb(missing_dir, px, 1, 1, 1, err, sizeof err) == -1,
           "missing folder fails");
  GZ_CHECK(strstr(err, missing_dir) != NULL, "message names the path: '%s'", err);
  GZ_CHECK(!rt_exists(missing_dir), "nothing written");

  /* A regular file used as a folder: fails even for root, unlike chmod. */
  f = fopen(rt_path("plain_file"), "w");
  if (f)
    fclose(f);
  snprintf(under_file, sizeof under_file, "%s/out.png", rt_path("plain_file"));
  err[0] = '\0';
  GZ_CHECK(gz_png_write_rgb(under_file, px, 1, 1, 1, err, sizeof err) == -1,
           "path under a regular file fails");
  GZ_CHECK(strstr(err, under_file) != NULL, "message names the path: '%s'", err);

  err[0] = '\0';
  GZ_CHECK(gz_png_write_rgb(rt_path("bad.png"), px, 0, 1, 1, err, sizeof err) == -1 &&
               strstr(err, "bad.png") != NULL,
           "zero width refused: '%s'", err);
  GZ_CHECK(gz_png_write_rgb(rt_path("bad.png"), NULL, 1, 1, 1, err, sizeof err) == -1,
           "no pixels refused");
  GZ_CHECK(gz_png_write_rgb(NULL, px, 1, 1, 1, err, sizeof err) == -1, "no path refused");
  GZ_CHECK(gz_png_write_rgb("", px, 1, 1, 1, NULL, 0) == -1, "empty path, no err buffer");
  GZ_CHECK(!rt_exists(rt_path("bad.png")), "nothing written for bad arguments");
  GZ_CHECK(rt_temp_files() == 0, "no temporary files left");
}

int main(void) {
  test_round_trip();
  test_existing_and_force();
  test_errors();
  return gz_test_finish();
}
