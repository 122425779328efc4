/*
 * stream.c - the self-describing compressed stream, format versions 1 and 2.
 *
 * Format version 1 (written when params->predictor is GZ_PRED_NONE, and by
 * the GPU codec):
 * Layout, all integers little-endian:
 *   off  size  field
 *     0     4  magic "GZCS"
 *     4     1  format version (1)
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
 *              (kernels/gz_block.h), ceil(len / GZ_BLOCK) of them.
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
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define GZ_STREAM_VERSION 1
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

static size_t chunk_bound(size_t values, size_t elem) {
  size_t blocks = (values + GZ_BLOCK - 1) / GZ_BLOCK;
  return blocks + values * elem;
}

size_t gz_compress_bound(gz_dtype_t dtype, size_t n, uint32_t chunk_len) {
  size_t elem = gz_dtype_size(dtype), chunks, total;
  if (!elem)
    return 0;
  if (!chunk_len)
    chunk_len = GZ_CHUNK_DEFAULT;
  chunks = n / chunk_len + (n % chunk_len != 0);
  if (n > (SIZE_MAX - 4096) / (elem + 1) || chunks > SIZE_MAX / 16)
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
    gz_chunk2_work_t w = {{NULL}, {0}};
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
      size_t size = gz_encode_values(params->dtype, (const uint8_t *)in + first * elem,
                                     len, &qp, data + pos);
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
    size_t size = gz_encode_values(params->dtype, (const uint8_t *)in + first * elem, len,
                                   &qp, dst);
    gz_put_u32le(index + 8 * c, (uint32_t)size);
    gz_put_u32le(index + 8 * c + 4, gz_crc32(dst, size));
  }
  *out_size = (size_t)(data - o) + compact_chunks(index, nchunks, data, slot);
  return GZ_OK;
}

gz_result_t gz_stream_info(const void *stream, size_t size, gz_stream_info_t *info) {
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
  if (version != 1 && version != 2)
    return gz_get_u32le(s + 40) == gz_crc32(s, 40) ? GZ_ERR_VERSION : GZ_ERR_CORRUPT;
  hsize = version == 1 ? GZ_STREAM_HEADER : GZ_HEADER2_SIZE;
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
  if (version == 1 && chunk_len % GZ_BLOCK)
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
    if (total > size)
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

/* Verify and decode chunk c, which starts at data + offset. */
static int decode_chunk(const gz_stream_info_t *info, const uint8_t *index,
                        const uint8_t *data, size_t c, size_t offset,
                        const gz_quant_t *qp, void *out, gz_chunk2_work_t *w) {
  size_t first = c * info->chunk_len;
  size_t len =
      info->count - first < info->chunk_len ? info->count - first : info->chunk_len;
  size_t csize = gz_get_u32le(index + 8 * c);
  const uint8_t *src = data + offset;
  uint8_t *dst = (uint8_t *)out + first * gz_dtype_size(info->dtype);
  if (gz_get_u32le(index + 8 * c + 4) != gz_crc32(src, csize))
    return 1;
  if (info->format_version == 2) {
    size_t box[3];
    chunk_box(info->dims, len, box);
    return gz_chunk2_decode(info->dtype, src, csize, box, qp, dst, w) != GZ_OK;
  }
  return gz_decode_values(info->dtype, src, csize, len, qp,
                          (uint8_t *)out + first * gz_dtype_size(info->dtype)) != GZ_OK;
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
          (info.format_version == 1 ? GZ_STREAM_HEADER : GZ_HEADER2_SIZE);
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
      gz_chunk2_work_t w = {{NULL}, {0}};
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (long c = 0; c < (long)info.chunk_count; c++)
        failed |= decode_chunk(&info, index, data, (size_t)c, offsets[c], &qp, out, &w);
      gz_chunk2_work_free(&w);
    }
    free(offsets);
  } else {
    gz_chunk2_work_t w = {{NULL}, {0}};
    for (uint32_t c = 0; c < info.chunk_count && !failed; c++) {
      failed = decode_chunk(&info, index, data, c, pos, &qp, out, &w);
      pos += gz_get_u32le(index + 8 * (size_t)c);
    }
    gz_chunk2_work_free(&w);
  }
  return failed ? GZ_ERR_CORRUPT : GZ_OK;
}
