/* io_commit.c - every output is written to a temporary file beside its
 * final path and given that path only when complete, so a failed or
 * interrupted run never leaves a partial file and never replaces an existing
 * file unless the caller allows it (--force).
 *
 * Where the file system allows it (Linux O_TMPFILE: ext4, xfs, btrfs, tmpfs)
 * the temporary has no name at all: it is an open file, reached by the
 * writers through /proc/self/fd/N, that the kernel frees when the process
 * ends however it ends (SIGKILL included), and linkat() names it when it is
 * complete. Elsewhere it is "<path>.tmp-<pid>", renamed into place, and the
 * signal handlers remove it (gz_io_remove_temps). */
#define _GNU_SOURCE /* O_TMPFILE, linkat's AT_SYMLINK_FOLLOW */
#include "gz_io_commit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Named temporary files being written, for gz_io_remove_temps() from a
 * signal handler: a slot's name is complete before its flag is set, and the
 * handler only reads flags and names and calls unlink(). Unlinking a name
 * that was already renamed or removed is harmless, so slots need no exact
 * release; they are reused round-robin. */
enum { GZ_TEMP_SLOTS = 32, GZ_TEMP_NAME_MAX = 4096 };
static char temp_names[GZ_TEMP_SLOTS][GZ_TEMP_NAME_MAX];
static volatile sig_atomic_t temp_used[GZ_TEMP_SLOTS];
static unsigned temp_next;

/* Unnamed temporaries (O_TMPFILE) still open: their descriptors, 0 when
 * free (a temporary is never descriptor 0: standard input stays open). */
static int anon_fd[GZ_TEMP_SLOTS];
#define ANON_PREFIX "/proc/self/fd/"

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

/* The slot of the unnamed temporary tmp ("/proc/self/fd/N" given out by
 * gz_io_temp_path), or -1. */
static int anon_slot(const char *tmp) {
  char *end;
  long fd;
  if (strncmp(tmp, ANON_PREFIX, strlen(ANON_PREFIX)) != 0)
    return -1;
  fd = strtol(tmp + strlen(ANON_PREFIX), &end, 10);
  for (int k = 0; *end == '\0' && fd > 0 && k < GZ_TEMP_SLOTS; k++)
    if (anon_fd[k] == (int)fd)
      return k;
  return -1;
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

/* An unnamed file in path's folder, as "/proc/self/fd/N" in tmp: 0, or -1
 * where O_TMPFILE or /proc is missing (the caller then names the file). */
static int anon_temp(const char *path, char *tmp, size_t tmplen) {
#ifdef O_TMPFILE
  char dir[GZ_TEMP_NAME_MAX];
  int fd, k = 0, n;
  parent_dir(path, dir, sizeof dir);
  while (k < GZ_TEMP_SLOTS && anon_fd[k] > 0)
    k++;
  if (k == GZ_TEMP_SLOTS || (fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666)) < 0)
    return -1;
  n = snprintf(tmp, tmplen, ANON_PREFIX "%d", fd);
  if (fd == 0 || n < 0 || (size_t)n >= tmplen || access(tmp, W_OK) != 0) {
    close(fd);
    return -1;
  }
  anon_fd[k] = fd;
  return 0;
#else
  (void)path;
  (void)tmp;
  (void)tmplen;
  return -1;
#endif
}

int gz_io_temp_path(const char *path, char *tmp, size_t tmplen) {
  if (!getenv("GZ_NAMED_TEMPS") && anon_temp(path, tmp, tmplen) == 0)
    return 0;
  return gz_io_temp_path_named(path, tmp, tmplen);
}

int gz_io_temp_unnamed(const char *tmp) { return anon_slot(tmp) >= 0; }

int gz_io_temp_path_named(const char *path, char *tmp, size_t tmplen) {
  int n = snprintf(tmp, tmplen, "%s.tmp-%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= tmplen)
    return -1;
  remember_temp(tmp);
  return 0;
}

int gz_io_temp_for_library(const char *tmp, const char *path, char *named,
                           size_t namedlen) {
  if (!gz_io_temp_unnamed(tmp)) {
    int n = snprintf(named, namedlen, "%s", tmp);
    return n < 0 || (size_t)n >= namedlen ? -1 : 0;
  }
  return gz_io_temp_path_named(path, named, namedlen);
}

/* The one descriptor of this process open on the file at the absolute path
 * real, or -1 (none, or several). */
static int descriptor_of(const char *real) {
  char link[PATH_MAX + 1], entry[300];
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int found = -1, count = 0;
  if (!d)
    return -1;
  while ((e = readdir(d)) != NULL) {
    ssize_t k;
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == dirfd(d))
      continue;
    snprintf(entry, sizeof entry, ANON_PREFIX "%s", e->d_name);
    k = readlink(entry, link, sizeof link - 1);
    if (k <= 0)
      continue;
    link[k] = '\0';
    if (strcmp(link, real) == 0) {
      found = atoi(e->d_name);
      count++;
    }
  }
  closedir(d);
  return count == 1 ? found : -1;
}

int gz_io_temp_adopt(const char *named, const char *tmp, char *err, size_t errlen) {
  char real[PATH_MAX], buf[65536];
  int k = anon_slot(tmp), fd, cause = 0;
  struct stat a, b;
  off_t off = 0;
  if (strcmp(named, tmp) == 0)
    return 0; /* a named temporary all along */
  if (k < 0 || !realpath(named, real) || (fd = descriptor_of(real)) < 0 ||
      fstat(fd, &a) != 0 || stat(named, &b) != 0 || a.st_ino != b.st_ino ||
      a.st_dev != b.st_dev)
    goto fail;
  errno = 0;
  /* what the library wrote so far (its superblock), then its descriptor
   * pointed at the unnamed file */
  while (off < a.st_size) {
    ssize_t got = pread(fd, buf, sizeof buf, off);
    if (got <= 0 || pwrite(anon_fd[k], buf, (size_t)got, off) != got) {
      cause = errno; /* why the copy failed (a full disk), 0 if unknown */
      goto fail;
    }
    off += got;
  }
  if (dup2(anon_fd[k], fd) < 0)
    goto fail;
  unlink(named);
  forget_temp(named); /* after: a signal in between still removes it */
  return 0;
fail:
  snprintf(err, errlen,
           "%s: cannot move the file being written to an unnamed temporary%s%s", named,
           cause ? ": " : "", cause ? strerror(cause) : "");
  return -1;
}

void gz_io_discard(const char *tmp) {
  int k = anon_slot(tmp);
  if (k >= 0) {
    close(anon_fd[k]);
    anon_fd[k] = 0;
  } else if (strncmp(tmp, ANON_PREFIX, strlen(ANON_PREFIX)) != 0) {
    unlink(tmp);
    forget_temp(tmp);
  }
}

/* Give the unnamed temporary of slot k the name path: linkat() refuses an
 * existing path, so without force nothing is ever replaced; with force the
 * file is linked under "<path>.tmp-<pid>" and renamed over path. */
static int commit_anon(int k, const char *tmp, const char *path, int force, char *err,
                       size_t errlen) {
  char named[GZ_TEMP_NAME_MAX + 32];
  int rc = -1;
  if (gz_io_check_target(path, force, err, errlen) != 0)
    goto done;
  if (!force) {
    if (linkat(AT_FDCWD, tmp, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
      rc = 0;
    else if (errno == EEXIST)
      snprintf(err, errlen, "%s exists (use --force to overwrite)", path);
    else
      snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    goto done;
  }
  snprintf(named, sizeof named, "%s.tmp-%ld", path, (long)getpid());
  remember_temp(named);
  unlink(named);
  if (linkat(AT_FDCWD, tmp, AT_FDCWD, named, AT_SYMLINK_FOLLOW) != 0 ||
      rename(named, path) != 0) {
    snprintf(err, errlen, "cannot move the finished file to %s: %s", path,
             strerror(errno));
    unlink(named);
  } else {
    rc = 0;
  }
  forget_temp(named);
done:
  close(anon_fd[k]);
  anon_fd[k] = 0;
  return rc;
}

int gz_io_commit(const char *tmp, const char *path, int force, char *err, size_t errlen) {
  int k = anon_slot(tmp), rc = -1;
  if (k >= 0)
    return commit_anon(k, tmp, path, force, err, errlen);
  /* the temporary stays known to the signal handlers until it is renamed
   * or removed (removing a name already renamed is harmless) */
  if (gz_io_check_target(path, force, err, errlen) != 0) {
    unlink(tmp);
  } else if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot move %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
  } else {
    rc = 0;
  }
  forget_temp(tmp);
  return rc;
}

int gz_io_open_temp(const char *tmp) {
  struct stat st;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0 && (fstat(fd, &st) != 0 || (st.st_size != 0 && ftruncate(fd, 0) != 0))) {
    int e = errno;
    close(fd);
    errno = e;
    fd = -1;
  }
  return fd;
}

FILE *gz_io_fopen_temp(const char *tmp) {
  int fd = gz_io_open_temp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (!f && fd >= 0) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

int gz_io_pwrite_all(int fd, const void *buf, size_t n, off_t off) {
  const char *p = buf;
  while (n) {
    ssize_t k = pwrite(fd, p, n, off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO;
      return -1;
    }
    p += k;
    n -= (size_t)k;
    off += k;
  }
  return 0;
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
