/* args.c - command-line helpers shared by the gzstack commands. */
#include "app.h"

#include <stdlib.h>
#include <string.h>

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
