/* io_commit.c - every output is written under a temporary name beside its
 * final path and renamed into place only when complete, so a failed or
 * interrupted run never leaves a partial file and never replaces an existing
 * file unless the caller allows it (--force). */
#include "gz_io_commit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int gz_io_check_target(const char *path, int force, char *err, size_t errlen) {
  if (!force && access(path, F_OK) == 0) {
    snprintf(err, errlen, "%s exists (use --force to overwrite)", path);
    return -1;
  }
  return 0;
}

int gz_io_temp_path(const char *path, char *tmp, size_t tmplen) {
  int n = snprintf(tmp, tmplen, "%s.tmp-%ld", path, (long)getpid());
  return (n < 0 || (size_t)n >= tmplen) ? -1 : 0;
}

int gz_io_commit(const char *tmp, const char *path, int force, char *err, size_t errlen) {
  if (gz_io_check_target(path, force, err, errlen) != 0) {
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot move %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}
