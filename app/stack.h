/* stack.h - `gzstack stack`: parallel snapshot stacking with the compressed
 * allreduce (app/cmd_stack.c and app/stack_*.c). */
#ifndef GZ_STACK_H
#define GZ_STACK_H

#include <mpi.h>
#include <stdio.h>

/* Run `gzstack stack` (argv[0] is "stack"). Collective over comm; returns
 * the process exit code, the same on every rank: 0 success, 1 a run-time
 * failure (file, read, shape, write, bound violated under --verify), 2 a
 * usage error (bad option or value). */
int gz_cmd_stack(int argc, char **argv, MPI_Comm comm);

/* Grouped options with their defaults, config keys and worked examples. */
void gz_stack_print_help(FILE *out);

#endif
