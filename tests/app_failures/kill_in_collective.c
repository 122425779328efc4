/* kill_in_collective.c - loops a compressed allreduce (ring, forced) on a
 * field large enough that every call is still moving chunks when the last
 * rank sends itself SIGKILL after `iterations` calls. Used by
 * test_failures.sh: the job must end non-zero within a bounded time, not
 * hang in the collective. Prints "killing rank N" first, so the script
 * knows the kill happened inside the loop. */
#define _POSIX_C_SOURCE 200809L
#include "gzcoll.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 5;
  size_t n = (size_t)1 << 22;
  float *x;
  gz_ctx_t ctx;
  gz_config_t cfg = GZ_CONFIG_INIT;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cfg.error_bound = 1e-3;
  snprintf(cfg.algo, sizeof cfg.algo, "ring");
  x = malloc(n * sizeof *x);
  if (!x || gz_ctx_create(MPI_COMM_WORLD, &cfg, &ctx) != GZ_OK) {
    fprintf(stderr, "kill_in_collective: set-up failed\n");
    return 2;
  }
  for (int it = 0;; it++) {
    for (size_t i = 0; i < n; i++)
      x[i] = (float)((i * 7919u + (size_t)rank * 31u + (size_t)it) % 1000) * 0.01f;
    if (rank == size - 1 && it == iterations) {
      printf("killing rank %d in call %d\n", rank, it);
      fflush(stdout);
      raise(SIGKILL);
    }
    if (gz_allreduce(ctx, GZ_IN_PLACE, x, n, GZ_FLOAT32, GZ_OP_SUM, NULL) != GZ_OK)
      break;
  }
  /* not reached while the kill works: report it as a failure */
  fprintf(stderr, "rank %d: the loop ended without the kill\n", rank);
  gz_ctx_destroy(ctx);
  free(x);
  MPI_Finalize();
  return 3;
}
