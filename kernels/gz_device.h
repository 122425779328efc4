/* gz_device.h - run-time view of the GPU backend (internal to gzstack).
 * Built from the CUDA sources in kernels/ when CUDA was compiled in, from
 * device_none.c otherwise (every call then answers GZ_DEV_UNSUPPORTED or 0);
 * both answer without needing a driver.
 *
 * Conventions
 *  - "d_" pointers are device pointers; "stream" is a cudaStream_t passed as
 *    void * (NULL = the legacy default stream).
 *  - Every launcher only enqueues work on the caller's stream: no
 *    allocation, no host synchronisation, no blocking copy. Results that the
 *    host needs (sizes, flags, ranges) are written to device memory; the
 *    caller copies them (gz_dev_memcpy_async into pinned memory) and
 *    synchronises when it needs them.
 *  - Data-dependent failures (corrupt input, a value that cannot be
 *    quantized, an overflow) are OR-ed into a device int of GZ_DEV_FLAG_*
 *    bits that the caller zeroes first.
 *  - Launchers return GZ_DEV_OK or a GZ_DEV_ERR_* code for what can be
 *    checked on the host (arguments, scratch too small, launch failure).
 */
#ifndef GZ_DEVICE_H
#define GZ_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  GZ_DEV_OK = 0,
  GZ_DEV_ERR_UNSUPPORTED = 1, /* not built with CUDA, or no device */
  GZ_DEV_ERR_ARG = 2,
  GZ_DEV_ERR_CAPACITY = 3, /* scratch or output too small */
  GZ_DEV_ERR_CUDA = 4      /* a CUDA call failed (gz_dev_last_error) */
};

/* Bits of the device flag word. */
#define GZ_DEV_FLAG_ESCAPE 1u   /* a value cannot be quantized (escape path) */
#define GZ_DEV_FLAG_CORRUPT 2u  /* malformed or truncated input */
#define GZ_DEV_FLAG_OVERFLOW 4u /* SUM of codes left int64 */
#define GZ_DEV_FLAG_ARG 8u      /* stream header disagrees with the caller */

/* Ops of gz_dev_codes_decode_reduce. */
#define GZ_DEV_OP_SUM 0
#define GZ_DEV_OP_MAX 1
#define GZ_DEV_OP_MIN 2
#define GZ_DEV_OP_REPLACE 3

/* dtype codes: those of gz_dtype_t (1 = float32, 2 = float64). */

/* 1 when the CUDA kernels were compiled into this binary (an emulation
 * build: when GZ_DEVICE_EMULATE shows the emulated device). */
int gz_device_built(void);

/* 1 when the kernels were built for the CPU emulation (kernels/emu/). */
int gz_device_emulated(void);

/* Tests: the after-th kernel launch from now fails as a real launch failure
 * would (GZ_DEV_ERR_CUDA from its launcher). Emulation only; elsewhere
 * GZ_DEV_ERR_UNSUPPORTED. */
int gz_dev_inject_launch_failure(int after);

/* Number of usable CUDA devices; 0 when none, when no driver is installed,
 * or when CUDA was not built. why (may be NULL) receives a short reason. */
int gz_device_count(char *why, unsigned long whylen);

/* Text of the last CUDA error seen by a gz_dev_* call on this thread. */
const char *gz_dev_last_error(void);

/* Device properties: name (may be NULL), bytes of global memory. */
int gz_dev_info(int device, char *name, size_t namelen, size_t *global_bytes);
int gz_dev_set(int device);
int gz_dev_get(int *device);

/* 1 when p is device (or managed) memory; 0 for host memory, NULL, or when
 * no device is present. Never fails. */
int gz_dev_is_device_ptr(const void *p);

/* Allocation: only at context creation / destruction (or in tools). */
int gz_dev_malloc(void **p, size_t bytes);
void gz_dev_free(void *p);
int gz_dev_host_alloc(void **p, size_t bytes); /* pinned host memory */
void gz_dev_host_free(void *p);
int gz_dev_stream_create(void **stream);
void gz_dev_stream_destroy(void *stream);
int gz_dev_stream_sync(void *stream);
int gz_dev_device_sync(void);
/* Copies in any direction (cudaMemcpyDefault), ordered on stream. */
int gz_dev_memcpy_async(void *dst, const void *src, size_t bytes, void *stream);
int gz_dev_memset_async(void *dst, int value, size_t bytes, void *stream);

/* Events for timing (bench, tests). */
int gz_dev_event_create(void **ev);
void gz_dev_event_destroy(void *ev);
int gz_dev_event_record(void *ev, void *stream);
int gz_dev_event_elapsed_ms(void *start, void *stop, float *ms); /* syncs stop */

/* ---- the stream codec (format of libgzcoll/src/codec/stream.c) ---------- */

/* Scratch needed by gz_dev_compress for n values. 0 on overflow. */
size_t gz_dev_compress_tmp_bytes(int dtype, size_t n, uint32_t chunk_len);

/* Compress n values at d_in into d_out (cap >= gz_compress_bound), the same
 * bytes as gz_compress() with the same parameters (eb_mode 0 ABS, 1 REL).
 * *d_size (device) receives the stream size. No host synchronisation. */
int gz_dev_compress(int dtype, int eb_mode, double error_bound, uint32_t chunk_len,
                    const void *d_in, size_t n, void *d_out, size_t cap, void *d_tmp,
                    size_t tmp_bytes, uint64_t *d_size, void *stream);

/* Scratch needed by gz_dev_decompress for n values. */
size_t gz_dev_decompress_tmp_bytes(size_t n);

/* Decompress a stream of size bytes at d_in holding exactly n values of
 * dtype into d_out. Every checksum is verified on the device; a problem
 * sets GZ_DEV_FLAG_CORRUPT (or _ARG for a dtype/count mismatch) in *d_flags
 * and d_out is then undefined. No host synchronisation. */
int gz_dev_decompress(int dtype, const void *d_in, size_t size, void *d_out, size_t n,
                      void *d_tmp, size_t tmp_bytes, unsigned *d_flags, void *stream);

/* ---- integer domain (collectives) -------------------------------------- */

/* codes[i] = rint(x / 2eb) as gz_quantize + the collectives' requantize do;
 * GZ_DEV_FLAG_ESCAPE when some |code| > code_limit or x is not finite. */
int gz_dev_quantize(int dtype, const void *d_in, size_t n, double eb, double code_limit,
                    int64_t *d_codes, unsigned *d_flags, void *stream);

/* out[i] = (T)(2eb * codes[i]), as gz_dequantize. */
int gz_dev_dequantize(int dtype, const int64_t *d_codes, size_t n, double eb, void *d_out,
                      void *stream);

/* Scratch of the reductions below and of the code encoder / decoder. */
size_t gz_dev_codes_tmp_bytes(size_t n);

/* d_out3[0..2] = finite min, finite max, max |finite| (as gz_local_range:
 * +inf, -inf, 0 when none is finite). */
int gz_dev_range(int dtype, const void *d_in, size_t n, double *d_out3, void *d_tmp,
                 size_t tmp_bytes, void *stream);

/* *d_out = max |codes[i]| (saturated at INT64_MAX). */
int gz_dev_codes_absmax(const int64_t *d_codes, size_t n, int64_t *d_out, void *d_tmp,
                        size_t tmp_bytes, void *stream);

/* Largest indexed encoding of n codes (gz_block_walk.h). */
size_t gz_dev_codes_indexed_bound(size_t n);

/* Indexed encoding of n codes into d_out (cap bytes); *d_size (device)
 * receives its size. Byte-identical to the CPU's gz_codes_encode_indexed. */
int gz_dev_codes_encode(const int64_t *d_codes, size_t n, void *d_out, size_t cap,
                        void *d_tmp, size_t tmp_bytes, uint64_t *d_size, void *stream);

/* Quantize fused with encode: codes[i] as gz_dev_quantize (escapes flagged in
 * *d_flags) and, in the same pass, their indexed encoding as
 * gz_dev_codes_encode (scratch gz_dev_codes_tmp_bytes(n)). The codes are
 * not read back for the encoding. */
int gz_dev_quantize_encode(int dtype, const void *d_in, size_t n, double eb,
                           double code_limit, int64_t *d_codes, unsigned *d_flags,
                           void *d_out, size_t cap, void *d_tmp, size_t tmp_bytes,
                           uint64_t *d_size, void *stream);

/* Decode an indexed message of size bytes (n codes) and combine into acc
 * (op GZ_DEV_OP_*; REPLACE overwrites). _CORRUPT / _OVERFLOW in *d_flags. */
int gz_dev_codes_decode_reduce(int op, const void *d_in, size_t size, int64_t *d_acc,
                               size_t n, void *d_tmp, size_t tmp_bytes, unsigned *d_flags,
                               void *stream);

/* acc[i] = op(acc[i], in[i]) (SUM overflow -> GZ_DEV_FLAG_OVERFLOW). */
int gz_dev_codes_reduce(int op, int64_t *d_acc, const int64_t *d_in, size_t n,
                        unsigned *d_flags, void *stream);

#ifdef __cplusplus
}
#endif
#endif
