/* gz_cuda_util.cuh - what the CUDA launchers share: error capture, scratch
 * carving, launch geometry and the inclusive scan (CUB) of block sizes.
 * Internal to kernels/. */
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

#define GZ_THREADS 256
#define GZ_ALIGN 256u

static inline unsigned gz_grid(size_t items, unsigned threads) {
  size_t g = (items + threads - 1) / threads;
  return (unsigned)(g < 1 ? 1 : g > 0x7fffffffu ? 0x7fffffffu : g);
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
