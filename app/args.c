/* args.c - command-line helpers shared by the gzstack commands. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "app.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double app_start = -1;

double gz_app_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void gz_app_mark_start(void) { app_start = gz_app_clock(); }

double gz_app_start(void) { return app_start < 0 ? gz_app_clock() : app_start; }

/* `-i a b c` -> `-i a -i b -i c`: the tokens after an input that are not
 * options are more inputs (the commands take no positional arguments). Returns a new argv
 * (pointers into the old one) or NULL. */
char **gz_split_inputs(int argc, char **argv, int *out_argc) {
  char **nv = malloc(sizeof(char *) * (size_t)(2 * argc + 1));
  int n = 0, in_inputs = 0;
  static char dash_i[] = "-i";
  if (!nv)
    return NULL;
  for (int k = 0; k < argc; k++) {
    const char *a = argv[k];
    if (k > 0 && in_inputs && a[0] != '-') {
      nv[n++] = dash_i;
      nv[n++] = argv[k];
      continue;
    }
    in_inputs = 0;
    nv[n++] = argv[k];
    if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
      if (k + 1 < argc)
        nv[n++] = argv[++k];
      in_inputs = 1;
    } else if (!strncmp(a, "--input=", 8) || (!strncmp(a, "-i", 2) && a[2])) {
      in_inputs = 1;
    }
  }
  nv[n] = NULL;
  *out_argc = n;
  return nv;
}
