/* device_scan.cuh (emulation) - cub::DeviceScan::InclusiveSum with CUB's
 * two-call protocol: a call with d_temp_storage == NULL only sets
 * temp_storage_bytes; the second call needs at least that much device
 * scratch, which it really uses (tile totals), and queues the scan on the
 * stream like any other work. */
#ifndef GZ_EMU_CUB_DEVICE_SCAN_CUH
#define GZ_EMU_CUB_DEVICE_SCAN_CUH

#include <cuda_runtime.h>

namespace cub {

struct DeviceScan {
  template <typename In, typename Out, typename N>
  static cudaError_t InclusiveSum(void *d_temp_storage, size_t &temp_storage_bytes,
                                  In d_in, Out d_out, N num_items,
                                  cudaStream_t stream = 0) {
    const size_t tile = 1024, tiles = ((size_t)num_items + tile - 1) / tile;
    const size_t need = 64 + tiles * sizeof(*d_out);
    if (!d_temp_storage) {
      temp_storage_bytes = need;
      return cudaSuccess;
    }
    if (num_items < 0 || temp_storage_bytes < need ||
        !gz_emu::is_device(d_temp_storage) ||
        (num_items > 0 &&
         (!gz_emu::is_device(&d_in[0]) || !gz_emu::is_device(&d_out[0]))))
      return cudaErrorInvalidValue;
    return gz_emu::enqueue(stream, [=]() {
      typedef typename std::decay<decltype(*d_out)>::type T;
      T *part = (T *)((char *)d_temp_storage + 64), carry = T();
      for (size_t t = 0; t < tiles; t++) { /* tile sums first, as a decoupled scan */
        T s = T();
        for (size_t i = t * tile; i < (size_t)num_items && i < (t + 1) * tile; i++)
          s += d_in[i];
        part[t] = s;
      }
      for (size_t t = 0; t < tiles; t++) {
        T run = carry;
        for (size_t i = t * tile; i < (size_t)num_items && i < (t + 1) * tile; i++)
          d_out[i] = run += d_in[i];
        carry += part[t];
      }
    });
  }
};

} // namespace cub

#endif
