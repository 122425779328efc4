/*
 * gz_env.h - the GZCOLL_* environment variables, read in one place (env.c)
 * by the library (ctx.c, device/device_ctx.c) and by libgzcoll_pmpi
 * (pmpi/env_config.c). Internal: not part of the public gzcoll.h.
 *
 * Every getter treats an unset or empty variable as unset (the caller keeps
 * its default), stores the value only when it parses, and returns one of
 * the GZ_ENV_* statuses. Words (booleans, enum names, collective names) are
 * compared without regard to case; surrounding blanks are allowed around
 * numbers.
 */
#ifndef GZ_ENV_H
#define GZ_ENV_H

#include "gzcoll.h"

#include <stddef.h>

#define GZ_ENV_BAD (-1) /* set but not valid: the caller reports it */
#define GZ_ENV_UNSET 0  /* unset or empty: *value untouched */
#define GZ_ENV_SET 1    /* parsed into *value */

/* The value, or NULL when unset or empty. */
const char *gz_env_get(const char *name);
/* A number > 0 and finite (strtod syntax). */
int gz_env_double(const char *name, double *value);
/* A byte count: digits with an optional suffix k, m or g (x 1024 each). */
int gz_env_size(const char *name, size_t *value);
/* 1/0, on/off, yes/no, true/false. */
int gz_env_bool(const char *name, int *value);
/* One of names[] (NULL-terminated): *index is its position. */
int gz_env_enum(const char *name, const char *const *names, int *index);

/* GZCOLL_ALGO's grammar: "name" (coll = -1: every collective it applies to)
 * or "coll=name[,coll=name...]" with the collectives allreduce,
 * reduce_scatter (alias reduce_scatter_block), allgather, bcast, scatter,
 * alltoall, p2p (alias send). apply (may be NULL: check the grammar only)
 * is called for each item in order, with the name's canonical spelling
 * ("auto" or a row's name, gz_algo_canon), and returns 0 to refuse it. */
typedef int (*gz_env_algo_fn)(void *arg, int coll, const char *algo);
int gz_env_algo(const char *name, gz_env_algo_fn apply, void *arg);

#endif
