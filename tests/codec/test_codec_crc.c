/* test_codec_crc.c - the streams' CRC-32 (crc32.c) equals zlib's crc32() for
 * every length 0..1100 at every alignment 0..15 and for a few MB, with the
 * carry-less multiply paths (AUTO: 256-bit where the CPU has VPCLMULQDQ;
 * AVX2: 128-bit) and the portable one; and the folding constants
 * in crc32.c are x^k mod P for the distances they stand for. */
#include "gz_test.h"

#include "codec/codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

/* x^k mod P (P = 0x104C11DB7), bit-reflected over 32 bits, shifted up one. */
static uint64_t fold_constant(int k) {
  uint64_t r = 1, out = 0;
  for (int i = 0; i < k; i++) {
    r <<= 1;
    if (r >> 32 & 1)
      r ^= 0x104C11DB7ull;
  }
  for (int i = 0; i < 32; i++)
    out |= (r >> i & 1) << (31 - i);
  return out << 1;
}

int main(void) {
  size_t big = 3u << 20, bad = 0;
  uint8_t *buf = malloc(big);
  gz_rng_t rng;
  gz_rng_seed(&rng, 32);
  for (size_t i = 0; i < big; i++)
    buf[i] = (uint8_t)gz_rng_next(&rng);
  GZ_CHECK(fold_constant(512 + 32) == 0x154442bd4ull &&
               fold_constant(512 - 32) == 0x1c6e41596ull &&
               fold_constant(128 + 32) == 0x1751997d0ull &&
               fold_constant(128 - 32) == 0x0ccaa009eull &&
               fold_constant(1024 + 32) == 0x1e88ef372ull &&
               fold_constant(1024 - 32) == 0x14a7fe880ull &&
               fold_constant(256 + 32) == 0x0f1da05aaull &&
               fold_constant(256 - 32) == 0x15a546366ull,
           "folding constants");
  for (int isa = GZ_ISA_AUTO; isa <= GZ_ISA_AVX2; isa++) {
    for (size_t off = 0; off < 16; off++)
      for (size_t len = 0; len <= 1100; len++)
        bad += gz_crc32_isa(isa, buf + off, len) !=
               (uint32_t)crc32(0L, buf + off, (uInt)len);
    GZ_CHECK(bad == 0, "set %d: %zu short lengths differ from zlib", isa, bad);
    GZ_CHECK(gz_crc32_isa(isa, buf + 3, big - 3) ==
                 (uint32_t)crc32(0L, buf + 3, (uInt)(big - 3)),
             "set %d: %zu bytes", isa, big - 3);
  }
  GZ_CHECK(gz_crc32("123456789", 9) == 0xCBF43926u, "the check value");
  free(buf);
  return gz_test_finish();
}
