/* test_gpu_codec.c - CPU/GPU byte identity of the codec (needs a CUDA
 * device; exits 77 without one):
 *   - streams: gz_dev_compress == gz_compress byte for byte, on every
 *     adversarial field kind (specials, denormals, extremes, huge range...),
 *     float32 and float64, ABS and REL bounds, lossless, small chunks and
 *     ragged tails, and on the real seismic data (GZ_DATA_DIR);
 *   - the GPU decompresses the CPU's stream to the CPU's values, with zero
 *     bound violations; a damaged stream is reported by the GPU;
 *   - segment tables (format 3): streams whose chunks hold several segments
 *     decode on both sides; the same stream rewritten as format 1 (tables
 *     removed, sizes and CRCs redone) decodes to the same values on both;
 *     every kind of damaged table entry (checksums redone, so only the
 *     table walk can catch it) is refused by both;
 *   - codes: gz_dev_quantize == the CPU backend, the indexed encoding ==
 *     gz_codes_encode_indexed, decode-reduce == the CPU for SUM/MAX/MIN;
 *     quantize fused with encode (gz_dev_quantize_encode, and the backends'
 *     quantize_encode_async) == quantize then encode: the same codes, the
 *     same message bytes, the same escape verdict. */
#include "gz_test.h"

#include "codec_fields.h"
#include "device/backend.h"
#include "gz_block_walk.h"
#include "gz_device.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SODA "seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw"

static void *dmalloc(size_t bytes) {
  void *p = NULL;
  if (gz_dev_malloc(&p, bytes ? bytes : 1) != GZ_DEV_OK)
    GZ_CHECK(0, "cudaMalloc %zu: %s", bytes, gz_dev_last_error());
  return p;
}
static void h2d(void *d, const void *h, size_t b) {
  gz_dev_memcpy_async(d, h, b, NULL);
  gz_dev_stream_sync(NULL);
}
static void d2h(void *h, const void *d, size_t b) {
  gz_dev_memcpy_async(h, d, b, NULL);
  gz_dev_stream_sync(NULL);
}

static long violations(int f32, const void *x, const void *y, size_t n, double eb) {
  long bad = 0;
  for (size_t i = 0; i < n; i++) {
    double a = f32 ? ((const float *)x)[i] : ((const double *)x)[i];
    double b = f32 ? ((const float *)y)[i] : ((const double *)y)[i];
    if (isfinite(a) ? !(fabs(a - b) <= eb) : memcmp(&a, &b, sizeof a) != 0)
      bad++;
  }
  return bad;
}

/* Compress x on both sides, compare; decompress the CPU stream on the GPU. */
static void check_stream(const char *what, int f32, const void *x, size_t n, double eb,
                         gz_eb_mode_t mode, uint32_t chunk) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t esz = f32 ? 4 : 8, cap, hsize = 0, tmpb, dtmpb;
  unsigned char *hs, *gs;
  void *dx, *ds, *dt, *dy, *y = malloc(n * esz + 1);
  uint64_t *dsize, gsize = 0;
  unsigned *dflags, flags = 0;
  gz_stream_info_t info;
  p.dtype = f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.eb_mode = mode;
  p.chunk_len = chunk;
  cap = gz_compress_bound(p.dtype, n, chunk);
  hs = malloc(cap);
  gs = malloc(cap);
  tmpb = gz_dev_compress_tmp_bytes((int)p.dtype, n, chunk);
  dtmpb = gz_dev_decompress_tmp_bytes(n);
  dx = dmalloc(n * esz);
  ds = dmalloc(cap);
  dt = dmalloc(tmpb > dtmpb ? tmpb : dtmpb);
  dy = dmalloc(n * esz);
  dsize = dmalloc(8);
  dflags = dmalloc(sizeof *dflags);
  GZ_CHECK(gz_compress(&p, x, n, hs, cap, &hsize) == GZ_OK, "%s: CPU compress", what);
  h2d(dx, x, n * esz);
  GZ_CHECK(gz_dev_compress((int)p.dtype, (int)mode, eb, chunk, dx, n, ds, cap, dt, tmpb,
                           dsize, NULL) == GZ_DEV_OK,
           "%s: GPU compress: %s", what, gz_dev_last_error());
  d2h(&gsize, dsize, 8);
  d2h(gs, ds, gsize <= cap ? gsize : cap);
  GZ_CHECK(gsize == hsize && memcmp(gs, hs, hsize) == 0,
           "%s: GPU stream (%llu bytes) differs from the CPU's (%zu)", what,
           (unsigned long long)gsize, hsize);
  /* the GPU decodes the CPU's stream */
  h2d(ds, hs, hsize);
  gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
  GZ_CHECK(gz_dev_decompress((int)p.dtype, ds, hsize, dy, n, dt, dtmpb, dflags, NULL) ==
               GZ_DEV_OK,
           "%s: GPU decompress launch", what);
  d2h(&flags, dflags, sizeof flags);
  d2h(y, dy, n * esz);
  GZ_CHECK(flags == 0, "%s: GPU decompress flags %u", what, flags);
  if (gz_stream_info(hs, hsize, &info) == GZ_OK)
    GZ_CHECK(violations(f32, x, y, n, info.abs_bound) == 0, "%s: bound violations", what);
  {
    void *cy = malloc(n * esz + 1);
    GZ_CHECK(gz_decompress(hs, hsize, cy, n) == GZ_OK && memcmp(cy, y, n * esz) == 0,
             "%s: GPU values differ from the CPU's", what);
    free(cy);
  }
  /* damage: one byte in the last chunk, then a truncation */
  if (hsize > 60) {
    hs[hsize - 1] ^= 0x10;
    h2d(ds, hs, hsize);
    gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
    gz_dev_decompress((int)p.dtype, ds, hsize, dy, n, dt, dtmpb, dflags, NULL);
    d2h(&flags, dflags, sizeof flags);
    GZ_CHECK(flags & GZ_DEV_FLAG_CORRUPT, "%s: damaged stream not reported", what);
    hs[hsize - 1] ^= 0x10;
    h2d(ds, hs, hsize);
    gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
    gz_dev_decompress((int)p.dtype, ds, hsize - 1, dy, n, dt, dtmpb, dflags, NULL);
    d2h(&flags, dflags, sizeof flags);
    GZ_CHECK(flags & GZ_DEV_FLAG_CORRUPT, "%s: truncated stream not reported", what);
  }
  gz_dev_free(dx);
  gz_dev_free(ds);
  gz_dev_free(dt);
  gz_dev_free(dy);
  gz_dev_free(dsize);
  gz_dev_free(dflags);
  free(hs);
  free(gs);
  free(y);
}

static uint32_t crc_of(const uint8_t *p, size_t size) {
  static uint32_t table[256];
  if (!table[1])
    gz_crc32_table_fill(table);
  return gz_crc32_tab(table, p, size);
}

/* Redo the chunk CRCs, the index CRC and the header CRC of a format-1/3
 * stream whose chunk sizes in the index are right. */
static void restamp(uint8_t *s) {
  uint32_t nchunks = gz_get_u32le(s + 36);
  uint8_t *index = s + GZ_STREAM_HEADER, *chunk = index + 8 * (size_t)nchunks + 4;
  for (uint32_t c = 0; c < nchunks; c++) {
    uint32_t size = gz_get_u32le(index + 8 * c);
    gz_put_u32le(index + 8 * c + 4, crc_of(chunk, size));
    chunk += size;
  }
  gz_put_u32le(index + 8 * nchunks, crc_of(index, 8 * (size_t)nchunks));
  gz_put_u32le(s + 40, crc_of(s, 40));
}

/* The format-1 stream of a format-3 one (the same blocks, no tables); returns
 * its size. */
static size_t to_format1(const uint8_t *in, uint8_t *out) {
  uint64_t n = gz_get_u64le(in + 24);
  uint32_t chunk_len = gz_get_u32le(in + 32), nchunks = gz_get_u32le(in + 36);
  const uint8_t *src = in + GZ_STREAM_HEADER + 8 * (size_t)nchunks + 4;
  uint8_t *dst = out + GZ_STREAM_HEADER + 8 * (size_t)nchunks + 4;
  memcpy(out, in, GZ_STREAM_HEADER + 8 * (size_t)nchunks + 4);
  out[4] = 1;
  for (uint32_t c = 0; c < nchunks; c++) {
    uint64_t first = (uint64_t)c * chunk_len;
    size_t table = gz_stream_table_bytes(n - first < chunk_len ? n - first : chunk_len);
    uint32_t size = gz_get_u32le(in + GZ_STREAM_HEADER + 8 * c);
    memcpy(dst, src + table, size - table);
    gz_put_u32le(out + GZ_STREAM_HEADER + 8 * c, (uint32_t)(size - table));
    src += size;
    dst += size - table;
  }
  restamp(out);
  return (size_t)(dst - out);
}

/* Decode s on the CPU and the GPU: 1 when both succeed with the same
 * values (y), 0 when both refuse it, -1 when they disagree. */
static int decode_both(const uint8_t *s, size_t size, int f32, size_t n, void *y) {
  size_t esz = f32 ? 4 : 8, tmpb = gz_dev_decompress_tmp_bytes(n);
  void *ds = dmalloc(size), *dy = dmalloc(n * esz), *dt = dmalloc(tmpb);
  void *g = malloc(n * esz + 1);
  unsigned *dflags = dmalloc(sizeof *dflags), flags = 0;
  gz_result_t rc = gz_decompress(s, size, y, n);
  int verdict;
  h2d(ds, s, size);
  gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
  gz_dev_decompress(f32 ? 1 : 2, ds, size, dy, n, dt, tmpb, dflags, NULL);
  d2h(&flags, dflags, sizeof flags);
  d2h(g, dy, n * esz);
  if (rc == GZ_OK && flags == 0)
    verdict = memcmp(g, y, n * esz) == 0 ? 1 : -1;
  else
    verdict = rc == GZ_ERR_CORRUPT && (flags & GZ_DEV_FLAG_CORRUPT) ? 0 : -1;
  gz_dev_free(ds);
  gz_dev_free(dy);
  gz_dev_free(dt);
  gz_dev_free(dflags);
  free(g);
  return verdict;
}

/* Segment tables: n values in chunks of `chunk` (several segments each). */
static void check_tables(const char *what, int f32, const void *x, size_t n, double eb,
                         uint32_t chunk) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t esz = f32 ? 4 : 8, cap, size = 0, size1, table0;
  uint8_t *s, *s1, *bad;
  void *y = malloc(n * esz + 1), *y1 = malloc(n * esz + 1);
  p.dtype = f32 ? GZ_FLOAT32 : GZ_FLOAT64;
  p.error_bound = eb;
  p.chunk_len = chunk;
  cap = gz_compress_bound(p.dtype, n, chunk);
  s = malloc(cap);
  s1 = malloc(cap);
  bad = malloc(cap);
  table0 = gz_stream_table_bytes(
      n < (chunk ? chunk : GZ_CHUNK_DEFAULT) ? n : (chunk ? chunk : GZ_CHUNK_DEFAULT));
  if (!GZ_CHECK(gz_compress(&p, x, n, s, cap, &size) == GZ_OK && s[4] == 3 && table0 >= 4,
                "%s: format 3 with a table (%zu bytes)", what, table0))
    table0 = 0;
  GZ_CHECK(decode_both(s, size, f32, n, y) == 1, "%s: format 3 decodes alike", what);
  size1 = to_format1(s, s1);
  GZ_CHECK(
      decode_both(s1, size1, f32, n, y1) == 1 && memcmp(y, y1, n * esz) == 0,
      "%s: the format-1 copy (%zu bytes, %zu with tables) decodes to the same values",
      what, size1, size);
  if (table0) {
    const uint8_t *t = s + GZ_STREAM_HEADER + 8 * (size_t)gz_get_u32le(s + 36) + 4;
    size_t off = (size_t)(t - s), last = table0 / 4 - 1;
    uint32_t e0 = gz_get_u32le(t), el = gz_get_u32le(t + 4 * last);
    const uint32_t damage[][2] = {{0, e0 + 1},
                                  {0, e0 - 1},
                                  {0, 0},
                                  {0, 0xffffffffu},
                                  {(uint32_t)last, el + 1},
                                  {(uint32_t)last, el - 2},
                                  {(uint32_t)last, e0}};
    for (size_t k = 0; k < sizeof damage / sizeof *damage; k++) {
      memcpy(bad, s, size);
      gz_put_u32le(bad + off + 4 * damage[k][0], damage[k][1]);
      restamp(bad);
      if (memcmp(bad, s, size) == 0)
        continue; /* entry 0 == entry last: nothing changed */
      GZ_CHECK(decode_both(bad, size, f32, n, y1) == 0,
               "%s: table entry %u set to %u (was %u) not refused by both", what,
               damage[k][0], damage[k][1], gz_get_u32le(t + 4 * damage[k][0]));
    }
  }
  free(s);
  free(s1);
  free(bad);
  free(y);
  free(y1);
}

static void check_codes(const char *what, int f32, const void *x, size_t n, double eb) {
  size_t esz = f32 ? 4 : 8, bound = gz_codes_indexed_bound(n), hsize = 0;
  size_t tmpb = gz_dev_codes_tmp_bytes(n);
  int64_t *q = malloc(n * 8 + 8), *g = malloc(n * 8 + 8), *acc = malloc(n * 8 + 8);
  unsigned char *hm = malloc(bound + 1), *gm = malloc(bound + 1);
  void *dx = dmalloc(n * esz), *dq = dmalloc(n * 8), *dm = dmalloc(bound),
       *dt = dmalloc(tmpb);
  uint64_t *dsize = dmalloc(8), gsize = 0, hs = 0;
  unsigned *dflags = dmalloc(sizeof *dflags), flags = 0;
  gz_exec_t ex;
  memset(&ex, 0, sizeof ex);
  ex.be = &gz_backend_cpu;
  ex.size_out = &hs;
  unsigned qflags = 0, fflags = 0;
  gz_result_t qrc;
  ex.be->quantize(&ex, f32 ? GZ_FLOAT32 : GZ_FLOAT64, x, n, eb, (int64_t)1 << 40, q);
  qrc = ex.be->sync(&ex);
  h2d(dx, x, n * esz);
  gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
  gz_dev_quantize(f32 ? 1 : 2, dx, n, eb, (double)((int64_t)1 << 40), dq, dflags, NULL);
  d2h(g, dq, n * 8);
  d2h(&qflags, dflags, sizeof qflags);
  GZ_CHECK(memcmp(q, g, n * 8) == 0, "%s: GPU codes differ", what);
  GZ_CHECK((qrc == GZ_ERR_RANGE) == (qflags == GZ_DEV_FLAG_ESCAPE) &&
               (qrc == GZ_OK || qrc == GZ_ERR_RANGE),
           "%s: escape verdicts: CPU %d, GPU flags %u", what, (int)qrc, qflags);
  GZ_CHECK(gz_codes_encode_indexed(q, 0, n, hm, bound, &hsize) == GZ_OK, "%s: encode",
           what);
  GZ_CHECK(gz_dev_codes_encode(dq, n, dm, bound, dt, tmpb, dsize, NULL) == GZ_DEV_OK,
           "%s: GPU encode: %s", what, gz_dev_last_error());
  d2h(&gsize, dsize, 8);
  d2h(gm, dm, gsize <= bound ? gsize : bound);
  GZ_CHECK(gsize == hsize && memcmp(gm, hm, hsize) == 0, "%s: GPU indexed bytes differ",
           what);
  /* quantize fused with encode: GPU kernel, then both backends' op */
  gz_dev_memset_async(dq, 0x5a, n * 8, NULL);
  gz_dev_memset_async(dm, 0x5a, bound, NULL);
  gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
  GZ_CHECK(gz_dev_quantize_encode(f32 ? 1 : 2, dx, n, eb, (double)((int64_t)1 << 40), dq,
                                  dflags, dm, bound, dt, tmpb, dsize, NULL) == GZ_DEV_OK,
           "%s: GPU quantize-encode: %s", what, gz_dev_last_error());
  d2h(g, dq, n * 8);
  d2h(&fflags, dflags, sizeof fflags);
  d2h(&gsize, dsize, 8);
  d2h(gm, dm, gsize <= bound ? gsize : bound);
  GZ_CHECK(memcmp(q, g, n * 8) == 0 && fflags == qflags && gsize == hsize &&
               memcmp(gm, hm, hsize) == 0,
           "%s: fused quantize-encode differs (flags %u, quantize's %u; %llu bytes, %zu)",
           what, fflags, qflags, (unsigned long long)gsize, hsize);
  { /* the CPU backend's op (the CUDA one, through the collectives' tests) */
    gz_exec_t fx;
    uint64_t fsize = 0;
    gz_result_t frc;
    memset(&fx, 0, sizeof fx);
    fx.be = &gz_backend_cpu;
    fx.size_out = &fsize;
    memset(g, 0x5a, n * 8);
    frc = fx.be->quantize_encode_async(&fx, f32 ? GZ_FLOAT32 : GZ_FLOAT64, x, n, eb,
                                       (int64_t)1 << 40, g, gm, bound);
    frc = frc == GZ_OK ? fx.be->sync(&fx) : frc;
    GZ_CHECK(frc == qrc && memcmp(q, g, n * 8) == 0 && fsize == hsize &&
                 memcmp(gm, hm, hsize) == 0,
             "%s: the CPU backend's quantize_encode_async differs", what);
  }
  for (int op = GZ_DEV_OP_SUM; op <= GZ_DEV_OP_REPLACE; op++) {
    for (size_t i = 0; i < n; i++)
      acc[i] = (int64_t)(i % 1000) - 500;
    h2d(dq, acc, n * 8);
    GZ_CHECK(gz_codes_decode_indexed(op, hm, hsize, acc, 0, n) == GZ_OK, "%s: CPU decode",
             what);
    gz_dev_memset_async(dflags, 0, sizeof *dflags, NULL);
    gz_dev_codes_decode_reduce(op, dm, hsize, dq, n, dt, tmpb, dflags, NULL);
    d2h(g, dq, n * 8);
    d2h(&flags, dflags, sizeof flags);
    GZ_CHECK(flags == 0 && memcmp(acc, g, n * 8) == 0, "%s: GPU decode op %d differs",
             what, op);
  }
  gz_dev_free(dx);
  gz_dev_free(dq);
  gz_dev_free(dm);
  gz_dev_free(dt);
  gz_dev_free(dsize);
  gz_dev_free(dflags);
  free(q);
  free(g);
  free(acc);
  free(hm);
  free(gm);
}

/* argv[1] "small": no 300007 and no real data (tiny-grid run); "tsan":
 * sizes 33, 1000 and 9001 (three chunks of 4096), half the field kinds, two
 * bounds (ThreadSanitizer build, one OS thread per GPU thread: the 32 threads
 * of a warp meet in the kernel at every warp intrinsic, so each value costs
 * much more than in the fiber emulation). */
int main(int argc, char **argv) {
  static const size_t sizes[] = {1, 31, 32, 33, 1000, 70001, 300007};
  static const double ebs[] = {0.0, 1e-6, 1e-4, 1e-2};
  char why[160] = "", what[128];
  const char *soda;
  int rc, small = argc > 1 && strcmp(argv[1], "small") == 0,
          tsan = argc > 1 && strcmp(argv[1], "tsan") == 0;
  size_t nsizes = sizeof sizes / sizeof *sizes - (small || tsan);
  MPI_Init(&argc, &argv);
  if (gz_device_count(why, sizeof why) == 0) {
    printf("SKIP: %s\n", why);
    MPI_Finalize();
    return GZ_TEST_SKIP;
  }
  for (int kind = 0; kind < FIELD_COUNT; kind += tsan ? 2 : 1) {
    for (int f32 = 0; f32 < 2; f32++) {
      for (size_t s = tsan ? 3 : 0; s < nsizes; s++) {
        size_t n = tsan && sizes[s] == 70001 ? 9001 : sizes[s];
        void *x = malloc(n * (f32 ? 4 : 8));
        field_fill((field_kind_t)kind, f32, x, n, 1234 + n);
        for (size_t e = 0; e < sizeof ebs / sizeof *ebs; e += tsan ? 2 : 1) {
          snprintf(what, sizeof what, "%s %s n %zu eb %g", field_names[kind],
                   f32 ? "f32" : "f64", n, ebs[e]);
          check_stream(what, f32, x, n, ebs[e], GZ_EB_ABS, s % 2 ? 4096 : 0);
          if (ebs[e] > 0) {
            check_stream(what, f32, x, n, ebs[e], GZ_EB_REL, 0);
            check_codes(what, f32, x, n, ebs[e]);
          }
        }
        free(x);
      }
    }
  }
  /* segment tables: 3 chunks of 2 segments + a tail (1 segment; tsan: one
   * chunk of 2 segments); and one chunk of 9 (the default chunk) */
  for (int kind = 0; kind < FIELD_COUNT; kind += tsan ? 2 : 1) {
    for (int f32 = 0; f32 < 2; f32++) {
      size_t n = tsan ? 9001 : 3 * 16384 + 5000;
      void *x = malloc(n * (f32 ? 4 : 8));
      field_fill((field_kind_t)kind, f32, x, n, 77 + n);
      snprintf(what, sizeof what, "tables %s %s n %zu", field_names[kind],
               f32 ? "f32" : "f64", n);
      check_tables(what, f32, x, n, kind == FIELD_NOISE ? 0.0 : 1e-3, tsan ? 0 : 16384);
      free(x);
    }
  }
  if (!tsan) {
    size_t n = 70001;
    float *x = malloc(n * 4);
    field_fill(FIELD_SMOOTH, 1, x, n, 5);
    check_tables("tables smooth f32 default chunk", 1, x, n, 1e-4, 0);
    free(x);
  }
  soda = small || tsan ? NULL : gz_test_data_path(SODA);
  if (soda) {
    size_t bytes = 0;
    float *x = gz_test_read_file(soda, &bytes);
    GZ_CHECK(x != NULL, "read %s", soda);
    if (x) {
      check_stream("soda lakes eb 1e-4", 1, x, bytes / 4, 1e-4, GZ_EB_ABS, 0);
      check_stream("soda lakes rel 1e-5", 1, x, bytes / 4, 1e-5, GZ_EB_REL, 0);
      check_codes("soda lakes codes", 1, x, bytes / 4, 1e-3);
    }
    free(x);
  } else {
    printf("note: %s not found, real-data part skipped\n", SODA);
  }
  rc = gz_test_finish();
  MPI_Finalize();
  return rc;
}
