/*
 * codes_cuda.cu - the integer domain on the GPU, for the device-centric
 * collectives: quantize, dequantize, combine codes (add / max / min), the
 * largest |code|, and the indexed encoding of codes (gz_block_walk.h).
 *
 * Elementwise kernels run a thread per value; the block codec runs a warp
 * per block of GZ_BLOCK codes, lane i owning code i (gz_warp.cuh), so the
 * codes and the bytes are those of the CPU (libgzcoll/src/codec/codes.c and
 * libgzcoll/src/device/codes_indexed.c).
 *
 * Encoding, no host synchronisation, one pass: k_codes_encode (one warp per
 * block sizes it; a scan with decoupled look-back over tiles of blocks gives
 * its offset; the warp writes it into place, and the first block of a
 * segment the segment's offset) -> k_codes_total (*d_size).
 * Quantize fused with encode (the collectives' first message):
 * k_codes_encode<float/double> quantizes lane i's value as k_quantize does,
 * stores the code (the accumulator of the reduction) and encodes it in the
 * same pass, so the codes are not read back for the first message.
 * Decoding: k_seg_walk (one thread per segment of GZ_SEG_BLOCKS blocks
 * finds where its blocks start) -> k_codes_decode_reduce (one warp per
 * block decodes it, lane i combining code i into the accumulator).
 */
#include "gz_cuda_util.cuh"
#include "gz_warp.cuh"

__device__ static inline int quantize_one(float x, const gz_quant_t *qp, int64_t *q) {
  return gz_quantize_one_f32(x, qp, 0, q);
}
__device__ static inline int quantize_one(double x, const gz_quant_t *qp, int64_t *q) {
  return gz_quantize_one_f64(x, qp, 0, q);
}
__device__ static inline float dequant(int64_t q, const gz_quant_t *qp, float *) {
  return gz_dequant_f32(q, qp);
}
__device__ static inline double dequant(int64_t q, const gz_quant_t *qp, double *) {
  return gz_dequant_f64(q, qp);
}

/* The collectives' quantizer (gz_run_quantize in coll_common.c): the code
 * of gz_quantize_one, an escape only when x is not finite or the code is out
 * of range (a tie rejected by one rounding is accepted there too). Returns 1
 * for an escape. */
template <typename T>
__device__ static inline int coll_quantize(T x, const gz_quant_t *qp, int64_t *q) {
  quantize_one(x, qp, q);
  return !(fabs(rint(GZ_MUL((double)x, qp->inv_step))) <= qp->code_max);
}

template <typename T>
__global__ void k_quantize(const T *x, size_t n, gz_quant_t qp, int64_t *codes,
                           unsigned *flags) {
  GZ_STRIDE_LOOP
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    int64_t q;
    int escape = coll_quantize(x[i], &qp, &q);
    codes[i] = q;
    if (escape)
      atomicOr(flags, GZ_DEV_FLAG_ESCAPE);
  }
}

template <typename T>
__global__ void k_dequantize(const int64_t *codes, size_t n, gz_quant_t qp, T *out) {
  GZ_STRIDE_LOOP
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = dequant(codes[i], &qp, (T *)0);
}

extern "C" int gz_dev_quantize(int dtype, const void *d_in, size_t n, double eb,
                               double code_limit, int64_t *d_codes, unsigned *d_flags,
                               void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  gz_quant_t qp;
  if ((dtype != 1 && dtype != 2) || !(eb > 0) || !isfinite(eb) || !(code_limit > 0) ||
      !d_flags || (n && (!d_in || !d_codes)))
    return GZ_DEV_ERR_ARG;
  if (!n)
    return GZ_DEV_OK;
  qp = gz_quant_make(eb, code_limit);
  if (dtype == 1)
    GZ_LAUNCH(k_quantize<float>, gz_grid(n, GZ_THREADS), GZ_THREADS, 0, s,
              (const float *)d_in, n, qp, d_codes, d_flags);
  else
    GZ_LAUNCH(k_quantize<double>, gz_grid(n, GZ_THREADS), GZ_THREADS, 0, s,
              (const double *)d_in, n, qp, d_codes, d_flags);
  GZ_CUDA_LAUNCHED("k_quantize");
  return GZ_DEV_OK;
}

extern "C" int gz_dev_dequantize(int dtype, const int64_t *d_codes, size_t n, double eb,
                                 void *d_out, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  gz_quant_t qp;
  if ((dtype != 1 && dtype != 2) || !(eb > 0) || !isfinite(eb) ||
      (n && (!d_codes || !d_out)))
    return GZ_DEV_ERR_ARG;
  if (!n)
    return GZ_DEV_OK;
  qp = gz_quant_make(eb, 0);
  if (dtype == 1)
    GZ_LAUNCH(k_dequantize<float>, gz_grid(n, GZ_THREADS), GZ_THREADS, 0, s, d_codes, n,
              qp, (float *)d_out);
  else
    GZ_LAUNCH(k_dequantize<double>, gz_grid(n, GZ_THREADS), GZ_THREADS, 0, s, d_codes, n,
              qp, (double *)d_out);
  GZ_CUDA_LAUNCHED("k_dequantize");
  return GZ_DEV_OK;
}

/* ---- combining codes ------------------------------------------------------- */

__device__ static inline int combine(int op, int64_t *acc, int64_t v) {
  uint64_t a = (uint64_t)*acc, s;
  switch (op) {
  case GZ_DEV_OP_SUM:
    s = a + (uint64_t)v;
    *acc = (int64_t)s;
    return (int)(((a ^ s) & ((uint64_t)v ^ s)) >> 63);
  case GZ_DEV_OP_MAX:
    *acc = v > *acc ? v : *acc;
    return 0;
  case GZ_DEV_OP_MIN:
    *acc = v < *acc ? v : *acc;
    return 0;
  default:
    *acc = v;
    return 0;
  }
}

__global__ void k_codes_reduce(int op, int64_t *acc, const int64_t *in, size_t n,
                               unsigned *flags) {
  int overflow = 0;
  GZ_STRIDE_LOOP
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    overflow |= combine(op, &acc[i], in[i]);
  if (overflow)
    atomicOr(flags, GZ_DEV_FLAG_OVERFLOW);
}

extern "C" int gz_dev_codes_reduce(int op, int64_t *d_acc, const int64_t *d_in, size_t n,
                                   unsigned *d_flags, void *stream) {
  if (op < GZ_DEV_OP_SUM || op > GZ_DEV_OP_REPLACE || !d_flags ||
      (n && (!d_acc || !d_in)))
    return GZ_DEV_ERR_ARG;
  if (!n)
    return GZ_DEV_OK;
  GZ_LAUNCH(k_codes_reduce, gz_grid(n, GZ_THREADS), GZ_THREADS, 0, (cudaStream_t)stream,
            op, d_acc, d_in, n, d_flags);
  GZ_CUDA_LAUNCHED("k_codes_reduce");
  return GZ_DEV_OK;
}

__global__ void k_codes_absmax(const int64_t *codes, size_t n, unsigned long long *out) {
  __shared__ unsigned long long sm[GZ_THREADS];
  unsigned long long m = 0;
  GZ_STRIDE_LOOP
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint64_t a = codes[i] < 0 ? 0 - (uint64_t)codes[i] : (uint64_t)codes[i];
    a = a > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : a;
    m = a > m ? a : m;
  }
  sm[threadIdx.x] = m;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && sm[threadIdx.x + s] > sm[threadIdx.x])
      sm[threadIdx.x] = sm[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicMax(out, sm[0]);
}

extern "C" int gz_dev_codes_absmax(const int64_t *d_codes, size_t n, int64_t *d_out,
                                   void *d_tmp, size_t tmp_bytes, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  (void)d_tmp; /* reduced with atomics: no scratch needed */
  (void)tmp_bytes;
  if (!d_out || (n && !d_codes))
    return GZ_DEV_ERR_ARG;
  GZ_CUDA_TRY(cudaMemsetAsync(d_out, 0, sizeof *d_out, s));
  if (!n)
    return GZ_DEV_OK;
  GZ_LAUNCH(k_codes_absmax,
            gz_grid(n < 1024 * GZ_THREADS ? n : 1024 * GZ_THREADS, GZ_THREADS),
            GZ_THREADS, 0, s, d_codes, n, (unsigned long long *)d_out);
  GZ_CUDA_LAUNCHED("k_codes_absmax");
  return GZ_DEV_OK;
}

/* ---- indexed encoding ------------------------------------------------------ */

GZ_HD static inline size_t blocks_of(size_t n) { return (n + GZ_BLOCK - 1) / GZ_BLOCK; }

/* gz_codes_bound (codes.c) + the segment index. */
extern "C" size_t gz_dev_codes_indexed_bound(size_t n) {
  if (n > SIZE_MAX / 16)
    return 0;
  return 8 * gz_seg_count(n) + blocks_of(n) * 3 + 8 * n;
}

typedef struct codes_layout {
  size_t ends, state, total;
} codes_layout_t;

static codes_layout_t codes_layout(size_t n) {
  codes_layout_t L;
  size_t nb = blocks_of(n);
  L.total = 0;
  L.ends = gz_carve(&L.total, nb * sizeof(uint64_t));
  L.state = gz_carve(&L.total, GZ_TILE_WORDS((nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS) *
                                   sizeof(unsigned long long));
  return L;
}

extern "C" size_t gz_dev_codes_tmp_bytes(size_t n) {
  codes_layout_t L;
  size_t dec = (blocks_of(n) + 1) * sizeof(uint64_t), range = 3 * sizeof(double) * 1024;
  if (n > SIZE_MAX / 16)
    return 0;
  L = codes_layout(n);
  if (L.total == SIZE_MAX)
    return 0;
  L.total = L.total > dec ? L.total : dec;
  return L.total > range ? L.total : range;
}

/* Warps of a launch of blockDim.x (a multiple of 32) threads per block. */
__device__ static inline size_t warp_id(void) {
  return (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
}
__device__ static inline size_t warp_count(void) {
  return (size_t)gridDim.x * blockDim.x / 32;
}

/* Lane i's code of block b (len values): the code itself (T = int64_t), or
 * (T = float/double) x quantized as k_quantize does, stored in codes[] (an
 * escape sets the flag; its code is encoded all the same, the message is
 * then not sent). */
__device__ static inline int64_t lane_code(const int64_t *src, size_t i, int own,
                                           const gz_quant_t *, int64_t *, unsigned *) {
  return own ? src[i] : 0;
}
template <typename T>
__device__ static inline int64_t lane_code(const T *src, size_t i, int own,
                                           const gz_quant_t *qp, int64_t *codes,
                                           unsigned *flags) {
  int64_t q = 0;
  if (own) {
    if (coll_quantize(src[i], qp, &q))
      atomicOr(flags, GZ_DEV_FLAG_ESCAPE);
    codes[i] = q;
  }
  return q;
}

/* Sizing and placement in one pass (as k_encode of codec_cuda.cu): a thread
 * block takes tiles of GZ_TILE_BLOCKS blocks in order, each warp sizes its
 * block (lane i loads code i, or quantizes value i: lane_code), the
 * look-back scan gives the tile's offset, each warp writes its block into
 * place and ends[b]; the first block of a segment also writes the segment's
 * offset. */
template <typename T>
__global__ void k_codes_encode(const T *src, size_t n, gz_quant_t qp, int64_t *codes,
                               unsigned *flags, uint8_t *out, uint64_t *ends,
                               unsigned long long *state) {
  __shared__ unsigned area[GZ_TILE_BLOCKS][GZ_WARP_PACK_WORDS];
  __shared__ uint64_t wsize[GZ_TILE_BLOCKS], base;
  __shared__ size_t tile_now;
  size_t nb = blocks_of(n), S = gz_seg_count(n),
         ntiles = (nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS;
  unsigned lane = gz_lane(), warp = threadIdx.x / 32;
  for (;;) {
    size_t tile, b;
    int len, w = 0, w0 = 0;
    unsigned size = 0;
    uint64_t start;
    gz_ull u = 0;
    if (threadIdx.x == 0)
      tile_now = gz_tile_next(state);
    gz_warp_area_clear(area[warp]); /* the last pass's bytes are out: barrier below */
    __syncthreads();
    tile = tile_now;
    if (tile >= ntiles)
      break; /* the whole block */
    b = tile * GZ_TILE_BLOCKS + warp;
    len = b < nb ? (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK) : 0;
    if (len) /* the same for the whole warp */
      size = gz_warp_codes_form(
          lane_code(src, b * GZ_BLOCK + lane, (int)lane < len, &qp, codes, flags), len,
          &u, &w, &w0);
    if (lane == 0)
      wsize[warp] = size;
    start = gz_tile_place(state, tile, wsize, &base, warp);
    if (len) {
      gz_warp_codes_write(u, len, w, w0, out + 8 * S + start, area[warp]);
      if (lane == 0) {
        ends[b] = start + size;
        if (b % GZ_SEG_BLOCKS == 0)
          gz_put_u64le(out + 8 * (b / GZ_SEG_BLOCKS), start);
      }
    }
    __syncthreads(); /* tile_now, wsize and base are reused */
  }
}

__global__ void k_codes_total(const uint64_t *ends, size_t n, uint64_t *d_size) {
  size_t nb = blocks_of(n);
  *d_size = nb ? 8 * gz_seg_count(n) + ends[nb - 1] : 0;
}

/* The indexed encoding of n codes (dtype 0: src holds them) or of the codes
 * of n values (dtype 1/2: src holds float/double values, quantized with qp
 * into d_codes on the way, escapes flagged in *d_flags). */
static int codes_encode(int dtype, const void *src, size_t n, gz_quant_t qp,
                        int64_t *d_codes, unsigned *d_flags, void *d_out, size_t cap,
                        void *d_tmp, size_t tmp_bytes, uint64_t *d_size, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  size_t nb = blocks_of(n);
  uint8_t *tmp = (uint8_t *)d_tmp;
  codes_layout_t L;
  if (!d_size || (n && (!src || !d_out)) || n > SIZE_MAX / 16)
    return GZ_DEV_ERR_ARG;
  L = codes_layout(n);
  if (cap < gz_dev_codes_indexed_bound(n) || L.total == SIZE_MAX || tmp_bytes < L.total ||
      (nb && !d_tmp))
    return GZ_DEV_ERR_CAPACITY;
  if (nb) {
    uint64_t *ends = (uint64_t *)(tmp + L.ends);
    unsigned long long *state = (unsigned long long *)(tmp + L.state);
    size_t ntiles = (nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS;
    unsigned grid = gz_grid(ntiles, 1);
    GZ_CUDA_TRY(cudaMemsetAsync(state, 0, GZ_TILE_WORDS(ntiles) * sizeof *state, s));
    if (dtype == 0)
      GZ_LAUNCH(k_codes_encode<int64_t>, grid, GZ_THREADS, 0, s, (const int64_t *)src, n,
                qp, d_codes, d_flags, (uint8_t *)d_out, ends, state);
    else if (dtype == 1)
      GZ_LAUNCH(k_codes_encode<float>, grid, GZ_THREADS, 0, s, (const float *)src, n, qp,
                d_codes, d_flags, (uint8_t *)d_out, ends, state);
    else
      GZ_LAUNCH(k_codes_encode<double>, grid, GZ_THREADS, 0, s, (const double *)src, n,
                qp, d_codes, d_flags, (uint8_t *)d_out, ends, state);
    GZ_CUDA_LAUNCHED("k_codes_encode");
  }
  GZ_LAUNCH(k_codes_total, 1, 1, 0, s, (const uint64_t *)(tmp + L.ends), n, d_size);
  GZ_CUDA_LAUNCHED("k_codes_total");
  return GZ_DEV_OK;
}

extern "C" int gz_dev_codes_encode(const int64_t *d_codes, size_t n, void *d_out,
                                   size_t cap, void *d_tmp, size_t tmp_bytes,
                                   uint64_t *d_size, void *stream) {
  return codes_encode(0, d_codes, n, gz_quant_make(0, 0), NULL, NULL, d_out, cap, d_tmp,
                      tmp_bytes, d_size, stream);
}

extern "C" int gz_dev_quantize_encode(int dtype, const void *d_in, size_t n, double eb,
                                      double code_limit, int64_t *d_codes,
                                      unsigned *d_flags, void *d_out, size_t cap,
                                      void *d_tmp, size_t tmp_bytes, uint64_t *d_size,
                                      void *stream) {
  if ((dtype != 1 && dtype != 2) || !(eb > 0) || !isfinite(eb) || !(code_limit > 0) ||
      !d_flags || (n && !d_codes))
    return GZ_DEV_ERR_ARG;
  return codes_encode(dtype, d_in, n, gz_quant_make(eb, code_limit), d_codes, d_flags,
                      d_out, cap, d_tmp, tmp_bytes, d_size, stream);
}

/* ---- indexed decoding ------------------------------------------------------ */

__global__ void k_seg_walk(const uint8_t *in, size_t size, size_t n, uint64_t *boff,
                           unsigned *flags) {
  size_t S = gz_seg_count(n);
  GZ_STRIDE_LOOP
  for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s < S;
       s += (size_t)gridDim.x * blockDim.x)
    if (!gz_seg_walk(in, in + 8 * S, size - 8 * S, n, s, boff))
      atomicOr(flags, GZ_DEV_FLAG_CORRUPT);
}

/* One warp per block: lane i decodes code i and combines it into acc[i]
 * (coalesced). A warp stops at the first corrupt block it meets. */
__global__ void k_codes_decode_reduce(int op, const uint8_t *pay, const uint64_t *boff,
                                      size_t n, int64_t *acc, unsigned *flags) {
  int overflow = 0;
  unsigned lane = gz_lane();
  /* lane 0's reading for the whole warp: the lanes must agree */
  if (__shfl_sync(GZ_WARP_ALL, gz_flags_now(flags), 0) & GZ_DEV_FLAG_CORRUPT)
    return; /* the segment walk failed */
  GZ_STRIDE_LOOP
  for (size_t b = warp_id(); b < blocks_of(n); b += warp_count()) {
    int len = (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK);
    uint64_t avail = boff[b + 1] - boff[b];
    size_t used;
    int64_t q = gz_warp_codes_decode(pay + boff[b], (size_t)avail, len, &used);
    if (used != avail) {
      if (lane == 0)
        atomicOr(flags, GZ_DEV_FLAG_CORRUPT);
      return;
    }
    if ((int)lane < len)
      overflow |= combine(op, &acc[b * GZ_BLOCK + lane], q);
  }
  if (overflow)
    atomicOr(flags, GZ_DEV_FLAG_OVERFLOW);
}

__global__ void k_set_flag(unsigned *flags, unsigned bits) { atomicOr(flags, bits); }

extern "C" int gz_dev_codes_decode_reduce(int op, const void *d_in, size_t size,
                                          int64_t *d_acc, size_t n, void *d_tmp,
                                          size_t tmp_bytes, unsigned *d_flags,
                                          void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  size_t nb = blocks_of(n), S = gz_seg_count(n);
  uint64_t *boff = (uint64_t *)d_tmp;
  if (op < GZ_DEV_OP_SUM || op > GZ_DEV_OP_REPLACE || !d_flags || (n && !d_acc) ||
      (size && !d_in) || n > SIZE_MAX / 16)
    return GZ_DEV_ERR_ARG;
  if (nb && (tmp_bytes < (nb + 1) * sizeof(uint64_t) || !d_tmp))
    return GZ_DEV_ERR_CAPACITY;
  if (size < 8 * S || (!nb && size)) { /* the index alone does not fit */
    GZ_LAUNCH(k_set_flag, 1, 1, 0, s, d_flags, GZ_DEV_FLAG_CORRUPT);
    GZ_CUDA_LAUNCHED("k_set_flag");
    return GZ_DEV_OK;
  }
  if (!nb)
    return GZ_DEV_OK;
  GZ_LAUNCH(k_seg_walk, gz_grid(S, 64), 64, 0, s, (const uint8_t *)d_in, size, n, boff,
            d_flags);
  GZ_CUDA_LAUNCHED("k_seg_walk");
  GZ_LAUNCH(k_codes_decode_reduce, gz_grid(nb * 32, GZ_THREADS), GZ_THREADS, 0, s, op,
            (const uint8_t *)d_in + 8 * S, boff, n, d_acc, d_flags);
  GZ_CUDA_LAUNCHED("k_codes_decode_reduce");
  return GZ_DEV_OK;
}
