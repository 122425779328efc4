/* entropy.c - entropy stage of format version 2: bit-packed or byte-symbol
 * residuals, and sections that are zstd-compressed only where that shrinks
 * them (layout in entropy.h). */
#include "codec/entropy.h"

#include <string.h>
#include <zstd.h>

#define GZ_ZSTD_LEVEL 1
#define RES_BLOCK 32

static int width(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

size_t gz_res_packed_size(const uint64_t *u, size_t n) {
  size_t size = 0;
  for (size_t b = 0; b < n; b += RES_BLOCK) {
    size_t m = n - b < RES_BLOCK ? n - b : RES_BLOCK;
    uint64_t all = 0;
    for (size_t i = 0; i < m; i++)
      all |= u[b + i];
    size += 1 + (m * (size_t)width(all) + 7) / 8;
  }
  return size;
}

size_t gz_res_pack(const uint64_t *u, size_t n, uint8_t *out) {
  uint8_t *p = out;
  for (size_t b = 0; b < n; b += RES_BLOCK) {
    size_t m = n - b < RES_BLOCK ? n - b : RES_BLOCK;
    uint64_t all = 0, acc = 0;
    int w, nbits = 0;
    for (size_t i = 0; i < m; i++)
      all |= u[b + i];
    w = width(all);
    *p++ = (uint8_t)w;
    if (w == 0)
      continue;
    for (size_t i = 0; i < m; i++) {
      uint64_t v = u[b + i];
      int left = w;
      while (left > 0) { /* fewer than 8 bits pending: add up to 32 */
        int take = left < 32 ? left : 32;
        acc |= (v & ((1ull << take) - 1)) << nbits;
        v = take < 64 ? v >> take : 0;
        left -= take;
        nbits += take;
        while (nbits >= 8) {
          *p++ = (uint8_t)acc;
          acc >>= 8;
          nbits -= 8;
        }
      }
    }
    if (nbits > 0)
      *p++ = (uint8_t)acc;
  }
  return (size_t)(p - out);
}

int gz_res_unpack(const uint8_t *in, size_t size, size_t n, uint64_t *u) {
  const uint8_t *p = in, *end = in + size;
  for (size_t b = 0; b < n; b += RES_BLOCK) {
    size_t m = n - b < RES_BLOCK ? n - b : RES_BLOCK, bytes;
    uint64_t acc = 0;
    int w, nbits = 0;
    if (p >= end || *p > 64)
      return -1;
    w = *p++;
    bytes = (m * (size_t)w + 7) / 8;
    if (bytes > (size_t)(end - p))
      return -1;
    for (size_t i = 0; i < m; i++) {
      uint64_t v = 0;
      int got = 0;
      while (got < w) { /* take up to 32 bits at a time */
        int take = w - got < 32 ? w - got : 32;
        while (nbits < take) {
          acc |= (uint64_t)*p++ << nbits;
          nbits += 8;
        }
        v |= (acc & ((1ull << take) - 1)) << got;
        acc >>= take;
        nbits -= take;
        got += take;
      }
      u[b + i] = v;
    }
  }
  return p == end ? 0 : -1;
}

size_t gz_varint_put(uint64_t v, uint8_t *out) {
  size_t k = 0;
  while (v >= 0x80) {
    out[k++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[k++] = (uint8_t)v;
  return k;
}

int gz_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b;
    if (*p >= end)
      return -1;
    b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

size_t gz_res_bytes(const uint64_t *u, size_t n, uint8_t *out) {
  uint8_t *p = out;
  for (size_t i = 0; i < n; i++) {
    if (u[i] < 255) {
      *p++ = (uint8_t)u[i];
    } else {
      *p++ = 255;
      p += gz_varint_put(u[i] - 255, p);
    }
  }
  return (size_t)(p - out);
}

int gz_res_unbytes(const uint8_t *in, size_t size, size_t n, uint64_t *u) {
  const uint8_t *p = in, *end = in + size;
  for (size_t i = 0; i < n; i++) {
    if (p >= end)
      return -1;
    if (*p < 255) {
      u[i] = *p++;
    } else {
      uint64_t v;
      p++;
      if (gz_varint_get(&p, end, &v) != 0)
        return -1;
      u[i] = v + 255;
    }
  }
  return p == end ? 0 : -1;
}

size_t gz_res_planes(const uint64_t *u, size_t n, size_t k, uint8_t *out) {
  out[0] = (uint8_t)k;
  for (size_t b = 0; b < k; b++) {
    uint8_t *plane = out + 1 + b * n;
    for (size_t i = 0; i < n; i++)
      plane[i] = (uint8_t)(u[i] >> (8 * b));
  }
  return 1 + k * n;
}

int gz_res_unplanes(const uint8_t *in, size_t size, size_t n, uint64_t *u) {
  size_t k;
  if (size < 1 || in[0] < 1 || in[0] > 8)
    return -1;
  k = in[0];
  if (n > (size - 1) / k || size != 1 + k * n)
    return -1;
  for (size_t i = 0; i < n; i++)
    u[i] = in[1 + i];
  for (size_t b = 1; b < k; b++) {
    const uint8_t *plane = in + 1 + b * n;
    for (size_t i = 0; i < n; i++)
      u[i] |= (uint64_t)plane[i] << (8 * b);
  }
  return 0;
}

size_t gz_section_max(size_t len) {
  size_t z = ZSTD_compressBound(len);
  return GZ_SECTION_HEADER + (z > len ? z : len);
}

size_t gz_section_put(const uint8_t *raw, size_t len, int try_zstd, uint8_t *out,
                      void **zc) {
  size_t stored = len;
  out[0] = 0;
  if (try_zstd && len >= 64) {
    size_t z;
    if (!*zc)
      *zc = ZSTD_createCCtx();
    if (!*zc)
      return 0;
    /* the same bytes as ZSTD_compress at this level */
    z = ZSTD_compressCCtx(*zc, out + GZ_SECTION_HEADER, ZSTD_compressBound(len), raw, len,
                          GZ_ZSTD_LEVEL);
    if (ZSTD_isError(z))
      return 0;
    if (z < len) {
      out[0] = 1;
      stored = z;
    }
  }
  if (out[0] == 0) {
    if (len)
      memcpy(out + GZ_SECTION_HEADER, raw, len);
    return gz_section_stored(out, len);
  }
  gz_put32le(out + 1, (uint32_t)len);
  gz_put32le(out + 5, (uint32_t)stored);
  return GZ_SECTION_HEADER + stored;
}

size_t gz_section_stored(uint8_t *out, size_t len) {
  out[0] = 0;
  gz_put32le(out + 1, (uint32_t)len);
  gz_put32le(out + 5, (uint32_t)len);
  return GZ_SECTION_HEADER + len;
}

void gz_zstd_free(void *zc, void *zd) {
  ZSTD_freeCCtx(zc);
  ZSTD_freeDCtx(zd);
}

int gz_section_peek(const uint8_t *in, size_t avail, size_t max_raw, size_t *raw_len,
                    size_t *used) {
  size_t raw, stored;
  if (avail < GZ_SECTION_HEADER || in[0] > 1)
    return -1;
  raw = gz_get32le(in + 1);
  stored = gz_get32le(in + 5);
  if (raw > max_raw || stored > avail - GZ_SECTION_HEADER ||
      (in[0] == 0 && raw != stored))
    return -1;
  *raw_len = raw;
  *used = GZ_SECTION_HEADER + stored;
  return 0;
}

int gz_section_get(const uint8_t *in, uint8_t *raw, size_t raw_len, void **zd) {
  size_t stored = gz_get32le(in + 5), got;
  if (in[0] == 0) {
    if (raw_len)
      memcpy(raw, in + GZ_SECTION_HEADER, raw_len);
    return 0;
  }
  if (!*zd)
    *zd = ZSTD_createDCtx();
  if (!*zd)
    return -1;
  got = ZSTD_decompressDCtx(*zd, raw, raw_len, in + GZ_SECTION_HEADER, stored);
  return ZSTD_isError(got) || got != raw_len ? -1 : 0;
}
