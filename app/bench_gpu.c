/*
 * bench_gpu.c - `gzbench gpu`: the GPU codec and the device-centric ReDoub.
 *
 *   gzbench gpu [--mb 512] [--eb 1e-4] [--reps 10] [--coll-mb 64]
 *   mpirun -np P gzbench gpu ...     (ranks share the node's GPUs)
 *
 * 1. Codec (rank 0): a smooth float32 field of --mb MiB (sum of sines, the
 *    same generator on every run) on the GPU; gz_dev_compress and
 *    gz_dev_decompress timed with CUDA events on one stream after 3 warm-up
 *    runs, median of --reps; GB/s = raw bytes / time (10^9 bytes/s);
 *    ratio = raw / compressed. The GPU stream is compared byte for byte with
 *    gz_compress's (identical: yes/no) and the decompressed field checked
 *    against the bound (violations must be 0).
 * 2. Device ReDoub (all ranks): per-step costs on --coll-mb MiB of float32:
 *    quantize, encode (indexed codes), decode-and-add, each timed with CUDA
 *    events (median), the transfer of one encoded buffer between rank pairs
 *    (MPI_Sendrecv, staged through pinned memory unless MPI is CUDA-aware),
 *    and the whole gz_allreduce on device buffers (median, slowest rank).
 * Without a device it prints why and exits 0 (nothing to measure).
 */
#include "bench.h"

#include "gz_device.h"
#include "gzcoll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 3

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static float median(float *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_float);
  return n ? v[n / 2] : 0.0f;
}

static void smooth(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double t = (double)i;
    x[i] = (float)(sin(t * 1e-4) + 0.5 * sin(t * 3.1e-3 + 1.0) + 0.25 * cos(t * 1.7e-2));
  }
}

typedef struct gpu_args {
  double mb, eb, coll_mb;
  int reps;
} gpu_args_t;

static int parse(int argc, char **argv, gpu_args_t *a) {
  a->mb = 512;
  a->eb = 1e-4;
  a->coll_mb = 64;
  a->reps = 10;
  for (int i = 1; i < argc; i += 2) { /* option and its value */
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
      return 1;
    if (!v)
      return 2;
    if (!strcmp(argv[i], "--mb"))
      a->mb = atof(v);
    else if (!strcmp(argv[i], "--eb"))
      a->eb = atof(v);
    else if (!strcmp(argv[i], "--coll-mb"))
      a->coll_mb = atof(v);
    else if (!strcmp(argv[i], "--reps"))
      a->reps = atoi(v);
    else
      return 2;
  }
  return a->mb > 0 && a->eb > 0 && a->coll_mb > 0 && a->reps > 0 ? 0 : 2;
}

#define TRY(call)                                                                        \
  do {                                                                                   \
    if ((call) != GZ_DEV_OK) {                                                           \
      fprintf(stderr, "gzbench gpu: %s failed: %s\n", #call, gz_dev_last_error());       \
      goto done;                                                                         \
    }                                                                                    \
  } while (0)

/* Time reps runs of what (a statement on stream s) with events; median ms. */
#define TIMED(out_ms, reps, s, what)                                                     \
  do {                                                                                   \
    float t_[64];                                                                        \
    int r_ = (reps) < 64 ? (reps) : 64;                                                  \
    for (int w_ = 0; w_ < WARMUP; w_++)                                                  \
      TRY(what);                                                                         \
    for (int k_ = 0; k_ < r_; k_++) {                                                    \
      TRY(gz_dev_event_record(ev0, s));                                                  \
      TRY(what);                                                                         \
      TRY(gz_dev_event_record(ev1, s));                                                  \
      TRY(gz_dev_event_elapsed_ms(ev0, ev1, &t_[k_]));                                   \
    }                                                                                    \
    out_ms = median(t_, r_);                                                             \
  } while (0)

static int bench_codec(const gpu_args_t *a) {
  size_t n = (size_t)(a->mb * 1048576.0 / 4.0), raw = n * 4;
  size_t cap = gz_compress_bound(GZ_FLOAT32, n, 0), tmpb, dtmpb, hsize = 0;
  float *x = malloc(raw), *y = malloc(raw), tc = 0, td = 0;
  unsigned char *hs = malloc(cap), *gs = malloc(cap);
  void *dx = NULL, *ds = NULL, *dt = NULL, *dy = NULL, *s = NULL, *ev0 = NULL,
       *ev1 = NULL;
  uint64_t *dsize = NULL, gsize = 0;
  unsigned *dflags = NULL, flags = 0;
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  long bad = 0;
  int code = 1;
  char name[128] = "";
  gz_dev_info(0, name, sizeof name, NULL);
  if (!x || !y || !hs || !gs) {
    fprintf(stderr, "gzbench gpu: out of host memory for %.0f MiB\n", a->mb);
    goto done;
  }
  smooth(x, n);
  tmpb = gz_dev_compress_tmp_bytes(1, n, 0);
  dtmpb = gz_dev_decompress_tmp_bytes(n);
  TRY(gz_dev_stream_create(&s));
  TRY(gz_dev_event_create(&ev0));
  TRY(gz_dev_event_create(&ev1));
  TRY(gz_dev_malloc(&dx, raw));
  TRY(gz_dev_malloc(&dy, raw));
  TRY(gz_dev_malloc(&ds, cap));
  TRY(gz_dev_malloc(&dt, tmpb > dtmpb ? tmpb : dtmpb));
  TRY(gz_dev_malloc((void **)&dsize, 8));
  TRY(gz_dev_malloc((void **)&dflags, sizeof *dflags));
  TRY(gz_dev_memcpy_async(dx, x, raw, s));
  TIMED(tc, a->reps, s,
        gz_dev_compress(1, 0, a->eb, 0, dx, n, ds, cap, dt, tmpb, dsize, s));
  TRY(gz_dev_memcpy_async(&gsize, dsize, 8, s));
  TRY(gz_dev_stream_sync(s));
  TRY(gz_dev_memset_async(dflags, 0, sizeof *dflags, s));
  TIMED(td, a->reps, s,
        gz_dev_decompress(1, ds, (size_t)gsize, dy, n, dt, dtmpb, dflags, s));
  TRY(gz_dev_memcpy_async(&flags, dflags, sizeof flags, s));
  TRY(gz_dev_memcpy_async(y, dy, raw, s));
  TRY(gz_dev_memcpy_async(gs, ds, (size_t)gsize, s));
  TRY(gz_dev_stream_sync(s));
  for (size_t i = 0; i < n; i++)
    bad += !(fabs((double)x[i] - (double)y[i]) <= a->eb);
  p.error_bound = a->eb;
  gz_compress(&p, x, n, hs, cap, &hsize);
  printf("# gzbench gpu: codec on %s, smooth float32 field, %.0f MiB, eb %g (abs), "
         "CUDA events, median of %d after %d warm-up runs\n",
         name, a->mb, a->eb, a->reps, WARMUP);
  printf("%-10s %12s %10s %8s %10s %10s %11s\n", "op", "bytes", "time_ms", "GB/s",
         "ratio", "identical", "violations");
  printf("%-10s %12zu %10.3f %8.1f %10.2f %10s %11s\n", "compress", raw, tc,
         raw / (tc * 1e6), (double)raw / (double)gsize,
         gsize == hsize && !memcmp(gs, hs, hsize) ? "yes" : "NO", "-");
  printf("%-10s %12zu %10.3f %8.1f %10.2f %10s %11ld\n", "decompress", raw, td,
         raw / (td * 1e6), (double)raw / (double)gsize, flags ? "FLAGS" : "-", bad);
  code = bad || flags || gsize != hsize || memcmp(gs, hs, hsize) ? 1 : 0;
done:
  gz_dev_free(dx);
  gz_dev_free(dy);
  gz_dev_free(ds);
  gz_dev_free(dt);
  gz_dev_free(dsize);
  gz_dev_free(dflags);
  gz_dev_event_destroy(ev0);
  gz_dev_event_destroy(ev1);
  gz_dev_stream_destroy(s);
  free(x);
  free(y);
  free(hs);
  free(gs);
  return code;
}

static int bench_redoub(const gpu_args_t *a, MPI_Comm comm) {
  size_t n = (size_t)(a->coll_mb * 1048576.0 / 4.0), raw = n * 4;
  size_t bound = gz_dev_codes_indexed_bound(n), tmpb = gz_dev_codes_tmp_bytes(n);
  int rank, P, code = 1, reps = a->reps < 64 ? a->reps : 64;
  float *x = malloc(raw), tq = 0, te = 0, tr = 0;
  void *dx = NULL, *dq = NULL, *dm = NULL, *dt = NULL, *s = NULL, *ev0 = NULL,
       *ev1 = NULL;
  unsigned char *h = NULL;
  uint64_t *dsize = NULL, size = 0;
  unsigned *dflags = NULL;
  double t_x = 0, t_all[64];
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_report_t rep;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (!x)
    goto done;
  smooth(x, n);
  TRY(gz_dev_stream_create(&s));
  TRY(gz_dev_event_create(&ev0));
  TRY(gz_dev_event_create(&ev1));
  TRY(gz_dev_malloc(&dx, raw));
  TRY(gz_dev_malloc(&dq, n * 8));
  TRY(gz_dev_malloc(&dm, bound));
  TRY(gz_dev_malloc(&dt, tmpb));
  TRY(gz_dev_malloc((void **)&dsize, 8));
  TRY(gz_dev_malloc((void **)&dflags, sizeof *dflags));
  TRY(gz_dev_host_alloc((void **)&h, 2 * bound));
  TRY(gz_dev_memcpy_async(dx, x, raw, s));
  TRY(gz_dev_memset_async(dflags, 0, sizeof *dflags, s));
  TIMED(tq, reps, s,
        gz_dev_quantize(1, dx, n, a->eb / P, 1125899906842624.0 / P, (int64_t *)dq,
                        dflags, s));
  TIMED(te, reps, s,
        gz_dev_codes_encode((int64_t *)dq, n, dm, bound, dt, tmpb, dsize, s));
  TRY(gz_dev_memcpy_async(&size, dsize, 8, s));
  TRY(gz_dev_stream_sync(s));
  TIMED(tr, reps, s,
        gz_dev_codes_decode_reduce(GZ_DEV_OP_MAX, dm, (size_t)size, (int64_t *)dq, n, dt,
                                   tmpb, dflags, s));
  /* one step's transfer: pairs (r, r ^ 1), staged through pinned memory */
  if (P > 1) {
    int peer = (rank ^ 1) < P ? rank ^ 1 : MPI_PROC_NULL;
    double best = 1e30;
    for (int k = 0; k < WARMUP + reps; k++) {
      double t;
      MPI_Barrier(comm);
      t = MPI_Wtime();
      TRY(gz_dev_memcpy_async(h, dm, (size_t)size, s));
      TRY(gz_dev_stream_sync(s));
      MPI_Sendrecv(h, (int)size, MPI_BYTE, peer, 9, h + bound, (int)bound, MPI_BYTE, peer,
                   9, comm, MPI_STATUS_IGNORE);
      TRY(gz_dev_memcpy_async(dm, h + bound, (size_t)size, s));
      TRY(gz_dev_stream_sync(s));
      t = MPI_Wtime() - t;
      if (k >= WARMUP && t < best)
        best = t;
    }
    t_x = best;
  }
  /* the whole allreduce on device buffers */
  cfg.error_bound = a->eb;
  cfg.algo = GZ_ALGO_REDOUB;
  cfg.device_pool_bytes = 2 * n * 8 + 4 * bound + (64u << 20);
  if (gz_ctx_create(comm, &cfg, &ctx) != GZ_OK) {
    if (rank == 0)
      fprintf(stderr, "gzbench gpu: context with a %.0f MiB device pool failed\n",
              cfg.device_pool_bytes / 1048576.0);
    goto done;
  }
  for (int k = 0; k < WARMUP + reps; k++) {
    double t;
    TRY(gz_dev_memcpy_async(dq, x, raw, s)); /* dq reused as the float input */
    TRY(gz_dev_stream_sync(s));
    MPI_Barrier(comm);
    t = MPI_Wtime();
    if (gz_allreduce(ctx, GZ_IN_PLACE, dq, n, GZ_FLOAT32, GZ_OP_SUM, &rep) != GZ_OK)
      goto done;
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (k >= WARMUP)
      t_all[k - WARMUP] = t;
  }
  {
    double best = t_all[0];
    int steps = 0;
    for (int k = 1; k < reps; k++)
      best = t_all[k] < best ? t_all[k] : best;
    while ((1 << (steps + 1)) <= P)
      steps++;
    if (rank == 0) {
      printf("# device ReDoub on %d rank(s), %.0f MiB float32, eb %g, %s: per-step costs "
             "(CUDA events, median) and the whole call (best, slowest rank)\n",
             P, a->coll_mb, a->eb, rep.reason);
      printf("%-22s %10s %8s\n", "stage", "time_ms", "GB/s");
      printf("%-22s %10.3f %8.1f\n", "quantize", tq, raw / (tq * 1e6));
      printf("%-22s %10.3f %8.1f   ratio %.2f\n", "encode", te, raw / (te * 1e6),
             (double)raw / (double)size);
      printf("%-22s %10.3f %8.1f\n", "decode+reduce", tr, raw / (tr * 1e6));
      if (P > 1)
        printf("%-22s %10.3f %8.1f   (%llu bytes, staged)\n", "transfer (1 step)",
               t_x * 1e3, size / (t_x * 1e9), (unsigned long long)size);
      printf("%-22s %10.3f %8.1f   (%d doubling steps, %s)\n", "allreduce (whole)",
             best * 1e3, raw / (best * 1e9), steps,
             rep.compressed ? "compressed" : "MPI");
    }
  }
  code = 0;
done:
  gz_ctx_destroy(ctx);
  gz_dev_free(dx);
  gz_dev_free(dq);
  gz_dev_free(dm);
  gz_dev_free(dt);
  gz_dev_free(dsize);
  gz_dev_free(dflags);
  gz_dev_host_free(h);
  gz_dev_event_destroy(ev0);
  gz_dev_event_destroy(ev1);
  gz_dev_stream_destroy(s);
  free(x);
  return code;
}

int gz_bench_gpu(int argc, char **argv, MPI_Comm comm) {
  gpu_args_t a;
  char why[160] = "";
  int rank, rc = parse(argc, argv, &a), none, code = 0, dev = -1;
  MPI_Comm_rank(comm, &rank);
  if (rc) {
    if (rank == 0)
      printf("Usage: [mpirun -np P] gzbench gpu [--mb 512] [--eb 1e-4] [--reps 10] "
             "[--coll-mb 64]\n");
    return rc == 1 ? 0 : 2;
  }
  none = gz_device_count(why, sizeof why) == 0 || gz_device_select(comm, &dev) != GZ_OK;
  MPI_Allreduce(MPI_IN_PLACE, &none, 1, MPI_INT, MPI_MAX, comm);
  if (none) {
    if (rank == 0)
      printf("gzbench gpu: no CUDA device (%s): nothing to measure\n",
             why[0] ? why : "some rank has none");
    return 0;
  }
  if (rank == 0)
    code = bench_codec(&a);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  if (bench_redoub(&a, comm) != 0)
    code = 1;
  MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, comm);
  return code;
}
