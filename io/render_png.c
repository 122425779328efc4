/* render_png.c - gz_png_write_rgb: an 8-bit RGB image to a PNG file through
 * libpng, written under a temporary name and renamed into place
 * (gz_io_commit), so a failure never leaves a partial or replaced file. */
#include "gz_render.h"
#include "gz_io_commit.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* libpng reports errors through a callback that must not return: it records
 * the message here and jumps back to encode_png. */
typedef struct png_failure {
  char msg[256];
} png_failure_t;

static void png_error_cb(png_structp png, png_const_charp msg) {
  png_failure_t *f = png_get_error_ptr(png);
  snprintf(f->msg, sizeof f->msg, "%s", msg ? msg : "libpng error");
  png_longjmp(png, 1);
}

static void png_warning_cb(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

/* Encode rgb to the open file fp: 0, or -1 with the libpng message in f.
 * Kept free of locals that change after setjmp, so the longjmp back is
 * well defined. */
static int encode_png(FILE *fp, const unsigned char *rgb, int width, int height,
                      png_failure_t *f) {
  png_structp png;
  png_infop info = NULL;
  int y;
  png = png_create_write_struct(PNG_LIBPNG_VER_STRING, f, png_error_cb, png_warning_cb);
  if (!png) {
    snprintf(f->msg, sizeof f->msg, "out of memory");
    return -1;
  }
  info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    snprintf(f->msg, sizeof f->msg, "out of memory");
    return -1;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return -1;
  }
  png_init_io(png, fp);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (y = 0; y < height; y++)
    png_write_row(png, rgb + (size_t)y * (size_t)width * 3);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return 0;
}

int gz_png_write_rgb(const char *path, const unsigned char *rgb, int width, int height,
                     int force, char *err, size_t errlen) {
  char tmp[4096];
  png_failure_t f;
  FILE *fp = NULL;
  int rc = -1;
  memset(&f, 0, sizeof f);
  if (!path || !*path) {
    snprintf(err, errlen, "PNG output: no file name given");
    return -1;
  }
  if (!rgb || width <= 0 || height <= 0 || width > 1000000 || height > 1000000) {
    snprintf(err, errlen, "%s: invalid image (%d x %d pixels%s)", path, width, height,
             rgb ? "" : ", no data");
    return -1;
  }
  if (gz_io_check_target(path, force, err, errlen) != 0)
    return -1;
  if (gz_io_temp_path(path, tmp, sizeof tmp) != 0) {
    snprintf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  fp = fopen(tmp, "wb");
  if (!fp) {
    snprintf(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    return -1;
  }
  if (encode_png(fp, rgb, width, height, &f) != 0) {
    snprintf(err, errlen, "%s: PNG encoding failed: %s", path, f.msg);
    goto fail;
  }
  if (fflush(fp) != 0 || ferror(fp)) {
    snprintf(err, errlen, "%s: cannot write %s: %s", path, tmp, strerror(errno));
    goto fail;
  }
  if (fclose(fp) != 0) {
    fp = NULL;
    snprintf(err, errlen, "%s: cannot write %s: %s", path, tmp, strerror(errno));
    goto fail;
  }
  fp = NULL;
  rc = gz_io_commit(tmp, path, force, err, errlen); /* removes tmp on failure */
  return rc;
fail:
  if (fp)
    fclose(fp);
  gz_io_discard(tmp);
  return -1;
}
