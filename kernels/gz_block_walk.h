/*
 * gz_block_walk.h - what a parallel decoder needs beyond gz_block.h, shared
 * by the C library and the CUDA kernels (GZ_HD header code):
 *
 *  - the size of an encoded block read from its first bytes only
 *    (gz_block_size_f32/f64, gz_block_codes_size), so one thread per chunk
 *    (or segment) can find where every block starts, after which one warp
 *    per block decodes. Each returns exactly what the matching decoder in
 *    gz_block.h returns as "bytes used", or 0 where that decoder fails;
 *    tests/gpu/test_device_host.c checks this on the CPU.
 *  - CRC-32 (zlib's polynomial 0xEDB88320, same value as zlib's crc32()),
 *    table-driven with a caller-provided 256-entry table (gz_crc32_table_fill),
 *    and the combination of the CRCs of two pieces (gz_crc32_combine), so
 *    the threads of a GPU block checksum slices of a chunk in parallel.
 *  - the "indexed" encoding of integer codes, the one wire encoding of the
 *    collectives (host and device): a segment index in front of the PACKED blocks of
 *    gz_codes_encode(), so a receiver can decode without a serial pass:
 *
 *      off        size      field
 *        0        8 * S     byte offset (u64 LE) of segment s's first block,
 *                           relative to the payload; S = ceil(B / GZ_SEG_BLOCKS),
 *                           B = ceil(n / GZ_BLOCK) blocks; offset 0 is 0
 *      8 * S      ...       payload: the B PACKED blocks back to back,
 *                           byte-identical to gz_codes_encode(codes, n)
 *
 *    n = 0 gives an empty message. The overhead is 8 bytes per 32768 values.
 */
#ifndef GZ_BLOCK_WALK_H
#define GZ_BLOCK_WALK_H

#include "gz_block.h"

/* Blocks per segment of the indexed code encoding. */
#define GZ_SEG_BLOCKS 1024

GZ_HD static inline size_t gz_seg_count(size_t n) {
  size_t blocks = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  return (blocks + GZ_SEG_BLOCKS - 1) / GZ_SEG_BLOCKS;
}

/* Size of one PACKED code block at in (avail bytes), as
 * gz_block_decode_codes would use; 0 if malformed or truncated. */
GZ_HD static inline size_t gz_block_codes_size(const uint8_t *in, size_t avail, int n) {
  size_t payload;
  if (avail < 2 || in[0] > 64 || in[1] > 64)
    return 0;
  payload = gz_packed_bytes(n, in[0], in[1]);
  return payload > avail - 2 ? 0 : 2 + payload;
}

/* Size of one value block of n values of esz bytes (lossy: eb > 0), as
 * gz_block_decode_f32/f64 would use; 0 if malformed or truncated. */
GZ_HD static inline size_t gz_block_values_size(const uint8_t *in, size_t avail, int n,
                                                size_t esz, int lossy) {
  size_t need;
  uint32_t escaped = 0;
  int i, nesc = 0;
  if (avail < 1 || n < 1 || n > GZ_BLOCK)
    return 0;
  switch (in[0]) {
  case GZ_KIND_RAW:
    need = 1 + (size_t)n * esz;
    return need > avail ? 0 : need;
  case GZ_KIND_CONST:
    return 1 + esz > avail ? 0 : 1 + esz;
  case GZ_KIND_MIXED:
    if (avail < 3 + (size_t)(n + 7) / 8 || in[1] > 64 || in[2] > 64)
      return 0;
    for (i = 0; i < (n + 7) / 8; i++)
      escaped |= (uint32_t)in[3 + i] << (8 * i);
    if (n < 32 && (escaped >> n) != 0)
      return 0;
    for (i = 0; i < n; i++)
      nesc += (int)(escaped >> i & 1);
    need =
        3 + (size_t)(n + 7) / 8 + (size_t)nesc * esz + gz_packed_bytes(n, in[1], in[2]);
    return need > avail || !lossy ? 0 : need;
  default:
    if (in[0] > 64 || avail < 2 || in[1] > 64)
      return 0;
    need = 2 + gz_packed_bytes(n, in[0], in[1]);
    return need > avail ? 0 : need;
  }
}

/* ---- CRC-32 --------------------------------------------------------------- */

GZ_HD static inline uint32_t gz_crc32_entry(uint32_t i) {
  uint32_t c = i;
  for (int k = 0; k < 8; k++)
    c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  return c;
}

/* table[256]; on the device, threads can fill it cooperatively. */
GZ_HD static inline void gz_crc32_table_fill(uint32_t *table) {
  for (uint32_t i = 0; i < 256; i++)
    table[i] = gz_crc32_entry(i);
}

/* CRC-32 of size bytes, zlib's convention (crc32(0, p, size)). */
GZ_HD static inline uint32_t gz_crc32_tab(const uint32_t *table, const uint8_t *p,
                                          size_t size) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < size; i++)
    c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

/* CRC-32 combination, so that pieces of a buffer can be checksummed in
 * parallel: polynomials over GF(2) modulo zlib's P, in the reflected bit
 * order of the CRC (bit 31 is the coefficient of x^0). With zlib's pre- and
 * post-inversion, crc(A || B) = crc(A) * x^(8 |B|) mod P  xor  crc(B). */
#define GZ_CRC32_X2K 64 /* table of x^(2^k) mod P, k = 0..63 */

GZ_HD static inline uint32_t gz_crc32_mulmod(uint32_t a, uint32_t b) {
  uint32_t r = 0;
  for (int k = 0; k < 32; k++) { /* b = B * x^k at step k */
    r ^= (0u - (a >> (31 - k) & 1)) & b;
    b = (b >> 1) ^ ((0u - (b & 1)) & 0xEDB88320u);
  }
  return r;
}

/* x2k[k] = x^(2^k) mod P. */
GZ_HD static inline void gz_crc32_x2k_fill(uint32_t *x2k) {
  x2k[0] = 0x40000000u; /* x^1 */
  for (int k = 1; k < GZ_CRC32_X2K; k++)
    x2k[k] = gz_crc32_mulmod(x2k[k - 1], x2k[k - 1]);
}

/* CRC-32 of A || B from crc_a = crc(A), crc_b = crc(B) and len_b = |B|
 * (< 2^61 bytes). */
GZ_HD static inline uint32_t gz_crc32_combine(const uint32_t *x2k, uint32_t crc_a,
                                              uint32_t crc_b, uint64_t len_b) {
  uint32_t shift = 0x80000000u;                                /* x^0 */
  for (int k = 3; len_b && k < GZ_CRC32_X2K; k++, len_b >>= 1) /* x^(8 len_b) */
    if (len_b & 1)
      shift = gz_crc32_mulmod(shift, x2k[k]);
  return gz_crc32_mulmod(shift, crc_a) ^ crc_b;
}

/* ---- little-endian fields ------------------------------------------------- */

GZ_HD static inline void gz_put_u32le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
GZ_HD static inline void gz_put_u64le(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
GZ_HD static inline uint32_t gz_get_u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
GZ_HD static inline uint64_t gz_get_u64le(const uint8_t *p) {
  return (uint64_t)gz_get_u32le(p) | (uint64_t)gz_get_u32le(p + 4) << 32;
}

/* The first 40 bytes of a stream header, the one writer of the CPU codec
 * (stream.c, formats 1 and 2) and the GPU codec (codec_cuda.cu, format 1):
 * magic, version, dtype, eb mode, 0, the user's bound and the absolute
 * bound (f64 LE), n (u64), values per chunk and chunks (u32). Format 1's
 * header CRC follows at 40 (GZ_STREAM_HEADER bytes in all). */
GZ_HD static inline void gz_stream_header_put(uint8_t *o, int version, int dtype,
                                              int eb_mode, double error_bound,
                                              double abs_eb, uint64_t n,
                                              uint32_t chunk_vals, uint32_t nchunks) {
  uint64_t bits;
  for (int k = 0; k < 4; k++)
    o[k] = (uint8_t)GZ_STREAM_MAGIC[k];
  o[4] = (uint8_t)version;
  o[5] = (uint8_t)dtype;
  o[6] = (uint8_t)eb_mode;
  o[7] = 0;
  memcpy(&bits, &error_bound, 8);
  gz_put_u64le(o + 8, bits);
  memcpy(&bits, &abs_eb, 8);
  gz_put_u64le(o + 16, bits);
  gz_put_u64le(o + 24, n);
  gz_put_u32le(o + 32, chunk_vals);
  gz_put_u32le(o + 36, nchunks);
}

/* Walk segment s of an indexed code message: pay/paysize is the payload,
 * index the S offsets. Writes the payload offset of each of its blocks into
 * boff[b] (global block numbers) and, for the last segment, boff[B] =
 * paysize. Returns 1 when the segment is well formed. */
GZ_HD static inline int gz_seg_walk(const uint8_t *index, const uint8_t *pay,
                                    size_t paysize, size_t n, size_t s, uint64_t *boff) {
  size_t blocks = (n + GZ_BLOCK - 1) / GZ_BLOCK, S = gz_seg_count(n);
  size_t b0 = s * GZ_SEG_BLOCKS,
         b1 = b0 + GZ_SEG_BLOCKS < blocks ? b0 + GZ_SEG_BLOCKS : blocks;
  uint64_t start = gz_get_u64le(index + 8 * s);
  uint64_t end = s + 1 < S ? gz_get_u64le(index + 8 * (s + 1)) : (uint64_t)paysize;
  uint64_t pos = start;
  if ((s == 0 && start != 0) || start > end || end > paysize)
    return 0;
  for (size_t b = b0; b < b1; b++) {
    int len = (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK);
    size_t used = gz_block_codes_size(pay + pos, (size_t)(end - pos), len);
    if (!used)
      return 0;
    boff[b] = pos;
    pos += used;
  }
  if (pos != end)
    return 0;
  if (s + 1 == S)
    boff[blocks] = paysize;
  return 1;
}

#endif /* GZ_BLOCK_WALK_H */
