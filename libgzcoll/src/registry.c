/*
 * registry.c - the table of algorithms, built from registry.def: each row
 * is the gz_algorithm_t an algorithm's file defines (its name, collective,
 * workspace, run and cost functions, all of one signature). Algorithms are
 * known by name only: the names GZCOLL_ALGO and cfg.algo accept are those
 * of the rows, "auto" and a few aliases.
 */
#include "coll_internal.h"

#include <ctype.h>
#include <string.h>

#define GZ_ALGORITHM(row) extern const gz_algorithm_t gz_algo_##row;
#include "registry.def"
#undef GZ_ALGORITHM

static const gz_algorithm_t *const rows[GZ_ROWS] = {
#define GZ_ALGORITHM(row) &gz_algo_##row,
#include "registry.def"
#undef GZ_ALGORITHM
};

const gz_algorithm_t *gz_row(int i) { return i >= 0 && i < GZ_ROWS ? rows[i] : NULL; }

int gz_row_index(const gz_algorithm_t *row) {
  for (int i = 0; i < GZ_ROWS; i++)
    if (rows[i] == row)
      return i;
  return -1;
}

int gz_row_is_mpi(const gz_algorithm_t *row) {
  return row && strcmp(row->name, GZ_ALGO_MPI_NAME) == 0;
}

const char *gz_algo_canon(const char *name) {
  static const struct {
    const char *alias, *name;
  } aliases[] = {{"auto", "auto"},
                 {"recursive_doubling", "redoub"},
                 {"rd", "redoub"},
                 {"tree", "binomial"},
                 {"none", GZ_ALGO_MPI_NAME}};
  char low[GZ_ALGO_NAME_MAX];
  size_t len;
  if (!name)
    return NULL;
  while (isspace((unsigned char)*name))
    name++;
  len = strlen(name);
  while (len && isspace((unsigned char)name[len - 1]))
    len--;
  if (len == 0 || len >= sizeof low)
    return NULL;
  for (size_t i = 0; i < len; i++)
    low[i] = (char)tolower((unsigned char)name[i]);
  low[len] = '\0';
  for (int i = 0; i < GZ_ROWS; i++)
    if (strcmp(low, rows[i]->name) == 0)
      return rows[i]->name;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(low, aliases[i].alias) == 0)
      return aliases[i].name;
  return NULL;
}

/* The row of coll on the host (device 0) or device side named name; NULL
 * name: the first compressed row. */
static const gz_algorithm_t *find(gz_coll_t coll, const char *name, int device) {
  for (int i = 0; i < GZ_ROWS; i++)
    if (rows[i]->coll == coll && rows[i]->device == device &&
        (name ? strcmp(rows[i]->name, name) == 0 : !gz_row_is_mpi(rows[i])))
      return rows[i];
  return NULL;
}

const gz_algorithm_t *gz_algorithm(gz_coll_t coll, const char *name) {
  if (!name || strcmp(name, "auto") == 0)
    return NULL;
  if (coll == GZ_COLL_P2P && strcmp(name, GZ_ALGO_MPI_NAME) != 0)
    return find(coll, NULL, 0); /* one compressed variant */
  return find(coll, name, 0);
}

const gz_algorithm_t *gz_algorithm_device(gz_coll_t coll, const char *name) {
  const gz_algorithm_t *row;
  if (!name || strcmp(name, "auto") == 0)
    return NULL;
  row = find(coll, name, 1);
  return row || strcmp(name, GZ_ALGO_MPI_NAME) == 0 ? row : find(coll, NULL, 1);
}
