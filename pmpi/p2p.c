/*
 * p2p.c - MPI_Send / MPI_Recv of float data through gz_send / gz_recv, on
 * the communicators whose program asserted that its float messages pair up.
 *
 * A compressed message travels on the context's private communicator with
 * its compressed size in its header, so both ends must take the compressed
 * path. Whether the receiver will do so cannot be known by the sender: a
 * legal program may receive a float MPI_Send with MPI_Irecv, a wildcard, a
 * larger count, after MPI_Probe, or by MPI_Sendrecv. No environment variable
 * can therefore make point to point safe for a program nobody has read, and
 * none switches it on. The program itself asserts it, as MPI-4 programs
 * assert "mpi_assert_no_any_source": the communicator info key
 *
 *   gzcoll_assert_p2p_pairs = true
 *
 * given to MPI_Comm_set_info or MPI_Comm_dup_with_info promises that on this
 * communicator every MPI_Send of MPI_FLOAT or MPI_DOUBLE data of at least
 * GZCOLL_MIN_BYTES is received by an MPI_Recv with the same datatype and
 * count, naming the sender and the tag, and that every such MPI_Recv
 * receives such an MPI_Send (both ends then compute the same "qualifies").
 * Both calls are collective, so the assertion is agreed there: it is left as
 * it was when no rank's info names the key, holds when every rank's info
 * says "true", and is withdrawn otherwise (any other value, or named on some
 * ranks only). The communicator's context is created at that
 * point (collectively), never in a send or receive. A duplicate does not
 * inherit the assertion (it starts without one: fewer compressed messages,
 * never a mismatched one). GZCOLL_P2P=off ignores every assertion; so does
 * MPI_THREAD_MULTIPLE (a context serves one call at a time).
 *
 * Point to point has no agreement of its own: a failure is reported as MPI
 * would, via the communicator's error handler, with MPI_ERR_OTHER.
 */
#include "gzcoll_pmpi.h"

#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#define GZP_P2P_KEY "gzcoll_assert_p2p_pairs"

static atomic_int ignored_warned;

/* This rank's word for the agreement on an info object. */
static unsigned assertion_word(MPI_Info info) {
  char value[16];
  int flag = 0;
  if (info == MPI_INFO_NULL ||
      PMPI_Info_get(info, GZP_P2P_KEY, (int)sizeof value - 1, value, &flag) !=
          MPI_SUCCESS ||
      !flag)
    return GZP_P2P_ABSENT;
  return strcasecmp(value, "true") == 0 ? GZP_P2P_TRUE : 0u;
}

/* Collective over comm (called from the two collective info calls on every
 * rank, under conditions every rank shares: the settings are agreed at
 * MPI_Init). */
static void agree_assertion(MPI_Comm comm, MPI_Info info) {
  const gzp_config_t *cfg = gzp_config();
  unsigned local, all = 0;
  gzp_comm_t *c;
  if (!cfg->enabled)
    return;
  local = assertion_word(info);
  if (!cfg->p2p) {
    if ((local & GZP_P2P_TRUE) && !atomic_exchange(&ignored_warned, 1))
      gzp_warn("warning: info " GZP_P2P_KEY " ignored (GZCOLL_P2P=off or "
               "MPI_THREAD_MULTIPLE): point-to-point calls pass through");
    return;
  }
  if ((c = gzp_comm_get(comm)) == NULL || c->refused)
    return;
  if (!gzp_comm_agree(comm, c, local, &all))
    return; /* refused everywhere: c->p2p stays as it was, ctx NULL */
  if (all & GZP_P2P_ABSENT)
    return; /* no rank named the key */
  c->p2p = (all & GZP_P2P_TRUE) && gzp_comm_context(comm, c) != NULL;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  int rc = PMPI_Comm_set_info(comm, info);
  if (rc == MPI_SUCCESS && !gzp_inside)
    agree_assertion(comm, info);
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  if (rc == MPI_SUCCESS && !gzp_inside)
    agree_assertion(*newcomm, info);
  return rc;
}

/* Whether this send or receive takes the compressed path: the program's
 * assertion makes both ends compute the same answer. */
static int p2p_qualifies(MPI_Datatype type, int count, int peer, int tag, MPI_Comm comm,
                         gz_dtype_t *dtype, gz_ctx_t *ctx) {
  const gzp_config_t *cfg = gzp_config();
  if (!cfg->p2p || count <= 0 || peer < 0 || tag < 0)
    return 0;
  if (type == MPI_FLOAT)
    *dtype = GZ_FLOAT32;
  else if (type == MPI_DOUBLE)
    *dtype = GZ_FLOAT64;
  else
    return 0;
  if ((double)count * (double)gz_dtype_size(*dtype) < (double)cfg->min_bytes)
    return 0;
  *ctx = gzp_comm_p2p_ctx(comm);
  return *ctx != NULL;
}

static int p2p_error(MPI_Comm comm) {
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
  gz_dtype_t dt;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
  if (!p2p_qualifies(datatype, count, dest, tag, comm, &dt, &ctx)) {
    gzp_count_passed(GZP_SEND);
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_send(ctx, buf, (size_t)count, dt, dest, tag, &rep);
  gzp_leave();
  gzp_count_routed(GZP_SEND, rc == GZ_OK ? &rep : NULL, PMPI_Wtime() - t0, 0);
  return rc == GZ_OK ? MPI_SUCCESS : p2p_error(comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status *status) {
  gz_dtype_t dt;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  if (!p2p_qualifies(datatype, count, source, tag, comm, &dt, &ctx)) {
    gzp_count_passed(GZP_RECV);
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_recv(ctx, buf, (size_t)count, dt, source, tag, &rep);
  gzp_leave();
  gzp_count_routed(GZP_RECV, rc == GZ_OK ? &rep : NULL, PMPI_Wtime() - t0, 0);
  if (rc != GZ_OK)
    return p2p_error(comm);
  if (status != MPI_STATUS_IGNORE) {
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(status, datatype, count);
    PMPI_Status_set_cancelled(status, 0);
  }
  return MPI_SUCCESS;
}
