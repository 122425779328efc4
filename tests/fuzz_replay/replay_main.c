/* replay_main.c - libFuzzer's entry point without libFuzzer: runs one fuzz
 * target's LLVMFuzzerTestOneInput on every file of the folders given (the
 * seed corpus and the kept crash inputs of tests/fuzz/regressions/), so the
 * normal (and the ASan+UBSan) test build checks that no input once found
 * crashing crashes again. A target that aborts or trips a sanitizer fails
 * the test; so does a folder list with no input at all. */
#define _POSIX_C_SOURCE 200809L
#include "gz_test.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Defined by targets that need set-up (MPI); weak so the others link. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static long replay_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  long n = 0;
  if (!d)
    return 0; /* a target without kept crashes has no regressions folder */
  while ((e = readdir(d)) != NULL) {
    char path[4096];
    struct stat st;
    size_t size;
    void *data;
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    data = gz_test_read_file(path, &size);
    if (!GZ_CHECK(data != NULL || st.st_size == 0, "cannot read %s", path))
      continue;
    printf("replay %s (%zu bytes)\n", path, data ? size : 0);
    fflush(stdout);
    LLVMFuzzerTestOneInput(data ? data : (const uint8_t *)"", data ? size : 0);
    free(data);
    n++;
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  long total = 0;
  int init = 0, fin = 0;
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++)
    total += replay_dir(argv[i]);
  GZ_CHECK(total > 0, "no input found in the %d folder(s) given", argc - 1);
  printf("%ld inputs replayed without a crash\n", total);
  MPI_Initialized(&init);
  if (init)
    MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Finalize();
  return gz_test_finish();
}
