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
 *    unless asked;
 *  - warps: threads 32k..32k+31 (linear thread index) form a warp. Every warp
 *    intrinsic (__shfl*_sync, __ballot_sync, __any_sync, __all_sync,
 *    __syncwarp) is a barrier of the warp: each lane deposits its value, all
 *    lanes meet, each reads what it asked for. So the lanes run in lockstep
 *    from one intrinsic to the next, a lane that reads another's shared-memory
 *    write without an intrinsic (or __syncthreads) in between reads stale
 *    data, and a lane missing from an intrinsic (exited, or at another
 *    intrinsic or a __syncthreads) is a reported fault, as are masks other
 *    than the whole warp (the kernels use none). */
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
  unsigned linear; /* thread index in the block: lane = linear % 32 */
  unsigned phase;  /* warp intrinsics this thread has passed in this block */
};
extern thread_local thread_state *cur;

void syncthreads();
/* A warp intrinsic: this lane contributes v, the warp meets; returns the 32
 * contributions (lanes beyond the block's last thread read 0). op names the
 * intrinsic, so lanes at different intrinsics are reported. */
const uint64_t *warp_exchange(int op, unsigned mask, uint64_t v);
/* A fault detected inside a kernel: the launch fails (sticky error). */
void device_fault(const char *what);
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

/* ---- warp intrinsics (see the model above) ---- */
enum { GZ_EMU_SHFL = 1, GZ_EMU_VOTE, GZ_EMU_SYNCWARP };

template <typename T> static inline uint64_t gz_emu_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle type");
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <typename T> static inline T gz_emu_from_bits(uint64_t b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}
/* Lane of this thread, and the first lane of its width-group. */
static inline unsigned gz_emu_lane(void) { return gz_emu::cur->linear & 31; }
static inline unsigned gz_emu_group(int width) {
  return gz_emu_lane() & ~((unsigned)width - 1);
}

template <typename T>
static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const uint64_t *all = gz_emu::warp_exchange(GZ_EMU_SHFL, mask, gz_emu_bits(v));
  return gz_emu_from_bits<T>(all[gz_emu_group(width) + ((unsigned)src & (width - 1))]);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const uint64_t *all = gz_emu::warp_exchange(GZ_EMU_SHFL, mask, gz_emu_bits(v));
  unsigned lane = gz_emu_lane(), in_group = lane - gz_emu_group(width);
  return in_group >= delta ? gz_emu_from_bits<T>(all[lane - delta]) : v;
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const uint64_t *all = gz_emu::warp_exchange(GZ_EMU_SHFL, mask, gz_emu_bits(v));
  unsigned lane = gz_emu_lane(), in_group = lane - gz_emu_group(width);
  return in_group + delta < (unsigned)width ? gz_emu_from_bits<T>(all[lane + delta]) : v;
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const uint64_t *all = gz_emu::warp_exchange(GZ_EMU_SHFL, mask, gz_emu_bits(v));
  unsigned lane = gz_emu_lane(), src = lane ^ (unsigned)lane_mask;
  return src < gz_emu_group(width) + (unsigned)width ? gz_emu_from_bits<T>(all[src]) : v;
}
static inline unsigned __ballot_sync(unsigned mask, int pred) {
  const uint64_t *all = gz_emu::warp_exchange(GZ_EMU_VOTE, mask, pred != 0);
  unsigned bits = 0;
  for (unsigned l = 0; l < 32; l++)
    bits |= (unsigned)(all[l] != 0) << l;
  return bits & mask;
}
static inline int __any_sync(unsigned mask, int pred) {
  return __ballot_sync(mask, pred) != 0;
}
static inline int __all_sync(unsigned mask, int pred) {
  return __ballot_sync(mask, pred) == mask; /* mask: every lane (checked) */
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)gz_emu::warp_exchange(GZ_EMU_SYNCWARP, mask, 0);
}
static inline unsigned __activemask(void) { return 0xffffffffu; }
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
static inline int __clzll(long long v) {
  return v ? __builtin_clzll((unsigned long long)v) : 64;
}
static inline int __ffs(int v) { return __builtin_ffs(v); }
static inline unsigned __brev(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++)
    r |= (v >> i & 1u) << (31 - i);
  return r;
}

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
static inline unsigned long long atomicExch(unsigned long long *p, unsigned long long v) {
  return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
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
