/* gz_test.c - see gz_test.h. */
#include "gz_test.h"

#include "gzcoll.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long passed_count;
static long failed_count;

int gz_test_check(int ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    passed_count++;
    return 1;
  }
  failed_count++;
  if (failed_count <= 50) {
    va_list ap;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
  }
  return 0;
}

long gz_test_passed(void) { return passed_count; }
long gz_test_failed(void) { return failed_count; }

int gz_test_finish(void) {
  printf("%ld passed, %ld failed\n", passed_count, failed_count);
  fflush(stdout);
  return failed_count ? 1 : 0;
}

int gz_test_finish_mpi(MPI_Comm comm) {
  long local[2] = {passed_count, failed_count}, total[2] = {0, 0};
  int rank = 0;
  MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, comm);
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    printf("%ld passed, %ld failed\n", total[0], total[1]);
    fflush(stdout);
  }
  return total[1] ? 1 : 0;
}

void gz_test_init_mpi(int *argc, char ***argv, int *rank, int *size) {
  MPI_Init(argc, argv);
  if (rank)
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (size)
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

int gz_test_end_mpi(void) {
  int rc = gz_test_finish_mpi(MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

void gz_rng_seed(gz_rng_t *rng, uint64_t seed) { rng->state = seed; }

uint64_t gz_rng_next(gz_rng_t *rng) {
  uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double gz_rng_uniform(gz_rng_t *rng) {
  return (double)(gz_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

double gz_rng_normal(gz_rng_t *rng) {
  double u1 = gz_rng_uniform(rng), u2 = gz_rng_uniform(rng);
  if (u1 < 1e-300)
    u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

const char *gz_test_data_dir(void) {
  static char dir[4096];
  const char *env = getenv("GZ_DATA_DIR");
  if (env && *env) {
    snprintf(dir, sizeof dir, "%s", env);
    return access(dir, R_OK) == 0 ? dir : NULL;
  }
  return NULL;
}

const char *gz_test_data_path(const char *relative) {
  static char path[4096];
  const char *dir = gz_test_data_dir();
  if (!dir)
    return NULL;
  int n = snprintf(path, sizeof path, "%s/%s", dir, relative);
  if (n < 0 || (size_t)n >= sizeof path)
    return NULL;
  return access(path, R_OK) == 0 ? path : NULL;
}

static const char *require_data(const char *relative, int use_mpi) {
  const char *path = gz_test_data_path(relative);
  if (path)
    return path;
  printf("SKIP: real dataset %s not found (set GZ_DATA_DIR to ../shared/data)\n",
         relative);
  fflush(stdout);
  if (use_mpi)
    MPI_Finalize();
  exit(GZ_TEST_SKIP);
}

const char *gz_test_require_data(const char *relative) {
  return require_data(relative, 0);
}

const char *gz_test_require_data_mpi(const char *relative) {
  return require_data(relative, 1);
}

int gz_test_require_device_mpi(void) {
  int dev = -1, rank = 0, none;
  gz_result_t sel = gz_device_select(MPI_COMM_WORLD, &dev);
  none = sel != GZ_OK;
  MPI_Allreduce(MPI_IN_PLACE, &none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!none)
    return dev;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("SKIP: no CUDA device on some rank (%s)\n", gz_strerror(sel));
  fflush(stdout);
  MPI_Finalize();
  exit(GZ_TEST_SKIP);
}

void *gz_test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long len;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
    goto fail;
  buf = malloc(len ? (size_t)len : 1);
  if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
    goto fail;
  fclose(f);
  *size = (size_t)len;
  return buf;
fail:
  free(buf);
  fclose(f);
  return NULL;
}
