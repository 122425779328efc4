/*
 * comm_cache.c - what libgzcoll_pmpi keeps per communicator, cached on the
 * communicator itself (MPI attribute caching): a private duplicate for the
 * routing agreements, whether any rank may see device memory, and the
 * libgzcoll context once a call has agreed to take the compressed path.
 *
 * Every state change below happens at a point all ranks of the communicator
 * reach in the same call (intercept.c decides "worth considering" from
 * values every rank computes identically, and creates a context only on an
 * agreed decision), so the cached state is the same on every rank before and
 * after each call:
 *   no attribute   -> first considered call: inter-communicator or a single
 *                     rank (local facts, identical everywhere): the
 *                     pass-through sentinel; otherwise one MAX over comm of
 *                     "my allocation failed" and "this rank may see device
 *                     memory" (a failure anywhere: the sentinel everywhere);
 *   no agree comm  -> first call that needs an agreement (data movement, or
 *                     any call where device memory is possible): the
 *                     private duplicate (MPI_ERRORS_RETURN) is made and that
 *                     first agreement runs on comm itself, its word carrying
 *                     "my duplicate exists" (missing anywhere: "refused"
 *                     everywhere); later agreements run on the duplicate, so
 *                     communicators that only ever see reductions in a
 *                     CPU build cost no extra communicator;
 *   entry, no ctx  -> first call agreed compressible: gz_ctx_create
 *                     (collective; libgzcoll agrees on its failure, so all
 *                     ranks then mark the entry "refused" together);
 *   entry with ctx -> used by every later agreed call; point to point uses
 *                     it only while c->p2p (an agreed info assertion, p2p.c).
 * The attribute key's copy callback is MPI_COMM_NULL_COPY_FN (a duplicate
 * starts empty) and its delete callback destroys the context and frees the
 * agreement communicator, so MPI_Comm_free of an application communicator
 * releases everything in the same collective call on every rank. Open MPI
 * releases its attribute lock around the callback, so communicators may be
 * freed there. The entries of MPI_COMM_WORLD and MPI_COMM_SELF are released
 * explicitly at MPI_Finalize (gzp_comm_finalize).
 *
 * Threads: MPI forbids concurrent collectives on one communicator, so an
 * entry is only ever touched by one thread at a time; different
 * communicators have different entries.
 */
#include "gzcoll_pmpi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static atomic_int create_warned;
static char passthrough_sentinel; /* attribute value: cached "pass through" */

static void entry_free(gzp_comm_t *c) {
  if (c->ctx) {
    gzp_enter();
    gz_ctx_destroy(c->ctx);
    gzp_leave();
    gzp_count_ctx(0);
  }
  if (c->agree != MPI_COMM_NULL)
    PMPI_Comm_free(&c->agree);
  free(c);
}

static int delete_entry(MPI_Comm comm, int key, void *value, void *extra) {
  (void)comm;
  (void)key;
  (void)extra;
  if (value && value != &passthrough_sentinel)
    entry_free(value);
  return MPI_SUCCESS;
}

static void make_keyval(void) {
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &keyval, NULL) !=
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

/* Whether this process could ever be handed device memory: only a build
 * with the CUDA backend can (gz_is_device_pointer is 0 otherwise). */
static int device_possible(void) {
  const char *b = gz_backends();
  return b && strstr(b, "cuda") != NULL;
}

gzp_comm_t *gzp_comm_get(MPI_Comm comm) {
  void *value = NULL;
  gzp_comm_t *c;
  int found, inter = 0, size = 0, v[2], all[2] = {1, 1};

  if (comm == MPI_COMM_NULL)
    return NULL;
  found = lookup(comm, &value);
  if (found < 0)
    return NULL; /* no attribute key: pass everything through */
  if (found)
    return value == &passthrough_sentinel ? NULL : value;

  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2) {
    PMPI_Comm_set_attr(comm, keyval, &passthrough_sentinel);
    return NULL;
  }
  /* Collective: every rank of comm is in the same considered call. Whether
   * the entry exists everywhere is agreed, together with "some rank may see
   * device memory". */
  c = calloc(1, sizeof *c);
  v[0] = c == NULL;
  v[1] = device_possible();
  if (PMPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    all[0] = 1;
  if (c) {
    c->agree = MPI_COMM_NULL;
    c->dev_possible = all[1];
  }
  if (all[0] || PMPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
    if (c)
      entry_free(c);
    PMPI_Comm_set_attr(comm, keyval, &passthrough_sentinel);
    return NULL;
  }
  return c;
}

int gzp_comm_agree(MPI_Comm comm, gzp_comm_t *c, unsigned local, unsigned *all) {
  MPI_Comm on = c->agree;
  int first = on == MPI_COMM_NULL;
  *all = 0;
  if (first) {
    /* the first agreement on comm: make the private duplicate, and carry
     * "mine exists" in the same word, on comm itself */
    if (PMPI_Comm_dup(comm, &c->agree) == MPI_SUCCESS) {
      PMPI_Comm_set_errhandler(c->agree, MPI_ERRORS_RETURN);
      local |= GZP_AGREE_OK;
    } else {
      c->agree = MPI_COMM_NULL;
    }
    on = comm;
  } else {
    local |= GZP_AGREE_OK;
  }
  if (PMPI_Allreduce(&local, all, 1, MPI_UNSIGNED, MPI_BAND, on) != MPI_SUCCESS)
    *all = 0;
  if (!(*all & GZP_AGREE_OK)) {
    /* some rank has no duplicate (or MPI failed): pass through for good */
    if (first && c->agree != MPI_COMM_NULL)
      PMPI_Comm_free(&c->agree);
    c->refused = 1;
    *all = 0;
    return 0;
  }
  return 1;
}

gz_ctx_t gzp_comm_context(MPI_Comm comm, gzp_comm_t *c) {
  gz_result_t rc;
  if (c->ctx || c->refused)
    return c->ctx;
  gzp_enter();
  rc = gz_ctx_create(comm, &gzp_config()->gz, &c->ctx);
  gzp_leave();
  if (rc != GZ_OK) {
    c->ctx = NULL;
    c->refused = 1;
    if (!atomic_exchange(&create_warned, 1))
      gzp_warn("warning: libgzcoll refused a context (%s; check GZCOLL_ALGO): "
               "passing through",
               gz_strerror(rc));
    return NULL;
  }
  gzp_count_ctx(1);
  return c->ctx;
}

gz_ctx_t gzp_comm_p2p_ctx(MPI_Comm comm) {
  void *value = NULL;
  const gzp_comm_t *c;
  if (comm == MPI_COMM_NULL || lookup(comm, &value) != 1 ||
      value == &passthrough_sentinel)
    return NULL;
  c = value;
  return c->p2p ? c->ctx : NULL;
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
