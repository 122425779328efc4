/* rans.c - residual codings GZ_RES_RANS, GZ_RES_RANS4 and GZ_RES_RANS32 of
 * format 2: an order-0 range asymmetric numeral system coder with a static
 * table per chunk (RANS32: the symbols, table and raw bits below, the
 * states coded by rans32.c).
 *
 * A residual u maps to a symbol (u itself below 16; else its bit length nb
 * and the two bits after its leading one: 16 + 4 (nb - 5) + top, at most
 * 255) and nb - 3 raw bits below those. The symbols go through rANS (S
 * interleaved 32-bit states, symbol i on state i mod S: S = 2 for coding
 * GZ_RES_RANS, 4 for GZ_RES_RANS4, whose four independent chains the CPU
 * overlaps; byte renormalisation, L = 2^23, probabilities in units of
 * 2^-14; division by a frequency through its reciprocal), the raw bits are
 * stored LSB first. Unlike a Huffman code (zstd's literals) a symbol costs
 * less than a bit, which the mostly-zero residuals of smooth fields need.
 *
 * Layout: 32-byte bitmap of the symbols present, a varint frequency per
 * present symbol (they sum to 2^14), u32 length of the raw bits, the raw
 * bits, then the rANS bytes: the S final states (u32 each, state 0 first),
 * then the renormalisation bytes in decoding order. The decoder checks every
 * bound and that every state ends where the encoder started.
 */
#include "codec/chunk2.h"
#include "codec/entropy.h"

#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define PROB_BITS 14
#define PROB_SCALE (1u << PROB_BITS)
#define RANS_L (1u << 23)
/* The symbol pass asks for the residuals this far ahead (2 KiB): it waited
 * on memory (the 16 MB of a chunk's residuals are not in cache), 10-20 %
 * less with the hint */
#define PREFETCH 256

static inline void store16be(uint8_t *p, uint16_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap16(v);
  memcpy(p, &v, 2); /* one store */
#else
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
#endif
}

static inline void store64le(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 8); /* one store */
#else
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
#endif
}

/* The high 64 bits of a 64 x 64-bit product (one instruction on x86-64). */
static inline uint64_t mulhi64(uint64_t a, uint64_t b) {
#ifdef __SIZEOF_INT128__
  return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
  uint64_t lo = (a & 0xffffffffu) * (b & 0xffffffffu), m1 = (a >> 32) * (b & 0xffffffffu),
           m2 = (a & 0xffffffffu) * (b >> 32);
  uint64_t mid = (lo >> 32) + (m1 & 0xffffffffu) + (m2 & 0xffffffffu);
  return (a >> 32) * (b >> 32) + (m1 >> 32) + (m2 >> 32) + (mid >> 32);
#endif
}

/* Frequencies summing to PROB_SCALE, every present symbol at least 1. */
static void normalise(const size_t count[256], size_t n, uint32_t f[256]) {
  uint32_t sum = 0, big = 0;
  for (int s = 0; s < 256; s++) {
    f[s] = 0;
    if (count[s]) {
      uint64_t v = ((uint64_t)count[s] * PROB_SCALE + n / 2) / n;
      f[s] = v ? (uint32_t)v : 1;
      sum += f[s];
      if (f[s] > f[big] || !count[big])
        big = (uint32_t)s;
    }
  }
  while (sum > PROB_SCALE) { /* take from the largest, never below 1 */
    uint32_t take = sum - PROB_SCALE;
    int s = (int)big;
    if (f[s] > take) {
      f[s] -= take;
      sum -= take;
    } else {
      for (int k = 0; k < 256 && sum > PROB_SCALE; k++)
        if (f[k] > 1) {
          f[k]--;
          sum--;
        }
    }
  }
  f[big] += PROB_SCALE - sum;
}

/* table, raw bits (at most 61 per residual), rANS bytes (at most 2 per
 * symbol: a state below 2^31 keeps at least 17 bits) and states */
size_t gz_res_rans_max(size_t n) {
  return 32 + 3 * 256 + 4 + 8 * n + 2 * n + 4 * GZ_RANS32_STATES + 16;
}

/* The encoder's table, an array per field, so that a symbol indexes each
 * directly (scaled addressing, no index arithmetic) */
typedef struct enc_tab {
  uint64_t rcp[256];  /* x / f = (x * rcp) >> 64 (f = 1: x - 1, see bias) */
  uint32_t xmax[256]; /* 2^17 f: renormalise from here */
  uint16_t bias[256]; /* start (+ 2^14 - 1 when f = 1) */
  uint16_t cmpl[256]; /* 2^14 - f */
} enc_tab_t;

/* Symbol s into state x: renormalise (bytes written backwards at *rp, at
 * most two since x < 2^31 and xmax >= 2^17), then x = (x / f) * 2^14 + x % f
 * + start = x + start + (x / f) (2^14 - f). The division is the high half of
 * a 64 x 64-bit product by rcp = ceil(2^64 / f), exact for x < 2^31 (the
 * excess x (rcp - 2^64 / f) / 2^64 < 2^-33 never reaches the next integer,
 * as x / f is at most 1 - 2^-14 above one); f = 1 has no such rcp, takes
 * 2^64 - 1 (a quotient of x - 1) and its bias adds the missing 2^14 - 1.
 * Branch-free: a byte is always stored below *rp and kept only when the
 * state needs it. */
static inline uint32_t enc_put(uint32_t x, const enc_tab_t *t, unsigned s, uint8_t **rp) {
  uint32_t q, xmax = t->xmax[s];
  /* bytes to emit: one when x >= xmax, two when x >= 256 xmax, that is
   * x / 256 >= xmax (both compared at once, so the state's chain is short);
   * the two candidates, x's low byte at rp[-1] and the next at rp[-2], in
   * one store */
  unsigned b = (unsigned)(x >= xmax) + (unsigned)((x >> 8) >= xmax);
  store16be(*rp - 2, (uint16_t)x);
  *rp -= b;
  x >>= 8 * b; /* a shift, not a select: selects became mispredicted branches */
  q = (uint32_t)mulhi64(x, t->rcp[s]);
  return x + t->bias[s] + q * t->cmpl[s];
}

/* The raw-bit writer of the encoder: whole bytes are stored after every
 * residual (at most 7 bits stay in acc), a short chain from one residual to
 * the next where a flush of 32 bits when due was a longer one. */
typedef struct bitw {
  uint8_t *rp;
  uint64_t acc;
  unsigned nbits;
} bitw_t;

/* k <= 56 bits v into w (at most 7 are pending), its whole bytes out:
 * 7 + 56 bits stay below 64, so that acc is shifted by less than 64 (by
 * 64 is undefined, and on x86 leaves acc as it was); sym_raw writes 32 at
 * most */
static inline void bitw_put(bitw_t *w, uint64_t v, unsigned k) {
  w->acc |= v << w->nbits;
  w->nbits += k;
  store64le(w->rp, w->acc);
  w->rp += w->nbits >> 3;
  w->acc >>= w->nbits & ~7u;
  w->nbits &= 7;
}

/* The symbol of residual v (v itself below 16; else 16 + 4 (nb - 5) + the
 * two bits after its leading one, nb its bit length) and its nb - 3 raw
 * bits below those into w. Branch-free: residuals below and above 16 mix
 * on real fields, and branches on them were mispredicted (half of this
 * pass on TREFHT). */
static inline unsigned sym_raw(uint64_t v, bitw_t *w) {
  unsigned nb = 64u - (unsigned)__builtin_clzll(v | 16);
  unsigned big = 0u - (unsigned)(v >= 16); /* all ones when v >= 16 */
  unsigned s = ((16 + 4 * (nb - 5) + (unsigned)((v >> (nb - 3)) & 3)) & big) |
               ((unsigned)v & ~big);
  unsigned k = (nb - 3) & big; /* raw bits below the two after the top */
  v &= (1ull << k) - 1;
  if (k > 32) { /* rare: residuals of 2^35 and more */
    bitw_put(w, v & 0xffffffffu, 32);
    v >>= 32;
    k -= 32;
  }
  bitw_put(w, v, k);
  return s;
}

/* Eight residuals below 2^52 with at least one of 16 or more, in AVX2:
 * their symbols into s and their raw bits into r, k[j] bits in piece j,
 * for the caller's writer; returns the number of pieces. A residual v of
 * 16 or more, as a double (exact below 2^52: v in the mantissa of 2^52 + v,
 * minus 2^52), has its bit length minus one in the exponent and the two
 * bits after its leading one at the top of the mantissa, so that (bits >>
 * 50) - 4092 is its symbol 16 + 4 (nb - 5) + top and (bits >> 52) - 1025
 * its raw-bit count nb - 3: the same symbols and bits as sym_raw. The raw
 * bits of neighbours are joined (the later above the earlier, as the
 * writer would have put them) into one piece per four residuals when the
 * four have at most 56 bits, else one per two when each pair has, else one
 * each: the writer's chain, a piece after the other, was most of the pass
 * with a piece per residual (TREFHT, WRF). */
#ifdef HAVE_AVX2_PATH
#define GROUP_MAX 56 /* bits of one piece: bitw_put's limit */
__attribute__((target("avx2"))) static inline uint64_t lane0(__m256i v) {
  return (uint64_t)_mm_cvtsi128_si64(_mm256_castsi256_si128(v));
}

__attribute__((target("avx2"))) static inline unsigned
group_avx2(const uint64_t *g, uint64_t s[8], uint64_t r[8], uint64_t k[8]) {
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000ll),
                sixteen = _mm256_set1_epi64x(16), one = _mm256_set1_epi64x(1);
  unsigned pieces = 0;
  for (int h = 0; h < 2; h++) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(g + 4 * h));
    __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(v, magic)),
                              _mm256_castsi256_pd(magic));
    __m256i bits = _mm256_castpd_si256(d);
    __m256i big = _mm256_cmpgt_epi64(v, _mm256_sub_epi64(sixteen, one)); /* v >= 16 */
    __m256i sym = _mm256_sub_epi64(_mm256_srli_epi64(bits, 50), _mm256_set1_epi64x(4092));
    __m256i nk = _mm256_and_si256(
        _mm256_sub_epi64(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(1025)), big);
    __m256i raw = _mm256_and_si256(v, _mm256_sub_epi64(_mm256_sllv_epi64(one, nk), one));
    /* pairs in lanes 0 and 2 (lane 1 above lane 0, 3 above 2), the four in
     * lane 0 (the pair of lane 2 above that of lane 0) */
    __m256i t = _mm256_sllv_epi64(raw, _mm256_bslli_epi128(nk, 8));
    __m256i pr = _mm256_or_si256(t, _mm256_bsrli_epi128(t, 8));
    __m256i pk = _mm256_add_epi64(nk, _mm256_bsrli_epi128(nk, 8));
    __m256i pk2 = _mm256_permute4x64_epi64(pk, 2);
    __m256i qk = _mm256_add_epi64(pk, pk2);
    _mm256_storeu_si256((__m256i *)(s + 4 * h), _mm256_blendv_epi8(v, sym, big));
    if (lane0(qk) <= GROUP_MAX) {
      r[pieces] = lane0(
          _mm256_or_si256(pr, _mm256_sllv_epi64(_mm256_permute4x64_epi64(pr, 2), pk)));
      k[pieces++] = lane0(qk);
    } else if (lane0(pk) <= GROUP_MAX && lane0(pk2) <= GROUP_MAX) {
      r[pieces] = lane0(pr);
      k[pieces] = lane0(pk);
      r[pieces + 1] = lane0(_mm256_permute4x64_epi64(pr, 2));
      k[pieces + 1] = lane0(pk2);
      pieces += 2;
    } else {
      _mm256_storeu_si256((__m256i *)(r + pieces), raw);
      _mm256_storeu_si256((__m256i *)(k + pieces), nk);
      pieces += 4;
    }
  }
  return pieces;
}
#undef GROUP_MAX
#endif

/* The bit-packed size of a block whose residuals OR to all (entropy.c's
 * gz_res_packed_size, block by block). */
static size_t packed_block(uint64_t all, size_t m) {
  size_t w = all ? 64u - (unsigned)__builtin_clzll(all) : 0;
  return 1 + (m * w + 7) / 8;
}

/* The symbol pass: symbols of the n residuals into syms, counted in four
 * histograms (so that runs of one symbol do not serialise on one counter),
 * raw bits into w; returns the bit-packed size. Eight residuals at a time:
 * when all are below 16 (most of a smooth field's) symbols only, no raw
 * bits (SMALL); the block OR for the packed size once per eight.
 * Instantiated three times: portable, and compiled for AVX2 with
 * group_avx2 inlined (a call per eight residuals, its results through
 * memory, was a third of the pass) with SMALL as the portable pass's or in
 * runs (small_run_avx2). */
#define GZ_SYM_PASS_BODY(AVX2)                                                           \
  {                                                                                      \
    uint64_t blk = 0; /* OR of the current block of 32 */                                \
    size_t i = 0, psize = 0;                                                             \
    bitw_t b = *w; /* a copy the symbol stores cannot alias: kept in registers */        \
    SMALL_START;                                                                         \
    for (; i + 8 <= n; i += 8) {                                                         \
      const uint64_t *g = u + i;                                                         \
      uint64_t all;                                                                      \
      if (i + PREFETCH + 8 <= n)                                                         \
        __builtin_prefetch(g + PREFETCH);                                                \
      all = g[0] | g[1] | g[2] | g[3] | g[4] | g[5] | g[6] | g[7];                       \
      if (all < 16) {                                                                    \
        SMALL(g, syms + i);                                                              \
      } else if (AVX2 && all >> 52 == 0) {                                               \
        uint64_t s8[8], r8[8], k8[8];                                                    \
        unsigned pieces = GROUP(g, s8, r8, k8);                                          \
        for (unsigned j = 0; j < 8; j++) {                                               \
          syms[i + j] = (uint8_t)s8[j];                                                  \
          count[j & 3][s8[j]]++;                                                         \
        }                                                                                \
        for (unsigned j = 0; j < pieces; j++)                                            \
          bitw_put(&b, r8[j], (unsigned)k8[j]);                                          \
      } else {                                                                           \
        for (unsigned j = 0; j < 8; j++) {                                               \
          unsigned s = sym_raw(g[j], &b);                                                \
          syms[i + j] = (uint8_t)s;                                                      \
          count[j & 3][s]++;                                                             \
        }                                                                                \
      }                                                                                  \
      blk |= all;                                                                        \
      if ((i & 31) == 24) {                                                              \
        psize += packed_block(blk, 32);                                                  \
        blk = 0;                                                                         \
      }                                                                                  \
    }                                                                                    \
    for (; i < n; i++) {                                                                 \
      unsigned s = sym_raw(u[i], &b);                                                    \
      syms[i] = (uint8_t)s;                                                              \
      count[i & 3][s]++;                                                                 \
      blk |= u[i];                                                                       \
    }                                                                                    \
    if (n & 31)                                                                          \
      psize += packed_block(blk, n & 31);                                                \
    SMALL_END;                                                                           \
    *w = b;                                                                              \
    return psize;                                                                        \
  }

/* Eight residuals below 16: their symbols are their values */
static inline void small8(const uint64_t *g, uint8_t *syms, uint32_t count[4][256]) {
  for (unsigned j = 0; j < 8; j++) {
    syms[j] = (uint8_t)g[j];
    count[j & 3][g[j]]++;
  }
}

#define GROUP(g, s8, r8, k8) 0u /* not reached */
#define SMALL_START
#define SMALL(g, out) small8(g, out, count)
#define SMALL_END
static size_t sym_pass(const uint64_t *u, size_t n, uint8_t *syms, uint32_t count[4][256],
                       bitw_t *w) GZ_SYM_PASS_BODY(0)
#undef SMALL_END
#undef SMALL
#undef SMALL_START
#undef GROUP

#ifdef HAVE_AVX2_PATH
    /* Groups of eight residuals below 16 in AVX2: their symbols (the low bytes)
     * in one 8-byte store, counted in byte counters, c[k] byte 8 q + j counting
     * value 4 k + q at position j (a compare of the eight against each value),
     * which sums of absolute differences add to count before a byte can
     * overflow (255 groups): the increments in memory of the scalar pass, two
     * stores per residual, were a quarter of the pass on the fields of mostly
     * zeros. The counters stay in registers through a run of such groups and in
     * memory between runs (held across the whole pass, they slowed the other
     * groups' code: TREFHT, WRF). */
    typedef struct tally {
  __m256i c[4];
  unsigned held; /* groups counted since the last flush */
} tally_t;

__attribute__((target("avx2"))) static void tally_flush(tally_t *t, uint32_t count[256]) {
  for (int k = 0; k < 4; k++) {
    uint64_t sum[4];
    _mm256_storeu_si256((__m256i *)(void *)sum,
                        _mm256_sad_epu8(t->c[k], _mm256_setzero_si256()));
    for (int q = 0; q < 4; q++)
      count[4 * k + q] += (uint32_t)sum[q];
    t->c[k] = _mm256_setzero_si256();
  }
  t->held = 0;
}

/* The run of groups below 16 from u + i (the first is one) while it lasts:
 * symbols and tally, the OR of the block of 32 (blk) and the bit-packed
 * size of the blocks it completes (psize), as the pass would; the start of
 * the run's last group and the two. Not inlined, its values returned, so
 * that the pass keeps its own in registers (inlined, or through pointers,
 * the other groups were 10-20 % slower). */
__attribute__((target("avx2"))) static inline uint64_t or_lanes(__m256i v) {
  __m128i o = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(o, _mm_unpackhi_epi64(o, o)));
}

typedef struct run {
  size_t last, psize;
  uint64_t blk;
} run_t;

__attribute__((target("avx2"), noinline)) static run_t
small_run_avx2(const uint64_t *u, size_t n, size_t i, uint8_t *syms, tally_t *t,
               uint32_t count[256], uint64_t blk, size_t psize) {
  const long long ones = 0x0101010101010101ll;
  const __m256i order = _mm256_setr_epi8(0, 8, -1, -1, 4, 12, -1, -1, -1, -1, -1, -1, -1,
                                         -1, -1, -1, -1, -1, 0, 8, -1, -1, 4, 12, -1, -1,
                                         -1, -1, -1, -1, -1, -1),
                wide = _mm256_set1_epi64x(~15ll);
  __m256i c[4], val[4], bv = _mm256_setzero_si256();
  run_t r = {i, psize, blk};
  for (int k = 0; k < 4; k++) {
    c[k] = t->c[k];
    val[k] = _mm256_set_epi64x((4 * k + 3) * ones, (4 * k + 2) * ones, (4 * k + 1) * ones,
                               4 * k * ones);
  }
  for (; i + 8 <= n; i += 8) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(u + i)),
            hi = _mm256_loadu_si256((const __m256i *)(const void *)(u + i + 4));
    __m256i all = _mm256_or_si256(lo, hi), d, sh, rep;
    __m128i x;
    if (!_mm256_testz_si256(all, wide))
      break;
    if (i + PREFETCH + 8 <= n)
      __builtin_prefetch(u + i + PREFETCH);
    /* dwords s0 s4 s1 s5 | s2 s6 s3 s7, their low bytes into order */
    d = _mm256_or_si256(lo, _mm256_slli_epi64(hi, 32));
    sh = _mm256_shuffle_epi8(d, order);
    x = _mm_or_si128(_mm256_castsi256_si128(sh), _mm256_extracti128_si256(sh, 1));
    _mm_storel_epi64((__m128i *)(void *)(syms + i), x);
    rep = _mm256_broadcastq_epi64(x);
    for (int k = 0; k < 4; k++)
      c[k] = _mm256_sub_epi8(c[k], _mm256_cmpeq_epi8(rep, val[k]));
    bv = _mm256_or_si256(bv, all);
    if ((i & 31) == 24) {
      r.psize += packed_block(r.blk | or_lanes(bv), 32);
      r.blk = 0;
      bv = _mm256_setzero_si256();
    }
    if (++t->held == 255) {
      for (int k = 0; k < 4; k++)
        t->c[k] = c[k];
      tally_flush(t, count);
      for (int k = 0; k < 4; k++)
        c[k] = t->c[k];
    }
    r.last = i;
  }
  r.blk |= or_lanes(bv);
  for (int k = 0; k < 4; k++)
    t->c[k] = c[k];
  return r;
}

/* Two AVX2 passes: groups below 16 one at a time as the portable pass, or
 * in runs (SMALL: the run from here, then on after it, the loop's step
 * passing its last group, its bookkeeping of blk and psize done). The call
 * of the runs cost the other groups' code 4-6 % (the vector constants of
 * group_avx2 do not survive a call), so that gz_res_rans takes it only for
 * residuals mostly below 16 (mostly_small): soda lakes and the smooth
 * field, whose pass takes 0.7 of the time it did. */
#define GROUP group_avx2
#define SMALL_START
#define SMALL(g, out) small8(g, out, count)
#define SMALL_END
__attribute__((target("avx2"))) static size_t
sym_pass_avx2(const uint64_t *u, size_t n, uint8_t *syms, uint32_t count[4][256],
              bitw_t *w) GZ_SYM_PASS_BODY(1)
#undef SMALL_END
#undef SMALL
#undef SMALL_START
#define SMALL_START                                                                      \
  tally_t tl;                                                                            \
  for (int k = 0; k < 4; k++)                                                            \
    tl.c[k] = _mm256_setzero_si256();                                                    \
  tl.held = 0
#define SMALL(g, out)                                                                    \
  {                                                                                      \
    run_t rn = small_run_avx2(u, n, i, syms, &tl, count[0], blk, psize);                 \
    i = rn.last;                                                                         \
    blk = rn.blk;                                                                        \
    psize = rn.psize;                                                                    \
    continue;                                                                            \
  }
#define SMALL_END tally_flush(&tl, count[0])
    __attribute__((target("avx2"))) static size_t
    sym_pass_runs_avx2(const uint64_t *u, size_t n, uint8_t *syms, uint32_t count[4][256],
                       bitw_t *w) GZ_SYM_PASS_BODY(1)
#undef SMALL_END
#undef SMALL
#undef SMALL_START
#undef GROUP

    /* Whether at least half of 64 groups of eight spread over u are below 16:
     * a guess at the better pass (both write the same). */
    static int mostly_small(const uint64_t *u, size_t n) {
  size_t groups = n / 8, small = 0;
  for (size_t k = 0; k < 64 && groups > 0; k++) {
    const uint64_t *g = u + 8 * (k * groups / 64);
    small += (g[0] | g[1] | g[2] | g[3] | g[4] | g[5] | g[6] | g[7]) < 16;
  }
  return small >= 32;
}
#endif

/* The coding in pieces in scratch (head: the table and the raw bits' length;
 * the raw bits; with 32 states their words, else the words end the raw
 * bits' piece). Returns the total size. */
static size_t rans_parts(const uint64_t *u, size_t n, int states, uint8_t *syms,
                         uint8_t *out, size_t *packed, gz_rans_parts_t *pt) {
  uint32_t count[4][256]; /* chunks hold at most 2^24 values */
  size_t cnt[256];
  uint32_t f[256];
  enc_tab_t tab;
  uint8_t *p = out, *raw, *rp, *end;
  bitw_t bw;
  size_t i;
  size_t psize;
  int simd = gz_chunk2_simd(-1);
  uint32_t x[4] = {RANS_L, RANS_L, RANS_L, RANS_L}, cum = 0;
  size_t rlen;
  unsigned m = states == 4 ? 3 : 1; /* S - 1 */

  /* symbols and raw bits (sym_raw); four histograms, so that runs of one
   * symbol do not serialise on one counter */
  memset(count, 0, sizeof count);
  raw = out + 32 + 3 * 256 + 4; /* after the table's worst case */
  bw.rp = raw;
  bw.acc = 0;
  bw.nbits = 0;
#ifdef HAVE_AVX2_PATH
  if (!simd)
    psize = sym_pass(u, n, syms, count, &bw);
  else if (mostly_small(u, n))
    psize = sym_pass_runs_avx2(u, n, syms, count, &bw);
  else
    psize = sym_pass_avx2(u, n, syms, count, &bw);
#else
  (void)simd;
  psize = sym_pass(u, n, syms, count, &bw);
#endif
  if (packed)
    *packed = psize;
  if (bw.nbits > 0)
    *bw.rp++ = (uint8_t)bw.acc;
  rlen = (size_t)(bw.rp - raw);
  for (int s = 0; s < 256; s++)
    cnt[s] = count[0][s] + count[1][s] + count[2][s] + count[3][s];

  /* the table */
  normalise(cnt, n, f);
  memset(p, 0, 32);
  for (int s = 0; s < 256; s++)
    if (f[s])
      p[s >> 3] |= (uint8_t)(1u << (s & 7));
  p += 32;
  for (int s = 0; s < 256; s++) {
    if (f[s]) {
      p += gz_varint_put(f[s], p);
      tab.xmax[s] = ((RANS_L >> PROB_BITS) << 8) * f[s];
      tab.rcp[s] = f[s] > 1 ? ((~0ull) / f[s]) + 1 : ~0ull; /* ceil(2^64 / f) */
      tab.bias[s] = (uint16_t)(cum + (f[s] == 1 ? PROB_SCALE - 1 : 0));
      tab.cmpl[s] = (uint16_t)(PROB_SCALE - f[s]);
      cum += f[s];
    }
  }
  gz_put32le(p, (uint32_t)rlen);
  p += 4;
  pt->head = out;
  pt->head_len = (size_t)(p - out);
  pt->raw = raw;
  pt->raw_len = rlen;
  if (states == GZ_RANS32_STATES) { /* rans32.c, into the room after the raw bits */
    end = raw + rlen + 2 * n + 4 * GZ_RANS32_STATES + 16;
    pt->words_len = gz_rans32_encode(syms, n, f, simd, end);
    pt->words = end - pt->words_len;
    return pt->head_len + rlen + pt->words_len;
  }
  memmove(p, raw, rlen); /* two and four states: in place, as before */
  p += rlen;

  /* rANS, backwards, into the space after the raw bits' worst case */
  end = p + 2 * n + 16;
  rp = end;
  /* symbol i goes to state i mod S, the last symbol first; the states are
   * scalars in the unrolled loops, so that their chains overlap */
  i = n;
  {
    while (i & m) {
      i--;
      x[i & m] = enc_put(x[i & m], &tab, syms[i], &rp);
    }
    if (states == 4) {
      uint32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
      while (i > 0) {
        i -= 4;
        x3 = enc_put(x3, &tab, syms[i + 3], &rp);
        x2 = enc_put(x2, &tab, syms[i + 2], &rp);
        x1 = enc_put(x1, &tab, syms[i + 1], &rp);
        x0 = enc_put(x0, &tab, syms[i], &rp);
      }
      {
        const uint32_t fin[4] = {x0, x1, x2, x3};
        memcpy(x, fin, sizeof fin);
      }
    } else { /* two states: coding 3, no longer written but by tests */
      while (i > 0) {
        i -= 2;
        x[1] = enc_put(x[1], &tab, syms[i + 1], &rp);
        x[0] = enc_put(x[0], &tab, syms[i], &rp);
      }
    }
  }
  rp -= 4 * (size_t)(m + 1);
  for (unsigned k = 0; k <= m; k++)
    gz_put32le(rp + 4 * k, x[k]);
  memmove(p, rp, (size_t)(end - rp));
  p += end - rp;
  pt->head_len = (size_t)(p - out);
  pt->raw_len = pt->words_len = 0;
  return pt->head_len;
}

size_t gz_res_rans_parts(const uint64_t *u, size_t n, uint8_t *syms, uint8_t *scratch,
                         size_t *packed, gz_rans_parts_t *pt) {
  return rans_parts(u, n, GZ_RANS32_STATES, syms, scratch, packed, pt);
}

size_t gz_res_rans(const uint64_t *u, size_t n, int states, uint8_t *syms, uint8_t *out,
                   size_t *packed) {
  gz_rans_parts_t pt;
  size_t len = rans_parts(u, n, states, syms, out, packed, &pt);
  if (states == GZ_RANS32_STATES) { /* the pieces together: raw bits down, words after */
    memmove(out + pt.head_len, pt.raw, pt.raw_len);
    memmove(out + pt.head_len + pt.raw_len, pt.words, pt.words_len);
  }
  return len;
}

/* The raw-bit reader of the decoder: a bit position, and for each read the
 * eight bytes from the one holding it (at most 57 bits wanted: the first
 * may start 7 bits in). The position is the only chain from one residual
 * to the next, where a 64-bit accumulator refilled 32 bits at a time had a
 * refill branch and a shift on it; the last seven bytes are read through a
 * zero-padded copy, so that nothing past the raw bits is loaded. */
typedef struct rawr {
  const uint8_t *raw;
  size_t len; /* bytes */
  size_t pos; /* bits taken so far */
} rawr_t;

static inline uint64_t load64le(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8); /* one load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* Take k <= 57 bits; -1 past the end of the raw bits. */
static inline int raw_take(rawr_t *r, unsigned k, uint64_t *v) {
  size_t at = r->pos >> 3;
  uint64_t word;
  if (k > 8 * r->len - r->pos)
    return -1;
  if (r->len - at >= 8) {
    word = load64le(r->raw + at);
  } else {
    uint8_t tail[8] = {0};
    memcpy(tail, r->raw + at, r->len - at);
    word = load64le(tail);
  }
  *v = (word >> (r->pos & 7)) & ((1ull << k) - 1);
  r->pos += k;
  return 0;
}

/* The decoding tables of a chunk. */
typedef struct dec_tab {
  uint32_t f[256], start[256];
  uint64_t base[256];
  uint8_t kbits[256], slot_sym[PROB_SCALE];
} dec_tab_t;

/* The residual of symbol s into *ui: its base and its raw bits (up to 61)
 * from r; -1 past the end of the raw bits. */
static inline int raw_residual(const dec_tab_t *t, unsigned s, rawr_t *r, uint64_t *ui) {
  unsigned k = t->kbits[s];
  uint64_t v = 0;
  if (k > 57) { /* rare: residuals of 2^60 and more */
    uint64_t hi;
    if (raw_take(r, 32, &v) != 0 || raw_take(r, k - 32, &hi) != 0)
      return -1;
    v |= hi << 32;
  } else if (raw_take(r, k, &v) != 0) {
    return -1;
  }
  *ui = t->base[s] | v;
  return 0;
}

/* Symbol i from state *xs: its residual into *ui, the state renormalised from
 * the bytes at *rs (end: their end). -1 on a stream that runs out. */
static inline __attribute__((always_inline)) int
dec_step(uint32_t *xs, const dec_tab_t *t, const uint8_t **rs, const uint8_t *end,
         rawr_t *r, uint64_t *ui) {
  uint32_t st = *xs, slot = st & (PROB_SCALE - 1), b;
  unsigned s = t->slot_sym[slot];
  const uint8_t *q = *rs;
  st = t->f[s] * (st >> PROB_BITS) + slot - t->start[s];
  /* at most two bytes (the encoder wrote at most two), branch-free while
   * two are left */
  if (end - q >= 2) {
    b = st < RANS_L;
    st = b ? st << 8 | q[0] : st;
    q += b;
    b = st < RANS_L;
    st = b ? st << 8 | q[0] : st;
    q += b;
  }
  while (st < RANS_L) {
    if (q >= end)
      return -1;
    st = st << 8 | *q++;
  }
  *rs = q;
  *xs = st;
  return raw_residual(t, s, r, ui);
}

/* Coding 5: the symbols of rans32.c (at the top of u: the residual of
 * symbol i, written after reading it, ends below symbol i + 1), then their
 * raw bits in order. */
static int unrans32(const dec_tab_t *t, rawr_t *r, const uint8_t *rs, size_t size,
                    size_t n, uint64_t *u) {
  uint8_t *syms = (uint8_t *)u + 7 * n;
  size_t i = 0;
  if (gz_rans32_decode(rs, size, n, t->f, gz_chunk2_simd(-1), syms) != 0)
    return -1;
  while (i < n) {
    size_t stop = n;
    if (n - i >= 8) { /* eight symbols below 16 (no raw bits): their values */
      uint64_t w;
      memcpy(&w, syms + i, 8);
      if (!(w & 0xf0f0f0f0f0f0f0f0ull)) {
        for (unsigned j = 0; j < 8; j++)
          u[i + j] = (w >> 8 * j) & 0xff;
        i += 8;
        continue;
      }
      stop = i + 8;
    }
    for (; i < stop; i++)
      if (raw_residual(t, syms[i], r, u + i) != 0)
        return -1;
  }
  return (r->pos + 7) / 8 == r->len ? 0 : -1;
}

int gz_res_unrans(const uint8_t *in, size_t size, size_t n, int states, uint64_t *u) {
  const uint8_t *p = in, *end = in + size, *rs;
  uint32_t sum = 0, x[4] = {0};
  unsigned ns = states == GZ_RANS32_STATES ? GZ_RANS32_STATES : states == 4 ? 4 : 2;
  dec_tab_t t;
  rawr_t r;
  size_t i = 0;
  int bad = 0;
  if (size < 32)
    return -1;
  p += 32;
  for (int s = 0; s < 256; s++) {
    t.f[s] = t.start[s] = 0;
    t.kbits[s] = s < 16 ? 0 : (uint8_t)((s - 16) / 4 + 2);
    t.base[s] = s < 16 ? (uint64_t)s : (uint64_t)(4 | ((s - 16) & 3)) << t.kbits[s];
    if (in[s >> 3] & (1u << (s & 7))) {
      uint64_t v;
      if (gz_varint_get(&p, end, &v) != 0 || v == 0 || v > PROB_SCALE - sum)
        return -1;
      t.f[s] = (uint32_t)v;
      t.start[s] = sum;
      memset(t.slot_sym + sum, s, t.f[s]);
      sum += t.f[s];
    }
  }
  if (sum != PROB_SCALE || (size_t)(end - p) < 4)
    return -1;
  memset(&r, 0, sizeof r);
  r.len = gz_get32le(p);
  p += 4;
  if (r.len > (size_t)(end - p) || (size_t)(end - p) - r.len < 4 * ns)
    return -1;
  r.raw = p;
  rs = p + r.len;
  if (ns == GZ_RANS32_STATES)
    return unrans32(&t, &r, rs, (size_t)(end - rs), n, u);
  for (unsigned k = 0; k < ns; k++) {
    x[k] = gz_get32le(rs + 4 * k);
    if (x[k] < RANS_L || x[k] >= (1u << 31))
      return -1;
  }
  rs += 4 * ns;
  /* unrolled over the states, kept in scalars so that their chains overlap */
  if (ns == 4) {
    uint32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (; i + 4 <= n && !bad; i += 4) { /* one statement each: in order */
      bad |= dec_step(&x0, &t, &rs, end, &r, u + i);
      bad |= dec_step(&x1, &t, &rs, end, &r, u + i + 1);
      bad |= dec_step(&x2, &t, &rs, end, &r, u + i + 2);
      bad |= dec_step(&x3, &t, &rs, end, &r, u + i + 3);
    }
    x[0] = x0;
    x[1] = x1;
    x[2] = x2;
    x[3] = x3;
  } else { /* two states: coding 3 */
    for (; i + 2 <= n && !bad; i += 2) {
      bad |= dec_step(&x[0], &t, &rs, end, &r, u + i);
      bad |= dec_step(&x[1], &t, &rs, end, &r, u + i + 1);
    }
  }
  for (; i < n && !bad; i++)
    bad = dec_step(&x[i % ns], &t, &rs, end, &r, u + i);
  if (bad || rs != end || (r.pos + 7) / 8 != r.len)
    return -1;
  for (unsigned k = 0; k < ns; k++)
    if (x[k] != RANS_L)
      return -1;
  return 0;
}
