/*
 * gzcoll.h - the only public header of libgzcoll, error-bounded
 * lossy-compression-accelerated MPI collectives and the codec under them.
 *
 * Conventions
 *  - Every call returns a gz_result_t; GZ_OK is 0. The library never exits,
 *    aborts or calls MPI_Abort.
 *  - Pointers are host pointers unless stated otherwise. "caller owns" means
 *    the library neither frees nor keeps the pointer after the call returns.
 *  - Error bounds: for every finite element, |x - x'| <= eb, checked in the
 *    element's own precision. NaN (with payload), +-Inf, -0.0 and denormals
 *    that cannot be quantized within the bound are stored exactly.
 */
#ifndef GZCOLL_H
#define GZCOLL_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GZCOLL_VERSION_MAJOR 0
#define GZCOLL_VERSION_MINOR 1
#define GZCOLL_VERSION_PATCH 0
#define GZCOLL_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------
 * Results: one X-macro list gives both the enum and gz_strerror().
 * ---------------------------------------------------------------------- */
#define GZ_RESULT_LIST(X)                                                      \
  X(GZ_OK, "success")                                                          \
  X(GZ_ERR_ARG, "invalid argument")                                            \
  X(GZ_ERR_NOMEM, "out of memory")                                             \
  X(GZ_ERR_CAPACITY, "output buffer too small")                                \
  X(GZ_ERR_CORRUPT, "corrupted or truncated compressed stream")                \
  X(GZ_ERR_VERSION, "unsupported compressed stream version")                   \
  X(GZ_ERR_RANGE, "value cannot be quantized within the bound")                \
  X(GZ_ERR_OVERFLOW, "integer code overflow")                                  \
  X(GZ_ERR_MPI, "MPI call failed")                                             \
  X(GZ_ERR_REMOTE, "the operation failed on another rank")                     \
  X(GZ_ERR_UNSUPPORTED, "not supported by this build or device")

typedef enum {
#define GZ_RESULT_ENUM_(name, text) name,
  GZ_RESULT_LIST(GZ_RESULT_ENUM_)
#undef GZ_RESULT_ENUM_
      GZ_RESULT_COUNT
} gz_result_t;

/* Static text for a result; never NULL (unknown values give "unknown"). */
const char *gz_strerror(gz_result_t rc);

/* Library version and the backends compiled in ("cpu", "cpu,cuda"). */
const char *gz_version(void);
const char *gz_backends(void);

/* ------------------------------------------------------------------------
 * Types shared by the codec and the collectives.
 * ---------------------------------------------------------------------- */
typedef enum { GZ_FLOAT32 = 1, GZ_FLOAT64 = 2 } gz_dtype_t;

/* ABS: eb is absolute. REL: eb = value * (max - min) over the finite
 * elements (SZ3's REL). An absolute bound of 0 means lossless. */
typedef enum { GZ_EB_ABS = 0, GZ_EB_REL = 1 } gz_eb_mode_t;

typedef enum { GZ_OP_SUM = 0, GZ_OP_MAX = 1, GZ_OP_MIN = 2 } gz_op_t;

size_t gz_dtype_size(gz_dtype_t dtype); /* 4, 8, or 0 if unknown */

/* ------------------------------------------------------------------------
 * Codec: self-describing, checksummed, chunked streams.
 *
 * Quantization q = round(x / 2eb) (round to nearest), reconstruction
 * x' = (T)(2eb * q). Codes are delta-coded within blocks of GZ_BLOCK values
 * and bit-packed at a per-block width; elements that cannot be represented
 * within eb are stored verbatim. Chunks of chunk_len values are independent
 * (compressed and decompressed in parallel, pipelined with communication).
 * The stream layout is documented in libgzcoll/src/codec/stream.c.
 * ---------------------------------------------------------------------- */
#define GZ_BLOCK 32
#define GZ_CHUNK_DEFAULT 65536u

typedef struct gz_codec_params {
  unsigned version;     /* GZ_CODEC_PARAMS_VERSION */
  gz_dtype_t dtype;     /* element type of the input */
  gz_eb_mode_t eb_mode; /* how error_bound is interpreted */
  double error_bound;   /* >= 0; 0 = lossless */
  uint32_t chunk_len;   /* values per chunk, multiple of GZ_BLOCK; 0 = default */
  int threads;          /* OpenMP threads over chunks; 0 = library default */
} gz_codec_params_t;

#define GZ_CODEC_PARAMS_VERSION 1u
#define GZ_CODEC_PARAMS_INIT                                                   \
  { GZ_CODEC_PARAMS_VERSION, GZ_FLOAT32, GZ_EB_ABS, 0.0, 0u, 0 }

/* What a stream's header says about it. */
typedef struct gz_stream_info {
  gz_dtype_t dtype;
  gz_eb_mode_t eb_mode;
  double error_bound; /* the user's bound as given (REL: the ratio) */
  double abs_bound;   /* the absolute bound every element satisfies */
  uint64_t count;     /* number of values */
  uint32_t chunk_len;
  uint32_t chunk_count;
  size_t stream_size; /* total bytes of the stream */
} gz_stream_info_t;

/* Largest stream gz_compress() can produce for n values (incompressible
 * data included). Returns 0 if the size would overflow size_t. */
size_t gz_compress_bound(gz_dtype_t dtype, size_t n, uint32_t chunk_len);

/* Compress n values of params->dtype from in (caller owns) into out
 * (caller owns, cap bytes). *out_size receives the stream size.
 * Allocates nothing. Thread-safe. */
gz_result_t gz_compress(const gz_codec_params_t *params, const void *in,
                        size_t n, void *out, size_t cap, size_t *out_size);

/* Parse and validate the header and chunk index of a stream (size bytes,
 * may be longer than the stream). */
gz_result_t gz_stream_info(const void *stream, size_t size,
                           gz_stream_info_t *info);

/* Decompress a whole stream into out (caller owns, room for out_count values
 * of the stream's dtype; out_count must equal the stream's count). Every
 * checksum is verified before data is trusted; hostile input returns
 * GZ_ERR_CORRUPT and never reads or writes out of bounds. */
gz_result_t gz_decompress(const void *stream, size_t size, void *out,
                          size_t out_count);

/* ------------------------------------------------------------------------
 * Integer-domain API, used by the collectives: quantize once, move and
 * combine integer codes exactly, dequantize once.
 * ---------------------------------------------------------------------- */

/* Quantize n values with step 2*eb (eb > 0) into codes. A value that is not
 * finite, whose |code| would exceed code_limit, or whose reconstruction
 * (T)(2eb*q) misses the bound gives GZ_ERR_RANGE (codes then undefined). */
gz_result_t gz_quantize(gz_dtype_t dtype, const void *in, size_t n, double eb,
                        int64_t code_limit, int64_t *codes);

/* out[i] = (T)(2eb * codes[i]). out may alias nothing else. */
gz_result_t gz_dequantize(gz_dtype_t dtype, const int64_t *codes, size_t n,
                          double eb, void *out);

/* Largest encoding gz_codes_encode() can produce for n codes. */
size_t gz_codes_bound(size_t n);

/* Lossless encoding of n codes (no header: the caller knows n). */
gz_result_t gz_codes_encode(const int64_t *codes, size_t n, void *out,
                            size_t cap, size_t *out_size);

/* Decode exactly n codes from size bytes; GZ_ERR_CORRUPT on bad input. */
gz_result_t gz_codes_decode(const void *in, size_t size, int64_t *codes,
                            size_t n);

/* Decode n codes and combine them into acc: acc[i] = op(acc[i], code[i]).
 * GZ_ERR_OVERFLOW if a SUM leaves int64 (acc is then undefined). */
gz_result_t gz_codes_decode_reduce(gz_op_t op, const void *in, size_t size,
                                   int64_t *acc, size_t n);

/* acc[i] = op(acc[i], in[i]) with overflow detection for SUM. */
gz_result_t gz_codes_reduce(gz_op_t op, int64_t *acc, const int64_t *in,
                            size_t n);

/* ------------------------------------------------------------------------
 * Collectives. A context wraps one communicator (duplicated internally) and
 * a versioned configuration; every rank of the communicator calls each
 * collective with the same count, dtype and op. A failure on any rank is
 * agreed on: every rank returns an error (the failing rank its own cause,
 * the others GZ_ERR_REMOTE), nothing hangs.
 * ---------------------------------------------------------------------- */

/* STRICT: error_bound bounds the error of each element of the final result;
 *   the per-quantization bound is derived from it, the op and the rank count
 *   (SUM: e / P, MAX/MIN and data movement: e).
 * PER_MESSAGE: error_bound applies to each quantization (the published
 *   semantics); the report states the implied final bound (SUM: P e). */
typedef enum { GZ_BOUND_STRICT = 0, GZ_BOUND_PER_MESSAGE = 1 } gz_bound_policy_t;

/* Algorithms. Not every algorithm applies to every collective; forcing one
 * that does not apply returns GZ_ERR_ARG. GZ_ALGO_MPI = the MPI library's
 * own uncompressed collective. */
#define GZ_ALGO_LIST(X)                                                        \
  X(GZ_ALGO_AUTO, "auto")                                                      \
  X(GZ_ALGO_MPI, "mpi")                                                        \
  X(GZ_ALGO_REDOUB, "redoub")                                                  \
  X(GZ_ALGO_RING, "ring")                                                      \
  X(GZ_ALGO_BINOMIAL, "binomial")                                              \
  X(GZ_ALGO_PAIRWISE, "pairwise")

typedef enum {
#define GZ_ALGO_ENUM_(name, text) name,
  GZ_ALGO_LIST(GZ_ALGO_ENUM_)
#undef GZ_ALGO_ENUM_
      GZ_ALGO_COUNT
} gz_algo_t;

const char *gz_algo_name(gz_algo_t algo);             /* "redoub", ... */
gz_result_t gz_algo_parse(const char *name, gz_algo_t *algo);

typedef struct gz_config {
  unsigned version;               /* GZ_CONFIG_VERSION */
  double error_bound;             /* > 0; meaning set by eb_mode and policy */
  gz_eb_mode_t eb_mode;           /* REL: relative to the global value range */
  gz_bound_policy_t bound_policy; /* default STRICT */
  gz_algo_t algo;                 /* AUTO, or forced for every collective;
                                     env GZCOLL_ALGO overrides when set */
  size_t pool_bytes;              /* workspace kept by the context; 0 = grow
                                     on demand and keep */
  double link_bytes_per_s;        /* link bandwidth for the cost model;
                                     0 = default estimate */
} gz_config_t;

#define GZ_CONFIG_VERSION 1u
#define GZ_CONFIG_INIT                                                         \
  { GZ_CONFIG_VERSION, 1e-4, GZ_EB_ABS, GZ_BOUND_STRICT, GZ_ALGO_AUTO, 0, 0.0 }

/* What one collective call did. */
typedef struct gz_report {
  gz_algo_t algo;           /* algorithm that ran */
  int compressed;           /* 0 when the data moved uncompressed */
  double quant_bound;       /* bound of one quantization (0 if none) */
  double result_bound;      /* guaranteed max |error| of every result element
                               versus the exact result in double precision */
  uint64_t bytes_raw;       /* bytes this rank would send uncompressed */
  uint64_t bytes_sent;      /* bytes this rank actually sent */
  double seconds;           /* wall time of the call on this rank */
  double seconds_codec;     /* of which quantize/encode/decode/reduce */
  char reason[96];          /* why this algorithm / why uncompressed */
} gz_report_t;

typedef struct gz_ctx *gz_ctx_t;

/* Collective over comm. cfg may be NULL (GZ_CONFIG_INIT). */
gz_result_t gz_ctx_create(MPI_Comm comm, const gz_config_t *cfg,
                          gz_ctx_t *ctx);
/* Collective; ctx may be NULL. */
void gz_ctx_destroy(gz_ctx_t ctx);

/* Pass as sendbuf for an in-place operation (MPI_IN_PLACE semantics). */
#define GZ_IN_PLACE ((const void *)1)

/* report may be NULL in every call below. */
gz_result_t gz_allreduce(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                         size_t count, gz_dtype_t dtype, gz_op_t op,
                         gz_report_t *report);
/* Every rank receives recvcount reduced elements: block r of the P blocks. */
gz_result_t gz_reduce_scatter_block(gz_ctx_t ctx, const void *sendbuf,
                                    void *recvbuf, size_t recvcount,
                                    gz_dtype_t dtype, gz_op_t op,
                                    gz_report_t *report);
gz_result_t gz_allgather(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                         size_t count, gz_dtype_t dtype, gz_report_t *report);
gz_result_t gz_bcast(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype,
                     int root, gz_report_t *report);
/* sendbuf significant at root only: P blocks of count values. */
gz_result_t gz_scatter(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                       size_t count, gz_dtype_t dtype, int root,
                       gz_report_t *report);
gz_result_t gz_alltoall(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                        size_t count, gz_dtype_t dtype, gz_report_t *report);
/* Point to point: the compressed size travels with the message. The receiver
 * passes the count it expects; a different count gives GZ_ERR_ARG. */
gz_result_t gz_send(gz_ctx_t ctx, const void *buf, size_t count,
                    gz_dtype_t dtype, int dest, int tag, gz_report_t *report);
gz_result_t gz_recv(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype,
                    int source, int tag, gz_report_t *report);

/* Mean helper: allreduce SUM then scale by 1/divisor (divisor > 0). The
 * bound of the mean is the sum's bound / divisor. */
gz_result_t gz_allreduce_mean(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                              size_t count, gz_dtype_t dtype, double divisor,
                              gz_report_t *report);

/* Print which algorithm auto would choose for a collective and why. */
gz_result_t gz_explain(gz_ctx_t ctx, const char *collective, size_t count,
                       gz_dtype_t dtype, char *buf, size_t buflen);

/* ------------------------------------------------------------------------
 * Error-propagation statistics (src/stats/).
 * ---------------------------------------------------------------------- */
/* (declarations added with the statistics module) */
/* --- end of error-propagation statistics --- */

#ifdef __cplusplus
}
#endif
#endif /* GZCOLL_H */
