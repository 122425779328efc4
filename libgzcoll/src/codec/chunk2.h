/* chunk2.h - one chunk of stream format version 2 (chunk2.c). */
#ifndef GZ_CHUNK2_H
#define GZ_CHUNK2_H

#include "codec/codec.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Scratch kept across the chunks one thread codes; zero-initialise. */
#define GZ_CHUNK2_BUFS 7
typedef struct gz_chunk2_work {
  void *buf[GZ_CHUNK2_BUFS];
  size_t cap[GZ_CHUNK2_BUFS];
  void *zc, *zd; /* zstd contexts (entropy.h), made on first use */
} gz_chunk2_work_t;
#define GZ_CHUNK2_WORK_INIT                                                              \
  { {NULL}, {0}, NULL, NULL }
void gz_chunk2_work_free(gz_chunk2_work_t *w);

/* The quantizer's instruction set: want < 0 asks (the best the CPU has, on
 * first use), 0 forces the portable loop, 1 AVX2 when the CPU has it, 2
 * AVX2 and, for QLORENZO's float32 encoder and QINTERP's sweeps (pred_value.c),
 * Lorenzo on codes in one pass and the trials' estimate (chunk2.c) and
 * RANS32's encoder (rans32.c), AVX-512 when it has both (else the best
 * below want). Returns the level in effect; all write the same bytes (for
 * tests and benchmarks). */
int gz_chunk2_simd(int want);

/* The trials' estimate of the coded size of n <= 2^32 residuals in bits
 * (order-0 entropy of min(u, 255) plus the width of every u >= 255; the
 * same double at every gz_chunk2_simd level). */
double gz_chunk2_cost_bits(const uint64_t *u, size_t n);

/* Largest encoded chunk of n values of elem bytes. */
size_t gz_chunk2_bound(size_t n, size_t elem);

/* The first i >= from with flag[i] equal to set (flags 0 or 1), or n:
 * eight flags at a time (escape flags; the runs of escapes are found with
 * gz_chunk2_flag_bits). */
size_t gz_chunk2_find_flag(const uint8_t *flag, size_t from, size_t n, int set);

/* Bit j of the result is flag f[j] (flags 0 or 1), j < len <= 64: sixteen
 * flags at a time (SSE2, every x86-64: each byte's low bit shifted to its
 * top, which movemask gathers), else one by one. Runs of flags are then
 * found from the changes between neighbours, 64 at a time, where a search
 * per run's start and end took longer than the run. */
static inline uint64_t gz_chunk2_flag_bits(const uint8_t *f, size_t len) {
  uint64_t bits = 0;
  size_t j = 0;
#ifdef __SSE2__
  if (len == 64) { /* unrolled: shifts by constants */
    for (int k = 0; k < 4; k++) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(f + 16 * k));
      bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_slli_epi16(v, 7)) << 16 * k;
    }
    return bits;
  }
  for (; j + 16 <= len; j += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(f + j));
    bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_slli_epi16(v, 7)) << j;
  }
#endif
  for (; j < len; j++)
    bits |= (uint64_t)f[j] << j;
  return bits;
}

/* The runs of set flags among f[0, n) (flags 0 or 1) into runs: start,
 * end (exclusive), ... in order, each as long as it goes; returns the count
 * of uint32 written (room for n + 1). From the changes between neighbouring
 * flags, 64 at a time (gz_chunk2_flag_bits). */
static inline size_t gz_chunk2_flag_runs(const uint8_t *f, size_t n, uint32_t *runs) {
  size_t nr = 0;
  uint64_t before = 0; /* the flag before the word */
  for (size_t w = 0; w < n; w += 64) {
    uint64_t bits = gz_chunk2_flag_bits(f + w, n - w < 64 ? n - w : 64);
    uint64_t change = bits ^ (bits << 1 | before);
    before = bits >> 63;
    for (; change; change &= change - 1) /* starts and ends in turn */
      runs[nr++] = (uint32_t)(w + (size_t)__builtin_ctzll(change));
  }
  if (nr & 1) /* a run up to the end */
    runs[nr++] = (uint32_t)n;
  return nr;
}

/* Encode the d[0] x d[1] x d[2] values x (C order) into out (room for
 * gz_chunk2_bound); predictor is a gz_predictor_t. Returns bytes written, 0
 * with *nomem set when scratch memory could not be allocated. */
size_t gz_chunk2_encode(gz_dtype_t dtype, const void *x, const size_t d[3],
                        const gz_quant_t *qp, int predictor, uint8_t *out, int *nomem,
                        gz_chunk2_work_t *w);

/* Decode a chunk of exactly size bytes into out. */
gz_result_t gz_chunk2_decode(gz_dtype_t dtype, const uint8_t *in, size_t size,
                             const size_t d[3], const gz_quant_t *qp, void *out,
                             gz_chunk2_work_t *w);

#endif
