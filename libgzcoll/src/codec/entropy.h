/* entropy.h - the residual and escape sections of a format-2 chunk
 * (entropy.c). A section is: method (u8: 0 stored, 1 zstd), raw length
 * (u32), stored length (u32), then the stored bytes. */
#ifndef GZ_ENTROPY_H
#define GZ_ENTROPY_H

#include <stddef.h>
#include <stdint.h>

#define GZ_SECTION_HEADER 9

/* Residual codings of n zigzag residuals. */
enum {
  GZ_RES_PACKED = 0,
  GZ_RES_BYTES = 1,
  GZ_RES_PLANES = 2,
  GZ_RES_RANS = 3,  /* two interleaved states (decoded, no longer written) */
  GZ_RES_RANS4 = 4, /* four (decoded, no longer written) */
  GZ_RES_RANS32 = 5 /* 32, 16-bit renormalisation (rans32.c) */
};

/* PACKED: per block of 32, a width byte then the residuals in that many bits
 * (LSB first). Returns bytes written (at most gz_res_packed_max(n)). */
size_t gz_res_packed_size(const uint64_t *u, size_t n);
size_t gz_res_pack(const uint64_t *u, size_t n, uint8_t *out);
int gz_res_unpack(const uint8_t *in, size_t size, size_t n, uint64_t *u);

/* BYTES: one byte per residual below 255, else 255 and a LEB128 of the
 * excess; at most 11 bytes per residual. */
size_t gz_res_bytes(const uint64_t *u, size_t n, uint8_t *out);
int gz_res_unbytes(const uint8_t *in, size_t size, size_t n, uint64_t *u);

/* PLANES: k (1..8, first byte) planes of n bytes, least significant first:
 * wide residuals whose high bytes zstd models well. Returns 1 + k n. */
size_t gz_res_planes(const uint64_t *u, size_t n, size_t k, uint8_t *out);
int gz_res_unplanes(const uint8_t *in, size_t size, size_t n, uint64_t *u);

/* RANS, RANS4, RANS32 (rans.c): order-0 rANS of per-residual symbols
 * (small values, or bit length and two top bits) and raw low bits, on
 * states = 2 (RANS), 4 (RANS4) or GZ_RANS32_STATES (RANS32) interleaved
 * states. gz_res_rans writes at most
 * gz_res_rans_max(n) bytes, using n bytes of syms as scratch, and stores
 * gz_res_packed_size(u, n) in *packed (when not NULL), found in the same
 * pass over u. */
size_t gz_res_rans_max(size_t n);
size_t gz_res_rans(const uint64_t *u, size_t n, int states, uint8_t *syms, uint8_t *out,
                   size_t *packed);
int gz_res_unrans(const uint8_t *in, size_t size, size_t n, int states, uint64_t *u);

/* RANS32's coding (gz_res_rans, 32 states) left in three pieces in scratch
 * (gz_res_rans_max(n) bytes), to be put one after the other where the
 * coding goes: a copy each, where gz_res_rans moves the raw bits and the
 * words next to the table (ERSST: 1.8 MB moved, then copied again into
 * the chunk). Returns their total size. */
typedef struct gz_rans_parts {
  const uint8_t *head, *raw, *words; /* table and raw bits' length; raw bits; words */
  size_t head_len, raw_len, words_len;
} gz_rans_parts_t;
size_t gz_res_rans_parts(const uint64_t *u, size_t n, uint8_t *syms, uint8_t *scratch,
                         size_t *packed, gz_rans_parts_t *pt);

/* The state coding of RANS32 (rans32.c): the n symbols syms (frequencies
 * f, in units of 2^-14, summing to 2^14) written backwards ending at
 * end (room for 2 n + 4 GZ_RANS32_STATES + 16 bytes below it; returns the
 * bytes written), and read back from exactly size bytes at in (-1 on a
 * table that does not sum to 2^14 or a stream that does not decode to n
 * symbols). simd: gz_chunk2_simd's level (1 AVX2, 2 the encoder in
 * AVX-512), the same bytes. */
#define GZ_RANS32_STATES 32
size_t gz_rans32_encode(const uint8_t *syms, size_t n, const uint32_t f[256], int simd,
                        uint8_t *end);
int gz_rans32_decode(const uint8_t *in, size_t size, size_t n, const uint32_t f[256],
                     int simd, uint8_t *syms);

/* Write raw (len bytes) as a section at out, compressed with zstd when that
 * is smaller (try_zstd), else stored; out needs gz_section_max(len). *zc
 * holds the zstd context kept across calls (NULL at first: made here; free
 * with gz_zstd_free), since a fresh one per call cost an eighth of a
 * compress of ERSST in clearing its pages. Returns bytes written, 0 on
 * failure (no memory). */
size_t gz_section_max(size_t len);
size_t gz_section_put(const uint8_t *raw, size_t len, int try_zstd, uint8_t *out,
                      void **zc);
/* The header of a stored section whose len bytes are already in place at
 * out + GZ_SECTION_HEADER. Returns the section's size. */
size_t gz_section_stored(uint8_t *out, size_t len);
void gz_zstd_free(void *zc, void *zd);

/* Parse a section at in (avail bytes): *raw_len receives its raw length
 * (refused above max_raw), *used its size. */
int gz_section_peek(const uint8_t *in, size_t avail, size_t max_raw, size_t *raw_len,
                    size_t *used);
/* Unpack the section at in (already peeked) into raw (raw_len bytes); *zd
 * the decompression context kept across calls, as *zc above. */
int gz_section_get(const uint8_t *in, uint8_t *raw, size_t raw_len, void **zd);

/* Little-endian u32 at p (the sections' lengths, the rANS states). */
static inline void gz_put32le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t gz_get32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* LEB128 varints. */
size_t gz_varint_put(uint64_t v, uint8_t *out);
int gz_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);

#endif
