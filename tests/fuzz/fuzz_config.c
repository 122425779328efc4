/* fuzz_config.c - libFuzzer target for the INI reader of `gzstack stack
 * --config` (app/stack_options.c): any text must give options or a message
 * naming the cause, never a memory error or a leak. */
#include "stack_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gzs_opts_t o;
  char err[GZS_ERRLEN];
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  err[0] = '\0';
  if (gzs_options_from_config_text(text, "fuzz.ini", &o, err, sizeof err) == 0) {
    if (o.npatterns < 1 || !o.output || !(o.e >= 0.0))
      abort(); /* accepted without an input, an output or a valid bound */
    gzs_opts_free(&o);
  } else if (!err[0]) {
    abort(); /* refused without saying why */
  }
  free(text);
  return 0;
}
