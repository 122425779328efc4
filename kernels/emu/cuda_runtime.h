/* cuda_runtime.h (emulation) - the part of the CUDA runtime and of the
 * device built-ins that the .cu files of kernels/ use, for compiling them with
 * the host C++ compiler (GZ_ENABLE_CUDA=EMU). Included instead of the real
 * header through the include path; never seen by nvcc.
 *
 * Execution model (kernels/emu/emu_runtime.cpp):
 *  - every GPU thread is a fiber (default) or an OS thread (GZ_EMU_THREADS=1,
 *    and always under ThreadSanitizer/AddressSanitizer); the blocks of a grid
 *    run one after the other, so __shared__ (a static) is per block;
 *    __syncthreads is a barrier of the block, a thread that exits while others
 *    wait at a barrier is a reported fault (fibers);
 *  - work is queued per stream and runs at the next synchronisation point
 *    (stream / event / device sync, blocking copy, cudaFree): a missing
 *    synchronisation shows up as stale data. Blocking streams and the legacy
 *    default stream (NULL) order after each other as in CUDA; streams created
 *    with cudaStreamNonBlocking do not;
 *  - device memory comes from malloc, filled with a poison byte; kernel
 *    pointer arguments must be device memory (a host pointer fails the
 *    launch), launch limits are those of a real GPU (block <= 1024 threads,
 *    grid.y/z <= 65535, dynamic shared memory <= 48 KiB);
 *  - the device is visible only with GZ_DEVICE_EMULATE=N (N devices, one
 *    shared memory), so a binary built this way behaves as a CPU-only build
 *    unless asked. No warp intrinsics (shuffles, votes) are provided: the
 *    kernels use none, and using one fails to compile here. */
#ifndef GZ_EMU_CUDA_RUNTIME_H
#define GZ_EMU_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "the CUDA emulation is C++ (compile the .cu files with -x c++)"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define GZ_CUDA_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static /* blocks run one at a time */

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719
} cudaError_t;

typedef struct gz_emu_stream *cudaStream_t;
typedef struct gz_emu_event *cudaEvent_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyDefault
};
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};
#define cudaStreamDefault 0x0u
#define cudaStreamNonBlocking 0x1u

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer, *hostPointer;
};
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem, sharedMemPerBlock;
  int maxThreadsPerBlock, maxGridSize[3], maxThreadsDim[3], warpSize;
};

cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t err);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *p);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s = 0);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t s = 0);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop);

namespace gz_emu {

struct thread_state {
  uint3 tid, bid;
  dim3 bdim, gdim;
};
extern thread_local thread_state *cur;

void syncthreads();
/* 1 when p lies in a cudaMalloc allocation. */
bool is_device(const void *p);
/* Queue work on stream s (flushing what CUDA orders it after). */
cudaError_t enqueue(cudaStream_t s, std::function<void()> work);
/* Check a launch, then queue the grid; bad_arg = index of a pointer argument
 * that is not device memory, -1 when none. */
void launch_(const char *name, dim3 grid, dim3 block, size_t shmem, cudaStream_t s,
             std::function<void()> body, int bad_arg);
/* The next `after`-th launch fails as out of resources (tests). */
void inject_launch_failure(int after);

template <typename T> bool host_ptr_arg(const T &x) {
  if constexpr (std::is_pointer<T>::value)
    return x != nullptr && !is_device((const void *)x);
  else
    return false;
}

template <typename... P, typename... A>
void launch(const char *name, dim3 grid, dim3 block, size_t shmem, cudaStream_t s,
            void (*kernel)(P...), A &&...a) {
  static_assert(sizeof...(P) == sizeof...(A), "kernel argument count");
  std::tuple<typename std::decay<P>::type...> args(std::forward<A>(a)...);
  int bad = -1, i = 0;
  std::apply(
      [&](const auto &...x) { ((bad = bad < 0 && host_ptr_arg(x) ? i : bad, i++), ...); },
      args);
  launch_(
      name, grid, block, shmem, s, [kernel, args]() { std::apply(kernel, args); }, bad);
}

} // namespace gz_emu

#define threadIdx (gz_emu::cur->tid)
#define blockIdx (gz_emu::cur->bid)
#define blockDim (gz_emu::cur->bdim)
#define gridDim (gz_emu::cur->gdim)

static inline void __syncthreads(void) { gz_emu::syncthreads(); }

/* Atomics on global or shared memory (sequentially consistent). */
static inline unsigned atomicOr(unsigned *p, unsigned v) {
  return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned atomicAnd(unsigned *p, unsigned v) {
  return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned atomicAdd(unsigned *p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
template <typename T> static inline T gz_emu_atomic_max(T *p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST))
    ;
  return old;
}
static inline unsigned atomicMax(unsigned *p, unsigned v) {
  return gz_emu_atomic_max(p, v);
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v) {
  return gz_emu_atomic_max(p, v);
}

/* Double arithmetic with one rounding (no contraction: -ffp-contract=off). */
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }

#endif
