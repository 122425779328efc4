/*
 * stack_reference.c - step 4 of `gzstack stack`, --verify: rank 0 receives
 * MPI_Reduce of the same double partials, the exact result (parallel
 * reading) or the allreduce stage's reference (root reading, whose exact
 * result rank 0 accumulated from the original values while reading), and
 * compares the claimed field with it (stack_output.c).
 */
#include "stack_internal.h"

#include <stdio.h>
#include <stdlib.h>

static MPI_Op mpi_op_of(gzs_op_t op) {
  return op == GZS_OP_MAX ? MPI_MAX : op == GZS_OP_MIN ? MPI_MIN : MPI_SUM;
}

int gzs_reference(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                  size_t errlen) {
  size_t M = r->npoints;
  double *target = NULL;
  int failed = 0;

  /* rank 0 receives the plain MPI reduction of the same partials: the
   * exact result (parallel) or the allreduce stage's reference (root) */
  if (r->rank == 0) {
    target = malloc(sizeof(double) * M + 1);
    r->exact_result = malloc(sizeof(double) * M + 1);
    failed = !target || !r->exact_result;
    if (failed)
      snprintf(err, errlen, "out of memory for the --verify reference");
  }
  if (gzs_agree(comm, failed, err)) {
    free(target);
    return -1;
  }
  for (size_t off = 0; off < M; off += GZS_MPI_CHUNK) {
    int n = (int)(M - off < GZS_MPI_CHUNK ? M - off : GZS_MPI_CHUNK);
    MPI_Reduce(r->acc + off, target ? target + off : NULL, n, MPI_DOUBLE,
               mpi_op_of(o->op), 0, comm);
  }
  if (r->rank == 0) {
    if (r->have_scatter) {
      r->exact_part = target; /* r->exact came from rank 0's own reading */
    } else {
      r->exact = target;
    }
    gzs_finish_field(o, r, r->exact, r->exact_result);
    gzs_verify_metrics(o, r);
  }
  return 0;
}
