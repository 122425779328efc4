/*
 * stack_read.c - step 2 of `gzstack stack`, parallel reading: rank r
 * stacks the contiguous block of snapshots [N r / P, N (r+1) / P). An
 * HDF5 file that every busy rank needs is opened collectively (MPI-IO) and
 * each rank reads its own records (hyperslabs); other files are opened by
 * the ranks that need them. --read root lives in stack_read_root.c.
 */
#include "stack_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Does every rank that stacks something need file f? */
static int all_busy_need(const gzs_run_t *r, int f) {
  uint64_t a = r->files[f].first, b = a + r->files[f].records;
  int any = 0;
  for (int q = 0; q < r->size; q++) {
    uint64_t lo = r->nsnap * (uint64_t)q / (uint64_t)r->size;
    uint64_t hi = r->nsnap * (uint64_t)(q + 1) / (uint64_t)r->size;
    if (lo == hi)
      continue;
    if (hi <= a || lo >= b)
      return 0;
    any = 1;
  }
  return any;
}

static int read_parallel(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                         size_t errlen) {
  size_t slab = gzs_slab_values(o), M = r->npoints;
  size_t part = slab < GZS_READ_VALUES ? slab : GZS_READ_VALUES,
         blen = M < part ? M : part;
  /* The rank's first snapshot is read straight into the accumulator, which
   * it initialises (no copy, no reading buffer for a single snapshot) */
  int can_init = o->op == GZS_OP_SUM || o->op == GZS_OP_MEAN || o->op == GZS_OP_MAX ||
                 o->op == GZS_OP_MIN;
  int need_buf = !can_init || r->my_count > 1;
  double *buf = need_buf ? malloc(sizeof(double) * blen + 1) : NULL;
  gzs_acc_t s;
  uint64_t mine_lo = r->my_first, mine_hi = r->my_first + r->my_count;
  int failed = 0;

  r->acc = gzs_acc_alloc(o->op, M);
  gzs_acc_init(&s, o->op, r->acc, &r->counts, M);
  s.square = r->moment_pass == 2;
  s.center = r->center;
  s.wsum = r->snap_w ? &r->wsum : NULL;
  s.wsq = r->snap_w && r->moment_pass ? &r->wsq : NULL;
  s.zero_missing = o->normalize_live;
  if ((need_buf && !buf) || !s.acc || gzs_acc_codes(o, r, &s, r->nsnap) != 0) {
    snprintf(err, errlen, "out of memory for snapshots of %zu values", M);
    failed = 1;
  }
  for (int f = 0; f < r->nfiles; f++) {
    const gzs_file_t *fi = &r->files[f];
    uint64_t a = fi->first > mine_lo ? fi->first : mine_lo;
    uint64_t b = fi->first + fi->records < mine_hi ? fi->first + fi->records : mine_hi;
    int coll = fi->format == GZ_FMT_HDF5 && all_busy_need(r, f);
    gz_reader_t *rd = NULL;
    double t_open = MPI_Wtime();
    int bad;
    if (!coll && (a >= b || failed))
      continue;
    bad = gzs_open_input(o, o->inputs[f], coll ? comm : MPI_COMM_SELF, &rd,
                         failed ? NULL : err, failed ? 0 : errlen) != 0;
    r->t.read += MPI_Wtime() - t_open;
    if (bad) {
      failed = 1;
      continue;
    }
    for (uint64_t g = a; g < b && !failed; g++) {
      s.w = r->snap_w ? r->snap_w[g] : 1.0;
      s.init = can_init && s.done == 0;
      for (size_t off = 0; off < M && !failed; off += blen) {
        size_t n = M - off < blen ? M - off : blen;
        double t0 = MPI_Wtime(), *x = s.init ? s.acc + off : buf;
        if (gzs_read_part(rd, gzs_file_record(fi, g - fi->first), off, n, M, x, err,
                          errlen) != 0) {
          failed = 1;
          break;
        }
        r->t.read += MPI_Wtime() - t0;
        gzs_scale(o, g, x, n, fi->has_fill, fi->fill); /* --scale */
        if (gzs_accumulate(&s, x, off, n, fi->has_fill, fi->fill, NULL) != 0) {
          snprintf(err, errlen, "out of memory for the per-point counts");
          failed = 1;
        }
      }
      s.done++;
      s.wdone += s.w;
      s.wqdone += s.w * s.w;
      gzs_progress(o, r, 0,
                   "reading: %llu/%llu snapshots on rank 0 (%llu in all on %d ranks)",
                   (unsigned long long)s.done, (unsigned long long)r->my_count,
                   (unsigned long long)r->nsnap, r->size);
    }
    gz_reader_close(rd);
  }
  gzs_acc_report(&s, r);
  free(buf);
  return gzs_agree(comm, failed, err) ? -1 : 0;
}

int gzs_read(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen) {
  if (o->key_text)
    return gzs_key_read(o, r, comm, err, errlen);
  return o->read_root ? gzs_read_root(o, r, comm, err, errlen)
                      : read_parallel(o, r, comm, err, errlen);
}
