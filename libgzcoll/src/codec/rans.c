/* rans.c - residual coding GZ_RES_RANS of format 2: an order-0 range
 * asymmetric numeral system coder with a static table per chunk.
 *
 * A residual u maps to a symbol (u itself below 16; else its bit length nb
 * and the two bits after its leading one: 16 + 4 (nb - 5) + top, at most
 * 255) and nb - 3 raw bits below those. The symbols go through rANS (two
 * interleaved 32-bit states, byte renormalisation, L = 2^23, probabilities
 * in units of 2^-14; division by a frequency through its reciprocal), the
 * raw bits are stored LSB first. Unlike a Huffman code (zstd's literals) a
 * symbol costs less than a bit, which the mostly-zero residuals of smooth
 * fields need.
 *
 * Layout: 32-byte bitmap of the symbols present, a varint frequency per
 * present symbol (they sum to 2^14), u32 length of the raw bits, the raw
 * bits, then the rANS bytes: the two final states (u32 each), then the
 * renormalisation bytes in decoding order. The decoder checks every bound
 * and that both states end where the encoder started.
 */
#include "codec/entropy.h"

#include <string.h>

#define PROB_BITS 14
#define PROB_SCALE (1u << PROB_BITS)
#define RANS_L (1u << 23)

static inline unsigned sym_of(uint64_t u) {
  unsigned nb;
  if (u < 16)
    return (unsigned)u;
  nb = 64u - (unsigned)__builtin_clzll(u);
  return 16 + 4 * (nb - 5) + (unsigned)((u >> (nb - 3)) & 3);
}

static void put32le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
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
size_t gz_res_rans_max(size_t n) { return 32 + 3 * 256 + 4 + 8 * n + 2 * n + 16; }

typedef struct enc_sym {
  uint32_t start, xmax, rcp, cmpl;
  uint32_t shift;
} enc_sym_t;

/* One symbol into state x: renormalise (bytes written backwards at *rp),
 * then x = (x / f) * 2^14 + x % f + start, the division by reciprocal. */
static inline uint32_t enc_put(uint32_t x, const enc_sym_t *e, uint8_t **rp) {
  uint32_t q;
  while (x >= e->xmax) {
    *--*rp = (uint8_t)x;
    x >>= 8;
  }
  q = (uint32_t)(((uint64_t)x * e->rcp) >> e->shift);
  return x + e->start + q * e->cmpl;
}

size_t gz_res_rans(const uint64_t *u, size_t n, uint8_t *syms, uint8_t *out) {
  size_t count[256] = {0};
  uint32_t f[256];
  enc_sym_t tab[256];
  uint8_t *p = out, *raw, *rp, *end;
  uint64_t acc = 0;
  unsigned nbits = 0;
  uint32_t x0 = RANS_L, x1 = RANS_L, cum = 0;
  size_t rlen;

  /* symbols and raw bits */
  raw = out + 32 + 3 * 256 + 4; /* provisional: moved after the table below */
  rp = raw;
  for (size_t i = 0; i < n; i++) {
    unsigned s = sym_of(u[i]);
    syms[i] = (uint8_t)s;
    count[s]++;
    if (s >= 16) {
      unsigned k = (s - 16) / 4 + 2; /* nb - 3 raw bits */
      uint64_t v = u[i] & ((k < 64 ? (1ull << k) : 0) - 1);
      if (k > 32) {
        acc |= (v & 0xffffffffu) << nbits;
        nbits += 32;
        while (nbits >= 8) {
          *rp++ = (uint8_t)acc;
          acc >>= 8;
          nbits -= 8;
        }
        v >>= 32;
        k -= 32;
      }
      acc |= v << nbits;
      nbits += k;
      while (nbits >= 8) {
        *rp++ = (uint8_t)acc;
        acc >>= 8;
        nbits -= 8;
      }
    }
  }
  if (nbits)
    *rp++ = (uint8_t)acc;
  rlen = (size_t)(rp - raw);

  /* the table */
  normalise(count, n, f);
  memset(p, 0, 32);
  for (int s = 0; s < 256; s++)
    if (f[s])
      p[s >> 3] |= (uint8_t)(1u << (s & 7));
  p += 32;
  for (int s = 0; s < 256; s++) {
    if (f[s]) {
      /* x / f = (x * rcp) >> (31 + sh) for every x < 2^31 */
      unsigned sh = 0;
      p += gz_varint_put(f[s], p);
      while ((1u << sh) < f[s])
        sh++;
      tab[s].start = cum;
      tab[s].xmax = ((RANS_L >> PROB_BITS) << 8) * f[s];
      tab[s].rcp = (uint32_t)(((1ull << (31 + sh)) + f[s] - 1) / f[s]);
      tab[s].cmpl = PROB_SCALE - f[s];
      tab[s].shift = 31 + sh;
      cum += f[s];
    }
  }
  put32le(p, (uint32_t)rlen);
  p += 4;
  memmove(p, raw, rlen);
  p += rlen;

  /* rANS, backwards, into the space after the raw bits' worst case */
  end = p + 2 * n + 16;
  rp = end;
  /* symbol i goes to state i & 1; two scalar states, so that their chains
   * overlap */
  {
    size_t i = n;
    if (n & 1) {
      i--;
      x0 = enc_put(x0, &tab[syms[i]], &rp);
    }
    while (i > 0) {
      i -= 2;
      x1 = enc_put(x1, &tab[syms[i + 1]], &rp);
      x0 = enc_put(x0, &tab[syms[i]], &rp);
    }
  }
  rp -= 8;
  put32le(rp, x0);
  put32le(rp + 4, x1);
  memmove(p, rp, (size_t)(end - rp));
  p += end - rp;
  return (size_t)(p - out);
}

int gz_res_unrans(const uint8_t *in, size_t size, size_t n, uint64_t *u) {
  const uint8_t *p = in, *end = in + size, *raw, *rs;
  uint32_t f[256] = {0}, start[256] = {0}, sum = 0, x[2];
  uint8_t slot_sym[PROB_SCALE];
  uint64_t acc = 0;
  unsigned nbits = 0;
  size_t rlen, rpos = 0;
  if (size < 32)
    return -1;
  p += 32;
  for (int s = 0; s < 256; s++) {
    if (in[s >> 3] & (1u << (s & 7))) {
      uint64_t v;
      if (gz_varint_get(&p, end, &v) != 0 || v == 0 || v > PROB_SCALE - sum)
        return -1;
      f[s] = (uint32_t)v;
      start[s] = sum;
      memset(slot_sym + sum, s, f[s]);
      sum += f[s];
    }
  }
  if (sum != PROB_SCALE || (size_t)(end - p) < 4)
    return -1;
  rlen = get32le(p);
  p += 4;
  if (rlen > (size_t)(end - p) || (size_t)(end - p) - rlen < 8)
    return -1;
  raw = p;
  rs = p + rlen;
  x[0] = get32le(rs);
  x[1] = get32le(rs + 4);
  rs += 8;
  if (x[0] < RANS_L || x[1] < RANS_L || x[0] >= (1u << 31) || x[1] >= (1u << 31))
    return -1;
  for (size_t i = 0; i < n; i++) {
    uint32_t *st = &x[i & 1], slot = *st & (PROB_SCALE - 1);
    unsigned s = slot_sym[slot];
    *st = f[s] * (*st >> PROB_BITS) + slot - start[s];
    while (*st < RANS_L) {
      if (rs >= end)
        return -1;
      *st = *st << 8 | *rs++;
    }
    if (s < 16) {
      u[i] = s;
    } else {
      unsigned k = (s - 16) / 4 + 2, got = 0;
      uint64_t v = 0;
      while (got < k) { /* up to 32 bits at a time */
        unsigned take = k - got < 32 ? k - got : 32;
        while (nbits < take) {
          if (rpos >= rlen)
            return -1;
          acc |= (uint64_t)raw[rpos++] << nbits;
          nbits += 8;
        }
        v |= (acc & ((1ull << take) - 1)) << got;
        acc >>= take;
        nbits -= take;
        got += take;
      }
      u[i] = ((uint64_t)(4 | ((s - 16) & 3)) << k) | v;
    }
  }
  return rs == end && rpos == rlen && x[0] == RANS_L && x[1] == RANS_L ? 0 : -1;
}
