/*
 * reduce_scatter.c - gz_reduce_scatter_block, described for the collective
 * driver (coll_driver.c): the checks, a SUM of P terms, rank r's result is
 * block r. Algorithms: reduce_scatter_mpi.c, reduce_scatter_ring.c.
 *
 * Every rank quantizes its P blocks of recvcount values once (the same
 * bounds as allreduce: strict SUM eb = e / P, MAX/MIN eb = e; int32 codes
 * while the agreed range keeps every sum below 2^31, as allreduce; the
 * ring's first message encoded in the same pass), the ring combines codes
 * exactly, and rank r dequantizes block r once. The result
 * of block r is bit-identical to the block r of gz_allreduce on the same
 * input. In place (GZ_IN_PLACE): the input is recvbuf (P * recvcount
 * values), the result its first recvcount values.
 */
#include "coll_internal.h"

static gz_result_t check(gz_ctx_t ctx, gz_args_t *a) {
  size_t P = (size_t)ctx->size;
  a->in = a->sendbuf == GZ_IN_PLACE ? a->recvbuf : a->sendbuf;
  a->out = a->recvbuf;
  if (a->count > SIZE_MAX / 8 / P || !gz_dtype_size(a->dtype) || !gz_op_valid(a->op) ||
      (a->count && (!a->recvbuf || !a->in)))
    return GZ_ERR_ARG;
  a->total = a->n_in = a->n_codes = a->count * P; /* P blocks of count */
  a->out_off = (size_t)ctx->rank * a->count;      /* the result: block r */
  a->n_out = a->count;
  return GZ_OK;
}

static const gz_coll_desc_t reduce_scatter = {
    .coll = GZ_COLL_REDUCE_SCATTER, .reduces = 1, .check = check};

gz_result_t gz_reduce_scatter_block(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, gz_dtype_t dtype, gz_op_t op,
                                    gz_report_t *report) {
  gz_args_t a = gz_args_of(sendbuf, recvbuf, recvcount, dtype);
  a.op = op;
  return gz_coll_run(ctx, &reduce_scatter, &a, report);
}
