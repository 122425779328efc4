/*
 * codes.c - the integer-domain API: quantize once, encode/decode codes
 * losslessly, combine codes exactly, dequantize once. Encoded codes are
 * PACKED blocks (kernels/gz_block.h) back to back, with no header: the
 * collectives know the count.
 */
#include "codec/codec.h"

#include <math.h>

gz_result_t gz_quantize(gz_dtype_t dtype, const void *in, size_t n, double eb,
                        int64_t code_limit, int64_t *codes) {
  gz_quant_t qp;
  int ok = 1;
  if ((!in || !codes) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || code_limit <= 0 || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, (double)code_limit);
  if (dtype == GZ_FLOAT32) {
    const float *x = in;
    for (size_t i = 0; i < n; i++)
      ok &= gz_quantize_one_f32(x[i], &qp, 0, &codes[i]);
  } else {
    const double *x = in;
    for (size_t i = 0; i < n; i++)
      ok &= gz_quantize_one_f64(x[i], &qp, 0, &codes[i]);
  }
  return ok ? GZ_OK : GZ_ERR_RANGE;
}

gz_result_t gz_dequantize(gz_dtype_t dtype, const int64_t *codes, size_t n, double eb,
                          void *out) {
  gz_quant_t qp;
  if ((!codes || !out) && n)
    return GZ_ERR_ARG;
  if (!(eb > 0) || !isfinite(eb) || !gz_dtype_size(dtype))
    return GZ_ERR_ARG;
  qp = gz_quant_make(eb, 0);
  if (dtype == GZ_FLOAT32) {
    float *x = out;
    for (size_t i = 0; i < n; i++)
      x[i] = gz_dequant_f32(codes[i], &qp);
  } else {
    double *x = out;
    for (size_t i = 0; i < n; i++)
      x[i] = gz_dequant_f64(codes[i], &qp);
  }
  return GZ_OK;
}

size_t gz_codes_bound(size_t n) {
  size_t blocks = (n + GZ_BLOCK - 1) / GZ_BLOCK;
  if (n > SIZE_MAX / 16)
    return 0;
  return blocks * 3 + 8 * n;
}

gz_result_t gz_codes_encode(const int64_t *codes, size_t n, void *out, size_t cap,
                            size_t *out_size) {
  uint8_t *p = out;
  if ((!codes || !out) && n)
    return GZ_ERR_ARG;
  if (!out_size)
    return GZ_ERR_ARG;
  if (cap < gz_codes_bound(n))
    return GZ_ERR_CAPACITY;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    p += gz_block_encode_codes(codes + i, len, p);
  }
  *out_size = (size_t)(p - (uint8_t *)out);
  return GZ_OK;
}

/* acc[i] = op(acc[i], in[i]) for one block; returns 1 on SUM overflow. */
static int reduce_block(gz_op_t op, int64_t *acc, const int64_t *in, int n) {
  uint64_t overflow = 0;
  switch (op) {
  case GZ_OP_SUM:
    for (int i = 0; i < n; i++) {
      uint64_t s = (uint64_t)acc[i] + (uint64_t)in[i];
      overflow |= ((uint64_t)acc[i] ^ s) & ((uint64_t)in[i] ^ s);
      acc[i] = (int64_t)s;
    }
    break;
  case GZ_OP_MAX:
    for (int i = 0; i < n; i++)
      acc[i] = in[i] > acc[i] ? in[i] : acc[i];
    break;
  case GZ_OP_MIN:
    for (int i = 0; i < n; i++)
      acc[i] = in[i] < acc[i] ? in[i] : acc[i];
    break;
  }
  return (int)(overflow >> 63);
}

gz_result_t gz_codes_decode(const void *in, size_t size, int64_t *codes, size_t n) {
  const uint8_t *p = in;
  size_t pos = 0;
  if ((!in && size) || (!codes && n))
    return GZ_ERR_ARG;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    size_t used = gz_block_decode_codes(p + pos, size - pos, len, codes + i);
    if (!used)
      return GZ_ERR_CORRUPT;
    pos += used;
  }
  return pos == size ? GZ_OK : GZ_ERR_CORRUPT;
}

gz_result_t gz_codes_decode_reduce(gz_op_t op, const void *in, size_t size, int64_t *acc,
                                   size_t n) {
  const uint8_t *p = in;
  size_t pos = 0;
  int overflow = 0;
  if ((!in && size) || (!acc && n) || op < GZ_OP_SUM || op > GZ_OP_MIN)
    return GZ_ERR_ARG;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int64_t block[GZ_BLOCK];
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    size_t used = gz_block_decode_codes(p + pos, size - pos, len, block);
    if (!used)
      return GZ_ERR_CORRUPT;
    pos += used;
    overflow |= reduce_block(op, acc + i, block, len);
  }
  if (pos != size)
    return GZ_ERR_CORRUPT;
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}

gz_result_t gz_codes_reduce(gz_op_t op, int64_t *acc, const int64_t *in, size_t n) {
  int overflow = 0;
  if ((!acc || !in) && n)
    return GZ_ERR_ARG;
  if (op < GZ_OP_SUM || op > GZ_OP_MIN)
    return GZ_ERR_ARG;
  for (size_t i = 0; i < n; i += GZ_BLOCK) {
    int len = (int)(n - i < GZ_BLOCK ? n - i : GZ_BLOCK);
    overflow |= reduce_block(op, acc + i, in + i, len);
  }
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}
