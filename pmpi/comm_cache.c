/*
 * comm_cache.c - one libgzcoll context per communicator, cached on the
 * communicator itself (MPI attribute caching).
 *
 * The first qualifying collective on a communicator creates its context
 * (gz_ctx_create is collective: every rank reaches it in the same call,
 * because whether a call qualifies depends only on arguments MPI requires to
 * match). The context is stored under one attribute key whose copy callback
 * is MPI_COMM_NULL_COPY_FN (MPI_Comm_dup does not share it: a duplicate gets
 * its own context on first use) and whose delete callback destroys it, so
 * MPI_Comm_free of an application communicator frees its context in the
 * same collective call on every rank, and split / duplicated / freed
 * communicators need nothing else. Open MPI releases its attribute lock
 * around the callback, so gz_ctx_destroy may free its private communicators
 * there.
 *
 * The decision "pass through" is cached too, as a sentinel value: inter-
 * communicators (MPI_Comm_test_inter), single-rank communicators (nothing to
 * move) and communicators on which gz_ctx_create failed (the failure is
 * agreed on by every rank, so all ranks cache the same decision). The
 * contexts of MPI_COMM_WORLD and MPI_COMM_SELF are destroyed explicitly at
 * MPI_Finalize (gzp_comm_finalize); a communicator the application never
 * frees keeps its context until exit.
 */
#include "gzcoll_pmpi.h"

#include <pthread.h>
#include <stdio.h>

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int create_warned;
static char passthrough_sentinel; /* attribute value: cached "pass through" */

static int delete_ctx(MPI_Comm comm, int key, void *value, void *extra) {
  (void)comm;
  (void)key;
  (void)extra;
  if (value && value != &passthrough_sentinel) {
    gzp_enter();
    gz_ctx_destroy((gz_ctx_t)value);
    gzp_leave();
    gzp_count_ctx(0);
  }
  return MPI_SUCCESS;
}

static void make_keyval(void) {
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_ctx, &keyval, NULL) !=
      MPI_SUCCESS)
    keyval = MPI_KEYVAL_INVALID;
}

static int lookup(MPI_Comm comm, void **value) {
  int flag = 0;
  pthread_once(&keyval_once, make_keyval);
  if (keyval == MPI_KEYVAL_INVALID)
    return -1;
  if (PMPI_Comm_get_attr(comm, keyval, value, &flag) != MPI_SUCCESS)
    return -1;
  return flag;
}

gz_ctx_t gzp_comm_ctx_existing(MPI_Comm comm) {
  void *value = NULL;
  if (comm == MPI_COMM_NULL || lookup(comm, &value) != 1 ||
      value == &passthrough_sentinel)
    return NULL;
  return (gz_ctx_t)value;
}

gz_ctx_t gzp_comm_ctx(MPI_Comm comm) {
  void *value = NULL;
  gz_ctx_t ctx = NULL;
  gz_result_t rc;
  int found, inter = 0, size = 0;

  if (comm == MPI_COMM_NULL)
    return NULL;
  found = lookup(comm, &value);
  if (found < 0)
    return NULL; /* no attribute key: pass everything through */
  if (found)
    return value == &passthrough_sentinel ? NULL : (gz_ctx_t)value;

  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2) {
    PMPI_Comm_set_attr(comm, keyval, &passthrough_sentinel);
    return NULL;
  }
  gzp_enter();
  rc = gz_ctx_create(comm, &gzp_config()->gz, &ctx);
  gzp_leave();
  if (rc != GZ_OK) {
    if (!create_warned) {
      create_warned = 1;
      gzp_warn("warning: libgzcoll refused a context (%s; check GZCOLL_ALGO and that "
               "every GZCOLL_* variable is the same on every rank): passing through",
               gz_strerror(rc));
    }
    PMPI_Comm_set_attr(comm, keyval, &passthrough_sentinel);
    return NULL;
  }
  gzp_count_ctx(1);
  if (PMPI_Comm_set_attr(comm, keyval, ctx) != MPI_SUCCESS) {
    gzp_enter();
    gz_ctx_destroy(ctx);
    gzp_leave();
    gzp_count_ctx(0);
    return NULL;
  }
  return ctx;
}

void gzp_comm_finalize(void) {
  void *value = NULL;
  if (keyval == MPI_KEYVAL_INVALID)
    return;
  if (lookup(MPI_COMM_SELF, &value) == 1)
    PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
  if (lookup(MPI_COMM_WORLD, &value) == 1)
    PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
  PMPI_Comm_free_keyval(&keyval);
}
