/* pmpi_util.c - see pmpi_util.h. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "pmpi_util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const pmpi_kinds[6] = {
    "allreduce", "reduce_scatter_block", "allgather", "bcast", "scatter", "alltoall"};

typedef int (*counters_fn)(const char *, unsigned long long *);

int pmpi_counters(const char *kind, unsigned long long out[7]) {
  counters_fn fn;
  void *sym = dlsym(RTLD_DEFAULT, "gzcoll_pmpi_counters");
  memset(out, 0, 7 * sizeof out[0]);
  if (!sym)
    return -1;
  memcpy(&fn, &sym, sizeof fn); /* object -> function pointer, as POSIX allows */
  return fn(kind, out);
}

typedef int (*counters_n_fn)(const char *, unsigned long long *, int);

int pmpi_counters_n(const char *kind, unsigned long long *out, int n) {
  counters_n_fn fn;
  void *sym = dlsym(RTLD_DEFAULT, "gzcoll_pmpi_counters_n");
  memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof out[0]);
  if (!sym)
    return -1;
  memcpy(&fn, &sym, sizeof fn);
  return fn(kind, out, n);
}

unsigned long long pmpi_counter(const char *kind, int which) {
  unsigned long long out[7];
  pmpi_counters(kind, out);
  return out[which];
}

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t key(int rank, size_t i, int salt) {
  return mix(mix(mix((uint64_t)(unsigned)rank) ^ (uint64_t)i) ^ (uint64_t)(unsigned)salt);
}

double pmpi_real(int rank, size_t i, int salt) {
  double u = (double)(key(rank, i, salt) >> 11) * (1.0 / 9007199254740992.0);
  /* smooth part plus noise, so the codec sees structure */
  return 60.0 * sin(0.01 * (double)i + rank) + 40.0 * (2.0 * u - 1.0);
}

double pmpi_whole(int rank, size_t i, int salt) {
  return (double)(int64_t)(key(rank, i, salt) % 2001u) - 1000.0;
}

double pmpi_env_double(const char *name, double dflt) {
  const char *s = getenv(name);
  return s && *s ? atof(s) : dflt;
}

int pmpi_env_is(const char *name, const char *value) {
  const char *s = getenv(name);
  return s && strcmp(s, value) == 0;
}

double pmpi_tol(double exact, double bound, int is_float) {
  double m = fabs(exact) + bound;
  return bound * (1.0 + 1e-12) + (m > 0 ? ldexp(m, is_float ? -23 : -50) : 0.0);
}

typedef struct capture {
  int saved;
  FILE *file;
} capture_t;

static capture_t captures[4];

int pmpi_capture_begin(void) {
  for (int h = 0; h < 4; h++) {
    if (captures[h].file)
      continue;
    fflush(stderr);
    captures[h].file = tmpfile();
    if (!captures[h].file)
      return -1;
    captures[h].saved = dup(STDERR_FILENO);
    if (captures[h].saved < 0 || dup2(fileno(captures[h].file), STDERR_FILENO) < 0) {
      fclose(captures[h].file);
      captures[h].file = NULL;
      return -1;
    }
    return h;
  }
  return -1;
}

char *pmpi_capture_end(int h) {
  char *text = NULL;
  long size;
  if (h < 0 || h >= 4 || !captures[h].file)
    return NULL;
  fflush(stderr);
  dup2(captures[h].saved, STDERR_FILENO);
  close(captures[h].saved);
  if (fseek(captures[h].file, 0, SEEK_END) == 0 &&
      (size = ftell(captures[h].file)) >= 0 &&
      fseek(captures[h].file, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
    size_t got = fread(text, 1, (size_t)size, captures[h].file);
    text[got] = '\0';
    fputs(text, stderr);
  }
  fclose(captures[h].file);
  captures[h].file = NULL;
  return text;
}
