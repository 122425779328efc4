/* device_cuda.cu - run-time side of the GPU backend: device detection,
 * pointer queries, allocation (context creation only), streams, copies and
 * events. The runtime is linked statically, so this works (and reports 0
 * devices) where no driver is installed. Built against kernels/emu/ too
 * (GZ_CUDA_EMU): the same calls then reach the CPU emulation. */
#include "gz_cuda_util.cuh"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static thread_local char last_error[160] = "";

static int fail(cudaError_t err, const char *what) {
  snprintf(last_error, sizeof last_error, "%s: %s", what, cudaGetErrorString(err));
  (void)cudaGetLastError(); /* clear a non-sticky error */
  return GZ_DEV_ERR_CUDA;
}

extern "C" int gz_device_built(void) {
#ifdef GZ_CUDA_EMU
  int n = 0; /* an emulation build is a CPU build unless the device is shown */
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 1
                                                        : ((void)cudaGetLastError(), 0);
#else
  return 1;
#endif
}

extern "C" int gz_device_emulated(void) {
#ifdef GZ_CUDA_EMU
  return 1;
#else
  return 0;
#endif
}

extern "C" int gz_dev_inject_launch_failure(int after) {
#ifdef GZ_CUDA_EMU
  gz_emu::inject_launch_failure(after);
  return GZ_DEV_OK;
#else
  (void)after;
  return GZ_DEV_ERR_UNSUPPORTED;
#endif
}

extern "C" int gz_device_count(char *why, unsigned long whylen) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why && whylen)
      snprintf(why, whylen, "no usable CUDA device (%s)", cudaGetErrorString(err));
    return 0;
  }
  if (n == 0 && why && whylen)
    snprintf(why, whylen, "no CUDA device found");
  return n;
}

extern "C" const char *gz_dev_last_error(void) { return last_error; }

extern "C" int gz_dev_info(int device, char *name, size_t namelen, size_t *global_bytes) {
  cudaDeviceProp prop;
  GZ_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  if (name && namelen)
    snprintf(name, namelen, "%s", prop.name);
  if (global_bytes)
    *global_bytes = prop.totalGlobalMem;
  return GZ_DEV_OK;
}

extern "C" int gz_dev_set(int device) {
  GZ_CUDA_TRY(cudaSetDevice(device));
  return GZ_DEV_OK;
}

extern "C" int gz_dev_get(int *device) {
  GZ_CUDA_TRY(cudaGetDevice(device));
  return GZ_DEV_OK;
}

extern "C" int gz_dev_is_device_ptr(const void *p) {
  cudaPointerAttributes attr;
  if (!p)
    return 0;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

extern "C" int gz_dev_malloc(void **p, size_t bytes) {
  *p = NULL;
  GZ_CUDA_TRY(cudaMalloc(p, bytes ? bytes : 1));
  return GZ_DEV_OK;
}
extern "C" void gz_dev_free(void *p) {
  if (p)
    cudaFree(p);
}
extern "C" int gz_dev_host_alloc(void **p, size_t bytes) {
  *p = NULL;
  GZ_CUDA_TRY(cudaMallocHost(p, bytes ? bytes : 1));
  return GZ_DEV_OK;
}
extern "C" void gz_dev_host_free(void *p) {
  if (p)
    cudaFreeHost(p);
}
extern "C" int gz_dev_stream_create(void **stream) {
  cudaStream_t s = NULL;
  *stream = NULL;
  /* A blocking stream: ordered after the work queued on the legacy default
   * stream before each launch, and that stream's later work after ours. */
  GZ_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
  *stream = (void *)s;
  return GZ_DEV_OK;
}
extern "C" void gz_dev_stream_destroy(void *stream) {
  if (stream)
    cudaStreamDestroy((cudaStream_t)stream);
}
extern "C" int gz_dev_stream_sync(void *stream) {
  GZ_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
  return GZ_DEV_OK;
}
extern "C" int gz_dev_device_sync(void) {
  GZ_CUDA_TRY(cudaDeviceSynchronize());
  return GZ_DEV_OK;
}
extern "C" int gz_dev_memcpy_async(void *dst, const void *src, size_t bytes,
                                   void *stream) {
  if (!bytes)
    return GZ_DEV_OK;
  GZ_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream));
  return GZ_DEV_OK;
}
extern "C" int gz_dev_memset_async(void *dst, int value, size_t bytes, void *stream) {
  if (!bytes)
    return GZ_DEV_OK;
  GZ_CUDA_TRY(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream));
  return GZ_DEV_OK;
}
extern "C" int gz_dev_event_create(void **ev) {
  cudaEvent_t e = NULL;
  *ev = NULL;
  GZ_CUDA_TRY(cudaEventCreate(&e));
  *ev = (void *)e;
  return GZ_DEV_OK;
}
extern "C" void gz_dev_event_destroy(void *ev) {
  if (ev)
    cudaEventDestroy((cudaEvent_t)ev);
}
extern "C" int gz_dev_event_record(void *ev, void *stream) {
  GZ_CUDA_TRY(cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream));
  return GZ_DEV_OK;
}
extern "C" int gz_dev_event_elapsed_ms(void *start, void *stop, float *ms) {
  GZ_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)stop));
  GZ_CUDA_TRY(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)stop));
  return GZ_DEV_OK;
}

/* ---- shared by the launchers (gz_cuda_util.cuh) ---------------------------- */

int gz_dev_fail_(cudaError_t err, const char *what) { return fail(err, what); }

unsigned gz_grid_max(void) {
  const char *e = getenv("GZ_DEV_GRID_MAX");
  long v = e ? strtol(e, NULL, 10) : 0;
  return v >= 1 && v <= 0x7fffffffL ? (unsigned)v : 0x7fffffffu;
}
