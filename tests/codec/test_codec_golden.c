/* test_codec_golden.c - streams written by earlier codecs still decode to
 * exactly the bytes they decoded to then, and their info reports their
 * format version: version 1 from before format 2 existed
 * (tests/codec/golden/make_golden_v1.c), and version 2 as first written,
 * with the zstd-coded residuals the encoder no longer produces
 * (make_golden_v2z.c), and version 2 with residuals coded by two
 * interleaved rANS states (chunk coding 3, v2r), by four (coding 4, v2s)
 * and by 32 (coding 5, v2t; make_golden_v2r.c). The folder is the first argument.
 * And the encoder still writes the v2t streams byte for byte from the same
 * inputs: a change of a chunk's predictor choice, view or coding shows. */
#include "gz_test.h"

#include "golden/golden_write.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  unsigned version;
} goldens[] = {{"v1_smooth_f32_abs", 1},
               {"v1_smooth_f64_rel", 1},
               {"v1_specials_f32", 1},
               {"v1_denormal_f64", 1},
               {"v1_noise_f64_lossless", 1},
               {"v1_constant_f32", 1},
               {"v1_huge_f32", 1},
               {"v2z_smooth_f32_lorenzo3d", 2},
               {"v2z_smooth_f64_interp2d", 2},
               {"v2z_noise_f32_auto1d", 2},
               {"v2z_specials_f32_auto3d", 2},
               {"v2z_smooth_f32_lorenzo1d", 2},
               {"v2z_extremes_f64_lorenzo2d", 2},
               {"v2z_huge_f32_auto2d", 2},
               {"v2z_noise_f64_lorenzo3d", 2},
               {"v2r_smooth_f32_qinterp3d", 2},
               {"v2r_smooth_f64_qlorenzo2d", 2},
               {"v2r_specials_f32_auto3d", 2},
               {"v2r_smooth_f32_lorenzo1d", 2},
               {"v2r_noise_f64_auto2d", 2},
               {"v2r_smooth_f32_auto3d_chunks", 2},
               {"v2s_smooth_f32_qinterp3d", 2},
               {"v2s_smooth_f64_qlorenzo2d", 2},
               {"v2s_specials_f32_auto3d", 2},
               {"v2s_smooth_f32_lorenzo1d", 2},
               {"v2s_noise_f64_auto2d", 2},
               {"v2s_smooth_f32_auto3d_chunks", 2},
               {"v2t_smooth_f32_qinterp3d", 2},
               {"v2t_smooth_f64_qlorenzo2d", 2},
               {"v2t_specials_f32_auto3d", 2},
               {"v2t_smooth_f32_lorenzo1d", 2},
               {"v2t_noise_f64_auto2d", 2},
               {"v2t_smooth_f32_auto3d_chunks", 2}};

/* make_golden_v2r.c's cases (seed 2700 + index; the last in chunks of 4800
 * values): three AUTO, whose sampled trials choose among the kinds and
 * views, and one forced kind each. */
static const golden_case_t rewrites[] = {
    {"smooth_f32_qinterp3d", FIELD_SMOOTH, 1, 1e-4, GZ_PRED_QINTERP, 3, {16, 24, 40}},
    {"smooth_f64_qlorenzo2d", FIELD_SMOOTH, 0, 1e-6, GZ_PRED_QLORENZO, 2, {50, 61}},
    {"specials_f32_auto3d", FIELD_SPECIALS, 1, 1e-3, GZ_PRED_AUTO, 3, {9, 20, 33}},
    {"smooth_f32_lorenzo1d", FIELD_SMOOTH, 1, 1e-3, GZ_PRED_LORENZO, 1, {6001}},
    {"noise_f64_auto2d", FIELD_NOISE, 0, 1e-2, GZ_PRED_AUTO, 2, {45, 47}},
    {"smooth_f32_auto3d_chunks", FIELD_SMOOTH, 1, 1e-4, GZ_PRED_AUTO, 3, {12, 30, 40}}};

/* The encoder writes the v2t golden of each case from its input again. */
static void rewrite_v2t(const char *dir) {
  size_t ncases = sizeof rewrites / sizeof *rewrites;
  for (size_t c = 0; c < ncases; c++) {
    const golden_case_t *g = &rewrites[c];
    size_t n, gsize = 0, size = 0, cap;
    gz_codec_params_t p = golden_params(g->is_f32, g->eb, g->pred, g->ndims, g->dims, &n);
    uint8_t *golden, *s;
    void *x;
    char path[1024];
    p.chunk_len = c + 1 == ncases ? 4800 : 0;
    cap = gz_compress_bound(p.dtype, n, p.chunk_len);
    x = malloc(n * gz_dtype_size(p.dtype));
    s = malloc(cap);
    snprintf(path, sizeof path, "%s/v2t_%s.gzc", dir, g->name);
    golden = gz_test_read_file(path, &gsize);
    GZ_CHECK(x && s && golden, "%s: golden readable", path);
    if (x && s && golden) {
      field_fill(g->kind, g->is_f32, x, n, 2700 + c);
      GZ_CHECK(gz_compress(&p, x, n, s, cap, &size) == GZ_OK, "%s: compresses", path);
      GZ_CHECK(size == gsize && memcmp(s, golden, size) == 0,
               "%s: written again byte for byte (%zu bytes, golden %zu)", path, size,
               gsize);
    }
    free(x);
    free(s);
    free(golden);
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "golden";
  rewrite_v2t(dir);
  for (size_t g = 0; g < sizeof goldens / sizeof *goldens; g++) {
    const char *name = goldens[g].name;
    char path[1024];
    size_t ssize = 0, osize = 0;
    uint8_t *stream, *expect, *got = NULL;
    gz_stream_info_t info;
    snprintf(path, sizeof path, "%s/%s.gzc", dir, name);
    stream = gz_test_read_file(path, &ssize);
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    expect = gz_test_read_file(path, &osize);
    GZ_CHECK(stream && expect, "%s: golden files readable", name);
    if (!stream || !expect) {
      free(stream);
      free(expect);
      continue;
    }
    GZ_CHECK(gz_stream_info(stream, ssize, &info) == GZ_OK, "%s: info", name);
    GZ_CHECK(info.format_version == goldens[g].version && info.stream_size == ssize &&
                 info.count * gz_dtype_size(info.dtype) == osize,
             "%s: version %u, %zu of %zu bytes, %llu values", name, info.format_version,
             info.stream_size, ssize, (unsigned long long)info.count);
    if (info.count * gz_dtype_size(info.dtype) == osize) {
      got = malloc(osize + 1);
      GZ_CHECK(gz_decompress(stream, ssize, got, info.count) == GZ_OK, "%s: decodes",
               name);
      GZ_CHECK(memcmp(got, expect, osize) == 0, "%s: decoded bytes equal the golden ones",
               name);
      /* one flipped payload byte is caught by the chunk checksum */
      stream[ssize - 1] ^= 0x40;
      GZ_CHECK(gz_decompress(stream, ssize, got, info.count) == GZ_ERR_CORRUPT,
               "%s: corrupted copy refused", name);
    }
    free(got);
    free(stream);
    free(expect);
  }
  return gz_test_finish();
}
