/*
 * allreduce_mpi.c - the MPI library's own allreduce on the original values,
 * uncompressed. Used when forced, when auto finds that compression would not
 * pay, and as the escape path when some value cannot be quantized within the
 * bound (NaN, Inf, or too large for the code range): the result is then the
 * exact floating-point reduction, NaN and Inf propagating as MPI computes
 * them.
 *
 * Cost: that of the MPI implementation (typically recursive doubling for
 * short messages, Rabenseifner or ring for long ones: 2 (P-1)/P D beta).
 * Counts above 2^30 elements are reduced in segments (MPI counts are int).
 */
#include "coll_internal.h"

static gz_result_t run(gz_ctx_t ctx, gz_job_t *j) {
  const gz_args_t *a = j->a;
  const size_t seg = (size_t)1 << 30, esz = gz_dtype_size(a->dtype);
  MPI_Op mop = a->op == GZ_OP_SUM ? MPI_SUM : a->op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
  int P = ctx->size;
  for (size_t off = 0; off < a->count; off += seg) {
    size_t n = a->count - off < seg ? a->count - off : seg;
    const void *s =
        a->sendbuf == GZ_IN_PLACE ? MPI_IN_PLACE : (const char *)a->sendbuf + off * esz;
    if (MPI_Allreduce(s, (char *)a->recvbuf + off * esz, (int)n, gz_mpi_type(a->dtype),
                      mop, ctx->comm) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  gz_scale(a->dtype, a->recvbuf, a->count, a->divisor); /* the mean */
  gz_run_plain(j->run, 2.0 * (P - 1) / P, a->count);
  return GZ_OK;
}

static double cost(const gz_cost_t *c) {
  double x = c->L * (c->alpha + c->D * c->beta),
         y = 2 * (c->P - 1) * c->alpha + 2 * (c->P - 1) / c->P * c->D * c->beta;
  return c->g + (x < y ? x : y);
}

const gz_algorithm_t gz_algo_allreduce_mpi = {
    .name = "mpi", .coll = GZ_COLL_ALLREDUCE, .run = run, .cost = cost};
