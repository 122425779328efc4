/* pmpi_data.c - see pmpi_data.h. */
#include "pmpi_data.h"
#include "pmpi_util.h"

const pmpi_type_t pmpi_types[2] = {{MPI_FLOAT, 1, sizeof(float), "float"},
                                   {MPI_DOUBLE, 0, sizeof(double), "double"}};

double pmpi_input(const pmpi_type_t *t, int whole, int r, size_t i, int salt) {
  double v = whole ? pmpi_whole(r, i, salt) : pmpi_real(r, i, salt);
  return t->is_float ? (double)(float)v : v;
}

void pmpi_fill(const pmpi_type_t *t, int whole, void *buf, size_t n, int r, size_t first,
               int salt) {
  for (size_t k = 0; k < n; k++)
    pmpi_set(t, buf, k, pmpi_input(t, whole, r, first + k, salt));
}

double pmpi_get(const pmpi_type_t *t, const void *buf, size_t i) {
  return t->is_float ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

void pmpi_set(const pmpi_type_t *t, void *buf, size_t i, double v) {
  if (t->is_float)
    ((float *)buf)[i] = (float)v;
  else
    ((double *)buf)[i] = v;
}

unsigned long long pmpi_hash(const void *buf, size_t bytes) {
  const unsigned char *p = buf;
  unsigned long long h = 1469598103934665603ull;
  for (size_t k = 0; k < bytes; k++)
    h = (h ^ p[k]) * 1099511628211ull;
  return h;
}

int pmpi_same_on_all(const void *buf, size_t bytes, MPI_Comm comm) {
  unsigned long long h = pmpi_hash(buf, bytes), v[2] = {h, ~h}, m[2];
  PMPI_Allreduce(v, m, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  return m[0] == h && m[1] == ~h;
}
