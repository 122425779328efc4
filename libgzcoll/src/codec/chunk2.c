/* chunk2.c - one chunk of format version 2: pick a predictor from samples of
 * the chunk, then either quantize to codes and predict them (escapes as in
 * kernels/gz_block.h: values the quantizer refuses are stored verbatim), or
 * predict reconstructed values with quantization fused in (pred_value.c),
 * and code the residuals with rANS or bit-packed, whichever is smaller.
 *
 * Layout (n = d0 d1 d2 values of the chunk's box):
 *   byte 0  predictor: 0 = none (the rest is format-1 blocks of the values),
 *           else kind | view << 4: kind 1 = Lorenzo on codes, 2 =
 *           interpolation on codes, 3 = QLORENZO, 4 = QINTERP (on
 *           reconstructed values, bins centred on the prediction; lossy
 *           only); view 0 = the chunk's box, 1 = its 2-D (d0 d1, d2), 2 =
 *           its 1-D flattening (seismic traces predict best along time alone)
 *   byte 1  residual coding: 0 = bit-packed, 1 = bytes, 2 = byte planes
 *           (1 and 2 through zstd; decoded, no longer written), 3 = rANS on
 *           two states (decoded, no longer written), 4 = rANS on four
 *           (decoded, no longer written), 5 = rANS on 32 (rans32.c)
 *   varint  common factor g >= 1 of the codes (predicted divided by g; 1
 *           for kinds 3 and 4)
 *   section R: the n residuals in that coding          (entropy.h)
 *   section E: escapes: varint count, per escape a varint gap (values since
 *              the previous escape's successor), then the escaped values
 *              verbatim in order.
 * A chunk that would not shrink below the raw values, or whose sample
 * estimate is above 90% of them, falls back to 0.
 */
#define _DEFAULT_SOURCE /* posix_memalign, madvise */
#include "codec/chunk2.h"

#include "codec/entropy.h"
#include "codec/predict.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define SAMPLE_VALUES 8192
/* Sample boxes add up to at most 1/BOX_SHARE of a chunk (at least one). */
#define BOX_SHARE 48
#ifndef SAMPLE_BOXES
#define SAMPLE_BOXES 4
#endif
/* Fewest residuals worth a rANS table (and within the scratch of 11 n). */
#define RANS_MIN 1024

/* One workspace parked between calls, process-wide: a call that repeats
 * (a stream written slab by slab, a benchmark) finds its scratch already
 * faulted in instead of clearing fresh pages, which cost as much as the
 * coding itself on TREFHT. The largest buffer of each kind is kept (at most
 * about 60 bytes per value of the largest chunk coded, resident only where
 * touched); a thread that finds the slot busy allocates and frees as
 * before. */
static atomic_flag park_busy = ATOMIC_FLAG_INIT;
static gz_chunk2_work_t parked;

void gz_chunk2_work_free(gz_chunk2_work_t *w) {
  int mine = !atomic_flag_test_and_set(&park_busy);
  for (int k = 0; k < GZ_CHUNK2_BUFS; k++) {
    if (mine && w->cap[k] > parked.cap[k]) {
      void *t = parked.buf[k];
      parked.buf[k] = w->buf[k];
      parked.cap[k] = w->cap[k];
      w->buf[k] = t;
    }
    free(w->buf[k]);
    w->buf[k] = NULL;
    w->cap[k] = 0;
  }
  if (mine && !parked.zc) {
    parked.zc = w->zc;
    w->zc = NULL;
  }
  if (mine && !parked.zd) {
    parked.zd = w->zd;
    w->zd = NULL;
  }
  gz_zstd_free(w->zc, w->zd);
  w->zc = w->zd = NULL;
  if (mine)
    atomic_flag_clear(&park_busy);
}

/* The parked zstd contexts, when the workspace has none yet. */
static void adopt_zstd(gz_chunk2_work_t *w) {
  if ((w->zc && w->zd) || atomic_flag_test_and_set(&park_busy))
    return;
  if (!w->zc) {
    w->zc = parked.zc;
    parked.zc = NULL;
  }
  if (!w->zd) {
    w->zd = parked.zd;
    parked.zd = NULL;
  }
  atomic_flag_clear(&park_busy);
}

/* Scratch of bytes bytes. Large buffers are fresh pages on every call
 * (glibc maps them), and faulting them in 4 KiB at a time cost a quarter of
 * a compress of soda lakes or TREFHT: on Linux they are aligned to and
 * advised for 2 MiB pages (a hint; transparent huge pages in madvise mode),
 * 512 times fewer faults. */
#define HUGE_PAGE ((size_t)2 << 20)
static void *scratch(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= 2 * HUGE_PAGE) {
    void *p = NULL;
    size_t len = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, len) != 0)
      return NULL;
    (void)madvise(p, len, MADV_HUGEPAGE);
    return p;
  }
#endif
  return malloc(bytes ? bytes : 1);
}

/* Buffer k of the workspace with at least bytes bytes (kept for the next
 * chunk, so the pages are touched once per call, not once per chunk). */
static void *work(gz_chunk2_work_t *w, int k, size_t bytes) {
  if (w->cap[k] < bytes && !atomic_flag_test_and_set(&park_busy)) {
    if (parked.cap[k] >= bytes) { /* the parked one: swap */
      void *t = w->buf[k];
      size_t c = w->cap[k];
      w->buf[k] = parked.buf[k];
      w->cap[k] = parked.cap[k];
      parked.buf[k] = t;
      parked.cap[k] = c;
    }
    atomic_flag_clear(&park_busy);
  }
  if (w->cap[k] < bytes) {
    free(w->buf[k]);
    w->buf[k] = scratch(bytes);
    w->cap[k] = w->buf[k] ? bytes : 0;
  }
  return w->buf[k];
}

size_t gz_chunk2_bound(size_t n, size_t elem) {
  return 1 + (n + GZ_BLOCK - 1) / GZ_BLOCK + n * elem;
}

/* The first i >= from with flag[i] equal to set (flags are 0 or 1, mostly
 * 0), or n: eight flags at a time (a byte loop cost a tenth of a compress of
 * the smooth field, and memchr per escape an eighth of ERSST's, whose land
 * points are runs of escapes; set = 0 finds the end of such a run). */
size_t gz_chunk2_find_flag(const uint8_t *flag, size_t from, size_t n, int set) {
  size_t i = from;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                                      \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t flip = set ? 0 : 0x0101010101010101ull;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, flag + i, 8);
    w ^= flip;
    if (w)
      return i + (size_t)__builtin_ctzll(w) / 8;
  }
#endif
  for (; i < n; i++)
    if (flag[i] == set)
      return i;
  return n;
}

/* The instruction set of the quantizer: -1 not asked yet, 0 portable, 1
 * AVX2, 2 AVX2 and AVX-512 (gz_chunk2_simd). */
static int simd_level = -1;

int gz_chunk2_simd(int want) {
  int have = gz_cpu_avx2() ? 1 + gz_cpu_avx512() : 0;
  if (want >= 0)
    simd_level = want < have ? want : have;
  else if (simd_level < 0)
    simd_level = have;
  return simd_level;
}

/* float32 codes and escape flags, as gz_quantize_one_f32 for a stream:
 * one value at a time, or (quant_f32_avx2) four lanes of the same double
 * operations, no FMA, so both give the same flags and codes (escapes
 * aside: their codes are any, quantize_part overwrites them). Both return
 * the number of escapes (counted as they are flagged, not in a pass of
 * their own). */
static size_t quant_f32_portable(const float *v, size_t n, const gz_quant_t *qp,
                                 int64_t *q, uint8_t *esc) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    esc[i] = (uint8_t)!gz_quantize_one_f32(v[i], qp, 1, &q[i]);
    bad += esc[i];
  }
  return bad;
}

#ifdef HAVE_AVX2_PATH
/* The escape flags of four lanes from the mask of the good ones: byte j is
 * 1 where bit j is 0 (a table instead of the shifts and masks that were
 * half of the loop's instructions). */
#define GZ_ESC4(g)                                                                       \
  ((uint32_t)(!((g)&1)) | (uint32_t)(!((g)&2)) << 8 | (uint32_t)(!((g)&4)) << 16 |       \
   (uint32_t)(!((g)&8)) << 24)
static const uint32_t escape_bytes[16] = {
    GZ_ESC4(0),  GZ_ESC4(1),  GZ_ESC4(2),  GZ_ESC4(3), GZ_ESC4(4),  GZ_ESC4(5),
    GZ_ESC4(6),  GZ_ESC4(7),  GZ_ESC4(8),  GZ_ESC4(9), GZ_ESC4(10), GZ_ESC4(11),
    GZ_ESC4(12), GZ_ESC4(13), GZ_ESC4(14), GZ_ESC4(15)};
#undef GZ_ESC4

/* The quantizer's constants in AVX2 registers. */
typedef struct quant_avx2 {
  __m256d inv, step, eb, cmax, shift, absm;
  __m256i base;
  __m128i expo, zero;
} quant_avx2_t;

__attribute__((target("avx2"))) static inline quant_avx2_t
quant_avx2_make(const gz_quant_t *qp) {
  quant_avx2_t c;
  c.inv = _mm256_set1_pd(qp->inv_step);
  c.step = _mm256_set1_pd(qp->step);
  c.eb = _mm256_set1_pd(qp->eb);
  c.cmax = _mm256_set1_pd(qp->code_max);
  c.shift = _mm256_set1_pd(GZ_RINT_SHIFT);
  c.absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  c.base = _mm256_castpd_si256(c.shift);
  c.expo = _mm_set1_epi32(0x7f800000);
  c.zero = _mm_setzero_si128();
  return c;
}

/* The codes of x[0..3] and in *good the mask of the lanes that are not
 * escapes (bit j: lane j); an escape's code is any (the callers overwrite
 * it), and so is its reconstruction r (the bound check is masked by the
 * range check after it). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
quant4_avx2(const quant_avx2_t *c, const float *x, unsigned *good) {
  __m128i b = _mm_loadu_si128((const __m128i *)(const void *)x);
  /* -0.0 and subnormals: exponent field 0, bits not 0 */
  __m128i refused = _mm_andnot_si128(_mm_cmpeq_epi32(b, c->zero),
                                     _mm_cmpeq_epi32(_mm_and_si128(b, c->expo), c->zero));
  __m256d v = _mm256_cvtps_pd(_mm_castsi128_ps(b));
  __m256d sh = _mm256_add_pd(_mm256_mul_pd(v, c->inv), c->shift);
  __m256d qd = _mm256_sub_pd(sh, c->shift);
  __m256d in = _mm256_cmp_pd(_mm256_and_pd(qd, c->absm), c->cmax, _CMP_LE_OQ);
  __m256i qi = _mm256_sub_epi64(_mm256_castpd_si256(sh), c->base);
  __m256d r = _mm256_mul_pd(qd, c->step);
  __m256d rf = _mm256_cvtps_pd(_mm256_cvtpd_ps(r));
  __m256d close =
      _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(v, rf), c->absm), c->eb, _CMP_LE_OQ);
  *good = (unsigned)_mm256_movemask_pd(_mm256_and_pd(in, close)) &
          ~(unsigned)_mm_movemask_ps(_mm_castsi128_ps(refused));
  return qi;
}

__attribute__((target("avx2"))) static size_t
quant_f32_avx2(const float *x, size_t n, const gz_quant_t *qp, int64_t *q, uint8_t *esc) {
  const quant_avx2_t c = quant_avx2_make(qp);
  size_t i = 0, bad = 0;
  for (; i + 4 <= n; i += 4) {
    unsigned good;
    __m256i qi = quant4_avx2(&c, x + i, &good);
    _mm256_storeu_si256((__m256i *)(void *)(q + i), qi);
    memcpy(esc + i, &escape_bytes[good], 4); /* little-endian: byte j is lane j */
    bad += (size_t)__builtin_popcount(good ^ 15);
  }
  return bad + quant_f32_portable(x + i, n - i, qp, q + i, esc + i);
}

/* One row of n values x quantized into cur and esc, escapes repeating the
 * previous code (*prev for the first: read only then, as a load of the
 * code just stored in eight lanes waited for the store, a fifth of the
 * pass on WRF), and its Lorenzo residuals into u
 * from the rows up, back and bu that hold final codes (read only where the
 * constant flags say they exist): the same as quant_f32_avx2, quantize_part's
 * escape codes and gz_lorenzo_encode_rows in turn, in one pass. The
 * residual is t(k) - t(k - 1) with t(k) = cur(k) - up(k) - back(k) + bu(k)
 * (t(-1) = t0: 0 at a row's start), the previous four t taken from a
 * register. Returns the escape count. */
__attribute__((target("avx2"), always_inline)) static inline size_t
quant_lorenzo_row(const quant_avx2_t *c, const gz_quant_t *qp, const float *x, size_t n,
                  const int64_t *prev, int64_t *cur, const int64_t *up,
                  const int64_t *back, const int64_t *bu, uint64_t *u, uint8_t *esc,
                  int has_up, int has_back, uint64_t t0) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i tprev = _mm256_set_epi64x((long long)t0, 0, 0, 0);
  uint64_t tlast;
  size_t k = 0, bad = 0;
  for (; k + 4 <= n; k += 4) {
    unsigned good;
    __m256i qi = quant4_avx2(c, x + k, &good), t, r;
    if (good != 15) { /* escapes: the previous code, lane by lane */
      _mm256_storeu_si256((__m256i *)(void *)(cur + k), qi);
      for (size_t j = 0; j < 4; j++)
        if (!(good >> j & 1))
          cur[k + j] = k + j ? cur[k + j - 1] : *prev;
      qi = _mm256_loadu_si256((const __m256i *)(const void *)(cur + k));
      memcpy(esc + k, &escape_bytes[good], 4); /* (the rows' flags start at 0) */
      bad += (size_t)__builtin_popcount(good ^ 15);
    }
    _mm256_storeu_si256((__m256i *)(void *)(cur + k), qi);
    t = qi;
    if (has_up)
      t = _mm256_sub_epi64(t,
                           _mm256_loadu_si256((const __m256i *)(const void *)(up + k)));
    if (has_back)
      t = _mm256_sub_epi64(t,
                           _mm256_loadu_si256((const __m256i *)(const void *)(back + k)));
    if (has_up && has_back)
      t = _mm256_add_epi64(t,
                           _mm256_loadu_si256((const __m256i *)(const void *)(bu + k)));
    /* t(k - 1 .. k + 2): the last lane of tprev, then t's first three */
    r = _mm256_sub_epi64(
        t, _mm256_alignr_epi8(t, _mm256_permute2x128_si256(tprev, t, 0x21), 8));
    r = _mm256_xor_si256(_mm256_add_epi64(r, r), _mm256_cmpgt_epi64(zero, r));
    _mm256_storeu_si256((__m256i *)(void *)(u + k), r);
    tprev = t;
  }
  tlast = (uint64_t)_mm256_extract_epi64(tprev, 3);
  if (k < n) {
    bad += quant_f32_portable(x + k, n - k, qp, cur + k, esc + k);
    for (; k < n; k++) {
      uint64_t t;
      if (esc[k])
        cur[k] = k ? cur[k - 1] : *prev;
      t = (uint64_t)cur[k] - (has_up ? (uint64_t)up[k] : 0) -
          (has_back ? (uint64_t)back[k] : 0) + (has_up && has_back ? (uint64_t)bu[k] : 0);
      u[k] = gz_pred_zigzag(t - tlast);
      tlast = t;
    }
  }
  return bad;
}

/* quant_lorenzo_row in vectors of eight doubles (gz_chunk2_simd level 2):
 * the same IEEE operations lane by lane (no contraction in ISO C mode), so
 * the same flags, codes and residuals, from half the instructions (the
 * AVX2 row was a quarter of a compress of WRF). The lanes past the last
 * eight go through quant_lorenzo_row. */
#define GZ_W8 "avx2,avx512f,avx512vl,avx512dq,avx512bw"
__attribute__((target(GZ_W8), always_inline)) static inline size_t
quant_lorenzo_row8(const quant_avx2_t *c4, const gz_quant_t *qp, const float *x, size_t n,
                   const int64_t *prev, int64_t *cur, const int64_t *up,
                   const int64_t *back, const int64_t *bu, uint64_t *u, uint8_t *esc,
                   int has_up, int has_back, uint64_t t0) {
  const __m512d inv = _mm512_set1_pd(qp->inv_step), step = _mm512_set1_pd(qp->step),
                eb = _mm512_set1_pd(qp->eb), cmax = _mm512_set1_pd(qp->code_max),
                shift = _mm512_set1_pd(GZ_RINT_SHIFT);
  const __m512i absm = _mm512_set1_epi64(0x7fffffffffffffffll),
                base = _mm512_castpd_si512(shift);
  const __m256i expo = _mm256_set1_epi32(0x7f800000), zero8 = _mm256_setzero_si256();
  __m512i tprev = _mm512_set1_epi64((long long)t0); /* lane 7 read only */
  size_t k = 0, bad = 0;
  for (; k + 8 <= n; k += 8) {
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(x + k));
    /* -0.0 and subnormals: exponent field 0, bits not 0 */
    __mmask8 refused = _mm256_mask_cmpeq_epi32_mask(_mm256_cmpneq_epi32_mask(b, zero8),
                                                    _mm256_and_si256(b, expo), zero8);
    __m512d v = _mm512_cvtps_pd(_mm256_castsi256_ps(b));
    __m512d sh = _mm512_add_pd(_mm512_mul_pd(v, inv), shift);
    __m512d qd = _mm512_sub_pd(sh, shift);
    __mmask8 in = _mm512_cmp_pd_mask(_mm512_and_pd(qd, _mm512_castsi512_pd(absm)), cmax,
                                     _CMP_LE_OQ);
    __m512i qi = _mm512_sub_epi64(_mm512_castpd_si512(sh), base), t, r;
    __m512d rf = _mm512_cvtps_pd(_mm512_cvtpd_ps(_mm512_mul_pd(qd, step)));
    __mmask8 close = _mm512_cmp_pd_mask(
        _mm512_and_pd(_mm512_sub_pd(v, rf), _mm512_castsi512_pd(absm)), eb, _CMP_LE_OQ);
    unsigned good = (unsigned)(in & close & (__mmask8)~refused);
    if (good != 255) { /* escapes: the previous code, lane by lane */
      _mm512_storeu_si512((void *)(cur + k), qi);
      for (size_t j = 0; j < 8; j++)
        if (!(good >> j & 1))
          cur[k + j] = k + j ? cur[k + j - 1] : *prev;
      qi = _mm512_loadu_si512((const void *)(cur + k));
      memcpy(esc + k, &escape_bytes[good & 15], 4); /* (the rows' flags start at 0) */
      memcpy(esc + k + 4, &escape_bytes[good >> 4], 4);
      bad += (size_t)__builtin_popcount(good ^ 255);
    }
    _mm512_storeu_si512((void *)(cur + k), qi);
    t = qi;
    if (has_up)
      t = _mm512_sub_epi64(t, _mm512_loadu_si512((const void *)(up + k)));
    if (has_back)
      t = _mm512_sub_epi64(t, _mm512_loadu_si512((const void *)(back + k)));
    if (has_up && has_back)
      t = _mm512_add_epi64(t, _mm512_loadu_si512((const void *)(bu + k)));
    /* t(k - 1 .. k + 6): the last lane of tprev, then t's first seven */
    r = _mm512_sub_epi64(t, _mm512_alignr_epi64(t, tprev, 7));
    r = _mm512_xor_si512(_mm512_add_epi64(r, r), _mm512_srai_epi64(r, 63));
    _mm512_storeu_si512((void *)(u + k), r);
    tprev = t;
  }
  if (k < n) /* the rest, its first residual from t(k - 1) */
    bad += quant_lorenzo_row(
        c4, qp, x + k, n - k, k ? cur + k - 1 : prev, cur + k, up + k, back + k, bu + k,
        u + k, esc + k, has_up, has_back,
        (uint64_t)_mm256_extract_epi64(_mm512_extracti64x4_epi64(tprev, 1), 3));
  return bad;
}

/* What quant_lorenzo_avx2 and _avx512 do before their rows: the planes
 * before r0 that are read moved to planes 0 and 1 of q, the rows' flags
 * cleared. Returns the code before row r0. */
static int64_t quant_lorenzo_start(const size_t v[3], size_t r0, size_t r1, int64_t *q,
                                   uint8_t *esc) {
  size_t plane = v[1] * v[2], len = v[2], i = r0 / v[1], j = r0 % v[1];
  int64_t prev = q[r0 * len - 1];
  if (i >= 2) { /* no overlap: plane i - 1 lands in 0 or 1, the part of i in the other */
    memmove(q + ((i - 1) & 1) * plane, q + (i - 1) * plane, plane * sizeof *q);
    memmove(q + (i & 1) * plane, q + i * plane, j * len * sizeof *q);
  }
  memset(esc + r0 * len, 0, (r1 - r0) * len);
  return prev;
}

/* The rows of quant_lorenzo_avx2 and _avx512 through ROW (quant_lorenzo_row
 * or _row8), the flags constant in each call: plane i's codes in plane
 * i & 1 of q. */
#define GZ_QL_ROWS(ROW)                                                                  \
  do {                                                                                   \
    size_t plane = v[1] * v[2], len = v[2], i = r0 / v[1], j = r0 % v[1];                \
    int64_t first = quant_lorenzo_start(v, r0, r1, q, esc);                              \
    const int64_t *prev = &first;                                                        \
    for (size_t r = r0; r < r1; r++) {                                                   \
      size_t off = r * len;                                                              \
      int64_t *cur = q + (i & 1) * plane + j * len;                                      \
      const int64_t *up = j ? cur - len : cur,                                           \
                    *back = i ? q + ((i - 1) & 1) * plane + j * len : cur,               \
                    *bu = i && j ? back - len : cur;                                     \
      if (i && j)                                                                        \
        bad += ROW(&c, qp, x + off, len, prev, cur, up, back, bu, u + off, esc + off, 1, \
                   1, 0);                                                                \
      else if (j)                                                                        \
        bad += ROW(&c, qp, x + off, len, prev, cur, up, up, up, u + off, esc + off, 1,   \
                   0, 0);                                                                \
      else if (i)                                                                        \
        bad += ROW(&c, qp, x + off, len, prev, cur, back, back, back, u + off,           \
                   esc + off, 0, 1, 0);                                                  \
      else                                                                               \
        bad += ROW(&c, qp, x + off, len, prev, cur, cur, cur, cur, u + off, esc + off,   \
                   0, 0, 0);                                                             \
      prev = cur + len - 1;                                                              \
      if (++j == v[1]) {                                                                 \
        j = 0;                                                                           \
        i++;                                                                             \
      }                                                                                  \
    }                                                                                    \
  } while (0)

/* Rows r0 <= r < r1 of the box v (0 < r0: the rows before it quantized at
 * their places in q) through quant_lorenzo_row. Prediction reads only the
 * plane before, so the codes of plane i are kept in plane i & 1 of q, which
 * stays in cache (8 bytes a value written to memory and read back were
 * most of the pass's cost on TREFHT once the decoder had run; the planes
 * before r0 that are read are moved there first). q's codes are lost. */
__attribute__((target("avx2"))) static size_t
quant_lorenzo_avx2(const float *x, const size_t v[3], size_t r0, size_t r1,
                   const gz_quant_t *qp, int64_t *q, uint8_t *esc, uint64_t *u) {
  const quant_avx2_t c = quant_avx2_make(qp);
  size_t bad = 0;
  GZ_QL_ROWS(quant_lorenzo_row);
  return bad;
}

/* quant_lorenzo_avx2 through quant_lorenzo_row8 (level 2). */
__attribute__((target(GZ_W8))) static size_t
quant_lorenzo_avx512(const float *x, const size_t v[3], size_t r0, size_t r1,
                     const gz_quant_t *qp, int64_t *q, uint8_t *esc, uint64_t *u) {
  const quant_avx2_t c = quant_avx2_make(qp);
  size_t bad = 0;
  GZ_QL_ROWS(quant_lorenzo_row8);
  return bad;
}
#undef GZ_QL_ROWS
#undef GZ_W8
#endif

/* The codes and escape flags of n values; an escape repeats the previous
 * code, `before` for the first. Returns the escape count. */
static size_t quantize_part(gz_dtype_t dtype, const void *x, size_t n,
                            const gz_quant_t *qp, int64_t *q, uint8_t *esc,
                            int64_t before) {
  size_t bad = 0;
  if (qp->eb > 0) {
    if (dtype == GZ_FLOAT32) {
#ifdef HAVE_AVX2_PATH
      if (gz_chunk2_simd(-1))
        bad = quant_f32_avx2(x, n, qp, q, esc);
      else
#endif
        bad = quant_f32_portable(x, n, qp, q, esc);
    } else {
      const double *v = x;
      for (size_t i = 0; i < n; i++) {
        esc[i] = (uint8_t)!gz_quantize_one_f64(v[i], qp, 1, &q[i]);
        bad += esc[i];
      }
    }
    if (bad)
      for (size_t i = gz_chunk2_find_flag(esc, 0, n, 1); i < n;
           i = gz_chunk2_find_flag(esc, i + 1, n, 1))
        q[i] = i ? q[i - 1] : before;
  } else {
    memset(esc, 0, n);
    if (dtype == GZ_FLOAT32)
      for (size_t i = 0; i < n; i++)
        q[i] = gz_ordered_f32(((const float *)x)[i]);
    else
      for (size_t i = 0; i < n; i++)
        q[i] = gz_ordered_f64(((const double *)x)[i]);
  }
  return bad;
}

static void quantize(gz_dtype_t dtype, const void *x, size_t n, const gz_quant_t *qp,
                     int64_t *q, uint8_t *esc, size_t *nesc) {
  *nesc = quantize_part(dtype, x, n, qp, q, esc, 0);
}

/* The bits of v >= 1: 64 less its leading zeros. */
static uint64_t width(uint64_t v) { return (uint64_t)(64 - __builtin_clzll(v | 1)); }

/* The symbols min(u, 255) of n residuals into sym; returns the widths of
 * those of 255 and more, added up (one value at a time, or eight lanes at
 * a time in symbols_avx512: the same bytes and sum). */
static uint64_t symbols_portable(const uint64_t *u, size_t n, uint8_t *sym) {
  uint64_t wide = 0;
  for (size_t i = 0; i < n; i++) {
    sym[i] = (uint8_t)(u[i] < 255 ? u[i] : 255);
    wide += u[i] >= 255 ? width(u[i]) : 0;
  }
  return wide;
}

#ifdef HAVE_AVX2_PATH
/* A lane's width from its conversion to double rounded toward zero (never
 * up to the next power of two): the exponent field less 1022. */
__attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"))) static uint64_t
symbols_avx512(const uint64_t *u, size_t n, uint8_t *sym) {
  const __m512i most = _mm512_set1_epi64(254), top = _mm512_set1_epi64(255);
  __m512i expo = _mm512_setzero_si512();
  uint64_t big = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512i v = _mm512_loadu_si512((const void *)(u + i));
    __mmask8 wide = _mm512_cmpgt_epu64_mask(v, most);
    __m512d d = _mm512_cvt_roundepu64_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    _mm_storel_epi64((__m128i *)(void *)(sym + i),
                     _mm512_cvtepi64_epi8(_mm512_min_epu64(v, top)));
    expo = _mm512_mask_add_epi64(expo, wide, expo,
                                 _mm512_srli_epi64(_mm512_castpd_si512(d), 52));
    big += (uint64_t)__builtin_popcount(wide);
  }
  return (uint64_t)_mm512_reduce_add_epi64(expo) - 1022 * big +
         symbols_portable(u + i, n - i, sym + i);
}
#endif

/* Residuals whose symbols gz_chunk2_cost_bits takes at a time (on the stack). */
#define COST_BLOCK 1024

/* Estimated coded size of n <= 2^32 residuals in bits: the order-0
 * entropy of the symbols min(u, 255) (what the byte coder and zstd's
 * Huffman stage see) plus the width of every residual of 255 and more.
 * The symbols of a block are found first, in lanes, then counted (a loop
 * that did both one residual at a time was three quarters of the trials'
 * estimates, which were a twentieth of a compress of WRF). */
double gz_chunk2_cost_bits(const uint64_t *u, size_t n) {
  uint32_t hist[4][256];
  uint8_t sym[COST_BLOCK];
  uint64_t wide = 0; /* integer, so the same total in any order */
  size_t h[256];
  double bits;
  memset(hist, 0, sizeof hist);
  for (size_t b = 0; b < n; b += COST_BLOCK) {
    size_t len = n - b < COST_BLOCK ? n - b : COST_BLOCK, i = 0;
#ifdef HAVE_AVX2_PATH
    if (gz_chunk2_simd(-1) > 1)
      wide += symbols_avx512(u + b, len, sym);
    else
#endif
      wide += symbols_portable(u + b, len, sym);
    /* four histograms so that runs of one symbol do not wait on one counter */
    for (; i + 4 <= len; i += 4)
      for (int j = 0; j < 4; j++)
        hist[j][sym[i + j]]++;
    for (; i < len; i++)
      hist[0][sym[i]]++;
  }
  for (int k = 0; k < 256; k++)
    h[k] = (size_t)hist[0][k] + hist[1][k] + hist[2][k] + hist[3][k];
  bits = (double)wide;
  for (int k = 0; k < 256; k++)
    if (h[k])
      bits -= (double)h[k] * log2((double)h[k] / (double)n);
  return bits;
}

/* The box a predictor sees in view v: 0 the chunk's box, 1 its 2-D
 * flattening (d0 d1, d2), 2 its 1-D flattening. */
static void view_box(const size_t d[3], int view, size_t v[3]) {
  v[0] = view == 0 ? d[0] : 1;
  v[1] = view == 0 ? d[1] : view == 1 ? d[0] * d[1] : 1;
  v[2] = view == 2 ? d[0] * d[1] * d[2] : d[2];
}

static void run_encode(int kind, int64_t *q, const size_t v[3], uint64_t *u) {
  if (kind == GZ_PRED_INTERP)
    gz_interp_encode(q, v, u);
  else
    gz_lorenzo_encode(q, v, u);
}

static uint64_t common_factor(const int64_t *q, size_t n);
static void divide_codes(int64_t *q, size_t n, uint64_t g);

/* Chunk kinds (byte 0, low nibble): 1, 2 predict codes (LORENZO, INTERP);
 * 3, 4 predict reconstructed values (QLORENZO, QINTERP; pred_value.c). */
#define KIND_QLORENZO 3
#define KIND_QINTERP 4

/* Whether the kind may code this chunk under predictor p. */
static int allowed(int kind, int p, double eb) {
  if (kind >= KIND_QLORENZO && !(eb > 0))
    return 0;
  if (p == GZ_PRED_AUTO) /* interpolated codes lost to QINTERP on every field */
    return kind != GZ_PRED_INTERP || !(eb > 0);
  if (!(eb > 0) && p >= GZ_PRED_QLORENZO) /* lossless: the code kind instead */
    p -= GZ_PRED_QLORENZO - GZ_PRED_LORENZO;
  return p == GZ_PRED_LORENZO    ? kind == 1
         : p == GZ_PRED_INTERP   ? kind == 2
         : p == GZ_PRED_QLORENZO ? kind == KIND_QLORENZO
                                 : kind == KIND_QINTERP;
}

/* The values of sample box `box` of the chunk (s values per axis) into sx. */
static void copy_box(gz_dtype_t dtype, const void *x, const size_t d[3],
                     const size_t s[3], int box, uint8_t *sx) {
  size_t o[3], elem = gz_dtype_size(dtype);
  o[0] = (d[0] - s[0]) / 2;
  o[1] = (d[1] - s[1]) * (box & 1 ? 3 : 1) / 4;
  o[2] = (d[2] - s[2]) * (box == 1 || box == 2 ? 3 : 1) / 4;
  for (size_t i = 0; i < s[0]; i++)
    for (size_t j = 0; j < s[1]; j++)
      memcpy(sx + (i * s[1] + j) * s[2] * elem,
             (const uint8_t *)x + (((o[0] + i) * d[1] + o[1] + j) * d[2] + o[2]) * elem,
             s[2] * elem);
}

/* Sample box `box` of the chunk (m values) into sx, its codes into sq
 * (divided by their common factor) and escape flags into esc. */
static void sample_box(gz_dtype_t dtype, const void *x, const size_t d[3],
                       const size_t s[3], int box, const gz_quant_t *qp, uint8_t *sx,
                       int64_t *sq, uint8_t *esc) {
  size_t nesc, m = s[0] * s[1] * s[2];
  uint64_t g;
  copy_box(dtype, x, d, s, box, sx);
  quantize(dtype, sx, m, qp, sq, esc, &nesc);
  g = common_factor(sq, m);
  if (g > 1)
    divide_codes(sq, m, g);
}

/* The scratch of the trials: m values of a sample box in each array (the
 * chunk's own buffers, which the trials use before the chunk is coded). */
typedef struct trial_buf {
  uint8_t *sx;  /* the box's values */
  int64_t *sq;  /* their codes (only read by the predictors on codes) */
  uint64_t *sr; /* reconstructed codes of QLORENZO and QINTERP */
  uint64_t *su; /* residuals */
  uint8_t *esc; /* escape flags */
} trial_buf_t;

/* The estimated bits of kind in view on the sample (b->sx, b->sq; m values
 * of box s). */
static double trial(int kind, int view, gz_dtype_t dtype, const size_t s[3], size_t m,
                    const trial_buf_t *b, double eb) {
  size_t v[3];
  view_box(s, view, v);
  /* escapes are left out: their section is zstd-coded, and zeros that
   * QINTERP escapes cost next to nothing there */
  if (kind < KIND_QLORENZO)
    run_encode(kind, b->sq, v, b->su);
  else
    gz_vpred_encode(kind == KIND_QINTERP ? GZ_VPRED_INTERP : GZ_VPRED_LORENZO,
                    dtype == GZ_FLOAT64, b->sx, v, eb, b->sr, b->su, b->esc, NULL, NULL);
  return gz_chunk2_cost_bits(b->su, m);
}

/* The (kind, view) with the smallest estimated size on four boxes of the
 * chunk spread over it (so that land masks and quiet traces are seen), the
 * same samples for every candidate, flattened as each view says. Returns
 * kind | view << 4. The boxes are at most the chunk (b: room for m of its
 * values).
 *
 * When both Lorenzo kinds compete (AUTO, lossy), QLORENZO is tried in the
 * view where Lorenzo on codes did best only: their estimates differ by
 * under 2 % on every field measured and rank the views alike, and a
 * QLORENZO trial costs several of Lorenzo's (a third of all trials' time
 * saved, which was a third of a compress of WRF). It reads only the boxes'
 * values: they are copied again, not quantized again (and one box is still
 * in b->sx). */
static int choose(gz_dtype_t dtype, const void *x, const size_t d[3],
                  const gz_quant_t *qp, int predictor, const trial_buf_t *b,
                  double *bits_per_value) {
  size_t s[3], m;
  double cost[5][3] = {{0}}, best_cost = HUGE_VAL;
  int tried[5][3] = {{0}};
  int best = 0, boxes,
      later = allowed(1, predictor, qp->eb) && allowed(KIND_QLORENZO, predictor, qp->eb);
  /* boxes of 4 x 16 x 128 (2-D: 64 x 128; 1-D: SAMPLE_VALUES), chosen on
   * the real fields and a smooth one: boxes much shorter along the fastest
   * axis misjudge interpolation's coarse levels (soda lakes 23 instead of
   * 42), much thinner ones the slower axes (the smooth field 8.3 instead of
   * 15) */
  s[0] = d[0] < 4 ? d[0] : 4;
  s[1] = d[1] < (d[0] > 1 ? 16 : 64) ? d[1] : (d[0] > 1 ? 16 : 64);
  s[2] = d[2] < (d[0] * d[1] > 1 ? 128 : SAMPLE_VALUES) ? d[2]
         : d[0] * d[1] > 1                              ? 128
                                                        : SAMPLE_VALUES;
  m = s[0] * s[1] * s[2];
  /* a small chunk gets fewer boxes: seven trials on each, so four boxes
   * took 58 % of WRF's 129,024 values through the trials, a third of its
   * compress; one box (boxes of 1/48 of the chunk in all) chose the same predictor
   * on every field and bound measured (F3: one box, not four of its 31,050
   * values) */
  boxes = (int)(d[0] * d[1] * d[2] / (BOX_SHARE * m));
  boxes = boxes < 1 ? 1 : boxes > SAMPLE_BOXES ? SAMPLE_BOXES : boxes;
  for (int kind = 1; kind <= KIND_QINTERP; kind++)
    for (int view = 0; view < 3; view++)
      tried[kind][view] = allowed(kind, predictor, qp->eb) &&
                          !(view == 1 && s[0] == 1) &&        /* the same box as a view */
                          !(view == 2 && s[0] * s[1] == 1) && /* before */
                          !(later && kind == KIND_QLORENZO);
  for (int box = 0; box < boxes; box++) {
    sample_box(dtype, x, d, s, box, qp, b->sx, b->sq, b->esc);
    for (int kind = 1; kind <= KIND_QINTERP; kind++)
      for (int view = 0; view < 3; view++)
        if (tried[kind][view])
          cost[kind][view] += trial(kind, view, dtype, s, m, b, qp->eb);
  }
  if (later) { /* QLORENZO in Lorenzo's best view */
    int v = 0;
    for (int view = 1; view < 3; view++)
      if (tried[1][view] && cost[1][view] < cost[1][v])
        v = view;
    tried[KIND_QLORENZO][v] = 1;
    for (int box = 0; box < boxes; box++) {
      if (boxes > 1)
        copy_box(dtype, x, d, s, box, b->sx);
      cost[KIND_QLORENZO][v] += trial(KIND_QLORENZO, v, dtype, s, m, b, qp->eb);
    }
  }
  for (int kind = 1; kind <= KIND_QINTERP; kind++)
    for (int view = 0; view < 3; view++)
      if (tried[kind][view] && cost[kind][view] < best_cost) {
        best_cost = cost[kind][view];
        best = kind | view << 4;
        *bits_per_value = best_cost / (double)(m * (size_t)boxes);
      }
  return best;
}

/* The inverse of odd d modulo 2^64 (Newton's iteration: each step doubles
 * the bits that are right, and d is its own inverse to 3 bits). */
static uint64_t odd_inverse(uint64_t d) {
  uint64_t x = d;
  for (int k = 0; k < 5; k++)
    x *= 2 - d * x;
  return x;
}

/* What codes_gcd tests multiples of g > 1 with: its power of two tz, the
 * mask low of the bits below it, the inverse of its odd part and the largest
 * quotient by that odd part. */
static void divisor(uint64_t g, int *tz, uint64_t *low, uint64_t *inv, uint64_t *lim) {
  *tz = __builtin_ctzll(g);
  *low = (UINT64_C(1) << *tz) - 1;
  *inv = odd_inverse(g >> *tz);
  *lim = UINT64_MAX / (g >> *tz);
}

/* Greatest common divisor of g and the codes (integer-valued data quantized
 * at a bound that divides them gives codes that are all multiples of one
 * factor; g = 0 to start, and 0 comes back when all codes are 0; it stops
 * at 1). A code that
 * is a multiple of the divisor so far is recognised without a division
 * (Granlund and Montgomery: its power of two, then its odd part a times
 * the inverse of g's odd part d is at most (2^64 - 1) / d exactly when d
 * divides a); Euclid's divisions run only when the divisor changes (they
 * were most of a compress of F3, integer amplitudes). Eight codes are
 * checked at once with one branch (a branch per code, taken or not by
 * zeros and non-zeros mixed, was a quarter of a compress of F3); a block
 * with a code that is not a multiple goes code by code. */
static uint64_t codes_gcd(const int64_t *q, size_t n, uint64_t g) {
  uint64_t low = 0, inv = 0, lim = 0;
  int tz = 0;
  if (g == 1)
    return 1;
  if (g)
    divisor(g, &tz, &low, &inv, &lim);
  for (size_t i = 0; i < n;) {
    size_t end = n - i < 8 ? n : i + 8;
    if (g && end == i + 8) {
      uint64_t miss = 0;
      for (size_t j = i; j < end; j++) {
        uint64_t a = q[j] < 0 ? 0 - (uint64_t)q[j] : (uint64_t)q[j];
        miss |= (a & low) | (uint64_t)((a >> tz) * inv > lim);
      }
      if (!miss) {
        i = end;
        continue;
      }
    }
    for (; i < end; i++) {
      uint64_t a = q[i] < 0 ? 0 - (uint64_t)q[i] : (uint64_t)q[i];
      if (!a || (g && !(a & low) && (a >> tz) * inv <= lim))
        continue; /* a multiple of g */
      while (a) {
        uint64_t t = g % a;
        g = a;
        a = t;
      }
      if (g == 1)
        return 1;
      divisor(g, &tz, &low, &inv, &lim);
    }
  }
  return g;
}

/* The common factor of the codes: their greatest common divisor, or 1 when
 * they are all 0 or it is too large to divide by safely. */
static uint64_t common_factor(const int64_t *q, size_t n) {
  uint64_t g = codes_gcd(q, n, 0);
  return g > 1 && g < (1ull << 62) ? g : 1;
}

/* Divide the n codes, all multiples of g, by g: exactly, as the shift by
 * g's power of two and the product with its odd part's inverse modulo 2^64
 * (a division per code cost a third of a compress of F3). */
static void divide_codes(int64_t *q, size_t n, uint64_t g) {
  int tz = __builtin_ctzll(g);
  uint64_t inv = odd_inverse(g >> tz);
  for (size_t i = 0; i < n; i++)
    q[i] = (int64_t)((uint64_t)(q[i] >> tz) * inv);
}

/* Values of the groups of rows coded while a factor may remain (16 KiB of
 * codes: in L1 still when predicted). */
#define GROUP_VALUES 2048

/* Lorenzo on the codes of the chunk's values x in box v, with the common
 * factor g of the codes found on the way. Once the codes so far have none
 * (then the chunk has none: after its first row on most fields), the rest
 * is quantized and predicted row by row in one pass (quant_lorenzo_avx2;
 * the quantizer's and the predictor's passes over arrays of 8 bytes a
 * value were a third of a compress of WRF). Until then, without AVX2 and
 * on codes that all have a factor, groups of rows are quantized, and
 * predicted while in cache once the factor is known to be 1, else after
 * all codes are divided by it. The same flags and residuals as quantize,
 * common_factor, divide_codes and run_encode; q's codes are not kept.
 * Returns the escape count, the factor in *g. */
static size_t quantize_lorenzo(gz_dtype_t dtype, const void *x, const size_t v[3],
                               const gz_quant_t *qp, int64_t *q, uint8_t *esc,
                               uint64_t *u, uint64_t *g) {
  size_t rows = v[0] * v[1], len = v[2], elem = gz_dtype_size(dtype), bad = 0, done = 0;
  size_t per = len >= GROUP_VALUES ? 1 : GROUP_VALUES / len;
  uint64_t f = 0;
  for (size_t r = 0, r1; r < rows; r = r1) {
    size_t off = r * len;
#ifdef HAVE_AVX2_PATH
    if (f == 1 && dtype == GZ_FLOAT32 && qp->eb > 0 && gz_chunk2_simd(-1)) {
      /* the rest quantized and predicted in one pass */
      bad += gz_chunk2_simd(-1) > 1 && len >= 8
                 ? quant_lorenzo_avx512(x, v, r, rows, qp, q, esc, u)
                 : quant_lorenzo_avx2(x, v, r, rows, qp, q, esc, u);
      done = rows;
      break;
    }
#endif
    r1 = r == 0 ? 1 : rows - r < per ? rows : r + per; /* one row first: fused after it */
    bad += quantize_part(dtype, (const uint8_t *)x + off * elem, (r1 - r) * len, qp,
                         q + off, esc + off, off ? q[off - 1] : 0);
    f = codes_gcd(q + off, (r1 - r) * len, f);
    if (f == 1) {
      gz_lorenzo_encode_rows(q, v, u, done, r1);
      done = r1;
    }
  }
  *g = f > 1 && f < (1ull << 62) ? f : 1;
  if (*g > 1)
    divide_codes(q, rows * len, *g);
  if (done < rows)
    gz_lorenzo_encode_rows(q, v, u, done, rows);
  return bad;
}

/* len bytes from src to dst in moves of fixed size, which the compiler
 * inlines (runs of escapes are short), none of them reading or writing past
 * either end: the last move of each size overlaps the one before. */
static void copy_run(uint8_t *dst, const uint8_t *src, size_t len) {
  size_t k = 0;
  if (len >= 32) {
    for (; k + 32 <= len; k += 32)
      memcpy(dst + k, src + k, 32);
    if (k < len)
      memcpy(dst + len - 32, src + len - 32, 32);
  } else if (len >= 16) {
    memcpy(dst, src, 16);
    memcpy(dst + len - 16, src + len - 16, 16);
  } else if (len >= 8) {
    memcpy(dst, src, 8);
    memcpy(dst + len - 8, src + len - 8, 8);
  } else if (len >= 4) {
    memcpy(dst, src, 4);
    memcpy(dst + len - 4, src + len - 4, 4);
  } else {
    for (; k < len; k++)
      dst[k] = src[k];
  }
}

/* Escape section content: count, gaps, values. Returns its length. The codes
 * of escaped values repeat the previous code (quantize()). runs: the runs of
 * escapes (start, end, ...: uint32, chunks hold at most 2^24 values), nr of
 * them as the predictor listed them (QLORENZO's, while the flags were in
 * cache: reading them again here took a twentieth of a compress of ERSST),
 * else SIZE_MAX and room for n + 1 of them, found here from the flags. */
static size_t escapes(const void *x, size_t elem, const uint8_t *esc, size_t n,
                      size_t nesc, uint32_t *runs, size_t nr, uint8_t *out) {
  uint8_t *p = out;
  size_t next = 0;
  p += gz_varint_put(nesc, p);
  if (nesc == 0)
    return (size_t)(p - out);
  /* the runs unless listed, 64 flags at a time (ERSST: 40,064 runs of land;
   * two walks with a search per run's start and end cost a twentieth of
   * its compress) */
  if (nr == SIZE_MAX)
    nr = gz_chunk2_flag_runs(esc, n, runs);
  /* inside a run every gap is 0 (one byte) and the values are contiguous
   * (a call per escape cost a fifth of a compress of ERSST); the zeros in
   * stores of 16 that may pass the run (the next run's bytes overwrite
   * them; out has room), a gap below 128 (one byte) without a call: a call
   * of memset, memcpy and gz_varint_put per run (ERSST: 40,506 runs of 16
   * values on average) cost a twelfth of its compress */
  for (size_t r = 0; r < nr; r += 2) {
    size_t i = runs[r], e = runs[r + 1];
    if (i - next < 128)
      *p++ = (uint8_t)(i - next);
    else
      p += gz_varint_put(i - next, p);
    for (size_t k = 0; k + 1 < e - i; k += 16)
      memset(p + k, 0, 16);
    p += e - i - 1;
    next = e;
  }
  for (size_t r = 0; r < nr; r += 2) {
    size_t len = (runs[r + 1] - runs[r]) * elem;
    copy_run(p, (const uint8_t *)x + runs[r] * elem, len);
    p += len;
  }
  return (size_t)(p - out);
}

/* The residual section of u at out, when it is shorter than limit bytes
 * (else 0: the chunk would not shrink): rANS where it is smaller than bit
 * packing, else bit-packed (zstd's codings 1 and 2 are decoded but no
 * longer written: rANS beat them on every field measured, at a fraction of
 * the time). sym is scratch of 11 n + 16 bytes, syms of n bytes. Returns
 * its size. */
static size_t residual_section(const uint64_t *u, size_t n, uint8_t *sym, uint8_t *syms,
                               uint8_t *out, size_t limit, int *coding) {
  size_t psize, len;
  if (n >= RANS_MIN) {
    gz_rans_parts_t pt;
    len = gz_res_rans_parts(u, n, syms, sym, &psize, &pt); /* psize: packing's */
    if (len < psize) {
      uint8_t *d = out + GZ_SECTION_HEADER;
      *coding = GZ_RES_RANS32;
      if (GZ_SECTION_HEADER + len >= limit)
        return 0;
      /* the pieces where they go: one copy each */
      memcpy(d, pt.head, pt.head_len);
      memcpy(d + pt.head_len, pt.raw, pt.raw_len);
      memcpy(d + pt.head_len + pt.raw_len, pt.words, pt.words_len);
      return gz_section_stored(out, len);
    }
  }
  *coding = GZ_RES_PACKED;
  len = gz_res_pack(u, n, sym);
  if (GZ_SECTION_HEADER + len >= limit)
    return 0;
  return gz_section_put(sym, len, 0, out, NULL);
}

size_t gz_chunk2_encode(gz_dtype_t dtype, const void *x, const size_t d[3],
                        const gz_quant_t *qp, int predictor, uint8_t *out, int *nomem,
                        gz_chunk2_work_t *w) {
  size_t n = d[0] * d[1] * d[2], elem = gz_dtype_size(dtype), nesc, total = 0;
  size_t eraw, rsec, esec, v[3], glen, hdr;
  uint64_t g = 1;
  int64_t *q = NULL;
  uint64_t *u = NULL;
  uint8_t *esc = NULL, *sec = NULL, *sym = NULL, *syms = NULL;
  uint32_t *runs = NULL;
  size_t nruns = SIZE_MAX; /* runs not listed by the predictor */
  int coding = GZ_RES_PACKED, kind, direct;
  double est = 0;

  *nomem = 0;
  if (predictor == GZ_PRED_NONE || n < 2 * GZ_BLOCK)
    goto fallback;
  if (n > SIZE_MAX / 64)
    goto nomem;
  q = work(w, 0, n * sizeof *q);
  u = work(w, 1, n * sizeof *u);
  esc = work(w, 2, n);
  sec = work(w, 3, gz_section_max(10 + n * (10 + elem))); /* escapes, trials */
  sym = work(w, 4, 11 * n + 16);
  syms = work(w, 5, n);
  runs = work(w, 6, (n + 1) * sizeof *runs);
  if (!q || !u || !esc || !sec || !sym || !syms || !runs)
    goto nomem;
  adopt_zstd(w);
  { /* the trials' scratch in buffers of n values and more, not used yet */
    trial_buf_t b = {sec, q, (uint64_t *)(void *)sym, u, esc};
    predictor = choose(dtype, x, d, qp, predictor, &b, &est);
  }
  if (est > 0.9 * 8.0 * (double)elem)
    goto fallback; /* incompressible on the sample: format-1 blocks, fast */
  kind = predictor & 15;
  view_box(d, predictor >> 4, v);
  if (kind >= KIND_QLORENZO) {
    nesc = gz_vpred_encode(kind == KIND_QINTERP ? GZ_VPRED_INTERP : GZ_VPRED_LORENZO,
                           dtype == GZ_FLOAT64, x, v, qp->eb, (uint64_t *)q, u, esc, runs,
                           &nruns);
  } else if (kind == GZ_PRED_LORENZO) {
    nesc = quantize_lorenzo(dtype, x, v, qp, q, esc, u, &g);
  } else {
    quantize(dtype, x, n, qp, q, esc, &nesc);
    g = common_factor(q, n);
    if (g > 1)
      divide_codes(q, n, g);
    run_encode(kind, q, v, u);
  }
  /* the sections straight into out (room for gz_chunk2_bound): the chunk
   * falls back when it is not smaller than its values, so the residuals fit
   * when it does not; the escapes go through sec when zstd's worst case
   * might not (a copy of the sections less: a fortieth of a compress of
   * ERSST) */
  glen = gz_varint_put(g > 1 ? g : 1, out + 2);
  hdr = 2 + glen;
  rsec = residual_section(u, n, sym, syms, out + hdr, n * elem - hdr, &coding);
  if (!rsec)
    goto fallback;
  /* escapes after the residuals */
  eraw = escapes(x, elem, esc, n, nesc, runs, nruns, sym);
  direct = hdr + rsec + gz_section_max(eraw) <= gz_chunk2_bound(n, elem);
  esec = gz_section_put(sym, eraw, 1, direct ? out + hdr + rsec : sec, &w->zc);
  if (!esec)
    goto nomem;
  total = hdr + rsec + esec;
  if (total >= n * elem)
    goto fallback;
  out[0] = (uint8_t)predictor;
  out[1] = (uint8_t)coding;
  if (!direct)
    memcpy(out + hdr + rsec, sec, esec);
  goto done;
nomem:
  *nomem = 1;
  total = 0;
  goto done;
fallback:
  out[0] = GZ_PRED_NONE;
  total = 1 + gz_encode_values(dtype, x, n, qp, out + 1);
done:
  return total;
}

static void reconstruct(gz_dtype_t dtype, const int64_t *q, size_t n,
                        const gz_quant_t *qp, void *out) {
  if (dtype == GZ_FLOAT32) {
    float *y = out;
    if (qp->eb > 0)
      for (size_t i = 0; i < n; i++)
        y[i] = gz_dequant_f32(q[i], qp);
    else
      for (size_t i = 0; i < n; i++)
        y[i] = gz_unordered_f32(q[i]);
  } else {
    double *y = out;
    if (qp->eb > 0)
      for (size_t i = 0; i < n; i++)
        y[i] = gz_dequant_f64(q[i], qp);
    else
      for (size_t i = 0; i < n; i++)
        y[i] = gz_unordered_f64(q[i]);
  }
}

/* Overwrite the escaped positions with their verbatim values. */
static int put_escapes(const uint8_t *e, size_t len, size_t n, size_t elem, void *out) {
  const uint8_t *p = e, *end = e + len, *vals;
  uint64_t count, gap;
  size_t next = 0;
  if (gz_varint_get(&p, end, &count) != 0 || count > n)
    return -1;
  /* positions first, values after them: find where the values start */
  for (uint64_t k = 0; k < count; k++) {
    if (p < end && *p == 0) /* a gap of 0 (runs of escapes): one byte */
      p++, gap = 0;
    else if (gz_varint_get(&p, end, &gap) != 0)
      return -1;
    if (gap >= n - next)
      return -1;
    next += (size_t)gap + 1;
  }
  if ((size_t)(end - p) != count * elem)
    return -1;
  vals = p;
  p = e;
  gz_varint_get(&p, end, &count);
  next = 0;
  for (uint64_t k = 0, run; k < count; k += run) {
    gz_varint_get(&p, end, &gap);
    next += (size_t)gap;
    /* the escapes after it with gaps of 0 are contiguous: one copy */
    for (run = 1; k + run < count && *p == 0; run++)
      p++;
    memcpy((uint8_t *)out + next * elem, vals + k * elem, (size_t)run * elem);
    next += (size_t)run;
  }
  return 0;
}

gz_result_t gz_chunk2_decode(gz_dtype_t dtype, const uint8_t *in, size_t size,
                             const size_t d[3], const gz_quant_t *qp, void *out,
                             gz_chunk2_work_t *w) {
  size_t n = d[0] * d[1] * d[2], elem = gz_dtype_size(dtype), rraw, rused, eraw, eused,
         v[3];
  size_t hdr;
  uint64_t g;
  const uint8_t *p;
  int64_t *q = NULL;
  uint64_t *u = NULL;
  uint8_t *raw = NULL;
  gz_result_t rc = GZ_ERR_CORRUPT;
  if (size < 1)
    return GZ_ERR_CORRUPT;
  if (in[0] == GZ_PRED_NONE)
    return gz_decode_values(dtype, in + 1, size - 1, n, qp, out);
  if (size < 2 || (in[0] & 15) < GZ_PRED_LORENZO || (in[0] & 15) > KIND_QINTERP ||
      (in[0] >> 4) > 2 || in[1] > GZ_RES_RANS32 ||
      ((in[0] & 15) >= KIND_QLORENZO && !(qp->eb > 0)))
    return GZ_ERR_CORRUPT;
  view_box(d, in[0] >> 4, v);
  p = in + 2;
  if (gz_varint_get(&p, in + size, &g) != 0 || g == 0)
    return GZ_ERR_CORRUPT;
  hdr = (size_t)(p - in);
  if (gz_section_peek(in + hdr, size - hdr, 11 * n + 16, &rraw, &rused) != 0 ||
      gz_section_peek(in + hdr + rused, size - hdr - rused, 10 + n * (10 + elem), &eraw,
                      &eused) != 0 ||
      hdr + rused + eused != size)
    return GZ_ERR_CORRUPT;
  q = work(w, 0, n * sizeof *q);
  u = work(w, 1, n * sizeof *u);
  raw = work(w, 3, (rraw > eraw ? rraw : eraw) + 1);
  if (!q || !u || !raw) {
    rc = GZ_ERR_NOMEM;
    goto done;
  }
  adopt_zstd(w);
  if (gz_section_get(in + hdr, raw, rraw, &w->zd) != 0)
    goto done;
  if (in[1] == GZ_RES_PACKED   ? gz_res_unpack(raw, rraw, n, u) != 0
      : in[1] == GZ_RES_BYTES  ? gz_res_unbytes(raw, rraw, n, u) != 0
      : in[1] == GZ_RES_RANS   ? gz_res_unrans(raw, rraw, n, 2, u) != 0
      : in[1] == GZ_RES_RANS4  ? gz_res_unrans(raw, rraw, n, 4, u) != 0
      : in[1] == GZ_RES_RANS32 ? gz_res_unrans(raw, rraw, n, GZ_RANS32_STATES, u) != 0
                               : gz_res_unplanes(raw, rraw, n, u) != 0)
    goto done;
  if ((in[0] & 15) >= KIND_QLORENZO) {
    if (g != 1)
      goto done;
    gz_vpred_decode((in[0] & 15) == KIND_QINTERP ? GZ_VPRED_INTERP : GZ_VPRED_LORENZO,
                    dtype == GZ_FLOAT64, u, v, qp->eb, (uint64_t *)q, out);
  } else {
    if ((in[0] & 15) == GZ_PRED_INTERP)
      gz_interp_decode(u, v, q);
    else
      gz_lorenzo_decode(u, v, q);
    if (g > 1)
      for (size_t i = 0; i < n; i++)
        q[i] = (int64_t)((uint64_t)q[i] * g);
    reconstruct(dtype, q, n, qp, out);
  }
  if (gz_section_get(in + hdr + rused, raw, eraw, &w->zd) != 0 ||
      put_escapes(raw, eraw, n, elem, out) != 0)
    goto done;
  rc = GZ_OK;
done:
  return rc;
}
