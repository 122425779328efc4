/*
 * backend.h - compute backends behind one table of operations, so the
 * collectives written against it (allreduce_recursive_doubling.c,
 * scatter_binomial.c: their host and device rows run the same code) are
 * written once and run on either:
 *   gz_backend_cpu   the existing C code (always built);
 *   gz_backend_cuda  the CUDA kernels of kernels/ through gz_device.h;
 *                    without CUDA or without a device every operation
 *                    returns GZ_ERR_UNSUPPORTED (never silently nothing).
 * Each rank picks its backend from where its buffers live (device pointers
 * are detected at run time); the wire format is the same for both and for
 * every compressed collective (codes in the indexed encoding of
 * kernels/gz_block_walk.h, codes_indexed.c), so ranks with host and device
 * buffers can meet in one call.
 *
 * Execution: an operation runs on the exec's stream. Operations marked
 * "async" may return before the work is done (device); data-dependent
 * failures (a value that cannot be quantized, corrupt input, overflow) are
 * deferred into the exec's flags and returned by sync(). Operations marked
 * "sync" wait and return everything (they produce a value the host needs).
 * The CPU backend runs everything at once and defers only the flags.
 */
#ifndef GZ_DEVICE_BACKEND_H
#define GZ_DEVICE_BACKEND_H

#include "gzcoll.h"

#include <stddef.h>
#include <stdint.h>

/* Concurrent streams of a context (scatter encodes that many blocks at once). */
#define GZ_DEV_STREAMS 4
/* Bytes per stream of small results the host reads back (flags, sizes). */
#define GZ_DEV_SMALL 64

struct gz_backend;

typedef struct gz_exec {
  const struct gz_backend *be;
  void *stream;           /* cudaStream_t of the device backend; NULL on the CPU */
  unsigned *d_flags;      /* device flag word (GZ_DEV_FLAG_*), device backend */
  unsigned char *d_small; /* GZ_DEV_SMALL device bytes (d_flags at offset 0) */
  unsigned char *h_small; /* their pinned host mirror */
  unsigned flags;         /* CPU backend: deferred GZ_DEV_FLAG_* bits */
  gz_result_t err;        /* first launch failure (device), returned by sync */
  void *tmp;              /* scratch of tmp_bytes (device or host memory) */
  size_t tmp_bytes;
  uint64_t *size_out; /* where encode_async leaves the size (host readable
                         after sync) */
  int narrow;         /* encode_async / decode_reduce read and write int32
                         codes (the host allreduce whose agreed range fits,
                         gz_codes_fit32); the CPU backend only */
} gz_exec_t;

typedef struct gz_backend {
  const char *name;
  int on_device;
  /* scratch an exec needs for messages of n values */
  size_t (*tmp_bytes)(size_t n);
  /* largest indexed encoding of n codes */
  size_t (*encode_bound)(size_t n);
  /* async; a value not quantizable -> GZ_ERR_RANGE at sync */
  gz_result_t (*quantize)(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                          double eb, int64_t code_limit, int64_t *codes);
  /* async */
  gz_result_t (*dequantize)(gz_exec_t *ex, gz_dtype_t dtype, const int64_t *codes,
                            size_t n, double eb, void *out);
  /* sync: finite min, max, max |x| (gz_local_range) */
  gz_result_t (*range)(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t n,
                       double *lo, double *hi, double *absmax);
  /* sync: max |code| */
  gz_result_t (*absmax)(gz_exec_t *ex, const int64_t *codes, size_t n, int64_t *out);
  /* async: indexed encoding of int64 codes (int32 with ex->narrow);
   * *ex->size_out holds the size after sync */
  gz_result_t (*encode_async)(gz_exec_t *ex, const void *codes, size_t n, void *out,
                              size_t cap);
  /* async: decode an indexed message and combine (GZ_DEV_OP_*) into acc
   * (int64 codes; int32 with ex->narrow) */
  gz_result_t (*decode_reduce)(gz_exec_t *ex, int op, const void *in, size_t size,
                               void *acc, size_t n);
  /* async: acc = op(acc, in) */
  gz_result_t (*reduce)(gz_exec_t *ex, int op, int64_t *acc, const int64_t *in, size_t n);
  /* sync: stream codec, same bytes on every backend */
  gz_result_t (*compress)(gz_exec_t *ex, const gz_codec_params_t *params, const void *in,
                          size_t n, void *out, size_t cap, size_t *out_size);
  gz_result_t (*decompress)(gz_exec_t *ex, gz_dtype_t dtype, const void *in, size_t size,
                            void *out, size_t n);
  /* async: any direction between host and this backend's memory */
  gz_result_t (*memcpy)(gz_exec_t *ex, void *dst, const void *src, size_t bytes);
  /* wait for the exec's work; returns the first launch error or the
   * deferred flags as a result, and clears them */
  gz_result_t (*sync)(gz_exec_t *ex);
  /* async: quantize fused with encode_async (the first message of a
   * collective): codes as quantize writes them (an escape -> GZ_ERR_RANGE at
   * sync) and, in the same pass, their indexed encoding in out;
   * *ex->size_out holds its size after sync. The device does not read the
   * codes back for the encoding. */
  gz_result_t (*quantize_encode_async)(gz_exec_t *ex, gz_dtype_t dtype, const void *in,
                                       size_t n, double eb, int64_t code_limit,
                                       int64_t *codes, void *out, size_t cap);
} gz_backend_t;

extern const gz_backend_t gz_backend_cpu;
extern const gz_backend_t gz_backend_cuda;

/* Deferred flags as a result: CORRUPT, then OVERFLOW, ARG, ESCAPE (RANGE). */
gz_result_t gz_exec_flags_result(unsigned flags);

/* encode_async + sync; *size receives the size. */
gz_result_t gz_exec_encode(gz_exec_t *ex, const void *codes, size_t n, void *out,
                           size_t cap, size_t *size);

/* ---- the collectives' wire encoding of codes on the CPU (codes_indexed.c) */

size_t gz_codes_indexed_bound(size_t n);
/* int64 codes, or int32 with narrow (the same bytes). */
gz_result_t gz_codes_encode_indexed(const void *codes, int narrow, size_t n, void *out,
                                    size_t cap, size_t *out_size);
/* The same encoding written in pieces (quantized and encoded tile by tile,
 * coll_common.c): begin for n codes at out (gz_codes_indexed_bound(n)
 * bytes), put the codes in order (every piece but the last a multiple of
 * GZ_BLOCK codes), then the size. The bytes are gz_codes_encode_indexed's. */
typedef struct gz_indexed_put {
  uint8_t *out;
  size_t n, S, done, pos;
} gz_indexed_put_t;
void gz_codes_indexed_begin(gz_indexed_put_t *w, void *out, size_t n);
gz_result_t gz_codes_indexed_put(gz_indexed_put_t *w, const void *codes, int narrow,
                                 size_t len);
size_t gz_codes_indexed_size(const gz_indexed_put_t *w);
/* op: GZ_DEV_OP_SUM/MAX/MIN combine, GZ_DEV_OP_REPLACE overwrite. */
gz_result_t gz_codes_decode_indexed(int op, const void *in, size_t size, void *acc,
                                    int narrow, size_t n);
/* Decode fused with dequantization (gz_codes_decode_values per segment): n
 * values of dtype in out, *amax their largest |code|. */
gz_result_t gz_codes_decode_indexed_values(const void *in, size_t size, gz_dtype_t dtype,
                                           size_t n, double eb, void *out, int64_t *amax);
/* gz_codes_decode_indexed(op: SUM, MAX or MIN) into a copy of acc, then
 * its values (gz_codes_decode_reduce_values per segment); acc unchanged. */
gz_result_t gz_codes_decode_indexed_reduce_values(int op, const void *in, size_t size,
                                                  const void *acc, int narrow,
                                                  gz_dtype_t dtype, size_t n, double eb,
                                                  void *out, int64_t *amax);

#endif
