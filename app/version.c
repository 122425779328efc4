/* version.c - what `gzstack --version` prints: version, git revision and the
 * backends compiled into this binary. */
#include "app.h"

#include "build_info.h"
#include "gzcoll.h"

#include <stdio.h>

void gz_app_print_version(FILE *out, const char *program) {
  char why[128] = "";
  int devices = gz_device_available(why, sizeof why); /* -1: no CUDA in this build */
  fprintf(out, "%s %s (git %s, %s build)\n", program, GZ_VERSION, GZ_GIT_REVISION,
          GZ_BUILD_TYPE);
  fprintf(out, "  libgzcoll %s, backends: CPU%s\n", gz_version(),
          devices >= 0 ? ", CUDA" : "");
  if (devices >= 0)
    fprintf(out, "  CUDA devices at run time: %d%s%s\n", devices, devices ? "" : " - ",
            devices ? "" : why);
  fprintf(out, "  HDF5 %s (parallel: %s), netCDF %s\n", GZ_BUILD_HDF5_VERSION,
          GZ_BUILD_HDF5_PARALLEL, GZ_BUILD_NETCDF_VERSION);
}
