/*
 * device_staging.c - the public helpers for callers that put their data on
 * the GPU themselves (gzcoll.h: gz_device_available, gz_device_pool_bytes,
 * gz_device_malloc, gz_device_free, gz_device_copy). Thin wrappers over the
 * kernels' device layer, so a program needs no internal header to size a
 * context's device pool or to stage a buffer.
 */
#include "gzcoll.h"

#include "gz_device.h"

#include <stdio.h>

int gz_device_available(char *why, size_t whylen) {
  if (!gz_device_built()) {
    if (why && whylen)
      snprintf(why, whylen, "this build has no CUDA device support");
    return -1;
  }
  return gz_device_count(why, (unsigned long)whylen);
}

size_t gz_device_pool_bytes(size_t count) {
  /* the codes of the call, two indexed encodings (the exchange's send and
   * receive), the scratch of the code kernels, and 1 MiB for the rest */
  return count * sizeof(int64_t) + 2 * gz_dev_codes_indexed_bound(count) +
         gz_dev_codes_tmp_bytes(count) + ((size_t)1 << 20);
}

gz_result_t gz_device_malloc(void **ptr, size_t bytes) {
  if (!ptr)
    return GZ_ERR_ARG;
  *ptr = NULL;
  return gz_dev_malloc(ptr, bytes) == GZ_DEV_OK ? GZ_OK : GZ_ERR_UNSUPPORTED;
}

void gz_device_free(void *ptr) { gz_dev_free(ptr); }

gz_result_t gz_device_copy(void *dst, const void *src, size_t bytes) {
  if (gz_dev_memcpy_async(dst, src, bytes, NULL) != GZ_DEV_OK ||
      gz_dev_stream_sync(NULL) != GZ_DEV_OK)
    return GZ_ERR_UNSUPPORTED;
  return GZ_OK;
}
