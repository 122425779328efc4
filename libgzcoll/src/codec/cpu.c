/*
 * cpu.c - what the CPU can run, asked once: the one run-time test behind the
 * codec's vector loops (values.c, codes.c). Its own file so that the HDF5
 * plugin's copy of the stream codec (h5z/) carries it too.
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
