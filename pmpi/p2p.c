/*
 * p2p.c - MPI_Send / MPI_Recv of float data through gz_send / gz_recv
 * (GZCOLL_P2P=on; off by default).
 *
 * A compressed message travels on the context's private communicator with
 * its compressed size in its header, so both ends must take the compressed
 * path: a send qualifies when its type is MPI_FLOAT or MPI_DOUBLE, count x
 * size >= GZCOLL_MIN_BYTES, dest and tag are explicit, and the communicator
 * already has a context; a receive qualifies under the same rules with an
 * explicit source and tag (no MPI_ANY_SOURCE / MPI_ANY_TAG) and must name the
 * count that was sent. Contexts are created collectively, so they are never
 * created here: MPI_COMM_WORLD gets one in MPI_Init when GZCOLL_P2P is on,
 * other communicators when a collective created theirs. Those are the
 * pairing rules an application must keep (a compressed send received by
 * MPI_Irecv, a wildcard or another count would not match), which is why the
 * switch is off by default. Not used under MPI_THREAD_MULTIPLE (a context
 * serves one call at a time).
 *
 * Point to point has no agreement: a failure is reported as MPI would, via
 * the communicator's error handler, with MPI_ERR_OTHER.
 */
#include "gzcoll_pmpi.h"

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
  *ctx = gzp_comm_ctx_existing(comm);
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
