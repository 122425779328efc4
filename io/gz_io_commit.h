/* gz_io_commit.h - write to a temporary, name it when complete: every output
 * file (io_commit.c). */
#ifndef GZ_IO_COMMIT_H
#define GZ_IO_COMMIT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

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

/* tmp opened for writing (created if missing) without O_TRUNC, emptied by
 * ftruncate only when it is not already empty: on ext4, truncating a file
 * to 0 (O_TRUNC even of an empty file) makes its close() write back every
 * page written since, inside the writing process, before it can exit
 * (auto_da_alloc). A temporary is new and empty. A descriptor, or -1 with
 * errno. */
int gz_io_open_temp(const char *tmp);

/* The same as a stdio stream ("wb" without the truncation), or NULL with
 * errno. */
FILE *gz_io_fopen_temp(const char *tmp);

/* The n bytes at buf written to fd at offset off (pwrite until all are
 * written, EINTR retried). 0, or -1 with errno (EIO for a write of 0). */
int gz_io_pwrite_all(int fd, const void *buf, size_t n, off_t off);

/* A temporary file for writing path, its name in tmp for the writer to open
 * (fopen, open, nc_create, H5Fcreate). Where the file system allows it
 * (O_TMPFILE) the file has no name in the folder: tmp is "/proc/self/fd/N",
 * an open descriptor kept here, and whatever ends the process (SIGKILL
 * too) leaves nothing behind. Otherwise (or with the environment variable
 * GZ_NAMED_TEMPS set, for tests) tmp is "<path>.tmp-<pid>", remembered until
 * gz_io_commit() for gz_io_remove_temps(). Every tmp ends in gz_io_commit()
 * or gz_io_discard(). */
int gz_io_temp_path(const char *path, char *tmp, size_t tmplen);

/* The same, always named "<path>.tmp-<pid>": for writers whose library
 * opens the file by a name it resolves (libhdf5 on disk, under netCDF). */
int gz_io_temp_path_named(const char *path, char *tmp, size_t tmplen);

/* For a library that must create its file by a name (libhdf5, netCDF-4):
 * the name to create in named, tmp itself when tmp is named, else a
 * "<path>.tmp-<pid>" temporary. Once the library has created it,
 * gz_io_temp_adopt() moves it into the unnamed tmp; until then a failed
 * writer drops both (gz_io_discard). 0, or -1 (name too long). */
int gz_io_temp_for_library(const char *tmp, const char *path, char *named,
                           size_t namedlen);

/* The file named (open in this process by exactly one descriptor, the
 * library's) moved into the unnamed temporary tmp: its bytes so far copied
 * there, that descriptor pointed at tmp's file (dup2), named removed. From
 * then on the library writes the unnamed file and nothing is left behind
 * however the process ends. Nothing to do when named is tmp. 0, or -1 with
 * err (named is then left as it was). */
int gz_io_temp_adopt(const char *named, const char *tmp, char *err, size_t errlen);

/* 1 when tmp is an unnamed temporary ("/proc/self/fd/N" from
 * gz_io_temp_path), not yet committed or dropped. */
int gz_io_temp_unnamed(const char *tmp);

/* Drop an unfinished tmp (close the unnamed file, or unlink the named one).
 * A tmp already given to gz_io_commit() is ignored. */
void gz_io_discard(const char *tmp);

/* Unlink every named temporary file still being written. Async-signal-safe:
 * for SIGINT/SIGTERM handlers (app/), so an interrupted run leaves nothing
 * (unnamed temporaries need no handler). */
void gz_io_remove_temps(void);

/* Give a finished tmp the name path (checking the target again; without
 * force an existing path is never replaced, atomically for unnamed
 * temporaries: linkat fails on it); on failure tmp is dropped and err names
 * the cause. */
int gz_io_commit(const char *tmp, const char *path, int force, char *err, size_t errlen);

#endif
