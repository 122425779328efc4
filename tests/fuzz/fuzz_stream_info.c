/* fuzz_stream_info.c - libFuzzer target for the stream header and chunk
 * index parser alone (gz_stream_info): any byte string must be accepted or
 * refused, never read out of bounds, and what it accepts must describe a
 * stream that fits in the bytes given, with chunks that cover the count. */
#include "gzcoll.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gz_stream_info_t info;
  uint64_t chunks;
  if (gz_stream_info(data, size, &info) != GZ_OK)
    return 0;
  if (info.stream_size > size || gz_dtype_size(info.dtype) == 0)
    abort(); /* accepted a stream longer than the bytes, or a bad type */
  if (info.chunk_len == 0 || info.chunk_len % GZ_BLOCK != 0)
    abort();
  chunks = info.count / info.chunk_len + (info.count % info.chunk_len != 0);
  if (chunks != info.chunk_count)
    abort(); /* the index does not cover exactly count values */
  if (!(info.abs_bound >= 0.0) || !(info.error_bound >= 0.0))
    abort(); /* NaN or negative bound accepted */
  return 0;
}
