/* io_commit.c - every output is written under a temporary name beside its
 * final path and renamed into place only when complete, so a failed or
 * interrupted run never leaves a partial file and never replaces an existing
 * file unless the caller allows it (--force). */
#include "gz_io_commit.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Temporary files being written, for gz_io_remove_temps() from a signal
 * handler: a slot's name is complete before its flag is set, and the handler
 * only reads flags and names and calls unlink(). Unlinking a name that was
 * already renamed or removed is harmless, so slots need no exact release;
 * they are reused round-robin. */
enum { GZ_TEMP_SLOTS = 32, GZ_TEMP_NAME_MAX = 4096 };
static char temp_names[GZ_TEMP_SLOTS][GZ_TEMP_NAME_MAX];
static volatile sig_atomic_t temp_used[GZ_TEMP_SLOTS];
static unsigned temp_next;

static void remember_temp(const char *tmp) {
  unsigned k = temp_next++ % GZ_TEMP_SLOTS;
  if (strlen(tmp) >= GZ_TEMP_NAME_MAX)
    return;
  temp_used[k] = 0;
  strcpy(temp_names[k], tmp);
  temp_used[k] = 1;
}

static void forget_temp(const char *tmp) {
  for (unsigned k = 0; k < GZ_TEMP_SLOTS; k++)
    if (temp_used[k] && strcmp(temp_names[k], tmp) == 0)
      temp_used[k] = 0;
}

void gz_io_remove_temps(void) {
  for (unsigned k = 0; k < GZ_TEMP_SLOTS; k++)
    if (temp_used[k])
      unlink(temp_names[k]);
}

/* The folder path is in ("." for a bare name). */
static void parent_dir(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, len, ".");
  else if (slash == path)
    snprintf(dir, len, "/");
  else
    snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int gz_io_check_folder(const char *path, char *err, size_t errlen) {
  char dir[GZ_TEMP_NAME_MAX];
  parent_dir(path, dir, sizeof dir);
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(err, errlen, "%s: cannot write into %s: %s", path, dir, strerror(errno));
    return -1;
  }
  return 0;
}

int gz_io_check_target(const char *path, int force, char *err, size_t errlen) {
  if (!force && access(path, F_OK) == 0) {
    snprintf(err, errlen, "%s exists (use --force to overwrite)", path);
    return -1;
  }
  /* The temporary file goes beside path: say so when its folder is missing
   * or closed, rather than the writer library's message about the temp. */
  return gz_io_check_folder(path, err, errlen);
}

int gz_io_temp_path(const char *path, char *tmp, size_t tmplen) {
  int n = snprintf(tmp, tmplen, "%s.tmp-%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= tmplen)
    return -1;
  remember_temp(tmp);
  return 0;
}

int gz_io_commit(const char *tmp, const char *path, int force, char *err, size_t errlen) {
  forget_temp(tmp);
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

int gz_io_write_bytes(const char *tmp, const char *path, const void *buf, size_t n,
                      char *err, size_t errlen) {
  FILE *f = fopen(tmp, "wb");
  int ok;
  if (!f) {
    snprintf(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    return -1;
  }
  ok = fwrite(buf, 1, n, f) == n && fflush(f) == 0;
  if (!ok)
    snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
  if (fclose(f) != 0 && ok) {
    snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
    ok = 0;
  }
  return ok ? 0 : -1;
}

int gz_io_check_space(const char *path, unsigned long long bytes, char *err,
                      size_t errlen) {
  char dir[GZ_TEMP_NAME_MAX];
  struct rlimit rl;
  struct statvfs vfs;
  if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      bytes > (unsigned long long)rl.rlim_cur) {
    snprintf(err, errlen,
             "%s: needs about %llu bytes, over the file-size limit of %llu bytes "
             "(ulimit -f): %s",
             path, bytes, (unsigned long long)rl.rlim_cur, strerror(EFBIG));
    return -1;
  }
  parent_dir(path, dir, sizeof dir);
  if (statvfs(dir, &vfs) == 0 &&
      bytes > (unsigned long long)vfs.f_bavail * (unsigned long long)vfs.f_frsize) {
    snprintf(err, errlen, "%s: needs about %llu bytes, %llu free in %s: %s", path, bytes,
             (unsigned long long)vfs.f_bavail * (unsigned long long)vfs.f_frsize, dir,
             strerror(ENOSPC));
    return -1;
  }
  return 0;
}
