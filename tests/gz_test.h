/* gz_test.h - the small harness every test uses: counted checks, a closing
 * "N passed, N failed" line, seeded random numbers and the real-data path. */
#ifndef GZ_TEST_H
#define GZ_TEST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Exit code ctest reads as "skipped" (SKIP_RETURN_CODE). */
#define GZ_TEST_SKIP 77

/* Record one check; on failure print where and the formatted reason. */
int gz_test_check(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
#define GZ_CHECK(cond, ...) gz_test_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Counts so far on this process. */
long gz_test_passed(void);
long gz_test_failed(void);

/* Print "N passed, N failed" and return the process exit code (0 if no
 * failure). The MPI form sums over comm, prints on rank 0 only, and returns
 * the same code on every rank. */
int gz_test_finish(void);
int gz_test_finish_mpi(MPI_Comm comm);

/* The MPI test's opening and closing: MPI_Init, then this rank and the size
 * of MPI_COMM_WORLD (either pointer may be NULL); at the end
 * gz_test_finish_mpi(MPI_COMM_WORLD), MPI_Finalize, and its exit code. */
void gz_test_init_mpi(int *argc, char ***argv, int *rank, int *size);
int gz_test_end_mpi(void);

/* Deterministic generator (splitmix64): same seed, same stream everywhere. */
typedef struct gz_rng {
  uint64_t state;
} gz_rng_t;
void gz_rng_seed(gz_rng_t *rng, uint64_t seed);
uint64_t gz_rng_next(gz_rng_t *rng);
double gz_rng_uniform(gz_rng_t *rng); /* [0, 1) */
double gz_rng_normal(gz_rng_t *rng);  /* N(0, 1) */

/* Folder of the real datasets (GZ_DATA_DIR, else ../shared/data relative to
 * the source tree), or NULL. gz_test_data_path() joins a relative name and
 * returns NULL when the file is absent; the string is static. */
const char *gz_test_data_dir(void);
const char *gz_test_data_path(const char *relative);

/* If relative is not readable, print "SKIP: <why>" and exit GZ_TEST_SKIP
 * (MPI form: every rank checks the same path, so all skip together;
 * MPI_Finalize is called first). Returns the full path otherwise. */
const char *gz_test_require_data(const char *relative);
const char *gz_test_require_data_mpi(const char *relative);

/* Select a device on every rank of MPI_COMM_WORLD (gz_device_select); if
 * any rank has none, print "SKIP: ..." on rank 0, MPI_Finalize and exit
 * GZ_TEST_SKIP on every rank. Returns this rank's device otherwise. */
int gz_test_require_device_mpi(void);

/* Read a whole file into a malloc'ed buffer (*size bytes); NULL on error. */
void *gz_test_read_file(const char *path, size_t *size);

#endif
