/*
 * bench_gpu.c - `gzbench gpu`: the GPU codec and the device-centric ReDoub.
 * It drives the kernels' own interface (gz_device.h), which app/ does not
 * see: gzbench links it as the library gz_bench_gpu (app/bench.h declares
 * gz_bench_gpu for gzbench's dispatch).
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
 *    events (median) on rank 0 while the other ranks wait (ranks may share
 *    one GPU), the transfer of one encoded buffer between rank pairs
 *    (MPI_Sendrecv, staged through pinned memory unless MPI is CUDA-aware),
 *    and the whole gz_allreduce on device buffers (median, slowest rank).
 * Without a device on some rank it prints why and exits 0 (nothing to
 * measure); every rank still takes part in the collective gz_device_select.
 * The device name printed is the one rank 0 selected.
 */
#include "gz_block.h"
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

static int bench_codec(const gpu_args_t *a, int dev) {
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
  gz_dev_info(dev, name, sizeof name, NULL); /* the selected device */
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

/* Device buffers of the ReDoub stages. */
typedef struct rd_bufs {
  void *dx, *dq, *dm, *dt, *s, *ev0, *ev1;
  uint64_t *dsize;
  unsigned *dflags;
  size_t n, bound, tmpb;
} rd_bufs_t;

/* Quantize, encode, decode-and-reduce on this rank's device buffers: timed
 * (median of reps, CUDA events) when timed, else run once. 0 when done. */
static int redoub_stages(const gpu_args_t *a, int P, int timed, rd_bufs_t *b, float t[3],
                         uint64_t *size) {
  int reps = timed ? (a->reps < 64 ? a->reps : 64) : 0, code = 1;
  void *ev0 = b->ev0, *ev1 = b->ev1;
  t[0] = t[1] = t[2] = 0;
  TRY(gz_dev_memset_async(b->dflags, 0, sizeof *b->dflags, b->s));
#define STAGE(k, call)                                                                   \
  do {                                                                                   \
    if (timed)                                                                           \
      TIMED(t[k], reps, b->s, call);                                                     \
    else                                                                                 \
      TRY(call);                                                                         \
  } while (0)
  STAGE(0, gz_dev_quantize(1, b->dx, b->n, a->eb / P, GZ_CODE_LIMIT / P, (int64_t *)b->dq,
                           b->dflags, b->s));
  STAGE(1, gz_dev_codes_encode((int64_t *)b->dq, b->n, b->dm, b->bound, b->dt, b->tmpb,
                               b->dsize, b->s));
  TRY(gz_dev_memcpy_async(size, b->dsize, 8, b->s));
  TRY(gz_dev_stream_sync(b->s));
  STAGE(2,
        gz_dev_codes_decode_reduce(GZ_DEV_OP_MAX, b->dm, (size_t)*size, (int64_t *)b->dq,
                                   b->n, b->dt, b->tmpb, b->dflags, b->s));
#undef STAGE
  TRY(gz_dev_stream_sync(b->s));
  code = 0;
done:
  return code;
}

/* A failure on any rank, agreed (every rank calls it at the same points). */
static int any_failed(MPI_Comm comm, int failed) {
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  return failed;
}

#define STEP(call)                                                                       \
  do {                                                                                   \
    if (!failed && (call) != GZ_DEV_OK) {                                                \
      fprintf(stderr, "gzbench gpu: %s failed: %s\n", #call, gz_dev_last_error());       \
      failed = 1;                                                                        \
    }                                                                                    \
  } while (0)

static int bench_redoub(const gpu_args_t *a, MPI_Comm comm) {
  size_t n = (size_t)(a->coll_mb * 1048576.0 / 4.0), raw = n * 4;
  rd_bufs_t b = {0};
  int rank, P, failed = 0, reps = a->reps < 64 ? a->reps : 64;
  float *x = malloc(raw), t[3] = {0, 0, 0};
  unsigned char *h = NULL;
  uint64_t size = 0;
  double t_x = 0, t_all[64];
  gz_config_t cfg = GZ_CONFIG_INIT;
  gz_ctx_t ctx = NULL;
  gz_report_t rep;
  gz_result_t grc = GZ_OK;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  b.n = n;
  b.bound = gz_dev_codes_indexed_bound(n);
  b.tmpb = gz_dev_codes_tmp_bytes(n);
  failed = !x;
  if (x)
    smooth(x, n);
  STEP(gz_dev_stream_create(&b.s));
  STEP(gz_dev_event_create(&b.ev0));
  STEP(gz_dev_event_create(&b.ev1));
  STEP(gz_dev_malloc(&b.dx, raw));
  STEP(gz_dev_malloc(&b.dq, n * 8));
  STEP(gz_dev_malloc(&b.dm, b.bound));
  STEP(gz_dev_malloc(&b.dt, b.tmpb));
  STEP(gz_dev_malloc((void **)&b.dsize, 8));
  STEP(gz_dev_malloc((void **)&b.dflags, sizeof *b.dflags));
  STEP(gz_dev_host_alloc((void **)&h, 2 * b.bound));
  STEP(gz_dev_memcpy_async(b.dx, x, raw, b.s));
  STEP(gz_dev_stream_sync(b.s));
  /* Per-stage costs: every other rank prepares its encoded buffer first,
   * then rank 0 is timed alone (ranks may share one GPU). */
  if (!failed && rank != 0)
    failed = redoub_stages(a, P, 0, &b, t, &size);
  if (any_failed(comm, failed))
    goto done;
  if (rank == 0)
    failed = redoub_stages(a, P, 1, &b, t, &size);
  if (any_failed(comm, failed))
    goto done;
  /* one step's transfer: pairs (r, r ^ 1) at once, staged through pinned memory */
  if (P > 1) {
    int peer = (rank ^ 1) < P ? rank ^ 1 : MPI_PROC_NULL;
    double best = 1e30;
    for (int k = 0; k < WARMUP + reps; k++) {
      double tk;
      MPI_Barrier(comm);
      tk = MPI_Wtime();
      STEP(gz_dev_memcpy_async(h, b.dm, (size_t)size, b.s));
      STEP(gz_dev_stream_sync(b.s));
      MPI_Sendrecv(h, (int)size, MPI_BYTE, peer, 9, h + b.bound, (int)b.bound, MPI_BYTE,
                   peer, 9, comm, MPI_STATUS_IGNORE);
      STEP(gz_dev_memcpy_async(b.dm, h + b.bound, (size_t)size, b.s));
      STEP(gz_dev_stream_sync(b.s));
      tk = MPI_Wtime() - tk;
      if (k >= WARMUP && tk < best)
        best = tk;
    }
    t_x = best;
    if (any_failed(comm, failed))
      goto done;
  }
  /* the whole allreduce on device buffers (all ranks: the real pattern) */
  cfg.error_bound = a->eb;
  snprintf(cfg.algo, sizeof cfg.algo, "redoub");
  cfg.device_pool_bytes = 2 * n * 8 + 4 * b.bound + (64u << 20);
  if ((grc = gz_ctx_create(comm, &cfg, &ctx)) != GZ_OK) {
    if (rank == 0)
      fprintf(stderr, "gzbench gpu: context with a %.0f MiB device pool failed: %s\n",
              cfg.device_pool_bytes / 1048576.0, gz_strerror(grc));
    failed = 1;
    goto done;
  }
  for (int k = 0; k < WARMUP + reps; k++) {
    double tk;
    STEP(gz_dev_memcpy_async(b.dq, x, raw, b.s)); /* dq reused as the float input */
    STEP(gz_dev_stream_sync(b.s));
    if (any_failed(comm, failed))
      goto done;
    tk = MPI_Wtime();
    if ((grc = gz_allreduce(ctx, GZ_IN_PLACE, b.dq, n, GZ_FLOAT32, GZ_OP_SUM, &rep)) !=
        GZ_OK) { /* agreed by the library: every rank is here */
      if (rank == 0)
        fprintf(stderr, "gzbench gpu: gz_allreduce: %s\n", gz_strerror(grc));
      failed = 1;
      goto done;
    }
    tk = MPI_Wtime() - tk;
    MPI_Allreduce(MPI_IN_PLACE, &tk, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (k >= WARMUP)
      t_all[k - WARMUP] = tk;
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
             "(CUDA events, median, rank 0 alone on its device) and the whole call "
             "(best, slowest rank)\n",
             P, a->coll_mb, a->eb, rep.reason);
      printf("%-22s %10s %8s\n", "stage", "time_ms", "GB/s");
      printf("%-22s %10.3f %8.1f\n", "quantize", t[0], raw / (t[0] * 1e6));
      printf("%-22s %10.3f %8.1f   ratio %.2f\n", "encode", t[1], raw / (t[1] * 1e6),
             (double)raw / (double)size);
      printf("%-22s %10.3f %8.1f\n", "decode+reduce", t[2], raw / (t[2] * 1e6));
      if (P > 1)
        printf("%-22s %10.3f %8.1f   (%llu bytes, staged, all pairs at once)\n",
               "transfer (1 step)", t_x * 1e3, size / (t_x * 1e9),
               (unsigned long long)size);
      printf("%-22s %10.3f %8.1f   (%d doubling steps, %s)\n", "allreduce (whole)",
             best * 1e3, raw / (best * 1e9), steps,
             rep.compressed ? "compressed" : "MPI");
    }
  }
done:
  gz_ctx_destroy(ctx);
  gz_dev_free(b.dx);
  gz_dev_free(b.dq);
  gz_dev_free(b.dm);
  gz_dev_free(b.dt);
  gz_dev_free(b.dsize);
  gz_dev_free(b.dflags);
  gz_dev_host_free(h);
  gz_dev_event_destroy(b.ev0);
  gz_dev_event_destroy(b.ev1);
  gz_dev_stream_destroy(b.s);
  free(x);
  return failed;
}

int gz_bench_gpu(int argc, char **argv, MPI_Comm comm); /* app/bench.h */

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
  /* gz_device_select is collective: every rank calls it, device or not */
  none = gz_device_select(comm, &dev) != GZ_OK;
  if (none)
    gz_device_count(why, sizeof why);
  MPI_Allreduce(MPI_IN_PLACE, &none, 1, MPI_INT, MPI_MAX, comm);
  if (none) {
    if (rank == 0)
      printf("gzbench gpu: no CUDA device (%s): nothing to measure\n",
             why[0] ? why : "some rank has none");
    return 0;
  }
  if (rank == 0)
    code = bench_codec(&a, dev);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  if (bench_redoub(&a, comm) != 0)
    code = 1;
  MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, comm);
  return code;
}
