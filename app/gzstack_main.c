/* gzstack_main.c - entry point: `gzstack [stack] ...`, `gzstack compress`,
 * `gzstack decompress`, `--help`, `--version`. Every rank returns the same
 * exit code, so mpirun ends cleanly whatever happens. */
#define _POSIX_C_SOURCE 200809L /* sigaction, setenv */

#include "app.h"
#include "gz_io_commit.h"
#include "stack.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIGINT/SIGTERM/SIGHUP (mpirun forwards SIGTERM to every rank when the job
 * is interrupted): remove the temporary files being written, then die of
 * the same signal (SA_RESETHAND restored the default action). */
static void on_fatal_signal(int sig) {
  gz_io_remove_temps();
  raise(sig);
}

static void remove_temps_on_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = (int)SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* A file-size limit (ulimit -f) must fail the write with EFBIG, reported
   * and cleaned up like a full disk, not kill the rank mid-file. */
  sa.sa_handler = SIG_IGN;
  sa.sa_flags = 0;
  sigaction(SIGXFSZ, &sa, NULL);
}

/* A run on one process needs none of Open MPI's network transports, and a
 * singleton (started without mpirun) needs no runtime daemon: probing the
 * transports and starting the daemon took about 0.3 s of a 0.35 s run on a
 * small file (docs/cli.md). So, unless the user set them: a singleton
 * stays isolated, and one process uses the shared-memory and self
 * transports only. Several processes keep Open MPI's own choice; other MPI
 * libraries ignore these variables. */
static void quick_start_for_one_process(void) {
  const char *size = getenv("OMPI_COMM_WORLD_SIZE");
  int singleton = !size && !getenv("PMIX_RANK") && !getenv("PMI_RANK");
  if (singleton)
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  if (singleton || (size && !strcmp(size, "1"))) {
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader", 0);
  }
}

static void print_usage(FILE *out) {
  fprintf(out,
          "gzstack - image stacking and dataset reduction with error-bounded\n"
          "compressed MPI collectives\n"
          "\n"
          "Usage:\n"
          "  mpirun -np N gzstack [stack] -i INPUT... -e E -o OUT [options]\n"
          "  mpirun -np N gzstack compress -i IN... -e E [-o OUT.gzc|DIR] [options]\n"
          "  mpirun -np N gzstack decompress -i IN.gzc... [-o OUT.nc|.h5|.raw|DIR]\n"
          "  gzstack --version\n"
          "  gzstack COMMAND --help\n"
          "\n");
}

int main(int argc, char **argv) {
  int rank = 0, code = 0;
  const char *cmd = argc > 1 ? argv[1] : "--help";

  gz_app_mark_start(); /* the run's time accounting starts here */
  quick_start_for_one_process();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  remove_temps_on_signals();
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
    if (rank == 0)
      gz_app_print_version(stdout, "gzstack");
  } else if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    if (rank == 0) {
      print_usage(stdout);
      gz_stack_print_help(stdout);
      printf("\n");
      gz_compress_print_help(stdout);
    }
  } else if (!strcmp(cmd, "compress") || !strcmp(cmd, "decompress")) {
    code = gz_cmd_compress(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (!strcmp(cmd, "stack")) {
    code = gz_cmd_stack(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (cmd[0] == '-') {
    /* `gzstack -i ...` is `gzstack stack -i ...`: argv[0] stands in for
     * the command name. */
    argv[0] = "stack";
    code = gz_cmd_stack(argc, argv, MPI_COMM_WORLD);
  } else {
    if (rank == 0) {
      fprintf(stderr, "gzstack: unknown command '%s'\n\n", cmd);
      print_usage(stderr);
    }
    code = 2;
  }
  MPI_Finalize();
  return code;
}
