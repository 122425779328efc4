/*
 * stack_counts.c - step 3 of `gzstack stack`, first part: every rank
 * agrees on the range of the valid input values and on whether any value
 * was missing anywhere. If so, the per-point counts of valid samples are
 * summed exactly (MPI_Allreduce of uint32) and the mean divides by them;
 * otherwise every point has N samples. c_min (the smallest positive count)
 * sets the strict mean's budget (stack_bound.h).
 */
#include "stack_internal.h"

#include <stdlib.h>

int gzs_agree_counts(gzs_run_t *r, MPI_Comm comm) {
  size_t M = r->npoints;
  double flags[3] = {-r->lo, r->hi, r->counts ? 1.0 : 0.0}, t0;

  MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_DOUBLE, MPI_MAX, comm);
  r->lo = -flags[0];
  r->hi = flags[1];
  r->any_mask = flags[2] > 0;
  r->masked_points = 0;
  if (r->snap_w) { /* --weights: the total, the same sum on every rank */
    r->w_tot = r->q_tot = 0;
    for (uint64_t g = 0; g < r->nsnap; g++) {
      r->w_tot += r->snap_w[g];
      r->q_tot += r->snap_w[g] * r->snap_w[g];
    }
    r->w_min = r->w_tot;
  }
  if (!r->any_mask) {
    r->c_min = r->c_max = (uint32_t)r->nsnap;
    return 0;
  }
  if (r->snap_w && !r->wsum) { /* nothing missing here: every local weight */
    double mine = 0, mine_q = 0;
    for (uint64_t g = r->my_first; g < r->my_first + r->my_count; g++) {
      mine += r->snap_w[g];
      mine_q += r->snap_w[g] * r->snap_w[g];
    }
    r->wsum = malloc(sizeof(double) * M + 1);
    for (size_t i = 0; r->wsum && i < M; i++)
      r->wsum[i] = mine;
    if (r->moment_pass && !r->wsq) { /* weighted var / std: the squared weights */
      r->wsq = malloc(sizeof(double) * M + 1);
      for (size_t i = 0; r->wsq && i < M; i++)
        r->wsq[i] = mine_q;
    }
  }
  if (gzs_agree(comm, r->snap_w && (!r->wsum || (r->moment_pass && !r->wsq)),
                "out of memory for the sums of weights"))
    return -1;
  if (!r->counts) { /* nothing missing here: every local snapshot counts */
    r->counts = malloc(sizeof(uint32_t) * M + 1);
    if (r->counts)
      for (size_t i = 0; i < M; i++)
        r->counts[i] = (uint32_t)r->my_count;
  }
  if (gzs_agree(comm, r->counts == NULL, "out of memory for the per-point counts"))
    return -1;
  t0 = MPI_Wtime();
  for (size_t off = 0; off < M; off += GZS_MPI_CHUNK) {
    int n = (int)(M - off < GZS_MPI_CHUNK ? M - off : GZS_MPI_CHUNK);
    MPI_Allreduce(MPI_IN_PLACE, r->counts + off, n, MPI_UINT32_T, MPI_SUM, comm);
  }
  for (size_t off = 0; r->wsum && off < M; off += GZS_MPI_CHUNK) {
    int n = (int)(M - off < GZS_MPI_CHUNK ? M - off : GZS_MPI_CHUNK);
    MPI_Allreduce(MPI_IN_PLACE, r->wsum + off, n, MPI_DOUBLE, MPI_SUM, comm);
    if (r->wsq)
      MPI_Allreduce(MPI_IN_PLACE, r->wsq + off, n, MPI_DOUBLE, MPI_SUM, comm);
  }
  r->t.communicate += MPI_Wtime() - t0;
  if (r->wsum) { /* the smallest positive sum of weights */
    r->w_min = 0;
    for (size_t i = 0; i < M; i++)
      if (r->wsum[i] > 0 && (r->w_min == 0 || r->wsum[i] < r->w_min))
        r->w_min = r->wsum[i];
  }
  r->c_min = UINT32_MAX;
  r->c_max = 0;
  for (size_t i = 0; i < M; i++) {
    uint32_t c = r->counts[i];
    if (c == 0)
      r->masked_points++;
    else if (c < r->c_min)
      r->c_min = c;
    if (c > r->c_max)
      r->c_max = c;
  }
  if (r->c_max == 0)
    r->c_min = 0;
  return 0;
}
