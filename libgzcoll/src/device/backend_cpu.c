/* backend_cpu.c - the CPU operations of the backend table: the library's
 * own C codec (codec/) and integer-domain code, run at once on the calling
 * thread. Only the data-dependent flags are deferred to sync(), as on the
 * device, so the collectives behave the same on both. */
#include "coll_internal.h"
#include "device/backend.h"

#include "gz_block.h"
#include "gz_device.h"

#include <math.h>
#include <string.h>

gz_result_t gz_exec_flags_result(unsigned flags) {
  if (flags & GZ_DEV_FLAG_CORRUPT)
    return GZ_ERR_CORRUPT;
  if (flags & GZ_DEV_FLAG_OVERFLOW)
    return GZ_ERR_OVERFLOW;
  if (flags & GZ_DEV_FLAG_ARG)
    return GZ_ERR_ARG;
  if (flags & GZ_DEV_FLAG_ESCAPE)
    return GZ_ERR_RANGE;
  return GZ_OK;
}

gz_result_t gz_exec_encode(gz_exec_t *ex, const void *codes, size_t n, void *out,
                           size_t cap, size_t *size) {
  gz_result_t rc = ex->be->encode_async(ex, codes, n, out, cap), rs = ex->be->sync(ex);
  *size = rc == GZ_OK && rs == GZ_OK ? (size_t)*ex->size_out : 0;
  return rc != GZ_OK ? rc : rs;
}

static unsigned flag_of(gz_result_t rc) {
  switch (rc) {
  case GZ_OK:
    return 0;
  case GZ_ERR_RANGE:
    return GZ_DEV_FLAG_ESCAPE;
  case GZ_ERR_OVERFLOW:
    return GZ_DEV_FLAG_OVERFLOW;
  case GZ_ERR_CORRUPT:
    return GZ_DEV_FLAG_CORRUPT;
  default:
    return GZ_DEV_FLAG_ARG;
  }
}

static size_t cpu_tmp_bytes(size_t n) { return 0; }

/* gz_quantize, then the collectives' tie rule (coll_common.c): a rejected
 * value escapes only when it is not finite or its code is out of range. */
static gz_result_t cpu_quantize(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                                double eb, int64_t code_limit, int64_t *codes) {
  gz_quant_t qp;
  int escape = 0;
  if (!gz_dtype_size(dtype) || !(eb > 0) || !isfinite(eb) || code_limit <= 0 ||
      ((!in || !codes) && n))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, (double)code_limit);
  for (size_t i = 0; i < n; i++) {
    double v =
        dtype == GZ_FLOAT32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
    if (dtype == GZ_FLOAT32)
      gz_quantize_one_f32(((const float *)in)[i], &qp, 0, &codes[i]);
    else
      gz_quantize_one_f64(v, &qp, 0, &codes[i]);
    escape |= !(fabs(rint(v * qp.inv_step)) <= qp.code_max);
  }
  if (escape)
    ex->flags |= GZ_DEV_FLAG_ESCAPE;
  return GZ_OK;
}

static gz_result_t cpu_dequantize(gz_exec_t *ex, gz_dtype_t dtype, const int64_t *codes,
                                  size_t n, double eb, void *out) {
  return gz_dequantize(dtype, codes, n, eb, out);
}

static gz_result_t cpu_range(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                             double *lo, double *hi, double *absmax) {
  gz_local_range(dtype, in, n, lo, hi, absmax);
  return GZ_OK;
}

static gz_result_t cpu_absmax(gz_exec_t *ex, const int64_t *codes, size_t n,
                              int64_t *out) {
  *out = gz_codes_absmax(codes, n);
  return GZ_OK;
}

static gz_result_t cpu_encode_async(gz_exec_t *ex, const void *codes, size_t n, void *out,
                                    size_t cap) {
  size_t size = 0;
  gz_result_t rc = gz_codes_encode_indexed(codes, ex->narrow, n, out, cap, &size);
  *ex->size_out = size;
  return rc;
}

static gz_result_t cpu_quantize_encode_async(gz_exec_t *ex, gz_dtype_t dtype,
                                             const void *in, size_t n, double eb,
                                             int64_t code_limit, int64_t *codes,
                                             void *out, size_t cap) {
  gz_result_t rc = cpu_quantize(ex, dtype, in, n, eb, code_limit, codes);
  return rc == GZ_OK ? cpu_encode_async(ex, codes, n, out, cap) : rc;
}

static gz_result_t cpu_decode_reduce(gz_exec_t *ex, int op, const void *in, size_t size,
                                     void *acc, size_t n) {
  gz_result_t rc = gz_codes_decode_indexed(op, in, size, acc, ex->narrow, n);
  if (rc == GZ_ERR_ARG)
    return rc;
  ex->flags |= flag_of(rc);
  return GZ_OK;
}

static gz_result_t cpu_reduce(gz_exec_t *ex, int op, int64_t *acc, const int64_t *in,
                              size_t n) {
  gz_result_t rc;
  if (op == GZ_DEV_OP_REPLACE) {
    if (n)
      memmove(acc, in, n * sizeof *acc);
    return GZ_OK;
  }
  rc = gz_codes_reduce((gz_op_t)op, acc, in, n);
  if (rc == GZ_ERR_ARG)
    return rc;
  ex->flags |= flag_of(rc);
  return GZ_OK;
}

static gz_result_t cpu_compress(gz_exec_t *ex, const gz_codec_params_t *params,
                                const void *in, size_t n, void *out, size_t cap,
                                size_t *out_size) {
  return gz_compress(params, in, n, out, cap, out_size);
}

static gz_result_t cpu_decompress(gz_exec_t *ex, gz_dtype_t dtype, const void *in,
                                  size_t size, void *out, size_t n) {
  gz_stream_info_t info;
  gz_result_t rc = gz_stream_info(in, size, &info);
  if (rc == GZ_OK && info.dtype != dtype)
    rc = GZ_ERR_ARG;
  return rc == GZ_OK ? gz_decompress(in, size, out, n) : rc;
}

static gz_result_t cpu_memcpy(gz_exec_t *ex, void *dst, const void *src, size_t bytes) {
  if (bytes && dst != src)
    memmove(dst, src, bytes);
  return GZ_OK;
}

static gz_result_t cpu_sync(gz_exec_t *ex) {
  gz_result_t rc = ex->err != GZ_OK ? ex->err : gz_exec_flags_result(ex->flags);
  ex->err = GZ_OK;
  ex->flags = 0;
  return rc;
}

const gz_backend_t gz_backend_cpu = {"cpu",
                                     0,
                                     cpu_tmp_bytes,
                                     gz_codes_indexed_bound,
                                     cpu_quantize,
                                     cpu_dequantize,
                                     cpu_range,
                                     cpu_absmax,
                                     cpu_encode_async,
                                     cpu_decode_reduce,
                                     cpu_reduce,
                                     cpu_compress,
                                     cpu_decompress,
                                     cpu_memcpy,
                                     cpu_sync,
                                     cpu_quantize_encode_async};
