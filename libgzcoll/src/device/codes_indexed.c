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

void gz_codes_indexed_begin(gz_indexed_put_t *w, void *out, size_t n) {
  w->out = out;
  w->n = n;
  w->S = gz_seg_count(n);
  w->done = w->pos = 0;
}

gz_result_t gz_codes_indexed_put(gz_indexed_put_t *w, const void *codes, int narrow,
                                 size_t len) {
  const char *c = codes;
  if (len > w->n - w->done)
    return GZ_ERR_ARG;
  while (len > 0) { /* a segment at a time: its index entry at its start */
    size_t in_seg = w->done % SEG_VALUES,
           take = len < SEG_VALUES - in_seg ? len : SEG_VALUES - in_seg, size = 0;
    gz_result_t rc;
    if (!in_seg)
      gz_put_u64le(w->out + 8 * (w->done / SEG_VALUES), (uint64_t)w->pos);
    rc = gz_codes_encode_w(c, narrow, take, w->out + 8 * w->S + w->pos,
                           gz_codes_bound(take), &size);
    if (rc != GZ_OK)
      return rc;
    w->pos += size;
    w->done += take;
    c += take * width(narrow);
    len -= take;
  }
  return GZ_OK;
}

size_t gz_codes_indexed_size(const gz_indexed_put_t *w) { return 8 * w->S + w->pos; }

gz_result_t gz_codes_encode_indexed(const void *codes, int narrow, size_t n, void *out,
                                    size_t cap, size_t *out_size) {
  gz_indexed_put_t w;
  gz_result_t rc;
  if (!out_size || ((!codes || !out) && n))
    return GZ_ERR_ARG;
  *out_size = 0;
  if (cap < gz_codes_indexed_bound(n) || (n && !gz_codes_indexed_bound(n)))
    return GZ_ERR_CAPACITY;
  gz_codes_indexed_begin(&w, out, n);
  rc = gz_codes_indexed_put(&w, codes, narrow, n);
  if (rc == GZ_OK)
    *out_size = gz_codes_indexed_size(&w);
  return rc;
}

/* The segments' index of a message of n codes: segment s's payload is
 * [*start, *end) of the bytes after the index. */
static gz_result_t seg_bounds(const uint8_t *p, size_t size, size_t n, size_t s,
                              uint64_t *start, uint64_t *end) {
  size_t S = gz_seg_count(n), paysize = size - 8 * S;
  *start = gz_get_u64le(p + 8 * s);
  *end = s + 1 < S ? gz_get_u64le(p + 8 * (s + 1)) : (uint64_t)paysize;
  return (s == 0 && *start != 0) || *start > *end || *end > paysize ? GZ_ERR_CORRUPT
                                                                    : GZ_OK;
}

gz_result_t gz_codes_decode_indexed(int op, const void *in, size_t size, void *acc,
                                    int narrow, size_t n) {
  size_t S = gz_seg_count(n);
  const uint8_t *p = in;
  gz_result_t rc = GZ_OK;
  int overflow = 0;
  if ((!in && size) || (!acc && n) || op < GZ_DEV_OP_SUM || op > GZ_DEV_OP_REPLACE)
    return GZ_ERR_ARG;
  if (size < 8 * S || (!n && size))
    return GZ_ERR_CORRUPT;
  for (size_t s = 0; s < S; s++) {
    uint64_t start, end;
    if (seg_bounds(p, size, n, s, &start, &end) != GZ_OK)
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

/* Decode every segment straight into values: with acc (int32 with narrow)
 * combined with it by op first (acc not written), else as they are. */
static gz_result_t indexed_values(int op, const void *in, size_t size, const void *acc,
                                  int narrow, gz_dtype_t dtype, size_t n, double eb,
                                  void *out, int64_t *amax) {
  size_t S = gz_seg_count(n), esz = gz_dtype_size(dtype);
  const uint8_t *p = in;
  int64_t m = 0;
  int overflow = 0;
  if ((!in && size) || (!out && n) || (acc == NULL && op != GZ_DEV_OP_REPLACE) || !amax ||
      !esz || op < GZ_DEV_OP_SUM || op > GZ_DEV_OP_REPLACE)
    return GZ_ERR_ARG;
  *amax = 0;
  if (size < 8 * S || (!n && size))
    return GZ_ERR_CORRUPT;
  for (size_t s = 0; s < S; s++) {
    uint64_t start, end;
    int64_t a = 0;
    const uint8_t *seg = p + 8 * S;
    char *o = (char *)out + s * SEG_VALUES * esz;
    gz_result_t rc = seg_bounds(p, size, n, s, &start, &end);
    if (rc == GZ_OK && op == GZ_DEV_OP_REPLACE)
      rc = gz_codes_decode_values(seg + start, (size_t)(end - start), dtype,
                                  seg_len(n, s), eb, o, &a);
    else if (rc == GZ_OK)
      rc = gz_codes_decode_reduce_values((gz_op_t)op, seg + start, (size_t)(end - start),
                                         (const char *)acc +
                                             s * SEG_VALUES * width(narrow),
                                         narrow, dtype, seg_len(n, s), eb, o, &a);
    if (rc == GZ_ERR_OVERFLOW)
      overflow = 1;
    else if (rc != GZ_OK)
      return rc;
    m = a > m ? a : m;
  }
  *amax = m;
  return overflow ? GZ_ERR_OVERFLOW : GZ_OK;
}

gz_result_t gz_codes_decode_indexed_values(const void *in, size_t size, gz_dtype_t dtype,
                                           size_t n, double eb, void *out,
                                           int64_t *amax) {
  return indexed_values(GZ_DEV_OP_REPLACE, in, size, NULL, 0, dtype, n, eb, out, amax);
}

gz_result_t gz_codes_decode_indexed_reduce_values(int op, const void *in, size_t size,
                                                  const void *acc, int narrow,
                                                  gz_dtype_t dtype, size_t n, double eb,
                                                  void *out, int64_t *amax) {
  if (op == GZ_DEV_OP_REPLACE)
    return GZ_ERR_ARG;
  return indexed_values(op, in, size, acc, narrow, dtype, n, eb, out, amax);
}
