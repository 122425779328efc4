/* make_golden_v2r.c - wrote the v2r_*, v2s_* and v2t_* golden streams in this
 * folder: format version 2 with residuals coded by rANS, from the record's
 * prefix argument:
 *   v2r  as written at commit 90e37a9: two interleaved rANS states (chunk
 *        coding 3), which the codec no longer writes but must still decode;
 *   v2s  as written from issue 18's four-state coder on (chunk coding 4),
 *        which the codec no longer writes but must still decode;
 *   v2t  as written from the 32-state coder of rans32.c on (chunk coding
 *        5; the same values decoded as v2s).
 * Each case prints its chunks' predictor and coding bytes, so a record shows
 * that it holds the coding it is for. Kept for the record; not built:
 *   cc -std=c11 -Ilibgzcoll/include -Itests/codec make_golden_v2r.c \
 *      build/libgzcoll/libgzcoll.a -lzstd -lz -lm -fopenmp
 *   ./a.out v2r        (in this folder; v2s, v2t with the newer builds;
 *   the build's libgz_testlib.a, libgz_device.a and -lstdc++ as well where
 *   the tree has them) */
#include "golden_write.h"

#include <string.h>

/* The predictor (byte 0) and coding (byte 1) of every chunk of a format-2
 * stream (header 72 bytes, then per chunk its size and CRC, then a CRC). */
static void show_chunks(const char *name) {
  char path[256];
  size_t size = 0, nchunks, at;
  uint8_t *s;
  FILE *f;
  snprintf(path, sizeof path, "%s.gzc", name);
  f = fopen(path, "rb");
  s = malloc(1 << 24);
  if (f && s)
    size = fread(s, 1, 1 << 24, f);
  if (f)
    fclose(f);
  if (size < 76) {
    free(s);
    return;
  }
  nchunks = (size_t)s[36] | (size_t)s[37] << 8 | (size_t)s[38] << 16;
  at = 72 + 8 * nchunks + 4;
  printf("  %s chunks:", name);
  for (size_t c = 0; c < nchunks && at + 2 <= size; c++) {
    size_t len = (size_t)s[72 + 8 * c] | (size_t)s[73 + 8 * c] << 8 |
                 (size_t)s[74 + 8 * c] << 16 | (size_t)s[75 + 8 * c] << 24;
    printf(" (kind %u, coding %u)", s[at], s[at] ? s[at + 1] : 0);
    at += len;
  }
  printf("\n");
  free(s);
}

int main(int argc, char **argv) {
  const char *prefix = argc > 1 ? argv[1] : "v2r";
  /* the last case in chunks of 4800 values (4 slabs), the others in one */
  golden_case_t cases[] = {
      {"smooth_f32_qinterp3d", FIELD_SMOOTH, 1, 1e-4, GZ_PRED_QINTERP, 3, {16, 24, 40}},
      {"smooth_f64_qlorenzo2d", FIELD_SMOOTH, 0, 1e-6, GZ_PRED_QLORENZO, 2, {50, 61}},
      {"specials_f32_auto3d", FIELD_SPECIALS, 1, 1e-3, GZ_PRED_AUTO, 3, {9, 20, 33}},
      {"smooth_f32_lorenzo1d", FIELD_SMOOTH, 1, 1e-3, GZ_PRED_LORENZO, 1, {6001}},
      {"noise_f64_auto2d", FIELD_NOISE, 0, 1e-2, GZ_PRED_AUTO, 2, {45, 47}},
      {"smooth_f32_auto3d_chunks", FIELD_SMOOTH, 1, 1e-4, GZ_PRED_AUTO, 3, {12, 30, 40}},
  };
  size_t ncases = sizeof cases / sizeof *cases;
  for (size_t c = 0; c < ncases; c++) {
    size_t n;
    uint32_t chunk = c + 1 == ncases ? 4800 : 0;
    char name[128];
    gz_codec_params_t p = golden_params(cases[c].is_f32, cases[c].eb, cases[c].pred,
                                        cases[c].ndims, cases[c].dims, &n);
    p.chunk_len = chunk;
    snprintf(name, sizeof name, "%s_%s", prefix, cases[c].name);
    if (golden_write(name, &p, cases[c].kind, cases[c].is_f32, n, chunk, 2700 + c))
      return 1;
    show_chunks(name);
  }
  return 0;
}
