/*
 * codec_cuda.cu - the stream codec on the GPU, producing and reading the
 * exact bytes of libgzcoll/src/codec/stream.c (format version 3: format 1's
 * blocks, each chunk led by a table of its segments' offsets; version 1 is
 * read too).
 *
 * Compression, all on the caller's stream, no host synchronisation:
 *   1. (REL only) k_range: finite min / max per thread block;
 *   2. k_stream_setup (1 thread): the absolute bound and the quantizer,
 *      computed exactly as stream.c does, kept in device memory;
 *   3. k_encode (single pass): one warp per block of GZ_BLOCK values, lane i
 *      owning value i (gz_warp.cuh), decides the block's form and size; the
 *      thread block's tile of blocks gets its offset from a scan with
 *      decoupled look-back (gz_tile_prefix); each warp writes its block
 *      straight into place and ends[b] (chunks hold whole blocks and lie back
 *      to back, so the data section is the blocks in order, with each
 *      chunk's segment table in front of its blocks: the tables' sizes
 *      depend on n and chunk_len only, seg_layout_t);
 *   4. k_chunk_index: one thread block per chunk writes the chunk's segment
 *      table (from ends), then its size and CRC-32 into the index: each
 *      thread checksums a slice, a tree combines the slices' CRCs
 *      (gz_crc32_combine, block_crc32 below);
 *   5. k_stream_header (1 block): header and header CRC (thread 0), index
 *      CRC (the block), the total size (*d_size).
 * Decompression, also without host synchronisation:
 *   1. k_dec_header (1 block): validates the header and the index exactly as
 *      gz_stream_info does (the block checksums the index) and prefix-sums
 *      the chunk offsets;
 *   2. k_dec_chunks: one thread block per chunk verifies the chunk CRC in
 *      parallel;
 *   3. k_dec_segs: one thread per segment of every chunk walks its blocks
 *      (gz_block_values_size) to find where each starts: at most
 *      GZ_STREAM_SEG_BLOCKS blocks per thread, all segments at once (a
 *      version-1 stream has no tables: one walk per chunk);
 *   4. k_dec_blocks: one warp per block decodes it, lane i writing value i
 *      (gz_warp_decode: the values of gz_block_decode_f32/f64).
 *   Failures set bits of the caller's flag word; later kernels then skip.
 *
 * Faster variants must keep the bytes identical; the GPU tests (tests/gpu/)
 * compare them with the CPU's.
 */
#include "gz_cuda_util.cuh"
#include "gz_warp.cuh"

#define GZ_RANGE_BLOCKS 1024
/* Thread blocks of the chunk checks of a decompression (a block per chunk),
 * threads of its segment walks (a thread per segment). */
#define GZ_DEC_CHUNK_GRID 512
#define GZ_DEC_SEG_THREADS 65536

typedef struct gz_dec_info {
  gz_quant_t qp;
  uint64_t data_off; /* where chunk 0 starts in the stream */
  uint64_t nchunks;
  uint32_t chunk_len;
  int tables; /* version 3: chunks start with segment tables */
} gz_dec_info_t;

/* Where the segment tables of a version-3 stream go: every chunk but the
 * last has chunk_blocks blocks and t_full table bytes. */
typedef struct seg_layout {
  uint64_t chunk_blocks, nchunks, t_full, t_last;
} seg_layout_t;

static seg_layout_t seg_layout(size_t n, uint32_t chunk_len) {
  seg_layout_t L;
  L.chunk_blocks = chunk_len / GZ_BLOCK;
  L.nchunks = n / chunk_len + (n % chunk_len != 0);
  L.t_full = gz_stream_table_bytes(chunk_len);
  L.t_last = L.nchunks ? gz_stream_table_bytes(n - (L.nchunks - 1) * chunk_len) : 0;
  return L;
}

/* Table bytes of chunks 0..c-1, and of chunks 0..c. */
__device__ static inline uint64_t tables_before(const seg_layout_t *L, uint64_t c) {
  return c * L->t_full;
}
__device__ static inline uint64_t tables_through(const seg_layout_t *L, uint64_t c) {
  return c * L->t_full + (c + 1 < L->nchunks ? L->t_full : L->t_last);
}

__device__ static inline void flag(unsigned *flags, unsigned bits) {
  atomicOr(flags, bits);
}
__device__ static inline unsigned flags_now(const unsigned *flags) {
  return gz_flags_now(flags);
}

/* ---- CRC-32 by a whole thread block ---------------------------------------- */

/* The tables of a block's CRC work, in shared memory: bytes (table), the
 * powers x^(2^k) mod P for combining (x2k), one partial CRC per thread. */
typedef struct crc_shared {
  uint32_t table[256], x2k[GZ_CRC32_X2K], part[GZ_THREADS];
} crc_shared_t;

__device__ static void crc_tables(crc_shared_t *c) {
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
    c->table[i] = gz_crc32_entry(i);
  if (threadIdx.x == 0)
    gz_crc32_x2k_fill(c->x2k);
  __syncthreads();
}

/* CRC-32 of p[0..size): thread t checksums the t-th of blockDim.x equal
 * slices, then a tree combines neighbours (gz_crc32_combine) in log2 steps.
 * Every thread of the block calls it (blockDim.x <= GZ_THREADS); all get the
 * value. */
__device__ static uint32_t block_crc32(crc_shared_t *c, const uint8_t *p, uint64_t size) {
  unsigned t = threadIdx.x, T = blockDim.x;
  uint64_t per = (size + T - 1) / T;
  uint64_t a = t * per < size ? t * per : size, b = a + per < size ? a + per : size;
  uint32_t crc;
  c->part[t] = gz_crc32_tab(c->table, p + a, (size_t)(b - a));
  __syncthreads();
  for (unsigned s = 1; s < T; s <<= 1) {
    if (t % (2 * s) == 0 && t + s < T) {
      uint64_t lo = (t + s) * per, hi = (t + 2 * s) * per;
      lo = lo < size ? lo : size;
      hi = hi < size ? hi : size;
      c->part[t] = gz_crc32_combine(c->x2k, c->part[t], c->part[t + s], hi - lo);
    }
    __syncthreads();
  }
  crc = c->part[0];
  __syncthreads(); /* part is reused by the next call */
  return crc;
}

/* ---- range (also used by the collectives, codes_cuda.cu) ------------------ */

/* part[3 * block + 0..2] = finite min, finite max of this block's share. */
template <typename T> __global__ void k_range(const T *x, size_t n, double *part) {
  __shared__ double slo[GZ_THREADS], shi[GZ_THREADS];
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  GZ_STRIDE_LOOP
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    double v = (double)x[i];
    if (isfinite(v)) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  }
  slo[threadIdx.x] = lo;
  shi[threadIdx.x] = hi;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      double a = slo[threadIdx.x + s], b = shi[threadIdx.x + s];
      slo[threadIdx.x] = a < slo[threadIdx.x] ? a : slo[threadIdx.x];
      shi[threadIdx.x] = b > shi[threadIdx.x] ? b : shi[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part[3 * blockIdx.x] = slo[0];
    part[3 * blockIdx.x + 1] = shi[0];
  }
}

/* out3 = min, max, max |.| over the partials (gz_local_range's answer). */
__global__ void k_range_final(const double *part, int nparts, double *out3) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (int i = 0; i < nparts; i++) {
    lo = part[3 * i] < lo ? part[3 * i] : lo;
    hi = part[3 * i + 1] > hi ? part[3 * i + 1] : hi;
  }
  out3[0] = lo;
  out3[1] = hi;
  out3[2] = hi >= lo ? fmax(fabs(lo), fabs(hi)) : 0.0;
}

static unsigned range_blocks(size_t n) {
  return gz_grid(
      n < (size_t)GZ_RANGE_BLOCKS * GZ_THREADS ? n : (size_t)GZ_RANGE_BLOCKS * GZ_THREADS,
      GZ_THREADS);
}

extern "C" int gz_dev_range(int dtype, const void *d_in, size_t n, double *d_out3,
                            void *d_tmp, size_t tmp_bytes, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  unsigned nb = range_blocks(n);
  if ((dtype != 1 && dtype != 2) || !d_out3 || (n && !d_in))
    return GZ_DEV_ERR_ARG;
  if (tmp_bytes < 3 * sizeof(double) * GZ_RANGE_BLOCKS || !d_tmp)
    return GZ_DEV_ERR_CAPACITY;
  if (dtype == 1)
    GZ_LAUNCH(k_range<float>, nb, GZ_THREADS, 0, s, (const float *)d_in, n,
              (double *)d_tmp);
  else
    GZ_LAUNCH(k_range<double>, nb, GZ_THREADS, 0, s, (const double *)d_in, n,
              (double *)d_tmp);
  GZ_CUDA_LAUNCHED("k_range");
  GZ_LAUNCH(k_range_final, 1, 1, 0, s, (const double *)d_tmp, (int)nb, d_out3);
  GZ_CUDA_LAUNCHED("k_range_final");
  return GZ_DEV_OK;
}

/* ---- compression ----------------------------------------------------------- */

/* The absolute bound as stream.c's absolute_bound + the denormal guard. */
__global__ void k_stream_setup(int eb_mode, double error_bound, const double *part,
                               int nparts, gz_quant_t *qp) {
  double eb = error_bound;
  if (eb_mode == 1 && error_bound != 0) {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int i = 0; i < nparts; i++) {
      lo = part[3 * i] < lo ? part[3 * i] : lo;
      hi = part[3 * i + 1] > hi ? part[3 * i + 1] : hi;
    }
    eb =
        hi > lo ? __dsub_rn(__dmul_rn(error_bound, hi), __dmul_rn(error_bound, lo)) : 0.0;
  }
  if (eb > 0 && !(eb >= 1e-300))
    eb = 0;
  *qp = gz_quant_make(eb, GZ_CODE_LIMIT); /* as stream.c's gz_codec_quant */
}

/* Warps of a launch of blockDim.x (a multiple of 32) threads per block. */
__device__ static inline size_t warp_id(void) {
  return (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
}
__device__ static inline size_t warp_count(void) {
  return (size_t)gridDim.x * blockDim.x / 32;
}

/* Encoding and placement in one pass: a thread block takes tiles of
 * GZ_TILE_BLOCKS blocks in order (gz_tile_next); each warp decides its
 * block's form and size (gz_warp_form), the tile's total goes to the
 * look-back scan (gz_tile_prefix), and each warp writes its block straight to
 * its place in the data section (after the segment tables of its chunk and
 * those before), then ends[b] = where block b ends among the blocks alone. */
template <typename T>
__global__ void k_encode(const T *x, size_t n, const gz_quant_t *qp, uint8_t *data,
                         uint64_t *ends, size_t nb, unsigned long long *state,
                         seg_layout_t sl) {
  __shared__ unsigned area[GZ_TILE_BLOCKS][GZ_WARP_PACK_WORDS];
  __shared__ uint64_t wsize[GZ_TILE_BLOCKS], base;
  __shared__ size_t tile_now;
  unsigned lane = gz_lane(), warp = threadIdx.x / 32;
  size_t ntiles = (nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS;
  gz_quant_t q = *qp;
  for (;;) {
    size_t tile, b;
    int len;
    uint64_t off;
    T v;
    gz_warp_form_t f = {0, 0, 0, 0, 0, 0};
    if (threadIdx.x == 0)
      tile_now = gz_tile_next(state);
    gz_warp_area_clear(area[warp]); /* the last pass's bytes are out: barrier below */
    __syncthreads();
    tile = tile_now;
    if (tile >= ntiles)
      break; /* the whole block */
    b = tile * GZ_TILE_BLOCKS + warp;
    len = b < nb ? (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK) : 0;
    v = (int)lane < len ? x[b * GZ_BLOCK + lane] : (T)0;
    if (len) /* the same for the whole warp */
      f = gz_warp_form(v, len, &q);
    if (lane == 0)
      wsize[warp] = f.size;
    off = gz_tile_place(state, tile, wsize, &base, warp);
    if (len) {
      gz_warp_write(v, len, &f, data + off + tables_through(&sl, b / sl.chunk_blocks),
                    area[warp]);
      if (lane == 0)
        ends[b] = off + f.size;
    }
    __syncthreads(); /* tile_now, wsize and base are reused */
  }
}

/* One thread block per chunk (grid-stride over chunks): the segment table
 * (thread s writes segment s's offset), then size and CRC-32. */
__global__ void k_chunk_index(uint8_t *data, const uint64_t *ends, size_t nb,
                              seg_layout_t sl, uint8_t *index) {
  __shared__ crc_shared_t crc;
  crc_tables(&crc);
  GZ_STRIDE_LOOP
  for (size_t c = blockIdx.x; c < sl.nchunks; c += gridDim.x) {
    size_t fb = c * sl.chunk_blocks,
           lb = (fb + sl.chunk_blocks < nb ? fb + sl.chunk_blocks : nb) - 1;
    uint64_t base = fb ? ends[fb - 1] : 0, start = base + tables_before(&sl, c);
    uint64_t table = tables_through(&sl, c) - tables_before(&sl, c);
    uint64_t size = table + ends[lb] - base;
    uint32_t sum;
    for (uint64_t e = threadIdx.x; e < table / 4; e += blockDim.x)
      gz_put_u32le(data + start + 4 * e,
                   (uint32_t)(ends[fb + (e + 1) * GZ_STREAM_SEG_BLOCKS - 1] - base));
    __syncthreads(); /* the table is in the bytes checksummed below */
    sum = block_crc32(&crc, data + start, size);
    if (threadIdx.x == 0) {
      gz_put_u32le(index + 8 * c, (uint32_t)size);
      gz_put_u32le(index + 8 * c + 4, sum);
    }
  }
}

__global__ void k_stream_header(uint8_t *o, int dtype, int eb_mode, double error_bound,
                                const gz_quant_t *qp, uint64_t n, uint32_t chunk_len,
                                seg_layout_t sl, const uint64_t *ends, uint64_t nb,
                                uint64_t *d_size) {
  uint64_t nchunks = sl.nchunks;
  __shared__ crc_shared_t crc;
  uint32_t index_crc;
  crc_tables(&crc);
  index_crc = block_crc32(&crc, o + GZ_STREAM_HEADER, 8 * nchunks);
  if (threadIdx.x != 0)
    return;
  gz_stream_header_put(o, GZ_STREAM_VERSION, dtype, eb_mode, error_bound, qp->eb, n,
                       chunk_len, (uint32_t)nchunks);
  gz_put_u32le(o + 40, gz_crc32_tab(crc.table, o, 40));
  gz_put_u32le(o + GZ_STREAM_HEADER + 8 * nchunks, index_crc);
  *d_size = GZ_STREAM_HEADER + 8 * nchunks + 4 +
            (nb ? ends[nb - 1] + tables_through(&sl, nchunks - 1) : 0);
}

/* Scratch layout of a compression; offsets into d_tmp, total in *total. */
typedef struct comp_layout {
  size_t qp, part, ends, state, total;
} comp_layout_t;

static comp_layout_t comp_layout(size_t n) {
  comp_layout_t L;
  size_t nb = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  L.total = 0;
  L.qp = gz_carve(&L.total, sizeof(gz_quant_t));
  L.part = gz_carve(&L.total, 3 * sizeof(double) * GZ_RANGE_BLOCKS);
  L.ends = gz_carve(&L.total, nb * sizeof(uint64_t));
  L.state = gz_carve(&L.total, GZ_TILE_WORDS((nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS) *
                                   sizeof(unsigned long long));
  return L;
}

extern "C" size_t gz_dev_compress_tmp_bytes(int dtype, size_t n, uint32_t chunk_len) {
  (void)chunk_len; /* the scratch does not depend on it */
  size_t esz = dtype == 1 ? 4 : dtype == 2 ? 8 : 0;
  comp_layout_t L;
  if (!esz || n > SIZE_MAX / 16)
    return 0;
  L = comp_layout(n);
  return L.total == SIZE_MAX ? 0 : L.total;
}

extern "C" int gz_dev_compress(int dtype, int eb_mode, double error_bound,
                               uint32_t chunk_len, const void *d_in, size_t n,
                               void *d_out, size_t cap, void *d_tmp, size_t tmp_bytes,
                               uint64_t *d_size, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  size_t esz = dtype == 1 ? 4 : dtype == 2 ? 8 : 0, nb, nchunks, bound;
  uint8_t *tmp = (uint8_t *)d_tmp, *out = (uint8_t *)d_out, *index, *data;
  unsigned nparts = 0;
  comp_layout_t L;
  seg_layout_t sl;
  gz_quant_t *qp;

  if (!chunk_len)
    chunk_len = GZ_CHUNK_DEFAULT;
  if (!esz || !(error_bound >= 0) || !isfinite(error_bound) ||
      (eb_mode != 0 && eb_mode != 1) || chunk_len % GZ_BLOCK ||
      chunk_len > GZ_STREAM_CHUNK_MAX || !d_out || !d_size || (n && !d_in) ||
      n > SIZE_MAX / 16)
    return GZ_DEV_ERR_ARG;
  nb = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  nchunks = n / chunk_len + (n % chunk_len != 0);
  if (nchunks > UINT32_MAX)
    return GZ_DEV_ERR_ARG;
  /* gz_compress_bound: header + index + index CRC + blocks + n * esz +
   * segment tables (at most 4 floor(nb / GZ_STREAM_SEG_BLOCKS) bytes) */
  bound =
      GZ_STREAM_HEADER + 8 * nchunks + 4 + nb + n * esz + 4 * (nb / GZ_STREAM_SEG_BLOCKS);
  sl = seg_layout(n, chunk_len);
  L = comp_layout(n);
  if (cap < bound || L.total == SIZE_MAX || tmp_bytes < L.total || !d_tmp)
    return GZ_DEV_ERR_CAPACITY;
  qp = (gz_quant_t *)(tmp + L.qp);
  index = out + GZ_STREAM_HEADER;
  data = index + 8 * nchunks + 4;

  if (eb_mode == 1 && error_bound != 0) {
    nparts = range_blocks(n);
    if (dtype == 1)
      GZ_LAUNCH(k_range<float>, nparts, GZ_THREADS, 0, s, (const float *)d_in, n,
                (double *)(tmp + L.part));
    else
      GZ_LAUNCH(k_range<double>, nparts, GZ_THREADS, 0, s, (const double *)d_in, n,
                (double *)(tmp + L.part));
    GZ_CUDA_LAUNCHED("k_range");
  }
  GZ_LAUNCH(k_stream_setup, 1, 1, 0, s, eb_mode, error_bound,
            (const double *)(tmp + L.part), (int)nparts, qp);
  GZ_CUDA_LAUNCHED("k_stream_setup");
  if (nb) {
    uint64_t *ends = (uint64_t *)(tmp + L.ends);
    unsigned long long *state = (unsigned long long *)(tmp + L.state);
    size_t ntiles = (nb + GZ_TILE_BLOCKS - 1) / GZ_TILE_BLOCKS;
    GZ_CUDA_TRY(cudaMemsetAsync(state, 0, GZ_TILE_WORDS(ntiles) * sizeof *state, s));
    if (dtype == 1)
      GZ_LAUNCH(k_encode<float>, gz_grid(ntiles, 1), GZ_THREADS, 0, s,
                (const float *)d_in, n, qp, data, ends, nb, state, sl);
    else
      GZ_LAUNCH(k_encode<double>, gz_grid(ntiles, 1), GZ_THREADS, 0, s,
                (const double *)d_in, n, qp, data, ends, nb, state, sl);
    GZ_CUDA_LAUNCHED("k_encode");
    GZ_LAUNCH(k_chunk_index, gz_grid(nchunks, 1), 128, 0, s, data, ends, nb, sl, index);
    GZ_CUDA_LAUNCHED("k_chunk_index");
  }
  GZ_LAUNCH(k_stream_header, 1, GZ_THREADS, 0, s, out, dtype, eb_mode, error_bound, qp, n,
            chunk_len, sl, (const uint64_t *)(tmp + L.ends), nb, d_size);
  GZ_CUDA_LAUNCHED("k_stream_header");
  return GZ_DEV_OK;
}

/* ---- decompression --------------------------------------------------------- */

/* gz_stream_info's checks, plus dtype and count against the caller's. Thread
 * 0 reads the header; the block checksums the index; thread 0 goes on. */
__global__ void k_dec_header(const uint8_t *s, uint64_t size, int dtype, uint64_t n,
                             gz_dec_info_t *info, uint64_t *choff, unsigned *flags) {
  __shared__ crc_shared_t crc;
  __shared__ uint64_t nch; /* chunks when the header is sound, else 0 */
  uint64_t count, nchunks = 0, expected, total, bits;
  uint32_t chunk_len = 0, index_crc;
  double eb, abs_eb = 0;
  unsigned bad = 0;
  crc_tables(&crc);
  if (threadIdx.x == 0) {
    if (size < GZ_STREAM_HEADER || s[0] != GZ_STREAM_MAGIC[0] ||
        s[1] != GZ_STREAM_MAGIC[1] || s[2] != GZ_STREAM_MAGIC[2] ||
        s[3] != GZ_STREAM_MAGIC[3] ||
        gz_get_u32le(s + 40) != gz_crc32_tab(crc.table, s, 40) ||
        (s[4] != 1 && s[4] != 3)) {
      bad = GZ_DEV_FLAG_CORRUPT;
    } else {
      bits = gz_get_u64le(s + 8);
      memcpy(&eb, &bits, 8);
      bits = gz_get_u64le(s + 16);
      memcpy(&abs_eb, &bits, 8);
      count = gz_get_u64le(s + 24);
      chunk_len = gz_get_u32le(s + 32);
      nchunks = gz_get_u32le(s + 36);
      if ((s[5] != 1 && s[5] != 2) || s[6] > 1 || s[7] != 0 || !(eb >= 0) ||
          !(abs_eb >= 0) || !isfinite(abs_eb) || (abs_eb > 0 && abs_eb < 1e-300) ||
          chunk_len == 0 || chunk_len % GZ_BLOCK || chunk_len > GZ_STREAM_CHUNK_MAX) {
        bad = GZ_DEV_FLAG_CORRUPT;
      } else {
        expected = count / chunk_len + (count % chunk_len != 0);
        if (nchunks != expected || nchunks > (size - GZ_STREAM_HEADER) / 8 ||
            GZ_STREAM_HEADER + 8 * nchunks + 4 > size)
          bad = GZ_DEV_FLAG_CORRUPT;
        else if (s[5] != dtype || count != n)
          bad = GZ_DEV_FLAG_ARG; /* reported after the index CRC, as the CPU */
      }
    }
    if (bad == GZ_DEV_FLAG_CORRUPT)
      flag(flags, bad);
    nch = bad == GZ_DEV_FLAG_CORRUPT ? UINT64_MAX : nchunks;
  }
  __syncthreads();
  if (nch == UINT64_MAX)
    return;
  index_crc = block_crc32(&crc, s + GZ_STREAM_HEADER, 8 * nch);
  if (threadIdx.x != 0)
    return;
  if (gz_get_u32le(s + GZ_STREAM_HEADER + 8 * nchunks) != index_crc) {
    flag(flags, GZ_DEV_FLAG_CORRUPT);
    return;
  }
  if (bad) {
    flag(flags, bad);
    return;
  }
  total = GZ_STREAM_HEADER + 8 * nchunks + 4;
  info->data_off = total;
  choff[0] = 0;
  for (uint64_t c = 0; c < nchunks; c++) {
    uint64_t csize = gz_get_u32le(s + GZ_STREAM_HEADER + 8 * c);
    total += csize;
    if (total > size) {
      flag(flags, GZ_DEV_FLAG_CORRUPT);
      return;
    }
    choff[c + 1] = choff[c] + csize;
  }
  info->qp = gz_quant_make(abs_eb, GZ_CODE_LIMIT);
  info->nchunks = nchunks;
  info->chunk_len = chunk_len;
  info->tables = s[4] == 3;
}

/* One thread block per chunk verifies the chunk's CRC-32 (and that it holds
 * its segment table). */
__global__ void k_dec_chunks(const uint8_t *s, const gz_dec_info_t *info,
                             const uint64_t *choff, size_t n, unsigned *flags) {
  __shared__ crc_shared_t crc;
  __shared__ unsigned skip; /* read once: other blocks may set flags meanwhile */
  if (blockIdx.x >= info->nchunks)
    return; /* the grid is sized for the most chunks n allows */
  if (threadIdx.x == 0)
    skip = flags_now(flags) & (GZ_DEV_FLAG_CORRUPT | GZ_DEV_FLAG_ARG);
  crc_tables(&crc);
  if (skip)
    return;
  {
    const uint8_t *data = s + info->data_off, *index = s + GZ_STREAM_HEADER;
    uint64_t nchunks = info->nchunks, chunk_len = info->chunk_len;
    GZ_STRIDE_LOOP
    for (uint64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
      uint64_t start = choff[c], end = choff[c + 1], first = c * chunk_len;
      uint64_t len = n - first < chunk_len ? n - first : chunk_len;
      uint32_t sum = block_crc32(&crc, data + start, end - start);
      if (threadIdx.x == 0 &&
          (gz_get_u32le(index + 8 * c + 4) != sum ||
           (info->tables && end - start < gz_stream_table_bytes(len))))
        flag(flags, GZ_DEV_FLAG_CORRUPT);
    }
  }
}

/* One thread per segment of every chunk (grid-stride): walks the segment's
 * blocks (gz_block_values_size, at most GZ_STREAM_SEG_BLOCKS of them),
 * writing where each starts, and checks that they end exactly where the
 * next segment starts (its table entry) or the chunk ends. A version-1
 * chunk is one segment without a table (one walk per chunk). */
__global__ void k_dec_segs(const uint8_t *s, const gz_dec_info_t *info,
                           const uint64_t *choff, uint64_t *boff, size_t n, size_t esz,
                           unsigned *flags) {
  if (flags_now(flags) & (GZ_DEV_FLAG_CORRUPT | GZ_DEV_FLAG_ARG))
    return; /* the header, the index or a chunk (CRC, table size) is bad */
  const uint8_t *data = s + info->data_off;
  uint64_t chunk_len = info->chunk_len;
  uint64_t per = info->tables ? gz_stream_segs(chunk_len) : 1; /* segments a chunk */
  uint64_t seg_blocks = info->tables ? GZ_STREAM_SEG_BLOCKS : chunk_len / GZ_BLOCK;
  int lossy = info->qp.eb > 0;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    boff[(n + GZ_BLOCK - 1) / GZ_BLOCK] = choff[info->nchunks]; /* the data's end */
  GZ_STRIDE_LOOP
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
       i < info->nchunks * per; i += (uint64_t)gridDim.x * blockDim.x) {
    uint64_t c = i / per, g = i % per, start = choff[c], end = choff[c + 1];
    uint64_t first = c * chunk_len, len = n - first < chunk_len ? n - first : chunk_len;
    uint64_t segs = info->tables ? gz_stream_segs(len) : 1;
    uint64_t pay = start + (info->tables ? gz_stream_table_bytes(len) : 0), pos, stop;
    size_t b, b1 = (size_t)((first + len + GZ_BLOCK - 1) / GZ_BLOCK);
    if (g >= segs || pay > end)
      continue; /* the last chunk has fewer; a chunk short of its table is flagged */
    pos = g ? pay + gz_get_u32le(data + start + 4 * (g - 1)) : pay;
    stop = g + 1 < segs ? pay + gz_get_u32le(data + start + 4 * g) : end;
    b = (size_t)(first / GZ_BLOCK + g * seg_blocks);
    b1 = b1 - b > seg_blocks ? b + (size_t)seg_blocks : b1;
    if (pos > stop || stop > end) {
      flag(flags, GZ_DEV_FLAG_CORRUPT);
      continue;
    }
    for (; b < b1; b++) {
      int vlen = (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK);
      size_t used =
          gz_block_values_size(data + pos, (size_t)(stop - pos), vlen, esz, lossy);
      if (!used)
        break;
      boff[b] = pos;
      pos += used;
    }
    if (b < b1 || pos != stop)
      flag(flags, GZ_DEV_FLAG_CORRUPT);
  }
}

/* One warp per block (gz_warp.cuh), grid-stride. k_dec_segs has checked
 * every block's size; a chunk's last block may be followed by the next
 * chunk's segment table, so the decoder is given the room up to the next
 * block's start (boff[nb]: the end of the data) and must use no more. */
template <typename T>
__global__ void k_dec_blocks(const uint8_t *s, const gz_dec_info_t *info,
                             const uint64_t *boff, size_t n, T *out, unsigned *flags) {
  size_t nb = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  gz_quant_t qp;
  /* lane 0's reading for the whole warp: the lanes must agree */
  if (__shfl_sync(GZ_WARP_ALL, flags_now(flags), 0) &
      (GZ_DEV_FLAG_CORRUPT | GZ_DEV_FLAG_ARG))
    return;
  qp = info->qp;
  GZ_STRIDE_LOOP
  for (size_t b = warp_id(); b < nb; b += warp_count()) {
    uint64_t avail = boff[b + 1] - boff[b];
    int len = (int)(n - b * GZ_BLOCK < GZ_BLOCK ? n - b * GZ_BLOCK : GZ_BLOCK);
    size_t used = gz_warp_decode(s + info->data_off + boff[b], (size_t)avail, len, &qp,
                                 out + b * GZ_BLOCK);
    if ((used == 0 || used > avail) && gz_lane() == 0)
      flag(flags, GZ_DEV_FLAG_CORRUPT);
  }
}

typedef struct dec_layout {
  size_t info, choff, boff, total;
} dec_layout_t;

static dec_layout_t dec_layout(size_t n) {
  dec_layout_t L;
  size_t nb = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  L.total = 0;
  L.info = gz_carve(&L.total, sizeof(gz_dec_info_t));
  L.choff = gz_carve(&L.total, (nb + 2) * sizeof(uint64_t));
  L.boff = gz_carve(&L.total, (nb + 2) * sizeof(uint64_t));
  return L;
}

extern "C" size_t gz_dev_decompress_tmp_bytes(size_t n) {
  dec_layout_t L;
  if (n > SIZE_MAX / 16)
    return 0;
  L = dec_layout(n);
  return L.total == SIZE_MAX ? 0 : L.total;
}

extern "C" int gz_dev_decompress(int dtype, const void *d_in, size_t size, void *d_out,
                                 size_t n, void *d_tmp, size_t tmp_bytes,
                                 unsigned *d_flags, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  size_t esz = dtype == 1 ? 4 : dtype == 2 ? 8 : 0, nb = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  uint8_t *tmp = (uint8_t *)d_tmp;
  const uint8_t *in = (const uint8_t *)d_in;
  gz_dec_info_t *info;
  dec_layout_t L;
  if (!esz || !d_in || !d_flags || (n && !d_out) || n > SIZE_MAX / 16)
    return GZ_DEV_ERR_ARG;
  L = dec_layout(n);
  if (L.total == SIZE_MAX || tmp_bytes < L.total || !d_tmp)
    return GZ_DEV_ERR_CAPACITY;
  info = (gz_dec_info_t *)(tmp + L.info);
  GZ_LAUNCH(k_dec_header, 1, GZ_THREADS, 0, s, in, size, dtype, n, info,
            (uint64_t *)(tmp + L.choff), d_flags);
  GZ_CUDA_LAUNCHED("k_dec_header");
  if (!nb)
    return GZ_DEV_OK;
  /* at most nb chunks (chunk_len >= GZ_BLOCK); a block per chunk, grid-stride
   * over the real count (the host does not know it) */
  GZ_LAUNCH(k_dec_chunks, gz_grid(nb < GZ_DEC_CHUNK_GRID ? nb : GZ_DEC_CHUNK_GRID, 1),
            128, 0, s, in, info, (const uint64_t *)(tmp + L.choff), n, d_flags);
  GZ_CUDA_LAUNCHED("k_dec_chunks");
  /* at most nb segments (a segment holds a block at least); grid-stride */
  GZ_LAUNCH(k_dec_segs, gz_grid(nb < GZ_DEC_SEG_THREADS ? nb : GZ_DEC_SEG_THREADS, 128),
            128, 0, s, in, info, (const uint64_t *)(tmp + L.choff),
            (uint64_t *)(tmp + L.boff), n, esz, d_flags);
  GZ_CUDA_LAUNCHED("k_dec_segs");
  if (dtype == 1)
    GZ_LAUNCH(k_dec_blocks<float>, gz_grid(nb * 32, GZ_THREADS), GZ_THREADS, 0, s, in,
              info, (const uint64_t *)(tmp + L.boff), n, (float *)d_out, d_flags);
  else
    GZ_LAUNCH(k_dec_blocks<double>, gz_grid(nb * 32, GZ_THREADS), GZ_THREADS, 0, s, in,
              info, (const uint64_t *)(tmp + L.boff), n, (double *)d_out, d_flags);
  GZ_CUDA_LAUNCHED("k_dec_blocks");
  return GZ_DEV_OK;
}
