/* nofallocate.c - preloaded (LD_PRELOAD) into test_io_full_nofallocate:
 * fallocate() fails with EOPNOTSUPP, as on the file systems that cannot
 * reserve blocks (some network and FUSE ones), so that the HDF5 writers'
 * path for them (io_hdf5.c, reserve: the holes written with zeros) runs on
 * the test machine's tmpfs and under its file-size limit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

int fallocate(int fd, int mode, off_t offset, off_t len) {
  (void)fd;
  (void)mode;
  (void)offset;
  (void)len;
  errno = EOPNOTSUPP;
  return -1;
}

int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
  return fallocate(fd, mode, (off_t)offset, (off_t)len);
}
