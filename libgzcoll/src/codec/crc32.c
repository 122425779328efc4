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
 * by zlib (they are what the message reduces to). The constants are
 * recomputed from P by tests/codec/test_codec_crc.c.
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
#define K_512_LO 0x154442bd4ull /* x^(512+32) mod P */
#define K_512_HI 0x1c6e41596ull /* x^(512-32) mod P */
#define K_128_LO 0x1751997d0ull /* x^(128+32) mod P */
#define K_128_HI 0x0ccaa009eull /* x^(128-32) mod P */

__attribute__((target("pclmul"))) static inline __m128i fold(__m128i a, __m128i k,
                                                             __m128i data) {
  __m128i lo = _mm_clmulepi64_si128(a, k, 0x00), hi = _mm_clmulepi64_si128(a, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/* size >= 64 */
__attribute__((target("pclmul"))) static uint32_t
crc_clmul(uint32_t crc, const uint8_t *p, size_t size) {
  __m128i x0 = _mm_loadu_si128((const __m128i *)p),
          x1 = _mm_loadu_si128((const __m128i *)(p + 16)),
          x2 = _mm_loadu_si128((const __m128i *)(p + 32)),
          x3 = _mm_loadu_si128((const __m128i *)(p + 48)),
          k = _mm_set_epi64x((long long)K_512_HI, (long long)K_512_LO);
  uint8_t last[16];
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
  x0 = fold(x0, k, x3);
  while (size >= 16) {
    x0 = fold(x0, k, _mm_loadu_si128((const __m128i *)p));
    p += 16;
    size -= 16;
  }
  /* the message is now x0's 16 bytes then the rest, from a zero register */
  _mm_storeu_si128((__m128i *)last, x0);
  return crc_zlib(crc_zlib(0xffffffffu, last, 16), p, size);
}
#endif

uint32_t gz_crc32_isa(int isa, const void *data, size_t size) {
#ifdef HAVE_CLMUL_PATH
  static int have = -1;
  if (have < 0) /* a race here writes the same value */
    have = __builtin_cpu_supports("pclmul") ? 1 : 0;
  if (isa != GZ_ISA_PORTABLE && have && size >= 64)
    return crc_clmul(0, data, size);
#else
  (void)isa;
#endif
  return crc_zlib(0, data, size);
}

uint32_t gz_crc32(const void *data, size_t size) {
  return gz_crc32_isa(GZ_ISA_AUTO, data, size);
}
