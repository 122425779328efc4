/*
 * cpu.c - what the CPU can run, asked once: the one run-time test behind the
 * codec's vector loops (values.c, codes.c, cast.c, chunk2.c, pred_lorenzo.c,
 * pred_value.c). Its own file so that the HDF5 plugin's copy of the stream
 * codec (h5z/) carries it too.
 */
#include "codec/codec.h"

int gz_cpu_avx2(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  static int have = -1;
  if (have < 0) { /* a race here writes the same value */
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx2") ? 1 : 0;
  }
  return have;
#else
  return 0;
#endif
}

/* Whether it runs the AVX-512 subsets F, VL, DQ and BW and BMI2 too (asked
 * once): the loops compiled for them at gz_chunk2_simd level 2 (chunk2.h
 * lists them). */
int gz_cpu_avx512(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  static int have = -1;
  if (have < 0) { /* a race here writes the same value */
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("bmi2")
               ? 1
               : 0;
  }
  return have;
#else
  return 0;
#endif
}

/* The AVX2 loops are compiled wherever gz_cpu_avx2 can answer 1. */
int gz_isa_available(int isa) {
  if (isa == GZ_ISA_PORTABLE || isa == GZ_ISA_AUTO)
    return 1;
  return isa == GZ_ISA_AVX2 && gz_cpu_avx2();
}
