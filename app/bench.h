/* bench.h - the gzbench benchmarks that run under MPI. */
#ifndef GZ_BENCH_H
#define GZ_BENCH_H

#include <mpi.h>

/* `gzbench coll`: compressed collectives of libgzcoll side by side with the
 * MPI library's own, over a sweep of message sizes (app/bench_coll.c).
 * argv[0] names the subcommand; options follow. Collective over comm:
 * every rank must call it with the same arguments. Returns the process exit
 * code, the same on every rank (0 ok, 1 a failure or an element outside its
 * reported bound, 2 bad usage). */
int gz_bench_coll(int argc, char **argv, MPI_Comm comm);

/* `gzbench model`: the cost model's per-algorithm times for any scale
 * (app/bench_model.c). Collective over comm with --probe (the inputs are
 * measured on comm's ranks); rank 0 reports; its exit code is rank 0's. */
int gz_bench_model(int argc, char **argv, MPI_Comm comm);

/* "4096", "64k", "16M", "64MiB", "1GB" (K/M/G = 1024^1..3) -> *bytes; 0, or
 * -1 for anything else or a size outside [1, 1e15] (app/bench_coll.c). */
int gz_bench_parse_bytes(const char *s, double *bytes);

/* The median of v[0..n) (sorted in place; 0 when n <= 0) (app/bench_coll.c). */
double gz_bench_median(double *v, int n);

/* Element i of rank r's "smooth" benchmark field (two sines, in [-1.5, 1.5];
 * gzbench coll's default data, also the field gzbench model codes). */
double gz_bench_smooth(int rank, size_t i);

/* `gzbench gpu`: GPU codec throughput and ratio, device ReDoub per-step
 * costs (kernels/bench_gpu.c: it drives the kernels directly, so it lives
 * beside them, in the library gz_bench_gpu). Collective over comm; exit code
 * as above (0 with a note when there is no CUDA device). */
int gz_bench_gpu(int argc, char **argv, MPI_Comm comm);

#endif
