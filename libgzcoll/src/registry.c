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

const gz_algorithm_t *gz_algorithm(gz_coll_t coll, gz_algo_t algo) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i]->coll == coll && rows[i]->id == algo)
      return rows[i];
  return NULL;
}
