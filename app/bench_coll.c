/*
 * bench_coll.c - `gzbench coll`: the compressed collectives of libgzcoll side
 * by side with the MPI library's own collective, in the same run, over a
 * sweep of message sizes (powers of two), in the style of the OSU
 * micro-benchmarks and nccl-tests.
 *
 * Per size and algorithm: warm-up calls, then --iters timed calls, each
 * preceded by a barrier; the time of a call is the maximum over ranks; the
 * reported time is the median over the timed calls. Columns:
 *   size       bytes, as nccl-tests: the per-rank buffer for allreduce and
 *              bcast, the total (P blocks) for the others
 *   count      elements per call argument (allreduce/bcast: the buffer;
 *              reduce_scatter: recvcount; allgather/scatter/alltoall: per
 *              block)
 *   time_us    median call time (max over ranks)
 *   algbw_GBps size / time (1e9 B/s)
 *   busbw_GBps algbw times the nccl-tests factor: allreduce 2(P-1)/P,
 *              reduce_scatter, allgather, scatter and alltoall (P-1)/P,
 *              bcast 1
 *   min_us, avg_us, max_us
 *              OSU-style: the minimum, mean and maximum over ranks of one
 *              call, each the median over the timed calls (max_us = time_us)
 *   ratio      uncompressed bytes / bytes sent, summed over ranks
 *   max_err    largest |result - exact| over all ranks, the exact result
 *              computed in double with MPI in the same run
 *   psnr       20 log10(range of the exact result) - 10 log10(mse), over
 *              all ranks' results (inf when exact)
 *   #wrong     elements outside the bound the call reported (--pwrel:
 *              e |exact| each), plus the rounding of the double reference
 *   codec_us   of the call, seconds in quantize/encode/decode/reduce/
 *              dequantize (libgzcoll's report; slowest rank, median); the
 *              rest of time_us is communication and waiting
 *   ran        the algorithm that ran (what `auto` chose)
 * --profile adds, per size, one pass of each codec phase over this rank's n
 * input values, all ranks at once (so under the same CPU contention as the
 * collective), slowest rank: quantize (q_us), encode (enc_us), decode and
 * reduce into an accumulator (dec_us), dequantize (deq_us). --csv and --json
 * write every row with the run's settings.
 * Algorithms: `mpi` calls the MPI collective directly (the baseline);
 * `gz-mpi` is libgzcoll forced to its MPI path (the library's overhead: one
 * small status allreduce); the others are libgzcoll's algorithms forced by
 * configuration; `auto` lets the cost model choose (see --explain).
 */
#include "app.h"
#include "bench.h"
#include "json.h"

#include "gzcoll.h"

#include <argtable2.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
  C_ALLREDUCE,
  C_REDUCE_SCATTER,
  C_ALLGATHER,
  C_BCAST,
  C_SCATTER,
  C_ALLTOALL
} coll_t;

static const char *const coll_names[] = {"allreduce", "reduce_scatter", "allgather",
                                         "bcast",     "scatter",        "alltoall"};

#define MAX_ALGOS 8

typedef struct algo_entry {
  char name[16];
  int direct;                  /* 1: call MPI directly */
  char algo[GZ_ALGO_NAME_MAX]; /* libgzcoll's name ("mpi" for gz-mpi) */
  gz_ctx_t ctx;
} algo_entry_t;

typedef struct bench {
  MPI_Comm comm;
  int rank, size;
  coll_t coll;
  gz_dtype_t dtype;
  size_t esz;
  gz_op_t op;
  gz_config_t cfg;
  size_t min_bytes, max_bytes;
  int iters, warmup, root, explain;
  int data_kind; /* 0 smooth, 1 noise, 2 file */
  char data_name[256];
  double *file; /* file values, as the benchmark type */
  size_t file_n;
  algo_entry_t algos[MAX_ALGOS];
  int nalgos;
  int profile;
  FILE *csv, *json_file;
  gz_json_t json; /* the --json document, while json_file is open */
} bench_t;

/* One result row (rank 0 prints it). */
typedef struct row {
  double t_max, t_min, t_avg; /* medians over calls of max/min/mean over ranks */
  double codec;               /* median over calls of the slowest rank's codec time */
  double ratio, max_err, psnr;
  long wrong;
  const char *ran;
  double prof[4]; /* quantize, encode, decode-reduce, dequantize; < 0 = not run */
} row_t;

/* ---- data ---------------------------------------------------------------- */

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double gz_bench_smooth(int rank, size_t i) {
  double t = (double)i;
  return sin(t * 6.283185307179586 / 4096.3 + 0.7 * rank) +
         0.5 * sin(t * 6.283185307179586 / 517.7 + 1.3 * rank);
}

/* Element i of rank r's input, rounded to the benchmark type. */
static double value(const bench_t *b, int r, size_t i) {
  double v;
  if (b->data_kind == 2) {
    size_t off = (size_t)r * (b->file_n / (size_t)b->size + 1);
    v = b->file[(off + i) % b->file_n];
  } else if (b->data_kind == 1) {
    v = (double)(mix(((uint64_t)r << 40) ^ (uint64_t)i) >> 11) * 0x1p-52 - 1.0;
  } else {
    v = gz_bench_smooth(r, i);
  }
  return b->dtype == GZ_FLOAT32 ? (double)(float)v : v;
}

static void put(const bench_t *b, void *buf, size_t i, double v) {
  if (b->dtype == GZ_FLOAT32)
    ((float *)buf)[i] = (float)v;
  else
    ((double *)buf)[i] = v;
}

static double get(const bench_t *b, const void *buf, size_t i) {
  return b->dtype == GZ_FLOAT32 ? (double)((const float *)buf)[i]
                                : ((const double *)buf)[i];
}

static int load_file(bench_t *b, const char *path) {
  FILE *f = fopen(path, "rb");
  long len;
  size_t n;
  void *raw = NULL;
  int ok = 0;
  if (!f)
    return 0;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    n = (size_t)len / b->esz;
    raw = malloc(n * b->esz + 1);
    b->file = malloc((n + 1) * sizeof *b->file);
    if (n && raw && b->file && fread(raw, b->esz, n, f) == n) {
      for (size_t i = 0; i < n; i++)
        b->file[i] = get(b, raw, i);
      b->file_n = n;
      ok = 1;
    }
  }
  free(raw);
  fclose(f);
  return ok;
}

/* ---- one size ------------------------------------------------------------ */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, c = *(const double *)y;
  return (a > c) - (a < c);
}

typedef struct shape {
  size_t count;        /* the call's count argument */
  size_t in_n, out_n;  /* elements in / out on this rank */
  double busbw_factor; /* nccl-tests */
} shape_t;

static int shape_of(const bench_t *b, size_t bytes, shape_t *s) {
  size_t P = (size_t)b->size, n = bytes / b->esz;
  switch (b->coll) {
  case C_ALLREDUCE:
  case C_BCAST:
    s->count = n;
    s->in_n = s->out_n = n;
    s->busbw_factor = b->coll == C_BCAST ? 1.0 : 2.0 * (double)(P - 1) / (double)P;
    break;
  default:
    s->count = n / P;
    s->in_n = b->coll == C_ALLGATHER ? s->count : s->count * P;
    s->out_n =
        b->coll == C_REDUCE_SCATTER || b->coll == C_SCATTER ? s->count : s->count * P;
    s->busbw_factor = (double)(P - 1) / (double)P;
  }
  return s->count > 0;
}

/* Exact result in double, and per element the rounding of that reference
 * (SUM) plus, for the direct MPI baseline, the rounding of MPI's own sum. */
static void reference(const bench_t *b, const shape_t *s, double *ref, double *slop,
                      double *mpi_slop) {
  size_t P = (size_t)b->size, c = s->count;
  int r = b->rank;
  double u = b->dtype == GZ_FLOAT32 ? 0x1p-24 : 0x1p-53;
  for (size_t i = 0; i < s->out_n; i++)
    slop[i] = mpi_slop[i] = 0;
  if (b->coll == C_ALLREDUCE || b->coll == C_REDUCE_SCATTER) {
    MPI_Op mop = b->op == GZ_OP_SUM ? MPI_SUM : b->op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
    double *x = malloc(s->in_n * sizeof *x), *ax = malloc(s->in_n * sizeof *ax);
    for (size_t i = 0; i < s->in_n; i++) {
      x[i] = value(b, r, i);
      ax[i] = fabs(x[i]);
    }
    if (b->coll == C_ALLREDUCE) {
      MPI_Allreduce(x, ref, (int)c, MPI_DOUBLE, mop, b->comm);
      MPI_Allreduce(ax, slop, (int)c, MPI_DOUBLE, MPI_SUM, b->comm);
    } else {
      MPI_Reduce_scatter_block(x, ref, (int)c, MPI_DOUBLE, mop, b->comm);
      MPI_Reduce_scatter_block(ax, slop, (int)c, MPI_DOUBLE, MPI_SUM, b->comm);
    }
    for (size_t i = 0; i < s->out_n; i++) {
      double abs_sum = slop[i];
      slop[i] = b->op == GZ_OP_SUM ? 0x1p-52 * (double)P * abs_sum : 0.0;
      mpi_slop[i] = b->op == GZ_OP_SUM ? 1.01 * (double)(P - 1) * u * abs_sum : 0.0;
    }
    free(x);
    free(ax);
    return;
  }
  for (size_t i = 0; i < s->out_n; i++) {
    switch (b->coll) {
    case C_ALLGATHER:
      ref[i] = value(b, (int)(i / c), i % c);
      break;
    case C_BCAST:
      ref[i] = value(b, b->root, i);
      break;
    case C_SCATTER:
      ref[i] = value(b, b->root, (size_t)r * c + i);
      break;
    default: /* alltoall: block s from rank s */
      ref[i] = value(b, (int)(i / c), (size_t)r * c + i % c);
    }
  }
}

static gz_result_t call(const bench_t *b, const algo_entry_t *a, const shape_t *s,
                        const void *in, void *out, gz_report_t *rep) {
  MPI_Datatype t = b->dtype == GZ_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
  MPI_Op mop = b->op == GZ_OP_SUM ? MPI_SUM : b->op == GZ_OP_MAX ? MPI_MAX : MPI_MIN;
  int c = (int)s->count, rc = MPI_SUCCESS;
  if (!a->direct) {
    switch (b->coll) {
    case C_ALLREDUCE:
      return gz_allreduce(a->ctx, in, out, s->count, b->dtype, b->op, rep);
    case C_REDUCE_SCATTER:
      return gz_reduce_scatter_block(a->ctx, in, out, s->count, b->dtype, b->op, rep);
    case C_ALLGATHER:
      return gz_allgather(a->ctx, in, out, s->count, b->dtype, rep);
    case C_BCAST:
      return gz_bcast(a->ctx, out, s->count, b->dtype, b->root, rep);
    case C_SCATTER:
      return gz_scatter(a->ctx, in, out, s->count, b->dtype, b->root, rep);
    case C_ALLTOALL:
      return gz_alltoall(a->ctx, in, out, s->count, b->dtype, rep);
    }
  }
  memset(rep, 0, sizeof *rep);
  switch (b->coll) {
  case C_ALLREDUCE:
    rc = MPI_Allreduce(in, out, c, t, mop, b->comm);
    break;
  case C_REDUCE_SCATTER:
    rc = MPI_Reduce_scatter_block(in, out, c, t, mop, b->comm);
    break;
  case C_ALLGATHER:
    rc = MPI_Allgather(in, c, t, out, c, t, b->comm);
    break;
  case C_BCAST:
    rc = MPI_Bcast(out, c, t, b->root, b->comm);
    break;
  case C_SCATTER:
    rc = MPI_Scatter(in, c, t, out, c, t, b->root, b->comm);
    break;
  case C_ALLTOALL:
    rc = MPI_Alltoall(in, c, t, out, c, t, b->comm);
    break;
  }
  return rc == MPI_SUCCESS ? GZ_OK : GZ_ERR_MPI;
}

static const char *type_name(const bench_t *b) {
  return b->dtype == GZ_FLOAT32 ? "f32" : "f64";
}

static const char *op_name(const bench_t *b) {
  if (b->coll != C_ALLREDUCE && b->coll != C_REDUCE_SCATTER)
    return "-";
  return b->op == GZ_OP_SUM ? "sum" : b->op == GZ_OP_MAX ? "max" : "min";
}

static void print_row(bench_t *b, size_t bytes, const shape_t *s, const char *algo,
                      const row_t *r) {
  double t = r->t_max, algbw = t > 0 ? (double)bytes / t / 1e9 : 0.0;
  double busbw = algbw * s->busbw_factor;
  if (b->rank != 0)
    return;
  printf("%11zu %10zu %4s %4s %9s %9s %11.1f %11.1f %11.1f %8.3f %8.3f %7.2f %9.3g %6.1f "
         "%6ld %10.1f\n",
         bytes, s->count, type_name(b), op_name(b), algo, r->ran, t * 1e6, r->t_min * 1e6,
         r->t_avg * 1e6, algbw, busbw, r->ratio, r->max_err, r->psnr, r->wrong,
         r->codec * 1e6);
  if (r->prof[0] >= 0)
    printf("#   profile: quantize %.1f us, encode %.1f us, decode+reduce %.1f us, "
           "dequantize %.1f us (one pass over %zu values, slowest rank)\n",
           r->prof[0] * 1e6, r->prof[1] * 1e6, r->prof[2] * 1e6, r->prof[3] * 1e6,
           s->in_n);
  fflush(stdout);
  if (b->csv) {
    fprintf(b->csv,
            "%s,%d,%s,%s,%s,%g,%s,%s,%zu,%zu,%s,%s,%.3f,%.3f,%.3f,%.3f,%.6f,%.6f,%.4f,"
            "%.6g,%.3f,%ld,%.3f",
            coll_names[b->coll], b->size, b->data_name, type_name(b), op_name(b),
            b->cfg.error_bound, gz_eb_mode_name(b->cfg.eb_mode),
            gz_bound_name(b->cfg.bound_policy), bytes, s->count, algo, r->ran, t * 1e6,
            r->t_min * 1e6, r->t_avg * 1e6, r->t_max * 1e6, algbw, busbw, r->ratio,
            r->max_err, r->psnr, r->wrong, r->codec * 1e6);
    for (int k = 0; k < 4; k++)
      if (r->prof[k] >= 0)
        fprintf(b->csv, ",%.3f", r->prof[k] * 1e6);
      else
        fprintf(b->csv, ",");
    fprintf(b->csv, "\n");
    fflush(b->csv);
  }
  if (b->json_file) {
    gz_json_t *j = &b->json;
    gz_json_object(j, NULL);
    gz_json_number(j, "size", (double)bytes);
    gz_json_number(j, "count", (double)s->count);
    gz_json_string(j, "algo", algo);
    gz_json_string(j, "ran", r->ran);
    gz_json_number(j, "time_us", t * 1e6);
    gz_json_number(j, "min_us", r->t_min * 1e6);
    gz_json_number(j, "avg_us", r->t_avg * 1e6);
    gz_json_number(j, "max_us", r->t_max * 1e6);
    gz_json_number(j, "algbw_GBps", algbw);
    gz_json_number(j, "busbw_GBps", busbw);
    gz_json_number(j, "ratio", r->ratio);
    gz_json_number(j, "max_err", r->max_err);
    gz_json_number(j, "psnr", r->psnr);
    gz_json_number(j, "wrong", (double)r->wrong);
    gz_json_number(j, "codec_us", r->codec * 1e6);
    if (r->prof[0] >= 0) {
      gz_json_number(j, "quantize_us", r->prof[0] * 1e6);
      gz_json_number(j, "encode_us", r->prof[1] * 1e6);
      gz_json_number(j, "decode_reduce_us", r->prof[2] * 1e6);
      gz_json_number(j, "dequantize_us", r->prof[3] * 1e6);
    }
    gz_json_end_object(j);
    fflush(b->json_file);
  }
}

double gz_bench_median(double *v, int n) {
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Slowest rank's time of a phase, all ranks starting together. */
static double phase_end(MPI_Comm comm, double t0) {
  double dt = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
  return dt;
}

/* One pass of each codec phase over this rank's input (see the top). prof
 * stays negative when a phase could not run (memory, REL bound). */
static void profile_size(const bench_t *b, const shape_t *s, double prof[4]) {
  size_t n = s->in_n, cap = gz_codes_bound(n), size = 0;
  int P = b->size, ok;
  int sum = (b->coll == C_ALLREDUCE || b->coll == C_REDUCE_SCATTER) && b->op == GZ_OP_SUM;
  double eb = b->cfg.error_bound;
  void *x = malloc(n * b->esz + 1), *enc = malloc(cap + 1),
       *back = malloc(n * b->esz + 1);
  int64_t *q = malloc((n + 1) * sizeof *q), *acc = malloc((n + 1) * sizeof *acc);
  int64_t limit = ((int64_t)1 << 52) / (sum ? P : 1);
  double t0;
  for (int k = 0; k < 4; k++)
    prof[k] = -1;
  if (sum && b->cfg.bound_policy == GZ_BOUND_STRICT)
    eb /= P; /* the strict plan's step (slightly smaller in the library) */
  ok = x && enc && back && q && acc && b->cfg.eb_mode == GZ_EB_ABS;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, b->comm);
  if (ok) {
    for (size_t i = 0; i < n; i++)
      put(b, x, i, value(b, b->rank, i));
    /* untimed pass first: page faults and caches as in a warmed-up call */
    ok = gz_quantize(b->dtype, x, n, eb, limit, q) == GZ_OK &&
         gz_codes_encode(q, n, enc, cap, &size) == GZ_OK &&
         gz_codes_decode(enc, size, acc, n) == GZ_OK &&
         gz_dequantize(b->dtype, acc, n, eb, back) == GZ_OK;
    memset(acc, 0, n * sizeof *acc);
    MPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    ok &= gz_quantize(b->dtype, x, n, eb, limit, q) == GZ_OK;
    prof[0] = phase_end(b->comm, t0);
    MPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    ok &= gz_codes_encode(q, n, enc, cap, &size) == GZ_OK;
    prof[1] = phase_end(b->comm, t0);
    MPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    ok &= gz_codes_decode_reduce(GZ_OP_SUM, enc, size, acc, n) == GZ_OK;
    prof[2] = phase_end(b->comm, t0);
    MPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    ok &= gz_dequantize(b->dtype, acc, n, eb, back) == GZ_OK;
    prof[3] = phase_end(b->comm, t0);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, b->comm);
    if (!ok) /* a value outside the code range: no profile */
      for (int k = 0; k < 4; k++)
        prof[k] = -1;
  }
  free(x);
  free(enc);
  free(back);
  free(q);
  free(acc);
}

/* One size through every algorithm; returns 0, or 1 on a failure or a wrong
 * element (the same on every rank). */
static int run_size(bench_t *b, size_t bytes) {
  shape_t s;
  void *in = NULL, *out = NULL;
  double *ref = NULL, *slop = NULL, *mpi_slop = NULL, *times = NULL;
  double *tmin, *tavg, *tcodec, prof[4], range = 0;
  int status = 0;
  if (!shape_of(b, bytes, &s))
    return 0;
  in = calloc(s.in_n + 1, b->esz);
  out = calloc(s.out_n + 1, b->esz);
  ref = malloc((s.out_n + 1) * sizeof *ref);
  slop = malloc((s.out_n + 1) * sizeof *slop);
  mpi_slop = malloc((s.out_n + 1) * sizeof *mpi_slop);
  times = malloc((size_t)(b->iters + 1) * 4 * sizeof *times);
  tmin = times ? times + b->iters + 1 : NULL;
  tavg = times ? tmin + b->iters + 1 : NULL;
  tcodec = times ? tavg + b->iters + 1 : NULL;
  status = !in || !out || !ref || !slop || !mpi_slop || !times;
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, b->comm);
  if (status) {
    if (b->rank == 0)
      fprintf(stderr, "gzbench coll: out of memory at %zu bytes\n", bytes);
    goto done;
  }
  if ((b->coll != C_BCAST && b->coll != C_SCATTER) || b->rank == b->root)
    for (size_t i = 0; i < s.in_n; i++)
      put(b, in, i, value(b, b->rank, i));
  reference(b, &s, ref, slop, mpi_slop);
  if (b->explain && b->rank == 0) {
    gz_ctx_t ctx = NULL;
    char line[512];
    for (int k = 0; k < b->nalgos; k++) /* auto's context if there is one */
      if (b->algos[k].ctx && (!ctx || !strcmp(b->algos[k].algo, "auto")))
        ctx = b->algos[k].ctx;
    if (ctx && gz_explain(ctx, coll_names[b->coll], s.count, b->dtype, line,
                          sizeof line) == GZ_OK)
      printf("# %s\n", line);
  }

  if (b->profile)
    profile_size(b, &s, prof);
  else
    prof[0] = prof[1] = prof[2] = prof[3] = -1;
  { /* range of the exact result over all ranks, for PSNR */
    double mm[2] = {-HUGE_VAL, -HUGE_VAL};
    for (size_t i = 0; i < s.out_n; i++)
      if (isfinite(ref[i])) {
        mm[0] = ref[i] > mm[0] ? ref[i] : mm[0];
        mm[1] = -ref[i] > mm[1] ? -ref[i] : mm[1];
      }
    MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_DOUBLE, MPI_MAX, b->comm);
    range = mm[0] + mm[1];
  }

  for (int k = 0; k < b->nalgos; k++) {
    algo_entry_t *a = &b->algos[k];
    gz_report_t rep;
    row_t row;
    double sums[4];
    long nout = (long)s.out_n;
    int nt = 0, failed = 0;
    memset(&rep, 0, sizeof rep);
    memset(&row, 0, sizeof row);
    for (int it = 0; it < b->warmup + b->iters; it++) {
      double t0, dt, mx[3], sm;
      gz_result_t rc;
      if (b->coll == C_BCAST)
        memcpy(out, in, s.out_n * b->esz); /* the root's buffer is overwritten */
      MPI_Barrier(b->comm);
      t0 = MPI_Wtime();
      rc = call(b, a, &s, in, out, &rep);
      dt = MPI_Wtime() - t0;
      failed |= rc != GZ_OK;
      mx[0] = dt;
      mx[1] = -dt;
      mx[2] = a->direct ? 0.0 : rep.seconds_codec;
      sm = dt;
      MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, b->comm);
      MPI_Allreduce(MPI_IN_PLACE, &sm, 1, MPI_DOUBLE, MPI_SUM, b->comm);
      if (it >= b->warmup) {
        times[nt] = mx[0];
        tmin[nt] = -mx[1];
        tavg[nt] = sm / b->size;
        tcodec[nt] = mx[2];
        nt++;
      }
      if (rc != GZ_OK) {
        if (b->rank == 0)
          fprintf(stderr, "gzbench coll: %s %s %zu: %s\n", coll_names[b->coll], a->name,
                  bytes, gz_strerror(rc));
        break;
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, b->comm);
    if (failed) {
      status = 1;
      continue;
    }
    /* errors of the last call against the exact reference */
    sums[3] = 0; /* squared error */
    for (size_t i = 0; i < s.out_n; i++) {
      double e = fabs(get(b, out, i) - ref[i]);
      double allow = (a->direct                       ? mpi_slop[i]
                      : b->cfg.eb_mode == GZ_EB_PWREL ? b->cfg.error_bound * fabs(ref[i])
                                                      : rep.result_bound) +
                     slop[i];
      if (!(e <= allow))
        row.wrong++;
      if (e > row.max_err || isnan(e))
        row.max_err = e;
      sums[3] += e * e;
    }
    MPI_Allreduce(MPI_IN_PLACE, &row.max_err, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    MPI_Allreduce(MPI_IN_PLACE, &row.wrong, 1, MPI_LONG, MPI_SUM, b->comm);
    MPI_Allreduce(MPI_IN_PLACE, &nout, 1, MPI_LONG, MPI_SUM, b->comm);
    sums[0] = a->direct ? 1.0 : (double)rep.bytes_raw;
    sums[1] = a->direct ? 1.0 : (double)rep.bytes_sent;
    sums[2] = 0;
    MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, b->comm);
    row.ratio = sums[1] > 0 ? sums[0] / sums[1] : 1.0;
    row.psnr = sums[3] > 0 && nout > 0 && range > 0
                   ? 20 * log10(range) - 10 * log10(sums[3] / (double)nout)
                   : HUGE_VAL;
    row.t_max = gz_bench_median(times, nt);
    row.t_min = gz_bench_median(tmin, nt);
    row.t_avg = gz_bench_median(tavg, nt);
    row.codec = gz_bench_median(tcodec, nt);
    row.ran = a->direct ? "mpi" : rep.algo;
    for (int q = 0; q < 4; q++)
      row.prof[q] = a->direct ? -1 : prof[q];
    print_row(b, bytes, &s, a->name, &row);
    status |= row.wrong > 0;
  }
done:
  free(in);
  free(out);
  free(ref);
  free(slop);
  free(mpi_slop);
  free(times);
  return status;
}

/* ---- options ------------------------------------------------------------- */

int gz_bench_parse_bytes(const char *s, double *bytes) {
  char *end;
  double v = strtod(s, &end);
  if (end == s)
    return -1;
  if (*end == 'K' || *end == 'k')
    v *= 1024, end++;
  else if (*end == 'M' || *end == 'm')
    v *= 1048576, end++;
  else if (*end == 'G' || *end == 'g')
    v *= 1073741824.0, end++;
  if (*end == 'i' && (end[1] == 'B' || end[1] == 'b'))
    end++;
  if (*end == 'B' || *end == 'b')
    end++;
  if (*end || !(v >= 1) || v > 1e15)
    return -1;
  *bytes = v;
  return 0;
}

/* mpi (the MPI library, called directly), gz-mpi (libgzcoll's mpi path),
 * auto, or one of the collective's algorithms by libgzcoll's name. */
static int add_algo(bench_t *b, const char *name) {
  algo_entry_t *a;
  const char *names[MAX_ALGOS], *algo = NULL;
  size_t n = 0;
  int direct = !strcmp(name, "mpi");
  if (b->nalgos >= MAX_ALGOS)
    return 0;
  if (!strcmp(name, "gz-mpi") || direct)
    algo = "mpi";
  else if (!strcasecmp(name, "auto"))
    algo = "auto";
  else if (gz_algorithms(coll_names[b->coll], names, MAX_ALGOS, &n) == GZ_OK)
    for (size_t i = 0; i < n && !algo; i++)
      if (!strcasecmp(name, names[i]))
        algo = names[i];
  if (!algo)
    return 0;
  a = &b->algos[b->nalgos++];
  memset(a, 0, sizeof *a);
  snprintf(a->name, sizeof a->name, "%s", name);
  a->direct = direct;
  snprintf(a->algo, sizeof a->algo, "%s", algo);
  return 1;
}

/* 0 (and the offending name in name_out) when a name is unknown. */
static int parse_algos(bench_t *b, const char *list, char *name_out, size_t out_size) {
  char name[32];
  if (!strcmp(list, "all")) { /* the MPI library, then libgzcoll's compressed ones */
    const char *names[MAX_ALGOS];
    size_t n = 0;
    add_algo(b, "mpi");
    if (gz_algorithms(coll_names[b->coll], names, MAX_ALGOS, &n) == GZ_OK)
      for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], "mpi"))
          add_algo(b, names[i]);
    return add_algo(b, "auto");
  }
  while (*list) {
    const char *comma = strchr(list, ',');
    size_t len = comma ? (size_t)(comma - list) : strlen(list);
    snprintf(name_out, out_size, "%.*s", (int)len, list);
    if (len == 0 || len >= sizeof name)
      return 0;
    memcpy(name, list, len);
    name[len] = '\0';
    if (!add_algo(b, name))
      return 0;
    list += comma ? len + 1 : len;
  }
  return b->nalgos > 0;
}

static void usage(void *table[]) {
  printf("Usage: mpirun -np P gzbench coll [options]\n\n"
         "Compressed collectives of libgzcoll versus the MPI library's own collective,\n"
         "over message sizes min-bytes, 2 min-bytes, ..., max-bytes. Time = median over\n"
         "--iters calls (after --warmup) of the slowest rank (min/avg over ranks too);\n"
         "errors against the exact result in double computed with MPI in the same run.\n"
         "GB = 1e9 B; algbw/busbw in GB/s as nccl-tests.\n\nOptions:\n");
  arg_print_glossary(stdout, table, "  %-26s %s\n");
  printf(
      "\nAlgorithms: mpi (MPI directly: the baseline), gz-mpi (libgzcoll's MPI path),\n"
      "auto (cost model), and libgzcoll's compressed ones by name:\n");
  for (size_t c = 0; c < sizeof coll_names / sizeof coll_names[0]; c++) {
    const char *names[MAX_ALGOS];
    size_t n = 0;
    printf("  %-15s", coll_names[c]);
    if (gz_algorithms(coll_names[c], names, MAX_ALGOS, &n) == GZ_OK)
      for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], "mpi"))
          printf(" %s", names[i]);
    printf("\n");
  }
  printf(
      "all = mpi, the collective's compressed algorithms and auto.\n\n"
      "Examples:\n"
      "  mpirun -np 4 gzbench coll --coll allreduce --max-bytes 16M\n"
      "  mpirun -np 8 gzbench coll --coll bcast --algos mpi,binomial -e 1e-3 --type f64\n"
      "  mpirun -np 4 gzbench coll --data ../shared/data/seismic_soda_lakes/"
      "soda_lakes_24x96x2048_f32le.raw --csv out.csv\n");
}

int gz_bench_coll(int argc, char **argv, MPI_Comm comm) {
  struct arg_str *coll =
      arg_str0(NULL, "coll", "NAME",
               "allreduce|reduce_scatter|allgather|bcast|scatter|alltoall "
               "(allreduce)");
  struct arg_str *algos =
      arg_str0(NULL, "algos", "LIST", "all, or e.g. mpi,redoub,ring (all)");
  struct arg_str *minb = arg_str0(NULL, "min-bytes", "N", "smallest size, K/M/G ok (1K)");
  struct arg_str *maxb = arg_str0(NULL, "max-bytes", "N", "largest size (16M)");
  struct arg_str *type = arg_str0(NULL, "type", "T", "f32|f64 (f32)");
  struct arg_str *op = arg_str0(NULL, "op", "OP", "sum|max|min (sum)");
  struct arg_dbl *e = arg_dbl0("e", "error-bound", "E", "error bound (1e-4)");
  struct arg_lit *rel = arg_lit0(NULL, "rel", "bound relative to the global value range");
  struct arg_lit *pwrel =
      arg_lit0(NULL, "pwrel", "pointwise relative bound (alltoall: values cast)");
  struct arg_lit *per =
      arg_lit0(NULL, "per-message", "bound per quantization (not strict)");
  struct arg_int *iters = arg_int0(NULL, "iters", "N", "timed calls per size (20)");
  struct arg_int *warm = arg_int0(NULL, "warmup", "N", "warm-up calls per size (3)");
  struct arg_str *data = arg_str0(NULL, "data", "SRC", "smooth|noise|FILE.raw (smooth)");
  struct arg_int *root = arg_int0(NULL, "root", "R", "root of bcast and scatter (0)");
  struct arg_dbl *link =
      arg_dbl0(NULL, "link-bps", "B", "link bytes/s for auto's cost model");
  struct arg_lit *expl =
      arg_lit0(NULL, "explain", "print auto's choice and why per size");
  struct arg_file *csv = arg_file0(NULL, "csv", "FILE", "also write the table as CSV");
  struct arg_file *json = arg_file0(NULL, "json", "FILE", "also write it as JSON");
  struct arg_lit *prof =
      arg_lit0(NULL, "profile", "time each codec phase once per size (see top of file)");
  struct arg_lit *help = arg_lit0("h", "help", "this help");
  struct arg_end *end = arg_end(10);
  void *table[] = {coll, algos, minb, maxb, type, op,  e,    rel,  pwrel, per, iters,
                   warm, data,  root, link, expl, csv, json, prof, help,  end};
  int nerr = arg_parse(argc, argv, table), status = 0;
  const char *bad = NULL; /* what is wrong with the options, naming the option */
  double v;
  char bad_algo[96];
  bench_t b;
  gz_result_t rc = GZ_OK;

  memset(&b, 0, sizeof b);
  b.comm = comm;
  MPI_Comm_rank(comm, &b.rank);
  MPI_Comm_size(comm, &b.size);
  b.cfg = (gz_config_t)GZ_CONFIG_INIT;
  b.coll = C_ALLREDUCE;
  if (coll->count) {
    bad = "--coll: not one of allreduce, reduce_scatter, allgather, bcast, scatter, "
          "alltoall";
    for (int c = 0; c <= C_ALLTOALL; c++)
      if (!strcmp(coll->sval[0], coll_names[c])) {
        b.coll = (coll_t)c;
        bad = NULL;
      }
  }
  b.dtype = type->count && !strcmp(type->sval[0], "f64") ? GZ_FLOAT64 : GZ_FLOAT32;
  if (type->count && strcmp(type->sval[0], "f64") && strcmp(type->sval[0], "f32"))
    bad = "--type: f32 or f64";
  b.esz = gz_dtype_size(b.dtype);
  b.op = GZ_OP_SUM;
  if (op->count) {
    b.op = !strcmp(op->sval[0], "max")   ? GZ_OP_MAX
           : !strcmp(op->sval[0], "min") ? GZ_OP_MIN
                                         : GZ_OP_SUM;
    if (strcmp(op->sval[0], "sum") && strcmp(op->sval[0], "max") &&
        strcmp(op->sval[0], "min"))
      bad = "--op: sum, max or min";
  }
  b.cfg.error_bound = e->count ? e->dval[0] : 1e-4;
  b.cfg.eb_mode = rel->count ? GZ_EB_REL : pwrel->count ? GZ_EB_PWREL : GZ_EB_ABS;
  if (rel->count && pwrel->count)
    bad = "--rel and --pwrel: one bound mode";
  b.cfg.bound_policy = per->count ? GZ_BOUND_PER_MESSAGE : GZ_BOUND_STRICT;
  b.cfg.link_bytes_per_s = link->count ? link->dval[0] : 0.0;
  b.min_bytes = 1024;
  b.max_bytes = 16u << 20;
  if (minb->count && gz_bench_parse_bytes(minb->sval[0], &v) != 0)
    bad = "--min-bytes: not a size (4096, 64k, 16M)";
  else if (minb->count)
    b.min_bytes = (size_t)v;
  if (maxb->count && gz_bench_parse_bytes(maxb->sval[0], &v) != 0)
    bad = "--max-bytes: not a size (4096, 64k, 16M)";
  else if (maxb->count)
    b.max_bytes = (size_t)v;
  b.iters = iters->count ? iters->ival[0] : 20;
  b.warmup = warm->count ? warm->ival[0] : 3;
  b.root = root->count ? root->ival[0] : 0;
  b.explain = expl->count > 0;
  b.profile = prof->count > 0;
  if (b.iters < 1 || b.iters > 100000)
    bad = "--iters: 1 to 100000";
  if (b.warmup < 0)
    bad = "--warmup: must be >= 0";
  if (b.root < 0 || b.root >= b.size)
    bad = "--root: not a rank of this run";
  if (b.min_bytes > b.max_bytes)
    bad = "--min-bytes is larger than --max-bytes";
  if (!(b.cfg.error_bound > 0))
    bad = "-e: the error bound must be > 0";
  snprintf(b.data_name, sizeof b.data_name, "%s", data->count ? data->sval[0] : "smooth");
  if (!strcmp(b.data_name, "noise"))
    b.data_kind = 1;
  else if (strcmp(b.data_name, "smooth"))
    b.data_kind = 2;
  if (!bad && !parse_algos(&b, algos->count ? algos->sval[0] : "all", bad_algo + 9,
                           sizeof bad_algo - 64)) {
    memcpy(bad_algo, "--algos: ", 9);
    strcat(bad_algo, ": unknown algorithm (see the list below)");
    bad = bad_algo;
  }

  if (help->count || nerr || bad) {
    if (b.rank == 0) {
      if (nerr)
        arg_print_errors(stderr, end, "gzbench coll");
      else if (bad && !help->count)
        fprintf(stderr, "gzbench coll: %s\n", bad);
      usage(table);
    }
    status = help->count && !nerr && !bad ? 0 : 2;
    goto done;
  }
  if (b.data_kind == 2) {
    int ok = load_file(&b, b.data_name);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
      if (b.rank == 0)
        fprintf(stderr, "gzbench coll: cannot read %s\n", b.data_name);
      status = 2;
      goto done;
    }
  }
  for (int k = 0; k < b.nalgos && rc == GZ_OK; k++) {
    gz_config_t cfg = b.cfg;
    if (b.algos[k].direct)
      continue;
    memcpy(cfg.algo, b.algos[k].algo, sizeof cfg.algo);
    rc = gz_ctx_create(comm, &cfg, &b.algos[k].ctx);
  }
  if (rc != GZ_OK) {
    if (b.rank == 0)
      fprintf(stderr, "gzbench coll: gz_ctx_create: %s\n", gz_strerror(rc));
    status = 1;
    goto done;
  }
  if (csv->count) {
    int ok = 1;
    if (b.rank == 0) {
      b.csv = fopen(csv->filename[0], "w");
      ok = b.csv != NULL;
      if (b.csv)
        fprintf(b.csv,
                "coll,ranks,data,type,op,e,eb_mode,policy,size,count,algo,ran,time_us,"
                "min_us,avg_us,max_us,algbw_GBps,busbw_GBps,ratio,max_err,psnr,wrong,"
                "codec_us,q_us,enc_us,dec_us,deq_us\n");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
      if (b.rank == 0)
        fprintf(stderr, "gzbench coll: cannot write %s\n", csv->filename[0]);
      status = 2;
      goto done;
    }
  }
  if (json->count) {
    int ok = 1;
    if (b.rank == 0) {
      b.json_file = fopen(json->filename[0], "w");
      ok = b.json_file != NULL;
      if (b.json_file) {
        gz_json_t *j = &b.json;
        gz_json_begin(j, b.json_file);
        gz_json_string(j, "benchmark", "gzbench coll");
        gz_json_string(j, "version", gz_version());
        gz_json_string(j, "collective", coll_names[b.coll]);
        gz_json_number(j, "ranks", b.size);
        gz_json_string(j, "type", type_name(&b));
        gz_json_string(j, "op", op_name(&b));
        gz_json_number(j, "error_bound", b.cfg.error_bound);
        gz_json_string(j, "eb_mode", gz_eb_mode_name(b.cfg.eb_mode));
        gz_json_string(j, "policy", per->count ? "per-message" : "strict");
        gz_json_number(j, "link_bps", b.cfg.link_bytes_per_s);
        gz_json_number(j, "iters", b.iters);
        gz_json_number(j, "warmup", b.warmup);
        gz_json_string(j, "data", b.data_name);
        gz_json_array(j, "rows");
      }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
      if (b.rank == 0)
        fprintf(stderr, "gzbench coll: cannot write %s\n", json->filename[0]);
      status = 2;
      goto done;
    }
  }
  if (b.rank == 0) {
    printf("# gzbench coll: %s on %d ranks, %s, e = %g (%s, %s), data %s\n",
           coll_names[b.coll], b.size, b.dtype == GZ_FLOAT32 ? "float32" : "float64",
           b.cfg.error_bound, gz_eb_mode_name(b.cfg.eb_mode),
           per->count ? "per-message" : "strict", b.data_name);
    printf("# median over %d calls after %d warm-up, slowest rank per call; GB = 1e9 B; "
           "errors vs MPI in double\n",
           b.iters, b.warmup);
    printf("%11s %10s %4s %4s %9s %9s %11s %11s %11s %8s %8s %7s %9s %6s %6s %10s\n",
           "size", "count", "type", "op", "algo", "ran", "time_us", "min_us", "avg_us",
           "algbw", "busbw", "ratio", "max_err", "psnr", "#wrong", "codec_us");
  }
  for (size_t bytes = b.min_bytes; bytes <= b.max_bytes; bytes *= 2) {
    status |= run_size(&b, bytes);
    if (bytes > SIZE_MAX / 2)
      break;
  }

done:
  for (int k = 0; k < b.nalgos; k++)
    gz_ctx_destroy(b.algos[k].ctx);
  if (b.csv)
    fclose(b.csv);
  if (b.json_file) {
    gz_json_finish(&b.json);
    fclose(b.json_file);
  }
  free(b.file);
  arg_freetable(table, sizeof table / sizeof *table);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, comm);
  return status;
}
