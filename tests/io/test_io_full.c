/* test_io_full.c - the disk fills up while an output is being written.
 * gz_io_write() refuses an output that will not fit before writing; this
 * test drives the writers themselves past that check, under a file-size
 * limit (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG the way it
 * fails with ENOSPC on a full disk), at sizes from well below to just above
 * the limit, so that the write fails in the data, in the metadata and at
 * the final flush. Each write must either succeed with a file that reads
 * back whole, or fail with a message naming the file and the cause; and
 * MPI_Finalize (which shuts HDF5 down) must return afterwards: libhdf5
 * 1.10.8 crashed there once a flush had failed. */
#define _POSIX_C_SOURCE 200809L
#include "io_test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define LIMIT (256 * 1024) /* bytes any file may have */

/* Read path back and compare it with the n float32 values written. */
static int reads_back(const char *path, const float *data, size_t n) {
  gz_reader_t *r = NULL;
  char err[1024];
  float *back = malloc(n * sizeof *back);
  int same = 0;
  if (back && gz_reader_open(path, NULL, NULL, MPI_COMM_SELF, &r, err, sizeof err) == 0 &&
      gz_reader_records(r) * gz_reader_record_size(r) == n &&
      gz_reader_read(r, 0, gz_reader_records(r), GZ_FLOAT32, back, err, sizeof err) == 0)
    same = memcmp(back, data, n * sizeof *back) == 0;
  if (r)
    gz_reader_close(r);
  free(back);
  return same;
}

int main(int argc, char **argv) {
  static const gz_format_t formats[2] = {GZ_FMT_HDF5, GZ_FMT_NETCDF};
  static const char *ext[2] = {"h5", "nc"};
  const char *dir;
  struct rlimit rl;
  size_t most = LIMIT / sizeof(float) + 1024;
  float *data;
  int written[2] = {0, 0}, refused[2] = {0, 0};
  MPI_Init(&argc, &argv);
  dir = iot_scratch_dir(MPI_COMM_SELF);
  data = malloc(most * sizeof *data);
  for (size_t i = 0; i < most; i++)
    data[i] = (float)i * 0.25f;
  signal(SIGXFSZ, SIG_IGN);
  getrlimit(RLIMIT_FSIZE, &rl);
  rlim_t soft = rl.rlim_cur;
  rl.rlim_cur = LIMIT; /* the soft limit only: it can be raised again */
  GZ_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
  for (int f = 0; f < 2; f++) {
    for (size_t bytes = LIMIT - 16 * 1024; bytes <= LIMIT + 4096; bytes += 64) {
      gz_meta_t m;
      char path[512], err[1024] = "";
      gz_io_source_t src = {data, NULL, NULL};
      int rc;
      memset(&m, 0, sizeof m);
      m.dtype = GZ_FLOAT32;
      m.ndims = 1;
      m.dims[0] = bytes / sizeof(float);
      snprintf(m.var, sizeof m.var, "data");
      snprintf(path, sizeof path, "%s/out_%zu.%s", dir, bytes, ext[f]);
      rc = formats[f] == GZ_FMT_HDF5
               ? gz_io_write_hdf5(path, path, &m, &src, err, sizeof err)
               : gz_io_write_netcdf(path, path, &m, &src, err, sizeof err);
      if (rc == 0) {
        written[f]++;
        GZ_CHECK(reads_back(path, data, m.dims[0]), "%s: written but does not read back",
                 path);
      } else {
        refused[f]++;
        GZ_CHECK(iot_contains(err, path) && iot_contains(err, strerror(EFBIG)),
                 "%s: the message must name the file and '%s': '%s'", path,
                 strerror(EFBIG), err);
      }
      unlink(path);
    }
    /* the sweep must have crossed the limit: some sizes fit, some do not */
    GZ_CHECK(written[f] > 0 && refused[f] > 0, "%s: %d written, %d refused", ext[f],
             written[f], refused[f]);
    printf("%s: %d sizes written, %d refused at the limit\n", ext[f], written[f],
           refused[f]);
  }
  rl.rlim_cur = soft;
  setrlimit(RLIMIT_FSIZE, &rl);
  free(data);
  iot_scratch_remove(dir, MPI_COMM_SELF);
  {
    int rc = gz_test_finish();
    MPI_Finalize(); /* a crash here fails the test too */
    return rc;
  }
}
