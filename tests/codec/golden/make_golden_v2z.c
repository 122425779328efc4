/* make_golden_v2z.c - wrote the v2z_* golden streams in this folder: format
 * version 2 as the codec wrote it before commit 523c119 (built from commit
 * 2aa08f9), when its chunks could hold the Lorenzo and interpolation
 * predictors' residuals coded with zstd. The codec no longer writes those
 * chunk codings but must still decode them. In these streams the chunks
 * are Lorenzo or interpolation residuals bit-packed (coding 0) or in zstd'd
 * byte planes (coding 2: specials, extremes, noise_f64); no case here made
 * the old encoder pick coding 1 (zstd'd bytes). Kept for the record; not built:
 *   cc -std=c11 -I<2aa08f9>/libgzcoll/include -Itests/codec make_golden_v2z.c \
 *      <2aa08f9 build>/libgzcoll/libgzcoll.a -lzstd -lz -lm -fopenmp
 * Each case writes NAME.gzc (the stream) and NAME.out (the exact decoded
 * bytes), which test_codec_golden.c compares. */
#include "golden_write.h"

int main(void) {
  golden_case_t cases[] = {
      {"v2z_smooth_f32_lorenzo3d",
       FIELD_SMOOTH,
       1,
       1e-4,
       GZ_PRED_LORENZO,
       3,
       {12, 20, 40}},
      {"v2z_smooth_f64_interp2d", FIELD_SMOOTH, 0, 1e-6, GZ_PRED_INTERP, 2, {60, 70, 0}},
      {"v2z_noise_f32_auto1d", FIELD_NOISE, 1, 1e-3, GZ_PRED_AUTO, 1, {5000, 0, 0}},
      {"v2z_specials_f32_auto3d", FIELD_SPECIALS, 1, 1e-3, GZ_PRED_AUTO, 3, {8, 10, 30}},
      {"v2z_smooth_f32_lorenzo1d",
       FIELD_SMOOTH,
       1,
       1e-2,
       GZ_PRED_LORENZO,
       1,
       {20000, 0, 0}},
      {"v2z_extremes_f64_lorenzo2d",
       FIELD_EXTREMES,
       0,
       1e-3,
       GZ_PRED_LORENZO,
       2,
       {40, 50, 0}},
      {"v2z_huge_f32_auto2d", FIELD_HUGE_RANGE, 1, 1e-6, GZ_PRED_AUTO, 2, {30, 100, 0}},
      {"v2z_noise_f64_lorenzo3d", FIELD_NOISE, 0, 1e-1, GZ_PRED_LORENZO, 3, {20, 20, 40}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    size_t n;
    gz_codec_params_t p = golden_params(cases[c].is_f32, cases[c].eb, cases[c].pred,
                                        cases[c].ndims, cases[c].dims, &n);
    if (golden_write(cases[c].name, &p, cases[c].kind, cases[c].is_f32, n, 0, 2600 + c))
      return 1;
  }
  return 0;
}
