/* gz_warp.cuh - one block of GZ_BLOCK (= 32) values encoded or decoded by one
 * warp, lane i owning value i: the bytes of gz_block.h's
 * gz_block_encode_f32/f64 and gz_block_encode_codes, and the values of the
 * matching decoders, with no per-thread arrays (no local memory).
 *
 *  - loads: lane i reads x[i] (one coalesced 128/256-byte access per warp);
 *  - quantization: gz_quantize_one per lane; votes (__ballot_sync) give the
 *    escape bitmap, the CONST test and the RAW fallback;
 *  - deltas: a shuffle from lane i-1; widths: an OR across the warp; the
 *    escaped lanes take the code of the nearest quantized lane below (or 0),
 *    read with one shuffle from the position the bitmap names;
 *  - packing: lane i's field starts at bit w0 + (i-1) w; lanes OR their
 *    fields into a per-warp staging area of 32-bit words in shared memory
 *    (a field spans at most 3 words), then write the bytes out, lane j
 *    writing bytes j, j+32, ...; the caller clears the area ahead, before a
 *    barrier it has anyway (gz_warp_area_clear);
 *  - unpacking: lane i reads its field's bytes, and a wrapping inclusive
 *    scan (shuffles) of the unzigzagged deltas gives the codes, as the
 *    serial decoder's running sum.
 * Every branch that precedes an intrinsic depends only on warp-wide values,
 * so the lanes of a warp always meet at the same intrinsics. Internal to
 * kernels/ (device code; built by nvcc and by the emulation). */
#ifndef GZ_WARP_CUH
#define GZ_WARP_CUH

#include "gz_block_walk.h"

#include <cuda_runtime.h>

#if GZ_BLOCK != 32
#error "the warp codec needs GZ_BLOCK == 32 (one value per lane)"
#endif

#define GZ_WARP_ALL 0xffffffffu
/* 32-bit words of one warp's packing area: 64 + 31 * 64 bits, + 2 spill. */
#define GZ_WARP_PACK_WORDS 66

typedef unsigned long long gz_ull;

__device__ static inline unsigned gz_lane(void) { return threadIdx.x & 31; }

/* Inclusive prefix sum over the lanes, modulo 2^64. */
__device__ static inline gz_ull gz_warp_scan(gz_ull v) {
  unsigned lane = gz_lane();
  for (unsigned d = 1; d < 32; d <<= 1) {
    gz_ull o = __shfl_up_sync(GZ_WARP_ALL, v, d);
    if (lane >= d)
      v += o;
  }
  return v;
}

/* Zigzag first code (lane 0) or delta from lane i-1 (lanes >= 1); 0 past n. */
__device__ static inline gz_ull gz_warp_zigzag(int64_t q, int n) {
  unsigned lane = gz_lane();
  gz_ull prev = __shfl_up_sync(GZ_WARP_ALL, (gz_ull)q, 1);
  if ((int)lane >= n)
    return 0;
  return lane ? gz_zigzag((gz_ull)q - prev) : gz_zigzag((gz_ull)q);
}

/* Widths of the PACKED form: w = the largest width of the deltas (lanes >=
 * 1), w0 = lane 0's; one max-reduction of both at once (w in bits 0-7, w0
 * in bits 8-15, only lane 0 contributing to w0). */
__device__ static inline void gz_warp_widths(gz_ull u, int *w, int *w0) {
  unsigned bw = (unsigned)gz_bit_width(u), v = gz_lane() ? bw : bw << 8;
  for (int o = 16; o; o >>= 1) {
    unsigned x = __shfl_xor_sync(GZ_WARP_ALL, v, o);
    unsigned lo = (x & 0xff) > (v & 0xff) ? x & 0xff : v & 0xff;
    v = (x >> 8 > v >> 8 ? x >> 8 : v >> 8) << 8 | lo;
  }
  *w = (int)(v & 0xff);
  *w0 = (int)(v >> 8);
}

/* Clear this warp's packing area (GZ_WARP_PACK_WORDS words of shared
 * memory); a barrier must follow before gz_warp_pack uses it. */
__device__ static inline void gz_warp_area_clear(unsigned *area) {
  for (unsigned k = gz_lane(); k < GZ_WARP_PACK_WORDS; k += 32)
    area[k] = 0;
}

/* Write the packed fields (no header) of n lanes to out; returns the bytes.
 * area: this warp's cleared packing area; it is clean again only after
 * gz_warp_area_clear and a barrier. */
__device__ static inline size_t gz_warp_pack(gz_ull u, int n, int w, int w0, uint8_t *out,
                                             unsigned *area) {
  unsigned lane = gz_lane();
  size_t bytes = gz_packed_bytes(n, w, w0);
  if ((int)lane < n) {
    int width = lane ? w : w0;
    unsigned off = lane ? (unsigned)w0 + (lane - 1) * (unsigned)w : 0, k = off / 32,
             sh = off % 32;
    if (width) {
      gz_ull lo = u << sh;
      atomicOr(&area[k], (unsigned)lo);
      if (width + sh > 32)
        atomicOr(&area[k + 1], (unsigned)(lo >> 32));
      if (width + sh > 64)
        atomicOr(&area[k + 2], (unsigned)(u >> (64 - sh)));
    }
  }
  __syncwarp();
  for (size_t j = lane; j < bytes; j += 32)
    out[j] = (uint8_t)(area[j / 4] >> (8 * (j % 4)));
  return bytes;
}

/* This lane's code from exactly gz_packed_bytes(n, w, w0) bytes at in
 * (lanes past n: 0). */
__device__ static inline int64_t gz_warp_unpack(const uint8_t *in, int n, int w, int w0) {
  unsigned lane = gz_lane();
  gz_ull v = 0;
  if ((int)lane < n) {
    int width = lane ? w : w0;
    unsigned off = lane ? (unsigned)w0 + (lane - 1) * (unsigned)w : 0, sh = off % 8;
    if (width) {
      const uint8_t *p = in + off / 8;
      unsigned last = (off + (unsigned)width - 1) / 8 - off / 8; /* 0..8 */
      gz_ull lo = 0;
      for (unsigned j = 0; j <= last && j < 8; j++)
        lo |= (gz_ull)p[j] << (8 * j);
      v = lo >> sh;
      if (last == 8)
        v |= (gz_ull)p[8] << (64 - sh);
      if (width < 64)
        v &= (1ull << width) - 1;
    }
    v = gz_unzigzag(v);
  }
  return (int64_t)gz_warp_scan(v);
}

/* Little-endian bytes of one value, byte by byte (any alignment). */
template <typename U> __device__ static inline void gz_store_le(uint8_t *p, U v) {
  for (unsigned i = 0; i < sizeof(U); i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
template <typename U> __device__ static inline U gz_load_le(const uint8_t *p) {
  U v = 0;
  for (unsigned i = 0; i < sizeof(U); i++)
    v |= (U)p[i] << (8 * i);
  return v;
}

/* ---- value blocks (the stream codec) ------------------------------------ */

template <typename T> struct gz_vtraits;
template <> struct gz_vtraits<float> {
  typedef uint32_t U;
  __device__ static int quantize(float x, const gz_quant_t *qp, int64_t *q) {
    return gz_quantize_one_f32(x, qp, 1, q);
  }
  __device__ static int64_t ordered(float x) { return gz_ordered_f32(x); }
  __device__ static float unordered(int64_t q) { return gz_unordered_f32(q); }
  __device__ static float dequant(int64_t q, const gz_quant_t *qp) {
    return gz_dequant_f32(q, qp);
  }
};
template <> struct gz_vtraits<double> {
  typedef uint64_t U;
  __device__ static int quantize(double x, const gz_quant_t *qp, int64_t *q) {
    return gz_quantize_one_f64(x, qp, 1, q);
  }
  __device__ static int64_t ordered(double x) { return gz_ordered_f64(x); }
  __device__ static double unordered(int64_t q) { return gz_unordered_f64(q); }
  __device__ static double dequant(int64_t q, const gz_quant_t *qp) {
    return gz_dequant_f64(q, qp);
  }
};

/* Form of one block of n values (lane i holds x[i]); decided first, so the
 * size is known before any byte is written (payload placement by a scan). */
typedef struct gz_warp_form {
  gz_ull u;         /* this lane's zigzag code (PACKED / MIXED) */
  unsigned escaped; /* MIXED: lanes stored verbatim */
  int kind, w, w0;  /* kind: 0 PACKED, else GZ_KIND_* */
  unsigned size;    /* encoded bytes */
} gz_warp_form_t;

template <typename T>
__device__ static inline gz_warp_form_t gz_warp_form(T x, int n, const gz_quant_t *qp) {
  typedef typename gz_vtraits<T>::U U;
  gz_warp_form_t f;
  unsigned lane = gz_lane(), raw = 1 + (unsigned)n * sizeof(T);
  int64_t q = 0;
  int ok = 1;
  if (qp->eb > 0) {
    if ((int)lane < n)
      ok = gz_vtraits<T>::quantize(x, qp, &q);
  } else if ((int)lane < n) {
    q = gz_vtraits<T>::ordered(x);
  }
  f.escaped = __ballot_sync(GZ_WARP_ALL, !ok);
  if (f.escaped == 0) {
    f.u = gz_warp_zigzag(q, n);
    gz_warp_widths(f.u, &f.w, &f.w0);
    f.kind = 0;
    f.size = 2 + (unsigned)gz_packed_bytes(n, f.w, f.w0);
    if (f.size <= raw)
      return f;
  } else {
    U bits, first;
    memcpy(&bits, &x, sizeof bits);
    first = (U)__shfl_sync(GZ_WARP_ALL, (gz_ull)bits, 0);
    if (!__any_sync(GZ_WARP_ALL, (int)lane < n && bits != first)) {
      f.kind = GZ_KIND_CONST;
      f.size = 1 + sizeof(T);
      return f;
    }
    { /* an escaped lane repeats the code of the nearest quantized lane below */
      unsigned below = ~f.escaped & ((1u << lane) - 1u);
      int esc = f.escaped >> lane & 1;
      int src = !esc ? (int)lane : below ? 31 - __clz((int)below) : -1;
      gz_ull got = __shfl_sync(GZ_WARP_ALL, (gz_ull)q, src < 0 ? (int)lane : src);
      q = src < 0 ? 0 : (int64_t)got;
    }
    f.u = gz_warp_zigzag(q, n);
    gz_warp_widths(f.u, &f.w, &f.w0);
    f.kind = GZ_KIND_MIXED;
    f.size = 3 + (unsigned)(n + 7) / 8 + (unsigned)__popc(f.escaped) * sizeof(T) +
             (unsigned)gz_packed_bytes(n, f.w, f.w0);
    if (f.size < raw)
      return f;
  }
  f.kind = GZ_KIND_RAW;
  f.size = raw;
  return f;
}

/* Write the block in form f to out (f.size bytes). */
template <typename T>
__device__ static inline void gz_warp_write(T x, int n, const gz_warp_form_t *f,
                                            uint8_t *out, unsigned *area) {
  typedef typename gz_vtraits<T>::U U;
  unsigned lane = gz_lane();
  U bits;
  memcpy(&bits, &x, sizeof bits);
  switch (f->kind) {
  case 0:
    if (lane == 0) {
      out[0] = (uint8_t)f->w;
      out[1] = (uint8_t)f->w0;
    }
    gz_warp_pack(f->u, n, f->w, f->w0, out + 2, area);
    break;
  case GZ_KIND_CONST:
    if (lane == 0) {
      out[0] = GZ_KIND_CONST;
      gz_store_le<U>(out + 1, bits);
    }
    break;
  case GZ_KIND_MIXED: {
    unsigned map = (unsigned)(n + 7) / 8;
    uint8_t *vals = out + 3 + map;
    if (lane == 0) {
      out[0] = GZ_KIND_MIXED;
      out[1] = (uint8_t)f->w;
      out[2] = (uint8_t)f->w0;
    }
    if (lane < map)
      out[3 + lane] = (uint8_t)(f->escaped >> (8 * lane));
    if (f->escaped >> lane & 1)
      gz_store_le<U>(vals + __popc(f->escaped & ((1u << lane) - 1u)) * sizeof(T), bits);
    gz_warp_pack(f->u, n, f->w, f->w0, vals + __popc(f->escaped) * sizeof(T), area);
    break;
  }
  default:
    if (lane == 0)
      out[0] = GZ_KIND_RAW;
    if ((int)lane < n)
      gz_store_le<U>(out + 1 + lane * sizeof(T), bits);
  }
}

/* Decode one block of n values from at most avail bytes into out[0..n);
 * returns the bytes used, or 0 where gz_block_decode_f32/f64 fails. */
template <typename T>
__device__ static inline size_t gz_warp_decode(const uint8_t *in, size_t avail, int n,
                                               const gz_quant_t *qp, T *out) {
  typedef typename gz_vtraits<T>::U U;
  unsigned lane = gz_lane(), escaped = 0, map;
  size_t need;
  int w, w0;
  int64_t q;
  if (avail < 1 || n < 1 || n > GZ_BLOCK)
    return 0;
  switch (in[0]) {
  case GZ_KIND_RAW:
    need = 1 + (size_t)n * sizeof(T);
    if (need > avail)
      return 0;
    if ((int)lane < n) {
      U bits = gz_load_le<U>(in + 1 + lane * sizeof(T));
      memcpy(&out[lane], &bits, sizeof bits);
    }
    return need;
  case GZ_KIND_CONST:
    if (1 + sizeof(T) > avail)
      return 0;
    if ((int)lane < n) {
      U bits = gz_load_le<U>(in + 1);
      memcpy(&out[lane], &bits, sizeof bits);
    }
    return 1 + sizeof(T);
  case GZ_KIND_MIXED:
    map = (unsigned)(n + 7) / 8;
    if (avail < 3 + map || in[1] > 64 || in[2] > 64)
      return 0;
    w = in[1];
    w0 = in[2];
    for (unsigned i = 0; i < map; i++)
      escaped |= (unsigned)in[3 + i] << (8 * i);
    if (n < 32 && (escaped >> n) != 0)
      return 0;
    need = 3 + map + (size_t)__popc(escaped) * sizeof(T) + gz_packed_bytes(n, w, w0);
    if (need > avail || qp->eb <= 0)
      return 0;
    q = gz_warp_unpack(in + 3 + map + (size_t)__popc(escaped) * sizeof(T), n, w, w0);
    if ((int)lane < n) {
      if (escaped >> lane & 1) {
        U bits = gz_load_le<U>(in + 3 + map +
                               __popc(escaped & ((1u << lane) - 1u)) * sizeof(T));
        memcpy(&out[lane], &bits, sizeof bits);
      } else {
        out[lane] = gz_vtraits<T>::dequant(q, qp);
      }
    }
    return need;
  default:
    if (in[0] > 64 || avail < 2 || in[1] > 64)
      return 0;
    w = in[0];
    w0 = in[1];
    need = 2 + gz_packed_bytes(n, w, w0);
    if (need > avail)
      return 0;
    q = gz_warp_unpack(in + 2, n, w, w0);
    if ((int)lane < n)
      out[lane] =
          qp->eb > 0 ? gz_vtraits<T>::dequant(q, qp) : gz_vtraits<T>::unordered(q);
    return need;
  }
}

/* ---- code blocks (the collectives; PACKED only) -------------------------- */

/* Size of the PACKED block of this warp's n codes; u, w, w0 for writing. */
__device__ static inline unsigned gz_warp_codes_form(int64_t q, int n, gz_ull *u, int *w,
                                                     int *w0) {
  *u = gz_warp_zigzag(q, n);
  gz_warp_widths(*u, w, w0);
  return 2 + (unsigned)gz_packed_bytes(n, *w, *w0);
}

__device__ static inline void gz_warp_codes_write(gz_ull u, int n, int w, int w0,
                                                  uint8_t *out, unsigned *area) {
  if (gz_lane() == 0) {
    out[0] = (uint8_t)w;
    out[1] = (uint8_t)w0;
  }
  gz_warp_pack(u, n, w, w0, out + 2, area);
}

/* This lane's code of a PACKED block (at most avail bytes); *used = the
 * bytes used, 0 where gz_block_decode_codes fails. */
__device__ static inline int64_t gz_warp_codes_decode(const uint8_t *in, size_t avail,
                                                      int n, size_t *used) {
  size_t payload;
  *used = 0;
  if (avail < 2 || in[0] > 64 || in[1] > 64)
    return 0;
  payload = gz_packed_bytes(n, in[0], in[1]);
  if (payload > avail - 2)
    return 0;
  *used = 2 + payload;
  return gz_warp_unpack(in + 2, n, in[0], in[1]);
}

#endif
