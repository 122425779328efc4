/* gz_cuda_util.cuh - what the CUDA launchers share: error capture, scratch
 * carving, launch geometry, the launch macro and the inclusive scan (CUB) of
 * block sizes. Internal to kernels/.
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

/* Bytes of CUB temporary storage for an inclusive sum of nb u64 values;
 * a host-side query (no device work). */
size_t gz_scan_tmp_bytes(size_t nb);
/* ends[i] = sizes[0] + ... + sizes[i] on stream. */
int gz_scan_sizes(const uint64_t *sizes, uint64_t *ends, size_t nb, void *tmp,
                  size_t tmp_bytes, cudaStream_t stream);

#endif
