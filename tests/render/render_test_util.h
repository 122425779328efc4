/* render_test_util.h - decoding PNGs back and looking at their pixels, for
 * the tests of io/render_*.c. */
#ifndef RENDER_TEST_UTIL_H
#define RENDER_TEST_UTIL_H

#include <stddef.h>

/* A decoded image: width*height*3 bytes, top row first. */
typedef struct rt_image {
  unsigned char *rgb;
  int width, height;
  int file_is_rgb8; /* the file itself is 8-bit RGB without alpha */
} rt_image_t;

/* Decode path with libpng; 0 on success, -1 (message on stderr) otherwise. */
int rt_read_png(const char *path, rt_image_t *img);
void rt_free(rt_image_t *img);

/* Pixel (x, y); a static black-and-white "outside" marker when off the image. */
const unsigned char *rt_px(const rt_image_t *img, int x, int y);
int rt_px_is(const rt_image_t *img, int x, int y, int r, int g, int b);

/* Pixels in [x0, x1) x [y0, y1) (clipped to the image) that are not white
 * (rt_count_not), or that equal rgb exactly (rt_count). */
long rt_count_not_white(const rt_image_t *img, int x0, int y0, int x1, int y1);
long rt_count(const rt_image_t *img, int x0, int y0, int x1, int y1, int r, int g, int b);

/* The folder for this test's output (created under the working directory)
 * and a path inside it. rt_path returns a static buffer (one of 4, rotating). */
const char *rt_out_dir(void);
const char *rt_path(const char *name);

/* Number of entries in rt_out_dir() whose name contains ".tmp-". */
int rt_temp_files(void);

/* 1 if the file exists. */
int rt_exists(const char *path);

#endif
