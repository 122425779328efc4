/* device_none.c - the GPU backend when CUDA was not compiled in. */
#include "gz_device.h"

#include <stdio.h>

int gz_device_built(void) { return 0; }

int gz_device_count(char *why, unsigned long whylen) {
  if (why && whylen)
    snprintf(why, whylen, "this gzstack was built without CUDA");
  return 0;
}
