/* test_device_host.c - the host-side logic of the GPU backend, on the CPU:
 *   - gz_block_values_size / gz_block_codes_size (what the GPU decoder's
 *     per-chunk walk uses) return exactly the bytes the decoders use, on
 *     every field kind, and 0 exactly where the decoders fail (truncation,
 *     corrupted headers);
 *   - gz_crc32_tab equals the stream's own CRC-32 (zlib's), and
 *     gz_crc32_combine of the pieces equals zlib's crc32 of the whole;
 *   - the indexed code encoding: payload identical to gz_codes_encode, the
 *     segment walk finds every block, round trips for SUM/MAX/MIN/REPLACE,
 *     corruption and truncation are reported; written in pieces, the same
 *     bytes; decoded straight into values, those of decode then dequantize;
 *     decoded, combined and dequantized in one pass, those of decode+reduce
 *     then dequantize;
 *   - the fixed pool never grows and carves aligned, disjoint pieces;
 *   - the CPU operations of the backend table agree with the library. */
#include "gz_test.h"

#include "codec/codec.h"
#include "codec_fields.h"
#include "coll_internal.h"
#include "device/backend.h"
#include "gz_block_walk.h"
#include "gz_device.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define N 20011 /* several segments of the indexed encoding, a ragged tail */

static void test_block_sizes(void) {
  static const double ebs[] = {0.0, 1e-6, 1e-3, 0.5};
  long mismatches = 0, blocks = 0, trunc_bad = 0;
  for (int kind = 0; kind < FIELD_COUNT; kind++) {
    for (int f32 = 0; f32 < 2; f32++) {
      size_t esz = f32 ? 4 : 8;
      unsigned char *x = malloc(64 * esz), out[1 + 32 * 8];
      for (size_t e = 0; e < sizeof ebs / sizeof *ebs; e++) {
        gz_quant_t qp = gz_quant_make(ebs[e], 4503599627370496.0);
        for (int rep = 0; rep < 40; rep++) {
          int n = 1 + rep % 32;
          double y[32];
          size_t size, used, walk;
          field_fill((field_kind_t)kind, f32, x, 64, (uint64_t)(rep * 131 + kind));
          size = f32 ? gz_block_encode_f32((const float *)x + rep % 16, n, &qp, out)
                     : gz_block_encode_f64((const double *)x + rep % 16, n, &qp, out);
          used = f32 ? gz_block_decode_f32(out, size, n, &qp, (float *)y)
                     : gz_block_decode_f64(out, size, n, &qp, y);
          walk = gz_block_values_size(out, size, n, esz, ebs[e] > 0);
          blocks++;
          mismatches += used != size || walk != size;
          /* every truncation: size 0 exactly where the decoder fails */
          for (size_t t = 0; t < size; t++) {
            size_t u = f32 ? gz_block_decode_f32(out, t, n, &qp, (float *)y)
                           : gz_block_decode_f64(out, t, n, &qp, y);
            trunc_bad += u != gz_block_values_size(out, t, n, esz, ebs[e] > 0);
          }
          /* a corrupted kind / width byte */
          out[0] ^= (unsigned char)(0x40 + rep);
          {
            size_t u = f32 ? gz_block_decode_f32(out, size, n, &qp, (float *)y)
                           : gz_block_decode_f64(out, size, n, &qp, y);
            trunc_bad += u != gz_block_values_size(out, size, n, esz, ebs[e] > 0);
          }
        }
      }
      free(x);
    }
  }
  GZ_CHECK(mismatches == 0, "value block sizes: %ld of %ld differ from the decoder",
           mismatches, blocks);
  GZ_CHECK(trunc_bad == 0, "value block sizes on bad input: %ld differ from the decoder",
           trunc_bad);
}

static void test_crc(void) {
  uint32_t table[256];
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  float *x = malloc(N * sizeof *x);
  size_t cap = gz_compress_bound(GZ_FLOAT32, N, 4096), size = 0;
  unsigned char *s = malloc(cap);
  gz_crc32_table_fill(table);
  GZ_CHECK(gz_crc32_tab(table, (const uint8_t *)"123456789", 9) == 0xCBF43926u,
           "CRC-32 check value");
  field_fill(FIELD_SMOOTH, 1, x, N, 7);
  p.error_bound = 1e-4;
  p.chunk_len = 4096;
  GZ_CHECK(gz_compress(&p, x, N, s, cap, &size) == GZ_OK, "compress");
  GZ_CHECK(gz_get_u32le(s + 40) == gz_crc32_tab(table, s, 40),
           "header CRC as the stream");
  {
    uint32_t nch = gz_get_u32le(s + 36);
    const uint8_t *index = s + 44, *data = index + 8 * (size_t)nch + 4;
    size_t pos = 0;
    int ok = gz_get_u32le(index + 8 * (size_t)nch) == gz_crc32_tab(table, index, 8 * nch);
    for (uint32_t c = 0; c < nch; c++) {
      uint32_t csize = gz_get_u32le(index + 8 * c);
      ok &= gz_get_u32le(index + 8 * c + 4) == gz_crc32_tab(table, data + pos, csize);
      pos += csize;
    }
    GZ_CHECK(ok, "index and chunk CRCs as the stream");
  }
  free(x);
  free(s);
}

/* gz_crc32_combine: the CRC of a buffer from the CRCs of its pieces equals
 * zlib's crc32 of the whole, for every split point of a few lengths and for
 * a tree of uneven slices (what the GPU blocks do). */
static void test_crc_combine(void) {
  uint32_t table[256], x2k[GZ_CRC32_X2K];
  unsigned char *buf = malloc(70001);
  gz_rng_t rng;
  long bad = 0, cases = 0;
  gz_crc32_table_fill(table);
  gz_crc32_x2k_fill(x2k);
  gz_rng_seed(&rng, 99);
  for (size_t i = 0; i < 70001; i++)
    buf[i] = (unsigned char)gz_rng_next(&rng);
  for (size_t len = 0; len < 300; len += len < 40 ? 1 : 37) {
    uint32_t whole = (uint32_t)crc32(0L, buf, (uInt)len);
    for (size_t cut = 0; cut <= len; cut++, cases++)
      bad +=
          gz_crc32_combine(x2k, gz_crc32_tab(table, buf, cut),
                           gz_crc32_tab(table, buf + cut, len - cut), len - cut) != whole;
  }
  for (unsigned slices = 1; slices <= 256; slices = slices * 3 + 1, cases++) {
    size_t len = 70001, per = (len + slices - 1) / slices;
    uint32_t acc = 0;
    for (unsigned t = 0; t < slices; t++) {
      size_t a = t * per < len ? t * per : len, b = a + per < len ? a + per : len;
      acc = gz_crc32_combine(x2k, acc, gz_crc32_tab(table, buf + a, b - a), b - a);
    }
    bad += acc != (uint32_t)crc32(0L, buf, (uInt)len);
  }
  GZ_CHECK(cases > 1000 && bad == 0, "CRC-32 combine: %ld of %ld differ from zlib", bad,
           cases);
  free(buf);
}

static void fill_codes(int64_t *q, size_t n, uint64_t seed) {
  gz_rng_t rng;
  gz_rng_seed(&rng, seed);
  for (size_t i = 0; i < n; i++)
    q[i] = (int64_t)(1000.0 * sin((double)i * 0.002)) + (int64_t)(gz_rng_next(&rng) % 7) -
           3 + (i % 5000 == 17 ? (int64_t)1 << 40 : 0); /* some wide blocks */
}

static void test_indexed(void) {
  int64_t *q = malloc(N * sizeof *q), *r = malloc(N * sizeof *r),
          *a = malloc(N * sizeof *a);
  size_t bound = gz_codes_indexed_bound(N), size = 0, psize = 0, S = gz_seg_count(N);
  size_t nb = (N + GZ_BLOCK - 1) / GZ_BLOCK;
  unsigned char *m = malloc(bound), *plain = malloc(gz_codes_bound(N));
  uint64_t *boff = malloc((nb + 1) * sizeof *boff);
  int ok = 1;
  fill_codes(q, N, 3);
  GZ_CHECK(gz_codes_encode_indexed(q, 0, N, m, bound, &size) == GZ_OK, "indexed encode");
  GZ_CHECK(gz_codes_encode(q, N, plain, gz_codes_bound(N), &psize) == GZ_OK, "encode");
  GZ_CHECK(S == 1 + (nb - 1) / GZ_SEG_BLOCKS && size == 8 * S + psize &&
               memcmp(m + 8 * S, plain, psize) == 0,
           "indexed payload = gz_codes_encode (S %zu, %zu vs %zu bytes)", S, size, psize);
  for (size_t s = 0; s < S; s++)
    ok &= gz_seg_walk(m, m + 8 * S, size - 8 * S, N, s, boff);
  for (size_t b = 0; b < nb && ok; b++) {
    int len = (int)(N - b * GZ_BLOCK < GZ_BLOCK ? N - b * GZ_BLOCK : GZ_BLOCK);
    ok &= gz_block_decode_codes(m + 8 * S + boff[b], (size_t)(boff[b + 1] - boff[b]), len,
                                r + b * GZ_BLOCK) == boff[b + 1] - boff[b];
  }
  GZ_CHECK(ok && boff[nb] == size - 8 * S && memcmp(r, q, N * sizeof *q) == 0,
           "segment walk finds every block");

  memset(r, 0, N * sizeof *r);
  GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, size, r, 0, N) == GZ_OK &&
               memcmp(r, q, N * sizeof *q) == 0,
           "indexed replace round trip");
  for (int op = GZ_DEV_OP_SUM; op <= GZ_DEV_OP_MIN; op++) {
    int64_t *e = malloc(N * sizeof *e);
    fill_codes(a, N, 11);
    memcpy(e, a, N * sizeof *e);
    gz_codes_reduce((gz_op_t)op, e, q, N);
    GZ_CHECK(gz_codes_decode_indexed(op, m, size, a, 0, N) == GZ_OK &&
                 memcmp(a, e, N * sizeof *a) == 0,
             "indexed decode-reduce op %d", op);
    free(e);
  }
  /* truncation, a bad segment offset, a flipped width: reported, never read
   * out of bounds (ASan builds) */
  GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, size - 1, r, 0, N) ==
               GZ_ERR_CORRUPT,
           "truncated");
  GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, 8 * S - 1, r, 0, N) ==
               GZ_ERR_CORRUPT,
           "index cut");
  m[8] ^= 1;
  GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, size, r, 0, N) == GZ_ERR_CORRUPT,
           "bad segment offset");
  GZ_CHECK(!gz_seg_walk(m, m + 8 * S, size - 8 * S, N, 0, boff) ||
               !gz_seg_walk(m, m + 8 * S, size - 8 * S, N, 1, boff),
           "walk sees the bad offset");
  m[8] ^= 1;
  m[8 * S] = 65;
  GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, size, r, 0, N) == GZ_ERR_CORRUPT,
           "bad width");
  GZ_CHECK(gz_codes_encode_indexed(q, 0, N, m, bound - 1, &size) == GZ_ERR_CAPACITY,
           "capacity");
  GZ_CHECK(gz_codes_encode_indexed(q, 0, 0, m, 0, &size) == GZ_OK && size == 0 &&
               gz_codes_decode_indexed(GZ_DEV_OP_SUM, m, 0, r, 0, 0) == GZ_OK &&
               gz_codes_decode_indexed(GZ_DEV_OP_SUM, m, 1, r, 0, 0) == GZ_ERR_CORRUPT,
           "n = 0");
  /* int32 codes (narrow): the same bytes as int64, decoded back into int32;
   * a code beyond int32 is refused, never wrapped */
  {
    int32_t *q32 = malloc(N * sizeof *q32), *r32 = malloc(N * sizeof *r32);
    unsigned char *m32 = malloc(bound);
    size_t size32 = 0;
    GZ_CHECK(gz_codes_encode_indexed(q, 0, N, m, bound, &size) == GZ_OK &&
                 gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m, size, r32, 1, N) ==
                     GZ_ERR_CORRUPT,
             "narrow decode refuses a code beyond int32");
    for (size_t i = 0; i < N; i++)
      q[i] = q32[i] = (int32_t)(q[i] % 100000);
    GZ_CHECK(gz_codes_encode_indexed(q, 0, N, m, bound, &size) == GZ_OK &&
                 gz_codes_encode_indexed(q32, 1, N, m32, bound, &size32) == GZ_OK &&
                 size32 == size && memcmp(m, m32, size) == 0,
             "narrow encode = wide encode");
    GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_REPLACE, m32, size32, r32, 1, N) ==
                     GZ_OK &&
                 memcmp(r32, q32, N * sizeof *q32) == 0,
             "narrow round trip");
    GZ_CHECK(gz_codes_decode_indexed(GZ_DEV_OP_SUM, m32, size32, r32, 1, N) == GZ_OK,
             "narrow decode-sum");
    for (size_t i = 0; i < N && ok; i++)
      ok &= r32[i] == 2 * q32[i];
    GZ_CHECK(ok, "narrow decode-sum values");
    free(q32);
    free(r32);
    free(m32);
  }
  /* overflow reported */
  {
    int64_t big[3] = {INT64_MAX, 1, 2}, one[3] = {1, 1, 1};
    GZ_CHECK(gz_codes_encode_indexed(one, 0, 3, m, bound, &size) == GZ_OK &&
                 gz_codes_decode_indexed(GZ_DEV_OP_SUM, m, size, big, 0, 3) ==
                     GZ_ERR_OVERFLOW,
             "overflow");
  }
  free(q);
  free(r);
  free(a);
  free(m);
  free(plain);
  free(boff);
}

static void test_pool(void) {
  unsigned char mem[4096];
  gz_pool_t pool = {mem, sizeof mem, 0, 0, 0}, ws = {NULL, 0, 0, 0, 1};
  unsigned char *p1, *p2, *p3;
  GZ_CHECK(gz_pool_reserve(&pool, 8192) == GZ_ERR_NOMEM && pool.cap == sizeof mem,
           "never grows");
  GZ_CHECK(gz_pool_reserve(&pool, SIZE_MAX) == GZ_ERR_NOMEM, "overflowing request");
  GZ_CHECK(gz_pool_reserve(&pool, 1024) == GZ_OK, "reserve");
  p1 = gz_pool_take(&pool, 10, 8);
  p2 = gz_pool_take(&pool, 1, 1);
  p3 = gz_pool_take(&pool, 0, 8);
  GZ_CHECK(p1 == mem && p2 == mem + 128 && p3 != NULL, "aligned, disjoint (%td, %td)",
           p1 - mem, p2 - mem);
  GZ_CHECK(gz_pool_take(&pool, 1024, 1) == NULL, "beyond the reservation");
  GZ_CHECK(gz_pool_take(&pool, SIZE_MAX, 2) == NULL, "overflowing take");
  GZ_CHECK(gz_pool_reserve(&pool, 4096) == GZ_OK && gz_pool_take(&pool, 4096, 1) == mem &&
               gz_pool_take(&pool, 1, 1) == NULL,
           "whole pool, then nothing");
  /* the host workspace's kind: grows at a reservation, keeps what it has */
  GZ_CHECK(gz_pool_take(&ws, 0, 8) != NULL && gz_pool_take(&ws, 1, 1) == NULL,
           "empty growing pool");
  GZ_CHECK(gz_pool_reserve(&ws, gz_ws_add(0, 100, 1)) == GZ_OK && ws.cap >= 100 &&
               (p1 = gz_pool_take(&ws, 100, 1)) != NULL && ((uintptr_t)p1 & 63) == 0 &&
               gz_pool_take(&ws, 1, 1) == NULL,
           "grows to the reservation");
  if (p1)
    memset(p1, 1, 100);
  GZ_CHECK(gz_pool_reserve(&ws, 64) == GZ_OK && gz_pool_take(&ws, 50, 1) == p1,
           "a smaller call reuses the buffer");
  GZ_CHECK(gz_pool_reserve(&ws, 5056) == GZ_OK && ws.cap >= 5000 &&
               gz_pool_take(&ws, 5000, 1) != NULL,
           "grows again");
  GZ_CHECK(gz_pool_reserve(&ws, SIZE_MAX) == GZ_ERR_NOMEM, "overflowing request (grows)");
  gz_pool_free(&ws);
  GZ_CHECK(ws.base == NULL && ws.cap == 0, "freed");
}

static void test_cpu_ops(void) {
  gz_exec_t ex;
  uint64_t size_out = 0;
  double x[300], y[300], lo, hi, amax;
  int64_t q[300], q2[300], m;
  unsigned char buf[4096];
  size_t size = 0;
  memset(&ex, 0, sizeof ex);
  ex.be = &gz_backend_cpu;
  ex.size_out = &size_out;
  for (int i = 0; i < 300; i++)
    x[i] = sin(i * 0.1) * 3.0 + (i == 7 ? 0.5 * 2e-3 : 0.0);
  GZ_CHECK(!ex.be->on_device && strcmp(ex.be->name, "cpu") == 0, "the CPU table");
  GZ_CHECK(ex.be->quantize(&ex, GZ_FLOAT64, x, 300, 1e-3, (int64_t)1 << 40, q) == GZ_OK &&
               ex.be->sync(&ex) == GZ_OK,
           "quantize");
  GZ_CHECK(gz_quantize(GZ_FLOAT64, x, 300, 1e-3, (int64_t)1 << 40, q2) == GZ_OK &&
               memcmp(q, q2, sizeof q) == 0,
           "same codes as gz_quantize");
  GZ_CHECK(gz_exec_encode(&ex, q, 300, buf, sizeof buf, &size) == GZ_OK && size > 0,
           "encode via the table");
  memset(q2, 0, sizeof q2);
  GZ_CHECK(ex.be->decode_reduce(&ex, GZ_DEV_OP_REPLACE, buf, size, q2, 300) == GZ_OK &&
               ex.be->sync(&ex) == GZ_OK && memcmp(q, q2, sizeof q) == 0,
           "decode via the table");
  GZ_CHECK(ex.be->decode_reduce(&ex, GZ_DEV_OP_SUM, buf, size - 1, q2, 300) == GZ_OK &&
               ex.be->sync(&ex) == GZ_ERR_CORRUPT && ex.be->sync(&ex) == GZ_OK,
           "corruption deferred to sync, then cleared");
  GZ_CHECK(ex.be->dequantize(&ex, GZ_FLOAT64, q, 300, 1e-3, y) == GZ_OK, "dequantize");
  {
    int ok = 1;
    for (int i = 0; i < 300; i++)
      ok &= fabs(y[i] - x[i]) <= 1e-3 * (1 + 1e-12);
    GZ_CHECK(ok, "within the bound");
  }
  GZ_CHECK(ex.be->range(&ex, GZ_FLOAT64, x, 300, &lo, &hi, &amax) == GZ_OK && lo < 0 &&
               hi > 0 && amax == fmax(-lo, hi),
           "range");
  GZ_CHECK(ex.be->absmax(&ex, q, 300, &m) == GZ_OK && m == gz_codes_absmax(q, 300),
           "absmax");
  x[5] = NAN;
  GZ_CHECK(ex.be->quantize(&ex, GZ_FLOAT64, x, 300, 1e-3, (int64_t)1 << 40, q) == GZ_OK &&
               ex.be->sync(&ex) == GZ_ERR_RANGE,
           "a NaN escapes");
  x[5] = 1e30;
  GZ_CHECK(ex.be->quantize(&ex, GZ_FLOAT64, x, 300, 1e-3, (int64_t)1 << 40, q) == GZ_OK &&
               ex.be->sync(&ex) == GZ_ERR_RANGE,
           "an out-of-range code escapes");
  /* without CUDA or a device, the CUDA table says so instead of doing nothing */
  if (gz_device_count(NULL, 0) == 0) {
    gz_exec_t d;
    memset(&d, 0, sizeof d);
    d.be = &gz_backend_cuda;
    GZ_CHECK(d.be->quantize(&d, GZ_FLOAT64, x, 300, 1e-3, 1 << 20, q) != GZ_OK,
             "CUDA table without a device: an error, not silence");
  }
}

/* Config versions 1 and 2 (the algorithm as an enum) are refused, never
 * misread; a device pool without a device leaves host calls on their usual
 * path. */
static void test_config(void) {
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  GZ_CHECK(cfg.version == 3 && cfg.device_pool_bytes == 0 && !strcmp(cfg.algo, "auto"),
           "version 3 initializer");
  cfg.version = 1;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_ERR_VERSION && !ctx,
           "version-1 config refused");
  ctx = NULL;
  cfg = (gz_config_t)GZ_CONFIG_INIT;
  cfg.device_pool_bytes = 1 << 20;
  GZ_CHECK(gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) == GZ_OK && ctx &&
               ctx->dev_enabled && ctx->dev_ready == (gz_device_count(NULL, 0) > 0),
           "device pool configured");
  if (ctx) {
    float x[100], y[100];
    gz_report_t rep;
    for (int i = 0; i < 100; i++)
      x[i] = (float)i;
    GZ_CHECK(gz_allreduce(ctx, x, y, 100, GZ_FLOAT32, GZ_OP_SUM, &rep) == GZ_OK &&
                 !strstr(rep.reason, "device-centric"),
             "host buffers keep the CPU path (%s)", rep.reason);
  }
  gz_ctx_destroy(ctx);
  GZ_CHECK(gz_is_device_pointer(&cfg) == 0 && gz_is_device_pointer(NULL) == 0,
           "host pointers are not device pointers");
}

/* The indexed encoding written in pieces (the collectives' quantize fused
 * with encode) is gz_codes_encode_indexed's bytes, across several segments
 * and from either width; decoding it straight into values gives the values
 * and largest |code| of decode then dequantize. */
static void test_indexed_pieces(void) {
  const size_t n = 3 * (size_t)GZ_SEG_BLOCKS * GZ_BLOCK + 4321; /* 4 segments */
  const size_t pieces[] = {4096, 32 * 7, (size_t)GZ_SEG_BLOCKS * GZ_BLOCK + 32, n};
  int64_t *q = malloc(n * sizeof *q), amax = -1, ref_amax = -1;
  int32_t *q32 = malloc(n * sizeof *q32);
  size_t bound = gz_codes_indexed_bound(n), size = 0;
  unsigned char *m = malloc(bound), *w8 = malloc(bound);
  float *v = malloc(n * sizeof *v), *y = malloc(n * sizeof *y);
  double *vd = malloc(n * sizeof *vd), *yd = malloc(n * sizeof *yd);
  fill_codes(q, n, 5);
  for (size_t i = 0; i < n; i++)
    q32[i] = (int32_t)(q[i] % 100000);
  for (int narrow = 0; narrow < 2; narrow++) {
    const void *c = narrow ? (const void *)q32 : (const void *)q;
    GZ_CHECK(gz_codes_encode_indexed(c, narrow, n, m, bound, &size) == GZ_OK,
             "indexed encode (narrow %d)", narrow);
    for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
      gz_indexed_put_t w;
      gz_result_t rc = GZ_OK;
      memset(w8, 0xA5, bound);
      gz_codes_indexed_begin(&w, w8, n);
      for (size_t off = 0; off < n && rc == GZ_OK; off += pieces[p]) {
        size_t len = n - off < pieces[p] ? n - off : pieces[p];
        rc = gz_codes_indexed_put(
            &w, narrow ? (const void *)(q32 + off) : (const void *)(q + off), narrow,
            len);
      }
      GZ_CHECK(rc == GZ_OK && gz_codes_indexed_size(&w) == size && !memcmp(w8, m, size),
               "indexed encoding in pieces of %zu (narrow %d) = in one call", pieces[p],
               narrow);
    }
  }
  GZ_CHECK(gz_codes_indexed_put(&(gz_indexed_put_t){w8, 1, 1, 0, 0}, q, 0, 2) ==
               GZ_ERR_ARG,
           "a put beyond n is refused");
  /* decode fused with dequantization (m: the int32 codes' encoding) */
  for (size_t i = 0; i < n; i++)
    q[i] = q32[i];
  gz_dequantize_absmax(GZ_FLOAT32, q, n, 1e-3, y, &ref_amax);
  gz_dequantize(GZ_FLOAT64, q, n, 1e-3, yd);
  GZ_CHECK(gz_codes_decode_indexed_values(m, size, GZ_FLOAT32, n, 1e-3, v, &amax) ==
                   GZ_OK &&
               !memcmp(v, y, n * sizeof *v) && amax == ref_amax,
           "indexed decode+dequantize (float32) = decode then dequantize");
  GZ_CHECK(gz_codes_decode_indexed_values(m, size, GZ_FLOAT64, n, 1e-3, vd, &amax) ==
                   GZ_OK &&
               !memcmp(vd, yd, n * sizeof *vd) && amax == ref_amax,
           "indexed decode+dequantize (float64) = decode then dequantize");
  GZ_CHECK(gz_codes_decode_indexed_values(m, size - 1, GZ_FLOAT32, n, 1e-3, v, &amax) ==
               GZ_ERR_CORRUPT,
           "indexed decode+dequantize: truncated");
  free(q);
  free(q32);
  free(m);
  free(w8);
  free(v);
  free(y);
  free(vd);
  free(yd);
}

/* Decode+reduce fused with dequantization (a collective's last combine)
 * gives the values, largest |code| and result of decode+reduce into a copy
 * then dequantize, for SUM/MAX/MIN, int64 and int32 codes, at both SIMD
 * levels; the accumulator is not written; an int32 sum beyond 2^31 is
 * GZ_ERR_OVERFLOW as in decode+reduce, a truncated message corrupt. */
static void test_indexed_reduce_values(void) {
  const size_t n = 3 * (size_t)GZ_SEG_BLOCKS * GZ_BLOCK + 4321; /* 4 segments */
  int64_t *acc = malloc(n * sizeof *acc), *msg = malloc(n * sizeof *msg),
          *ref = malloc(n * sizeof *ref);
  int32_t *acc32 = malloc(n * sizeof *acc32), *msg32 = malloc(n * sizeof *msg32),
          *ref32 = malloc(n * sizeof *ref32);
  size_t bound = gz_codes_indexed_bound(n), size = 0;
  unsigned char *m = malloc(bound);
  double *v = malloc(n * sizeof *v), *y = malloc(n * sizeof *y);
  fill_codes(acc, n, 11);
  fill_codes(msg, n, 12);
  for (size_t i = 0; i < n; i++) {
    acc32[i] = (int32_t)(acc[i] % 100000);
    msg32[i] = (int32_t)(msg[i] % 100000);
  }
  for (int level = 0; level < 2; level++)
    for (int narrow = 0; narrow < 2; narrow++)
      for (int op = GZ_OP_SUM; op <= GZ_OP_MIN; op++)
        for (int t = 0; t < 2; t++) {
          gz_dtype_t dt = t ? GZ_FLOAT64 : GZ_FLOAT32;
          size_t esz = t ? sizeof(double) : sizeof(float);
          const void *a = narrow ? (const void *)acc32 : (const void *)acc;
          int64_t amax = -1, ref_amax = -2;
          gz_result_t rc, ref_rc;
          gz_codes_simd(level);
          GZ_CHECK(
              gz_codes_encode_indexed(narrow ? (const void *)msg32 : (const void *)msg,
                                      narrow, n, m, bound, &size) == GZ_OK,
              "indexed encode");
          memcpy(ref, acc, n * sizeof *ref);
          memcpy(ref32, acc32, n * sizeof *ref32);
          ref_rc = gz_codes_decode_indexed(
              op, m, size, narrow ? (void *)ref32 : (void *)ref, narrow, n);
          if (narrow)
            gz_dequantize32_absmax(dt, ref32, n, 1e-3, y, &ref_amax);
          else
            gz_dequantize_absmax(dt, ref, n, 1e-3, y, &ref_amax);
          rc = gz_codes_decode_indexed_reduce_values(op, m, size, a, narrow, dt, n, 1e-3,
                                                     v, &amax);
          GZ_CHECK(rc == GZ_OK && ref_rc == GZ_OK && !memcmp(v, y, n * esz) &&
                       amax == ref_amax,
                   "decode+reduce+dequantize = decode+reduce then dequantize (level %d, "
                   "narrow %d, op %d, %s)",
                   level, narrow, op, t ? "float64" : "float32");
        }
  /* the accumulator is read only; a truncated message; an int32 sum overflow */
  fill_codes(ref, n, 11);
  GZ_CHECK(!memcmp(ref, acc, n * sizeof *acc), "the accumulator is not written");
  {
    int64_t amax = 0;
    GZ_CHECK(gz_codes_decode_indexed_reduce_values(GZ_OP_SUM, m, size - 1, acc32, 1,
                                                   GZ_FLOAT64, n, 1e-3, v,
                                                   &amax) == GZ_ERR_CORRUPT,
             "decode+reduce+dequantize: truncated");
    for (size_t i = 0; i < n; i++)
      acc32[i] = i == n - 5 ? INT32_MAX - 10 : acc32[i];
    msg32[n - 5] = 11;
    GZ_CHECK(gz_codes_encode_indexed(msg32, 1, n, m, bound, &size) == GZ_OK,
             "indexed encode");
    memcpy(ref32, acc32, n * sizeof *ref32);
    GZ_CHECK(gz_codes_decode_indexed(GZ_OP_SUM, m, size, ref32, 1, n) ==
                     GZ_ERR_OVERFLOW &&
                 gz_codes_decode_indexed_reduce_values(GZ_OP_SUM, m, size, acc32, 1,
                                                       GZ_FLOAT64, n, 1e-3, v,
                                                       &amax) == GZ_ERR_OVERFLOW,
             "an int32 sum beyond 2^31: overflow, as decode+reduce");
  }
  gz_codes_simd(-1);
  free(acc);
  free(msg);
  free(ref);
  free(acc32);
  free(msg32);
  free(ref32);
  free(m);
  free(v);
  free(y);
}

int main(int argc, char **argv) {
  int rc;
  MPI_Init(&argc, &argv);
  test_block_sizes();
  test_crc();
  test_crc_combine();
  test_indexed();
  test_indexed_pieces();
  test_indexed_reduce_values();
  test_pool();
  test_cpu_ops();
  test_config();
  rc = gz_test_finish();
  MPI_Finalize();
  return rc;
}
