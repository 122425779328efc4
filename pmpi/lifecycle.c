/*
 * lifecycle.c - MPI_Init, MPI_Init_thread and MPI_Finalize hooks.
 *
 * Init reads the environment right away (so a bad GZCOLL_* value is reported
 * at start-up, on rank 0), checks that every rank parsed the same settings
 * (gzp_config_agree: otherwise the library passes everything through, as
 * ranks with different thresholds or lists would split their routing
 * decisions). An application whose MPI is initialized by
 * some other path still works: every entry point reads the environment on
 * first use (without the cross-rank check: the settings must then be the
 * same on every rank, as mpirun passes them).
 *
 * Finalize prints the GZCOLL_VERBOSE report (collective over
 * MPI_COMM_WORLD) and destroys the contexts of MPI_COMM_WORLD and
 * MPI_COMM_SELF while MPI is still fully up, then calls PMPI_Finalize.
 */
#include "gzcoll_pmpi.h"

_Thread_local int gzp_inside;

static void after_init(int provided) {
  if (provided == MPI_THREAD_MULTIPLE)
    gzp_config_disable_p2p(); /* a context serves one call at a time */
  gzp_config_agree();
}

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;
  if (rc == MPI_SUCCESS) {
    PMPI_Query_thread(&provided);
    after_init(provided);
  }
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS)
    after_init(*provided);
  return rc;
}

int MPI_Finalize(void) {
  if (!gzp_inside) {
    gzp_report_finalize();
    gzp_comm_finalize();
  }
  return PMPI_Finalize();
}
