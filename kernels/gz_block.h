/*
 * gz_block.h - per-block encode/decode of the gzstack codec, shared by the C
 * library and the CUDA kernels (header code; GZ_HD marks functions for both
 * host and device). One block holds at most GZ_BLOCK values and is encoded on
 * its own, so the GPU's warp per block (gz_warp.cuh, which uses the
 * per-value routines here) produces the same bytes as the CPU.
 *
 * Quantization (lossy, eb > 0): q = rint(x / 2eb), x' = (T)(2eb * q). Each
 * element is checked: it is "quantizable" when it is finite, |q| <= code_max
 * and |x - x'| <= eb in the element's precision; -0.0 and subnormal values
 * are not quantizable either, so they come back bit-exact.
 * Lossless (eb == 0): q is the order-preserving integer image of the bits.
 *
 * Block layout (byte 0 selects the kind; n = values in the block):
 *   0..64  PACKED  byte0 = w (delta width), byte1 = w0 (first code width),
 *                  then the zigzag first code in w0 bits and n-1 zigzag
 *                  deltas in w bits each, LSB first, padded to a byte.
 *   0x80   RAW     n values verbatim (little-endian).
 *   0x81   CONST   one value verbatim; all n values have these exact bits.
 *   0x82   MIXED   byte1 = w, byte2 = w0, a bitmap of ceil(n/8) bytes marking
 *                  the values stored verbatim, those values in order, then
 *                  the codes packed as in PACKED (a verbatim position repeats
 *                  the previous code, 0 at the start).
 * Integer code blocks (collectives) use PACKED only.
 *
 * Hosts are assumed little-endian (x86-64, aarch64, NVIDIA GPUs).
 */
#ifndef GZ_BLOCK_H
#define GZ_BLOCK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define GZ_HD __host__ __device__
#else
#define GZ_HD
#endif

/* Products and sums with one rounding each, never fused into an FMA, so the
 * host (gcc's ISO C mode does not contract) and the device (nvcc contracts
 * by default) compute the same codes and the same escape decisions. */
#if defined(__CUDA_ARCH__)
#define GZ_MUL(a, b) __dmul_rn((a), (b))
#define GZ_ADD(a, b) __dadd_rn((a), (b))
#else
#define GZ_MUL(a, b) ((a) * (b))
#define GZ_ADD(a, b) ((a) + (b))
#endif

/* Largest |code| quantized: 2^50 keeps the codes, their deltas and sums of
 * up to 2^12 ranks exact in double and in int64. The one per-code limit of
 * the project (the CPU and GPU codecs, the collectives' plans). */
#define GZ_CODE_LIMIT 1125899906842624.0

/* GZ_BLOCK (values per block) and GZ_CHUNK_DEFAULT (values per chunk of a
 * stream) are gzcoll.h's: the build passes them to every target that links
 * gz_kernels (kernels/CMakeLists.txt), so the GPU's blocks are the CPU's. */
#if !defined(GZ_BLOCK) || !defined(GZ_CHUNK_DEFAULT)
#error "GZ_BLOCK / GZ_CHUNK_DEFAULT come from gzcoll.h: link gz_kernels"
#endif

/* The block stream formats (versions 1 and 3), written and read by the CPU
 * codec (libgzcoll/src/codec/stream.c) and the GPU codec (codec_cuda.cu);
 * both write version 3, and read both. */
#define GZ_STREAM_MAGIC "GZCS"
#define GZ_STREAM_VERSION 3 /* what the CPU and GPU writers of format 1/3 write */
#define GZ_STREAM_HEADER 44 /* bytes of a version-1/3 header */
#define GZ_STREAM_CHUNK_MAX (1u << 24) /* values per chunk, at most */

/* Version 3: a chunk of B blocks is cut into segments of GZ_STREAM_SEG_BLOCKS
 * blocks (the last may be shorter) and starts with a table of the byte
 * offsets (u32 LE) of segments 1..S-1, relative to the first byte after the
 * table; segment 0 starts there. A decoder then finds every block start with
 * one walk per segment, all segments in parallel. */
#define GZ_STREAM_SEG_BLOCKS 256

/* Segments of a version-3 chunk of `values` values. */
GZ_HD static inline size_t gz_stream_segs(size_t values) {
  size_t blocks = (values + GZ_BLOCK - 1) / GZ_BLOCK;
  return (blocks + GZ_STREAM_SEG_BLOCKS - 1) / GZ_STREAM_SEG_BLOCKS;
}

/* Bytes of a version-3 chunk's segment table. */
GZ_HD static inline size_t gz_stream_table_bytes(size_t values) {
  size_t segs = gz_stream_segs(values);
  return segs ? 4 * (segs - 1) : 0;
}

#if GZ_BLOCK > 32 || GZ_BLOCK < 8
#error "GZ_BLOCK must be 8..32 (escape bitmaps are 32-bit)"
#endif

#define GZ_KIND_RAW 0x80
#define GZ_KIND_CONST 0x81
#define GZ_KIND_MIXED 0x82

/* Quantizer parameters, derived once per stream or message. */
typedef struct gz_quant {
  double eb;       /* absolute bound, 0 = lossless */
  double step;     /* 2 * eb */
  double inv_step; /* 1 / step */
  double code_max; /* largest |q| accepted (at most GZ_CODE_LIMIT) */
} gz_quant_t;

GZ_HD static inline gz_quant_t gz_quant_make(double eb, double code_max) {
  gz_quant_t qp;
  qp.eb = eb;
  qp.step = 2.0 * eb;
  qp.inv_step = eb > 0 ? 1.0 / qp.step : 0.0;
  qp.code_max = code_max < GZ_CODE_LIMIT ? code_max : GZ_CODE_LIMIT;
  return qp;
}

/* Round to nearest, ties to even, without a branch or a libm call (baseline
 * x86-64 has no rounding instruction): adding 1.5 * 2^52 pushes the fraction
 * bits out of the mantissa in the current (nearest-even) rounding mode, as
 * rint() does; exact for |y| < 2^51. For larger |y|, NaN and Inf the result
 * stays above GZ_CODE_LIMIT in magnitude (or NaN), so quantizers reject it.
 * The code is then the low mantissa bits of the shifted value (the
 * difference taken in uint64: a refused value's bits may be any). */
#define GZ_RINT_SHIFT 6755399441055744.0 /* 1.5 * 2^52 */

GZ_HD static inline int64_t gz_rint_code(double shifted) {
  uint64_t bits, base;
  double s = GZ_RINT_SHIFT;
  memcpy(&bits, &shifted, sizeof bits);
  memcpy(&base, &s, sizeof base);
  return (int64_t)(bits - base); /* wraps for refused values (no overflow) */
}

/* ---- integer helpers --------------------------------------------------- */

GZ_HD static inline uint64_t gz_zigzag(uint64_t d) {
  return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}
GZ_HD static inline uint64_t gz_unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

GZ_HD static inline int gz_bit_width(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll((long long)v);
#elif defined(__GNUC__)
  return v ? 64 - __builtin_clzll(v) : 0;
#else
  int w = 0;
  while (v) {
    w++;
    v >>= 1;
  }
  return w;
#endif
}

/* Bytes of a PACKED payload of n values (after the 2 header bytes). */
GZ_HD static inline size_t gz_packed_bytes(int n, int w, int w0) {
  return ((size_t)w0 + (size_t)(n - 1) * (size_t)w + 7) / 8;
}

/* ---- bit writer / reader (LSB first) ------------------------------------ */

typedef struct gz_bitw {
  uint8_t *p;
  uint64_t acc;
  int nbits;
} gz_bitw_t;

GZ_HD static inline void gz_bitw_put32(gz_bitw_t *bw, uint64_t v, int w) {
  bw->acc |= v << bw->nbits; /* w <= 32 and nbits < 32: no overflow */
  bw->nbits += w;
  if (bw->nbits >= 32) {
    uint32_t word = (uint32_t)bw->acc;
    bw->p[0] = (uint8_t)word;
    bw->p[1] = (uint8_t)(word >> 8);
    bw->p[2] = (uint8_t)(word >> 16);
    bw->p[3] = (uint8_t)(word >> 24);
    bw->p += 4;
    bw->acc >>= 32;
    bw->nbits -= 32;
  }
}

GZ_HD static inline void gz_bitw_put(gz_bitw_t *bw, uint64_t v, int w) {
  if (w > 32) {
    gz_bitw_put32(bw, v & 0xffffffffu, 32);
    gz_bitw_put32(bw, v >> 32, w - 32);
  } else if (w > 0) {
    gz_bitw_put32(bw, v, w);
  }
}

GZ_HD static inline void gz_bitw_flush(gz_bitw_t *bw) {
  while (bw->nbits > 0) {
    *bw->p++ = (uint8_t)bw->acc;
    bw->acc >>= 8;
    bw->nbits -= 8;
  }
}

typedef struct gz_bitr {
  const uint8_t *p, *end;
  uint64_t acc;
  int nbits;
} gz_bitr_t;

GZ_HD static inline void gz_bitr_refill(gz_bitr_t *br) {
  if (br->end - br->p >= 4) {
    uint64_t word = (uint64_t)br->p[0] | ((uint64_t)br->p[1] << 8) |
                    ((uint64_t)br->p[2] << 16) | ((uint64_t)br->p[3] << 24);
    br->acc |= word << br->nbits;
    br->nbits += 32;
    br->p += 4;
  } else {
    while (br->p < br->end && br->nbits <= 56) {
      br->acc |= (uint64_t)*br->p++ << br->nbits;
      br->nbits += 8;
    }
  }
}

/* Read w <= 32 bits; the caller has checked that the payload is long enough. */
GZ_HD static inline uint64_t gz_bitr_get32(gz_bitr_t *br, int w) {
  uint64_t v;
  if (br->nbits < w)
    gz_bitr_refill(br);
  v = br->acc & ((w == 32) ? 0xffffffffull : ((1ull << w) - 1));
  br->acc >>= w;
  br->nbits -= w;
  return v;
}

GZ_HD static inline uint64_t gz_bitr_get(gz_bitr_t *br, int w) {
  if (w > 32) {
    uint64_t lo = gz_bitr_get32(br, 32);
    return lo | (gz_bitr_get32(br, w - 32) << 32);
  }
  return w > 0 ? gz_bitr_get32(br, w) : 0;
}

/* ---- packing of one block of integer codes ------------------------------ */

/* Zigzag first code and deltas of q[0..n) into u; returns the OR of the
 * deltas (u[1..n)), whose bit width is the block's delta width. */
GZ_HD static inline uint64_t gz_codes_zigzag(const int64_t *q, int n, uint64_t *u) {
  uint64_t all = 0;
  u[0] = gz_zigzag((uint64_t)q[0]);
  for (int i = 1; i < n; i++) {
    u[i] = gz_zigzag((uint64_t)q[i] - (uint64_t)q[i - 1]);
    all |= u[i];
  }
  return all;
}

/* Widths of the PACKED form of q[0..n). */
GZ_HD static inline void gz_codes_widths(const int64_t *q, int n, int *w, int *w0) {
  uint64_t u[GZ_BLOCK];
  *w = gz_bit_width(gz_codes_zigzag(q, n, u));
  *w0 = gz_bit_width(u[0]);
}

/* Write the zigzag values u (first in w0 bits, the rest in w bits; no
 * header). Returns bytes written. */
GZ_HD static inline size_t gz_zigzag_pack(const uint64_t *u, int n, int w, int w0,
                                          uint8_t *out) {
  gz_bitw_t bw;
  int i;
  bw.p = out;
  bw.acc = 0;
  bw.nbits = 0;
  gz_bitw_put(&bw, u[0], w0);
  if (w > 32) {
    for (i = 1; i < n; i++)
      gz_bitw_put(&bw, u[i], w);
  } else if (w > 0) {
    for (i = 1; i < n; i++)
      gz_bitw_put32(&bw, u[i], w);
  }
  gz_bitw_flush(&bw);
  return (size_t)(bw.p - out);
}

/* Write the packed codes (no header). Returns bytes written. */
GZ_HD static inline size_t gz_codes_pack(const int64_t *q, int n, int w, int w0,
                                         uint8_t *out) {
  uint64_t u[GZ_BLOCK];
  gz_codes_zigzag(q, n, u);
  return gz_zigzag_pack(u, n, w, w0, out);
}

/* Unpack n codes from exactly gz_packed_bytes(n, w, w0) bytes at in. */
GZ_HD static inline void gz_codes_unpack(const uint8_t *in, int n, int w, int w0,
                                         int64_t *q) {
  gz_bitr_t br;
  uint64_t prev;
  int i;
  br.p = in;
  br.end = in + gz_packed_bytes(n, w, w0);
  br.acc = 0;
  br.nbits = 0;
  prev = gz_unzigzag(gz_bitr_get(&br, w0));
  q[0] = (int64_t)prev;
  if (w == 0) {
    for (i = 1; i < n; i++)
      q[i] = (int64_t)prev;
    return;
  }
  for (i = 1; i < n; i++) {
    prev += gz_unzigzag(gz_bitr_get(&br, w));
    q[i] = (int64_t)prev;
  }
}

/* One PACKED block of integer codes with its 2-byte header. */
GZ_HD static inline size_t gz_block_encode_codes(const int64_t *q, int n, uint8_t *out) {
  uint64_t u[GZ_BLOCK];
  int w = gz_bit_width(gz_codes_zigzag(q, n, u)), w0 = gz_bit_width(u[0]);
  out[0] = (uint8_t)w;
  out[1] = (uint8_t)w0;
  return 2 + gz_zigzag_pack(u, n, w, w0, out + 2);
}

/* Decode one PACKED code block from at most avail bytes. Returns the bytes
 * used, or 0 if the block is malformed or longer than avail. */
GZ_HD static inline size_t gz_block_decode_codes(const uint8_t *in, size_t avail, int n,
                                                 int64_t *q) {
  size_t payload;
  int w, w0;
  if (avail < 2 || in[0] > 64 || in[1] > 64)
    return 0;
  w = in[0];
  w0 = in[1];
  payload = gz_packed_bytes(n, w, w0);
  if (payload > avail - 2)
    return 0;
  gz_codes_unpack(in + 2, n, w, w0, q);
  return 2 + payload;
}

/* Worst-case encoded size of one block of n codes / n values of size s. */
#define GZ_CODES_BLOCK_MAX(n) (2 + 8 * (size_t)(n) + 1)
#define GZ_VALUES_BLOCK_MAX(n, s) (1 + (size_t)(n) * (s))

/* ---- float32 and float64 instantiations ---------------------------------- */

#define GZ_T float
#define GZ_U uint32_t
#define GZ_I int32_t
#define GZ_SFX f32
#define GZ_T_MIN_NORMAL 1.17549435082228750797e-38
#include "gz_block_impl.h"

#define GZ_T double
#define GZ_U uint64_t
#define GZ_I int64_t
#define GZ_SFX f64
#define GZ_T_MIN_NORMAL 2.2250738585072013830902e-308
#include "gz_block_impl.h"

#endif /* GZ_BLOCK_H */
