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

/* The same with a chosen instruction set (values.c): every set writes the
 * same bytes and decodes to the same values; AUTO is the best the CPU has,
 * an unavailable set falls back to PORTABLE. */
enum { GZ_ISA_AUTO = 0, GZ_ISA_PORTABLE = 1, GZ_ISA_AVX2 = 2 };
/* Whether a set runs here (cpu.c; for every vector loop of the codec). */
int gz_isa_available(int isa);
size_t gz_encode_values_isa(int isa, gz_dtype_t dtype, const void *in, size_t n,
                            const gz_quant_t *qp, uint8_t *out);
gz_result_t gz_decode_values_isa(int isa, gz_dtype_t dtype, const uint8_t *in,
                                 size_t size, size_t n, const gz_quant_t *qp, void *out);
/* gz_crc32 with a chosen set (crc32.c): AUTO folds 256 bits a step with
 * VPCLMULQDQ when the CPU has it, else as AVX2: 128 bits with PCLMULQDQ when
 * the CPU has it; every set gives zlib's value. */
uint32_t gz_crc32_isa(int isa, const void *data, size_t size);

/* The casting codec (cast.c): data movement under a pointwise relative
 * bound, values sent in a narrower floating-point format. */
typedef enum { GZ_CAST_NONE = 0, GZ_CAST_F32, GZ_CAST_F16, GZ_CAST_BF16 } gz_cast_t;

/* The narrowest format whose rounding keeps |x' - x| <= rel |x| for dtype's
 * values (NONE: none is narrower and close enough). */
gz_cast_t gz_cast_pick(gz_dtype_t dtype, double rel);
/* 2^-p, the format's relative bound (p significant bits); 0 for NONE. */
double gz_cast_unit(gz_cast_t cast);
const char *gz_cast_name(gz_cast_t cast); /* "bfloat16", ... */
/* Largest encoding of n values of dtype. */
size_t gz_cast_bound(gz_dtype_t dtype, size_t n);
gz_result_t gz_cast_encode(gz_dtype_t dtype, gz_cast_t cast, const void *in, size_t n,
                           uint8_t *out, size_t cap, size_t *size);
/* Decode exactly n values from exactly size bytes (GZ_ERR_CORRUPT else). */
gz_result_t gz_cast_decode(gz_dtype_t dtype, gz_cast_t cast, const uint8_t *in,
                           size_t size, void *out, size_t n);
/* The same with a chosen instruction set (GZ_ISA_*): AVX2 writes the
 * portable path's bytes and decodes to its values. */
gz_result_t gz_cast_encode_isa(int isa, gz_dtype_t dtype, gz_cast_t cast, const void *in,
                               size_t n, uint8_t *out, size_t cap, size_t *size);
gz_result_t gz_cast_decode_isa(int isa, gz_dtype_t dtype, gz_cast_t cast,
                               const uint8_t *in, size_t size, void *out, size_t n);

/* The PACKED payload (kernels/gz_block.h) of a full block: the first zigzag
 * code u0 in w0 <= 32 bits, then the zigzag deltas u[1..32) in w <= 32 bits
 * (values.c's per-width packers), at out in whole 64-bit words: up to 7
 * bytes past the payload are written, 8 * 17 bytes at most. */
void gz_put_payload32(uint32_t u0, const uint32_t *u, int w, int w0, uint8_t *out);

/* Whether this CPU runs AVX2 (asked once): the one run-time test behind
 * the codec's vector loops. */
int gz_cpu_avx2(void);
/* Whether it runs AVX-512 (F, VL, DQ, BW) and BMI2 (asked once): the
 * codec's eight-lane loops, gz_chunk2_simd level 2. */
int gz_cpu_avx512(void);

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
/* The minimum and maximum of x[0..n) but NaN (an infinity is a bound; *lo >
 * *hi when there is none), over 16 lanes (element i in lane i mod 16, the
 * tail from lane 0, the lanes folded in order: the sign of a zero bound is
 * this order's). */
void gz_codes_range(gz_dtype_t dtype, const void *x, size_t n, double *lo, double *hi);
/* gz_quantize32's codes and, in the same pass, the range of the values
 * but NaN (the collectives' lanes; an infinity is a bound; *lo > *hi when
 * every value is NaN). GZ_ERR_RANGE only when a value is NaN or the largest
 * |x| gives a code beyond code_limit (the codes are then not to be used);
 * no bound check (the collectives accept ties, coll_common.c). */
gz_result_t gz_quantize32_range(gz_dtype_t dtype, const void *in, size_t n, double eb,
                                int64_t code_limit, int32_t *codes, double *lo,
                                double *hi);
gz_result_t gz_dequantize32_absmax(gz_dtype_t dtype, const int32_t *codes, size_t n,
                                   double eb, void *out, int64_t *amax);
/* gz_codes_encode / gz_codes_decode (reduce 0) / gz_codes_decode_reduce
 * (reduce 1, op) for int64 codes, or int32 with narrow. */
gz_result_t gz_codes_encode_w(const void *codes, int narrow, size_t n, void *out,
                              size_t cap, size_t *out_size);
gz_result_t gz_codes_decode_w(int reduce, gz_op_t op, const void *in, size_t size,
                              void *codes, int narrow, size_t n);
/* gz_codes_decode then gz_dequantize_absmax in one pass (the last decode
 * of a collective): n values of dtype in out, the same values, no codes
 * written; *amax: their largest |code|. */
gz_result_t gz_codes_decode_values(const void *in, size_t size, gz_dtype_t dtype,
                                   size_t n, double eb, void *out, int64_t *amax);
/* gz_codes_decode_w(1, op, ...) into a copy of acc (int32 with narrow) then
 * gz_dequantize*_absmax of it, in one pass: the same values, *amax and
 * result (GZ_ERR_OVERFLOW, GZ_ERR_CORRUPT); acc is not written. */
gz_result_t gz_codes_decode_reduce_values(gz_op_t op, const void *in, size_t size,
                                          const void *acc, int narrow, gz_dtype_t dtype,
                                          size_t n, double eb, void *out, int64_t *amax);

#endif
