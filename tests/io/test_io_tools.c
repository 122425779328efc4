/* test_io_tools.c - what gz_io_write() makes opens with ncdump and h5dump:
 * netCDF and HDF5 outputs in both dtypes, each dumped in full by both tools
 * (a netCDF-4 file is HDF5; our HDF5 dimension scales read as netCDF
 * dimensions), and the headers name the variable with its dimensions.
 * argv: ncdump h5dump (either may be missing: those checks are skipped). */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usable(const char *exe) { return exe && exe[0] && !strstr(exe, "NOTFOUND"); }

/* Run "exe args path", return its exit status; *out gets the first 64 KiB. */
static int run_tool(const char *exe, const char *args, const char *path, char *out,
                    size_t cap) {
  char cmd[2048];
  FILE *p;
  size_t used = 0, got;
  int status;
  snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>&1", exe, args, path);
  if (!(p = popen(cmd, "r")))
    return -1;
  out[0] = '\0';
  while ((got = fread(out + used, 1, cap - 1 - used, p)) > 0) {
    used += got;
    if (used == cap - 1) { /* keep reading so the tool is not cut off */
      char sink[4096];
      while (fread(sink, 1, sizeof sink, p) > 0) {
      }
      break;
    }
  }
  out[used] = '\0';
  status = pclose(p);
  return status;
}

int main(int argc, char **argv) {
  const char *ncdump = argc > 1 ? argv[1] : "", *h5dump = argc > 2 ? argv[2] : "";
  static char out[65536];
  MPI_Init(&argc, &argv);
  if (!usable(ncdump) && !usable(h5dump)) {
    printf("SKIP: neither ncdump nor h5dump found\n");
    MPI_Finalize();
    return GZ_TEST_SKIP;
  }
  const char *dir = iot_scratch_dir(MPI_COMM_WORLD);
  for (int d = 0; d < 2 && dir[0]; d++) {
    gz_dtype_t dt = d ? GZ_FLOAT64 : GZ_FLOAT32;
    for (int f = 0; f < 2; f++) {
      gz_meta_t m;
      char path[512], err[512];
      void *data;
      iot_make_meta(&m, dt, f ? "/grp/temp" : "temp");
      data = iot_make_data(&m, 11);
      snprintf(path, sizeof path, "%s/tools_%d.%s", dir, d, f ? "h5" : "nc");
      if (GZ_CHECK(gz_io_write(path, GZ_FMT_UNKNOWN, &m, data, 0, err, sizeof err) == 0,
                   "write %s: %s", path, err)) {
        if (usable(ncdump)) {
          GZ_CHECK(run_tool(ncdump, "-h", path, out, sizeof out) == 0 &&
                       iot_contains(out, d ? "double temp(time, lat, lon)"
                                           : "float temp(time, lat, lon)") &&
                       iot_contains(out, ":gzstack_version = 0.1"),
                   "ncdump -h %s:\n%s", path, out);
          GZ_CHECK(run_tool(ncdump, "", path, out, sizeof out) == 0,
                   "ncdump %s:\n%.2000s", path, out);
        }
        if (usable(h5dump)) {
          GZ_CHECK(run_tool(h5dump, "-H", path, out, sizeof out) == 0 &&
                       iot_contains(out, "DATASET \"temp\"") &&
                       iot_contains(out, "DIMENSION_LIST"),
                   "h5dump -H %s:\n%.2000s", path, out);
          GZ_CHECK(run_tool(h5dump, "", path, out, sizeof out) == 0,
                   "h5dump %s:\n%.2000s", path, out);
        }
      }
      free(data);
      gz_meta_free(&m);
    }
  }
  if (dir[0])
    iot_scratch_remove(dir, MPI_COMM_WORLD);
  return gz_test_end_mpi();
}
