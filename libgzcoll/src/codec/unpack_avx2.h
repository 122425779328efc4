/*
 * unpack_avx2.h - the AVX2 reader of PACKED payloads (kernels/gz_block.h)
 * into int32 codes, shared by the codec's float32 blocks (values.c, which
 * converts the codes to values) and the collectives' int32 codes (codes.c,
 * which stores or combines them). Header code: it inlines into each caller's
 * AVX2 loop. Include only where <immintrin.h> and GCC's target attribute
 * are available (x86-64).
 */
#ifndef GZ_UNPACK_AVX2_H
#define GZ_UNPACK_AVX2_H

#include <immintrin.h>
#include <stdint.h>

/* The 16 payload bytes from the one holding bit lo, and those from the one
 * holding bit hi, as the two halves of a vector. */
static inline __attribute__((always_inline, target("avx2"))) __m256i
gz_load_bytes_of(const uint8_t *pay, int lo, int hi) {
  return _mm256_setr_m128i(
      _mm_loadu_si128((const __m128i *)(const void *)(pay + (lo >> 3))),
      _mm_loadu_si128((const __m128i *)(const void *)(pay + (hi >> 3))));
}

/* The 32 codes of a full PACKED block (first zigzag code u0 of w0 bits, then
 * 31 deltas of w bits) into d[0..4), eight int32 lanes each; pay must have
 * 8 * 18 bytes readable (callers copy a block near the end of its buffer).
 * Each delta is read as 32 bits from the byte holding its first bit
 * (w + 7 <= 31), shifted down and masked; then unzigzag and prefix sums in
 * eight int32 lanes. The 32-bit reads are byte shuffles of two 16-byte
 * loads, one per group of four deltas (they span at most 7 + 4 w <= 127
 * bits, 16 bytes, from the first one's byte): a gather of eight lanes costs
 * several times more on the CPUs at hand.
 * wide = 0: w <= 24 and u0 <= 2^31 (every code then fits int32); returns 1.
 * wide = 1: w <= 30 and u0 <= 2^31; a delta may then take 5 bytes, read as
 * a second 32-bit word 4 bytes on (its bytes past the 16 loaded are never
 * among the delta's); the int32 sums are the codes while each stays in
 * [-2^30, 2^30) (then the next one, a delta of at most 2^29 on, cannot
 * wrap): returns 0 when one does not (d is then wrong). */
static inline __attribute__((always_inline, target("avx2"))) int
gz_unpack_int32_avx2(const uint8_t *pay, int w, int w0, uint32_t u0, __m256i d[4],
                     const int wide) {
  const __m256i one = _mm256_set1_epi32(1), seven = _mm256_set1_epi32(7),
                four = _mm256_set1_epi32(4), thirty_two = _mm256_set1_epi32(32),
                limit = _mm256_set1_epi32(1 << 30),
                sign = _mm256_set1_epi32((int)0x80000000u),
                mask = _mm256_set1_epi32((int)((1u << w) - 1)),
                byte_of_lane = _mm256_set1_epi32(0x03020100),
                spread =
                    _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,
                                     0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12),
                /* bit offset of delta k of a group of four from the group's
                 * first one */
      in_group = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3),
                                    _mm256_set1_epi32(w));
  __m256i carry = _mm256_setzero_si256(), outside = _mm256_setzero_si256();
  for (int i = 0; i < 32; i += 8) {
    /* first bit of value v >= 1 is w0 + (v - 1) w; value 0 (the first
     * code, u0) is read apart, so group 0 starts as if at value 1 */
    int lo = i ? w0 + (i - 1) * w : w0, hi = w0 + (i + 3) * w;
    __m256i src = gz_load_bytes_of(pay, lo, hi);
    __m256i at = _mm256_add_epi32(
        _mm256_setr_m128i(_mm_set1_epi32(lo & 7), _mm_set1_epi32(hi & 7)), in_group);
    __m256i ctrl = _mm256_add_epi32(_mm256_shuffle_epi8(_mm256_srli_epi32(at, 3), spread),
                                    byte_of_lane);
    __m256i shift = _mm256_and_si256(at, seven);
    __m256i z = _mm256_srlv_epi32(_mm256_shuffle_epi8(src, ctrl), shift);
    __m256i s;
    if (wide) /* the bits past the first word: sllv by 32 gives 0 */
      z = _mm256_or_si256(
          z, _mm256_sllv_epi32(_mm256_shuffle_epi8(src, _mm256_add_epi32(ctrl, four)),
                               _mm256_sub_epi32(thirty_two, shift)));
    z = _mm256_and_si256(z, mask);
    if (i == 0) /* lanes 1..3 were read from value 1 on: move them up */
      z = _mm256_blend_epi32(_mm256_set1_epi32((int)u0),
                             _mm256_blend_epi32(_mm256_slli_si256(z, 4), z, 0xf0), 0xfe);
    s = _mm256_xor_si256(
        _mm256_srli_epi32(z, 1),
        _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(z, one)));
    /* prefix sum of the eight lanes: within each half, then across */
    s = _mm256_add_epi32(s, _mm256_slli_si256(s, 4));
    s = _mm256_add_epi32(s, _mm256_slli_si256(s, 8));
    s = _mm256_add_epi32(s,
                         _mm256_permute2x128_si256(_mm256_shuffle_epi32(s, 0xff),
                                                   _mm256_shuffle_epi32(s, 0xff), 0x08));
    s = _mm256_add_epi32(s, carry);
    carry = _mm256_permutevar8x32_epi32(s, seven);
    if (wide) /* sign bit of s + 2^30: s outside [-2^30, 2^30) */
      outside = _mm256_or_si256(outside, _mm256_add_epi32(s, limit));
    d[i / 8] = s;
  }
  return !wide || _mm256_testz_si256(outside, sign);
}

#endif /* GZ_UNPACK_AVX2_H */
