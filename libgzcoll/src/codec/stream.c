/*
 * stream.c - the self-describing compressed stream, format versions 1, 2 and 3.
 *
 * Format version 3 (written when params->predictor is GZ_PRED_NONE, and by
 * the GPU codec), and version 1 (written before 2026-11-24, still read):
 * Layout, all integers little-endian:
 *   off  size  field
 *     0     4  magic "GZCS"
 *     4     1  format version (3, or 1)
 *     5     1  dtype (1 = float32, 2 = float64)
 *     6     1  error-bound mode (0 = ABS, 1 = REL)
 *     7     1  flags (0)
 *     8     8  error bound as given (double)
 *    16     8  absolute bound used, 0 = lossless (double)
 *    24     8  value count
 *    32     4  values per chunk (multiple of GZ_BLOCK)
 *    36     4  chunk count = ceil(count / chunk_len)
 *    40     4  CRC-32 of bytes 0..39
 *    44  8*C  chunk index: per chunk, compressed size (u32) and CRC-32 (u32)
 *   ...     4  CRC-32 of the chunk index
 *   ...        chunks, back to back; each is a sequence of blocks
 *              (kernels/gz_block.h), ceil(len / GZ_BLOCK) of them; in
 *              version 3 they are preceded by the chunk's segment table:
 *              S = ceil(blocks / GZ_STREAM_SEG_BLOCKS) segments, 4 (S - 1)
 *              bytes, the offset (u32) of each segment's first block after
 *              the first, relative to the end of the table. Chunk sizes and
 *              CRCs in the index cover the table. A chunk of at most
 *              GZ_STREAM_SEG_BLOCKS blocks has no table (its bytes are those
 *              of version 1). The table lets a GPU find every block start
 *              with one walk per segment instead of one per chunk.
 *
 * Format version 2 (any other predictor; chunk2.c, docs/codec.md): the same
 * first 40 bytes with version 2, where "values per chunk" is a whole number of
 * slabs along the slowest dimension of the box below (it need not be a
 * multiple of GZ_BLOCK), then
 *    40     4  reserved (0)
 *    44    24  the data as a 3-D box d0 x d1 x d2 (u64 each, C order; leading
 *              1s for 1-D and 2-D data; d0 d1 d2 = value count)
 *    68     4  CRC-32 of bytes 0..67
 *    72        chunk index and its CRC as in version 1, then the chunks
 *              (chunk2.c). A chunk covers whole slabs: along d0 when d0 > 1,
 *              else along d1, else along d2.
 *
 * On the host, format-1 blocks are written and read by values.c (the bytes of
 * kernels/gz_block.h, computed with AVX2 where the CPU has it) and every CRC-32
 * above is zlib's, computed by crc32.c.
 *
 * Chunks are independent: compressed in parallel (each into its worst-case
 * slot of the output, then compacted in place, so nothing is allocated; one
 * thread writes format-1 chunks back to back) and
 * decompressed in parallel after their checksums are verified.
 */
#include "codec/codec.h"

#include "codec/chunk2.h"

#include "gz_block.h"
#include "gz_block_walk.h" /* gz_put_u32le ... gz_get_u64le */

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define GZ_HEADER2_SIZE 72
#define GZ_CHUNK2_DEFAULT (1u << 21)

static double get_f64(const uint8_t *p) {
  uint64_t v = gz_get_u64le(p);
  double d;
  memcpy(&d, &v, 8);
  return d;
}

static uint32_t chunk_len_of(const gz_codec_params_t *p) {
  return p->chunk_len ? p->chunk_len : GZ_CHUNK_DEFAULT;
}

/* Worst case of a chunk, segment table included (4 (ceil(B / G) - 1) <=
 * 4 floor(B / G) bytes, and the floors of all chunks sum to at most that of
 * the whole stream's blocks). */
static size_t chunk_bound(size_t values, size_t elem) {
  size_t blocks = (values + GZ_BLOCK - 1) / GZ_BLOCK;
  return blocks + values * elem + 4 * (blocks / GZ_STREAM_SEG_BLOCKS);
}

/* A version-3 chunk: the segment table, then each segment's blocks. */
static size_t encode_chunk(gz_dtype_t dtype, const uint8_t *x, size_t len,
                           const gz_quant_t *qp, uint8_t *out) {
  size_t elem = gz_dtype_size(dtype), segs = gz_stream_segs(len);
  size_t table = gz_stream_table_bytes(len), pos = 0, seg_vals;
  seg_vals = (size_t)GZ_STREAM_SEG_BLOCKS * GZ_BLOCK;
  for (size_t s = 0; s < segs; s++) {
    size_t first = s * seg_vals, vals = len - first < seg_vals ? len - first : seg_vals;
    if (s)
      gz_put_u32le(out + 4 * (s - 1), (uint32_t)pos);
    pos += gz_encode_values(dtype, x + first * elem, vals, qp, out + table + pos);
  }
  return table + pos;
}

/* Blocks of a version-3 chunk (csize bytes at in): each segment must decode
 * exactly the bytes its table entries give it. */
static gz_result_t decode_chunk3(gz_dtype_t dtype, const uint8_t *in, size_t csize,
                                 size_t len, const gz_quant_t *qp, uint8_t *out) {
  size_t elem = gz_dtype_size(dtype), segs = gz_stream_segs(len);
  size_t table = gz_stream_table_bytes(len), seg_vals, paysize;
  seg_vals = (size_t)GZ_STREAM_SEG_BLOCKS * GZ_BLOCK;
  if (csize < table)
    return GZ_ERR_CORRUPT;
  paysize = csize - table;
  for (size_t s = 0; s < segs; s++) {
    size_t first = s * seg_vals, vals = len - first < seg_vals ? len - first : seg_vals;
    size_t start = s ? gz_get_u32le(in + 4 * (s - 1)) : 0;
    size_t end = s + 1 < segs ? gz_get_u32le(in + 4 * s) : paysize;
    if (start > end || end > paysize ||
        gz_decode_values(dtype, in + table + start, end - start, vals, qp,
                         out + first * elem) != GZ_OK)
      return GZ_ERR_CORRUPT;
  }
  return GZ_OK;
}

size_t gz_compress_bound(gz_dtype_t dtype, size_t n, uint32_t chunk_len) {
  size_t elem = gz_dtype_size(dtype), chunks, total;
  if (!elem)
    return 0;
  if (!chunk_len)
    chunk_len = GZ_CHUNK_DEFAULT;
  chunks = n / chunk_len + (n % chunk_len != 0);
  if (n > (SIZE_MAX - 4096) / (elem + 2) || chunks > SIZE_MAX / 16)
    return 0;
  total = GZ_STREAM_HEADER + 8 * chunks + 4 + chunk_bound(n, elem);
  /* format 2: chunks of more than half the target, 2 more bytes each */
  chunks = 2 * (n / (chunk_len > GZ_CHUNK2_DEFAULT ? chunk_len : GZ_CHUNK2_DEFAULT)) + 2;
  chunks = chunks > 2 * (n / chunk_len) + 2 ? chunks : 2 * (n / chunk_len) + 2;
  if (total < GZ_HEADER2_SIZE + 11 * chunks + 4 + chunk_bound(n, elem))
    total = GZ_HEADER2_SIZE + 11 * chunks + 4 + chunk_bound(n, elem);
  return total;
}

/* Absolute bound from the mode: REL scales by the range of finite values. */
static double absolute_bound(const gz_codec_params_t *p, const void *in, size_t n) {
  double lo = INFINITY, hi = -INFINITY;
  if (p->eb_mode == GZ_EB_ABS || p->error_bound == 0)
    return p->error_bound;
  if (p->dtype == GZ_FLOAT32) {
    const float *x = in;
    for (size_t i = 0; i < n; i++) {
      if (isfinite(x[i])) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
      }
    }
  } else {
    const double *x = in;
    for (size_t i = 0; i < n; i++) {
      if (isfinite(x[i])) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
      }
    }
  }
  /* scaled before subtracting: hi - lo may overflow near DBL_MAX */
  return hi > lo ? p->error_bound * hi - p->error_bound * lo : 0.0;
}

gz_quant_t gz_codec_quant(double abs_bound) {
  return gz_quant_make(abs_bound, GZ_CODE_MAX_STREAM);
}

/* The box of a format-2 stream and its chunking: d from the caller's shape
 * (leading dimensions folded), then flattened until one slab fits a chunk. */
/* The chunks, each coded into its worst-case slot of `slot` bytes, moved
 * back to back in place; the index gets its CRC. Returns the data bytes. */
static size_t compact_chunks(uint8_t *index, size_t nchunks, uint8_t *data, size_t slot) {
  size_t pos = 0;
  for (size_t c = 0; c < nchunks; c++) {
    size_t size = gz_get_u32le(index + 8 * c);
    if (pos != c * slot)
      memmove(data + pos, data + c * slot, size);
    pos += size;
  }
  gz_put_u32le(index + 8 * nchunks, gz_crc32(index, 8 * nchunks));
  return pos;
}

static int plan2(const gz_codec_params_t *p, size_t n, size_t d[3], size_t *chunk_vals) {
  size_t target = p->chunk_len ? p->chunk_len : GZ_CHUNK2_DEFAULT, slab;
  d[0] = d[1] = 1;
  d[2] = n;
  if (p->ndims > 0) {
    size_t prod = 1;
    if (p->ndims > GZ_CODEC_MAXDIMS)
      return -1;
    for (unsigned k = 0; k < p->ndims; k++) {
      if (p->dims[k] && prod > SIZE_MAX / p->dims[k])
        return -1;
      prod *= p->dims[k];
    }
    if (prod != n)
      return -1;
    if (n > 0) {
      d[2] = p->dims[p->ndims - 1];
      d[1] = p->ndims > 1 ? p->dims[p->ndims - 2] : 1;
      d[0] = n / (d[1] * d[2]);
    }
  }
  for (;;) {
    slab = d[0] > 1 ? d[1] * d[2] : d[1] > 1 ? d[2] : 1;
    if (slab <= GZ_STREAM_CHUNK_MAX / 2)
      break;
    if (d[0] > 1) { /* fold the slowest dimension into the next one */
      d[1] *= d[0];
      d[0] = 1;
    } else {
      d[2] *= d[1];
      d[1] = 1;
    }
  }
  *chunk_vals = (target / slab > 0 ? target / slab : 1) * slab;
  return 0;
}

/* The box of chunk c (len values) of a format-2 stream with box d. */
static void chunk_box(const size_t d[3], size_t len, size_t box[3]) {
  box[0] = 1;
  box[1] = 1;
  box[2] = len;
  if (d[0] > 1) {
    box[0] = len / (d[1] * d[2]);
    box[1] = d[1];
    box[2] = d[2];
  } else if (d[1] > 1) {
    box[1] = len / d[2];
    box[2] = d[2];
  }
}

/* The first 40 bytes of a stream header, the same in formats 1 and 2 (and
 * on the GPU): gz_block_walk.h's writer. */
static void put_header(uint8_t *o, int version, const gz_codec_params_t *params,
                       double eb, size_t n, size_t chunk_vals, size_t nchunks) {
  gz_stream_header_put(o, version, (int)params->dtype, (int)params->eb_mode,
                       params->error_bound, eb, (uint64_t)n, (uint32_t)chunk_vals,
                       (uint32_t)nchunks);
}

static gz_result_t compress_v2(const gz_codec_params_t *params, const void *in, size_t n,
                               uint8_t *o, size_t *out_size, double eb) {
  uint8_t *index, *data;
  size_t elem = gz_dtype_size(params->dtype), nchunks, chunk_vals, slot, d[3];
  gz_quant_t qp = gz_codec_quant(eb);
  int nomem = 0;

  if (plan2(params, n, d, &chunk_vals) != 0)
    return GZ_ERR_ARG;
  nchunks = n / chunk_vals + (n % chunk_vals != 0);
  if (nchunks > UINT32_MAX)
    return GZ_ERR_ARG;
  put_header(o, 2, params, eb, n, chunk_vals, nchunks);
  gz_put_u32le(o + 40, 0); /* format 2: the header's CRC follows its box, below */
  for (int k = 0; k < 3; k++)
    gz_put_u64le(o + 44 + 8 * k, (uint64_t)d[k]);
  gz_put_u32le(o + 68, gz_crc32(o, 68));
  index = o + GZ_HEADER2_SIZE;
  data = index + 8 * nchunks + 4;
  slot = gz_chunk2_bound(chunk_vals, elem);
#ifdef _OPENMP
#pragma omp parallel reduction(|                                                         \
                               : nomem)                                                  \
    num_threads(params->threads > 1 ? params->threads : 1)
#endif
  {
    gz_chunk2_work_t w = GZ_CHUNK2_WORK_INIT;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (long c = 0; c < (long)nchunks; c++) {
      size_t first = (size_t)c * chunk_vals, box[3], size;
      size_t len = n - first < chunk_vals ? n - first : chunk_vals;
      uint8_t *dst = data + (size_t)c * slot;
      int failed = 0;
      chunk_box(d, len, box);
      size = gz_chunk2_encode(params->dtype, (const uint8_t *)in + first * elem, box, &qp,
                              (int)params->predictor, dst, &failed, &w);
      nomem |= failed;
      gz_put_u32le(index + 8 * c, (uint32_t)size);
      gz_put_u32le(index + 8 * c + 4, gz_crc32(dst, size));
    }
    gz_chunk2_work_free(&w);
  }
  if (nomem)
    return GZ_ERR_NOMEM;
  *out_size = (size_t)(data - o) + compact_chunks(index, nchunks, data, slot);
  return GZ_OK;
}

gz_result_t gz_compress(const gz_codec_params_t *params, const void *in, size_t n,
                        void *out, size_t cap, size_t *out_size) {
  uint8_t *o = out, *index, *data;
  size_t elem, nchunks, chunk_len, slot;
  double eb;
  gz_quant_t qp;

  if (!params || params->version < 1 || params->version > GZ_CODEC_PARAMS_VERSION ||
      !out || !out_size || (!in && n))
    return GZ_ERR_ARG;
  if (params->version >= 2 &&
      (params->predictor < GZ_PRED_NONE || params->predictor > GZ_PRED_QINTERP))
    return GZ_ERR_ARG;
  elem = gz_dtype_size(params->dtype);
  chunk_len = chunk_len_of(params);
  if (!elem || !(params->error_bound >= 0) || !isfinite(params->error_bound) ||
      (params->eb_mode != GZ_EB_ABS && params->eb_mode != GZ_EB_REL) ||
      chunk_len % GZ_BLOCK || chunk_len > GZ_STREAM_CHUNK_MAX)
    return GZ_ERR_ARG;
  if (cap < gz_compress_bound(params->dtype, n, (uint32_t)chunk_len) ||
      gz_compress_bound(params->dtype, n, (uint32_t)chunk_len) == 0)
    return GZ_ERR_CAPACITY;
  nchunks = n / chunk_len + (n % chunk_len != 0);
  if (nchunks > UINT32_MAX)
    return GZ_ERR_ARG;

  eb = absolute_bound(params, in, n);
  if (eb > 0 && !(eb >= 1e-300)) /* denormal steps would overflow 1 / step */
    eb = 0;
  if (params->version >= 2 && params->predictor != GZ_PRED_NONE)
    return compress_v2(params, in, n, o, out_size, eb);
  qp = gz_codec_quant(eb);

  put_header(o, GZ_STREAM_VERSION, params, eb, n, chunk_len, nchunks);
  gz_put_u32le(o + 40, gz_crc32(o, 40));
  index = o + GZ_STREAM_HEADER;
  data = index + 8 * nchunks + 4;

  if (params->threads <= 1) { /* one thread: each chunk right after the last */
    size_t pos = 0;
    for (size_t c = 0; c < nchunks; c++) {
      size_t first = c * chunk_len, len = n - first < chunk_len ? n - first : chunk_len;
      size_t size = encode_chunk(params->dtype, (const uint8_t *)in + first * elem, len,
                                 &qp, data + pos);
      gz_put_u32le(index + 8 * c, (uint32_t)size);
      gz_put_u32le(index + 8 * c + 4, gz_crc32(data + pos, size));
      pos += size;
    }
    gz_put_u32le(index + 8 * nchunks, gz_crc32(index, 8 * nchunks));
    *out_size = (size_t)(data - o) + pos;
    return GZ_OK;
  }
  /* Each chunk goes to its worst-case slot, then slots are compacted. */
  slot = chunk_bound(chunk_len, elem);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)                                            \
    num_threads(params->threads > 1 ? params->threads : 1)
#endif
  for (long c = 0; c < (long)nchunks; c++) {
    size_t first = (size_t)c * chunk_len;
    size_t len = n - first < chunk_len ? n - first : chunk_len;
    uint8_t *dst = data + (size_t)c * slot;
    size_t size =
        encode_chunk(params->dtype, (const uint8_t *)in + first * elem, len, &qp, dst);
    gz_put_u32le(index + 8 * c, (uint32_t)size);
    gz_put_u32le(index + 8 * c + 4, gz_crc32(dst, size));
  }
  *out_size = (size_t)(data - o) + compact_chunks(index, nchunks, data, slot);
  return GZ_OK;
}

/* The header and index of a stream; whole: the chunks are there too (else
 * size may end at the index). */
static gz_result_t stream_info(const void *stream, size_t size, gz_stream_info_t *info,
                               int whole) {
  const uint8_t *s = stream;
  uint64_t count, nchunks, total, expected_chunks, d[3] = {1, 1, 0};
  uint32_t chunk_len;
  double eb, abs_eb;
  size_t elem, hsize;
  int version;

  if (!stream || !info)
    return GZ_ERR_ARG;
  if (size < GZ_STREAM_HEADER || memcmp(s, GZ_STREAM_MAGIC, 4) != 0)
    return GZ_ERR_CORRUPT;
  version = s[4];
  if (version < 1 || version > 3)
    return gz_get_u32le(s + 40) == gz_crc32(s, 40) ? GZ_ERR_VERSION : GZ_ERR_CORRUPT;
  hsize = version == 2 ? GZ_HEADER2_SIZE : GZ_STREAM_HEADER;
  if (size < hsize || gz_get_u32le(s + hsize - 4) != gz_crc32(s, hsize - 4))
    return GZ_ERR_CORRUPT;
  elem = gz_dtype_size((gz_dtype_t)s[5]);
  eb = get_f64(s + 8);
  abs_eb = get_f64(s + 16);
  count = gz_get_u64le(s + 24);
  chunk_len = gz_get_u32le(s + 32);
  nchunks = gz_get_u32le(s + 36);
  d[2] = count;
  if (!elem || s[6] > GZ_EB_REL || s[7] != 0 || !(eb >= 0) || !(abs_eb >= 0) ||
      !isfinite(abs_eb) || (abs_eb > 0 && abs_eb < 1e-300) || chunk_len == 0 ||
      chunk_len > GZ_STREAM_CHUNK_MAX)
    return GZ_ERR_CORRUPT;
  if (version != 2 && chunk_len % GZ_BLOCK)
    return GZ_ERR_CORRUPT;
  if (version == 2) {
    uint64_t slab;
    for (int k = 0; k < 3; k++)
      d[k] = gz_get_u64le(s + 44 + 8 * k);
    if (gz_get_u32le(s + 40) != 0 || d[0] == 0 || d[1] == 0 || d[1] > UINT32_MAX ||
        d[2] > UINT64_MAX / d[1] || d[1] * d[2] > UINT64_MAX / d[0] ||
        d[0] * d[1] * d[2] != count)
      return GZ_ERR_CORRUPT;
    slab = d[0] > 1 ? d[1] * d[2] : d[1] > 1 ? d[2] : 1;
    if (slab == 0 || chunk_len % slab)
      return GZ_ERR_CORRUPT;
  }
  expected_chunks = count / chunk_len + (count % chunk_len != 0);
  if (nchunks != expected_chunks || nchunks > (size - hsize) / 8)
    return GZ_ERR_CORRUPT;
  total = hsize + 8 * nchunks + 4;
  if (total > size)
    return GZ_ERR_CORRUPT;
  if (gz_get_u32le(s + hsize + 8 * nchunks) != gz_crc32(s + hsize, 8 * nchunks))
    return GZ_ERR_CORRUPT;
  for (uint64_t c = 0; c < nchunks; c++) {
    total += gz_get_u32le(s + hsize + 8 * c);
    if (whole && total > size)
      return GZ_ERR_CORRUPT;
  }
  info->dtype = (gz_dtype_t)s[5];
  info->eb_mode = (gz_eb_mode_t)s[6];
  info->error_bound = eb;
  info->abs_bound = abs_eb;
  info->count = count;
  info->chunk_len = chunk_len;
  info->chunk_count = (uint32_t)nchunks;
  info->stream_size = (size_t)total;
  info->format_version = (unsigned)version;
  for (int k = 0; k < 3; k++)
    info->dims[k] = (size_t)d[k];
  return GZ_OK;
}

gz_result_t gz_stream_info(const void *stream, size_t size, gz_stream_info_t *info) {
  return stream_info(stream, size, info, 1);
}

/* Verify chunk c at src and decode it into dst (its own values). */
static int decode_into(const gz_stream_info_t *info, const uint8_t *index, size_t c,
                       const uint8_t *src, const gz_quant_t *qp, uint8_t *dst,
                       gz_chunk2_work_t *w) {
  size_t first = c * info->chunk_len;
  size_t len =
      info->count - first < info->chunk_len ? info->count - first : info->chunk_len;
  size_t csize = gz_get_u32le(index + 8 * c);
  if (gz_get_u32le(index + 8 * c + 4) != gz_crc32(src, csize))
    return 1;
  if (info->format_version == 2) {
    size_t box[3];
    chunk_box(info->dims, len, box);
    return gz_chunk2_decode(info->dtype, src, csize, box, qp, dst, w) != GZ_OK;
  }
  if (info->format_version == 3)
    return decode_chunk3(info->dtype, src, csize, len, qp, dst) != GZ_OK;
  return gz_decode_values(info->dtype, src, csize, len, qp, dst) != GZ_OK;
}

/* Verify and decode chunk c, which starts at data + offset. */
static int decode_chunk(const gz_stream_info_t *info, const uint8_t *index,
                        const uint8_t *data, size_t c, size_t offset,
                        const gz_quant_t *qp, void *out, gz_chunk2_work_t *w) {
  return decode_into(info, index, c, data + offset, qp,
                     (uint8_t *)out + c * info->chunk_len * gz_dtype_size(info->dtype),
                     w);
}

gz_result_t gz_decompress(const void *stream, size_t size, void *out, size_t out_count) {
  gz_stream_info_t info;
  const uint8_t *index, *data;
  size_t *offsets = NULL, pos = 0;
  gz_quant_t qp;
  gz_result_t rc = gz_stream_info(stream, size, &info);
  int failed = 0, threads = 1;

  if (rc != GZ_OK)
    return rc;
  if (out_count != info.count || (!out && out_count))
    return GZ_ERR_ARG;
  qp = gz_codec_quant(info.abs_bound);
  index = (const uint8_t *)stream +
          (info.format_version == 2 ? GZ_HEADER2_SIZE : GZ_STREAM_HEADER);
  data = index + 8 * (size_t)info.chunk_count + 4;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (threads > 1 && info.chunk_count > 1) {
    /* Parallel decoding needs every chunk's offset up front. */
    offsets = malloc(sizeof *offsets * info.chunk_count);
    if (!offsets)
      return GZ_ERR_NOMEM;
    for (uint32_t c = 0; c < info.chunk_count; c++) {
      offsets[c] = pos;
      pos += gz_get_u32le(index + 8 * (size_t)c);
    }
#ifdef _OPENMP
#pragma omp parallel reduction(| : failed)
#endif
    {
      gz_chunk2_work_t w = GZ_CHUNK2_WORK_INIT;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (long c = 0; c < (long)info.chunk_count; c++)
        failed |= decode_chunk(&info, index, data, (size_t)c, offsets[c], &qp, out, &w);
      gz_chunk2_work_free(&w);
    }
    free(offsets);
  } else {
    gz_chunk2_work_t w = GZ_CHUNK2_WORK_INIT;
    for (uint32_t c = 0; c < info.chunk_count && !failed; c++) {
      failed = decode_chunk(&info, index, data, c, pos, &qp, out, &w);
      pos += gz_get_u32le(index + 8 * (size_t)c);
    }
    gz_chunk2_work_free(&w);
  }
  return failed ? GZ_ERR_CORRUPT : GZ_OK;
}

/* ------------------------------------------------------------------------
 * Chunk by chunk (gzcoll.h): the bytes gz_compress() and gz_decompress()
 * write and read, a few chunks at a time.
 * ---------------------------------------------------------------------- */

struct gz_stream_writer {
  gz_codec_params_t p;
  gz_quant_t qp;
  size_t n, elem, chunk_vals, bound, hsize, d[3];
  uint32_t nchunks, next; /* chunks encoded so far, in order */
  int version, nwork;
  uint8_t *head; /* header, index and its CRC */
  gz_chunk2_work_t *work;
};

struct gz_stream_reader {
  gz_stream_info_t info;
  gz_quant_t qp;
  uint8_t *index; /* 8 bytes per chunk: size, CRC */
  int nwork;
  gz_chunk2_work_t *work;
};

static int max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

static int thread_num(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

void gz_stream_writer_close(gz_stream_writer_t *w) {
  if (!w)
    return;
  for (int t = 0; t < w->nwork; t++)
    gz_chunk2_work_free(&w->work[t]);
  free(w->work);
  free(w->head);
  free(w);
}

gz_result_t gz_stream_writer_open(const gz_codec_params_t *params, size_t n,
                                  gz_stream_writer_t **out, gz_stream_layout_t *layout) {
  gz_stream_writer_t *w;
  size_t chunk_len, nchunks;
  double eb;

  if (!out || !layout || !params || params->version < 1 ||
      params->version > GZ_CODEC_PARAMS_VERSION || params->eb_mode != GZ_EB_ABS)
    return GZ_ERR_ARG;
  *out = NULL;
  if (params->version >= 2 &&
      (params->predictor < GZ_PRED_NONE || params->predictor > GZ_PRED_QINTERP))
    return GZ_ERR_ARG;
  chunk_len = chunk_len_of(params);
  if (!gz_dtype_size(params->dtype) || !(params->error_bound >= 0) ||
      !isfinite(params->error_bound) || chunk_len % GZ_BLOCK ||
      chunk_len > GZ_STREAM_CHUNK_MAX ||
      gz_compress_bound(params->dtype, n, (uint32_t)chunk_len) == 0)
    return GZ_ERR_ARG;
  w = calloc(1, sizeof *w);
  if (!w)
    return GZ_ERR_NOMEM;
  if (params->version >= 2) /* a version-1 caller's struct ends before ndims */
    w->p = *params;
  else
    memcpy(&w->p, params, offsetof(gz_codec_params_t, ndims)); /* the rest stays 0 */
  w->n = n;
  w->elem = gz_dtype_size(params->dtype);
  eb = params->error_bound;
  if (eb > 0 && !(eb >= 1e-300)) /* as gz_compress */
    eb = 0;
  w->qp = gz_codec_quant(eb);
  w->version = w->p.predictor != GZ_PRED_NONE ? 2 : GZ_STREAM_VERSION;
  if (w->version == 2 && plan2(&w->p, n, w->d, &w->chunk_vals) != 0) {
    free(w);
    return GZ_ERR_ARG;
  }
  if (w->version != 2)
    w->chunk_vals = chunk_len;
  nchunks = n / w->chunk_vals + (n % w->chunk_vals != 0);
  if (nchunks > UINT32_MAX) {
    free(w);
    return GZ_ERR_ARG;
  }
  w->nchunks = (uint32_t)nchunks;
  w->bound = w->version == 2 ? gz_chunk2_bound(w->chunk_vals, w->elem)
                             : chunk_bound(w->chunk_vals, w->elem);
  w->hsize = w->version == 2 ? GZ_HEADER2_SIZE : GZ_STREAM_HEADER;
  w->head = calloc(w->hsize + 8 * nchunks + 4, 1);
  w->nwork = w->version == 2 ? (params->threads > 1 ? params->threads : 1) : 0;
  w->work = w->nwork ? calloc((size_t)w->nwork, sizeof *w->work) : NULL;
  if (!w->head || (w->nwork && !w->work)) {
    gz_stream_writer_close(w);
    return GZ_ERR_NOMEM;
  }
  put_header(w->head, (uint8_t)w->version, &w->p, eb, n, w->chunk_vals, nchunks);
  if (w->version != 2) {
    gz_put_u32le(w->head + 40, gz_crc32(w->head, 40));
  } else {
    gz_put_u32le(w->head + 40, 0);
    for (int k = 0; k < 3; k++)
      gz_put_u64le(w->head + 44 + 8 * k, (uint64_t)w->d[k]);
    gz_put_u32le(w->head + 68, gz_crc32(w->head, 68));
  }
  layout->head_size = w->hsize + 8 * nchunks + 4;
  layout->chunk_count = w->nchunks;
  layout->chunk_values = w->chunk_vals;
  layout->chunk_bound = w->bound;
  *out = w;
  return GZ_OK;
}

/* Chunk c from its values x into dst (room for w->bound); 0 when out of
 * memory. Records its size and CRC. */
static size_t writer_chunk(gz_stream_writer_t *w, size_t c, const uint8_t *x,
                           uint8_t *dst, int *nomem) {
  size_t first = c * w->chunk_vals, size;
  size_t len = w->n - first < w->chunk_vals ? w->n - first : w->chunk_vals;
  if (w->version == 2) {
    size_t box[3];
    chunk_box(w->d, len, box);
    size = gz_chunk2_encode(w->p.dtype, x, box, &w->qp, (int)w->p.predictor, dst, nomem,
                            &w->work[thread_num() % w->nwork]);
  } else {
    size = encode_chunk(w->p.dtype, x, len, &w->qp, dst);
  }
  gz_put_u32le(w->head + w->hsize + 8 * c, (uint32_t)size);
  gz_put_u32le(w->head + w->hsize + 8 * c + 4, gz_crc32(dst, size));
  return size;
}

gz_result_t gz_stream_writer_encode(gz_stream_writer_t *w, uint32_t first, uint32_t count,
                                    const void *in, void *out, size_t cap, size_t *size) {
  const uint8_t *x = in;
  uint8_t *o = out;
  size_t pos = 0, step;
  int nomem = 0, threads;

  if (!w || !size || first != w->next || count > w->nchunks - first ||
      (count && (!in || !out)) || cap / w->bound < count)
    return GZ_ERR_ARG;
  step = w->chunk_vals * w->elem;
  threads = w->p.threads > 1 ? w->p.threads : 1;
  if (threads == 1 || count < 2) {
    for (uint32_t k = 0; k < count && !nomem; k++)
      pos += writer_chunk(w, (size_t)first + k, x + k * step, o + pos, &nomem);
  } else { /* each chunk into its worst-case slot, then back to back */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(| : nomem) num_threads(threads)
#endif
    for (long k = 0; k < (long)count; k++)
      writer_chunk(w, (size_t)first + (size_t)k, x + (size_t)k * step,
                   o + (size_t)k * w->bound, &nomem);
    for (uint32_t k = 0; k < count && !nomem; k++) {
      size_t s = gz_get_u32le(w->head + w->hsize + 8 * ((size_t)first + k));
      if (pos != k * w->bound)
        memmove(o + pos, o + k * w->bound, s);
      pos += s;
    }
  }
  if (nomem)
    return GZ_ERR_NOMEM;
  w->next += count;
  *size = pos;
  return GZ_OK;
}

gz_result_t gz_stream_writer_head(const gz_stream_writer_t *w, void *out, size_t cap) {
  size_t index = w ? w->hsize + 8 * (size_t)w->nchunks : 0;
  if (!w || !out || w->next != w->nchunks || cap < index + 4)
    return GZ_ERR_ARG;
  memcpy(out, w->head, index);
  gz_put_u32le((uint8_t *)out + index, gz_crc32(w->head + w->hsize, index - w->hsize));
  return GZ_OK;
}

gz_result_t gz_stream_head_size(const void *stream, size_t size, size_t *head_size) {
  const uint8_t *s = stream;
  if (!s || !head_size)
    return GZ_ERR_ARG;
  if (size < 40 || memcmp(s, GZ_STREAM_MAGIC, 4) != 0)
    return GZ_ERR_CORRUPT;
  if (s[4] < 1 || s[4] > GZ_STREAM_VERSION)
    return GZ_ERR_VERSION;
  *head_size = (s[4] != 2 ? GZ_STREAM_HEADER : GZ_HEADER2_SIZE) +
               8 * (size_t)gz_get_u32le(s + 36) + 4;
  return GZ_OK;
}

void gz_stream_reader_close(gz_stream_reader_t *r) {
  if (!r)
    return;
  for (int t = 0; t < r->nwork; t++)
    gz_chunk2_work_free(&r->work[t]);
  free(r->work);
  free(r->index);
  free(r);
}

gz_result_t gz_stream_reader_open(const void *head, size_t head_size,
                                  gz_stream_reader_t **out, gz_stream_info_t *info) {
  gz_stream_reader_t *r;
  size_t hsize;
  gz_result_t rc;

  if (!out || !info || !head)
    return GZ_ERR_ARG;
  *out = NULL;
  r = calloc(1, sizeof *r);
  if (!r)
    return GZ_ERR_NOMEM;
  rc = stream_info(head, head_size, &r->info, 0);
  if (rc != GZ_OK) {
    free(r);
    return rc;
  }
  hsize = r->info.format_version != 2 ? GZ_STREAM_HEADER : GZ_HEADER2_SIZE;
  r->index = malloc(8 * (size_t)r->info.chunk_count + 1);
  r->nwork = max_threads();
  r->work = calloc((size_t)r->nwork, sizeof *r->work);
  if (!r->index || !r->work) {
    gz_stream_reader_close(r);
    return GZ_ERR_NOMEM;
  }
  memcpy(r->index, (const uint8_t *)head + hsize, 8 * (size_t)r->info.chunk_count);
  r->qp = gz_codec_quant(r->info.abs_bound);
  *info = r->info;
  *out = r;
  return GZ_OK;
}

size_t gz_stream_reader_chunk_size(const gz_stream_reader_t *r, uint32_t c) {
  return r && c < r->info.chunk_count ? gz_get_u32le(r->index + 8 * (size_t)c) : 0;
}

gz_result_t gz_stream_reader_decode(gz_stream_reader_t *r, uint32_t first, uint32_t count,
                                    const void *in, size_t size, void *out) {
  const uint8_t *src = in;
  size_t total = 0, step, *offsets;
  int failed = 0;

  if (!r || count > r->info.chunk_count || first > r->info.chunk_count - count ||
      (count && (!in || !out)))
    return GZ_ERR_ARG;
  offsets = malloc(sizeof *offsets * ((size_t)count + 1));
  if (!offsets)
    return GZ_ERR_NOMEM;
  for (uint32_t k = 0; k < count; k++) {
    offsets[k] = total;
    total += gz_stream_reader_chunk_size(r, first + k);
  }
  if (total != size) {
    free(offsets);
    return GZ_ERR_ARG;
  }
  step = (size_t)r->info.chunk_len * gz_dtype_size(r->info.dtype);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(|                                \
                                                        : failed) if (count > 1)         \
    num_threads(r->nwork)
#endif
  for (long k = 0; k < (long)count; k++)
    failed |= decode_into(&r->info, r->index, (size_t)first + (size_t)k, src + offsets[k],
                          &r->qp, (uint8_t *)out + (size_t)k * step,
                          &r->work[thread_num() % r->nwork]);
  free(offsets);
  return failed ? GZ_ERR_CORRUPT : GZ_OK;
}
