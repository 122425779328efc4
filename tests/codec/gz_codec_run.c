/* gz_codec_run.c - benchmark driver for bench/codec_peers.py (not a test):
 *   gz_codec_run FILE.raw D0xD1xD2 EB [REPEATS [PREDICTOR 0..3 [CHUNK_LEN]]]
 * compresses a raw little-endian float32 file with format version 2 on one
 * thread, REPEATS times (default 3), decompresses, checks every element
 * against EB (specials bit-exact) and prints one line:
 *   ratio=R compress_s=MEDIAN decompress_s=MEDIAN compress_cpu_s=MEDIAN
 *   decompress_cpu_s=MEDIAN violations=V
 * PREDICTOR 0 writes format 1 (the fast codec of `gzbench codec`).
 * (wall-clock medians, and the median CPU time of the process: on a shared
 * machine the CPU time is what the codec itself cost)
 * The field, the stream and the decoded values are in memory advised for
 * 2 MiB pages, as numpy's allocator advises the arrays of 4 MiB and more
 * that the peers (pysz, zfpy) read in bench/codec_peers.py: both sides then
 * read their input through the same kind of pages. */
#define _DEFAULT_SOURCE /* posix_memalign, madvise */
#include "gz_test.h"

#include "codec_check.h"
#include "gzcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* bytes of memory aligned to and advised for 2 MiB pages where Linux has
 * them (a hint: transparent huge pages in madvise mode) */
static void *huge(size_t bytes) {
  const size_t page = (size_t)2 << 20;
  size_t len = (bytes + page - 1) / page * page;
  void *p = NULL;
  if (posix_memalign(&p, page, len ? len : page) != 0)
    return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, len ? len : page, MADV_HUGEPAGE);
#endif
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  size_t bytes = 0, n = 1, size = 0, cap;
  double tc[15], td[15], tp[15], tq[15];
  int reps = argc > 4 ? atoi(argv[4]) : 3;
  char *dims = argc > 2 ? argv[2] : NULL, *tok;
  float *x, *y, *raw;
  uint8_t *s;
  if (argc < 4 || reps < 1 || reps > 15) {
    fprintf(stderr, "usage: %s FILE.raw D0xD1xD2 EB [REPEATS<=15 [PREDICTOR [CHUNK]]]\n",
            argv[0]);
    return 2;
  }
  raw = gz_test_read_file(argv[1], &bytes);
  if (!raw || !(x = huge(bytes))) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  memcpy(x, raw, bytes);
  free(raw);
  for (tok = strtok(dims, "x"); tok && p.ndims < GZ_CODEC_MAXDIMS;
       tok = strtok(NULL, "x")) {
    p.dims[p.ndims++] = (size_t)strtoull(tok, NULL, 10);
    n *= p.dims[p.ndims - 1];
  }
  if (n * 4 != bytes) {
    fprintf(stderr, "%s: %zu bytes, shape says %zu values\n", argv[1], bytes, n);
    return 1;
  }
  p.error_bound = atof(argv[3]);
  p.predictor = argc > 5 ? (gz_predictor_t)atoi(argv[5]) : GZ_PRED_AUTO;
  p.threads = 1;
  p.chunk_len = argc > 6 ? (uint32_t)atoi(argv[6]) : 0;
  cap = gz_compress_bound(GZ_FLOAT32, n, 0);
  s = huge(cap);
  y = huge(bytes);
  if (!s || !y)
    return 1;
  for (int r = 0; r < reps; r++) {
    double t0 = now(), c0 = cpu();
    if (gz_compress(&p, x, n, s, cap, &size) != GZ_OK)
      return 1;
    tc[r] = now() - t0;
    tp[r] = cpu() - c0;
    t0 = now();
    c0 = cpu();
    if (gz_decompress(s, size, y, n) != GZ_OK)
      return 1;
    td[r] = now() - t0;
    tq[r] = cpu() - c0;
  }
  qsort(tc, (size_t)reps, sizeof *tc, cmp);
  qsort(td, (size_t)reps, sizeof *td, cmp);
  qsort(tp, (size_t)reps, sizeof *tp, cmp);
  qsort(tq, (size_t)reps, sizeof *tq, cmp);
  printf("ratio=%.4f compress_s=%.6f decompress_s=%.6f compress_cpu_s=%.6f "
         "decompress_cpu_s=%.6f violations=%zu\n",
         (double)bytes / (double)size, tc[reps / 2], td[reps / 2], tp[reps / 2],
         tq[reps / 2], codec_violations(1, x, y, n, p.error_bound));
  free(x);
  free(y);
  free(s);
  return 0;
}
