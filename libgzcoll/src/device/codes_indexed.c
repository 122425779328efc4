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

/* Bytes of one code. */
static size_t width(int narrow) { return narrow ? sizeof(int32_t) : sizeof(int64_t); }

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
    gz_result_t rc =
        gz_codes_encode_w((const char *)codes + first * width(narrow), narrow, len,
                          o + 8 * S + pos, gz_codes_bound(len), &size);
    if (rc != GZ_OK)
      return rc;
    gz_put_u64le(o + 8 * s, (uint64_t)pos);
    pos += size;
  }
  *out_size = 8 * S + pos;
  return GZ_OK;
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
    /* REPLACE decodes; SUM, MAX, MIN (GZ_OP_*'s values) decode and combine */
    rc = gz_codes_decode_w(op != GZ_DEV_OP_REPLACE, (gz_op_t)(op % GZ_DEV_OP_REPLACE),
                           p + 8 * S + start, (size_t)(end - start),
                           (char *)acc + s * SEG_VALUES * width(narrow), narrow,
                           seg_len(n, s));
    if (rc == GZ_ERR_OVERFLOW)
      overflow = 1;
    else if (rc != GZ_OK)
      return rc;
  }
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}
