/* test_codec_rans.c - white-box: the rANS residual codings of format 2
 * (libgzcoll/src/codec/rans.c, rans32.c) on two states (coding 3), four
 * (coding 4; both decoded only) and 32 (coding 5, written): residual mixes
 * from all zeros to 63-bit values and the edges of the symbol classes, the
 * AVX2 symbol pass and 32-state encoder (where the CPU has it) writing the
 * same bytes as the portable ones and the portable 32-state decoder reading
 * them, lengths around every multiple of the state count (and of 32, the
 * AVX2 coder's round), every value decoded back exactly; every truncation
 * and a corrupted byte at each offset of a short stream refused or decoded without a
 * memory error (ASan; both 32-state decoders), and a stream read with the other state
 * count never gives the residuals back. */
#include "gz_test.h"

#include "codec/chunk2.h"
#include "codec/codec.h"
#include "codec/entropy.h"

#include <stdlib.h>
#include <string.h>

/* n residuals of mix m: 0 all zeros, 1 mostly below 16 (a smooth field),
 * 2 geometric over a few bits, 3 wide (bit lengths up to 40), 4 extremes
 * (up to 2^64 - 1), 5 edges: 2^k - 1, 2^k, 2^k + 1 for random k (the
 * symbol and raw-bit boundaries; the AVX2 symbol pass takes groups of eight
 * below 2^52, so that groups on both sides of 2^52 occur), 6 rare: zeros
 * and ones with a few wide values, whose symbols get the least frequency 1
 * (the encoder's reciprocal has a case of its own for it), 7 raw-bit
 * counts (bit length - 3) of 2 to 14 and one in eight up to 49: reads of
 * the decoder's 8-byte raw-bit reader from every bit offset, up to its
 * 57 bits in one read, and ending within the last seven bytes, 8 raw-bit
 * counts of 12 to 16 and one in four of 26 to 30: the AVX2 pass joins the
 * raw bits of four residuals when they have at most 56, else of two, else
 * none, and here fours, pairs and singles on both sides of 56 mix, 9 one
 * symbol: all 15 (the AVX2 pass counts groups below 16 in byte counters,
 * flushed every 255 groups: here every counter of value 15 fills), 10 all
 * 256 symbols in turn (with raw bits up to 61), 11 runs (some 40 groups of
 * eight on average, up to hundreds) of values below 16 between single wide
 * values (up to 2^61) at any offset: the AVX2 pass's runs of such groups
 * begin and end at every offset in a block of 32 and its counters carry
 * from run to run. */
static void fill(uint64_t *u, size_t n, int m, gz_rng_t *rng) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = gz_rng_next(rng);
    unsigned bits = (unsigned)(r % 64);
    switch (m) {
    case 0:
      u[i] = 0;
      break;
    case 1:
      u[i] = r % 100 < 95 ? r % 3 : (r >> 8) % 40;
      break;
    case 2:
      u[i] = (r >> 8) & ((1ull << (r % 9)) - 1);
      break;
    case 3:
      u[i] = (r >> 20) & ((1ull << (bits % 41)) - 1);
      break;
    case 4:
      u[i] = bits == 0 ? UINT64_MAX : (r >> (bits % 3)) >> (bits % 2 ? 0 : bits);
      break;
    case 5: {
      unsigned k = r % 9 < 4 ? 4 + (unsigned)(r >> 8) % 3 : 50 + (unsigned)(r >> 8) % 5;
      if (r % 13 == 0)
        k = (unsigned)(r >> 16) % 64;
      u[i] = (1ull << k) - 1 + (r >> 32) % 3;
      break;
    }
    case 6:
      u[i] = r % 4096 == 0 ? (r >> 12) & ((1ull << (r % 40)) - 1) : r % 2;
      break;
    case 8: {
      unsigned k = r % 4 == 0 ? 26 + (unsigned)(r >> 8) % 5 : 12 + (unsigned)(r >> 8) % 5;
      u[i] = 1ull << (k + 2) | ((r >> 14) & ((1ull << (k + 2)) - 1));
      break;
    }
    case 9:
      u[i] = 15;
      break;
    case 10: { /* symbol i mod 256: its value, raw bits random */
      unsigned sym = (unsigned)(i % 256);
      u[i] = sym;
      if (sym >= 16) {
        unsigned nb = (sym - 16) / 4 + 5;
        u[i] = (uint64_t)(4 | ((sym - 16) & 3)) << (nb - 3) |
               ((r >> 8) & ((1ull << (nb - 3)) - 1));
      }
      break;
    }
    case 11:
      if (r % 4096 < 4096 / 300) /* a wide value every 300 or so */
        u[i] = (r >> 12) | 1ull << (16 + (r >> 20) % 45);
      else
        u[i] = (r >> 16) % (1 + (r >> 32) % 16);
      break;
    default: {
      unsigned nb =
          r % 8 == 0 ? 5 + (unsigned)(r >> 8) % 48 : 5 + (unsigned)(r >> 8) % 13;
      u[i] = 1ull << (nb - 1) | ((r >> 14) & ((1ull << (nb - 1)) - 1));
      break;
    }
    }
  }
}

static void roundtrip(size_t n, int m, int states, gz_rng_t *rng) {
  uint64_t *u = malloc(n * sizeof *u), *v = malloc((n + 1) * sizeof *v);
  uint8_t *syms = malloc(n), *out = malloc(gz_res_rans_max(n));
  size_t len, psize = 0;
  fill(u, n, m, rng);
  len = gz_res_rans(u, n, states, syms, out, &psize);
  GZ_CHECK(psize == gz_res_packed_size(u, n), "n %zu mix %d: packed size %zu, not %zu", n,
           m, psize, gz_res_packed_size(u, n));
  GZ_CHECK(len > 0 && len <= gz_res_rans_max(n), "n %zu mix %d states %d: %zu bytes", n,
           m, states, len);
  GZ_CHECK(gz_res_unrans(out, len, n, states, v) == 0 && memcmp(u, v, n * sizeof *u) == 0,
           "n %zu mix %d states %d: decoded exactly", n, m, states);
  if (gz_cpu_avx2()) { /* every level writes the same bytes; portable reads them */
    uint8_t *again = malloc(gz_res_rans_max(n));
    int top = gz_chunk2_simd(2);
    for (int level = 0; level < top; level++) { /* out: the top level's */
      size_t len0, psize0 = 0;
      gz_chunk2_simd(level);
      len0 = gz_res_rans(u, n, states, syms, again, &psize0);
      GZ_CHECK(len0 == len && psize0 == psize && memcmp(out, again, len) == 0,
               "n %zu mix %d states %d: encoders of levels %d and %d agree", n, m, states,
               level, top);
    }
    gz_chunk2_simd(0);
    memset(v, 0xa5, n * sizeof *v);
    GZ_CHECK(gz_res_unrans(out, len, n, states, v) == 0 &&
                 memcmp(u, v, n * sizeof *u) == 0,
             "n %zu mix %d states %d: portable decoder decodes exactly", n, m, states);
    gz_chunk2_simd(top);
    free(again);
  }
  if (states == GZ_RANS32_STATES) { /* the pieces, one after the other, are the coding */
    uint8_t *scratch = malloc(gz_res_rans_max(n));
    gz_rans_parts_t pt;
    size_t plen, psize1 = 0;
    plen = gz_res_rans_parts(u, n, syms, scratch, &psize1, &pt);
    GZ_CHECK(plen == len && psize1 == psize &&
                 pt.head_len + pt.raw_len + pt.words_len == len &&
                 memcmp(out, pt.head, pt.head_len) == 0 &&
                 memcmp(out + pt.head_len, pt.raw, pt.raw_len) == 0 &&
                 memcmp(out + pt.head_len + pt.raw_len, pt.words, pt.words_len) == 0,
             "n %zu mix %d: RANS32's pieces are its coding", n, m);
    free(scratch);
  }
  /* one residual more or fewer than written is refused (where symbols
   * carry information: a run of one symbol leaves the states unchanged) */
  if (m >= 2 && m != 9 && n >= 1024) {
    GZ_CHECK(gz_res_unrans(out, len, n + 1, states, v) != 0,
             "n %zu mix %d states %d: one more residual refused", n, m, states);
    GZ_CHECK(gz_res_unrans(out, len, n - 1, states, v) != 0,
             "n %zu mix %d states %d: one fewer residual refused", n, m, states);
  }
  free(u);
  free(v);
  free(syms);
  free(out);
}

/* Every truncation refused; a byte changed at each offset gives -1 or some
 * residuals, never a memory error. */
static void hostile(int states, gz_rng_t *rng) {
  size_t n = 1030, len, refused = 0;
  uint64_t *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
  uint8_t *syms = malloc(n), *out = malloc(gz_res_rans_max(n)), *bad;
  fill(u, n, 2, rng);
  len = gz_res_rans(u, n, states, syms, out, NULL);
  bad = malloc(len);
  for (size_t cut = 0; cut < len; cut++) {
    memcpy(bad, out, cut);
    refused += gz_res_unrans(bad, cut, n, states, v) != 0;
  }
  GZ_CHECK(refused == len, "states %d: %zu of %zu truncations refused", states, refused,
           len);
  for (size_t at = 0; at < len; at++) {
    memcpy(bad, out, len);
    bad[at] ^= (uint8_t)(1u << (at % 8));
    (void)gz_res_unrans(bad, len, n, states, v);
  }
  free(bad);
  free(u);
  free(v);
  free(syms);
  free(out);
}

int main(void) {
  gz_rng_t rng;
  static const size_t lengths[] = {1,    2,    3,    4,    5,     7,    8,   9,  1023,
                                   1024, 1025, 1026, 1027, 65537, 31,   32,  33, 63,
                                   64,   65,   95,   96,   97,    4096, 4127};
  static const int nstates[] = {2, 4, GZ_RANS32_STATES};
  gz_rng_seed(&rng, 1818);
  for (size_t si = 0; si < sizeof nstates / sizeof *nstates; si++)
    for (int m = 0; m <= 11; m++)
      for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++)
        if (lengths[k] > 1)
          roundtrip(lengths[k], m, nstates[si], &rng);
  {
    /* a stream of four states read as two (and the reverse) is refused
     * whenever the states' final values do not fit: here always */
    size_t n = 4099, len;
    uint64_t *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    uint8_t *syms = malloc(n), *out = malloc(gz_res_rans_max(n));
    fill(u, n, 2, &rng);
    len = gz_res_rans(u, n, 4, syms, out, NULL);
    GZ_CHECK(gz_res_unrans(out, len, n, 2, v) != 0 || memcmp(u, v, n * sizeof *u) != 0,
             "four states read as two do not give the residuals back");
    len = gz_res_rans(u, n, 2, syms, out, NULL);
    GZ_CHECK(gz_res_unrans(out, len, n, 4, v) != 0, "two states read as four refused");
    len = gz_res_rans(u, n, GZ_RANS32_STATES, syms, out, NULL);
    GZ_CHECK(gz_res_unrans(out, len, n, 4, v) != 0 || memcmp(u, v, n * sizeof *u) != 0,
             "32 states read as four do not give the residuals back");
    len = gz_res_rans(u, n, 4, syms, out, NULL);
    GZ_CHECK(gz_res_unrans(out, len, n, GZ_RANS32_STATES, v) != 0 ||
                 memcmp(u, v, n * sizeof *u) != 0,
             "four states read as 32 do not give the residuals back");
    free(u);
    free(v);
    free(syms);
    free(out);
  }
  hostile(2, &rng);
  hostile(4, &rng);
  hostile(GZ_RANS32_STATES, &rng);
  if (gz_cpu_avx2()) { /* and the portable decoder */
    gz_chunk2_simd(0);
    hostile(GZ_RANS32_STATES, &rng);
    gz_chunk2_simd(1);
  }
  return gz_test_finish();
}
