/* test_codec_simd.c - the integer-code kernels compiled for AVX2 give the
 * same codes, values, largest |code|, bytes and errors as the portable
 * loops (libgzcoll/src/codec/codes.c, chosen with gz_codes_simd), and the
 * fused decode+dequantize the values of decode then dequantize: smooth
 * and noisy data, ties, values beyond the code limit, NaN and infinities,
 * codes beyond 2^51 (the dequantizer's other path), every block width; and
 * the int32 code kernels, whose encoded bytes must equal those of the same
 * codes as int64; and format-2 streams (chunk2.c's quantizer, chosen with
 * gz_chunk2_simd) are the same bytes with either set, on every field of
 * codec_fields.h, odd lengths, several bounds, and so are the value
 * predictors' bins and escapes (pred_value.c) and the streams of Lorenzo on
 * codes quantized and predicted in one pass; level 2 (AVX-512: QLORENZO's
 * encoder and QINTERP's sweeps along a line) where the CPU has it. On a CPU
 * without AVX2 the test says so and skips. */
#include "gz_test.h"

#include "codec/chunk2.h"
#include "codec/codec.h"
#include "codec/predict.h"
#include "codec_check.h"
#include "codec_fields.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 10007 /* not a multiple of a block, a tile or a vector */

typedef struct out {
  gz_result_t rc_q32, rc_q64, rc_enc, rc_dec, rc_red;
  int64_t q32[N], q64[N], dec[N], red[N], amax32, amax64;
  float y32[N];
  double y64[N];
  uint8_t enc[N * 9];
  size_t enc_size;
  /* int32 codes */
  gz_result_t rc32_q32, rc32_q64, rc32_enc, rc32_dec, rc32_red;
  int32_t n32_q32[N], n32_q64[N], n32_dec[N], n32_red[N];
  int64_t amax32_32;
  float y32_32[N];
  uint8_t enc32[N * 9];
  size_t enc32_size;
  /* decode fused with dequantization, from enc */
  gz_result_t rc_dv32, rc_dv64;
  float v32[N];
  double v64[N];
  int64_t vamax32, vamax64;
} out_t;

static int32_t codes32[N]; /* int32 codes (the int64 ones narrowed) */

static void run(int level, const float *xf, const double *xd, const int64_t *codes,
                double eb, int64_t limit, out_t *o) {
  GZ_CHECK(gz_codes_simd(level) == level, "level %d taken", level);
  o->rc_q32 = gz_quantize(GZ_FLOAT32, xf, N, eb, limit, o->q32);
  o->rc_q64 = gz_quantize(GZ_FLOAT64, xd, N, eb, limit, o->q64);
  gz_dequantize_absmax(GZ_FLOAT32, codes, N, eb, o->y32, &o->amax32);
  gz_dequantize_absmax(GZ_FLOAT64, codes, N, eb, o->y64, &o->amax64);
  o->rc_enc = gz_codes_encode(codes, N, o->enc, sizeof o->enc, &o->enc_size);
  o->rc_dec = gz_codes_decode(o->enc, o->enc_size, o->dec, N);
  o->rc_dv32 =
      gz_codes_decode_values(o->enc, o->enc_size, GZ_FLOAT32, N, eb, o->v32, &o->vamax32);
  o->rc_dv64 =
      gz_codes_decode_values(o->enc, o->enc_size, GZ_FLOAT64, N, eb, o->v64, &o->vamax64);
  memcpy(o->red, codes, sizeof o->red);
  o->rc_red = gz_codes_decode_reduce(GZ_OP_SUM, o->enc, o->enc_size, o->red, N);
  limit = limit < INT32_MAX ? limit : INT32_MAX;
  o->rc32_q32 = gz_quantize32(GZ_FLOAT32, xf, N, eb, limit, o->n32_q32);
  o->rc32_q64 = gz_quantize32(GZ_FLOAT64, xd, N, eb, limit, o->n32_q64);
  gz_dequantize32_absmax(GZ_FLOAT32, codes32, N, eb, o->y32_32, &o->amax32_32);
  o->rc32_enc =
      gz_codes_encode_w(codes32, 1, N, o->enc32, sizeof o->enc32, &o->enc32_size);
  o->rc32_dec =
      gz_codes_decode_w(0, GZ_OP_SUM, o->enc32, o->enc32_size, o->n32_dec, 1, N);
  memcpy(o->n32_red, codes32, sizeof o->n32_red);
  o->rc32_red =
      gz_codes_decode_w(1, GZ_OP_SUM, o->enc32, o->enc32_size, o->n32_red, 1, N);
}

static void compare(const char *what, const out_t *a, const out_t *b,
                    const int64_t *codes) {
  GZ_CHECK(a->rc_q32 == b->rc_q32 && a->rc_q64 == b->rc_q64, "%s: quantize results",
           what);
  GZ_CHECK(!memcmp(a->q32, b->q32, sizeof a->q32), "%s: float32 codes", what);
  GZ_CHECK(!memcmp(a->q64, b->q64, sizeof a->q64), "%s: float64 codes", what);
  GZ_CHECK(!memcmp(a->y32, b->y32, sizeof a->y32) &&
               !memcmp(a->y64, b->y64, sizeof a->y64),
           "%s: dequantized values", what);
  GZ_CHECK(a->amax32 == b->amax32 && a->amax64 == b->amax64, "%s: largest |code|", what);
  GZ_CHECK(a->rc_enc == GZ_OK && b->rc_enc == GZ_OK && a->enc_size == b->enc_size &&
               !memcmp(a->enc, b->enc, a->enc_size),
           "%s: encoded bytes", what);
  GZ_CHECK(a->rc_dec == GZ_OK && b->rc_dec == GZ_OK &&
               !memcmp(a->dec, codes, sizeof a->dec) &&
               !memcmp(b->dec, codes, sizeof b->dec),
           "%s: decoded codes", what);
  GZ_CHECK(a->rc_red == b->rc_red && !memcmp(a->red, b->red, sizeof a->red),
           "%s: decode+reduce", what);
  for (int k = 0; k < 2; k++) { /* each level: decode then dequantize, fused */
    const out_t *o = k ? b : a;
    GZ_CHECK(o->rc_dv32 == GZ_OK && o->rc_dv64 == GZ_OK &&
                 !memcmp(o->v32, o->y32, sizeof o->v32) &&
                 !memcmp(o->v64, o->y64, sizeof o->v64),
             "%s: decode+dequantize (level %d) gives the values of decode then "
             "dequantize",
             what, k);
    GZ_CHECK(o->vamax32 == o->amax32 && o->vamax64 == o->amax64,
             "%s: decode+dequantize's largest |code| (level %d)", what, k);
  }
  GZ_CHECK(a->rc32_q32 == b->rc32_q32 && a->rc32_q64 == b->rc32_q64 &&
               !memcmp(a->n32_q32, b->n32_q32, sizeof a->n32_q32) &&
               !memcmp(a->n32_q64, b->n32_q64, sizeof a->n32_q64),
           "%s: int32 quantize", what);
  GZ_CHECK(!memcmp(a->y32_32, b->y32_32, sizeof a->y32_32) &&
               a->amax32_32 == b->amax32_32,
           "%s: int32 dequantize", what);
  GZ_CHECK(a->rc32_enc == GZ_OK && b->rc32_enc == GZ_OK &&
               a->enc32_size == b->enc32_size &&
               !memcmp(a->enc32, b->enc32, a->enc32_size),
           "%s: int32 encoded bytes", what);
  GZ_CHECK(a->rc32_dec == GZ_OK && b->rc32_dec == GZ_OK &&
               !memcmp(a->n32_dec, codes32, sizeof a->n32_dec) &&
               !memcmp(b->n32_dec, codes32, sizeof b->n32_dec),
           "%s: int32 decoded codes", what);
  GZ_CHECK(a->rc32_red == b->rc32_red &&
               !memcmp(a->n32_red, b->n32_red, sizeof a->n32_red),
           "%s: int32 decode+reduce", what);
}

/* int32 codes against int64: the same codes, bytes and values. */
static void check_narrow(const char *what, const out_t *o, const int64_t *codes,
                         double eb) {
  size_t bad = 0, twice = 0;
  int64_t m = 0;
  for (size_t i = 0; i < N; i++) {
    int64_t c = codes32[i], a = c < 0 ? -c : c;
    m = a > m ? a : m;
    bad += o->y32_32[i] != (float)((double)c * (2.0 * eb));
    twice += o->n32_red[i] != 2 * c;
  }
  GZ_CHECK(bad == 0 && o->amax32_32 == m, "%s: int32 dequantize vs reference", what);
  GZ_CHECK(o->rc32_red == GZ_OK && twice == 0, "%s: int32 decode+reduce sums", what);
  if (o->rc_q32 == GZ_OK) {
    size_t diff = 0;
    for (size_t i = 0; i < N; i++)
      diff += o->n32_q32[i] != o->q32[i] || o->n32_q64[i] != o->q64[i];
    GZ_CHECK(o->rc32_q32 == GZ_OK && o->rc32_q64 == GZ_OK && diff == 0,
             "%s: int32 and int64 quantization differ", what);
  }
  (void)codes;
}

/* The reference for the dequantizer and the largest |code|. */
static void check_dequant(const char *what, const out_t *o, const int64_t *codes,
                          double eb) {
  size_t bad = 0;
  uint64_t m = 0;
  for (size_t i = 0; i < N; i++) {
    uint64_t a = codes[i] < 0 ? 0 - (uint64_t)codes[i] : (uint64_t)codes[i];
    double r = (double)codes[i] * (2.0 * eb);
    m = a > m ? a : m;
    bad += o->y64[i] != r || o->y32[i] != (float)r;
  }
  GZ_CHECK(bad == 0, "%s: %zu values differ from (T)(2eb * (double)q)", what, bad);
  GZ_CHECK((uint64_t)o->amax64 == m && (uint64_t)o->amax32 == m, "%s: largest |code|",
           what);
}

/* A format-2 stream of x (float32, 3-D box) with the quantizer at level. */
static uint8_t *stream2(int level, const float *x, const size_t dims[3], double eb,
                        gz_predictor_t pred, size_t *size) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t n = dims[0] * dims[1] * dims[2], cap = gz_compress_bound(GZ_FLOAT32, n, 0);
  uint8_t *s = malloc(cap);
  GZ_CHECK(gz_chunk2_simd(level) == level, "chunk2 level %d taken", level);
  p.error_bound = eb;
  p.predictor = pred;
  p.threads = 1;
  p.ndims = 3;
  memcpy(p.dims, dims, 3 * sizeof *dims);
  *size = 0;
  GZ_CHECK(s && gz_compress(&p, x, n, s, cap, size) == GZ_OK, "format 2 compresses");
  return s;
}

static void test_stream2(void) {
  static const size_t shapes[2][3] = {{7, 33, 129}, {1, 1, 20011}};
  static const double ebs[3] = {1e-2, 1e-4, 1e-7};
  static float x[7 * 33 * 129];
  for (int kind = 0; kind < FIELD_COUNT; kind++)
    for (int sh = 0; sh < 2; sh++)
      for (int e = 0; e < 3; e++)
        for (int pred = GZ_PRED_LORENZO; pred <= GZ_PRED_AUTO; pred += 2) {
          const size_t *d = shapes[sh];
          size_t n = d[0] * d[1] * d[2], sa, sb;
          uint8_t *a, *b;
          field_fill((field_kind_t)kind, 1, x, n, 29 + (uint64_t)kind);
          a = stream2(0, x, d, ebs[e], (gz_predictor_t)pred, &sa);
          /* level 1 AVX2, 2 QLORENZO's encoder in AVX-512 (where the CPU has it) */
          for (int level = 1; level <= 2 && gz_chunk2_simd(level) == level; level++) {
            b = stream2(level, x, d, ebs[e], (gz_predictor_t)pred, &sb);
            GZ_CHECK(sa == sb && !memcmp(a, b, sa),
                     "format 2, %s, %zu values, eb %g, predictor %d: the same bytes from "
                     "the portable quantizer and level %d",
                     field_names[kind], n, ebs[e], pred, level);
            free(b);
          }
          free(a);
        }
  gz_chunk2_simd(-1);
}

/* QINTERP's visiting order checked against pred_interp.c's, which shares
 * no code with pred_value.c's traversals (the 1-D wavefront in blocks,
 * the levels plane by plane and row by row): its decoder fed the bins times 32
 * (R - P = 32 k) rebuilds every reconstructed code R, whose values must be
 * pred_value.c's decoder's bit for bit and, where not escaped, within eb of
 * x. A bin stored at another point's place, or a point predicted from a
 * neighbour not yet coded, breaks both. */
static void check_vinterp_order(const char *what, const float *x, const size_t d[3],
                                double eb, const uint64_t *u, const uint8_t *esc) {
  enum { M = 7 * 33 * 129 };
  static uint64_t w[M], R[M];
  static int64_t q[M];
  static float y[M];
  size_t n = d[0] * d[1] * d[2], differ = 0, beyond = 0;
  double unit, inv_unit;
  gz_vq_grid(eb, &unit, &inv_unit);
  for (size_t i = 0; i < n; i++)
    w[i] = gz_pred_zigzag(gz_pred_unzigzag(u[i]) << 5);
  gz_interp_decode(w, d, q);
  gz_vpred_decode(GZ_VPRED_INTERP, 0, u, d, eb, R, y);
  for (size_t i = 0; i < n; i++) {
    float r = (float)((double)q[i] * unit);
    differ += memcmp(&r, &y[i], sizeof r) != 0;
    beyond += !esc[i] && !(fabs((double)x[i] - (double)r) <= eb);
  }
  GZ_CHECK(differ == 0 && beyond == 0,
           "%s: QINTERP in pred_interp.c's order (%zu values differ, %zu beyond eb)",
           what, differ, beyond);
}

/* The value predictors (pred_value.c; QLORENZO by rows in passes and
 * QINTERP four points at a time in the AVX2 encoder, its sweeps along lines
 * eight at a time with AVX-512 too, each checked): the same bins, escape
 * flags and escape count as the portable encoder, point by point, and
 * QLORENZO the same reconstructions (of the two planes its AVX2 encoder
 * keeps) and the runs of its flags (which it lists), also in AVX-512 where
 * the CPU has it, on every field of codec_fields.h plus
 * one of values whose reconstruction rounds beyond the bound in float32
 * (escapes found only by the bound check) and one of specials among them
 * (runs of NaN, Inf or fill values of every length, across the row
 * encoder's pieces and at the ends of rows, -0.0, +0.0, subnormals, next to
 * the rounding escapes), shapes that are odd along every axis, rows longer
 * than its pieces of 256, rows of 16 to 47 values (QINTERP's level 1 codes
 * the cubic rows' two sweeps at once, eight values at a time from 16 on,
 * sixteen with AVX-512, with their ends at 16 + 0, 1, 8, 15, 24 and 31),
 * and 2-D, 1-D and single-row boxes; the count also
 * equals the flags set. The AVX2 decoder (QINTERP four points at a time)
 * writes the portable one's values bit for bit, from those bins and from
 * hostile ones. */
static void fill_specials(float *x, size_t n) {
  /* -6e10: refused, its rounding shift a negative double at eb 1e-4 */
  static const float odd[7] = {-0.0f, 0.0f, 1e-40f, -1e-42f, INFINITY, -INFINITY, -6e10f};
  size_t i = 0;
  for (size_t k = 0; k < n; k++) /* beyond float32's resolution at eb 1e-4 */
    x[k] = (float)(3000.0 + 0.01 * sin(0.002 * (double)k) + 1e-4 * (double)(k % 7));
  for (size_t r = 0; i < n; r++) { /* a run of NaN or fill values, a gap with specials */
    size_t len = r % 7 == 6 ? 250 + r % 20 : 1 + (r * 37) % 97;
    for (size_t k = i; k < i + len && k < n; k++)
      x[k] = r % 2 ? NAN : -9.96921e36f;
    i += len;
    for (size_t k = 0; k < 3 && i + 2 * k < n; k++)
      x[i + 2 * k] = odd[(r + k) % 7];
    i += 1 + (r * 53) % 113;
  }
}

/* QINTERP on lines of every length to 80 and around the ends of the
 * wavefront's blocks (4096), in buffers of exactly their size (so that the
 * sanitizer build sees any load or store beyond the line by the sweeps
 * eight and four points at a time): the bins and escapes of the AVX-512,
 * AVX2 and portable encoders are the same, on a field with specials. */
static void test_vpred_lines(void) {
  static const size_t lens[] = {4091, 4095, 4096, 4097, 4103, 8189, 8192, 8197, 12289};
  int wide_max = gz_chunk2_simd(2) == 2;
  for (size_t t = 0; t < 80 + sizeof lens / sizeof *lens; t++) {
    size_t n = t < 80 ? t + 1 : lens[t - 80], d[3] = {1, 1, n}, nb[3];
    float *x = malloc(n * sizeof *x);
    uint64_t *R = malloc(n * sizeof *R), *u[3];
    uint8_t *esc[3];
    GZ_CHECK(x && R, "line of %zu: memory", n);
    fill_specials(x, n);
    for (size_t i = 0; i < n; i += 5) /* smooth between the specials */
      x[i] = (float)sin(0.01 * (double)i);
    for (int level = 0; level < 3; level++) { /* portable, AVX2, AVX-512 */
      u[level] = malloc(n * sizeof **u);
      esc[level] = malloc(n);
      GZ_CHECK(u[level] && esc[level], "line of %zu: memory", n);
      gz_chunk2_simd(level);
      nb[level] = gz_vpred_encode(GZ_VPRED_INTERP, 0, x, d, 1e-4, R, u[level], esc[level],
                                  NULL, NULL);
    }
    for (int level = 1; level <= 1 + wide_max; level++)
      GZ_CHECK(
          nb[level] == nb[0] && !memcmp(u[level], u[0], n * sizeof **u) &&
              !memcmp(esc[level], esc[0], n),
          "QINTERP on a line of %zu: the %s encoder's bins and escapes (%zu) are the "
          "portable one's (%zu)",
          n, level > 1 ? "AVX-512" : "AVX2", nb[level], nb[0]);
    for (int level = 0; level < 3; level++) {
      free(u[level]);
      free(esc[level]);
    }
    free(x);
    free(R);
  }
  gz_chunk2_simd(-1);
}

/* Whether runs (nr uint32: start, end, ...) are the runs of set flags, each
 * as long as it goes, in order. */
static int runs_of(const uint8_t *flag, size_t n, const uint32_t *runs, size_t nr) {
  size_t r = 0;
  for (size_t i = 0, e; i < n; i = e) {
    for (e = i; e < n && flag[e] == flag[i]; e++)
      ;
    if (!flag[i])
      continue;
    if (r + 2 > nr || runs[r] != i || runs[r + 1] != e)
      return 0;
    r += 2;
  }
  return r == nr;
}

static void test_vpred(void) {
  static const size_t shapes[][3] = {
      {7, 33, 129}, {3, 5, 601},  {1, 41, 67}, {1, 1, 20011}, {1, 1, 5},
      {11, 9, 7},   {1, 1, 8193}, {29, 2, 3},  {9, 12, 16},   {13, 7, 24},
      {8, 10, 17},  {7, 8, 31},   {6, 9, 40},  {9, 7, 47},    {7, 8, 32}};
  static const double ebs[3] = {1e-1, 1e-4, 1e-7};
  enum { M = 7 * 33 * 129 };
  static float x[M], ya[M], yb[M];
  static uint64_t Ra[M], Rb[M], ua[M], ub[M], Rc[M], uc[M];
  static uint8_t ea[M], eb8[M], ec[M];
  static uint32_t runs[M + 1];
  size_t nruns;
  for (int kind = 0; kind <= FIELD_COUNT + 1; kind++)
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
      for (int e = 0; e < 3; e++)
        for (int pk = GZ_VPRED_LORENZO; pk <= GZ_VPRED_INTERP; pk++) {
          const size_t *d = shapes[sh];
          size_t n = d[0] * d[1] * d[2], na, nb, flags = 0;
          const char *name = kind < FIELD_COUNT    ? field_names[kind]
                             : kind == FIELD_COUNT ? "rounding"
                                                   : "specials";
          if (kind < FIELD_COUNT) {
            field_fill((field_kind_t)kind, 1, x, n, 31 + (uint64_t)kind);
          } else if (kind > FIELD_COUNT) {
            fill_specials(x, n);
          } else { /* float32 spacing near 3000 is 2.4e-4: coarser than 2 eb */
            for (size_t i = 0; i < n; i++)
              x[i] = (float)(3000.0 + 0.01 * sin(0.001 * (double)i) +
                             1e-4 * (double)(i % 7));
            x[n / 2] = NAN;
          }
          gz_chunk2_simd(0);
          memset(Ra, 0xa5, n * sizeof *Ra); /* scratch as left by an earlier chunk */
          na = gz_vpred_encode(pk, 0, x, d, ebs[e], Ra, ua, ea, NULL, NULL);
          GZ_CHECK(gz_chunk2_simd(1) == 1, "AVX2 taken");
          memset(Rb, 0x5a, n * sizeof *Rb);
          nb = gz_vpred_encode(pk, 0, x, d, ebs[e], Rb, ub, eb8, runs, &nruns);
          for (size_t i = 0; i < n; i++)
            flags += eb8[i];
          GZ_CHECK(
              pk == GZ_VPRED_LORENZO ? runs_of(eb8, n, runs, nruns) : nruns == SIZE_MAX,
              "predictor %d, %s, %zux%zux%zu, eb %g: the AVX2 encoder lists the runs "
              "of escapes of its flags (QLORENZO only)",
              pk, name, d[0], d[1], d[2], ebs[e]);
          GZ_CHECK(na == nb && nb == flags && !memcmp(ua, ub, n * sizeof *ua) &&
                       !memcmp(ea, eb8, n),
                   "predictor %d, %s, %zux%zux%zu, eb %g: the AVX2 encoder's bins and "
                   "escapes (%zu, %zu flagged) are the portable one's (%zu)",
                   pk, name, d[0], d[1], d[2], ebs[e], nb, flags, na);
          /* (QINTERP's last sweep keeps no R; QLORENZO's AVX2 encoder keeps
           * two planes in turn, plane i at (i mod 2) planes: the last two) */
          for (size_t i = d[0] > 2 ? d[0] - 2 : 0, pl = d[1] * d[2];
               pk == GZ_VPRED_LORENZO && i < d[0]; i++)
            GZ_CHECK(!memcmp(Ra + i * pl, Rb + (i & 1) * pl, pl * sizeof *Ra),
                     "QLORENZO, %s, %zux%zux%zu, eb %g: the AVX2 encoder's "
                     "reconstructions of plane %zu are the portable one's",
                     name, d[0], d[1], d[2], ebs[e], i);
          if (gz_chunk2_simd(2) == 2) { /* QLORENZO's AVX-512 encoder */
            size_t nc;
            memset(Rc, 0x3c, n * sizeof *Rc);
            nc = gz_vpred_encode(pk, 0, x, d, ebs[e], Rc, uc, ec, runs, &nruns);
            GZ_CHECK(
                nc == nb && !memcmp(uc, ub, n * sizeof *uc) && !memcmp(ec, eb8, n) &&
                    (pk == GZ_VPRED_INTERP ||
                     (!memcmp(Rc, Rb, (d[0] > 1 ? 2 : 1) * d[1] * d[2] * sizeof *Rc) &&
                      runs_of(ec, n, runs, nruns))),
                "predictor %d, %s, %zux%zux%zu, eb %g: level 2's (AVX-512) bins, "
                "escapes (%zu), kept reconstructions and runs are AVX2's",
                pk, name, d[0], d[1], d[2], ebs[e], nc);
          }
          GZ_CHECK(gz_chunk2_simd(1) == 1, "AVX2 taken");
          if (pk == GZ_VPRED_INTERP) {
            char what[96];
            snprintf(what, sizeof what, "%s, %zux%zux%zu, eb %g", name, d[0], d[1], d[2],
                     ebs[e]);
            check_vinterp_order(what, x, d, ebs[e], ub, eb8); /* AVX2 still chosen */
            gz_chunk2_simd(0);
            check_vinterp_order(what, x, d, ebs[e], ua, ea);
            gz_chunk2_simd(1);
          }
          /* and the decoders, on these bins and on hostile ones (any 64 bits,
           * codes far beyond 2^51) */
          for (int hostile = 0; hostile < 2; hostile++) {
            if (hostile) {
              gz_rng_t rng;
              gz_rng_seed(&rng, 5 + n);
              for (size_t i = 0; i < n; i++)
                ua[i] = i % 5 ? ua[i] : gz_rng_next(&rng);
            }
            gz_chunk2_simd(0);
            gz_vpred_decode(pk, 0, ua, d, ebs[e], Ra, ya);
            gz_chunk2_simd(1);
            gz_vpred_decode(pk, 0, ua, d, ebs[e], Rb, yb);
            GZ_CHECK(!memcmp(ya, yb, n * sizeof *ya),
                     "predictor %d, %s, %zux%zux%zu, eb %g%s: the AVX2 decoder's values "
                     "are the portable one's",
                     pk, name, d[0], d[1], d[2], ebs[e], hostile ? ", hostile bins" : "");
          }
        }
  gz_chunk2_simd(-1);
}

/* gz_quantize32_range (the collectives' codes and range in one read): the
 * portable loop and the AVX2 intrinsics give the same codes, range (to the
 * sign of a zero) and result, the codes are gz_quantize's, the range is the
 * minimum and maximum of the values but NaN, and a NaN or a code beyond the
 * limit (an infinity among them) is
 * GZ_ERR_RANGE; lengths below, at and off the vector and lane widths. */
static void test_quant32_range(const float *xf, const double *xd, double eb,
                               int64_t limit, const char *what) {
  static const size_t lens[] = {0, 1, 7, 15, 16, 17, 33, 4096, 4099, N};
  static int32_t q[2][2][N];
  static int64_t ref[N];
  limit = limit < INT32_MAX ? limit : INT32_MAX;
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int t = 0; t < 2; t++) {
      size_t n = lens[li];
      gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
      const void *x = t ? (const void *)xd : (const void *)xf;
      double lo[2], hi[2], rlo = INFINITY, rhi = -INFINITY, amax;
      gz_result_t rc[2];
      int nan = 0;
      for (int level = 0; level < 2; level++) {
        gz_codes_simd(level);
        rc[level] =
            gz_quantize32_range(dt, x, n, eb, limit, q[level][t], &lo[level], &hi[level]);
      }
      GZ_CHECK(rc[0] == rc[1] && !memcmp(&lo[0], &lo[1], sizeof lo[0]) &&
                   !memcmp(&hi[0], &hi[1], sizeof hi[0]) &&
                   (rc[0] != GZ_OK || !memcmp(q[0][t], q[1][t], n * sizeof(int32_t))),
               "%s, %s, %zu values: int32 codes and range, portable and AVX2", what,
               t ? "float64" : "float32", n);
      for (size_t i = 0; i < n; i++) {
        double v = t ? xd[i] : (double)xf[i];
        nan |= v != v;
        if (v == v) {
          rlo = v < rlo ? v : rlo;
          rhi = v > rhi ? v : rhi;
        }
      }
      amax = rhi >= rlo ? fmax(fabs(rlo), fabs(rhi)) : 0.0;
      GZ_CHECK(rhi >= rlo ? lo[0] == rlo && hi[0] == rhi : !(hi[0] >= lo[0]),
               "%s, %zu values: the range is the minimum and maximum but NaN", what, n);
      GZ_CHECK((rc[0] == GZ_OK) == (!nan && (rhi < rlo || fabs(rint(amax / (2.0 * eb))) <=
                                                              (double)limit)),
               "%s, %s, %zu values: refused exactly for a NaN or a code beyond the "
               "limit (rc %d)",
               what, t ? "float64" : "float32", n, (int)rc[0]);
      if (rc[0] == GZ_OK && n) {
        size_t diff = 0;
        gz_codes_simd(0);
        gz_quantize(dt, x, n, eb, INT64_C(1) << 50, ref); /* ties: RANGE, same codes */
        for (size_t i = 0; i < n; i++)
          diff += ref[i] != q[0][t][i];
        GZ_CHECK(diff == 0, "%s, %zu values: %zu codes differ from gz_quantize's", what,
                 n, diff);
      }
    }
  gz_codes_simd(1);
}

#define NE (32 * 40 + 13) /* values of the edge cases */

/* decode+dequantize of a message at both levels: the same rc and, when
 * accepted, values and largest |code| (float32 and float64). */
static void values_alike(const char *what, const uint8_t *msg, size_t size, size_t n) {
  static float f[2][NE];
  static double d[2][NE];
  int64_t af[2], ad[2];
  gz_result_t rf[2], rd[2];
  for (int level = 0; level < 2; level++) {
    gz_codes_simd(level);
    memset(f[level], 0, sizeof f[level]);
    memset(d[level], 0, sizeof d[level]);
    af[level] = ad[level] = -1;
    rf[level] =
        gz_codes_decode_values(msg, size, GZ_FLOAT32, n, 1e-3, f[level], &af[level]);
    rd[level] =
        gz_codes_decode_values(msg, size, GZ_FLOAT64, n, 1e-3, d[level], &ad[level]);
  }
  /* (what a refused message leaves in the output is not specified) */
  GZ_CHECK(rf[0] == rf[1] && rd[0] == rd[1] &&
               (rf[0] != GZ_OK || (af[0] == af[1] && !memcmp(f[0], f[1], sizeof f[0]))) &&
               (rd[0] != GZ_OK || (ad[0] == ad[1] && !memcmp(d[0], d[1], sizeof d[0]))),
           "%s: decode+dequantize alike at both levels (rc %d %d, amax %lld %lld)", what,
           (int)rf[0], (int)rf[1], (long long)af[0], (long long)af[1]);
}

/* int32 codes at the edges of the collectives' fast block paths (codes.c:
 * gz_put_payload32 for encode, unpack_avx2.h for decode and decode+reduce):
 * deltas of every width 0..33 bits (33: wrapped differences), first codes
 * beyond 2^30, codes leaving [-2^30, 2^30) inside a block, SUMs that
 * overflow int32, a partial last block and a truncated message. Both
 * levels give the bytes of the same codes as int64 and the results of a
 * plain loop, rc included. */
static void test_narrow_edges(gz_rng_t *rng) {
  static int32_t q[NE], acc0[NE], got[2][NE];
  static int64_t wide[NE];
  static uint8_t enc[2][NE * 9], enc64[NE * 9];
  size_t size[2] = {0, 0}, size64 = 0;
  for (size_t i = 0; i < NE; i++) {
    size_t b = i / 32, k = i % 32;
    int wbits = (int)(b % 34); /* delta width of block b */
    uint64_t r = gz_rng_next(rng);
    int64_t d = wbits ? (int64_t)(r >> (64 - wbits)) - (INT64_C(1) << (wbits - 1)) : 0;
    int64_t v = k == 0 ? (int64_t)(int32_t)(r >> 32) >> (b % 3) : wide[i - 1] + d;
    if (v > INT32_MAX || v < INT32_MIN) /* wraps: differences of 32-33 bits */
      v = (int32_t)(uint32_t)(uint64_t)v;
    if (b % 7 == 3 && k > 20) /* leaves [-2^30, 2^30) inside the block */
      v = (INT64_C(1) << 30) + (int64_t)k;
    wide[i] = v;
    q[i] = (int32_t)v;
    if (b == 1) /* positive: only this block (w = 1) overflows a SUM */
      wide[i] = q[i] = k ? q[i - 1] + (int32_t)(r & 1) : (int32_t)(r >> 34);
    acc0[i] = b == 1 ? INT32_MAX - (int32_t)k : 0;
  }
  gz_codes_encode(wide, NE, enc64, sizeof enc64, &size64);
  for (int level = 0; level < 2; level++) {
    gz_codes_simd(level);
    GZ_CHECK(gz_codes_encode_w(q, 1, NE, enc[level], sizeof enc[level], &size[level]) ==
                     GZ_OK &&
                 size[level] == size64 && !memcmp(enc[level], enc64, size64),
             "edges, level %d: int32 codes encode to the bytes of the same int64 codes",
             level);
  }
  values_alike("edges", enc64, size64, NE);
  { /* small codes, the largest |code| a negative one */
    static int64_t small[NE];
    size_t ssize = 0;
    for (size_t i = 0; i < NE; i++)
      small[i] = (int64_t)(i % 97) - 500 + (i / 32 % 2 ? 0 : 300);
    gz_codes_encode(small, NE, enc[0], sizeof enc[0], &ssize);
    values_alike("small negative codes", enc[0], ssize, NE);
  }
  values_alike("edges, truncated", enc64, size64 - 1, NE);
  values_alike("edges, partial", enc64, size64, NE - 1);
  for (int mode = 0; mode < 4; mode++) { /* replace, SUM, MAX, MIN */
    gz_result_t rc[2], want = GZ_OK;
    size_t diff = 0;
    for (int level = 0; level < 2; level++) {
      gz_codes_simd(level);
      memcpy(got[level], acc0, sizeof acc0);
      rc[level] = gz_codes_decode_w(mode > 0, (gz_op_t)(mode ? mode - 1 : 0), enc64,
                                    size64, got[level], 1, NE);
    }
    for (size_t i = 0; i < NE; i++) {
      int64_t a = acc0[i], c = q[i],
              r = mode == 0   ? c
                  : mode == 1 ? a + c
                  : mode == 2 ? (c > a ? c : a)
                              : (c < a ? c : a);
      if (r > INT32_MAX || r < INT32_MIN)
        want = GZ_ERR_OVERFLOW;
      diff += got[0][i] != (int32_t)(uint32_t)(uint64_t)r || got[1][i] != got[0][i];
    }
    GZ_CHECK(rc[0] == want && rc[1] == want && diff == 0,
             "edges, mode %d: both levels give a plain loop's codes (%zu differ) and rc "
             "(%d, %d, want %d)",
             mode, diff, (int)rc[0], (int)rc[1], (int)want);
    for (int level = 0; level < 2; level++) {
      gz_codes_simd(level);
      memcpy(got[level], acc0, sizeof acc0);
      rc[level] = gz_codes_decode_w(mode > 0, (gz_op_t)(mode ? mode - 1 : 0), enc64,
                                    size64 - 1, got[level], 1, NE);
    }
    GZ_CHECK(rc[0] == GZ_ERR_CORRUPT && rc[1] == GZ_ERR_CORRUPT,
             "edges, mode %d: a truncated message is corrupt at both levels", mode);
  }
  { /* int64 codes beyond int32 read as int32: both levels refuse alike */
    static int64_t big[NE];
    for (size_t i = 0; i < NE; i++) {
      size_t b = i / 32, k = i % 32;
      int64_t base = b % 3 == 0   ? INT32_MAX - 20 /* crosses it: u0 < 2^32 */
                     : b % 3 == 1 ? INT32_MIN + 20
                                  : (INT64_C(1) << 31) + 7; /* u0 > 2^32 */
      big[i] = b % 3 == 1 ? base - (int64_t)k : base + (int64_t)k;
    }
    gz_codes_encode(big, NE, enc64, sizeof enc64, &size64);
    values_alike("codes beyond int32", enc64, size64, NE);
    for (int mode = 0; mode < 4; mode++) {
      gz_result_t rc[2];
      for (int level = 0; level < 2; level++) {
        gz_codes_simd(level);
        memset(got[level], 0, sizeof got[level]);
        rc[level] = gz_codes_decode_w(mode > 0, (gz_op_t)(mode ? mode - 1 : 0), enc64,
                                      size64, got[level], 1, NE);
      }
      GZ_CHECK(rc[0] != GZ_OK && rc[0] == rc[1] && !memcmp(got[0], got[1], sizeof got[0]),
               "edges, mode %d: codes beyond int32 refused alike at both levels (%d, %d)",
               mode, (int)rc[0], (int)rc[1]);
    }
  }
  gz_codes_simd(1);
}

/* Lorenzo on codes, quantized and predicted row by row in one pass (the
 * AVX2 encoder, and AVX-512's at level 2, once the codes so far have no
 * common factor; chunk2.c's quantize_lorenzo): the same bytes as the
 * portable quantizer and
 * predictor, and within the bound, on fields that reach every branch:
 * escapes of every kind in runs across rows and at their ends
 * (fill_specials), codes with a common factor in the first rows only (the
 * rows waiting for it, predicted later), in all rows (divided by it), all
 * zero in the first rows (no factor known yet), and a smooth field; in
 * 3-D, 2-D and 1-D boxes with rows of 4 k and 4 k + 1..3 values, short and
 * long. A single chunk: its first byte is the predictor, kind 1 in a view
 * with rows (0 or 1) on at least some of them, or the fused pass was not
 * reached. */
/* A field smooth along all three axes of box d (Lorenzo in 3-D predicts it
 * best), at C-order index i. */
static double smooth3d(const size_t d[3], size_t i) {
  double a = (double)(i / (d[1] * d[2])), b = (double)(i / d[2] % d[1]),
         c = (double)(i % d[2]);
  return 3.0 * sin(0.21 * a + 0.13 * b) * cos(0.07 * c + 0.05 * b) + 0.5 * sin(0.3 * c);
}

/* The trials' size estimate (chunk2.c) at levels 0 and 2: the same double
 * as the formula's, summed in its order, on residuals around the symbol
 * cap of 255 and of every width up to 64 (conversions to double that round
 * up near powers of two), lengths off the eight lanes and the blocks. */
static void test_cost_bits(void) {
  static const size_t lens[] = {1, 7, 8, 9, 1023, 1024, 1025, 3001};
  static uint64_t u[3001];
  gz_rng_t rng;
  gz_rng_seed(&rng, 77);
  for (size_t i = 0; i < 3001; i++) {
    uint64_t r = gz_rng_next(&rng);
    int w = (int)(r % 65);             /* a width 0..64 */
    u[i] = i % 3 == 0   ? 250 + r % 10 /* the cap */
           : i % 3 == 1 ? r % 40       /* small */
           : w == 0
               ? 0
               : (UINT64_C(1) << (w - 1)) + (r >> 32) % 2 - (r >> 33) % 2; /* 2^k +-1 */
    if (i % 97 == 0)
      u[i] = UINT64_MAX - r % 3;
    if (i % 89 == 0)
      u[i] = (UINT64_C(1) << 53) + 1;
  }
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    size_t n = lens[li], h[256] = {0};
    uint64_t wide = 0;
    double want, got[2];
    for (size_t i = 0; i < n; i++) {
      h[u[i] < 255 ? u[i] : 255]++;
      for (uint64_t v = u[i]; u[i] >= 255 && v; v >>= 1)
        wide++;
    }
    want = (double)wide;
    for (int k = 0; k < 256; k++)
      if (h[k])
        want -= (double)h[k] * log2((double)h[k] / (double)n);
    gz_chunk2_simd(0);
    got[0] = gz_chunk2_cost_bits(u, n);
    got[1] = gz_chunk2_simd(2) == 2 ? gz_chunk2_cost_bits(u, n) : got[0];
    GZ_CHECK(!memcmp(&got[0], &want, sizeof want) && !memcmp(&got[1], &want, sizeof want),
             "%zu residuals: the estimate %.17g (portable), %.17g (level 2), the "
             "formula's %.17g",
             n, got[0], got[1], want);
  }
  gz_chunk2_simd(-1);
}

#define FIRST_CHUNK (72 + 8 + 4) /* stream.c: header, one index entry, its CRC */
static void test_stream2_lorenzo(void) {
  static const size_t shapes[][3] = {{7, 33, 129}, {4, 20, 64},  {1, 50, 101},
                                     {3, 300, 10}, {2, 7, 2051}, {1, 1, 20011},
                                     {12, 16, 64}};
  static const double ebs[3] = {1e-2, 1e-4, 1e-7};
  static const char *const names[5] = {"specials", "factor in the first rows",
                                       "factor everywhere", "zeros first", "smooth"};
  enum { M = 7 * 33 * 129 };
  static float x[M], y[M];
  size_t fused = 0;
  for (int kind = 0; kind < 5; kind++)
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
      for (int e = 0; e < 3; e++)
        for (int pred = GZ_PRED_LORENZO; pred <= GZ_PRED_AUTO; pred += 2) {
          const size_t *d = shapes[sh];
          size_t n = d[0] * d[1] * d[2], sa, sb;
          uint8_t *a, *b = NULL;
          GZ_CHECK(n <= M, "%zux%zux%zu fits the test's arrays", d[0], d[1], d[2]);
          if (n > M)
            continue;
          if (kind == 0)
            fill_specials(x, n);
          for (size_t i = 0; i < n; i++) {
            double v = smooth3d(d, i);
            if (kind == 0) { /* the specials kept, the rest 3000 + v (escapes at 1e-4) */
              if (x[i] > 2999.0f && x[i] < 3001.0f)
                x[i] = (float)(3000.0 + v);
            } else if (kind <= 2) { /* multiples of 0.5 (codes with a factor at every
                                       bound here), kind 1 a quarter more at a few
                                       points of its second half */
              x[i] = (float)(0.5 * rint(40.0 * v) +
                             (kind == 1 && i >= n / 2 && i % 61 == 0 ? 0.25 : 0.0));
            } else {
              x[i] = kind == 3 && i < n / 3 ? 0.0f : (float)v;
            }
          }
          a = stream2(0, x, d, ebs[e], (gz_predictor_t)pred, &sa);
          /* level 2 (where the CPU has it): eight lanes, the rest of a row
           * in AVX2's four and one by one (rows of 8 k + 1..5 values) */
          for (int level = 2; level >= 1; level--) {
            if (gz_chunk2_simd(level) != level)
              continue;
            b = stream2(level, x, d, ebs[e], (gz_predictor_t)pred, &sb);
            GZ_CHECK(sa == sb && !memcmp(a, b, sa),
                     "Lorenzo on codes, %s, %zux%zux%zu, eb %g, predictor %d: the same "
                     "bytes from the portable encoder and level %d's",
                     names[kind], d[0], d[1], d[2], ebs[e], pred, level);
            if (level == 2)
              free(b);
          }
          GZ_CHECK(gz_decompress(b, sb, y, n) == GZ_OK &&
                       codec_violations(1, x, y, n, ebs[e]) == 0,
                   "Lorenzo on codes, %s, %zux%zux%zu, eb %g: decoded within the bound",
                   names[kind], d[0], d[1], d[2], ebs[e]);
          fused += sb > FIRST_CHUNK && (b[FIRST_CHUNK] & 15) == GZ_PRED_LORENZO &&
                   (b[FIRST_CHUNK] >> 4) < 2 && d[0] * d[1] > 1;
          free(a);
          free(b);
        }
  GZ_CHECK(fused > 0, "Lorenzo on codes in a box with rows coded %zu times", fused);
  gz_chunk2_simd(-1);
}
#undef FIRST_CHUNK

int main(void) {
  static out_t a, b;
  static float xf[N];
  static double xd[N];
  static int64_t codes[N];
  const double eb = 1e-3;
  gz_rng_t rng;
  if (gz_codes_simd(1) != 1) {
    printf("no AVX2 on this CPU: the portable loops only (tested elsewhere)\n");
    return GZ_TEST_SKIP;
  }
  gz_rng_seed(&rng, 17);
  for (int kind = 0; kind < 6; kind++) {
    static const char *const names[] = {"smooth", "noise",      "ties",
                                        "limit",  "non-finite", "2^51 codes"};
    int64_t limit = INT64_C(1) << 40;
    for (size_t i = 0; i < N; i++) {
      double v = sin(0.01 * (double)i) + 0.001 * gz_rng_normal(&rng);
      if (kind == 1)
        v = 1e3 * gz_rng_normal(&rng);
      if (kind == 2) /* x / 2eb = k + 1/2 in binary: every value a tie */
        v = ((double)(i % 200) - 100.0 + 0.5) * 0.0078125;
      xd[i] = v;
      xf[i] = (float)v;
      /* codes of every width up to 40 bits, with runs of equal codes */
      codes[i] =
          (int64_t)(gz_rng_next(&rng) >> (24 + i % 40)) - (INT64_C(1) << (39 - i % 40));
      if (i % 97 < 20)
        codes[i] = i ? codes[i - 1] : 0;
    }
    if (kind == 2)
      limit = 1000;
    if (kind == 3) {
      limit = 1000; /* some values beyond it */
      xd[5] = xf[5] = 3.0f;
    }
    if (kind == 4) {
      xd[7] = NAN;
      xf[7] = NAN;
      xd[N - 1] = INFINITY;
      xf[N - 1] = -INFINITY;
    }
    if (kind == 5)
      for (size_t i = 0; i < N; i += 101)
        codes[i] = (i & 1 ? -1 : 1) * ((INT64_C(1) << 52) - (int64_t)i);
    for (size_t i = 0; i < N; i++) /* below 2^30: twice fits */
      codes32[i] = (int32_t)(codes[i] % (INT64_C(1) << 30));
    {
      size_t size = 0;
      static uint8_t enc64[N * 9];
      static int64_t wide[N];
      for (size_t i = 0; i < N; i++)
        wide[i] = codes32[i];
      gz_codes_encode(wide, N, enc64, sizeof enc64, &size);
      run(1, xf, xd, codes, eb, limit, &b);
      GZ_CHECK(b.enc32_size == size && !memcmp(b.enc32, enc64, size),
               "%s: int32 codes encode to the bytes of the same int64 codes",
               names[kind]);
    }
    test_quant32_range(xf, xd, kind == 2 ? 0.00390625 : eb, limit, names[kind]);
    run(0, xf, xd, codes, kind == 2 ? 0.00390625 : eb, limit, &a);
    run(1, xf, xd, codes, kind == 2 ? 0.00390625 : eb, limit, &b);
    compare(names[kind], &a, &b, codes);
    check_dequant(names[kind], &a, codes, kind == 2 ? 0.00390625 : eb);
    check_narrow(names[kind], &a, codes, kind == 2 ? 0.00390625 : eb);
    if (kind == 0)
      GZ_CHECK(a.rc_q32 == GZ_OK && a.rc_q64 == GZ_OK, "smooth data quantizes");
    if (kind == 3 || kind == 4)
      GZ_CHECK(a.rc_q32 == GZ_ERR_RANGE && a.rc_q64 == GZ_ERR_RANGE, "%s refused",
               names[kind]);
  }
  { /* zeros of both signs (the lanes' order decides the sign of a bound),
       then a NaN in the last vector and one in the tail */
    for (size_t i = 0; i < N; i++) {
      xd[i] = i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : 1e-3 * (double)(i % 5);
      xf[i] = (float)xd[i];
    }
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "signed zeros");
    for (size_t i = 0; i < N; i++)
      xd[i] = xf[i] = -(float)xd[i];
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "signed zeros, negated");
    for (size_t i = 0; i < N; i++) { /* lanes 8-15 decide the upper bound */
      xd[i] = i % 16 < 8 ? -1e-3 : (i / 16) % 2 ? -0.0 : 0.0;
      xf[i] = (float)xd[i];
    }
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "zeros in lanes 8-15");
    for (size_t i = 0; i < N; i++)
      xd[i] = xf[i] = -(float)xd[i];
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "zeros in lanes 8-15, negated");
    xd[9990] = xf[9990] = NAN;
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "a NaN in the last vector");
    xd[9990] = xf[9990] = 0.0f;
    xd[N - 2] = xf[N - 2] = NAN;
    test_quant32_range(xf, xd, eb, INT64_C(1) << 40, "a NaN in the tail");
  }
  test_narrow_edges(&rng);
  test_stream2();
  test_vpred();
  test_stream2_lorenzo();
  test_vpred_lines();
  test_cost_bits();
  return gz_test_finish();
}
