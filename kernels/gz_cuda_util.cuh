/* gz_cuda_util.cuh - what the CUDA launchers share: error capture, scratch
 * carving, launch geometry, the launch macro and the single-pass scan
 * (decoupled look-back) that places variable-size blocks. Internal to kernels/.
 *
 * The same sources build with nvcc for GPUs and with the host C++ compiler
 * against kernels/emu/ (GZ_ENABLE_CUDA=EMU, docs/gpu.md): every launch goes
 * through GZ_LAUNCH, every kernel loops grid-stride (so any grid is correct,
 * and GZ_DEV_GRID_MAX can force a tiny one), and flag words other threads
 * update are read with gz_flags_now. */
#ifndef GZ_CUDA_UTIL_CUH
#define GZ_CUDA_UTIL_CUH

#include "gz_device.h"

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Record a CUDA failure for gz_dev_last_error(); returns GZ_DEV_ERR_CUDA. */
int gz_dev_fail_(cudaError_t err, const char *what);

#define GZ_CUDA_TRY(call)                                                                \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess)                                                             \
      return gz_dev_fail_(err_, #call);                                                  \
  } while (0)
/* After a launch: configuration errors show up here (no synchronisation). */
#define GZ_CUDA_LAUNCHED(what) GZ_CUDA_TRY(cudaPeekAtLastError())

/* kernel<<<grid, block, shmem, stream>>>(args...) */
#ifdef GZ_CUDA_EMU
#define GZ_LAUNCH(k, grid, block, shmem, stream, ...)                                    \
  gz_emu::launch(#k, (grid), (block), (shmem), (stream), k, __VA_ARGS__)
#else
#define GZ_LAUNCH(k, grid, block, shmem, stream, ...)                                    \
  k<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#endif

/* A flag word that other threads OR into (atomicOr) while this one reads. */
__device__ static inline unsigned gz_flags_now(const unsigned *flags) {
#ifdef GZ_CUDA_EMU
  return __atomic_load_n(flags, __ATOMIC_RELAXED);
#else
  return *(const volatile unsigned *)flags;
#endif
}

/* Before a grid-stride loop whose body is large: one iteration at a time
 * (unrolled, the encoder spilled: 255 registers instead of 168). */
#ifdef GZ_CUDA_EMU
#define GZ_STRIDE_LOOP
#else
#define GZ_STRIDE_LOOP _Pragma("unroll 1")
#endif

#define GZ_THREADS 256
#define GZ_ALIGN 256u

/* Largest grid of a launch: GZ_DEV_GRID_MAX (tests: a tiny grid makes every
 * grid-stride loop go round), else the hardware's limit. */
unsigned gz_grid_max(void);

/* Blocks of threads for items, at least 1, at most gz_grid_max(). */
static inline unsigned gz_grid(size_t items, unsigned threads) {
  size_t g = (items + threads - 1) / threads, cap = gz_grid_max();
  return (unsigned)(g < 1 ? 1 : g > cap ? cap : g);
}

/* Scratch carving: offsets aligned to GZ_ALIGN; SIZE_MAX on overflow. */
static inline size_t gz_carve(size_t *total, size_t bytes) {
  size_t at = *total, r;
  if (at == SIZE_MAX || bytes > SIZE_MAX - GZ_ALIGN)
    return *total = SIZE_MAX;
  r = (bytes + GZ_ALIGN - 1) / GZ_ALIGN * GZ_ALIGN;
  if (at > SIZE_MAX - r)
    return *total = SIZE_MAX;
  *total = at + r;
  return at;
}

/* ---- single-pass scan with decoupled look-back ------------------------------
 * For kernels that size their items and place them in the same pass: tiles
 * are taken in order from a counter (gz_tile_next), so a tile's predecessors
 * were all taken by blocks already running; each tile publishes its total
 * (GZ_TILE_AGG) as soon as it knows it, then, once its prefix is known, the
 * inclusive prefix (GZ_TILE_INC); a tile's exclusive prefix sums the
 * predecessors' published values backwards until an inclusive one. One
 * 64-bit word per tile (2 status bits, 62 value bits), so a value and its
 * status are read together. state: GZ_TILE_WORDS(ntiles) zeroed words
 * (word 0 is the counter). Under the emulation the blocks run one after the
 * other, so a look-back never meets a tile that is still running: meeting
 * one is reported as a fault instead of spinning for ever. */
#define GZ_TILE_BLOCKS (GZ_THREADS / 32) /* blocks of 32 per tile: a warp each */
#define GZ_TILE_AGG (1ull << 62)
#define GZ_TILE_INC (2ull << 62)
#define GZ_TILE_VALUE ((1ull << 62) - 1)
#define GZ_TILE_WORDS(ntiles) ((size_t)(ntiles) + 1)

__device__ static inline unsigned long long gz_tile_load(const unsigned long long *p) {
#ifdef GZ_CUDA_EMU
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#else
  return *(const volatile unsigned long long *)p;
#endif
}

/* The next tile for this thread block (call from one thread). */
__device__ static inline size_t gz_tile_next(unsigned long long *state) {
  return (size_t)atomicAdd(&state[0], 1ull);
}

/* Publish tile's total agg and return its exclusive prefix, then publish
 * the inclusive one (call from one thread of the tile's block). */
__device__ static inline uint64_t gz_tile_prefix(unsigned long long *state, size_t tile,
                                                 uint64_t agg) {
  unsigned long long *tiles = state + 1;
  uint64_t excl = 0;
  if (tile == 0) {
    atomicExch(&tiles[0], GZ_TILE_INC | agg);
    return 0;
  }
  atomicExch(&tiles[tile], GZ_TILE_AGG | agg);
  for (size_t p = tile - 1;;) {
    unsigned long long v = gz_tile_load(&tiles[p]);
    if (!(v & (GZ_TILE_AGG | GZ_TILE_INC))) { /* not published yet */
#ifdef GZ_CUDA_EMU
      gz_emu::device_fault("look-back met a tile that no block has published (on a GPU "
                           "this would wait; here its block has ended)");
      break;
#else
      continue;
#endif
    }
    excl += v & GZ_TILE_VALUE;
    if (v & GZ_TILE_INC)
      break;
    p--; /* tile 0 is always inclusive */
  }
  atomicExch(&tiles[tile], GZ_TILE_INC | (excl + agg));
  return excl;
}

/* Where this warp's block goes: every warp has put its block's size in
 * wsize[warp] (GZ_TILE_BLOCKS of them, in shared memory); one thread finds
 * the tile's exclusive prefix (gz_tile_prefix) into the block's shared
 * *base, and each warp adds the sizes of the warps before it. Called by
 * every thread of the block (two __syncthreads). */
__device__ static inline uint64_t gz_tile_place(unsigned long long *state, size_t tile,
                                                const uint64_t *wsize, uint64_t *base,
                                                unsigned warp) {
  uint64_t off;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t agg = 0;
    for (unsigned w = 0; w < GZ_TILE_BLOCKS; w++)
      agg += wsize[w];
    *base = gz_tile_prefix(state, tile, agg);
  }
  __syncthreads();
  off = *base;
  for (unsigned w = 0; w < warp; w++)
    off += wsize[w];
  return off;
}

#endif
