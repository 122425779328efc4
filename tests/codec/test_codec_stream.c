/* test_codec_stream.c - the stream container: golden checksums guard the
 * wire format; every truncation and a sweep of byte corruptions are detected
 * (never decoded into wrong values, never out of bounds under ASan); bad
 * parameters are refused. */
#include "gz_test.h"

#include "codec_fields.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint8_t *compress_field(field_kind_t kind, int is_f32, double eb, size_t n,
                               uint32_t chunk_len, size_t *size, void **field) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t cap;
  uint8_t *stream;
  p.dtype = is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.chunk_len = chunk_len;
  cap = gz_compress_bound(p.dtype, n, chunk_len);
  stream = malloc(cap);
  *field = malloc(n * (is_f32 ? 4 : 8));
  field_fill(kind, is_f32, *field, n, 99);
  if (gz_compress(&p, *field, n, stream, cap, size) != GZ_OK) {
    free(stream);
    return NULL;
  }
  return stream;
}

/* CRC-32 of the stream bytes: a change of the wire format changes these.
 * Not a change of the header alone: a CRC over bytes followed by their own
 * CRC-32 (the header and its CRC) does not depend on those bytes, so the
 * header's version byte is checked on its own. Chunks of 4096 values (128
 * blocks) have no segment table; the last two rows (chunks of 16384 values,
 * format 3) have one in their first chunks. */
static void test_golden(void) {
  struct {
    field_kind_t kind;
    int is_f32;
    double eb;
    size_t n;
    uint32_t chunk, size, crc;
  } golden[] = {
      {FIELD_SMOOTH, 1, 1e-4, 10000, 4096, 12242, 0x84bc7974u},
      {FIELD_SMOOTH, 0, 1e-6, 10000, 4096, 20571, 0xb3788d7cu},
      {FIELD_SPECIALS, 1, 1e-3, 777, 4096, 1905, 0x67352c92u},
      {FIELD_NOISE, 0, 0.0, 333, 4096, 2731, 0x3c82167bu},
      {FIELD_CONSTANT, 1, 1e-2, 100, 4096, 72, 0x4ecb27d4u},
      {FIELD_SMOOTH, 1, 1e-4, 40000, 16384, 48734, 0xe4903318u},
      {FIELD_SPECIALS, 0, 1e-3, 40000, 16384, 129241, 0x69f1b39bu},
  };
  int print = getenv("GZ_PRINT_GOLDEN") != NULL;
  for (size_t g = 0; g < sizeof golden / sizeof *golden; g++) {
    size_t size = 0;
    void *field;
    uint8_t *s = compress_field(golden[g].kind, golden[g].is_f32, golden[g].eb,
                                golden[g].n, golden[g].chunk, &size, &field);
    uint32_t crc = s ? (uint32_t)crc32(0, s, (uInt)size) : 0;
    if (print)
      printf("golden %zu: size %zu crc 0x%08x\n", g, size, crc);
    GZ_CHECK(s && size == golden[g].size && crc == golden[g].crc && s[4] == 3,
             "golden stream %zu: size %zu crc 0x%08x version %d, expected %u 0x%08x 3 "
             "(wire format changed? bump the format version)",
             g, size, crc, s ? s[4] : -1, golden[g].size, golden[g].crc);
    free(s);
    free(field);
  }
}

/* n values in chunks of chunk_len: 5000 in 1024 (5 chunks, no tables) and
 * 9000 in one chunk of two segments (a table). */
static void test_truncation_and_corruption(size_t n, uint32_t chunk_len) {
  size_t size = 0;
  void *field;
  uint8_t *s = compress_field(FIELD_SMOOTH, 1, 1e-3, n, chunk_len, &size, &field);
  float *out = malloc(n * sizeof *out);
  uint8_t *copy = malloc(size);
  size_t undetected = 0, wrong = 0;
  GZ_CHECK(s != NULL, "compress");
  if (!s)
    goto done;
  GZ_CHECK(gz_decompress(s, size, out, n) == GZ_OK, "intact stream decodes");
  for (size_t len = 0; len < size; len++) {
    memcpy(copy, s, len);
    undetected += gz_decompress(copy, len, out, n) == GZ_OK;
  }
  GZ_CHECK(undetected == 0, "%zu truncations decoded without error", undetected);
  /* Flip one bit in each byte position: CRC-32 detects every single-bit
   * error, so none may decode. */
  for (size_t pos = 0; pos < size; pos++) {
    memcpy(copy, s, size);
    copy[pos] ^= (uint8_t)(1u << (pos % 8));
    if (gz_decompress(copy, size, out, n) == GZ_OK)
      wrong++;
  }
  GZ_CHECK(wrong == 0, "%zu single-bit corruptions decoded without error", wrong);
  GZ_CHECK(gz_decompress(s, size, out, n - 1) == GZ_ERR_ARG, "wrong count refused");
done:
  free(copy);
  free(out);
  free(s);
  free(field);
}

/* Redo the chunk CRCs and the index CRC of a format-3 stream. */
static void restamp(uint8_t *s) {
  uint32_t nchunks = (uint32_t)s[36] | (uint32_t)s[37] << 8 | (uint32_t)s[38] << 16 |
                     (uint32_t)s[39] << 24;
  uint8_t *index = s + 44, *chunk = index + 8 * (size_t)nchunks + 4;
  for (uint32_t c = 0; c < nchunks; c++) {
    uint32_t size = (uint32_t)index[8 * c] | (uint32_t)index[8 * c + 1] << 8 |
                    (uint32_t)index[8 * c + 2] << 16 | (uint32_t)index[8 * c + 3] << 24;
    uint32_t crc = (uint32_t)crc32(0, chunk, size);
    memcpy(index + 8 * c + 4, &crc, 4); /* little-endian hosts */
    chunk += size;
  }
  {
    uint32_t crc = (uint32_t)crc32(0, index, 8 * nchunks);
    memcpy(index + 8 * nchunks, &crc, 4);
  }
}

/* A damaged segment-table entry with every checksum redone (so only the
 * table's consistency with the blocks can catch it) is refused; a version
 * the decoder does not know is reported as such. */
static void test_tables(void) {
  size_t size = 0, n = 40000;
  void *field;
  uint8_t *s = compress_field(FIELD_SMOOTH, 1, 1e-4, n, 16384, &size, &field);
  uint8_t *copy = malloc(size);
  float *out = malloc(n * sizeof *out);
  /* chunks 0 and 1 (512 blocks, 2 segments) have one entry each */
  static const long delta[] = {1, -1, 2, 32, -32, 100000, -100000};
  size_t undetected = 0;
  GZ_CHECK(s && gz_decompress(s, size, out, n) == GZ_OK, "stream with tables decodes");
  if (!s)
    goto done;
  memcpy(copy, s, size);
  restamp(copy);
  GZ_CHECK(memcmp(copy, s, size) == 0, "restamp reproduces the stream's checksums");
  for (int c = 0; c < 2; c++) {
    size_t at = 44 + 8 * 3 + 4;
    uint32_t e;
    if (c == 1)
      at += (size_t)s[44] | (size_t)s[45] << 8 | (size_t)s[46] << 16;
    memcpy(&e, s + at, 4);
    for (size_t k = 0; k < sizeof delta / sizeof *delta; k++) {
      uint32_t v = (uint32_t)((long)e + delta[k]);
      memcpy(copy, s, size);
      memcpy(copy + at, &v, 4);
      restamp(copy);
      undetected += gz_decompress(copy, size, out, n) != GZ_ERR_CORRUPT;
    }
  }
  GZ_CHECK(undetected == 0, "%zu damaged table entries not refused", undetected);
  memcpy(copy, s, size);
  copy[4] = 4;
  {
    uint32_t crc = (uint32_t)crc32(0, copy, 40);
    memcpy(copy + 40, &crc, 4);
  }
  GZ_CHECK(gz_decompress(copy, size, out, n) == GZ_ERR_VERSION, "version 4 unknown");
done:
  free(copy);
  free(out);
  free(s);
  free(field);
}

static void test_arguments(void) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  float x[4] = {1, 2, 3, 4};
  uint8_t buf[256];
  size_t size;
  GZ_CHECK(gz_compress(NULL, x, 4, buf, sizeof buf, &size) == GZ_ERR_ARG, "NULL params");
  p.error_bound = -1;
  GZ_CHECK(gz_compress(&p, x, 4, buf, sizeof buf, &size) == GZ_ERR_ARG, "negative bound");
  p.error_bound = NAN;
  GZ_CHECK(gz_compress(&p, x, 4, buf, sizeof buf, &size) == GZ_ERR_ARG, "NaN bound");
  p.error_bound = 1e-3;
  p.chunk_len = 100;
  GZ_CHECK(gz_compress(&p, x, 4, buf, sizeof buf, &size) == GZ_ERR_ARG,
           "chunk length not a multiple of the block");
  p.chunk_len = 0;
  GZ_CHECK(gz_compress(&p, x, 4, buf, 8, &size) == GZ_ERR_CAPACITY, "small output");
  p.version = 99;
  GZ_CHECK(gz_compress(&p, x, 4, buf, sizeof buf, &size) == GZ_ERR_ARG, "wrong version");
  GZ_CHECK(gz_compress_bound((gz_dtype_t)7, 4, 0) == 0, "unknown dtype has no bound");
  GZ_CHECK(gz_compress_bound(GZ_FLOAT64, SIZE_MAX / 2, 0) == 0, "overflowing bound is 0");
  GZ_CHECK(strcmp(gz_strerror(GZ_ERR_CORRUPT),
                  "corrupted or truncated compressed stream") == 0,
           "strerror text");
  GZ_CHECK(strcmp(gz_strerror((gz_result_t)999), "unknown result") == 0,
           "unknown result");
}

/* Incompressible data must fit in the bound; compressible data must shrink. */
static void test_sizes(void) {
  size_t n = 100000, size = 0;
  void *field;
  uint8_t *s = compress_field(FIELD_NOISE, 0, 0.0, n, 0, &size, &field);
  GZ_CHECK(s && size <= gz_compress_bound(GZ_FLOAT64, n, 0), "noise fits the bound");
  free(s);
  free(field);
  s = compress_field(FIELD_SMOOTH, 1, 1e-3, n, 0, &size, &field);
  GZ_CHECK(s && size * 4 < n * 4, "smooth field at 1e-3 compresses more than 4x (%zu B)",
           size);
  free(s);
  free(field);
}

/* Chunk by chunk: a writer fed batches of k chunks writes gz_compress()'s
 * bytes (head, then the chunks), and a reader fed batches decodes them to
 * gz_decompress()'s values, in formats 1 and 2, with 1 and 3 threads. */
static void check_chunked(field_kind_t kind, int is_f32, double eb, size_t n,
                          uint32_t chunk_len, gz_predictor_t pred, const size_t *dims,
                          unsigned ndims, int threads, uint32_t k) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  gz_stream_writer_t *w = NULL;
  gz_stream_reader_t *r = NULL;
  gz_stream_layout_t lay;
  gz_stream_info_t info;
  size_t elem = is_f32 ? 4 : 8, cap, size = 0, pos, hsize = 0;
  uint8_t *whole, *chunked, *field = malloc(n * elem + 1);
  uint8_t *a = malloc(n * elem + 1), *b = malloc(n * elem + 1);
  int same = 1;
  p.dtype = is_f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.chunk_len = chunk_len;
  p.predictor = pred;
  p.threads = threads;
  p.ndims = ndims;
  for (unsigned d = 0; d < ndims; d++)
    p.dims[d] = dims[d];
  cap = gz_compress_bound(p.dtype, n, chunk_len);
  whole = malloc(cap);
  chunked = malloc(cap);
  field_fill(kind, is_f32, field, n, 7);
  GZ_CHECK(gz_compress(&p, field, n, whole, cap, &size) == GZ_OK,
           "whole-buffer compress");
  GZ_CHECK(gz_stream_writer_open(&p, n, &w, &lay) == GZ_OK, "writer opens");
  if (!w)
    goto done;
  GZ_CHECK(gz_stream_writer_head(w, chunked, cap) == GZ_ERR_ARG || lay.chunk_count == 0,
           "no head before the chunks");
  pos = lay.head_size;
  for (uint32_t c = 0; c < lay.chunk_count; c += k) {
    uint32_t m = lay.chunk_count - c < k ? lay.chunk_count - c : k;
    uint8_t *out = malloc((size_t)m * lay.chunk_bound);
    size_t got = 0;
    GZ_CHECK(c == 0 || gz_stream_writer_encode(w, c - 1, 1, field, out, lay.chunk_bound,
                                               &got) == GZ_ERR_ARG,
             "chunks in order only");
    GZ_CHECK(gz_stream_writer_encode(w, c, m, field + (size_t)c * lay.chunk_values * elem,
                                     out, (size_t)m * lay.chunk_bound, &got) == GZ_OK,
             "encode chunks %u..%u", c, c + m);
    if (pos + got <= cap)
      memcpy(chunked + pos, out, got);
    pos += got;
    free(out);
  }
  GZ_CHECK(gz_stream_writer_head(w, chunked, lay.head_size) == GZ_OK, "head");
  GZ_CHECK(pos == size && memcmp(whole, chunked, size) == 0,
           "chunked stream (%zu B) is the whole-buffer stream (%zu B): kind %d f%d eb %g "
           "chunk %u pred %d threads %d batch %u",
           pos, size, (int)kind, is_f32 ? 32 : 64, eb, chunk_len, (int)pred, threads, k);
  /* read back a batch at a time, from the head alone */
  GZ_CHECK(gz_stream_head_size(whole, 40, &hsize) == GZ_OK && hsize == lay.head_size,
           "head size from the first 40 bytes");
  GZ_CHECK(gz_stream_reader_open(whole, lay.head_size, &r, &info) == GZ_OK &&
               info.stream_size == size && info.count == n,
           "reader opens from the head");
  GZ_CHECK(gz_decompress(whole, size, a, n) == GZ_OK, "whole-buffer decompress");
  pos = lay.head_size;
  for (uint32_t c = 0; r && c < info.chunk_count; c += k) {
    uint32_t m = info.chunk_count - c < k ? info.chunk_count - c : k;
    size_t bytes = 0;
    for (uint32_t j = 0; j < m; j++)
      bytes += gz_stream_reader_chunk_size(r, c + j);
    GZ_CHECK(gz_stream_reader_decode(r, c, m, whole + pos, bytes + 1,
                                     b + (size_t)c * info.chunk_len * elem) == GZ_ERR_ARG,
             "a batch of the wrong size is refused");
    GZ_CHECK(gz_stream_reader_decode(r, c, m, whole + pos, bytes,
                                     b + (size_t)c * info.chunk_len * elem) == GZ_OK,
             "decode chunks %u..%u", c, c + m);
    pos += bytes;
  }
  same = memcmp(a, b, n * elem) == 0;
  GZ_CHECK(same, "chunked decode gives gz_decompress's values");
  if (r && info.chunk_count > 0) { /* a flipped byte in chunk 0 */
    size_t bytes = gz_stream_reader_chunk_size(r, 0);
    whole[lay.head_size + bytes / 2] ^= 0x10;
    GZ_CHECK(gz_stream_reader_decode(r, 0, 1, whole + lay.head_size, bytes, b) ==
                 GZ_ERR_CORRUPT,
             "corrupt chunk detected");
  }
done:
  gz_stream_writer_close(w);
  gz_stream_reader_close(r);
  free(whole);
  free(chunked);
  free(field);
  free(a);
  free(b);
}

static void test_chunked(void) {
  size_t d3[3] = {12, 40, 50}, d2[2] = {300, 77};
  for (int f32 = 0; f32 < 2; f32++) {
    check_chunked(FIELD_SMOOTH, f32, 1e-4, 100003, 4096, GZ_PRED_NONE, NULL, 0, 1, 3);
    check_chunked(FIELD_SPECIALS, f32, 1e-3, 50000, 1024, GZ_PRED_NONE, NULL, 0, 3, 4);
    check_chunked(FIELD_NOISE, f32, 0.0, 9000, 0, GZ_PRED_NONE, NULL, 0, 1, 1);
    check_chunked(FIELD_SMOOTH, f32, 1e-4, 24000, 2048, GZ_PRED_AUTO, d3, 3, 1, 2);
    check_chunked(FIELD_SPECIALS, f32, 1e-3, 23100, 4096, GZ_PRED_QLORENZO, d2, 2, 3, 3);
    check_chunked(FIELD_SMOOTH, f32, 1e-5, 24000, 0, GZ_PRED_QINTERP, d3, 3, 2, 1);
  }
  check_chunked(FIELD_SMOOTH, 1, 1e-4, 0, 0, GZ_PRED_NONE, NULL, 0, 1, 1);
  {
    gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
    gz_stream_writer_t *w = NULL;
    gz_stream_layout_t lay;
    size_t hsize;
    uint8_t bad[40] = "GZCX";
    p.eb_mode = GZ_EB_REL;
    p.error_bound = 1e-3;
    GZ_CHECK(gz_stream_writer_open(&p, 100, &w, &lay) == GZ_ERR_ARG && !w,
             "a REL bound is refused (it needs the whole input)");
    GZ_CHECK(gz_stream_head_size(bad, sizeof bad, &hsize) == GZ_ERR_CORRUPT, "bad magic");
  }
}

int main(void) {
  test_chunked();
  test_golden();
  test_truncation_and_corruption(5000, 1024);
  test_truncation_and_corruption(9000, 0);
  test_tables();
  test_arguments();
  test_sizes();
  return gz_test_finish();
}
