/* make_golden_v1.c - wrote the format-version-1 golden streams in this folder
 * with the codec as it was before format version 2 (commit 2bd7284). Kept for
 * the record; not built. Each case writes NAME.gzc (the stream) and NAME.out
 * (the exact decoded bytes), which test_codec_golden.c compares.
 *   cc -std=c11 -Ilibgzcoll/include -Ilibgzcoll/src -Ikernels -Itests -Itests/codec \
 *      make_golden_v1.c libgzcoll/src/codec/stream.c (+ gz_dtype_size) -lz -lm */
#include "golden_write.h"

int main(void) {
  struct {
    const char *name;
    field_kind_t kind;
    int is_f32;
    double eb;
    gz_eb_mode_t mode;
    size_t n;
    uint32_t chunk;
  } cases[] = {
      {"v1_smooth_f32_abs", FIELD_SMOOTH, 1, 1e-4, GZ_EB_ABS, 5000, 1024},
      {"v1_smooth_f64_rel", FIELD_SMOOTH, 0, 1e-5, GZ_EB_REL, 3001, 0},
      {"v1_specials_f32", FIELD_SPECIALS, 1, 1e-3, GZ_EB_ABS, 777, 256},
      {"v1_denormal_f64", FIELD_DENORMAL, 0, 1e-3, GZ_EB_ABS, 300, 64},
      {"v1_noise_f64_lossless", FIELD_NOISE, 0, 0.0, GZ_EB_ABS, 333, 96},
      {"v1_constant_f32", FIELD_CONSTANT, 1, 1e-2, GZ_EB_ABS, 100, 32},
      {"v1_huge_f32", FIELD_HUGE_RANGE, 1, 1e-6, GZ_EB_ABS, 500, 128},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
    p.dtype = cases[c].is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
    p.error_bound = cases[c].eb;
    p.eb_mode = cases[c].mode;
    p.chunk_len = cases[c].chunk;
    if (golden_write(cases[c].name, &p, cases[c].kind, cases[c].is_f32, cases[c].n,
                     cases[c].chunk, 1800 + c))
      return 1;
  }
  return 0;
}
