/* pmpi_data.h - typed buffers of the libgzcoll_pmpi tests: float or double
 * data described by its MPI datatype, filled from pmpi_util's generators. */
#ifndef PMPI_DATA_H
#define PMPI_DATA_H

#include <mpi.h>
#include <stddef.h>

typedef struct pmpi_type {
  MPI_Datatype type; /* MPI_FLOAT or MPI_DOUBLE */
  int is_float;
  size_t esz;
  const char *name;
} pmpi_type_t;

extern const pmpi_type_t pmpi_types[2]; /* float, double */

/* The value rank r contributes at index i, rounded to the type (so that an
 * exact reference can be computed on any rank). whole: integer-valued. */
double pmpi_input(const pmpi_type_t *t, int whole, int r, size_t i, int salt);
/* buf[k] = pmpi_input(t, whole, r, first + k, salt) for k < n. */
void pmpi_fill(const pmpi_type_t *t, int whole, void *buf, size_t n, int r, size_t first,
               int salt);
double pmpi_get(const pmpi_type_t *t, const void *buf, size_t i);
void pmpi_set(const pmpi_type_t *t, void *buf, size_t i, double v);
/* FNV-1a of n bytes, for "every rank holds the same bytes" checks. */
unsigned long long pmpi_hash(const void *buf, size_t bytes);
/* 1 when every rank of comm passed the same hash (uses PMPI_Allreduce, not
 * counted by the library). */
int pmpi_same_on_all(const void *buf, size_t bytes, MPI_Comm comm);

#endif
