/*
 * codes_indexed.c - the one wire encoding of integer codes of the
 * collectives, on the CPU (layout in kernels/gz_block_walk.h): a u64 offset
 * per segment of GZ_SEG_BLOCKS blocks, then the PACKED blocks of
 * gz_codes_encode(). Every compressed collective sends codes this way, from
 * the host (gz_run_encode_w, the CPU backend) and from the GPU
 * (kernels/codes_cuda.cu, the same bytes), so either side decodes what the
 * other sent, and a receiver can decode the segments in parallel (the GPU
 * does; the CPU walks them in order, each with the ordinary decoder, which
 * checks that it consumes exactly its bytes). Codes are int64, or int32
 * ("narrow", gz_codes_fit32): the bytes are the same.
 */
#include "codec/codec.h"
#include "device/backend.h"

#include "gz_block_walk.h"
#include "gz_device.h"

#define SEG_VALUES ((size_t)GZ_SEG_BLOCKS * GZ_BLOCK)

size_t gz_codes_indexed_bound(size_t n) {
  size_t b = gz_codes_bound(n);
  if (n && !b)
    return 0;
  return 8 * gz_seg_count(n) + b;
}

static size_t seg_len(size_t n, size_t s) {
  size_t first = s * SEG_VALUES;
  return n - first < SEG_VALUES ? n - first : SEG_VALUES;
}

gz_result_t gz_codes_encode_indexed(const void *codes, int narrow, size_t n, void *out,
                                    size_t cap, size_t *out_size) {
  size_t S = gz_seg_count(n), pos = 0;
  uint8_t *o = out;
  if (!out_size || ((!codes || !out) && n))
    return GZ_ERR_ARG;
  *out_size = 0;
  if (cap < gz_codes_indexed_bound(n) || (n && !gz_codes_indexed_bound(n)))
    return GZ_ERR_CAPACITY;
  for (size_t s = 0; s < S; s++) {
    size_t first = s * SEG_VALUES, len = seg_len(n, s), size = 0;
    uint8_t *seg = o + 8 * S + pos;
    gz_result_t rc = narrow ? gz_codes32_encode((const int32_t *)codes + first, len, seg,
                                                gz_codes_bound(len), &size)
                            : gz_codes_encode((const int64_t *)codes + first, len, seg,
                                              gz_codes_bound(len), &size);
    if (rc != GZ_OK)
      return rc;
    gz_put_u64le(o + 8 * s, (uint64_t)pos);
    pos += size;
  }
  *out_size = 8 * S + pos;
  return GZ_OK;
}

/* One segment into acc (int64 or int32 codes from index first). */
static gz_result_t decode_seg(int op, const uint8_t *in, size_t size, void *acc,
                              int narrow, size_t first, size_t len) {
  if (narrow)
    return op == GZ_DEV_OP_REPLACE
               ? gz_codes32_decode(in, size, (int32_t *)acc + first, len)
               : gz_codes32_decode_reduce((gz_op_t)op, in, size, (int32_t *)acc + first,
                                          len);
  return op == GZ_DEV_OP_REPLACE
             ? gz_codes_decode(in, size, (int64_t *)acc + first, len)
             : gz_codes_decode_reduce((gz_op_t)op, in, size, (int64_t *)acc + first, len);
}

gz_result_t gz_codes_decode_indexed(int op, const void *in, size_t size, void *acc,
                                    int narrow, size_t n) {
  size_t S = gz_seg_count(n), paysize;
  const uint8_t *p = in;
  gz_result_t rc = GZ_OK;
  int overflow = 0;
  if ((!in && size) || (!acc && n) || op < GZ_DEV_OP_SUM || op > GZ_DEV_OP_REPLACE)
    return GZ_ERR_ARG;
  if (size < 8 * S || (!n && size))
    return GZ_ERR_CORRUPT;
  paysize = size - 8 * S;
  for (size_t s = 0; s < S; s++) {
    uint64_t start = gz_get_u64le(p + 8 * s);
    uint64_t end = s + 1 < S ? gz_get_u64le(p + 8 * (s + 1)) : (uint64_t)paysize;
    if ((s == 0 && start != 0) || start > end || end > paysize)
      return GZ_ERR_CORRUPT;
    rc = decode_seg(op, p + 8 * S + start, (size_t)(end - start), acc, narrow,
                    s * SEG_VALUES, seg_len(n, s));
    if (rc == GZ_ERR_OVERFLOW)
      overflow = 1;
    else if (rc != GZ_OK)
      return rc;
  }
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}
