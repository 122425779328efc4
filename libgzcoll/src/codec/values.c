/*
 * values.c - the format-1 value blocks of one chunk (kernels/gz_block.h), with
 * a fast host path for full float32 blocks of lossy codes.
 *
 * The bytes are those of gz_block_encode_f32/f64 (the GPU codec writes the
 * same ones); only the way they are computed differs:
 *  - quantization of a block of 32 values in one pass that also says whether
 *    every value is quantizable (AVX2 when the CPU has it, else the reference
 *    per-value routine); with AVX2, every block is first tried in 32-bit
 *    lanes, eight values a step, which settle it when each value is surely
 *    accepted with a code in (-2^30, 2^30) or surely refused;
 *  - deltas and zigzag of the block, and the OR that gives its width;
 *  - packing and unpacking of the 31 deltas as straight-line code per width
 *    (1..32 bits), with no carried bit cursor: each 64-bit word of the
 *    payload is the OR of the deltas that fall in it, at shifts the compiler
 *    knows; the first code's w0 bits are put in front by one multiword
 *    shift;
 *  - decoding: unzigzag and prefix sum, then the conversion to float (AVX2:
 *    deltas of up to 30 bits read by byte shuffles and summed in int32, eight
 *    at a time; up to 32 bits four at a time in int64; codes converted
 *    exactly for |code| < 2^51, else scalar);
 *  - MIXED and CONST blocks on the same paths (AVX2, in the 32-bit
 *    quantizer: the codes that escaped values repeat gathered by one
 *    permutation per eight lanes, the escaped values by one byte shuffle
 *    per four, both from tables of the lane mask, or, when they all have
 *    the same bits (fill values, NaN), stored as one broadcast; a block's
 *    refused values first checked for |x| past the code limit, which
 *    settles fill values and NaN without the other checks; CONST tried only for
 *    blocks escaped throughout; after a
 *    CONST block, a block of 32 equal refused values is written CONST
 *    without quantizing it: fill values come in runs).
 *  - the block loop prefetches the values 8 blocks (1 KiB) ahead: without
 *    it, fields past the L2 cache (the 128 MB smooth one) left it waiting
 *    on loads of x.
 * RAW blocks, widths over 32, lossless, float64 and a partial last block go
 * through gz_block.h.
 * tests/codec/test_codec_values.c checks that both instruction sets give the
 * reference bytes and decode each other's streams to the same values.
 */
#include "codec/codec.h"

#include <float.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#include "codec/unpack_avx2.h"
#endif

#if GZ_BLOCK != 32
#error "values.c's fast path assumes GZ_BLOCK == 32"
#endif

/* Words of a PACKED payload: w0 <= 56 bits then 31 values of at most 32. */
#define PAY_WORDS 17
/* Room the fast encoder may write past a block's start (header, whole
 * payload words; a MIXED block's escaped values are copied 16 bytes a step,
 * up to 16 bytes past the last of them, or, all of equal bits, as 128 bytes
 * from its byte 7). */
#define FAST_ROOM (2 + 8 * PAY_WORDS + 16)
_Static_assert(7 + 128 <= FAST_ROOM, "a MIXED block's broadcast escaped values fit");

/* The 32-bit quantizer's constants, derived from qp once per chunk
 * (quant32_prepare). */
typedef struct quant32_consts {
  double inv, step; /* qp's inv_step and step */
  float xmax, eb;   /* the strict range and bound checks (see quant32_avx2) */
  float eb_out;     /* a float above eb by a margin: a surely failed bound */
  uint32_t xbad;    /* bits of a float at which every larger |x| (Inf, NaN) is
                     * refused for its range: |code| > code_max */
  int usable;       /* 0: the 32-bit quantizer is not tried */
} quant32_consts_t;

typedef struct values_kernels {
  /* Quantize x[0..32): u[0] = zigzag(q[0]), u[i] = zigzag(q[i] - q[i-1]),
   * *all = the OR of u[1..32), q the codes (any value where refused). Returns a mask with
   * bit i set when x[i] is quantizable (u is meaningless unless all are). */
  uint32_t (*quant)(const float *x, const gz_quant_t *qp, int64_t *q, uint64_t *u,
                    uint64_t *all);
  /* The same in 32 bits for a block where each value is either surely
   * quantizable with a code in (-2^30, 2^30) or surely refused: returns 1,
   * *ok (bit i: x[i] quantizable, as quant says), and u and *all as quant
   * gives them for the codes where each refused value takes the code of the
   * last quantizable one before it, or 0 (a MIXED block's codes); else 0
   * (then nothing is known; NULL: no such kernel). */
  int (*quant32)(const float *x, const quant32_consts_t *c, uint32_t *u, uint32_t *all,
                 uint32_t *ok);
  /* y[i] = (float)(step * q[i]) for 32 codes */
  void (*dequant)(const int64_t *q, const gz_quant_t *qp, float *y);
  /* y from a PACKED payload pay (8 (PAY_WORDS + 1) bytes readable) of delta
   * width w <= 24 and first-code width w0 whose first zigzag code u0 is at
   * most 2^31: every code then fits int32 */
  void (*decode24)(const uint8_t *pay, int w, int w0, uint32_t u0, const gz_quant_t *qp,
                   float *y);
  /* The same for w <= 30: returns 1, or 0 when a code leaves [-2^30, 2^30)
   * (then y is written but wrong). NULL: no such kernel. */
  int (*decode30)(const uint8_t *pay, int w, int w0, uint32_t u0, const gz_quant_t *qp,
                  float *y);
  /* The same for any delta width w <= 32, first-code width w0 <= 56 and
   * first zigzag code u0: returns 1 and y, or 0 when a code is too large
   * for it (|code| >= 2^51; then y is not written). NULL: no such kernel. */
  int (*decode32)(const uint8_t *pay, int w, int w0, uint64_t u0, const gz_quant_t *qp,
                  float *y);
} values_kernels_t;

/* ---- packing at a constant width ----------------------------------------- */

/* The 31 values v (each < 2^W) LSB first into words (ceil(31 W / 64) of
 * them). Both loops unroll completely for a constant W, and every shift and
 * test folds away. */
static inline __attribute__((always_inline)) void pack31(const uint32_t *v, const int W,
                                                         uint64_t *word) {
#pragma GCC unroll 17
  for (int k = 0; k < PAY_WORDS; k++) {
    uint64_t acc = 0;
    if (64 * k >= 31 * W)
      break;
#pragma GCC unroll 31
    for (int i = 0; i < 31; i++) {
      int lo = i * W - 64 * k;
      if (lo + W <= 0 || lo >= 64)
        continue;
      acc |= lo >= 0 ? (uint64_t)v[i] << lo : (uint64_t)v[i] >> -lo;
    }
    word[k] = acc;
  }
}

/* The inverse: 31 values of W bits from words (which hold at least
 * ceil(31 W / 64) words). */
static inline __attribute__((always_inline)) void unpack31(const uint64_t *word,
                                                           const int W, uint32_t *v) {
  const uint64_t mask = (1ull << W) - 1;
#pragma GCC unroll 31
  for (int i = 0; i < 31; i++) {
    int lo = i * W, k = lo / 64, s = lo % 64;
    uint64_t x = word[k] >> s;
    if (s + W > 64)
      x |= word[k + 1] << (64 - s);
    v[i] = (uint32_t)(x & mask);
  }
}

/* clang-format off */
#define WIDTHS(X)                                                                        \
  X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)      \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29)  \
  X(30) X(31) X(32)
/* clang-format on */

/* The whole PACKED payload of a first zigzag code u0 of w0 <= 31 bits and
 * the 31 values u[1..32) of W bits at out: pack31, then the first code put
 * in front by a shift of every word, over the words that w0 = 31 would take
 * (a count the compiler knows: the loop unrolls, with no exit to predict;
 * the words past the payload are written as zeros), at most
 * 8 ceil(31 (W + 1) / 64) <= 128 bytes. */
static inline __attribute__((always_inline)) void
put31(uint32_t u0, const uint32_t *u, const int W, int w0, uint8_t *out) {
  uint64_t rest[PAY_WORDS + 1];
  pack31(u + 1, W, rest);
  rest[(31 * W + 63) / 64] = 0;
#pragma GCC unroll 17
  for (int j = 0; j < (31 * (W + 1) + 63) / 64; j++) {
    uint64_t word = rest[j] << w0 | (j ? (rest[j - 1] >> 1) >> (63 - w0) : u0);
    memcpy(out + 8 * j, &word, 8);
  }
}

#define DEF_PACK(W)                                                                      \
  static void pack_##W(const uint32_t *v, uint64_t *word) { pack31(v, W, word); }        \
  static void unpack_##W(const uint64_t *word, uint32_t *v) { unpack31(word, W, v); }    \
  static void put31_##W(uint32_t u0, const uint32_t *u, int w0, uint8_t *out) {          \
    put31(u0, u, W, w0, out);                                                            \
  }
WIDTHS(DEF_PACK)
#undef DEF_PACK

#define REF_PACK(W) pack_##W,
#define REF_UNPACK(W) unpack_##W,
#define REF_PUT31(W) put31_##W,
static void (*const pack_at[33])(const uint32_t *, uint64_t *) = {NULL, WIDTHS(REF_PACK)};
static void (*const unpack_at[33])(const uint64_t *, uint32_t *) = {NULL,
                                                                    WIDTHS(REF_UNPACK)};
static void (*const put31_at[33])(uint32_t, const uint32_t *, int,
                                  uint8_t *) = {NULL, WIDTHS(REF_PUT31)};
#undef REF_PACK
#undef REF_UNPACK
#undef REF_PUT31

/* v[1..32) from the payload words (the 31 deltas after the first code's w0
 * bits). */
static void unpack_rest(const uint64_t *word, int w, int w0, uint32_t *v) {
  uint64_t rest[PAY_WORDS];
  int words = (31 * w + 63) / 64; /* of the 31 values once shifted down */
  for (int j = 0; j < words; j++)
    rest[j] = word[j] >> w0 | (word[j + 1] << 1) << (63 - w0);
  if (w > 0)
    unpack_at[w](rest, v + 1);
  else
    for (int i = 1; i < 32; i++)
      v[i] = 0;
}

/* ---- portable kernels (the reference routines of gz_block.h) ------------- */

static uint32_t quant_portable(const float *x, const gz_quant_t *qp, int64_t *q,
                               uint64_t *u, uint64_t *all) {
  uint32_t ok = 0;
  for (int i = 0; i < 32; i++)
    ok |= (uint32_t)gz_quantize_one_f32(x[i], qp, 1, &q[i]) << i;
  *all = 0;
  u[0] = gz_zigzag((uint64_t)q[0]);
  for (int i = 1; i < 32; i++) {
    u[i] = gz_zigzag((uint64_t)q[i] - (uint64_t)q[i - 1]);
    *all |= u[i];
  }
  return ok;
}

static void dequant_portable(const int64_t *q, const gz_quant_t *qp, float *y) {
  for (int i = 0; i < 32; i++)
    y[i] = gz_dequant_f32(q[i], qp);
}

static void decode32_portable(const uint32_t *v, const gz_quant_t *qp, float *y) {
  uint64_t acc = 0;
  for (int i = 0; i < 32; i++) {
    acc += gz_unzigzag(v[i]);
    y[i] = gz_dequant_f32((int64_t)acc, qp);
  }
}

static void decode24_portable(const uint8_t *pay, int w, int w0, uint32_t u0,
                              const gz_quant_t *qp, float *y) {
  uint64_t word[PAY_WORDS + 1];
  uint32_t v[32];
  memcpy(word, pay, sizeof word);
  unpack_rest(word, w, w0, v);
  v[0] = u0;
  decode32_portable(v, qp, y);
}

static const values_kernels_t portable = {quant_portable,    NULL, dequant_portable,
                                          decode24_portable, NULL, NULL};

/* ---- AVX2 kernels: the same operations, four values at a time ------------ */

#ifdef HAVE_AVX2_PATH
/* Only "avx2": no FMA, so every product and sum is rounded on its own as in
 * gz_quantize_one (GZ_MUL, GZ_ADD). */
__attribute__((target("avx2"))) static uint32_t
quant_avx2(const float *x, const gz_quant_t *qp, int64_t *q, uint64_t *u, uint64_t *all) {
  const __m256d inv = _mm256_set1_pd(qp->inv_step), step = _mm256_set1_pd(qp->step),
                eb = _mm256_set1_pd(qp->eb), cmax = _mm256_set1_pd(qp->code_max),
                shift = _mm256_set1_pd(GZ_RINT_SHIFT),
                absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  const __m256i base = _mm256_castpd_si256(shift), zero64 = _mm256_setzero_si256(),
                expo = _mm256_set1_epi32(0x7f800000);
  __m256i prev = zero64, ors = zero64;
  uint32_t ok = 0, refused = 0;
  /* -0.0 and subnormals (|x| < FLT_MIN, bits not 0): exponent field 0 */
  for (int i = 0; i < 32; i += 8) {
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(x + i));
    __m256i e0 = _mm256_cmpeq_epi32(_mm256_and_si256(b, expo), zero64);
    __m256i z = _mm256_cmpeq_epi32(b, zero64);
    refused |=
        (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_andnot_si256(z, e0)))
        << i;
  }
  /* Lanes out of range get garbage codes: they are refused, and a refused
   * value's code is replaced before it is used (MIXED) */
  for (int i = 0; i < 32; i += 4) {
    __m128 xf = _mm_loadu_ps(x + i);
    __m256d v = _mm256_cvtps_pd(xf);
    __m256d sh = _mm256_add_pd(_mm256_mul_pd(v, inv), shift);
    __m256d qd = _mm256_sub_pd(sh, shift);
    __m256d in = _mm256_cmp_pd(_mm256_and_pd(qd, absm), cmax, _CMP_LE_OQ);
    __m256i qi = _mm256_sub_epi64(_mm256_castpd_si256(sh), base);
    __m256d r = _mm256_mul_pd(qd, step);
    __m256d rf = _mm256_cvtps_pd(_mm256_cvtpd_ps(r));
    __m256d close =
        _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(v, rf), absm), eb, _CMP_LE_OQ);
    __m256d good = _mm256_and_pd(in, close);
    /* deltas against [last of the previous four, q0, q1, q2], zigzag */
    __m256i before = _mm256_blend_epi32(_mm256_permute4x64_epi64(qi, 0x90),
                                        _mm256_permute4x64_epi64(prev, 0xff), 0x03);
    __m256i d = _mm256_sub_epi64(qi, before);
    __m256i z = _mm256_xor_si256(_mm256_add_epi64(d, d), _mm256_cmpgt_epi64(zero64, d));
    _mm256_storeu_si256((__m256i *)(u + i), z);
    _mm256_storeu_si256((__m256i *)(q + i), qi);
    ors = _mm256_or_si256(ors, i ? z : _mm256_blend_epi32(z, zero64, 0x03));
    prev = qi;
    ok |= (uint32_t)_mm256_movemask_pd(good) << i;
  }
  {
    __m128i o =
        _mm_or_si128(_mm256_castsi256_si128(ors), _mm256_extracti128_si256(ors, 1));
    *all = (uint64_t)_mm_cvtsi128_si64(o) | (uint64_t)_mm_extract_epi64(o, 1);
  }
  return ok & ~refused;
}

/* For each eight-lane mask m of quantizable values, the lane each lane's
 * code comes from once refused values repeat the last quantizable one
 * before them: byte i is the highest set bit of m at or below bit i, or
 * 0xff when there is none (the code of the eight before, or 0). */
#define HIGH8(m)                                                                         \
  ((m)&0x80   ? 7                                                                        \
   : (m)&0x40 ? 6                                                                        \
   : (m)&0x20 ? 5                                                                        \
   : (m)&0x10 ? 4                                                                        \
   : (m)&0x08 ? 3                                                                        \
   : (m)&0x04 ? 2                                                                        \
   : (m)&0x02 ? 1                                                                        \
   : (m)&0x01 ? 0                                                                        \
              : 0xff)
#define SOURCE_LANES(m)                                                                  \
  ((uint64_t)HIGH8((m)&0x01) | (uint64_t)HIGH8((m)&0x03) << 8 |                          \
   (uint64_t)HIGH8((m)&0x07) << 16 | (uint64_t)HIGH8((m)&0x0f) << 24 |                   \
   (uint64_t)HIGH8((m)&0x1f) << 32 | (uint64_t)HIGH8((m)&0x3f) << 40 |                   \
   (uint64_t)HIGH8((m)&0x7f) << 48 | (uint64_t)HIGH8((m)&0xff) << 56)
#define SOURCE_LANES4(m)                                                                 \
  SOURCE_LANES(m), SOURCE_LANES((m) + 1), SOURCE_LANES((m) + 2), SOURCE_LANES((m) + 3)
#define SOURCE_LANES16(m)                                                                \
  SOURCE_LANES4(m), SOURCE_LANES4((m) + 4), SOURCE_LANES4((m) + 8),                      \
      SOURCE_LANES4((m) + 12)
#define SOURCE_LANES64(m)                                                                \
  SOURCE_LANES16(m), SOURCE_LANES16((m) + 16), SOURCE_LANES16((m) + 32),                 \
      SOURCE_LANES16((m) + 48)
static const uint64_t source_lanes[256] = {SOURCE_LANES64(0), SOURCE_LANES64(64),
                                           SOURCE_LANES64(128), SOURCE_LANES64(192)};
#undef SOURCE_LANES64
#undef SOURCE_LANES16
#undef SOURCE_LANES4
#undef SOURCE_LANES
#undef HIGH8

/* The zigzag deltas u of the eight-lane codes where each refused value (a
 * clear bit of good) takes the code of the last quantizable value before
 * it, or 0; returns the OR of u[1..32) in eight lanes. Each eight gathers
 * its codes from the lanes source_lanes names (one permutation; 0xff, sign
 * extended, selects the last code of the eight before). */
static inline __attribute__((always_inline, target("avx2"))) __m256i
fill_refused(const __m256i *codes, uint32_t good, uint32_t *u) {
  const __m256i zero = _mm256_setzero_si256(), last = _mm256_set1_epi32(7);
  __m256i prev = zero, ors = zero;
  for (int i = 0; i < 4; i++) {
    __m256i from = _mm256_cvtepi8_epi32(_mm_loadl_epi64(
        (const __m128i *)(const void *)&source_lanes[good >> 8 * i & 0xff]));
    __m256i v = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(codes[i], from),
                                   _mm256_permutevar8x32_epi32(prev, last), from);
    __m256i d = _mm256_sub_epi32(
        v, _mm256_alignr_epi8(v, _mm256_permute2x128_si256(prev, v, 0x21), 12));
    __m256i z = _mm256_xor_si256(_mm256_add_epi32(d, d), _mm256_srai_epi32(d, 31));
    _mm256_storeu_si256((__m256i *)(void *)(u + 8 * i), z);
    ors = _mm256_or_si256(ors, i ? z : _mm256_blend_epi32(z, zero, 0x01));
    prev = v;
  }
  return ors;
}

/* quant_avx2 in 32 bits: eight values a step, their codes as int32 (so a
 * delta fits int32), deltas and zigzag in eight lanes. The two checks run
 * on the eight floats at once and are stricter than gz_quantize_one's by a
 * margin, so that any value they pass, it passes too:
 *  - range: |x| <= (lim - 2) step (1 - 2^-20), so |code| <= lim - 1, where
 *    lim = min(code_max, 2^30 - 1);
 *  - bound: |x - (float)(code step)|, computed in float, <= a float below
 *    eb (1 - 2^-20): its rounding error (at most 2^-24 of it) keeps the exact
 *    difference within eb.
 * A value that fails them is surely refused when gz_quantize_one refuses it
 * whatever its code: -0.0 and subnormals, NaN, Inf and |x| >= xbad, which
 * is past code_max by a margin (fill values, land masks). A block with a
 * value that is neither (in a margin, or a code in [2^30, code_max],
 * about 32 2^-20 of ordinary blocks) returns 0 and is quantized again by
 * quant_avx2. */
static inline __attribute__((always_inline, target("avx2"))) int
quant32_avx2(const float *x, const quant32_consts_t *c, uint32_t *u, uint32_t *all,
             uint32_t *ok) {
  const __m256d inv = _mm256_set1_pd(c->inv), step = _mm256_set1_pd(c->step),
                shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256 xmax = _mm256_set1_ps(c->xmax), eb = _mm256_set1_ps(c->eb),
               absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i zero = _mm256_setzero_si256(),
                below_normal = _mm256_set1_epi32(0x007fffff);
  __m256i prev = zero, ors = zero, codes[4];
  __m256 good[4], dist[4], every = _mm256_castsi256_ps(_mm256_cmpeq_epi32(zero, zero));
  for (int i = 0; i < 32; i += 8) {
    __m256 xf = _mm256_loadu_ps(x + i), ax = _mm256_and_ps(xf, absm), back;
    __m256i d, z, qv;
    __m256d sh[2];
    __m128 r[2];
    for (int h = 0; h < 2; h++) {
      __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * h));
      sh[h] = _mm256_add_pd(_mm256_mul_pd(v, inv), shift);
      r[h] = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(sh[h], shift), step));
    }
    back = _mm256_insertf128_ps(_mm256_castps128_ps256(r[0]), r[1], 1);
    /* the codes are the low mantissa bits of sh (two's complement): the low
     * halves of both, in the order 0 1 4 5 2 3 6 7, then put in order */
    qv = _mm256_permute4x64_epi64(
        _mm256_castps_si256(
            _mm256_shuffle_ps(_mm256_castpd_ps(sh[0]), _mm256_castpd_ps(sh[1]), 0x88)),
        0xd8);
    dist[i / 8] = _mm256_and_ps(_mm256_sub_ps(xf, back), absm);
    /* not -0.0 or a subnormal (|x| < FLT_MIN with bits not 0), in range,
     * within the bound */
    good[i / 8] =
        _mm256_and_ps(_mm256_castsi256_ps(_mm256_or_si256(
                          _mm256_cmpgt_epi32(_mm256_castps_si256(ax), below_normal),
                          _mm256_cmpeq_epi32(_mm256_castps_si256(xf), zero))),
                      _mm256_and_ps(_mm256_cmp_ps(ax, xmax, _CMP_LE_OQ),
                                    _mm256_cmp_ps(dist[i / 8], eb, _CMP_LE_OQ)));
    every = _mm256_and_ps(every, good[i / 8]);
    codes[i / 8] = qv;
    /* deltas against [last code of the previous eight, q0, ..., q6] */
    d = _mm256_sub_epi32(
        qv, _mm256_alignr_epi8(qv, _mm256_permute2x128_si256(prev, qv, 0x21), 12));
    z = _mm256_xor_si256(_mm256_add_epi32(d, d), _mm256_srai_epi32(d, 31));
    _mm256_storeu_si256((__m256i *)(void *)(u + i), z);
    ors = _mm256_or_si256(ors, i ? z : _mm256_blend_epi32(z, zero, 0x01));
    prev = qv;
  }
  if (_mm256_movemask_ps(every) != 0xff) {
    /* Some value failed: the block is decided when each of those is surely
     * refused: whatever its code, -0.0 and subnormals, and |x| >= xbad (Inf
     * and NaN too: their bits are larger); and a distance past eb by the
     * margin: the reconstruction is gz_quantize_one's whenever its code is
     * below 2^51 (else that refuses it for its range), and the float
     * difference is within 2^-24 of the exact one */
    const __m256i below_bad = _mm256_set1_epi32((int)(c->xbad - 1));
    const __m256 eb_out = _mm256_set1_ps(c->eb_out);
    uint32_t good_bits = 0, decided = 0;
    /* fill values and NaN first: |x| >= xbad settles most blocks */
    for (int i = 0; i < 32; i += 8) {
      __m256i axi =
          _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)),
                           _mm256_castps_si256(absm));
      good_bits |= (uint32_t)_mm256_movemask_ps(good[i / 8]) << i;
      decided |= (uint32_t)_mm256_movemask_ps(
                     _mm256_castsi256_ps(_mm256_cmpgt_epi32(axi, below_bad)))
                 << i;
    }
    decided |= good_bits;
    if (decided != 0xffffffffu) { /* then -0.0, subnormals, distances past eb */
      for (int i = 0; i < 32; i += 8) {
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(x + i)),
                axi = _mm256_and_si256(b, _mm256_castps_si256(absm));
        __m256i sure = _mm256_andnot_si256(
            _mm256_cmpeq_epi32(b, zero),
            _mm256_cmpgt_epi32(_mm256_add_epi32(below_normal, _mm256_set1_epi32(1)),
                               axi));
        sure = _mm256_or_si256(
            sure, _mm256_castps_si256(_mm256_cmp_ps(dist[i / 8], eb_out, _CMP_GT_OQ)));
        decided |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(sure)) << i;
      }
      if (decided != 0xffffffffu)
        return 0;
    }
    *ok = good_bits;
    ors = fill_refused(codes, good_bits, u);
  } else {
    *ok = 0xffffffffu;
  }
  {
    __m128i o =
        _mm_or_si128(_mm256_castsi256_si128(ors), _mm256_extracti128_si256(ors, 1));
    o = _mm_or_si128(o, _mm_shuffle_epi32(o, 0x4e));
    o = _mm_or_si128(o, _mm_shuffle_epi32(o, 0xb1));
    *all = (uint32_t)_mm_cvtsi128_si32(o);
  }
  return 1;
}

__attribute__((target("avx2"))) static void dequant_avx2(const int64_t *q,
                                                         const gz_quant_t *qp, float *y) {
  const __m256d step = _mm256_set1_pd(qp->step), magic = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256i mbits = _mm256_castpd_si256(magic), half = _mm256_set1_epi64x(1ll << 51),
                high = _mm256_set1_epi64x(-(1ll << 52));
  __m256i out_of_range = _mm256_setzero_si256();
  for (int i = 0; i < 32; i += 4) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(q + i));
    out_of_range =
        _mm256_or_si256(out_of_range, _mm256_and_si256(_mm256_add_epi64(c, half), high));
  }
  if (!_mm256_testz_si256(out_of_range, out_of_range)) {
    dequant_portable(q, qp, y);
    return;
  }
  for (int i = 0; i < 32; i += 4) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(q + i));
    /* (double)c for -2^51 <= c < 2^51: c in the mantissa of 1.5 * 2^52 */
    __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(c, mbits)), magic);
    _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_mul_pd(d, step)));
  }
}

/* Codes of a PACKED payload into int32 lanes (unpack_avx2.h), converted as
 * gz_dequant_f32. */
static inline __attribute__((always_inline, target("avx2"))) int
decode_int32_avx2(const uint8_t *pay, int w, int w0, uint32_t u0, const gz_quant_t *qp,
                  float *y, const int wide) {
  const __m256d step = _mm256_set1_pd(qp->step);
  __m256i d[4];
  int ok = gz_unpack_int32_avx2(pay, w, w0, u0, d, wide);
  for (int g = 0; g < 4; g++) {
    _mm_storeu_ps(y + 8 * g,
                  _mm256_cvtpd_ps(_mm256_mul_pd(
                      _mm256_cvtepi32_pd(_mm256_castsi256_si128(d[g])), step)));
    _mm_storeu_ps(y + 8 * g + 4,
                  _mm256_cvtpd_ps(_mm256_mul_pd(
                      _mm256_cvtepi32_pd(_mm256_extracti128_si256(d[g], 1)), step)));
  }
  return ok;
}

__attribute__((target("avx2"))) static void decode24_avx2(const uint8_t *pay, int w,
                                                          int w0, uint32_t u0,
                                                          const gz_quant_t *qp,
                                                          float *y) {
  decode_int32_avx2(pay, w, w0, u0, qp, y, 0);
}

__attribute__((target("avx2"))) static int decode30_avx2(const uint8_t *pay, int w,
                                                         int w0, uint32_t u0,
                                                         const gz_quant_t *qp, float *y) {
  return decode_int32_avx2(pay, w, w0, u0, qp, y, 1);
}

/* decode24_avx2 for the wider deltas (w <= 32) and larger codes, four
 * values a step: each delta is read as 64 bits from the byte holding its
 * first bit (w + 7 <= 39 bits), two per 16-byte load (they span at most
 * 7 + 2 w <= 71 bits, 9 bytes), byte shuffles putting each in its lane;
 * unzigzag and prefix sums in int64 lanes, wrapping as the reference's
 * uint64 sum; conversion through the mantissa of 1.5 * 2^52, exact for
 * |code| < 2^51 (checked: else nothing is written and the caller takes the
 * scalar path). */
__attribute__((target("avx2"))) static int decode32_avx2(const uint8_t *pay, int w,
                                                         int w0, uint64_t u0,
                                                         const gz_quant_t *qp, float *y) {
  const __m256d step = _mm256_set1_pd(qp->step), magic = _mm256_set1_pd(GZ_RINT_SHIFT);
  const __m256i one = _mm256_set1_epi64x(1), seven = _mm256_set1_epi64x(7),
                mask = _mm256_set1_epi64x((long long)((1ull << w) - 1)),
                mbits = _mm256_castpd_si256(magic), half = _mm256_set1_epi64x(1ll << 51),
                high = _mm256_set1_epi64x(-(1ll << 52)), zero = _mm256_setzero_si256(),
                byte_of_lane = _mm256_set1_epi64x(0x0706050403020100ll),
                spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8,
                                          0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8),
                /* bit offset of the second delta of a pair from the first */
      in_pair = _mm256_setr_epi64x(0, w, 0, w);
  __m256i carry = zero, out_of_range = zero;
  __m128 f[8];
  for (int i = 0; i < 32; i += 4) {
    /* value v >= 1 starts at bit w0 + (v - 1) w; the first four are read
     * from value 1 on, then moved up a lane under the first code, u0 */
    int lo = w0 + (i ? i - 1 : 0) * w, hi = lo + 2 * w;
    __m256i src = gz_load_bytes_of(pay, lo, hi);
    __m256i at = _mm256_add_epi64(
        _mm256_setr_m128i(_mm_set1_epi64x(lo & 7), _mm_set1_epi64x(hi & 7)), in_pair);
    __m256i ctrl = _mm256_add_epi8(_mm256_shuffle_epi8(_mm256_srli_epi64(at, 3), spread),
                                   byte_of_lane);
    __m256i raw = _mm256_shuffle_epi8(src, ctrl);
    __m256i z =
        _mm256_and_si256(_mm256_srlv_epi64(raw, _mm256_and_si256(at, seven)), mask);
    __m256i d;
    if (i == 0)
      z = _mm256_blend_epi32(_mm256_permute4x64_epi64(z, 0x90),
                             _mm256_set1_epi64x((long long)u0), 0x03);
    d = _mm256_xor_si256(_mm256_srli_epi64(z, 1),
                         _mm256_sub_epi64(zero, _mm256_and_si256(z, one)));
    /* prefix sum of the four lanes: within each half, then across */
    d = _mm256_add_epi64(d, _mm256_slli_si256(d, 8));
    d = _mm256_add_epi64(
        d, _mm256_blend_epi32(zero, _mm256_permute4x64_epi64(d, 0x55), 0xf0));
    d = _mm256_add_epi64(d, carry);
    carry = _mm256_permute4x64_epi64(d, 0xff);
    out_of_range =
        _mm256_or_si256(out_of_range, _mm256_and_si256(_mm256_add_epi64(d, half), high));
    /* (double)d for -2^51 <= d < 2^51: d in the mantissa of 1.5 * 2^52 */
    f[i / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(d, mbits)), magic), step));
  }
  if (!_mm256_testz_si256(out_of_range, out_of_range))
    return 0;
  for (int i = 0; i < 8; i++)
    _mm_storeu_ps(y + 4 * i, f[i]);
  return 1;
}

static const values_kernels_t avx2 = {quant_avx2,    quant32_avx2,  dequant_avx2,
                                      decode24_avx2, decode30_avx2, decode32_avx2};
#endif

static const values_kernels_t *kernels_for(int isa) {
#ifdef HAVE_AVX2_PATH
  if ((isa == GZ_ISA_AUTO || isa == GZ_ISA_AVX2) && gz_cpu_avx2())
    return &avx2;
#else
  (void)isa;
#endif
  return &portable;
}

/* The 32-bit quantizer's constants for qp (quant32_avx2 says what they
 * promise). It is not used when eb is not a normal float (its float
 * rounding would not stay within the margin) or the codes allowed are
 * tiny. */
static quant32_consts_t quant32_prepare(const gz_quant_t *qp) {
  quant32_consts_t c;
  const double lim = qp->code_max < 0x1p30 - 1 ? qp->code_max : 0x1p30 - 1,
               xmax = (lim - 2) * qp->step * (1 - 0x1p-20), eb = qp->eb * (1 - 0x1p-20),
               xbad = (qp->code_max + 1) * qp->step * (1 + 0x1p-16);
  c.inv = qp->inv_step;
  c.step = qp->step;
  c.usable = lim > 2 && eb >= FLT_MIN;                         /* (and not NaN) */
  c.xmax = c.usable && xmax < FLT_MAX ? (float)xmax : FLT_MAX; /* lower: stricter */
  c.eb = c.usable && eb < FLT_MAX ? (float)eb : FLT_MAX;
  /* (float rounds it down by at most 2^-24 of it: still past eb) */
  c.eb_out = c.usable && qp->eb * (1 + 0x1p-20) < FLT_MAX
                 ? (float)(qp->eb * (1 + 0x1p-20))
                 : INFINITY;
  c.xbad = 0x7f800000u; /* Inf: only Inf and NaN */
  if (c.usable && xbad < FLT_MAX) {
    float f = (float)xbad; /* (rounded by at most 2^-24 of it: within the margin) */
    memcpy(&c.xbad, &f, 4);
  }
  return c;
}

/* ---- one full float32 block ------------------------------------------------ */

/* The PACKED payload of the first zigzag code u0 (w0 <= 56 bits) and the 31
 * zigzag deltas u[1..32) (w <= 32 bits) at out, in whole 64-bit words (up to
 * 7 bytes past the payload are written). */
static void put_payload(uint64_t u0, const uint32_t *u, int w, int w0, uint8_t *out) {
  uint64_t rest[PAY_WORDS + 1];
  int words = (w0 + 31 * w + 63) / 64;
  /* (no initialisers: zeroing whole arrays costs more than a block) */
  rest[(31 * w + 63) / 64] = 0;
  if (w > 0)
    pack_at[w](u + 1, rest);
  /* the first code in front: shift the payload up by w0 bits */
  for (int j = 0; j < words; j++) {
    uint64_t word = rest[j] << w0;
    if (j > 0)
      word |= (rest[j - 1] >> 1) >> (63 - w0); /* w0 == 0: nothing */
    else
      word |= u0;
    memcpy(out + 8 * j, &word, 8);
  }
}

void gz_put_payload32(uint32_t u0, const uint32_t *u, int w, int w0, uint8_t *out) {
  put_payload(u0, u, w, w0, out);
}

/* put_payload from 64-bit zigzag values whose deltas have w <= 32 bits. */
static void put_payload64(const uint64_t *u, int w, int w0, uint8_t *out) {
  uint32_t u32[32];
  for (int i = 1; i < 32; i++)
    u32[i] = (uint32_t)u[i];
  put_payload(u[0], u32, w, w0, out);
}

/* A RAW block: the values verbatim. */
static size_t put_raw(const float *x, uint8_t *out) {
  out[0] = GZ_KIND_RAW;
  memcpy(out + 1, x, 32 * sizeof(float));
  return 1 + 32 * sizeof(float);
}

/* A CONST block when the 32 values have the same bits (fill values, NaN),
 * as the reference tries it for any block with an escape; else 0. */
static size_t put_const(const float *x, uint8_t *out) {
  uint32_t first, bits, diff = 0;
  memcpy(&first, x, 4);
  for (int i = 1; i < 32; i++) {
    memcpy(&bits, x + i, 4);
    diff |= bits ^ first;
  }
  if (diff != 0)
    return 0;
  out[0] = GZ_KIND_CONST;
  memcpy(out + 1, x, 4);
  return 5;
}

/* put_const when x[0] is refused (then so is every value of the same
 * bits: the block the reference writes); else 0. */
static size_t put_const_refused(const float *x, const gz_quant_t *qp, uint8_t *out) {
  int64_t q;
  size_t size = put_const(x, out);
  return size && !gz_quantize_one_f32(x[0], qp, 1, &q) ? size : 0;
}

#ifdef HAVE_AVX2_PATH
/* The bytes of the values of four lanes at the set bits of a 4-bit mask, in
 * order (the rest: anything). */
#define LANE(i) 4 * (i), 4 * (i) + 1, 4 * (i) + 2, 4 * (i) + 3
#define NONE 0x80, 0x80, 0x80, 0x80
static const uint8_t set_lanes[16][16] = {
    {NONE, NONE, NONE, NONE},          {LANE(0), NONE, NONE, NONE},
    {LANE(1), NONE, NONE, NONE},       {LANE(0), LANE(1), NONE, NONE},
    {LANE(2), NONE, NONE, NONE},       {LANE(0), LANE(2), NONE, NONE},
    {LANE(1), LANE(2), NONE, NONE},    {LANE(0), LANE(1), LANE(2), NONE},
    {LANE(3), NONE, NONE, NONE},       {LANE(0), LANE(3), NONE, NONE},
    {LANE(1), LANE(3), NONE, NONE},    {LANE(0), LANE(1), LANE(3), NONE},
    {LANE(2), LANE(3), NONE, NONE},    {LANE(0), LANE(2), LANE(3), NONE},
    {LANE(1), LANE(2), LANE(3), NONE}, {LANE(0), LANE(1), LANE(2), LANE(3)},
};
#undef LANE
#undef NONE

/* The values x[i] at the set bits i of escaped (nesc of them), in order,
 * at p, with no branch per value: when they all have the same bits (fill
 * values, NaN: the common case), as 128 bytes of them; else four lanes a
 * step (up to 16 bytes past them are written). Returns where they end. */
__attribute__((target("avx2"))) static uint8_t *
copy_escaped_avx2(const float *x, uint32_t escaped, int nesc, uint8_t *p) {
  int bits;
  uint32_t same = 0;
  __m256i first;
  memcpy(&bits, x + __builtin_ctz(escaped), 4);
  first = _mm256_set1_epi32(bits);
  for (int i = 0; i < 32; i += 8)
    same |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                _mm256_loadu_si256((const __m256i *)(const void *)(x + i)), first)))
            << i;
  if ((escaped & ~same) == 0) {
    for (int i = 0; i < 4; i++)
      _mm256_storeu_si256((__m256i *)(void *)(p + 32 * i), first);
    return p + 4 * nesc;
  }
  for (int i = 0; i < 32; i += 4) {
    unsigned m = escaped >> i & 15;
    __m128i v =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(x + i)),
                         _mm_loadu_si128((const __m128i *)(const void *)set_lanes[m]));
    _mm_storeu_si128((__m128i *)(void *)p, v);
    p += 4 * (0x4332322132212110ull >> 4 * m & 15); /* 4 x the bits set in m */
  }
  return p;
}
#endif

/* The MIXED block (gz_block_impl.h) of x escaped at the set bits of
 * escaped (nesc of them), whose codes, an escaped value repeating the
 * previous one, have the zigzag first code u0 and deltas u[1..32) of widths
 * w <= 32 and w0 <= 56; RAW when that is not shorter. from32: the call is
 * from the 32-bit quantizer (AVX2; w0 <= 31): the escaped values are copied
 * by copy_escaped_avx2, and the payload may be written by put31 when its
 * whole words fit FAST_ROOM. */
static inline __attribute__((always_inline)) size_t
put_mixed(const float *x, uint32_t escaped, int nesc, uint64_t u0, const uint32_t *u,
          int w, int w0, uint8_t *out, const int from32) {
  size_t size = 3 + 4 + (size_t)nesc * 4 + gz_packed_bytes(32, w, w0);
  uint8_t *p = out + 7;
  if (size >= 1 + 32 * sizeof(float))
    return put_raw(x, out);
  out[0] = GZ_KIND_MIXED;
  out[1] = (uint8_t)w;
  out[2] = (uint8_t)w0;
  for (int i = 0; i < 4; i++)
    out[3 + i] = (uint8_t)(escaped >> (8 * i));
#ifdef HAVE_AVX2_PATH
  if (from32)
    p = copy_escaped_avx2(x, escaped, nesc, p);
  else
#endif
    for (uint32_t e = escaped; e; e &= e - 1) {
      memcpy(p, x + __builtin_ctz(e), 4);
      p += 4;
    }
  if (from32 && w > 0 && 7 + 4 * nesc + 8 * ((31 * (w + 1) + 63) / 64) <= FAST_ROOM)
    put31_at[w]((uint32_t)u0, u, w0, p);
  else
    put_payload(u0, u, w, w0, p); /* size < 129: the words end within FAST_ROOM */
  return size;
}

/* A block with escapes from 64-bit codes q (changed: escaped values repeat
 * the previous code). */
static size_t encode_mixed_f32(const float *x, const gz_quant_t *qp, int64_t *q,
                               uint32_t escaped, uint8_t *out) {
  uint64_t u[32], all = 0;
  uint32_t u32[32];
  int w, w0, nesc = 0;
  size_t size = put_const(x, out);
  if (size)
    return size;
  for (int i = 0; i < 32; i++)
    if (escaped >> i & 1) {
      q[i] = i ? q[i - 1] : 0;
      nesc++;
    }
  u[0] = gz_zigzag((uint64_t)q[0]);
  for (int i = 1; i < 32; i++) {
    u[i] = gz_zigzag((uint64_t)q[i] - (uint64_t)q[i - 1]);
    all |= u[i];
  }
  w = gz_bit_width(all);
  w0 = gz_bit_width(u[0]);
  if (3 + 4 + (size_t)nesc * 4 + gz_packed_bytes(32, w, w0) >= 1 + 32 * sizeof(float))
    return put_raw(x, out);
  if (w > 32 || w0 > 56)
    return gz_block_encode_f32(x, 32, qp, out); /* widths past the fast path */
  for (int i = 1; i < 32; i++)
    u32[i] = (uint32_t)u[i];
  return put_mixed(x, escaped, nesc, u[0], u32, w, w0, out, 0);
}

/* The count of set bits without a library call (baseline x86-64 has no
 * popcnt). */
static inline uint32_t count_bits(uint32_t e) {
  uint32_t bits = e - (e >> 1 & 0x55555555u);
  bits = (bits & 0x33333333u) + (bits >> 2 & 0x33333333u);
  return ((bits + (bits >> 4)) & 0x0f0f0f0fu) * 0x01010101u >> 24;
}

/* The same from the 32-bit quantizer's zigzag deltas u (their codes, an
 * escaped value repeating the last one before it, in (-2^30, 2^30): w0 <=
 * 31) and their OR all. */
static size_t encode_mixed32_f32(const float *x, const uint32_t *u, uint32_t all,
                                 uint32_t escaped, uint8_t *out) {
  size_t size;
  /* values of equal bits are escaped alike: only a block escaped throughout
   * can be CONST */
  if (escaped == 0xffffffffu && (size = put_const(x, out)) != 0)
    return size;
  return put_mixed(x, escaped, (int)count_bits(escaped), u[0], u, gz_bit_width(all),
                   gz_bit_width(u[0]), out, 1);
}

/* Blocks to go straight to the full quantizer after one that the 32-bit one
 * refused: fields with large codes refuse many in a row, and trying each of
 * them twice would cost more than the 32-bit path saves. */
#define SKIP_AFTER_REFUSAL 8

/* Encode 32 lossy values at out, which has FAST_ROOM bytes; *skip32 counts
 * the blocks left before the 32-bit quantizer is tried again. */
static inline __attribute__((always_inline)) size_t
encode_f32(const values_kernels_t *k, const float *x, const gz_quant_t *qp,
           const quant32_consts_t *c32, int *skip32, uint8_t *out) {
  uint64_t u[32], all;
  int64_t q[32];
  int w, w0;
  size_t size;
  uint32_t ok, u32[32], all32;
  if (*skip32 > 0) {
    --*skip32;
  } else if (k->quant32 && c32->usable) {
    if (k->quant32(x, c32, u32, &all32, &ok)) {
      if (ok != 0xffffffffu)
        return encode_mixed32_f32(x, u32, all32, ~ok, out);
      w = gz_bit_width(all32); /* the common case */
      w0 = gz_bit_width(u32[0]);
      size = 2 + gz_packed_bytes(32, w, w0);
      if (size > 1 + 32 * sizeof(float))
        return put_raw(x, out);
      out[0] = (uint8_t)w;
      out[1] = (uint8_t)w0;
      if (w > 0) /* (w0 <= 31: the codes are within 2^30) */
        put31_at[w](u32[0], u32, w0, out + 2);
      else
        put_payload(u32[0], u32, w, w0, out + 2);
      return size;
    }
    *skip32 = SKIP_AFTER_REFUSAL;
  }
  ok = k->quant(x, qp, q, u, &all);
  if (ok != 0xffffffffu)
    return encode_mixed_f32(x, qp, q, ~ok, out);
  w = gz_bit_width(all);
  w0 = gz_bit_width(u[0]);
  size = 2 + gz_packed_bytes(32, w, w0);
  if (size > 1 + 32 * sizeof(float))
    return put_raw(x, out);
  if (w > 32 || w0 > 56)
    return gz_block_encode_f32(x, 32, qp, out);
  out[0] = (uint8_t)w;
  out[1] = (uint8_t)w0;
  put_payload64(u, w, w0, out + 2);
  return size;
}

/* The 32 values of the packed codes at pay (avail bytes, at least the
 * payload's) of widths w <= 32, w0 <= 56. */
static inline __attribute__((always_inline)) void
decode_payload(const values_kernels_t *k, const uint8_t *pay, size_t avail, int w, int w0,
               const gz_quant_t *qp, float *y) {
  uint64_t word[PAY_WORDS + 1], acc;
  uint32_t v[32];
  int64_t q[32];
  if (avail < sizeof word) { /* near the end: a zero-padded copy */
    memset(word, 0, sizeof word);
    memcpy(word, pay, gz_packed_bytes(32, w, w0));
    pay = (const uint8_t *)word;
  }
  memcpy(&acc, pay, sizeof acc);
  acc = w0 ? acc & ((1ull << w0) - 1) : 0;
  if (w <= 24 && acc <= (1ull << 31)) {
    k->decode24(pay, w, w0, (uint32_t)acc, qp, y);
    return;
  }
  if (w <= 30 && acc <= (1ull << 31) && k->decode30 &&
      k->decode30(pay, w, w0, (uint32_t)acc, qp, y))
    return;
  if (k->decode32 && k->decode32(pay, w, w0, acc, qp, y))
    return;
  if (pay != (const uint8_t *)word)
    memcpy(word, pay, sizeof word);
  unpack_rest(word, w, w0, v);
  acc = gz_unzigzag(acc);
  q[0] = (int64_t)acc;
  for (int i = 1; i < 32; i++) {
    acc += gz_unzigzag(v[i]);
    q[i] = (int64_t)acc;
  }
  k->dequant(q, qp, y);
}

/* One full PACKED block (in[0] <= 32, in[1] <= 56) of lossy float32 values
 * from avail bytes; 0 when it is longer than avail. */
static inline __attribute__((always_inline)) size_t
decode_f32(const values_kernels_t *k, const uint8_t *in, size_t avail,
           const gz_quant_t *qp, float *y) {
  size_t need = 2 + gz_packed_bytes(32, in[0], in[1]);
  if (need > avail)
    return 0;
  decode_payload(k, in + 2, avail - 2, in[0], in[1], qp, y);
  return need;
}

/* One full MIXED block, as gz_block_decode_f32 reads it. */
static inline __attribute__((always_inline)) size_t
decode_mixed_f32(const values_kernels_t *k, const uint8_t *in, size_t avail,
                 const gz_quant_t *qp, float *y) {
  uint32_t escaped;
  size_t need, nesc;
  const uint8_t *vals = in + 7;
  if (avail < 7 || in[1] > 32 || in[2] > 56)
    return gz_block_decode_f32(in, avail, 32, qp, y);
  escaped = (uint32_t)in[3] | (uint32_t)in[4] << 8 | (uint32_t)in[5] << 16 |
            (uint32_t)in[6] << 24;
  nesc = count_bits(escaped);
  need = 7 + 4 * nesc + gz_packed_bytes(32, in[1], in[2]);
  if (need > avail)
    return 0;
  decode_payload(k, vals + 4 * nesc, avail - 7 - 4 * nesc, in[1], in[2], qp, y);
  for (uint32_t e = escaped; e; e &= e - 1) { /* (no branch per value) */
    memcpy(y + __builtin_ctz(e), vals, 4);
    vals += 4;
  }
  return need;
}

/* ---- chunks ------------------------------------------------------------------ */

/* Blocks ahead whose values encode_blocks asks the cache for: with the
 * hardware prefetcher alone the loop waited on loads of x (BENCHMARKS.md,
 * i17e: the 128 MB smooth field 1.3-1.7x faster with it, same bytes). */
#define PREFETCH_BLOCKS 8

/* The nblocks full lossy blocks of x at p, whose room ends at end; returns
 * where they end. Inlined once per kernel set, so that the kernels' calls
 * are direct (and the 32-bit quantizer inlined) in the loop. */
static inline __attribute__((always_inline)) uint8_t *
encode_blocks(const values_kernels_t *k, const float *x, size_t nblocks,
              const gz_quant_t *qp, uint8_t *p, const uint8_t *end) {
  const quant32_consts_t c32 = quant32_prepare(qp);
  int skip32 = 0, after_const = 0;
  for (size_t b = 0; b < nblocks; b++) {
    const float *xb = x + GZ_BLOCK * b;
    size_t size;
    /* the block PREFETCH_BLOCKS on asked for now (its 128 bytes: two lines
     * from here at most 64 bytes apart cover them with the next block's) */
    if (b + PREFETCH_BLOCKS < nblocks) {
      __builtin_prefetch(xb + GZ_BLOCK * PREFETCH_BLOCKS);
      __builtin_prefetch(xb + GZ_BLOCK * PREFETCH_BLOCKS + 16);
    }
    /* fill values come in runs: after a CONST block, a block of 32 equal
     * refused values is written as CONST without quantizing it */
    if (after_const && (size_t)(end - p) >= 5 &&
        (size = put_const_refused(xb, qp, p)) != 0) {
      p += size;
      continue;
    }
    if ((size_t)(end - p) >= FAST_ROOM) {
      size = encode_f32(k, xb, qp, &c32, &skip32, p);
      after_const = p[0] == GZ_KIND_CONST;
      p += size;
    } else { /* near the end: through a scratch block */
      uint8_t tmp[FAST_ROOM];
      size = encode_f32(k, xb, qp, &c32, &skip32, tmp);
      after_const = tmp[0] == GZ_KIND_CONST;
      memcpy(p, tmp, size);
      p += size;
    }
  }
  return p;
}

static uint8_t *encode_blocks_portable(const float *x, size_t nblocks,
                                       const gz_quant_t *qp, uint8_t *p,
                                       const uint8_t *end) {
  return encode_blocks(&portable, x, nblocks, qp, p, end);
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static uint8_t *
encode_blocks_avx2(const float *x, size_t nblocks, const gz_quant_t *qp, uint8_t *p,
                   const uint8_t *end) {
  return encode_blocks(&avx2, x, nblocks, qp, p, end);
}
#endif

size_t gz_encode_values_isa(int isa, gz_dtype_t dtype, const void *in, size_t n,
                            const gz_quant_t *qp, uint8_t *out) {
  const values_kernels_t *k = kernels_for(isa);
  /* out has room for n * elem + ceil(n / GZ_BLOCK) bytes */
  uint8_t *p = out, *end = out + n * gz_dtype_size(dtype) + (n + GZ_BLOCK - 1) / GZ_BLOCK;
  size_t i = 0;
  if (dtype == GZ_FLOAT32) {
    const float *x = in;
    if (qp->eb > 0) {
      i = n / GZ_BLOCK * GZ_BLOCK;
#ifdef HAVE_AVX2_PATH
      if (k == &avx2)
        p = encode_blocks_avx2(x, n / GZ_BLOCK, qp, p, end);
      else
#endif
        p = encode_blocks_portable(x, n / GZ_BLOCK, qp, p, end);
    }
    for (; i + GZ_BLOCK <= n; i += GZ_BLOCK)
      p += gz_block_encode_f32(x + i, GZ_BLOCK, qp, p);
    if (i < n)
      p += gz_block_encode_f32(x + i, (int)(n - i), qp, p);
  } else {
    const double *x = in;
    for (; i + GZ_BLOCK <= n; i += GZ_BLOCK)
      p += gz_block_encode_f64(x + i, GZ_BLOCK, qp, p);
    if (i < n)
      p += gz_block_encode_f64(x + i, (int)(n - i), qp, p);
  }
  return (size_t)(p - out);
}

/* The n values of the blocks in[0..size) at out; inlined once per kernel
 * set, as encode_blocks. */
static inline __attribute__((always_inline)) gz_result_t
decode_blocks(const values_kernels_t *k, gz_dtype_t dtype, const uint8_t *in, size_t size,
              size_t n, const gz_quant_t *qp, void *out) {
  size_t pos = 0, used, i;
  int fast = dtype == GZ_FLOAT32 && qp->eb > 0;
  for (i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    if (fast && len == GZ_BLOCK && pos < size && in[pos] <= 32 && size - pos >= 2 &&
        in[pos + 1] <= 56)
      used = decode_f32(k, in + pos, size - pos, qp, (float *)out + i);
    else if (fast && len == GZ_BLOCK && pos < size && in[pos] == GZ_KIND_MIXED)
      used = decode_mixed_f32(k, in + pos, size - pos, qp, (float *)out + i);
    else if (dtype == GZ_FLOAT32)
      used = gz_block_decode_f32(in + pos, size - pos, len, qp, (float *)out + i);
    else
      used = gz_block_decode_f64(in + pos, size - pos, len, qp, (double *)out + i);
    if (!used)
      return GZ_ERR_CORRUPT;
    pos += used;
  }
  return pos == size ? GZ_OK : GZ_ERR_CORRUPT;
}

static gz_result_t decode_blocks_portable(gz_dtype_t dtype, const uint8_t *in,
                                          size_t size, size_t n, const gz_quant_t *qp,
                                          void *out) {
  return decode_blocks(&portable, dtype, in, size, n, qp, out);
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static gz_result_t
decode_blocks_avx2(gz_dtype_t dtype, const uint8_t *in, size_t size, size_t n,
                   const gz_quant_t *qp, void *out) {
  return decode_blocks(&avx2, dtype, in, size, n, qp, out);
}
#endif

gz_result_t gz_decode_values_isa(int isa, gz_dtype_t dtype, const uint8_t *in,
                                 size_t size, size_t n, const gz_quant_t *qp, void *out) {
#ifdef HAVE_AVX2_PATH
  if (kernels_for(isa) == &avx2)
    return decode_blocks_avx2(dtype, in, size, n, qp, out);
#endif
  return decode_blocks_portable(dtype, in, size, n, qp, out);
}

size_t gz_encode_values(gz_dtype_t dtype, const void *in, size_t n, const gz_quant_t *qp,
                        uint8_t *out) {
  return gz_encode_values_isa(GZ_ISA_AUTO, dtype, in, n, qp, out);
}

gz_result_t gz_decode_values(gz_dtype_t dtype, const uint8_t *in, size_t size, size_t n,
                             const gz_quant_t *qp, void *out) {
  return gz_decode_values_isa(GZ_ISA_AUTO, dtype, in, size, n, qp, out);
}
