/*
 * stack_device.c - `--device gpu` of `gzstack stack`: when every rank has a
 * CUDA device (picked by node-local rank), each slab of the partial sums is
 * copied to the GPU and reduced by the device-centric allreduce (same
 * codes, same result bytes as the CPU path); otherwise the CPU path, with
 * a note. Reading and accumulation stay on the CPU. Only the public API of
 * libgzcoll (gzcoll.h) is used.
 */
#include "stack_internal.h"

#include <stdio.h>

void gzs_device_note(const gzs_opts_t *o, int rank) {
  char why[160] = "";
  int n;
  if (!o->device_gpu)
    return;
  n = gz_device_available(why, sizeof why);
  if (rank != 0)
    return;
  if (n < 0)
    fprintf(stderr, "gzstack stack: --device gpu: this build has no CUDA device support; "
                    "running on the CPU\n");
  else if (n == 0)
    fprintf(stderr,
            "gzstack stack: --device gpu: no device found (%s); running on the CPU\n",
            why[0] ? why : "no CUDA device");
  else
    fprintf(stderr,
            "gzstack stack: --device gpu: %d device(s) found; the allreduce runs on the "
            "GPU (reading and accumulation on the CPU)\n",
            n);
}

/* Every rank's ok, agreed. */
static int all(int ok, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  return ok;
}

size_t gzs_device_open(gzs_device_t *d, size_t slab, MPI_Comm comm) {
  void *buf = NULL;
  d->buf = NULL;
  d->slab = slab;
  if (!all(gz_device_select(comm, NULL) == GZ_OK, comm))
    return 0;
  if (!all(gz_device_malloc(&buf, 2 * slab * sizeof(double)) == GZ_OK, comm)) {
    gz_device_free(buf);
    return 0;
  }
  d->buf = buf;
  return gz_device_pool_bytes(slab);
}

gz_result_t gzs_device_allreduce(gzs_device_t *d, gz_ctx_t ctx, const double *in,
                                 double *out, size_t n, gz_op_t op, MPI_Comm comm,
                                 gz_report_t *rep) {
  double *d_in = d->buf, *d_out = d->buf + d->slab;
  gz_result_t rc = gz_device_copy(d_in, in, n * sizeof(double));
  int bad = rc != GZ_OK;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (bad) /* this rank's copy failed, or another rank's */
    return rc != GZ_OK ? rc : GZ_ERR_REMOTE;
  rc = gz_allreduce(ctx, d_in, d_out, n, GZ_FLOAT64, op, rep);
  if (rc == GZ_OK && gz_device_copy(out, d_out, n * sizeof(double)) != GZ_OK)
    rc = GZ_ERR_UNSUPPORTED;
  return rc;
}

void gzs_device_close(gzs_device_t *d) {
  gz_device_free(d->buf);
  d->buf = NULL;
}
