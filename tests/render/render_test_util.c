/* render_test_util.c - see render_test_util.h. */
#include "render_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rt_read_png(const char *path, rt_image_t *img) {
  png_image im;
  memset(img, 0, sizeof *img);
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&im, path)) {
    fprintf(stderr, "%s: %s\n", path, im.message);
    return -1;
  }
  img->file_is_rgb8 = im.format == PNG_FORMAT_RGB;
  im.format = PNG_FORMAT_RGB;
  img->width = (int)im.width;
  img->height = (int)im.height;
  img->rgb = malloc(PNG_IMAGE_SIZE(im));
  if (!img->rgb || !png_image_finish_read(&im, NULL, img->rgb, 0, NULL)) {
    fprintf(stderr, "%s: %s\n", path, img->rgb ? im.message : "out of memory");
    png_image_free(&im);
    rt_free(img);
    return -1;
  }
  return 0;
}

void rt_free(rt_image_t *img) {
  free(img->rgb);
  memset(img, 0, sizeof *img);
}

const unsigned char *rt_px(const rt_image_t *img, int x, int y) {
  static const unsigned char outside[3] = {1, 2, 3};
  if (!img->rgb || x < 0 || y < 0 || x >= img->width || y >= img->height)
    return outside;
  return img->rgb + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
}

int rt_px_is(const rt_image_t *img, int x, int y, int r, int g, int b) {
  const unsigned char *p = rt_px(img, x, y);
  return p[0] == r && p[1] == g && p[2] == b;
}

static void clip(const rt_image_t *img, int *x0, int *y0, int *x1, int *y1) {
  if (*x0 < 0)
    *x0 = 0;
  if (*y0 < 0)
    *y0 = 0;
  if (*x1 > img->width)
    *x1 = img->width;
  if (*y1 > img->height)
    *y1 = img->height;
}

long rt_count_not_white(const rt_image_t *img, int x0, int y0, int x1, int y1) {
  long n = 0;
  int x, y;
  clip(img, &x0, &y0, &x1, &y1);
  for (y = y0; y < y1; y++)
    for (x = x0; x < x1; x++)
      n += !rt_px_is(img, x, y, 255, 255, 255);
  return n;
}

long rt_count(const rt_image_t *img, int x0, int y0, int x1, int y1, int r, int g,
              int b) {
  long n = 0;
  int x, y;
  clip(img, &x0, &y0, &x1, &y1);
  for (y = y0; y < y1; y++)
    for (x = x0; x < x1; x++)
      n += rt_px_is(img, x, y, r, g, b);
  return n;
}

#ifndef RT_OUT_DIR
#define RT_OUT_DIR "render_out"
#endif

const char *rt_out_dir(void) {
  static const char *dir = RT_OUT_DIR;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
  return dir;
}

const char *rt_path(const char *name) {
  static char buf[4][1024];
  static int next;
  char *p = buf[next++ % 4];
  snprintf(p, sizeof buf[0], "%s/%s", rt_out_dir(), name);
  return p;
}

int rt_temp_files(void) {
  DIR *d = opendir(rt_out_dir());
  struct dirent *e;
  int n = 0;
  if (!d)
    return -1;
  while ((e = readdir(d)) != NULL)
    if (strstr(e->d_name, ".tmp-"))
      n++;
  closedir(d);
  return n;
}

int rt_exists(const char *path) { return access(path, F_OK) == 0; }
