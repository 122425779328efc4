/* test_io_full.c - the disk fills up while an output is being written.
 * gz_io_write() refuses an output that will not fit before writing; this
 * test drives the writers themselves past that check, under a file-size
 * limit (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG the way it
 * fails with ENOSPC on a full disk), at sizes from well below to just above
 * the limit, so that the write fails in the data, in the metadata and at
 * the final flush; the same for the HDF5 file whose dataset goes through
 * the gzstack filter (gz_io_write_hdf5_gz, `gzstack compress -o X.h5`), on
 * noise kept lossless so that its size crosses the limit too. Each write must either
 * succeed with a file that reads back whole, or fail with a message naming the file and
 * the cause; and MPI_Finalize (which shuts HDF5 down) must return afterwards: libhdf5
 * 1.10.8 crashed there once a flush had failed.
 *
 * Then a disk that is really full (ENOSPC; a 1 MiB tmpfs, where this process
 * may mount one, else skipped): a filler file leaves 0 to 64 KiB free and
 * gz_io_write_hdf5 writes a field that does not fit, into a named and into
 * an unnamed temporary. Here even the HDF5 metadata flush has no room: the
 * writer must fail with the cause and the file, leave nothing beside the
 * filler, and still let libhdf5 close the file (io_hdf5.c: divert). The
 * same writers, plain and filtered, with free space around their file's
 * size: the data may fit where the metadata that libhdf5 writes at the
 * close does not (it must never see that write fail: reserve).
 *
 * With GZ_TEST_NO_FALLOCATE set (test_io_full_nofallocate: nofallocate.c
 * preloaded), fallocate fails with EOPNOTSUPP, checked first: all of the
 * above on the writers' path for file systems that cannot reserve. */
#define _GNU_SOURCE /* fallocate */
#include "gz_io_commit.h"
#include "io_test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIMIT (256 * 1024) /* bytes any file may have */

/* Read path back and compare it with the n float32 values written. */
static int reads_back(const char *path, const float *data, size_t n) {
  /* the filtered file's reader registers the filter itself */
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

/* Files in dir besides "." and "..". */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int k = 0;
  while (d && (e = readdir(d)) != NULL)
    k += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d)
    closedir(d);
  return k;
}

/* Fill the file system of dir but for about free_bytes: dir/filler grown
 * until the disk is full, then shortened. 0, or -1. */
static int fill_disk(const char *dir, size_t free_bytes) {
  static char zeros[65536];
  char path[600];
  off_t size = 0;
  ssize_t got;
  int fd;
  snprintf(path, sizeof path, "%s/filler", dir);
  if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) < 0)
    return -1;
  while ((got = pwrite(fd, zeros, sizeof zeros, size)) > 0)
    size += got;
  got = size > (off_t)free_bytes && ftruncate(fd, size - (off_t)free_bytes) == 0 ? 0 : -1;
  close(fd);
  return (int)got;
}

/* Write n values of x to path (tmp: a named or an unnamed temporary) as a
 * plain HDF5 file, or (filtered) through the gzstack filter, lossless. */
static int write_h5(const char *path, int unnamed, int filtered, const float *x, size_t n,
                    char *err, size_t errlen) {
  gz_io_bound_t lossless = {0.0, "abs", 0.0};
  gz_io_source_t src = {x, NULL, NULL};
  gz_meta_t m;
  char tmp[700];
  int rc;
  memset(&m, 0, sizeof m);
  m.dtype = GZ_FLOAT32;
  m.ndims = 1;
  m.dims[0] = n;
  snprintf(m.var, sizeof m.var, "data");
  rc = unnamed ? gz_io_temp_path(path, tmp, sizeof tmp)
               : gz_io_temp_path_named(path, tmp, sizeof tmp);
  if (rc != 0)
    return gz_io_errorf(err, errlen, "%s: no temporary", path), -1;
  rc = filtered ? gz_io_write_hdf5_gz(tmp, path, &m, &src, &lossless, err, errlen)
                : gz_io_write_hdf5(tmp, path, &m, &src, err, errlen);
  if (rc == 0)
    rc = gz_io_commit(tmp, path, 0, err, errlen);
  else
    gz_io_discard(tmp);
  return rc;
}

/* The HDF5 writers on a full tmpfs mounted in scratch (see the top): with 0
 * to 64 KiB free, a file that does not fit is refused; with free space
 * around the file's own size (found by writing it first), where the data
 * may fit and the metadata written at the close not, the file is written
 * whole or refused. */
static void full_tmpfs(const char *scratch, const float *data, const float *noise,
                       size_t n) {
  char dir[512];
  int written = 0, refused = 0;
  snprintf(dir, sizeof dir, "%s/full", scratch);
  mkdir(dir, 0700);
  if (mount("gzfull", dir, "tmpfs", 0, "size=1m") != 0) {
    printf("note: cannot mount a tmpfs (%s): the full-disk part is skipped\n",
           strerror(errno));
    rmdir(dir);
    return;
  }
  for (int filtered = 0; filtered < 2; filtered++) {
    const float *x = filtered ? noise : data;
    char path[600], err[1024] = "";
    struct stat st;
    size_t size;
    snprintf(path, sizeof path, "%s/size.h5", dir);
    GZ_CHECK(write_h5(path, 1, filtered, x, n, err, sizeof err) == 0 &&
                 stat(path, &st) == 0,
             "%s: not written on an empty disk: %s", path, err);
    size = (size_t)st.st_size;
    unlink(path);
    for (size_t k = 0; k < 17 + 9; k++) {
      /* 0-64 KiB free, then the file's size -8 to +24 KiB */
      size_t left = k < 17 ? k * 4096 : size - 8192 + (k - 17) * 4096;
      for (int unnamed = 0; unnamed < 2; unnamed++) {
        int rc;
        snprintf(path, sizeof path, "%s/out_%zu.%s", dir, left,
                 filtered ? "gz.h5" : "h5");
        GZ_CHECK(fill_disk(dir, left) == 0, "%s: cannot fill the disk", path);
        err[0] = '\0';
        rc = write_h5(path, unnamed, filtered, x, n, err, sizeof err);
        if (k < 17)
          GZ_CHECK(rc != 0, "%s: %zu bytes written with %zu bytes free", path, size,
                   left);
        if (rc == 0) {
          written++;
          GZ_CHECK(reads_back(path, x, n), "%s: written but does not read back", path);
          unlink(path);
        } else {
          refused++;
          GZ_CHECK(iot_contains(err, path) && iot_contains(err, strerror(ENOSPC)),
                   "%s: the message must name the file and '%s': '%s'", path,
                   strerror(ENOSPC), err);
        }
        GZ_CHECK(entries(dir) == 1, "%s: %d files left beside the filler", path,
                 entries(dir) - 1);
        snprintf(path, sizeof path, "%s/filler", dir);
        unlink(path);
      }
    }
  }
  GZ_CHECK(written > 0, "the sweeps around the files' sizes wrote none");
  printf("h5, filtered h5 on a full tmpfs: refused with 0-64 KiB free; around their "
         "size %d written whole, %d refused, nothing left\n",
         written, refused);
  umount(dir);
  rmdir(dir);
}

int main(int argc, char **argv) {
  static const gz_format_t formats[3] = {GZ_FMT_HDF5, GZ_FMT_NETCDF, GZ_FMT_HDF5};
  static const char *ext[3] = {"h5", "nc", "gz.h5"};
  const char *dir;
  struct rlimit rl;
  size_t most = 2 * (LIMIT / sizeof(float)) + 1024;
  float *data, *noise;
  uint64_t state = 18;
  int written[3] = {0, 0, 0}, refused[3] = {0, 0, 0};
  MPI_Init(&argc, &argv);
  dir = iot_scratch_dir(MPI_COMM_SELF);
  if (getenv("GZ_TEST_NO_FALLOCATE")) {
    char probe[600];
    int fd, rc;
    snprintf(probe, sizeof probe, "%s/probe", dir);
    fd = open(probe, O_RDWR | O_CREAT, 0600);
    rc = fd >= 0 ? fallocate(fd, 0, 0, 4096) : 0;
    GZ_CHECK(
        fd >= 0 && rc != 0 && errno == EOPNOTSUPP,
        "GZ_TEST_NO_FALLOCATE: fallocate must fail with EOPNOTSUPP (shim preloaded)");
    if (fd >= 0)
      close(fd);
    unlink(probe);
    printf("fallocate fails with EOPNOTSUPP: the no-reservation path\n");
  }
  data = malloc(most * sizeof *data);
  noise = malloc(most * sizeof *noise);
  for (size_t i = 0; i < most; i++) {
    data[i] = (float)i * 0.25f;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    noise[i] = (float)(state >> 40) / 16777216.0f; /* 24 random bits */
  }
  signal(SIGXFSZ, SIG_IGN);
  getrlimit(RLIMIT_FSIZE, &rl);
  rlim_t soft = rl.rlim_cur;
  rl.rlim_cur = LIMIT; /* the soft limit only: it can be raised again */
  GZ_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
  for (int f = 0; f < 3; f++) {
    /* the filtered file is smaller than its data: a wider sweep */
    size_t from = f < 2 ? LIMIT - 16 * 1024 : LIMIT - 32 * 1024;
    size_t to = f < 2 ? LIMIT + 4096 : 2 * LIMIT, step = f < 2 ? 64 : 1024;
    for (size_t bytes = from; bytes <= to; bytes += step) {
      gz_io_bound_t lossless = {0.0, "abs", 0.0};
      const float *x = f < 2 ? data : noise;
      gz_meta_t m;
      char path[512], err[1024] = "";
      gz_io_source_t src = {x, NULL, NULL};
      int rc;
      memset(&m, 0, sizeof m);
      m.dtype = GZ_FLOAT32;
      m.ndims = 1;
      m.dims[0] = bytes / sizeof(float);
      snprintf(m.var, sizeof m.var, "data");
      snprintf(path, sizeof path, "%s/out_%zu.%s", dir, bytes, ext[f]);
      rc = f == 2 ? gz_io_write_hdf5_gz(path, path, &m, &src, &lossless, err, sizeof err)
           : formats[f] == GZ_FMT_HDF5
               ? gz_io_write_hdf5(path, path, &m, &src, err, sizeof err)
               : gz_io_write_netcdf(path, path, &m, &src, err, sizeof err);
      if (rc == 0) {
        written[f]++;
        GZ_CHECK(reads_back(path, x, m.dims[0]), "%s: written but does not read back",
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
  full_tmpfs(dir, data, noise, most);
  free(data);
  free(noise);
  iot_scratch_remove(dir, MPI_COMM_SELF);
  {
    int rc = gz_test_finish();
    MPI_Finalize(); /* a crash here fails the test too */
    return rc;
  }
}
