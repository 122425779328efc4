/* coll_util.h - helpers shared by the collective tests: seeded inputs,
 * element access by type, double-precision references, bound checks and
 * "same bytes on every rank". */
#ifndef GZ_COLL_UTIL_H
#define GZ_COLL_UTIL_H

#include "gz_test.h"
#include "gzcoll.h"

#include <stddef.h>
#include <stdint.h>

/* Every algorithm worth forcing for a collective, auto and mpi first. */
extern const char *const cu_allreduce_algos[4];

/* Buffers of n elements (+1 so n = 0 still gives a valid pointer). */
void *cu_alloc(gz_dtype_t dtype, size_t n);
double cu_get(gz_dtype_t dtype, const void *buf, size_t i);
void cu_set(gz_dtype_t dtype, void *buf, size_t i, double v);
/* Smooth field (a few sines) plus a little noise, amplitude amp, seeded. */
void cu_fill(gz_dtype_t dtype, void *buf, size_t n, uint64_t seed, double amp);
const char *cu_dtype_name(gz_dtype_t dtype);
const char *cu_op_name(gz_op_t op);

/* 1 when every rank of comm holds the same bytes. */
int cu_same_on_all(MPI_Comm comm, const void *p, size_t bytes);

/* Context with this algorithm, bound, mode and policy; NULL on failure
 * (counted as a failed check). */
gz_ctx_t cu_ctx(MPI_Comm comm, const char *algo, double e, gz_eb_mode_t mode,
                gz_bound_policy_t policy);

/* Reference of a reduction in double: ref[i] = op over ranks of in[i], and
 * slop[i] the rounding of that double reference (SUM: P 2^-52 sum |x|). */
void cu_reference(MPI_Comm comm, gz_dtype_t dtype, gz_op_t op, const void *in, size_t n,
                  double *ref, double *slop);

/* Elements with |got - ref| > bound + slop (slop may be NULL); prints the
 * first few, labelled what. */
long cu_count_wrong(gz_dtype_t dtype, const void *got, const double *ref,
                    const double *slop, size_t n, double bound, const char *what);

/* Rounding allowance of a result of magnitude up to rmax (float32: one ulp,
 * float64: a few ulps of double). */
double cu_round_allow(gz_dtype_t dtype, double rmax);

/* Max |ref[i]|. */
double cu_absmax(const double *x, size_t n);

/* Sum over comm of a local count (for messages on rank 0). */
long cu_sum(MPI_Comm comm, long v);

#endif
