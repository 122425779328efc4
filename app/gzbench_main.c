/* gzbench_main.c - benchmarks: `gzbench codec` (single-process codec versus
 * ZFP), `gzbench model` (the cost model's predictions at any scale) and
 * `gzbench coll` (compressed collectives versus MPI, under mpirun). */
#include "app.h"
#include "bench.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int rank = 0, code = 0;
  const char *cmd = argc > 1 ? argv[1] : "--help";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!strcmp(cmd, "codec")) {
    if (rank == 0)
      code = gz_bench_codec(argc - 1, argv + 1);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(cmd, "model")) {
    code = gz_bench_model(argc - 1, argv + 1, MPI_COMM_WORLD);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(cmd, "coll")) {
    code = gz_bench_coll(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (!strcmp(cmd, "gpu")) {
    code = gz_bench_gpu(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else {
    if (rank == 0)
      printf("Usage:\n"
             "  gzbench codec [--help]              codec throughput and ratio vs ZFP\n"
             "  [mpirun -np N] gzbench model [--help] the cost model at any scale\n"
             "  mpirun -np N gzbench coll [--help]  collectives vs MPI\n"
             "  [mpirun -np N] gzbench gpu [--help] GPU codec and device ReDoub\n"
             "  gzbench --version\n");
    if (!strcmp(cmd, "--version") && rank == 0)
      gz_app_print_version(stdout, "gzbench");
    code = strcmp(cmd, "--help") && strcmp(cmd, "-h") && strcmp(cmd, "--version") ? 2 : 0;
  }
  MPI_Finalize();
  return code;
}
