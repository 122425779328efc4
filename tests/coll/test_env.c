/*
 * test_env.c - the GZCOLL_* getters of libgzcoll/src/env.c (gz_env.h), which
 * the library and libgzcoll_pmpi share: each type accepts its documented
 * spellings, refuses the rest, and leaves the value alone unless it parses.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "coll_internal.h"      /* gz_coll_t */
#include "gz_env.h"

#include "gz_test.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define VAR "GZCOLL_TEST_ENV"

static void set(const char *value) {
  if (value)
    setenv(VAR, value, 1);
  else
    unsetenv(VAR);
}

static void test_double(void) {
  static const struct {
    const char *s;
    int st;
    double v;
  } cases[] = {{NULL, GZ_ENV_UNSET, -1},   {"", GZ_ENV_UNSET, -1},
               {"1e-3", GZ_ENV_SET, 1e-3}, {" 2.5 ", GZ_ENV_SET, 2.5},
               {"0", GZ_ENV_BAD, -1},      {"-1", GZ_ENV_BAD, -1},
               {"inf", GZ_ENV_BAD, -1},    {"nan", GZ_ENV_BAD, -1},
               {"3x", GZ_ENV_BAD, -1},     {"abc", GZ_ENV_BAD, -1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double v = -1;
    int st;
    set(cases[i].s);
    st = gz_env_double(VAR, &v);
    GZ_CHECK(st == cases[i].st && v == cases[i].v, "double '%s': status %d value %g",
             cases[i].s ? cases[i].s : "(unset)", st, v);
  }
}

static void test_size(void) {
  static const struct {
    const char *s;
    int st;
    size_t v;
  } cases[] = {{NULL, GZ_ENV_UNSET, 7},      {"65536", GZ_ENV_SET, 65536},
               {"4k", GZ_ENV_SET, 4096},     {" 2M ", GZ_ENV_SET, 2u << 20},
               {"1g", GZ_ENV_SET, 1u << 30}, {"0", GZ_ENV_SET, 0},
               {"-1", GZ_ENV_BAD, 7},        {"4kb", GZ_ENV_BAD, 7},
               {"k", GZ_ENV_BAD, 7},         {"99999999999g", GZ_ENV_BAD, 7}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t v = 7;
    int st;
    set(cases[i].s);
    st = gz_env_size(VAR, &v);
    GZ_CHECK(st == cases[i].st && v == cases[i].v, "size '%s': status %d value %zu",
             cases[i].s ? cases[i].s : "(unset)", st, v);
  }
}

static void test_bool_enum(void) {
  static const char *const on[] = {"1", "on", "YES", "True"};
  static const char *const off[] = {"0", "OFF", "no", "false"};
  static const char *const names[] = {"abs", "rel", NULL};
  int v, index = -1;
  for (size_t i = 0; i < 4; i++) {
    set(on[i]);
    v = -1;
    GZ_CHECK(gz_env_bool(VAR, &v) == GZ_ENV_SET && v == 1, "bool '%s' is true", on[i]);
    set(off[i]);
    v = -1;
    GZ_CHECK(gz_env_bool(VAR, &v) == GZ_ENV_SET && v == 0, "bool '%s' is false", off[i]);
  }
  set("maybe");
  v = -1;
  GZ_CHECK(gz_env_bool(VAR, &v) == GZ_ENV_BAD && v == -1, "bool 'maybe' refused");
  set(NULL);
  GZ_CHECK(gz_env_bool(VAR, &v) == GZ_ENV_UNSET && v == -1, "bool unset");
  set("REL");
  GZ_CHECK(gz_env_enum(VAR, names, &index) == GZ_ENV_SET && index == 1,
           "enum 'REL' is 1");
  set("relative");
  GZ_CHECK(gz_env_enum(VAR, names, &index) == GZ_ENV_BAD && index == 1,
           "enum 'relative'");
}

/* Records the items gz_env_algo hands over. */
struct seen {
  int n, coll[8];
  const char *algo[8];
};

static int record(void *arg, int coll, const char *algo) {
  struct seen *s = arg;
  if (s->n < 8) {
    s->coll[s->n] = coll;
    s->algo[s->n] = algo;
  }
  s->n++;
  return 1;
}

static int refuse(void *arg, int coll, const char *algo) {
  (void)arg, (void)coll, (void)algo;
  return 0;
}

static void test_algo(void) {
  static const char *const bad[] = {
      "nosuch",   "allreduce=", "=ring", "gather=ring", "allreduce=ring,,bcast=binomial",
      "allreduce"};
  struct seen s = {0};
  const char *ring = gz_algo_canon(" Ring"), *binomial = gz_algo_canon("tree");
  GZ_CHECK(ring && !strcmp(ring, "ring") && binomial && !strcmp(binomial, "binomial") &&
               !gz_algo_canon("bogus") && !gz_algo_canon("") && !gz_algo_canon(NULL) &&
               !strcmp(gz_algo_canon("AUTO"), "auto") &&
               !strcmp(gz_algo_canon("compressed"), "compressed"),
           "algorithm names: canonical spellings");
  set("ring");
  GZ_CHECK(gz_env_algo(VAR, record, &s) == GZ_ENV_SET && s.n == 1 && s.coll[0] == -1 &&
               !strcmp(s.algo[0], ring),
           "algo 'ring': one item for every collective");
  memset(&s, 0, sizeof s);
  set("ALLREDUCE=ring,reduce_scatter_block=ring,send=auto,bcast=binomial");
  GZ_CHECK(gz_env_algo(VAR, record, &s) == GZ_ENV_SET && s.n == 4 &&
               s.coll[0] == GZ_COLL_ALLREDUCE && !strcmp(s.algo[0], ring) &&
               s.coll[1] == GZ_COLL_REDUCE_SCATTER && s.coll[2] == GZ_COLL_P2P &&
               !strcmp(s.algo[2], "auto") && s.coll[3] == GZ_COLL_BCAST &&
               !strcmp(s.algo[3], binomial),
           "algo list: %d items in order", s.n);
  GZ_CHECK(gz_env_algo(VAR, NULL, NULL) == GZ_ENV_SET, "algo list: grammar only");
  GZ_CHECK(gz_env_algo(VAR, refuse, NULL) == GZ_ENV_BAD, "algo list: an item refused");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set(bad[i]);
    GZ_CHECK(gz_env_algo(VAR, NULL, NULL) == GZ_ENV_BAD, "algo refused: %s", getenv(VAR));
  }
  set(NULL);
  GZ_CHECK(gz_env_algo(VAR, refuse, NULL) == GZ_ENV_UNSET, "algo unset");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_double();
  test_size();
  test_bool_enum();
  test_algo();
  return gz_test_end_mpi();
}
