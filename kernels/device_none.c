/* device_none.c - the GPU backend when CUDA was not compiled in: every call
 * answers "unsupported" (or 0 / nothing), so callers take their CPU path. */
#include "gz_device.h"

#include <stdio.h>

int gz_device_built(void) { return 0; }
int gz_device_emulated(void) { return 0; }
int gz_dev_inject_launch_failure(int after) { return GZ_DEV_ERR_UNSUPPORTED; }

int gz_device_count(char *why, unsigned long whylen) {
  if (why && whylen)
    snprintf(why, whylen, "this gzstack was built without CUDA");
  return 0;
}

const char *gz_dev_last_error(void) { return "built without CUDA"; }

int gz_dev_info(int device, char *name, size_t namelen, size_t *global_bytes) {
  if (name && namelen)
    name[0] = '\0';
  if (global_bytes)
    *global_bytes = 0;
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_set(int device) { return GZ_DEV_ERR_UNSUPPORTED; }
int gz_dev_get(int *device) {
  if (device)
    *device = -1;
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_is_device_ptr(const void *p) { return 0; }
int gz_dev_malloc(void **p, size_t bytes) {
  if (p)
    *p = NULL;
  return GZ_DEV_ERR_UNSUPPORTED;
}
void gz_dev_free(void *p) {}
int gz_dev_host_alloc(void **p, size_t bytes) {
  if (p)
    *p = NULL;
  return GZ_DEV_ERR_UNSUPPORTED;
}
void gz_dev_host_free(void *p) {}
int gz_dev_stream_create(void **stream) {
  if (stream)
    *stream = NULL;
  return GZ_DEV_ERR_UNSUPPORTED;
}
void gz_dev_stream_destroy(void *stream) {}
int gz_dev_stream_sync(void *stream) { return GZ_DEV_ERR_UNSUPPORTED; }
int gz_dev_device_sync(void) { return GZ_DEV_ERR_UNSUPPORTED; }
int gz_dev_memcpy_async(void *dst, const void *src, size_t bytes, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_memset_async(void *dst, int value, size_t bytes, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_event_create(void **ev) {
  if (ev)
    *ev = NULL;
  return GZ_DEV_ERR_UNSUPPORTED;
}
void gz_dev_event_destroy(void *ev) {}
int gz_dev_event_record(void *ev, void *stream) { return GZ_DEV_ERR_UNSUPPORTED; }
int gz_dev_event_elapsed_ms(void *start, void *stop, float *ms) {
  return GZ_DEV_ERR_UNSUPPORTED;
}

size_t gz_dev_compress_tmp_bytes(int dtype, size_t n, uint32_t chunk_len) { return 0; }
int gz_dev_compress(int dtype, int eb_mode, double error_bound, uint32_t chunk_len,
                    const void *d_in, size_t n, void *d_out, size_t cap, void *d_tmp,
                    size_t tmp_bytes, uint64_t *d_size, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
size_t gz_dev_decompress_tmp_bytes(size_t n) { return 0; }
int gz_dev_decompress(int dtype, const void *d_in, size_t size, void *d_out, size_t n,
                      void *d_tmp, size_t tmp_bytes, unsigned *d_flags, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_quantize(int dtype, const void *d_in, size_t n, double eb, double code_limit,
                    int64_t *d_codes, unsigned *d_flags, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_dequantize(int dtype, const int64_t *d_codes, size_t n, double eb, void *d_out,
                      void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
size_t gz_dev_codes_tmp_bytes(size_t n) { return 0; }
int gz_dev_range(int dtype, const void *d_in, size_t n, double *d_out3, void *d_tmp,
                 size_t tmp_bytes, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_codes_absmax(const int64_t *d_codes, size_t n, int64_t *d_out, void *d_tmp,
                        size_t tmp_bytes, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
size_t gz_dev_codes_indexed_bound(size_t n) { return 0; }
int gz_dev_codes_encode(const int64_t *d_codes, size_t n, void *d_out, size_t cap,
                        void *d_tmp, size_t tmp_bytes, uint64_t *d_size, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_quantize_encode(int dtype, const void *d_in, size_t n, double eb,
                           double code_limit, int64_t *d_codes, unsigned *d_flags,
                           void *d_out, size_t cap, void *d_tmp, size_t tmp_bytes,
                           uint64_t *d_size, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_codes_decode_reduce(int op, const void *d_in, size_t size, int64_t *d_acc,
                               size_t n, void *d_tmp, size_t tmp_bytes, unsigned *d_flags,
                               void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
int gz_dev_codes_reduce(int op, int64_t *d_acc, const int64_t *d_in, size_t n,
                        unsigned *d_flags, void *stream) {
  return GZ_DEV_ERR_UNSUPPORTED;
}
