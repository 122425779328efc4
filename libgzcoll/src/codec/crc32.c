/*
 * crc32.c - the streams' CRC-32 (zlib's: reflected polynomial 0xEDB88320,
 * the value of zlib's crc32()), folded with carry-less multiplication where
 * the CPU has PCLMULQDQ, else zlib's own.
 *
 * Folding: four 128-bit accumulators take 64 bytes a step; an accumulator A
 * standing D bits before the data it is added to becomes A.lo * k1 ^ A.hi * k2
 * with k1 = x^(D+32) mod P and k2 = x^(D-32) mod P (bit-reflected, shifted up
 * by one for the reflected product), congruent to A moved D bits on. D = 512
 * for the four accumulators, 128 to fold them into one and for the remaining
 * 16-byte pieces. The last accumulator and the bytes after it are finished
 * by zlib (they are what the message reduces to). Where the CPU has
 * VPCLMULQDQ and AVX2, four 256-bit accumulators (two 128-bit ones each)
 * take 128 bytes a step (D = 1024), are folded into one at D = 256 and its
 * halves at D = 128, then the 16-byte pieces as above: twice the bytes per
 * multiply instruction. The constants are recomputed from P by
 * tests/codec/test_codec_crc.c.
 */
#include "codec/codec.h"

#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL_PATH 1
#endif

static uint32_t crc_zlib(uint32_t crc, const uint8_t *p, size_t size) {
  uLong c = crc;
  while (size > 0) {
    uInt part = size > (1u << 30) ? (1u << 30) : (uInt)size;
    c = crc32(c, p, part);
    p += part;
    size -= part;
  }
  return (uint32_t)c;
}

#ifdef HAVE_CLMUL_PATH
#define K_512_LO 0x154442bd4ull  /* x^(512+32) mod P */
#define K_512_HI 0x1c6e41596ull  /* x^(512-32) mod P */
#define K_128_LO 0x1751997d0ull  /* x^(128+32) mod P */
#define K_128_HI 0x0ccaa009eull  /* x^(128-32) mod P */
#define K_1024_LO 0x1e88ef372ull /* x^(1024+32) mod P */
#define K_1024_HI 0x14a7fe880ull /* x^(1024-32) mod P */
#define K_256_LO 0x0f1da05aaull  /* x^(256+32) mod P */
#define K_256_HI 0x15a546366ull  /* x^(256-32) mod P */

__attribute__((target("pclmul"))) static inline __m128i fold(__m128i a, __m128i k,
                                                             __m128i data) {
  __m128i lo = _mm_clmulepi64_si128(a, k, 0x00), hi = _mm_clmulepi64_si128(a, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/* The CRC of the message that the accumulator x0 reduces to, then the size
 * bytes at p: the 16-byte pieces folded in, the rest by zlib. */
__attribute__((target("pclmul"))) static uint32_t finish(__m128i x0, const uint8_t *p,
                                                         size_t size) {
  const __m128i k = _mm_set_epi64x((long long)K_128_HI, (long long)K_128_LO);
  uint8_t last[16];
  while (size >= 16) {
    x0 = fold(x0, k, _mm_loadu_si128((const __m128i *)p));
    p += 16;
    size -= 16;
  }
  /* the message is now x0's 16 bytes then the rest, from a zero register */
  _mm_storeu_si128((__m128i *)last, x0);
  return crc_zlib(crc_zlib(0xffffffffu, last, 16), p, size);
}

/* size >= 64 */
__attribute__((target("pclmul"))) static uint32_t
crc_clmul(uint32_t crc, const uint8_t *p, size_t size) {
  __m128i x0 = _mm_loadu_si128((const __m128i *)p),
          x1 = _mm_loadu_si128((const __m128i *)(p + 16)),
          x2 = _mm_loadu_si128((const __m128i *)(p + 32)),
          x3 = _mm_loadu_si128((const __m128i *)(p + 48)),
          k = _mm_set_epi64x((long long)K_512_HI, (long long)K_512_LO);
  x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)~crc));
  p += 64;
  size -= 64;
  while (size >= 64) {
    x0 = fold(x0, k, _mm_loadu_si128((const __m128i *)p));
    x1 = fold(x1, k, _mm_loadu_si128((const __m128i *)(p + 16)));
    x2 = fold(x2, k, _mm_loadu_si128((const __m128i *)(p + 32)));
    x3 = fold(x3, k, _mm_loadu_si128((const __m128i *)(p + 48)));
    p += 64;
    size -= 64;
  }
  k = _mm_set_epi64x((long long)K_128_HI, (long long)K_128_LO);
  x0 = fold(x0, k, x1);
  x0 = fold(x0, k, x2);
  return finish(fold(x0, k, x3), p, size);
}

__attribute__((target("avx2,vpclmulqdq"))) static inline __m256i
fold256(__m256i a, __m256i k, __m256i data) {
  __m256i lo = _mm256_clmulepi64_epi128(a, k, 0x00),
          hi = _mm256_clmulepi64_epi128(a, k, 0x11);
  return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

/* crc_clmul in 256-bit lanes; size >= 128 */
__attribute__((target("avx2,vpclmulqdq,pclmul"))) static uint32_t
crc_clmul256(uint32_t crc, const uint8_t *p, size_t size) {
  __m256i x0 = _mm256_loadu_si256((const __m256i *)p),
          x1 = _mm256_loadu_si256((const __m256i *)(p + 32)),
          x2 = _mm256_loadu_si256((const __m256i *)(p + 64)),
          x3 = _mm256_loadu_si256((const __m256i *)(p + 96)),
          k = _mm256_set_epi64x((long long)K_1024_HI, (long long)K_1024_LO,
                                (long long)K_1024_HI, (long long)K_1024_LO);
  x0 = _mm256_xor_si256(x0, _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)~crc)));
  p += 128;
  size -= 128;
  while (size >= 128) {
    x0 = fold256(x0, k, _mm256_loadu_si256((const __m256i *)p));
    x1 = fold256(x1, k, _mm256_loadu_si256((const __m256i *)(p + 32)));
    x2 = fold256(x2, k, _mm256_loadu_si256((const __m256i *)(p + 64)));
    x3 = fold256(x3, k, _mm256_loadu_si256((const __m256i *)(p + 96)));
    p += 128;
    size -= 128;
  }
  k = _mm256_set_epi64x((long long)K_256_HI, (long long)K_256_LO, (long long)K_256_HI,
                        (long long)K_256_LO);
  x0 = fold256(x0, k, x1);
  x0 = fold256(x0, k, x2);
  x0 = fold256(x0, k, x3);
  return finish(fold(_mm256_castsi256_si128(x0),
                     _mm_set_epi64x((long long)K_128_HI, (long long)K_128_LO),
                     _mm256_extracti128_si256(x0, 1)),
                p, size);
}
#endif

uint32_t gz_crc32_isa(int isa, const void *data, size_t size) {
#ifdef HAVE_CLMUL_PATH
  static int have = -1; /* bit 0: PCLMULQDQ, bit 1: VPCLMULQDQ and AVX2 */
  if (have < 0) {       /* a race here writes the same value */
    __builtin_cpu_init();
    have = (__builtin_cpu_supports("pclmul") ? 1 : 0) |
           (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("vpclmulqdq")
                ? 2
                : 0);
  }
  if (isa == GZ_ISA_AUTO && (have & 2) && size >= 128)
    return crc_clmul256(0, data, size);
  if (isa != GZ_ISA_PORTABLE && (have & 1) && size >= 64)
    return crc_clmul(0, data, size);
#else
  (void)isa;
#endif
  return crc_zlib(0, data, size);
}

uint32_t gz_crc32(const void *data, size_t size) {
  return gz_crc32_isa(GZ_ISA_AUTO, data, size);
}
