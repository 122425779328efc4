/*
 * registry.c - the table of algorithms, built from registry.def: each row
 * is the gz_algorithm_t an algorithm's file defines (its name, collective,
 * workspace, run and cost functions, all of one signature).
 */
#include "coll_internal.h"

#define GZ_ALGORITHM(row) extern const gz_algorithm_t gz_algo_##row;
#include "registry.def"
#undef GZ_ALGORITHM

static const gz_algorithm_t *const rows[] = {
#define GZ_ALGORITHM(row) &gz_algo_##row,
#include "registry.def"
#undef GZ_ALGORITHM
};

static const gz_algorithm_t *find(gz_coll_t coll, gz_algo_t algo, int device) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i]->coll == coll && rows[i]->device == device &&
        (rows[i]->id == algo || (algo == GZ_ALGO_AUTO && rows[i]->id != GZ_ALGO_MPI)))
      return rows[i];
  return NULL;
}

const gz_algorithm_t *gz_algorithm(gz_coll_t coll, gz_algo_t algo) {
  return algo == GZ_ALGO_AUTO ? NULL : find(coll, algo, 0);
}

const gz_algorithm_t *gz_algorithm_device(gz_coll_t coll, gz_algo_t algo) {
  const gz_algorithm_t *row = algo == GZ_ALGO_AUTO ? NULL : find(coll, algo, 1);
  return row || algo == GZ_ALGO_MPI ? row : find(coll, GZ_ALGO_AUTO, 1);
}
