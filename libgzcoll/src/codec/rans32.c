/* rans32.c - the state coding of GZ_RES_RANS32 (format 2, coding 5): an
 * order-0 rANS over 32 interleaved 32-bit states with 16-bit
 * renormalisation, so that eight states at a time go through AVX2 (four
 * vectors per round of 32 symbols, independent chains), encoder and
 * decoder, with a portable path that writes and reads the same bytes.
 *
 * Symbol i goes to state i mod 32. States live in [L, 2^16 L), L = 2^15,
 * probabilities in units of 2^-14 (L / 2^14 = 2, so that one 16-bit word
 * renormalises a state, never two). x / f is the high half of a 32 x 32-bit
 * product shifted right: for 2^(l-1) < f <= 2^l and x < 2^31, m =
 * ceil(2^(31+l) / f) < 2^32 and x / f = ((x m) >> 32) >> (l - 1) exactly
 * (the excess x (m f - 2^(31+l)) / (f 2^(31+l)) < 2^-l <= 1/f never
 * reaches the next integer); f = 1 would need m = 2^32, takes 2^32 - 1 (a
 * quotient of x - 1) and a bias of 2^14 - 1 more (as rans.c).
 *
 * Bytes (after rans.c's table and raw bits): the 32 final states (u32 LE,
 * state 0 first), then the 16-bit words (LE) in decoding order: symbol by
 * symbol, a word for each state that falls below L. The encoder runs
 * backwards from the last symbol; the AVX2 encoder writes a vector's words
 * compacted in lane order (a shuffle per mask of lanes), the decoder
 * expands them the same way. */
#include "codec/entropy.h"

#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define PROB_BITS 14
#define PROB_SCALE (1u << PROB_BITS)
#define L32 (1u << 15)
#define NS 32

/* The encoder's table: the multiplier m, and bias | (2^14 - f) << 15 (bias:
 * start, + 2^14 - 1 when f = 1), one gather each per eight symbols; the
 * shift l - 1 (0 when f = 1) is floor(log2(f - 1)), which the AVX2 encoder
 * takes from the exponent of f - 1 as a float. */
typedef struct enc32 {
  uint32_t rcp[256], info[256];
  uint8_t shift[256];
} enc32_t;

static void enc_table(const uint32_t f[256], enc32_t *t) {
  uint32_t cum = 0;
  for (int s = 0; s < 256; s++) {
    t->rcp[s] = t->info[s] = t->shift[s] = 0;
    if (f[s] > 1) {
      unsigned l = 32u - (unsigned)__builtin_clz(f[s] - 1);
      t->rcp[s] = (uint32_t)(((1ull << (31 + l)) + f[s] - 1) / f[s]);
      t->shift[s] = (uint8_t)(l - 1);
      t->info[s] = cum | (PROB_SCALE - f[s]) << 15;
    } else if (f[s]) {
      t->rcp[s] = ~0u;
      t->info[s] = (cum + PROB_SCALE - 1) | (PROB_SCALE - 1) << 15;
    }
    cum += f[s];
  }
}

/* Symbol s into state x: a word out below *rp when x >= 2^17 f (always
 * stored, kept only then), then x = x + start + (x / f) (2^14 - f). */
static inline uint32_t enc_put(uint32_t x, const enc32_t *t, unsigned s, uint8_t **rp) {
  uint32_t info = t->info[s], cmpl = info >> 15, q;
  unsigned b = x >= (PROB_SCALE - cmpl) << 17;
  (*rp)[-2] = (uint8_t)x;
  (*rp)[-1] = (uint8_t)(x >> 8);
  *rp -= 2 * b;
  x >>= 16 * b;
  q = (uint32_t)(((uint64_t)x * t->rcp[s]) >> 32) >> t->shift[s];
  return x + (info & 0x7fff) + q * cmpl;
}

/* Decoding one symbol of state *xs: its symbol, the state renormalised from
 * the words at *rs (end: their end); -1 when they run out. */
static inline int dec_put(uint32_t *xs, const uint8_t *slot_sym, const uint32_t *fstart,
                          const uint8_t **rs, const uint8_t *end, uint8_t *sym) {
  uint32_t x = *xs, slot = x & (PROB_SCALE - 1);
  unsigned s = slot_sym[slot];
  x = (fstart[s] & 0xffff) * (x >> PROB_BITS) + slot - (fstart[s] >> 16);
  if (x < L32) {
    if (end - *rs < 2)
      return -1;
    x = x << 16 | (uint32_t)(*rs)[0] | (uint32_t)(*rs)[1] << 8;
    *rs += 2;
  }
  *xs = x;
  *sym = (uint8_t)s;
  return 0;
}

#ifdef HAVE_AVX2_PATH
/* Shuffles of eight 16-bit words by the mask of lanes that have one: cmp
 * moves lane j's word to the top words, in lane order (the encoder), exp
 * the k-th word to the k-th lane of the mask (the decoder). */
typedef struct shuf {
  uint8_t cmp[256][16], exp[256][16];
} shuf_t;

static void shuf_tables(shuf_t *t) {
  for (unsigned m = 0; m < 256; m++) {
    unsigned cnt = (unsigned)__builtin_popcount(m), k = 0;
    memset(t->cmp[m], 0x80, 16);
    memset(t->exp[m], 0x80, 16);
    for (unsigned j = 0; j < 8; j++)
      if (m >> j & 1) {
        unsigned to = 8 - cnt + k;
        t->cmp[m][2 * to] = (uint8_t)(2 * j);
        t->cmp[m][2 * to + 1] = (uint8_t)(2 * j + 1);
        t->exp[m][2 * j] = (uint8_t)(2 * k);
        t->exp[m][2 * j + 1] = (uint8_t)(2 * k + 1);
        k++;
      }
  }
}

/* Whether the 32 symbols of a round are all below 16. */
__attribute__((target("avx2"), always_inline)) static inline int
round_small(const uint8_t *syms) {
  return _mm256_testz_si256(_mm256_loadu_si256((const __m256i *)(const void *)syms),
                            _mm256_set1_epi8((char)0xf0));
}

/* Rounds of 32 symbols, from the last (syms up to r) down to the first,
 * four vectors of eight states each (the last vector first). regs (a
 * constant: two instances) takes the table entries of a round of symbols
 * below 16 from registers instead of two gathers per vector: 7 % less
 * time on soda lakes and the smooth field, whose rounds mostly are; where
 * they are not (WRF) the instance with it was 2-3 % slower. */
__attribute__((target("avx2"), always_inline)) static inline uint8_t *
enc_rounds(const uint8_t *syms, size_t r, const enc32_t *t, uint32_t x[NS], uint8_t *rp,
           const int regs) {
  shuf_t sh;
  __m256i xv[4];
  const __m256i low15 = _mm256_set1_epi32(0x7fff),
                fmax = _mm256_set1_epi32(PROB_SCALE - 1),
                low16 = _mm256_set1_epi32(0xffff), expo = _mm256_set1_epi32(127),
                zero = _mm256_setzero_si256(), seven = _mm256_set1_epi32(7);
  const __m256i rcp0 = _mm256_loadu_si256((const __m256i *)(const void *)t->rcp),
                rcp1 = _mm256_loadu_si256((const __m256i *)(const void *)(t->rcp + 8)),
                info0 = _mm256_loadu_si256((const __m256i *)(const void *)t->info),
                info1 = _mm256_loadu_si256((const __m256i *)(const void *)(t->info + 8));
  shuf_tables(&sh);
  for (int v = 0; v < 4; v++)
    xv[v] = _mm256_loadu_si256((const __m256i *)(const void *)(x + 8 * v));
  while (r > 0) {
    int small;
    r -= NS;
    /* a round of symbols below 16 (most of a smooth field's) takes the
     * entries from registers instead of two gathers per vector */
    small = regs && round_small(syms + r);
    for (int v = 3; v >= 0; v--) {
      __m256i s =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(syms + r + 8 * v)));
      __m256i m, in;
      if (small) { /* from the registers: entries 0-7 or 8-15 by lane */
        __m256i up = _mm256_cmpgt_epi32(s, seven);
        m = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(rcp0, s),
                               _mm256_permutevar8x32_epi32(rcp1, s), up);
        in = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(info0, s),
                                _mm256_permutevar8x32_epi32(info1, s), up);
      } else {
        m = _mm256_i32gather_epi32((const int *)t->rcp, s, 4);
        in = _mm256_i32gather_epi32((const int *)t->info, s, 4);
      }
      __m256i cmpl = _mm256_srli_epi32(in, 15);
      /* l - 1 = floor(log2(f - 1)), 0 for f = 1 (0.0f: exponent field 0) */
      __m256i fm1 = _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_sub_epi32(fmax, cmpl)));
      __m256i lm1 =
          _mm256_max_epi32(_mm256_sub_epi32(_mm256_srli_epi32(fm1, 23), expo), zero);
      /* x >= 2^17 f, that is x + 2^17 (2^14 - f) >= 2^31 (x < 2^31): the sign
       * of the sum, which movemask and blendv read */
      __m256i xs = xv[v], emit = _mm256_add_epi32(xs, _mm256_slli_epi32(cmpl, 17));
      unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(emit));
      __m256i w = _mm256_and_si256(xs, low16);
      __m128i w16 =
          _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
      __m256i lo, hi, q;
      w16 = _mm_shuffle_epi8(w16, _mm_loadu_si128((const __m128i *)sh.cmp[mask]));
      _mm_storeu_si128((__m128i *)(void *)(rp - 16), w16);
      rp -= 2 * __builtin_popcount(mask);
      xs = _mm256_castps_si256(_mm256_blendv_ps(
          _mm256_castsi256_ps(xs), _mm256_castsi256_ps(_mm256_srli_epi32(xs, 16)),
          _mm256_castsi256_ps(emit)));
      /* q = ((x m) >> 32) >> (l - 1), even and odd lanes */
      lo = _mm256_srli_epi64(_mm256_mul_epu32(xs, m), 32);
      hi = _mm256_mul_epu32(_mm256_srli_epi64(xs, 32), _mm256_srli_epi64(m, 32));
      q = _mm256_srlv_epi32(_mm256_blend_epi32(lo, hi, 0xaa), lm1);
      xv[v] = _mm256_add_epi32(_mm256_add_epi32(xs, _mm256_and_si256(in, low15)),
                               _mm256_mullo_epi32(q, cmpl));
    }
  }
  for (int v = 0; v < 4; v++)
    _mm256_storeu_si256((__m256i *)(void *)(x + 8 * v), xv[v]);
  return rp;
}

__attribute__((target("avx2"))) static uint8_t *
enc_avx2(const uint8_t *syms, size_t r, const enc32_t *t, uint32_t x[NS], uint8_t *rp) {
  return enc_rounds(syms, r, t, x, rp, 0);
}

__attribute__((target("avx2"))) static uint8_t *enc_regs_avx2(const uint8_t *syms,
                                                              size_t r, const enc32_t *t,
                                                              uint32_t x[NS],
                                                              uint8_t *rp) {
  return enc_rounds(syms, r, t, x, rp, 1);
}

/* enc_rounds in two vectors of sixteen states (gz_chunk2_simd level 2):
 * the same operations, the entries of a round of symbols below 16 from one
 * permute each, and a vector's words compacted in lane order by
 * vpcompressd and stored under a mask of their count (states 0-7 below
 * 8-15: what enc_rounds writes for its two vectors). */
#define GZ_AVX512 "avx2,avx512f,avx512vl,avx512dq,avx512bw"
__attribute__((target(GZ_AVX512), always_inline)) static inline uint8_t *
enc_rounds512(const uint8_t *syms, size_t r, const enc32_t *t, uint32_t x[NS],
              uint8_t *rp, const int regs) {
  __m512i xv[2];
  const __m512i low15 = _mm512_set1_epi32(0x7fff),
                fmax = _mm512_set1_epi32(PROB_SCALE - 1), expo = _mm512_set1_epi32(127),
                zero = _mm512_setzero_si512();
  const __m512i rcp = _mm512_loadu_si512((const void *)t->rcp),
                info = _mm512_loadu_si512((const void *)t->info);
  for (int v = 0; v < 2; v++)
    xv[v] = _mm512_loadu_si512((const void *)(x + 16 * v));
  while (r > 0) {
    int small;
    r -= NS;
    small = regs && round_small(syms + r);
    for (int v = 1; v >= 0; v--) {
      __m512i s =
          _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(syms + r + 16 * v)));
      __m512i m, in, cmpl, fm1, lm1, xs = xv[v], emit, lo, hi, q;
      __mmask16 mask;
      unsigned cnt;
      if (small) {
        m = _mm512_permutexvar_epi32(s, rcp);
        in = _mm512_permutexvar_epi32(s, info);
      } else {
        m = _mm512_i32gather_epi32(s, (const void *)t->rcp, 4);
        in = _mm512_i32gather_epi32(s, (const void *)t->info, 4);
      }
      cmpl = _mm512_srli_epi32(in, 15);
      fm1 = _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_sub_epi32(fmax, cmpl)));
      lm1 = _mm512_max_epi32(_mm512_sub_epi32(_mm512_srli_epi32(fm1, 23), expo), zero);
      emit = _mm512_add_epi32(xs, _mm512_slli_epi32(cmpl, 17)); /* sign: x >= 2^17 f */
      mask = _mm512_movepi32_mask(emit);
      cnt = (unsigned)__builtin_popcount(mask);
      rp -= 2 * cnt;
      _mm256_mask_storeu_epi16(
          rp, (__mmask16)((1u << cnt) - 1),
          _mm512_cvtepi32_epi16(_mm512_maskz_compress_epi32(mask, xs)));
      xs = _mm512_mask_srli_epi32(xs, mask, xs, 16);
      lo = _mm512_srli_epi64(_mm512_mul_epu32(xs, m), 32);
      hi = _mm512_mul_epu32(_mm512_srli_epi64(xs, 32), _mm512_srli_epi64(m, 32));
      q = _mm512_srlv_epi32(_mm512_mask_blend_epi32(0xaaaa, lo, hi), lm1);
      xv[v] = _mm512_add_epi32(_mm512_add_epi32(xs, _mm512_and_si512(in, low15)),
                               _mm512_mullo_epi32(q, cmpl));
    }
  }
  for (int v = 0; v < 2; v++)
    _mm512_storeu_si512((void *)(x + 16 * v), xv[v]);
  return rp;
}

__attribute__((target(GZ_AVX512))) static uint8_t *
enc_avx512(const uint8_t *syms, size_t r, const enc32_t *t, uint32_t x[NS], uint8_t *rp) {
  return enc_rounds512(syms, r, t, x, rp, 0);
}

__attribute__((target(GZ_AVX512))) static uint8_t *
enc_regs_avx512(const uint8_t *syms, size_t r, const enc32_t *t, uint32_t x[NS],
                uint8_t *rp) {
  return enc_rounds512(syms, r, t, x, rp, 1);
}
#undef GZ_AVX512

/* Rounds of 32 symbols from i on while at least 64 bytes of words are left
 * (four vectors read at most 16 each); returns the symbols done. */
__attribute__((target("avx2"))) static size_t
dec_avx2(const uint8_t *slot_sym, const uint32_t *fstart, uint32_t x[NS],
         const uint8_t **rsp, const uint8_t *end, size_t n, uint8_t *syms) {
  shuf_t sh;
  __m256i xv[4];
  const uint8_t *rs = *rsp;
  const __m256i low14 = _mm256_set1_epi32(PROB_SCALE - 1), low8 = _mm256_set1_epi32(0xff),
                low16 = _mm256_set1_epi32(0xffff), lv = _mm256_set1_epi32(L32);
  size_t i = 0;
  shuf_tables(&sh);
  for (int v = 0; v < 4; v++)
    xv[v] = _mm256_loadu_si256((const __m256i *)(const void *)(x + 8 * v));
  for (; i + NS <= n && end - rs >= 64; i += NS) {
    for (int v = 0; v < 4; v++) {
      __m256i xs = xv[v], slot = _mm256_and_si256(xs, low14);
      __m256i s =
          _mm256_and_si256(_mm256_i32gather_epi32((const int *)slot_sym, slot, 1), low8);
      __m256i fs = _mm256_i32gather_epi32((const int *)fstart, s, 4);
      __m256i need, wv;
      __m128i s16;
      unsigned mask;
      xs = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_and_si256(fs, low16),
                                               _mm256_srli_epi32(xs, PROB_BITS)),
                            _mm256_sub_epi32(slot, _mm256_srli_epi32(fs, 16)));
      need = _mm256_cmpgt_epi32(lv, xs);
      mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(need));
      wv = _mm256_cvtepu16_epi32(
          _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)rs),
                           _mm_loadu_si128((const __m128i *)sh.exp[mask])));
      rs += 2 * __builtin_popcount(mask);
      xv[v] =
          _mm256_blendv_epi8(xs, _mm256_or_si256(_mm256_slli_epi32(xs, 16), wv), need);
      s16 = _mm_packus_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
      _mm_storel_epi64((__m128i *)(void *)(syms + i + 8 * v), _mm_packus_epi16(s16, s16));
    }
  }
  for (int v = 0; v < 4; v++)
    _mm256_storeu_si256((__m256i *)(void *)(x + 8 * v), xv[v]);
  *rsp = rs;
  return i;
}
#endif

size_t gz_rans32_encode(const uint8_t *syms, size_t n, const uint32_t f[256], int simd,
                        uint8_t *end) {
  enc32_t t;
  uint32_t x[NS];
  uint8_t *rp = end;
  size_t i = n;
  enc_table(f, &t);
  for (int k = 0; k < NS; k++)
    x[k] = L32;
  while (i % NS) { /* the last, partial round first */
    i--;
    x[i % NS] = enc_put(x[i % NS], &t, syms[i], &rp);
  }
#ifdef HAVE_AVX2_PATH
  if (simd) {
    uint32_t wide = 0; /* frequency of the symbols of 16 and more */
    for (int s = 16; s < 256; s++)
      wide += f[s];
    /* one symbol in 16 or fewer: rounds below 16 are common */
    if (simd > 1)
      rp = wide <= PROB_SCALE / 16 ? enc_regs_avx512(syms, i, &t, x, rp)
                                   : enc_avx512(syms, i, &t, x, rp);
    else
      rp = wide <= PROB_SCALE / 16 ? enc_regs_avx2(syms, i, &t, x, rp)
                                   : enc_avx2(syms, i, &t, x, rp);
    i = 0;
  }
#endif
  while (i > 0) {
    i--;
    x[i % NS] = enc_put(x[i % NS], &t, syms[i], &rp);
  }
  rp -= 4 * NS;
  for (int k = 0; k < NS; k++)
    gz_put32le(rp + 4 * k, x[k]);
  return (size_t)(end - rp);
}

int gz_rans32_decode(const uint8_t *in, size_t size, size_t n, const uint32_t f[256],
                     int simd, uint8_t *syms) {
  uint8_t slot_sym[PROB_SCALE + 4]; /* + 4: a gather reads four bytes */
  uint32_t fstart[256], x[NS], cum = 0;
  const uint8_t *rs = in + 4 * NS, *end = in + size;
  size_t i = 0;
  int bad = 0;
  if (size < 4 * NS)
    return -1;
  memset(slot_sym, 0, sizeof slot_sym);
  for (int s = 0; s < 256; s++) {
    fstart[s] = f[s] | cum << 16;
    memset(slot_sym + cum, s, f[s]);
    cum += f[s];
  }
  if (cum != PROB_SCALE)
    return -1;
  for (int k = 0; k < NS; k++) {
    x[k] = gz_get32le(in + 4 * k);
    if (x[k] < L32 || x[k] >= (1u << 31))
      return -1;
  }
#ifdef HAVE_AVX2_PATH
  if (simd)
    i = dec_avx2(slot_sym, fstart, x, &rs, end, n, syms);
#else
  (void)simd;
#endif
  for (; i < n && !bad; i++)
    bad = dec_put(&x[i % NS], slot_sym, fstart, &rs, end, syms + i);
  if (bad || rs != end)
    return -1;
  for (int k = 0; k < NS; k++)
    if (x[k] != L32)
      return -1;
  return 0;
}
