/* gz_cast_run.c - speed of the casting codec (libgzcoll/src/codec/cast.c,
 * GZ_EB_PWREL's alltoall), portable against AVX2 loops (not a test):
 *   gz_cast_run [N [REPEATS]]
 * casts N values (default 2^23: 64 MiB of float64) of a smooth field with a
 * few escapes from float64 to float32, float16 and bfloat16 and from float32
 * to the 16-bit formats, and back, REPEATS times (default 7); prints per
 * format and instruction set the median GB/s of input bytes, wall clock and
 * CPU time (on a shared machine the CPU time is what the loop cost), and
 * checks that both sets wrote the same bytes. */
#define _POSIX_C_SOURCE 200809L
#include "codec/codec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_of(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return v[n / 2];
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 23;
  int reps = argc > 2 ? atoi(argv[2]) : 7, bad = 0;
  const gz_cast_t casts[] = {GZ_CAST_F32, GZ_CAST_F16, GZ_CAST_BF16};
  double *x = malloc(n * 8 + 8),
         *t = malloc(sizeof *t * 4 * (size_t)(reps > 0 ? reps : 1));
  float *xf = malloc(n * 4 + 4);
  uint8_t *enc[2] = {malloc(gz_cast_bound(GZ_FLOAT64, n)),
                     malloc(gz_cast_bound(GZ_FLOAT64, n))};
  void *out = malloc(n * 8 + 8);
  if (!x || !xf || !t || !enc[0] || !enc[1] || !out || reps < 1)
    return 2;
  for (size_t i = 0; i < n; i++) {
    x[i] = sin((double)i * 1e-3) * 1e3 + cos((double)i * 0.37);
    if (i % 100000 == 7)
      x[i] = NAN; /* an escape now and then */
    xf[i] = (float)x[i];
  }
  for (int dt = 0; dt < 2; dt++)
    for (int c = 0; c < 3; c++) {
      gz_dtype_t d = dt ? GZ_FLOAT32 : GZ_FLOAT64;
      const void *in = dt ? (const void *)xf : (const void *)x;
      size_t esz = dt ? 4 : 8, size[2] = {0, 0};
      if (d == GZ_FLOAT32 && casts[c] == GZ_CAST_F32)
        continue;
      for (int isa = GZ_ISA_PORTABLE; isa <= GZ_ISA_AVX2; isa++) {
        int s = isa - GZ_ISA_PORTABLE;
        if (!gz_isa_available(isa))
          continue;
        for (int r = 0; r < reps; r++) {
          double w0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID),
                 w1, c1;
          if (gz_cast_encode_isa(isa, d, casts[c], in, n, enc[s], gz_cast_bound(d, n),
                                 &size[s]) != GZ_OK)
            return 1;
          w1 = clock_of(CLOCK_MONOTONIC);
          c1 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
          if (gz_cast_decode_isa(isa, d, casts[c], enc[s], size[s], out, n) != GZ_OK)
            return 1;
          t[r] = w1 - w0;
          t[reps + r] = c1 - c0;
          t[2 * reps + r] = clock_of(CLOCK_MONOTONIC) - w1;
          t[3 * reps + r] = clock_of(CLOCK_PROCESS_CPUTIME_ID) - c1;
        }
        printf("%s -> %-8s %-8s encode %6.2f GB/s (CPU %6.2f)  decode %6.2f GB/s (CPU "
               "%6.2f)\n",
               dt ? "f32" : "f64", gz_cast_name(casts[c]), s ? "avx2" : "portable",
               (double)(n * esz) / median(t, reps) / 1e9,
               (double)(n * esz) / median(t + reps, reps) / 1e9,
               (double)(n * esz) / median(t + 2 * reps, reps) / 1e9,
               (double)(n * esz) / median(t + 3 * reps, reps) / 1e9);
      }
      if (gz_isa_available(GZ_ISA_AVX2) &&
          (size[0] != size[1] || memcmp(enc[0], enc[1], size[0]) != 0)) {
        printf("  AVX2 and portable bytes differ\n");
        bad = 1;
      }
    }
  free(x);
  free(xf);
  free(t);
  free(enc[0]);
  free(enc[1]);
  free(out);
  return bad;
}
