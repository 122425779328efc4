/* device_cuda.cu - run-time detection of CUDA devices. The runtime is linked
 * statically, so this works (and reports 0) where no driver is installed. */
#include "gz_device.h"

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int gz_device_built(void) { return 1; }

extern "C" int gz_device_count(char *why, unsigned long whylen) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why && whylen)
      snprintf(why, whylen, "no usable CUDA device (%s)", cudaGetErrorString(err));
    return 0;
  }
  if (n == 0 && why && whylen)
    snprintf(why, whylen, "no CUDA device found");
  return n;
}
