/* pmpi_util.h - helpers of the libgzcoll_pmpi tests. The tests are plain MPI
 * programs (mpi.h only, no gzcoll header): the library is preloaded by the
 * test command, and its counters are looked up by name with dlsym. */
#ifndef PMPI_UTIL_H
#define PMPI_UTIL_H

#include <mpi.h>
#include <stddef.h>

/* Counters of the preloaded library for a call kind ("allreduce", ...):
 * out[0..6] = routed, compressed, passed, fallback, bytes_raw, bytes_sent,
 * ns; "contexts": created, destroyed, alive. Returns 0, or -1 when the
 * library is not loaded (a test then fails: it must run preloaded). */
enum { PC_ROUTED, PC_COMPRESSED, PC_PASSED, PC_FALLBACK, PC_RAW, PC_SENT, PC_NS };
int pmpi_counters(const char *kind, unsigned long long out[7]);
/* The same through gzcoll_pmpi_counters_n: up to n counters, the 7 above
 * then PC_EXPLORED; returns the number written, -1 as above. */
enum { PC_EXPLORED = 7, PC_COUNT_N = 8 };
int pmpi_counters_n(const char *kind, unsigned long long *out, int n);
/* Counter `which` of kind (0 when the library is absent). */
unsigned long long pmpi_counter(const char *kind, int which);

/* Deterministic test data: the same (rank, i, salt) gives the same value on
 * every rank, so each rank can compute any other rank's contribution. */
double pmpi_real(int rank, size_t i, int salt);  /* in [-100, 100) */
double pmpi_whole(int rank, size_t i, int salt); /* integer in [-1000, 1000] */

/* The six collectives' kind names, in a fixed order. */
extern const char *const pmpi_kinds[6];

/* Environment helpers. */
double pmpi_env_double(const char *name, double dflt);
int pmpi_env_is(const char *name, const char *value);

/* Allowed |computed - exact| for a result element: the bound, plus one unit
 * in the last place of the result's own type (float: 2^-23 relative,
 * double: 2^-50 relative) for the final conversion. */
double pmpi_tol(double exact, double bound, int is_float);

/* Capture this process's stderr into a temporary file: begin returns a
 * handle (-1 on failure); end restores stderr and returns the captured text
 * (malloc'ed, NUL-terminated; NULL on failure). The text is also written to
 * the real stderr so the test log keeps it. */
int pmpi_capture_begin(void);
char *pmpi_capture_end(int handle);

#endif
