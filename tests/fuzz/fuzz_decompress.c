/* fuzz_decompress.c - libFuzzer target: any byte string given to the stream
 * parser and decoder must give GZ_OK or an error, never a memory error. */
#include "gzcoll.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gz_stream_info_t info;
  void *out;
  if (gz_stream_info(data, size, &info) != GZ_OK || info.count > (1u << 22))
    return 0;
  out = malloc(info.count * gz_dtype_size(info.dtype) + 1);
  if (out)
    (void)gz_decompress(data, size, out, info.count);
  free(out);
  return 0;
}
