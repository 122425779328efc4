/* fuzz_blocks.c - libFuzzer target for the block decoders behind the
 * checksums (which would stop most mutations before they reach them): the
 * first bytes choose the type, the bound and the value count. */
#include "codec/codec.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static double out[4096];
  static int64_t codes[4096];
  gz_quant_t qp;
  size_t n;
  if (size < 3)
    return 0;
  n = ((size_t)data[1] << 8 | data[2]) % 4096;
  qp = gz_codec_quant(data[0] & 1 ? 1e-3 : 0.0);
  switch (data[0] >> 1 & 3) {
  case 0:
    (void)gz_decode_values(GZ_FLOAT32, data + 3, size - 3, n, &qp, out);
    break;
  case 1:
    (void)gz_decode_values(GZ_FLOAT64, data + 3, size - 3, n, &qp, out);
    break;
  case 2:
    (void)gz_codes_decode(data + 3, size - 3, codes, n);
    break;
  default:
    memset(codes, 0, sizeof codes);
    (void)gz_codes_decode_reduce(GZ_OP_SUM, data + 3, size - 3, codes, n);
    break;
  }
  return 0;
}
