/* gz_io_commit.h - write-to-temporary-then-rename for every output file. */
#ifndef GZ_IO_COMMIT_H
#define GZ_IO_COMMIT_H

#include <stddef.h>

/* 0 if path may be written: it does not exist (or force is set) and its
 * folder exists and is writable. Otherwise
 * -1 with a message naming the file in err. */
int gz_io_check_target(const char *path, int force, char *err, size_t errlen);

/* 0 if the folder path goes into exists and is writable; otherwise -1 with
 * "PATH: cannot write into DIR: reason" in err. */
int gz_io_check_folder(const char *path, char *err, size_t errlen);

/* 0 if a file of about bytes fits beside path: under the file-size limit
 * (ulimit -f) and the free space of its folder's file system. Otherwise -1
 * with the cause in err ("File too large", "No space left on device"). A
 * check before writing, so a full disk is reported before any byte is
 * written; writes are still checked. */
int gz_io_check_space(const char *path, unsigned long long bytes, char *err,
                      size_t errlen);

/* Write the n bytes at buf to tmp (created or truncated). The HDF5 writer
 * builds its file in memory and writes it with this, so a disk that fills
 * up mid-write fails here, cleanly, and never inside libhdf5 (1.10.8
 * crashes at exit after a flush it could not finish; netCDF-4 recovers from
 * the same failure: tests/io/test_io_full.c). -1 with "PATH: write failed:
 * reason" (path names the final file). */
int gz_io_write_bytes(const char *tmp, const char *path, const void *buf, size_t n,
                      char *err, size_t errlen);

/* The temporary name used while writing path ("<path>.tmp-<pid>"); the name
 * is remembered until gz_io_commit() for gz_io_remove_temps(). */
int gz_io_temp_path(const char *path, char *tmp, size_t tmplen);

/* Unlink every temporary file still being written. Async-signal-safe: for
 * SIGINT/SIGTERM handlers (app/), so an interrupted run leaves nothing. */
void gz_io_remove_temps(void);

/* Rename a finished tmp to path (checking the target again); on failure tmp
 * is removed and err names the cause. */
int gz_io_commit(const char *tmp, const char *path, int force, char *err, size_t errlen);

#endif
