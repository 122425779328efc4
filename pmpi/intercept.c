/*
 * intercept.c - the collective entry points of libgzcoll_pmpi:
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast,
 * MPI_Scatter and MPI_Alltoall.
 *
 * Routing must never split between ranks: a rank that enters libgzcoll
 * while another calls PMPI_ waits forever. So every decision is taken in
 * two steps.
 *
 * 1. Worth considering: from values every rank of a legal program computes
 *    identically: the library is configured (GZCOLL_* agreed at MPI_Init,
 *    env_config.c) and the collective is in GZCOLL_COLLECTIVES; the call is
 *    not made from inside libgzcoll (recursion guard, gzcoll_pmpi.h); the
 *    message's size in bytes, count times PMPI_Type_size of the side MPI
 *    reads on this rank, is positive and at least GZCOLL_MIN_BYTES (the
 *    largest buffer of one rank: count values for allreduce and bcast, all
 *    P blocks for the others). MPI requires matching type signatures, so
 *    the byte size is the same on every rank however each rank describes
 *    the data (n MPI_FLOAT here, one contiguous or vector type there).
 *    Then the communicator's cached state (comm_cache.c): inter-
 *    communicators and single-rank communicators pass through, identically
 *    everywhere.
 * 2. Compressible everywhere: each rank forms a flag word from what only it
 *    knows: its datatype(s) are MPI_FLOAT (bit F32) or MPI_DOUBLE (bit F64),
 *    the send and receive side have the same type and count where both are
 *    significant (MPI_IN_PLACE: only the side MPI reads), and no buffer is
 *    device memory (gz_is_device_pointer: device buffers go to PMPI_
 *    untouched). One PMPI_Allreduce(MPI_BAND) of that word on the
 *    communicator's private duplicate (the first one on the communicator
 *    itself, while the duplicate is made; gzp_comm_agree) decides: F32 or F64 left set
 * means every rank can take the compressed path with the same element type (hence the
 * same count); otherwise every rank passes through. Only then is a context created
 * (collective, comm_cache.c). The agreement calls PMPI_ directly, so it is never
 * intercepted, and it happens only for calls that passed step 1.
 *
 * Reductions (allreduce, reduce_scatter_block) skip step 2: MPI requires
 * count, datatype and op to be the same on every rank, so whether they are
 * MPI_FLOAT/MPI_DOUBLE with SUM/MAX/MIN is known identically everywhere.
 * The one local fact left is device memory; it is agreed per call only on
 * communicators where some rank may see device memory at all (a CUDA build;
 * agreed once per communicator), and costs nothing otherwise.
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

/* The element-type bit of a predefined float type, 0 for anything else
 * (derived types are not compressed, even contiguous ones made of floats:
 * every rank then agrees to pass through). */
static unsigned type_bits(MPI_Datatype type) {
  return type == MPI_FLOAT ? GZP_F32 : type == MPI_DOUBLE ? GZP_F64 : 0u;
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

/* Bytes of blocks blocks of count elements of type: the same on every rank
 * by the signature rule. 0 when there is nothing to move or the size is not
 * known (an invalid type: MPI itself reports it). */
static double msg_bytes(int count, MPI_Datatype type, int blocks) {
  MPI_Count size = 0;
  if (count <= 0 || blocks <= 0 || type == MPI_DATATYPE_NULL ||
      PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED || size <= 0)
    return 0;
  return (double)count * (double)size * blocks;
}

static int comm_size(MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return 0;
  return size;
}

/* 0 when p is device memory (such a call goes to PMPI_ untouched). */
static unsigned host_mask(const void *p) {
  return p && p != MPI_IN_PLACE && gz_is_device_pointer(p) ? 0u : ~0u;
}

/* Steps 1 and 2 of the header: the context to route through (every rank
 * gets one, or every rank gets NULL), and the agreed element type. local:
 * this rank's flag word; agree: the word can differ between ranks (data
 * movement), otherwise it is agreed only where device memory is possible. */
static gz_ctx_t route(gzp_kind_t kind, MPI_Comm comm, double bytes, unsigned local,
                      int agree, gz_dtype_t *dtype) {
  const gzp_config_t *cfg = gzp_config();
  gzp_comm_t *c;
  unsigned all = local;
  if (!cfg->enabled || !(cfg->collectives & (1u << kind)) || !(bytes > 0) ||
      bytes < (double)cfg->min_bytes)
    return NULL;
  if (!(c = gzp_comm_get(comm)) || c->refused)
    return NULL;
  if ((agree || c->dev_possible) && !gzp_comm_agree(comm, c, local, &all))
    return NULL; /* see gzp_comm_agree; docs/pmpi.md */
  if (all & GZP_F32)
    *dtype = GZ_FLOAT32;
  else if (all & GZP_F64)
    *dtype = GZ_FLOAT64;
  else
    return NULL;
  return gzp_comm_context(comm, c);
}

/* One intercepted call on its way through libgzcoll. */
typedef struct call {
  gzp_kind_t kind;
  gz_ctx_t ctx;
  gz_dtype_t dtype; /* agreed element type */
  gz_report_t rep;
  double t0;
} call_t;

/* 1 when the call goes through libgzcoll (route() agreed; the recursion
 * guard is then set), 0 when it passes through to PMPI_ (counted). Callers
 * check gzp_inside first, so calls made from inside libgzcoll are neither
 * examined nor counted. */
static int call_begin(call_t *c, gzp_kind_t kind, MPI_Comm comm, double bytes,
                      unsigned local, int agree) {
  c->kind = kind;
  c->ctx = route(kind, comm, bytes, local, agree, &c->dtype);
  if (!c->ctx) {
    gzp_count_passed(kind);
    return 0;
  }
  c->t0 = PMPI_Wtime();
  gzp_enter();
  return 1;
}

/* After libgzcoll returned rc: bookkeeping; 1 when the result stands, 0 when
 * the caller must redo the call through PMPI_ (libgzcoll agreed on the
 * failure before any data landed). */
static int call_end(call_t *c, gz_result_t rc) {
  gzp_leave();
  gzp_count_routed(c->kind, rc == GZ_OK ? &c->rep : NULL, PMPI_Wtime() - c->t0,
                   rc != GZ_OK);
  return rc == GZ_OK;
}

static const void *send_side(const void *sendbuf) {
  return sendbuf == MPI_IN_PLACE ? GZ_IN_PLACE : sendbuf;
}

/* The bytes of a reduction of count x datatype with op, or 0 (pass through)
 * when the type or op is not one libgzcoll reduces. MPI requires count,
 * datatype and op to be the same on every rank, so this needs no
 * agreement beyond device memory (see the header). */
static double reduction_bytes(int count, MPI_Datatype datatype, MPI_Op op, int blocks,
                              gz_op_t *gop) {
  return type_bits(datatype) && qualify_op(op, gop) ? msg_bytes(count, datatype, blocks)
                                                    : 0;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
  gz_op_t gop = GZ_OP_SUM;
  call_t c;
  if (!gzp_inside &&
      call_begin(&c, GZP_ALLREDUCE, comm, reduction_bytes(count, datatype, op, 1, &gop),
                 type_bits(datatype) & host_mask(sendbuf) & host_mask(recvbuf), 0) &&
      call_end(&c, gz_allreduce(c.ctx, send_side(sendbuf), recvbuf, (size_t)count,
                                c.dtype, gop, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  gz_op_t gop = GZ_OP_SUM;
  call_t c;
  if (!gzp_inside &&
      call_begin(&c, GZP_REDUCE_SCATTER_BLOCK, comm,
                 reduction_bytes(recvcount, datatype, op, comm_size(comm), &gop),
                 type_bits(datatype) & host_mask(sendbuf) & host_mask(recvbuf), 0) &&
      call_end(&c, gz_reduce_scatter_block(c.ctx, send_side(sendbuf), recvbuf,
                                           (size_t)recvcount, c.dtype, gop, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

/* Allgather and alltoall: the receive side is always significant; the send
 * side too unless in place, and must then be the same type and count. */
static unsigned both_sides(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           const void *recvbuf, int recvcount, MPI_Datatype recvtype) {
  unsigned w = type_bits(recvtype) & host_mask(recvbuf);
  if (sendbuf != MPI_IN_PLACE &&
      (sendtype != recvtype || sendcount != recvcount || !host_mask(sendbuf)))
    w = 0;
  return w;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  call_t c;
  if (!gzp_inside &&
      call_begin(&c, GZP_ALLGATHER, comm, msg_bytes(recvcount, recvtype, comm_size(comm)),
                 both_sides(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                 1) &&
      call_end(&c, gz_allgather(c.ctx, send_side(sendbuf), recvbuf, (size_t)recvcount,
                                c.dtype, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  call_t c;
  /* the agreed type fixes the count: the same byte size on every rank */
  if (!gzp_inside &&
      call_begin(&c, GZP_BCAST, comm, msg_bytes(count, datatype, 1),
                 type_bits(datatype) & host_mask(buffer), 1) &&
      call_end(&c, gz_bcast(c.ctx, buffer, (size_t)count, c.dtype, root, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  int rank = -1, in_place = 0, count = recvcount, P;
  double bytes;
  unsigned local;
  call_t c;
  if (gzp_inside)
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
  /* The root describes the message by its send side (its receive side is
   * MPI_IN_PLACE or must then be the same type and count), the others by
   * their receive side (their send arguments are not significant). */
  P = comm_size(comm);
  if (comm != MPI_COMM_NULL && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS &&
      rank == root) {
    in_place = recvbuf == MPI_IN_PLACE;
    count = sendcount;
    bytes = msg_bytes(sendcount, sendtype, P);
    local = type_bits(sendtype) & host_mask(sendbuf);
    if (!in_place &&
        (recvtype != sendtype || recvcount != sendcount || !host_mask(recvbuf)))
      local = 0;
  } else {
    bytes = msg_bytes(recvcount, recvtype, P);
    local = type_bits(recvtype) & host_mask(recvbuf);
  }
  if (call_begin(&c, GZP_SCATTER, comm, bytes, local, 1) &&
      call_end(&c, gz_scatter(c.ctx, sendbuf, in_place ? (void *)GZ_IN_PLACE : recvbuf,
                              (size_t)count, c.dtype, root, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                      comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  call_t c;
  if (!gzp_inside &&
      call_begin(&c, GZP_ALLTOALL, comm, msg_bytes(recvcount, recvtype, comm_size(comm)),
                 both_sides(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype),
                 1) &&
      call_end(&c, gz_alltoall(c.ctx, send_side(sendbuf), recvbuf, (size_t)recvcount,
                               c.dtype, &c.rep)))
    return MPI_SUCCESS;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
