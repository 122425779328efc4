/* backend_cuda.c - the CUDA operations of the backend table, thin wrappers
 * over kernels/gz_device.h. Every launch goes on the exec's stream; small
 * results (flags, sizes, ranges) come back through the exec's pinned
 * mirror with one copy and one stream synchronisation, only where the host
 * needs a value. Built in every configuration: without CUDA the launchers
 * are device_none.c's and everything returns GZ_ERR_UNSUPPORTED. */
#include "coll_internal.h"
#include "device/backend.h"

#include "gz_device.h"

#include <string.h>

/* Offsets in the exec's small buffers. */
#define SM_FLAGS 0
#define SM_SIZE 8
#define SM_RANGE 16 /* 3 doubles */
#define SM_ABSMAX 40

static gz_result_t dev_rc(gz_exec_t *ex, int rc) {
  gz_result_t r = rc == GZ_DEV_OK             ? GZ_OK
                  : rc == GZ_DEV_ERR_ARG      ? GZ_ERR_ARG
                  : rc == GZ_DEV_ERR_CAPACITY ? GZ_ERR_CAPACITY
                  : rc == GZ_DEV_ERR_CUDA     ? GZ_ERR_UNSUPPORTED
                                              : GZ_ERR_UNSUPPORTED;
  if (r != GZ_OK && ex->err == GZ_OK)
    ex->err = r;
  return r;
}

static size_t dev_tmp_bytes(size_t n) {
  size_t a = gz_dev_codes_tmp_bytes(n), b = gz_dev_decompress_tmp_bytes(n);
  return a > b ? a : b;
}

static gz_result_t dev_sync(gz_exec_t *ex) {
  gz_result_t rc = ex->err;
  unsigned flags = 0;
  if (rc == GZ_OK &&
      (dev_rc(ex, gz_dev_memcpy_async(ex->h_small + SM_FLAGS, ex->d_small + SM_FLAGS,
                                      sizeof(unsigned), ex->stream)) != GZ_OK ||
       dev_rc(ex, gz_dev_stream_sync(ex->stream)) != GZ_OK))
    rc = ex->err;
  if (rc == GZ_OK) {
    memcpy(&flags, ex->h_small + SM_FLAGS, sizeof flags);
    rc = gz_exec_flags_result(flags);
    if (flags)
      rc = dev_rc(ex, gz_dev_memset_async(ex->d_small + SM_FLAGS, 0, sizeof(unsigned),
                                          ex->stream)) != GZ_OK
               ? ex->err
               : rc;
  } else {
    /* Do not leave work or flags behind a failure: a kernel queued before
     * the failed launch may have set bits a later call would read. */
    gz_dev_stream_sync(ex->stream);
    if (gz_dev_memset_async(ex->d_small + SM_FLAGS, 0, sizeof(unsigned), ex->stream) ==
        GZ_DEV_OK)
      gz_dev_stream_sync(ex->stream);
  }
  ex->err = GZ_OK;
  return rc;
}

/* copy the small results at off (bytes) back and wait */
static gz_result_t fetch(gz_exec_t *ex, size_t off, size_t bytes) {
  if (dev_rc(ex, gz_dev_memcpy_async(ex->h_small + off, ex->d_small + off, bytes,
                                     ex->stream)) != GZ_OK)
    return ex->err;
  return dev_sync(ex);
}

static gz_result_t dev_quantize(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                                double eb, int64_t code_limit, int64_t *codes) {
  return dev_rc(ex, gz_dev_quantize((int)dtype, in, n, eb, (double)code_limit, codes,
                                    ex->d_flags, ex->stream));
}

static gz_result_t dev_dequantize(gz_exec_t *ex, gz_dtype_t dtype, const int64_t *codes,
                                  size_t n, double eb, void *out) {
  return dev_rc(ex, gz_dev_dequantize((int)dtype, codes, n, eb, out, ex->stream));
}

static gz_result_t dev_range(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                             double *lo, double *hi, double *absmax) {
  double r[3];
  gz_result_t rc;
  if (dev_rc(ex, gz_dev_range((int)dtype, in, n, (double *)(ex->d_small + SM_RANGE),
                              ex->tmp, ex->tmp_bytes, ex->stream)) != GZ_OK)
    return dev_sync(ex);
  if ((rc = fetch(ex, SM_RANGE, sizeof r)) != GZ_OK)
    return rc;
  memcpy(r, ex->h_small + SM_RANGE, sizeof r);
  *lo = r[0];
  *hi = r[1];
  *absmax = r[2];
  return GZ_OK;
}

static gz_result_t dev_absmax(gz_exec_t *ex, const int64_t *codes, size_t n,
                              int64_t *out) {
  gz_result_t rc;
  if (dev_rc(ex, gz_dev_codes_absmax(codes, n, (int64_t *)(ex->d_small + SM_ABSMAX),
                                     ex->tmp, ex->tmp_bytes, ex->stream)) != GZ_OK)
    return dev_sync(ex);
  if ((rc = fetch(ex, SM_ABSMAX, sizeof *out)) != GZ_OK)
    return rc;
  memcpy(out, ex->h_small + SM_ABSMAX, sizeof *out);
  return GZ_OK;
}

static gz_result_t dev_encode_async(gz_exec_t *ex, const void *codes, size_t n, void *out,
                                    size_t cap) {
  uint64_t *d_size = (uint64_t *)(ex->d_small + SM_SIZE);
  if (ex->narrow) /* int64 codes only on a device */
    return dev_rc(ex, GZ_DEV_ERR_ARG);
  if (dev_rc(ex, gz_dev_codes_encode(codes, n, out, cap, ex->tmp, ex->tmp_bytes, d_size,
                                     ex->stream)) != GZ_OK)
    return ex->err;
  return dev_rc(ex,
                gz_dev_memcpy_async(ex->size_out, d_size, sizeof *d_size, ex->stream));
}

static gz_result_t dev_quantize_encode_async(gz_exec_t *ex, gz_dtype_t dtype,
                                             const void *in, size_t n, double eb,
                                             int64_t code_limit, int64_t *codes,
                                             void *out, size_t cap) {
  uint64_t *d_size = (uint64_t *)(ex->d_small + SM_SIZE);
  if (dev_rc(ex, gz_dev_quantize_encode((int)dtype, in, n, eb, (double)code_limit, codes,
                                        ex->d_flags, out, cap, ex->tmp, ex->tmp_bytes,
                                        d_size, ex->stream)) != GZ_OK)
    return ex->err;
  return dev_rc(ex,
                gz_dev_memcpy_async(ex->size_out, d_size, sizeof *d_size, ex->stream));
}

static gz_result_t dev_decode_reduce(gz_exec_t *ex, int op, const void *in, size_t size,
                                     void *acc, size_t n) {
  if (ex->narrow)
    return dev_rc(ex, GZ_DEV_ERR_ARG);
  return dev_rc(ex, gz_dev_codes_decode_reduce(op, in, size, acc, n, ex->tmp,
                                               ex->tmp_bytes, ex->d_flags, ex->stream));
}

static gz_result_t dev_reduce(gz_exec_t *ex, int op, int64_t *acc, const int64_t *in,
                              size_t n) {
  return dev_rc(ex, gz_dev_codes_reduce(op, acc, in, n, ex->d_flags, ex->stream));
}

static gz_result_t dev_compress(gz_exec_t *ex, const gz_codec_params_t *params,
                                const void *in, size_t n, void *out, size_t cap,
                                size_t *out_size) {
  uint64_t *d_size = (uint64_t *)(ex->d_small + SM_SIZE), size = 0;
  gz_result_t rc;
  if (!params || params->version != GZ_CODEC_PARAMS_VERSION || !out_size)
    return GZ_ERR_ARG;
  if (dev_rc(ex, gz_dev_compress((int)params->dtype, (int)params->eb_mode,
                                 params->error_bound, params->chunk_len, in, n, out, cap,
                                 ex->tmp, ex->tmp_bytes, d_size, ex->stream)) != GZ_OK)
    return dev_sync(ex);
  if ((rc = fetch(ex, SM_SIZE, sizeof size)) != GZ_OK)
    return rc;
  memcpy(&size, ex->h_small + SM_SIZE, sizeof size);
  *out_size = (size_t)size;
  return GZ_OK;
}

static gz_result_t dev_decompress(gz_exec_t *ex, gz_dtype_t dtype, const void *in,
                                  size_t size, void *out, size_t n) {
  if (dev_rc(ex, gz_dev_decompress((int)dtype, in, size, out, n, ex->tmp, ex->tmp_bytes,
                                   ex->d_flags, ex->stream)) != GZ_OK)
    return dev_sync(ex);
  return dev_sync(ex);
}

static gz_result_t dev_memcpy(gz_exec_t *ex, void *dst, const void *src, size_t bytes) {
  return dev_rc(ex, gz_dev_memcpy_async(dst, src, bytes, ex->stream));
}

const gz_backend_t gz_backend_cuda = {"cuda",           1,
                                      dev_tmp_bytes,    gz_dev_codes_indexed_bound,
                                      dev_quantize,     dev_dequantize,
                                      dev_range,        dev_absmax,
                                      dev_encode_async, dev_decode_reduce,
                                      dev_reduce,       dev_compress,
                                      dev_decompress,   dev_memcpy,
                                      dev_sync,         dev_quantize_encode_async};
