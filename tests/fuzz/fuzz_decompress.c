/* fuzz_decompress.c - libFuzzer target: any byte string given to the stream
 * parser and decoder (format versions 1, 2 and 3; the HDF5 filter plugin's
 * decode is this same call) must give GZ_OK or an error, never a memory
 * error. Checksums stop most mutations at the stream level, so the input is
 * also handed straight to the format-2 chunk decoder (predictors, residual
 * codings, zstd sections, escapes): its first 4 bytes pick the dtype, the
 * bound and a box of at most 4096 values. */
#include "codec/chunk2.h"
#include "gzcoll.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_chunk(const uint8_t *data, size_t size) {
  gz_chunk2_work_t w = GZ_CHUNK2_WORK_INIT;
  gz_dtype_t dtype = data[0] & 1 ? GZ_FLOAT64 : GZ_FLOAT32;
  gz_quant_t qp = gz_codec_quant(data[0] & 2 ? 0.0 : 1e-3);
  size_t d[3] = {1 + (data[1] & 15), 1 + (data[2] & 15), 1 + (data[3] & 15)};
  void *out = malloc(d[0] * d[1] * d[2] * 8);
  if (out)
    (void)gz_chunk2_decode(dtype, data + 4, size - 4, d, &qp, out, &w);
  gz_chunk2_work_free(&w);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gz_stream_info_t info;
  void *out;
  if (size > 4)
    fuzz_chunk(data, size);
  if (gz_stream_info(data, size, &info) != GZ_OK || info.count > (1u << 22))
    return 0;
  out = malloc(info.count * gz_dtype_size(info.dtype) + 1);
  if (out)
    (void)gz_decompress(data, size, out, info.count);
  free(out);
  return 0;
}
