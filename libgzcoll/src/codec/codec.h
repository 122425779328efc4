/* codec.h - internal interface of the codec (src/codec/), used by the
 * collectives. The public part is in gzcoll.h. */
#ifndef GZ_CODEC_H
#define GZ_CODEC_H

#include "gzcoll.h"

#include "gz_block.h"

/* Largest |code| a stream quantizes: the kernels' per-code limit (2^50),
 * which the quantizer applies anyway (gz_quant_make). */
#define GZ_CODE_MAX_STREAM GZ_CODE_LIMIT

uint32_t gz_crc32(const void *data, size_t size);

/* Quantizer for a stream with this absolute bound (0 = lossless). */
gz_quant_t gz_codec_quant(double abs_bound);

/* Blocks of n values into out (room for n * elem + ceil(n / GZ_BLOCK)
 * bytes); returns the bytes written. */
size_t gz_encode_values(gz_dtype_t dtype, const void *in, size_t n, const gz_quant_t *qp,
                        uint8_t *out);
/* Decode exactly n values from exactly size bytes. */
gz_result_t gz_decode_values(gz_dtype_t dtype, const uint8_t *in, size_t size, size_t n,
                             const gz_quant_t *qp, void *out);

/* The integer-code kernels' instruction set: want < 0 asks (choosing the
 * best the CPU has on first use), 0 forces the portable loops, 1 AVX2 when
 * the CPU has it. Returns the level in effect. Both give identical results;
 * the choice is for tests and benchmarks. */
int gz_codes_simd(int want);

/* gz_dequantize that also returns the largest |code| (NULL: not needed) in
 * the same pass. */
gz_result_t gz_dequantize_absmax(gz_dtype_t dtype, const int64_t *codes, size_t n,
                                 double eb, void *out, int64_t *amax);

/* int32 codes, for calls whose agreed range keeps every code and every sum
 * below 2^31 (code_limit <= INT32_MAX): the same quantization, values and
 * encoded bytes as the int64 functions. A decoded value that does not fit is
 * GZ_ERR_CORRUPT, a sum that does not fit GZ_ERR_OVERFLOW. */
gz_result_t gz_quantize32(gz_dtype_t dtype, const void *in, size_t n, double eb,
                          int64_t code_limit, int32_t *codes);
gz_result_t gz_dequantize32_absmax(gz_dtype_t dtype, const int32_t *codes, size_t n,
                                   double eb, void *out, int64_t *amax);
gz_result_t gz_codes32_encode(const int32_t *codes, size_t n, void *out, size_t cap,
                              size_t *out_size);
gz_result_t gz_codes32_decode(const void *in, size_t size, int32_t *codes, size_t n);
gz_result_t gz_codes32_decode_reduce(gz_op_t op, const void *in, size_t size,
                                     int32_t *acc, size_t n);

#endif
