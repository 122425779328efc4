/* test_codec_values.c - the format-1 value blocks of values.c: every
 * instruction set (portable, AVX2 when the CPU has it) writes exactly the
 * bytes of the reference block encoder of kernels/gz_block.h (which the GPU
 * codec shares), decodes its own and the other sets' bytes to the reference's
 * values, and keeps every element within the bound (specials bit-exact).
 * Data: delta widths 0..40 at every first-code width, escapes (NaN, Inf,
 * -0.0, subnormals, values too large for the bound), partial last blocks,
 * whole chunks through gz_compress, with 1, 2 and 3 threads (same bytes). */
#include "gz_test.h"

#include "codec/codec.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference: gz_block.h's encoder, block after block. */
static size_t ref_encode(const float *x, size_t n, const gz_quant_t *qp, uint8_t *out) {
  uint8_t *p = out;
  size_t i;
  for (i = 0; i + GZ_BLOCK <= n; i += GZ_BLOCK)
    p += gz_block_encode_f32(x + i, GZ_BLOCK, qp, p);
  if (i < n)
    p += gz_block_encode_f32(x + i, (int)(n - i), qp, p);
  return (size_t)(p - out);
}

static int ref_decode(const uint8_t *in, size_t size, size_t n, const gz_quant_t *qp,
                      float *y) {
  size_t pos = 0;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    size_t used = gz_block_decode_f32(in + pos, size - pos, len, qp, y + i);
    if (!used)
      return -1;
    pos += used;
  }
  return pos == size ? 0 : -1;
}

/* Encode x with every set, compare with the reference; decode every
 * encoding with every set (from a buffer of exactly its size, so that the
 * last blocks take the careful path), compare with the reference decode and
 * check the bound. Returns the number of failures. */
static int check_qp(const char *what, const float *x, size_t n, gz_quant_t qp) {
  const double eb = qp.eb;
  size_t cap = n * sizeof(float) + (n + GZ_BLOCK - 1) / GZ_BLOCK + 1;
  uint8_t *ref = malloc(cap), *enc = malloc(cap), *exact = NULL;
  float *want = malloc(n * sizeof *want + 1), *y = malloc(n * sizeof *y + 1);
  size_t rsize = ref_encode(x, n, &qp, ref), bad = 0;
  int fails = 0;
  const int isas[2] = {GZ_ISA_PORTABLE, GZ_ISA_AVX2};
  GZ_CHECK(ref_decode(ref, rsize, n, &qp, want) == 0, "%s: reference decodes", what);
  for (size_t i = 0; i < n; i++) {
    if (isfinite(x[i]) && fabs((double)x[i]) >= FLT_MIN)
      bad += !(fabs((double)x[i] - (double)want[i]) <= eb);
    else
      bad += memcmp(&x[i], &want[i], sizeof(float)) != 0;
  }
  fails +=
      !GZ_CHECK(bad == 0, "%s: %zu values off the bound or not bit-exact", what, bad);
  for (int a = 0; a < 2; a++) {
    size_t size;
    if (!gz_isa_available(isas[a]))
      continue;
    memset(enc, 0xa5, cap);
    size = gz_encode_values_isa(isas[a], GZ_FLOAT32, x, n, &qp, enc);
    fails += !GZ_CHECK(size == rsize && memcmp(enc, ref, size) == 0,
                       "%s: set %d writes the reference bytes (%zu vs %zu)", what,
                       isas[a], size, rsize);
    for (int b = 0; b < 2; b++) {
      if (!gz_isa_available(isas[b]))
        continue;
      free(exact);
      exact = malloc(size + 1);
      memcpy(exact, enc, size);
      memset(y, 0x5a, n * sizeof *y);
      fails += !GZ_CHECK(
          gz_decode_values_isa(isas[b], GZ_FLOAT32, exact, size, n, &qp, y) == GZ_OK &&
              memcmp(y, want, n * sizeof *y) == 0,
          "%s: set %d decodes set %d's bytes to the reference values", what, isas[b],
          isas[a]);
    }
  }
  free(ref);
  free(enc);
  free(exact);
  free(want);
  free(y);
  return fails;
}

static int check_all(const char *what, const float *x, size_t n, double eb) {
  return check_qp(what, x, n, gz_codec_quant(eb));
}

/* check_all at e = 1e-4 and at e = 0.5 (step 1: small codes). */
static void check_two_bounds(const char *what, const float *x, size_t n) {
  char label[96];
  snprintf(label, sizeof label, "%s, e=1e-4", what);
  GZ_CHECK(check_all(label, x, n, 1e-4) == 0, "%s at e = 1e-4", what);
  snprintf(label, sizeof label, "%s, e=0.5", what);
  GZ_CHECK(check_all(label, x, n, 0.5) == 0, "%s at e = 0.5", what);
}

/* Blocks whose codes have delta width w and first-code width w0, for every
 * pair, built as exact multiples of the step (and a random wobble inside the
 * bound), so each block takes the PACKED form at that width. */
static void test_widths(void) {
  const double eb = 0.5; /* step 1: codes are the values */
  size_t n = 0, cap = 41 * 20 * GZ_BLOCK;
  float *x = malloc(cap * sizeof *x);
  gz_rng_t rng;
  gz_rng_seed(&rng, 17);
  for (int w = 0; w <= 40; w++) {
    for (int w0 = 0; w0 <= 24; w0 += (w0 < 4 ? 1 : 5)) {
      double q =
          w0 ? (double)((1u << (w0 - 1)) | (gz_rng_next(&rng) & ((1u << (w0 - 1)) - 1)))
             : 0.0;
      if (gz_rng_next(&rng) & 1)
        q = -q;
      for (int i = 0; i < GZ_BLOCK && n < cap; i++) {
        if (i > 0 && w > 0) {
          /* a zigzag delta of up to w bits, the first at exactly w */
          double mag = ldexp(1.0, w - 1) - 1;
          double d =
              i == 1 ? ldexp(1.0, w - 1) / 2 : floor(gz_rng_uniform(&rng) * mag / 2);
          q += (gz_rng_next(&rng) & 1) ? d : -d;
        }
        /* float32 holds integers exactly up to 2^24 only: the rest escape
         * or go RAW, which the comparison with the reference covers too */
        x[n++] = (float)(q + 0.4 * (gz_rng_uniform(&rng) - 0.5));
      }
    }
  }
  GZ_CHECK(check_all("widths", x, n, eb) == 0, "all widths");
  free(x);
}

static void test_fields(void) {
  size_t n = 100003; /* not a multiple of 32: a partial last block */
  float *x = malloc(n * sizeof *x);
  gz_rng_t rng;
  gz_rng_seed(&rng, 5);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(sin(0.001 * (double)i) + 0.01 * gz_rng_normal(&rng));
  GZ_CHECK(check_all("smooth e=1e-4", x, n, 1e-4) == 0, "smooth field, 1e-4");
  GZ_CHECK(check_all("smooth e=1e-7", x, n, 1e-7) == 0, "smooth field, 1e-7");
  GZ_CHECK(check_all("smooth e=10", x, n, 10) == 0, "smooth field, constant codes");
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(1e4 * gz_rng_normal(&rng));
  GZ_CHECK(check_all("noise e=1e-3", x, n, 1e-3) == 0, "wide noise");
  /* specials sprinkled: every kind of escape, in some blocks only */
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(cos(0.01 * (double)i));
  for (size_t i = 7; i < n; i += 997) {
    const float special[] = {NAN,     INFINITY, -INFINITY, -0.0f, 1e-40f,
                             -1e-42f, 3e38f,    FLT_MIN,   0.0f};
    x[i] = special[(i / 997) % (sizeof special / sizeof *special)];
  }
  for (size_t i = 5000; i < 5000 + 3 * GZ_BLOCK; i++)
    x[i] = NAN; /* CONST blocks */
  GZ_CHECK(check_all("specials", x, n, 1e-4) == 0, "escapes");
  /* huge codes: values near the code limit and past it */
  for (size_t i = 0; i < n; i++)
    x[i] = (float)((double)(i % 64) * 1e14 + 3e15 * sin((double)i));
  GZ_CHECK(check_all("huge codes", x, n, 1.0) == 0, "codes beyond int32");
  GZ_CHECK(check_all("tiny", x, 40, 1.0) == 0, "one block and a bit");
  free(x);
}

/* Values at the edges of the fast paths' checks: errors a few float ulps
 * either side of the bound (after the float rounding of the reconstruction)
 * and codes either side of 2^30 (the 32-bit quantizer's range), each in
 * blocks of otherwise ordinary values, so a block falls back to the full
 * quantizer for one value. */
static void test_edges(void) {
  size_t n = 64 * GZ_BLOCK;
  float *x = malloc(n * sizeof *x);
  gz_quant_t qp = gz_codec_quant(1e-4);
  gz_rng_t rng;
  gz_rng_seed(&rng, 23);
  for (size_t i = 0; i < n; i++) {
    double q = floor(100 * gz_rng_uniform(&rng)) - 50, sign = (i & 1) ? 1 : -1;
    /* odd blocks: ordinary values; even ones: one value per block at the
     * edge, k float ulps of the bound inside (k > 0) or outside (k < 0) */
    double k = (double)((int)(i % 9) - 4);
    x[i] = (float)(q * qp.step + 0.3 * sign * qp.eb);
    if ((i / GZ_BLOCK) % 2 == 0 && i % GZ_BLOCK == i / GZ_BLOCK % GZ_BLOCK)
      x[i] = (float)(q * qp.step + sign * qp.eb * (1 - k * 0x1p-23));
  }
  GZ_CHECK(check_all("bound's edge", x, n, 1e-4) == 0, "errors at the bound");
  for (size_t i = 0; i < n; i++) {
    /* step 1: codes are the values; floats near 2^30 are 64 apart, near
     * 2^31 128; blocks alternate: signs alternating value to value (deltas
     * past int32), one sign, codes a quarter as large */
    double c = (i / GZ_BLOCK) % 6 < 3 ? 0x1p30 + 64.0 * (double)((int)(i % 13) - 6)
                                      : 0x1p31 - 4096 - 128.0 * (double)(i % 5);
    switch ((i / GZ_BLOCK) % 3) {
    case 0:
      x[i] = (float)((i & 1) ? c : -c);
      break;
    case 1:
      x[i] = (float)c;
      break;
    default:
      x[i] = (float)(c / 4);
      break;
    }
  }
  GZ_CHECK(check_all("codes near 2^30, 2^31", x, n, 0.5) == 0, "codes past 32 bits");
  free(x);
}

/* A stream through gz_compress decodes within the bound, and its chunk
 * bytes are the reference's: the segment table of format 3 (offsets of the
 * reference's first 8192 k values, k = 1..7), then the reference's blocks. */
static void test_stream(void) {
  size_t n = 3 * GZ_CHUNK_DEFAULT + 77, cap = gz_compress_bound(GZ_FLOAT32, n, 4096),
         size, bad = 0;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  uint8_t *s = malloc(cap), *r = malloc(n * sizeof(float) + n);
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  gz_quant_t qp = gz_codec_quant(1e-4);
  gz_stream_info_t info;
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(sin(1e-4 * (double)i) * cos(3e-3 * (double)i));
  p.error_bound = 1e-4;
  GZ_CHECK(gz_compress(&p, x, n, s, cap, &size) == GZ_OK &&
               gz_stream_info(s, size, &info) == GZ_OK,
           "compress");
  GZ_CHECK(gz_decompress(s, size, y, n) == GZ_OK, "decompress");
  for (size_t i = 0; i < n; i++)
    bad += !(fabs((double)x[i] - (double)y[i]) <= 1e-4);
  GZ_CHECK(bad == 0, "%zu values off the bound", bad);
  {
    /* the first chunk's bytes are the reference encoder's */
    size_t first = 44 + 8 * (size_t)info.chunk_count + 4, table = 0, wrong = 0;
    size_t len = ref_encode(x, GZ_CHUNK_DEFAULT, &qp, r);
    for (size_t k = 1; k * GZ_STREAM_SEG_BLOCKS * GZ_BLOCK < GZ_CHUNK_DEFAULT; k++) {
      size_t at = ref_encode(x, k * GZ_STREAM_SEG_BLOCKS * GZ_BLOCK, &qp, r);
      const uint8_t *e = s + first + 4 * (k - 1);
      wrong += at != (size_t)(e[0] | e[1] << 8 | e[2] << 16 | (size_t)e[3] << 24);
      table += 4;
    }
    ref_encode(x, GZ_CHUNK_DEFAULT, &qp, r);
    GZ_CHECK(info.format_version == 3 && table == 28 && wrong == 0,
             "chunk 0's segment table: %zu of %zu entries wrong", wrong, table / 4);
    GZ_CHECK(table + len ==
                     (size_t)(s[44] | s[45] << 8 | s[46] << 16 | (size_t)s[47] << 24) &&
                 memcmp(s + first + table, r, len) == 0,
             "chunk 0 holds the reference bytes after its table");
  }
  /* the same bytes for any thread count, formats 1 and 2 */
  for (int pred = GZ_PRED_NONE; pred <= GZ_PRED_AUTO; pred += GZ_PRED_AUTO) {
    uint8_t *t = malloc(cap);
    size_t tsize = 0;
    p.predictor = (gz_predictor_t)pred;
    p.chunk_len = pred ? 0 : 4096; /* format 3: many chunks */
    p.threads = 1;
    GZ_CHECK(gz_compress(&p, x, n, s, cap, &size) == GZ_OK, "format %d, 1 thread",
             pred ? 2 : 3);
    for (int th = 2; th <= 3; th++) {
      p.threads = th;
      GZ_CHECK(gz_compress(&p, x, n, t, cap, &tsize) == GZ_OK && tsize == size &&
                   memcmp(s, t, size) == 0,
               "format %d: %d threads write the bytes of one", pred ? 2 : 3, th);
    }
    GZ_CHECK(gz_decompress(t, tsize, y, n) == GZ_OK, "format %d decodes", pred ? 2 : 3);
    free(t);
  }
  free(x);
  free(y);
  free(s);
  free(r);
}

/* Blocks of ordinary values with values that are refused whatever their
 * code (NaN, Inf, -0.0, subnormals, fill values past the code limit) at
 * every position, alone, in runs, first and last, and all but one: MIXED
 * and CONST blocks from the 32-bit quantizer, whose escaped values repeat
 * the last code before them. Codes near +-2^30 make the deltas after an
 * escape near 2^31 (width 32). */
static void test_escapes(void) {
  const float special[] = {NAN,    INFINITY, -INFINITY,    -0.0f,
                           1e-40f, -1e-45f,  -9.96921e36f, 3e38f};
  const int nspecial = (int)(sizeof special / sizeof *special);
  size_t n = 0, cap = 4 * 40 * GZ_BLOCK;
  float *x = malloc(cap * sizeof *x);
  gz_rng_t rng;
  gz_rng_seed(&rng, 41);
  for (int scale = 0; scale < 4; scale++) {
    for (int b = 0; b < 40; b++) {
      for (int i = 0; i < GZ_BLOCK; i++) {
        int esc;
        /* scales 0..2 at step 1 (e = 0.5): 0, small codes; 1, codes near
         * 2^30 of alternating sign (floats there are multiples of 64); 2,
         * codes near 2^29 of one sign; 3, the values of 0 at e = 1e-4 */
        double v = scale == 1   ? ((i & 1) ? 1 : -1) * (0x1p30 - 64 * (1 + i % 5))
                   : scale == 2 ? 0x1p29 - 64.0 * (gz_rng_next(&rng) % 1000)
                                : 100.0 * sin(0.1 * (double)(b * GZ_BLOCK + i));
        if (b < 32)
          esc = i == b || (b >= 16 && i >= b - 16 && i < b); /* one, or a run */
        else if (b < 36)
          esc = i != (b - 32) * 10; /* all but one */
        else
          esc = gz_rng_next(&rng) % 3 == 0 || b == 39; /* random; all in the last */
        x[n++] = esc ? special[(b + i) % nspecial] : (float)v;
      }
      if (b == 39) /* all escaped, one kind: CONST */
        for (int i = 0; i < GZ_BLOCK; i++)
          x[n - 1 - i] = special[b % nspecial];
    }
  }
  GZ_CHECK(check_all("escapes, step 1", x, 3 * 40 * GZ_BLOCK, 0.5) == 0,
           "escaped values with small codes and codes near 2^30");
  GZ_CHECK(check_all("escapes, e=1e-4", x + 3 * 40 * GZ_BLOCK, 40 * GZ_BLOCK, 1e-4) == 0,
           "escaped values at e = 1e-4");
  free(x);
}

/* MIXED blocks of every pattern of escapes in each eight lanes (block b's
 * lanes 8g..8g+8 escaped at the set bits of (b + 37 g) mod 256, so that
 * each group sees all 256), not only runs: the 32-bit quantizer's codes of
 * escaped values come from the last quantizable lane before them by a table
 * of eight-lane masks, and the escaped values are gathered four lanes a
 * step by a table of four-lane masks; a wrong entry changes the bytes. */
static void test_escape_masks(void) {
  size_t n = 256 * GZ_BLOCK;
  float *x = malloc(n * sizeof *x);
  for (size_t b = 0; b < 256; b++)
    for (int i = 0; i < GZ_BLOCK; i++) {
      size_t mask = (b + 37 * (size_t)(i / 8)) & 0xff, k = b * GZ_BLOCK + (size_t)i;
      x[k] = mask >> (i % 8) & 1
                 ? (k % 3 ? -9.96921e36f : NAN)
                 : (float)(20.0 * sin(0.37 * (double)k) + 0.01 * (double)b);
    }
  check_two_bounds("escape masks", x, n);
  free(x);
}

/* MIXED blocks whose escaped values have one kind each (NaN of either sign
 * and two payloads, Inf, -0.0, subnormals of either sign, a fill value,
 * 3e38) but for one lane of another kind: the 32-bit path writes escaped
 * values of equal bits as one broadcast, else gathers them, and settles
 * blocks of out-of-range values before looking for -0.0 and subnormals.
 * A broadcast taken for values equal in |x| or in value only (NaN against
 * -NaN, 1e-40 against -1e-40) or of a wrong count changes the bytes. */
static void test_escape_kinds(void) {
  const uint32_t kinds[] = {0x7fc00000u, 0xffc00000u, 0x7fc00001u,
                            0x7f800000u, 0x80000000u, 0x000116c2u,
                            0x800116c2u, 0xfcf0bdc2u, 0x7f61b1e6u};
  const int nkinds = (int)(sizeof kinds / sizeof *kinds);
  size_t n = 0, cap = (size_t)nkinds * (size_t)nkinds * 3 * GZ_BLOCK;
  float *x = malloc(cap * sizeof *x);
  for (int a = 0; a < nkinds; a++)
    for (int b = 0; b < nkinds; b++)
      for (int odd = 0; odd < GZ_BLOCK; odd += 15) { /* lanes 0, 15, 30 */
        for (int i = 0; i < GZ_BLOCK; i++) {
          uint32_t bits = kinds[i == odd ? b : a];
          if (i % 3 == 0 || i == odd)
            memcpy(&x[n + (size_t)i], &bits, 4);
          else
            x[n + (size_t)i] = (float)(5.0 * cos(0.21 * (double)(n + (size_t)i)));
        }
        n += GZ_BLOCK;
      }
  check_two_bounds("escape kinds", x, n);
  free(x);
}

/* MIXED blocks of every run of escapes (a fill value or NaN at lanes
 * [start, start + len), ordinary values elsewhere), so that the codes the
 * escaped values repeat come from every lane of a block, from the eight
 * lanes before, or are 0 (a run from lane 0); then blocks of equal values
 * after CONST blocks (refused: CONST again; quantizable: not). */
static void test_escape_runs(void) {
  size_t n = 0, cap = (33 * 32 / 2 + 11) * GZ_BLOCK;
  float *x = malloc(cap * sizeof *x);
  for (int start = 0; start < GZ_BLOCK; start++)
    for (int len = 1; start + len <= GZ_BLOCK; len++) {
      for (int i = 0; i < GZ_BLOCK; i++)
        x[n + (size_t)i] =
            i >= start && i < start + len
                ? (len & 1 ? -9.96921e36f : NAN)
                : (float)(20.0 * sin(0.37 * (double)(n + (size_t)i)) + 3.0 * (double)len);
      n += GZ_BLOCK;
    }
  { /* blocks of 32 equal values after CONST blocks: refused ones are CONST
     * again, quantizable ones (1.5, 0) are not, a last odd value makes MIXED */
    const float same[] = {-9.96921e36f, -9.96921e36f, NAN, 1.5f, -9.96921e36f, -0.0f,
                          1e-40f,       0.0f,         NAN, NAN,  -9.96921e36f};
    for (size_t b = 0; b < sizeof same / sizeof *same; b++) {
      for (int i = 0; i < GZ_BLOCK; i++)
        x[n + (size_t)i] = same[b];
      if (b == 9)
        x[n + GZ_BLOCK - 1] = INFINITY;
      n += GZ_BLOCK;
    }
  }
  check_two_bounds("escape runs", x, n);
  free(x);
}

/* The 32-bit quantizer's range checks under a code limit of its own: values
 * a few float ulps either side of code_max steps (the last code accepted),
 * of 2^30 steps (the 32-bit range) and of the "surely refused" threshold
 * past code_max, in blocks of ordinary values and of escapes, for code
 * limits below, at and above 2^30. */
static void test_code_limits(void) {
  const double limits[] = {1000, 0x1p24 + 3, 0x1p30 - 1, 0x1p30 + 5, 0x1p31, 0x1p50};
  size_t n = 96 * GZ_BLOCK;
  float *x = malloc(n * sizeof *x);
  for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
    gz_quant_t qp = gz_quant_make(1e-3, limits[l]);
    char what[64];
    for (size_t i = 0; i < n; i++) {
      size_t b = i / GZ_BLOCK;
      /* k float ulps from an edge: code_max steps, code_max + 1 steps and
       * (code_max + 1) steps (1 + 2^-16) (past it: surely refused), 2^30 */
      double k = (double)((int)(i % 17) - 8) * 0x1p-23,
             edge = (b % 4 == 0   ? qp.code_max
                     : b % 4 == 1 ? qp.code_max + 1
                     : b % 4 == 2 ? (qp.code_max + 1) * (1 + 0x1p-16)
                                  : 0x1p30) *
                    qp.step;
      x[i] = (float)(0.37 * qp.step * (double)(i % 11));
      if ((i + b) % (b / 4 % 8 + 2) == 0) /* one in 2..9: many blocks, many mixes */
        x[i] = (float)((i & 1 ? edge : -edge) * (1 + k));
      if (b >= 48 && i % 7 == 3)
        x[i] = NAN;
    }
    snprintf(what, sizeof what, "code limit %.0f", qp.code_max);
    GZ_CHECK(check_qp(what, x, n, qp) == 0, "values at the edges of code limit %.0f",
             qp.code_max);
  }
  free(x);
}

/* Deltas of 25..32 bits (and every first-code width up to 31), the
 * wider-delta decoder: codes that are multiples of 64 near +-2^(w - 2), so
 * that floats hold them exactly; and hand-made PACKED blocks whose codes
 * leave int32 and the 2^51 of the double conversion (first codes of up to 56
 * bits, sums wrapping as uint64), decoded against the reference decoder. */
static void test_wide_deltas(void) {
  size_t n = 0, cap = 8 * 8 * GZ_BLOCK;
  float *x = malloc(cap * sizeof *x);
  gz_quant_t qp = gz_codec_quant(0.5);
  gz_rng_t rng;
  gz_rng_seed(&rng, 29);
  for (int w = 25; w <= 32; w++)
    for (int b = 0; b < 8; b++)
      for (int i = 0; i < GZ_BLOCK; i++) {
        double mag = ldexp(1.0, w - 3) - 64 * (double)(gz_rng_next(&rng) % 4096);
        double first = ldexp(1.0, 3 * b + 6) - 64;
        x[n++] = (float)(i == 0 ? (b & 1 ? first : -first) : ((i + b) & 1 ? mag : -mag));
      }
  GZ_CHECK(check_all("wide deltas", x, n, 0.5) == 0, "deltas of 25..32 bits");
  {
    /* PACKED blocks by hand: random payloads at w0 = 56 or 33 and w = 32 or
     * 24, and two whose codes run out of a decoder's range mid-block */
    const int shapes[5][2] = {{32, 56}, {24, 56}, {32, 33}, {28, 53}, {30, 31}};
    uint8_t blk[5 * (2 + 8 * 18)];
    size_t size = 0;
    float want[5 * GZ_BLOCK], got[5 * GZ_BLOCK];
    const int isas[2] = {GZ_ISA_PORTABLE, GZ_ISA_AVX2};
    for (int k = 0; k < 5; k++) {
      int w = shapes[k][0], w0 = shapes[k][1];
      size_t len = gz_packed_bytes(GZ_BLOCK, w, w0);
      blk[size] = (uint8_t)w;
      blk[size + 1] = (uint8_t)w0;
      for (size_t j = 0; j < len; j++)
        blk[size + 2 + j] = (uint8_t)gz_rng_next(&rng);
      if (k >= 3) {
        /* k = 3: first code 2^51 - 2^20, then deltas of +2^26 carry the
         * codes past 2^51 (the double conversion) in the middle of the
         * block; k = 4: first code 2^30 - 2^9, deltas of +2^28, past 2^30
         * and 2^31 (int32 sums). Zigzag values, LSB first */
        memset(blk + size + 2, 0, len);
        for (int v = 0, bit = 0; v < GZ_BLOCK; v++) {
          uint64_t z = k == 3 ? (v ? 1ull << 27 : (1ull << 52) - (1ull << 21))
                              : (v ? 1ull << 29 : (1ull << 31) - (1ull << 10));
          for (int j = 0; j < (v ? w : w0); j++, bit++)
            blk[size + 2 + bit / 8] |= (uint8_t)((z >> j & 1) << (bit % 8));
        }
      }
      size += 2 + len;
    }
    GZ_CHECK(ref_decode(blk, size, 5 * GZ_BLOCK, &qp, want) == 0,
             "hand-made blocks: the reference decodes");
    for (int a = 0; a < 2; a++) {
      if (!gz_isa_available(isas[a]))
        continue;
      GZ_CHECK(gz_decode_values_isa(isas[a], GZ_FLOAT32, blk, size, 5 * GZ_BLOCK, &qp,
                                    got) == GZ_OK &&
                   memcmp(got, want, sizeof got) == 0,
               "hand-made blocks: set %d decodes to the reference values", isas[a]);
    }
  }
  free(x);
}

int main(void) {
  if (!gz_isa_available(GZ_ISA_AVX2))
    printf("note: no AVX2 on this CPU, the portable set only\n");
  test_widths();
  test_fields();
  test_edges();
  test_escapes();
  test_escape_runs();
  test_escape_masks();
  test_escape_kinds();
  test_code_limits();
  test_wide_deltas();
  test_stream();
  return gz_test_finish();
}
