/* test_codec_golden.c - streams of format version 1, written by the codec
 * before format version 2 existed (tests/codec/golden/make_golden_v1.c),
 * still decode to exactly the bytes they decoded to then; their info is
 * reported as version 1. The folder is the first argument. */
#include "gz_test.h"

#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
    "v1_smooth_f32_abs",     "v1_smooth_f64_rel", "v1_specials_f32", "v1_denormal_f64",
    "v1_noise_f64_lossless", "v1_constant_f32",   "v1_huge_f32"};

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "golden";
  for (size_t g = 0; g < sizeof names / sizeof *names; g++) {
    char path[1024];
    size_t ssize = 0, osize = 0;
    uint8_t *stream, *expect, *got = NULL;
    gz_stream_info_t info;
    snprintf(path, sizeof path, "%s/%s.gzc", dir, names[g]);
    stream = gz_test_read_file(path, &ssize);
    snprintf(path, sizeof path, "%s/%s.out", dir, names[g]);
    expect = gz_test_read_file(path, &osize);
    GZ_CHECK(stream && expect, "%s: golden files readable", names[g]);
    if (!stream || !expect) {
      free(stream);
      free(expect);
      continue;
    }
    GZ_CHECK(gz_stream_info(stream, ssize, &info) == GZ_OK, "%s: info", names[g]);
    GZ_CHECK(info.format_version == 1 && info.stream_size == ssize &&
                 info.count * gz_dtype_size(info.dtype) == osize,
             "%s: version %u, %zu of %zu bytes, %llu values", names[g],
             info.format_version, info.stream_size, ssize,
             (unsigned long long)info.count);
    if (info.count * gz_dtype_size(info.dtype) == osize) {
      got = malloc(osize + 1);
      GZ_CHECK(gz_decompress(stream, ssize, got, info.count) == GZ_OK, "%s: decodes",
               names[g]);
      GZ_CHECK(memcmp(got, expect, osize) == 0, "%s: decoded bytes equal the golden ones",
               names[g]);
      /* one flipped payload byte is caught by the chunk checksum */
      stream[ssize - 1] ^= 0x40;
      GZ_CHECK(gz_decompress(stream, ssize, got, info.count) == GZ_ERR_CORRUPT,
               "%s: corrupted copy refused", names[g]);
    }
    free(got);
    free(stream);
    free(expect);
  }
  return gz_test_finish();
}
