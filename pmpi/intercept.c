/*
 * intercept.c - the collective entry points of libgzcoll_pmpi:
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast,
 * MPI_Scatter and MPI_Alltoall.
 *
 * A call is routed through libgzcoll when it qualifies, otherwise it goes to
 * the PMPI_ entry point with its arguments unchanged:
 *   - configured (GZCOLL_ERROR_BOUND set and valid) and the collective is in
 *     GZCOLL_COLLECTIVES;
 *   - not made from inside libgzcoll (recursion guard, gzcoll_pmpi.h);
 *   - datatype MPI_FLOAT or MPI_DOUBLE (predefined, hence contiguous); where
 *     a call has a send and a receive type, both the same type and count
 *     (MPI_IN_PLACE: the side MPI reads);
 *   - reductions: op MPI_SUM, MPI_MAX or MPI_MIN;
 *   - the message is at least GZCOLL_MIN_BYTES: the largest buffer of one
 *     rank (count values for allreduce and bcast, P blocks for the others);
 *   - an intra-communicator of at least two ranks on which a context exists
 *     or could be created (comm_cache.c).
 * Every input of that decision is one MPI requires to be the same on every
 * rank (count, datatype and op of a reduction, the type signature of the
 * others), so all ranks take the same path. A program that describes the
 * same data as MPI_FLOAT on some ranks and as a derived type on others is
 * legal MPI but would split the decision: exclude that collective with
 * GZCOLL_COLLECTIVES.
 *
 * MPI_IN_PLACE maps to GZ_IN_PLACE wherever MPI allows it (allreduce,
 * reduce_scatter_block, allgather, alltoall as sendbuf; scatter as recvbuf
 * at the root). MPI_Bcast replaces the root's buffer too by the values every
 * other rank receives (within e of the original), so all ranks hold the same
 * bytes; this is libgzcoll's contract.
 *
 * Failure: libgzcoll agrees on every failure (every rank returns an error),
 * checks its arguments and agrees before any data lands, so the call is then
 * redone by PMPI_ on the original buffers (counted as a fallback) and MPI
 * reports a real error through the application's own error handler.
 */
#include "gzcoll_pmpi.h"

static int qualify_type(MPI_Datatype type, gz_dtype_t *dtype) {
  if (type == MPI_FLOAT)
    *dtype = GZ_FLOAT32;
  else if (type == MPI_DOUBLE)
    *dtype = GZ_FLOAT64;
  else
    return 0;
  return 1;
}

static int qualify_op(MPI_Op op, gz_op_t *gop) {
  if (op == MPI_SUM)
    *gop = GZ_OP_SUM;
  else if (op == MPI_MAX)
    *gop = GZ_OP_MAX;
  else if (op == MPI_MIN)
    *gop = GZ_OP_MIN;
  else
    return 0;
  return 1;
}

/* The cheap checks shared by every collective: enabled, selected, called by
 * the application, a positive count of float data. */
static int qualify_common(gzp_kind_t kind, MPI_Datatype type, int count,
                          gz_dtype_t *dtype) {
  const gzp_config_t *cfg = gzp_config();
  return cfg->enabled && (cfg->collectives & (1u << kind)) && count > 0 &&
         qualify_type(type, dtype);
}

/* Message-size threshold: blocks of count values of dtype. */
static int large_enough(gz_dtype_t dtype, int count, int blocks) {
  return (double)count * (double)gz_dtype_size(dtype) * blocks >=
         (double)gzp_config()->min_bytes;
}

static int comm_size(MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return 0;
  return size;
}

/* Bookkeeping after a routed call; returns 1 when the result stands, 0 when
 * the caller must redo the call through PMPI_. */
static int routed(gzp_kind_t kind, gz_result_t rc, const gz_report_t *rep, double t0) {
  double dt = PMPI_Wtime() - t0;
  gzp_count_routed(kind, rc == GZ_OK ? rep : NULL, dt, rc != GZ_OK);
  return rc == GZ_OK;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
  gz_dtype_t dt;
  gz_op_t gop;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  if (!qualify_common(GZP_ALLREDUCE, datatype, count, &dt) || !qualify_op(op, &gop) ||
      !large_enough(dt, count, 1) || !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_ALLREDUCE);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_allreduce(ctx, sendbuf == MPI_IN_PLACE ? GZ_IN_PLACE : sendbuf, recvbuf,
                    (size_t)count, dt, gop, &rep);
  gzp_leave();
  if (routed(GZP_ALLREDUCE, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  gz_dtype_t dt;
  gz_op_t gop;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  if (!qualify_common(GZP_REDUCE_SCATTER_BLOCK, datatype, recvcount, &dt) ||
      !qualify_op(op, &gop) || !large_enough(dt, recvcount, comm_size(comm)) ||
      !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_REDUCE_SCATTER_BLOCK);
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_reduce_scatter_block(ctx, sendbuf == MPI_IN_PLACE ? GZ_IN_PLACE : sendbuf,
                               recvbuf, (size_t)recvcount, dt, gop, &rep);
  gzp_leave();
  if (routed(GZP_REDUCE_SCATTER_BLOCK, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int in_place = sendbuf == MPI_IN_PLACE;
  gz_dtype_t dt;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm);
  if (!qualify_common(GZP_ALLGATHER, recvtype, recvcount, &dt) ||
      (!in_place && (sendtype != recvtype || sendcount != recvcount)) ||
      !large_enough(dt, recvcount, comm_size(comm)) || !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_ALLGATHER);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_allgather(ctx, in_place ? GZ_IN_PLACE : sendbuf, recvbuf, (size_t)recvcount, dt,
                    &rep);
  gzp_leave();
  if (routed(GZP_ALLGATHER, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  gz_dtype_t dt;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  if (!qualify_common(GZP_BCAST, datatype, count, &dt) || !large_enough(dt, count, 1) ||
      !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_BCAST);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_bcast(ctx, buffer, (size_t)count, dt, root, &rep);
  gzp_leave();
  if (routed(GZP_BCAST, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  int rank = -1, in_place = 0, count = recvcount, ok;
  MPI_Datatype type = recvtype;
  gz_dtype_t dt;
  gz_ctx_t ctx = NULL;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
  /* The root describes the message by its send side (its receive side is
   * MPI_IN_PLACE or must be the same type and count), the others by their
   * receive side. */
  ok = gzp_config()->enabled && comm != MPI_COMM_NULL &&
       PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS;
  if (ok && rank == root) {
    in_place = recvbuf == MPI_IN_PLACE;
    type = sendtype;
    count = sendcount;
    ok = in_place || (recvtype == sendtype && recvcount == sendcount);
  }
  if (!ok || !qualify_common(GZP_SCATTER, type, count, &dt) ||
      !large_enough(dt, count, comm_size(comm)) || !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_SCATTER);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_scatter(ctx, sendbuf, in_place ? (void *)GZ_IN_PLACE : recvbuf, (size_t)count,
                  dt, root, &rep);
  gzp_leave();
  if (routed(GZP_SCATTER, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                      comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int in_place = sendbuf == MPI_IN_PLACE;
  gz_dtype_t dt;
  gz_ctx_t ctx;
  gz_report_t rep;
  gz_result_t rc;
  double t0;
  if (gzp_inside)
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         comm);
  if (!qualify_common(GZP_ALLTOALL, recvtype, recvcount, &dt) ||
      (!in_place && (sendtype != recvtype || sendcount != recvcount)) ||
      !large_enough(dt, recvcount, comm_size(comm)) || !(ctx = gzp_comm_ctx(comm))) {
    gzp_count_passed(GZP_ALLTOALL);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         comm);
  }
  t0 = PMPI_Wtime();
  gzp_enter();
  rc = gz_alltoall(ctx, in_place ? GZ_IN_PLACE : sendbuf, recvbuf, (size_t)recvcount, dt,
                   &rep);
  gzp_leave();
  if (routed(GZP_ALLTOALL, rc, &rep, t0))
    return MPI_SUCCESS;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
