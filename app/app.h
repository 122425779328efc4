/* app.h - declarations shared by the gzstack and gzbench programs. Only code
 * under app/ may decide to stop the job; every command returns its exit
 * code, the same on every rank. */
#ifndef GZ_APP_H
#define GZ_APP_H

#include <mpi.h>
#include <stdio.h>

#include "gz_io.h"

/* `-i a b c` -> `-i a -i b -i c`, so argtable2 sees one value per -i.
 * Returns a malloc'ed argv (pointers into argv, NULL-terminated) or NULL. */
char **gz_split_inputs(int argc, char **argv, int *out_argc);

/* Seconds on a monotonic clock; gz_app_mark_start() at the top of main (before
 * MPI_Init), so gz_app_start() is when the program started (the run's time
 * accounting begins there; before the mark, now). */
double gz_app_clock(void);
void gz_app_mark_start(void);
double gz_app_start(void);

/* `--version` text. */
void gz_app_print_version(FILE *out, const char *program);

/* `gzstack compress` / `gzstack decompress` (argv[0] names which). */
int gz_cmd_compress(int argc, char **argv, MPI_Comm comm);
void gz_compress_print_help(FILE *out);

/* "96x2048" -> raw->ndims and raw->dims; 0 or -1. */
int gz_parse_dims(const char *text, gz_raw_opts_t *raw);

/* `gzbench codec` (app/bench_codec.c); returns the exit code. */
int gz_bench_codec(int argc, char **argv);

#endif
