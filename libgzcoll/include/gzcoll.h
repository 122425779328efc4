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
#define GZCOLL_VERSION_MINOR 3
#define GZCOLL_VERSION_PATCH 0
#define GZCOLL_VERSION_STRING "0.3.0"

/* ------------------------------------------------------------------------
 * Results: one X-macro list gives both the enum and gz_strerror().
 * ---------------------------------------------------------------------- */
#define GZ_RESULT_LIST(X)                                                                \
  X(GZ_OK, "success")                                                                    \
  X(GZ_ERR_ARG, "invalid argument")                                                      \
  X(GZ_ERR_NOMEM, "out of memory")                                                       \
  X(GZ_ERR_CAPACITY, "output buffer too small")                                          \
  X(GZ_ERR_CORRUPT, "corrupted or truncated compressed stream")                          \
  X(GZ_ERR_VERSION, "unsupported compressed stream version")                             \
  X(GZ_ERR_RANGE, "value cannot be quantized within the bound")                          \
  X(GZ_ERR_OVERFLOW, "integer code overflow")                                            \
  X(GZ_ERR_MPI, "MPI call failed")                                                       \
  X(GZ_ERR_REMOTE, "the operation failed on another rank")                               \
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
 * elements (SZ3's REL). An absolute bound of 0 means lossless.
 * PWREL (collectives only): pointwise relative, |x' - x| <= eb |x| for every
 * element. gz_alltoall then sends the values cast to the narrowest
 * floating-point format that keeps it (bfloat16 for eb >= 2^-8, float16 for
 * eb >= 2^-11, float32 from float64 for eb >= 2^-24), values outside that
 * format's normal range verbatim; the other collectives, and bounds below
 * these, take the MPI library's exact path. */
typedef enum { GZ_EB_ABS = 0, GZ_EB_REL = 1, GZ_EB_PWREL = 2 } gz_eb_mode_t;

typedef enum { GZ_OP_SUM = 0, GZ_OP_MAX = 1, GZ_OP_MIN = 2 } gz_op_t;

size_t gz_dtype_size(gz_dtype_t dtype); /* 4, 8, or 0 if unknown */

/* ------------------------------------------------------------------------
 * Codec: self-describing, checksummed, chunked streams.
 *
 * Quantization q = round(x / 2eb) (round to nearest), reconstruction
 * x' = (T)(2eb * q); elements that cannot be represented within eb are stored
 * verbatim. With a predictor, gz_compress writes format version 2: each chunk
 * is predicted in the data's own dimensions (Lorenzo or multilevel
 * interpolation, on the codes or, lossy, on reconstructed values with the
 * prediction error quantized; chosen per chunk from samples) and the
 * residuals coded by rANS or bit-packed, whichever is smaller. Without one,
 * format version 3: codes delta-coded within blocks of GZ_BLOCK values,
 * bit-packed per block (format 1's blocks, still used by the collectives),
 * each chunk led by a table of its segments' offsets; the GPU codec writes
 * the same bytes. Format 1 streams decode as before. Chunks are
 * independent (compressed and decompressed in parallel). The stream layout
 * is documented in libgzcoll/src/codec/stream.c and docs/codec.md.
 * ---------------------------------------------------------------------- */
#define GZ_BLOCK 32
#define GZ_CHUNK_DEFAULT 65536u

/* Predictor of the codes (format version 2). */
typedef enum {
  GZ_PRED_NONE = 0,    /* format version 3 (format 1 + segment tables) */
  GZ_PRED_LORENZO = 1, /* Lorenzo in the data's 1, 2 or 3 dimensions */
  GZ_PRED_INTERP = 2,  /* multilevel cubic/linear interpolation */
  GZ_PRED_AUTO = 3,    /* per chunk, the best of the four on a sample */
  /* From reconstructed values, prediction errors quantized in bins centred
   * on the prediction (SZ's scheme; archive streams only, lossy bounds
   * only: with eb = 0 they fall back to LORENZO / INTERP) */
  GZ_PRED_QLORENZO = 4,
  GZ_PRED_QINTERP = 5
} gz_predictor_t;

#define GZ_CODEC_MAXDIMS 8

typedef struct gz_codec_params {
  unsigned version;     /* GZ_CODEC_PARAMS_VERSION */
  gz_dtype_t dtype;     /* element type of the input */
  gz_eb_mode_t eb_mode; /* how error_bound is interpreted */
  double error_bound;   /* >= 0; 0 = lossless */
  uint32_t chunk_len;   /* values per chunk, multiple of GZ_BLOCK; 0 = default.
                           With a shape: the target size of a chunk, which
                           holds whole slabs along the slowest dimension */
  int threads;          /* OpenMP threads over chunks; 0 = library default */
  /* version 2 */
  unsigned ndims;                /* 0 = flat (1-D); else dims[0..ndims) */
  size_t dims[GZ_CODEC_MAXDIMS]; /* C order (slowest first), product = n;
                                    dimensions before the last three are
                                    folded into the third from last */
  gz_predictor_t predictor;      /* NONE (format 3, format 1's blocks with
                                    per-chunk segment tables; the default:
                                    the same bytes as the GPU codec); any
                                    other value writes format version 2 */
} gz_codec_params_t;

/* Version 1 callers keep working (and writing format version 3). */
#define GZ_CODEC_PARAMS_VERSION 2u
#define GZ_CODEC_PARAMS_INIT                                                             \
  { GZ_CODEC_PARAMS_VERSION, GZ_FLOAT32, GZ_EB_ABS, 0.0, 0u, 0, 0u, {0}, GZ_PRED_NONE }

/* What a stream's header says about it. */
typedef struct gz_stream_info {
  gz_dtype_t dtype;
  gz_eb_mode_t eb_mode;
  double error_bound; /* the user's bound as given (REL: the ratio) */
  double abs_bound;   /* the absolute bound every element satisfies */
  uint64_t count;     /* number of values */
  uint32_t chunk_len;
  uint32_t chunk_count;
  size_t stream_size;      /* total bytes of the stream */
  unsigned format_version; /* 1, 2 or 3 (docs/codec.md) */
  size_t dims[3];          /* version 2: the data as a 3-D box (C order,
                              leading 1s for 1-D and 2-D data); versions 1
                              and 3: {1, 1, count} */
} gz_stream_info_t;

/* Largest stream gz_compress() can produce for n values (incompressible
 * data included). Returns 0 if the size would overflow size_t. */
size_t gz_compress_bound(gz_dtype_t dtype, size_t n, uint32_t chunk_len);

/* Compress n values of params->dtype from in (caller owns) into out
 * (caller owns, cap bytes). *out_size receives the stream size.
 * Allocates nothing. Thread-safe. */
gz_result_t gz_compress(const gz_codec_params_t *params, const void *in, size_t n,
                        void *out, size_t cap, size_t *out_size);

/* Parse and validate the header and chunk index of a stream (size bytes,
 * may be longer than the stream). */
gz_result_t gz_stream_info(const void *stream, size_t size, gz_stream_info_t *info);

/* Decompress a whole stream into out (caller owns, room for out_count values
 * of the stream's dtype; out_count must equal the stream's count). Every
 * checksum is verified before data is trusted; hostile input returns
 * GZ_ERR_CORRUPT and never reads or writes out of bounds. */
gz_result_t gz_decompress(const void *stream, size_t size, void *out, size_t out_count);

/* Chunk by chunk: the same streams (byte for byte) written and read a few
 * chunks at a time, for inputs too large to hold (`gzstack compress` and
 * `decompress`). A stream is its head (header and chunk index, head_size
 * bytes) followed by its chunks back to back; a writer knows the head only
 * once every chunk is encoded, so a file reserves head_size bytes first and
 * writes the head there at the end. */
typedef struct gz_stream_layout {
  size_t head_size; /* header and chunk index: the bytes before chunk 0 */
  uint32_t chunk_count;
  size_t chunk_values; /* values per chunk (the last one holds the rest) */
  size_t chunk_bound;  /* largest encoded chunk */
} gz_stream_layout_t;

typedef struct gz_stream_writer gz_stream_writer_t;
/* A writer of n values with params as gz_compress() takes them, except that
 * the bound must be GZ_EB_ABS (a REL bound needs the range of the whole
 * input first: compute it and pass the absolute bound). */
gz_result_t gz_stream_writer_open(const gz_codec_params_t *params, size_t n,
                                  gz_stream_writer_t **w, gz_stream_layout_t *layout);
/* Encode chunks [first, first + count): in holds their values back to back,
 * out (cap >= count * chunk_bound) receives their bytes back to back, *size
 * of them; params->threads threads over the chunks. */
gz_result_t gz_stream_writer_encode(gz_stream_writer_t *w, uint32_t first, uint32_t count,
                                    const void *in, void *out, size_t cap, size_t *size);
/* The head (head_size bytes into out) once every chunk was encoded:
 * GZ_ERR_ARG before. */
gz_result_t gz_stream_writer_head(const gz_stream_writer_t *w, void *out, size_t cap);
void gz_stream_writer_close(gz_stream_writer_t *w); /* NULL is accepted */

/* Bytes of the head of the stream whose first size >= 40 bytes are at
 * stream (GZ_ERR_CORRUPT / GZ_ERR_VERSION when they are not a header). */
gz_result_t gz_stream_head_size(const void *stream, size_t size, size_t *head_size);

typedef struct gz_stream_reader gz_stream_reader_t;
/* A reader from a stream's head (head_size bytes, validated as
 * gz_stream_info() validates a stream; info->stream_size is the size the
 * index announces). */
gz_result_t gz_stream_reader_open(const void *head, size_t head_size,
                                  gz_stream_reader_t **r, gz_stream_info_t *info);
size_t gz_stream_reader_chunk_size(const gz_stream_reader_t *r, uint32_t c);
/* Verify and decode chunks [first, first + count), whose bytes are at in
 * back to back (size = the sum of their chunk sizes), into out (their
 * values); OpenMP threads as gz_decompress(). */
gz_result_t gz_stream_reader_decode(gz_stream_reader_t *r, uint32_t first, uint32_t count,
                                    const void *in, size_t size, void *out);
void gz_stream_reader_close(gz_stream_reader_t *r); /* NULL is accepted */

/* ------------------------------------------------------------------------
 * Integer-domain API, used by the collectives: quantize once, move and
 * combine integer codes exactly, dequantize once.
 * ---------------------------------------------------------------------- */

/* Quantize n values with step 2*eb (eb > 0) into codes. A value that is not
 * finite, whose |code| would exceed code_limit, or for which |x - 2eb*q| > eb
 * (in double: codes are combined before any conversion back to the element
 * type) gives GZ_ERR_RANGE (codes then undefined). */
gz_result_t gz_quantize(gz_dtype_t dtype, const void *in, size_t n, double eb,
                        int64_t code_limit, int64_t *codes);

/* out[i] = (T)(2eb * codes[i]). out may alias nothing else. */
gz_result_t gz_dequantize(gz_dtype_t dtype, const int64_t *codes, size_t n, double eb,
                          void *out);

/* Largest encoding gz_codes_encode() can produce for n codes. */
size_t gz_codes_bound(size_t n);

/* Lossless encoding of n codes (no header: the caller knows n). */
gz_result_t gz_codes_encode(const int64_t *codes, size_t n, void *out, size_t cap,
                            size_t *out_size);

/* Decode exactly n codes from size bytes; GZ_ERR_CORRUPT on bad input. */
gz_result_t gz_codes_decode(const void *in, size_t size, int64_t *codes, size_t n);

/* Decode n codes and combine them into acc: acc[i] = op(acc[i], code[i]).
 * GZ_ERR_OVERFLOW if a SUM leaves int64 (acc is then undefined). */
gz_result_t gz_codes_decode_reduce(gz_op_t op, const void *in, size_t size, int64_t *acc,
                                   size_t n);

/* acc[i] = op(acc[i], in[i]) with overflow detection for SUM. */
gz_result_t gz_codes_reduce(gz_op_t op, int64_t *acc, const int64_t *in, size_t n);

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

/* The names of the modes and policies as GZCOLL_EB_MODE / GZCOLL_BOUND, the
 * tools' options and every report spell them: "abs", "rel", "pwrel";
 * "strict", "per-message". NULL for a value that is none of them. */
const char *gz_eb_mode_name(gz_eb_mode_t mode);
const char *gz_bound_name(gz_bound_policy_t policy);

/* Algorithms are selected by name, as GZCOLL_ALGO spells them: "auto"
 * (the cost model chooses), "mpi" (the MPI library's own uncompressed
 * collective), "ring", "redoub" (recursive doubling), "binomial",
 * "pairwise"; gz_explain and docs/library.md list which serves which
 * collective. Names are compared without regard to case; the aliases
 * "recursive_doubling" / "rd", "tree" and "none" name redoub, binomial and
 * mpi. A name no collective knows makes gz_ctx_create fail (GZ_ERR_ARG);
 * forcing an algorithm that does not serve a collective makes that
 * collective's calls fail with GZ_ERR_ARG. */
#define GZ_ALGO_NAME_MAX 32 /* bytes of a name, its NUL included */

/* The names of the algorithms of collective ("allreduce", "bcast", ... as
 * gz_explain spells it): "mpi" first, then the compressed ones. *n receives
 * how many; names (cap of them; may be NULL when cap is 0) the first
 * min(cap, *n), static text. GZ_ERR_ARG for an unknown collective,
 * GZ_ERR_CAPACITY when cap < *n. */
gz_result_t gz_algorithms(const char *collective, const char **names, size_t cap,
                          size_t *n);

typedef struct gz_config {
  unsigned version;               /* GZ_CONFIG_VERSION */
  double error_bound;             /* > 0; meaning set by eb_mode and policy */
  gz_eb_mode_t eb_mode;           /* REL: relative to the global value range */
  gz_bound_policy_t bound_policy; /* default STRICT */
  char algo[GZ_ALGO_NAME_MAX];    /* "" or "auto", or the name of the
                                     algorithm forced for every collective
                                     it serves; env GZCOLL_ALGO overrides */
  size_t pool_bytes;              /* workspace kept by the context; 0 = grow
                                     on demand and keep */
  double link_bytes_per_s;        /* link bandwidth for the cost model;
                                     0 = default estimate */
  /* version 2 */
  size_t device_pool_bytes; /* GPU memory (and as much pinned host staging)
                               allocated once at gz_ctx_create for calls on
                               device buffers; 0 = none (host buffers only).
                               The same on every rank. */
  /* version 3 */
  int mpi_sum_bound; /* 1 (default): a SUM that takes the MPI library's own
                        path reports the bound of MPI's floating-point sum,
                        which costs one more read of the input (its largest
                        |x|); 0: no such read, and result_bound is then
                        HUGE_VAL (no bound claimed). libgzcoll_pmpi sets 0:
                        it reports no bounds. */
} gz_config_t;

/* Version 3: algo became a name (versions 1 and 2 carried an enum and are
 * refused with GZ_ERR_VERSION). */
#define GZ_CONFIG_VERSION 3u
#define GZ_CONFIG_INIT                                                                   \
  { GZ_CONFIG_VERSION, 1e-4, GZ_EB_ABS, GZ_BOUND_STRICT, "auto", 0, 0.0, 0, 1 }

/* What one collective call did. It grows at its end between minor versions:
 * compile against the header of the library you link (docs/library.md,
 * "Versions and compatibility"). */
typedef struct gz_report {
  const char *algo;     /* name of the algorithm that ran (static text;
                           "mpi" for the uncompressed path) */
  int compressed;       /* 0 when the data moved uncompressed */
  double quant_bound;   /* bound of one quantization (0 if none) */
  double result_bound;  /* guaranteed max |error| of every result element
                           versus the exact result in double precision */
  uint64_t bytes_raw;   /* bytes this rank would send uncompressed */
  uint64_t bytes_sent;  /* bytes this rank actually sent */
  double seconds;       /* wall time of the call on this rank */
  double seconds_codec; /* of which quantize/encode/decode/reduce */
  char reason[96];      /* why this algorithm / why uncompressed */
  /* since 0.2 (docs/performance-model.md) */
  double predicted_seconds; /* the cost model's time for the algorithm that
                               ran, before the call (same on every rank;
                               0 for point-to-point and one rank) */
  double measured_seconds;  /* the call's time as the model learns it: the
                               slowest rank's work before the first
                               agreement plus the slowest rank's time after
                               it (compressed paths: agreed, the same on
                               every rank; the MPI path: this rank's, agreed
                               at the next call; 0 when not timed) */
  /* since 0.3 */
  int explored; /* 1: `auto` ran this call on the path its model did not
                   choose, to measure it (an exploration trial, budgeted in
                   docs/performance-model.md; the same on every rank) */
} gz_report_t;

typedef struct gz_ctx *gz_ctx_t;

/* ------------------------------------------------------------------------
 * GPU buffers. With cfg.device_pool_bytes > 0, gz_allreduce,
 * gz_allreduce_mean and gz_scatter accept device pointers (CUDA, detected at
 * run time with cudaPointerGetAttributes): allreduce runs a device-centric
 * recursive doubling, scatter a binomial tree whose per-destination blocks
 * are encoded concurrently on several streams; quantization, encoding,
 * decoding, reduction and dequantization run on the GPU, in the context's
 * preallocated pool (no allocation inside a call). Compressed bytes move
 * device to device with CUDA-aware MPI (detected at run time: Open MPI's
 * MPIX_Query_cuda_support; GZCOLL_CUDA_AWARE=0 forces staging, =1 forces
 * device pointers and gz_ctx_create refuses it with GZ_ERR_UNSUPPORTED when
 * the MPI says it is not CUDA-aware), otherwise they are staged through
 * pinned host buffers. Stream order: the library's streams are blocking, so
 * a call's device work starts after what the caller queued on the legacy
 * default stream (NULL), and it is finished when the call returns; work on
 * the caller's non-blocking streams (or a per-thread default stream) must be
 * synchronised by the caller first. Results equal the CPU path's bit for bit
 * (same codes, same integer totals). Not yet: device pointers in the other
 * collectives, or without a device pool (not detected there: pass host
 * buffers).
 * ---------------------------------------------------------------------- */

/* Collective over comm: pick a device for this rank by its node-local rank
 * (MPI_Comm_split_type SHARED; several ranks may share one device) and make
 * it current. *device (may be NULL) receives the ordinal, -1 when none.
 * GZ_ERR_UNSUPPORTED when this rank sees no device (or CUDA was not built);
 * the outcome is local (ranks may differ). */
gz_result_t gz_device_select(MPI_Comm comm, int *device);

/* 1 when p is device (or managed) memory, 0 otherwise (and always 0 without
 * a device). */
int gz_is_device_pointer(const void *p);

/* Devices this rank can use: >= 1; 0 when none is found (why, may be NULL,
 * receives the reason); -1 when this build has no CUDA support. Local. */
int gz_device_available(char *why, size_t whylen);

/* cfg.device_pool_bytes for allreduce calls of up to count float64 values
 * on device buffers (a whole call's codes, encodings and scratch). */
size_t gz_device_pool_bytes(size_t count);

/* Device memory for callers that stage host data on the device, e.g. to
 * pass device pointers to gz_allreduce. GZ_ERR_UNSUPPORTED without a
 * device. gz_device_copy copies bytes in either direction (host or device
 * pointers) and returns when the copy is done. gz_device_free(NULL) is a
 * no-op. Never call these inside a collective. */
gz_result_t gz_device_malloc(void **ptr, size_t bytes);
void gz_device_free(void *ptr);
gz_result_t gz_device_copy(void *dst, const void *src, size_t bytes);

/* Collective over comm. cfg may be NULL (GZ_CONFIG_INIT). */
gz_result_t gz_ctx_create(MPI_Comm comm, const gz_config_t *cfg, gz_ctx_t *ctx);
/* Collective; ctx may be NULL. */
void gz_ctx_destroy(gz_ctx_t ctx);

/* Pass as sendbuf for an in-place operation (MPI_IN_PLACE semantics). */
#define GZ_IN_PLACE ((const void *)1)

/* report may be NULL in every call below. */
gz_result_t gz_allreduce(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_op_t op, gz_report_t *report);
/* Every rank receives recvcount reduced elements: block r of the P blocks. */
gz_result_t gz_reduce_scatter_block(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, gz_dtype_t dtype, gz_op_t op,
                                    gz_report_t *report);
gz_result_t gz_allgather(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                         gz_dtype_t dtype, gz_report_t *report);
gz_result_t gz_bcast(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype, int root,
                     gz_report_t *report);
/* sendbuf significant at root only: P blocks of count values. */
gz_result_t gz_scatter(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                       gz_dtype_t dtype, int root, gz_report_t *report);
gz_result_t gz_alltoall(gz_ctx_t ctx, const void *sendbuf, void *recvbuf, size_t count,
                        gz_dtype_t dtype, gz_report_t *report);
/* Point to point: the compressed size travels with the message. The receiver
 * passes the count it expects; a different count gives GZ_ERR_ARG. */
gz_result_t gz_send(gz_ctx_t ctx, const void *buf, size_t count, gz_dtype_t dtype,
                    int dest, int tag, gz_report_t *report);
gz_result_t gz_recv(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype, int source,
                    int tag, gz_report_t *report);

/* Mean helper: allreduce SUM then scale by 1/divisor (divisor > 0). The
 * bound of the mean is the sum's bound / divisor. */
gz_result_t gz_allreduce_mean(gz_ctx_t ctx, const void *sendbuf, void *recvbuf,
                              size_t count, gz_dtype_t dtype, double divisor,
                              gz_report_t *report);

/* Print which algorithm auto would choose for a collective and why. */
gz_result_t gz_explain(gz_ctx_t ctx, const char *collective, size_t count,
                       gz_dtype_t dtype, char *buf, size_t buflen);

/* ------------------------------------------------------------------------
 * The cost model behind `auto` (docs/performance-model.md). A context
 * measures its inputs at gz_ctx_create (a short probe of the ring-neighbour
 * exchange and a small allreduce; not with one rank) and refines them from
 * the measured time of every call; cfg.link_bytes_per_s and the environment
 * (GZCOLL_LINK_BPS, GZCOLL_ALPHA, GZCOLL_CODEC_EPS, GZCOLL_RATIO,
 * GZCOLL_LEARN=0) pin them.
 * ---------------------------------------------------------------------- */
typedef struct gz_model {
  unsigned version; /* GZ_MODEL_VERSION */
  int ranks;        /* P >= 1 */
  double alpha;     /* seconds per message (latency) */
  double link_bps;  /* bytes/s of one link: ring-neighbour exchange */
  double mpi_bps;   /* effective bytes/s of the MPI library's allreduce
                       in the model's formula; 0 = link_bps */
  double comp_bps;  /* effective bytes/s of compressed transfers; 0 = link_bps */
  double codec_eps; /* elements per second of one codec pass, one rank */
  double ratio;     /* compression ratio of integer codes vs 4-byte values */
} gz_model_t;

#define GZ_MODEL_VERSION 1u
#define GZ_MODEL_INIT                                                                    \
  { GZ_MODEL_VERSION, 2, 5e-6, 1.25e9, 0.0, 0.0, 2.5e8, 4.0 }

/* The inputs the context's model uses now (agreed: the same on every rank);
 * mpi_bps and comp_bps are those of allreduce. Local, no communication. */
gz_result_t gz_ctx_model(gz_ctx_t ctx, gz_model_t *model);

/* One algorithm's modelled time. */
typedef struct gz_prediction {
  const char *algo; /* its name (static text) */
  double seconds;
} gz_prediction_t;

/* The model's seconds of every algorithm of collective ("allreduce",
 * "bcast", ... as gz_explain) for one call of count elements per rank, the
 * cheapest first (what auto takes above its small-message rule). *nrows
 * receives how many algorithms the collective has; rows (cap of them; may
 * be NULL when cap is 0) the first min(cap, *nrows); GZ_ERR_CAPACITY when
 * cap < *nrows. Pure arithmetic. */
gz_result_t gz_model_predict(const gz_model_t *model, const char *collective,
                             size_t count, gz_dtype_t dtype, gz_prediction_t *rows,
                             size_t cap, size_t *nrows);

/* ------------------------------------------------------------------------
 * Error-propagation statistics (src/stats/).
 * ---------------------------------------------------------------------- */
/* Tests an error model on a computed result instead of assuming it.
 * Given the exact result, the approximate (compressed-collective) result and
 * how many independent quantizations feed each point, gz_error_stats()
 * measures the error e = approx - exact and confronts two models of it:
 *  - "paper": C-Coll's normal model, sigma_i = eb / 3 per quantization;
 *  - "quantizer": round-to-nearest error uniform on [-eb, eb],
 *    sigma_i = eb / sqrt 3 (the law gzcoll's quantizer actually has).
 * For each it reports the predicted sigma, the empirical coverage of the
 * paper's interval +-2 sigma and a verdict. Formulas, tolerances and the
 * verdict rules are documented in libgzcoll/src/stats/error_stats.c.
 * Everything is host-side double precision; thread-safe (no global state). */

/* How the nq quantization errors of one point combine into its error. */
typedef enum {
  GZ_STATS_SUM = 0,  /* E = scale * (e_1 + ... + e_nq); scale usually 1 */
  GZ_STATS_MEAN = 1, /* same law as SUM; scale = 1 / (snapshots averaged) */
  GZ_STATS_MAX = 2,  /* E = scale * error of the one value that wins */
  GZ_STATS_MIN = 3   /* as MAX */
} gz_stats_kind_t;

/* Whether a model's +-2 sigma interval covers what the model predicts. */
typedef enum {
  GZ_STATS_NA = 0,          /* no point analysed */
  GZ_STATS_HOLDS = 1,       /* |coverage - predicted| <= tolerance */
  GZ_STATS_UNDERCOVERS = 2, /* coverage < predicted - tolerance */
  GZ_STATS_OVERCOVERS = 3   /* coverage > predicted + tolerance */
} gz_stats_verdict_t;

/* Static text: "n/a", "holds", "undercovers", "overcovers". */
const char *gz_stats_verdict_name(gz_stats_verdict_t verdict);
/* Static text: "sum", "mean", "max", "min" ("unknown" otherwise). */
const char *gz_stats_kind_name(gz_stats_kind_t kind);

#define GZ_STATS_MAX_LAG 16              /* largest autocorrelation lag */
#define GZ_STATS_CLAIMED_COVERAGE 0.9544 /* the paper's +-2 sigma claim */

typedef struct gz_error_stats_params {
  unsigned version;     /* GZ_ERROR_STATS_PARAMS_VERSION */
  gz_stats_kind_t kind; /* how the quantization errors combine */
  double eb;            /* bound of ONE quantization, |e_i| <= eb; > 0 */
  unsigned nq;          /* >= 1. SUM/MEAN: independent quantization errors
                           summed into each point (e.g. P for one
                           quantization per rank). MAX/MIN: contributions
                           combined; used by the paper's Theorem 2 only */
  double scale;         /* > 0, finite: E = scale * combined error (SUM 1,
                           MEAN over N snapshots 1/N) */
  unsigned max_lag;     /* autocorrelation at lags 1..max_lag along the
                           flattened array; 0..GZ_STATS_MAX_LAG */
  double alpha;         /* significance of the goodness-of-fit tests,
                           0 < alpha <= 0.5 (default 0.01) */
  double coverage_tol;  /* base coverage tolerance, 0 <= tol < 1 (default
                           0.02; a binomial term is added, see .c) */
} gz_error_stats_params_t;

#define GZ_ERROR_STATS_PARAMS_VERSION 1u
#define GZ_ERROR_STATS_PARAMS_INIT                                                       \
  { GZ_ERROR_STATS_PARAMS_VERSION, GZ_STATS_SUM, 0.0, 1u, 1.0, 8u, 0.01, 0.02 }

/* One model's prediction confronted with the data. */
typedef struct gz_stats_model {
  double sigma;              /* predicted standard deviation of E */
  double half_width;         /* the interval +-half_width, = 2 sigma */
  double predicted_coverage; /* P(|E| <= half_width) under the model's own
                                law (paper: 0.9544) */
  double coverage;           /* measured fraction of |e| <= half_width */
  double tolerance;          /* allowed |coverage - predicted_coverage| */
  gz_stats_verdict_t verdict;
} gz_stats_model_t;

/* gz_error_stats_t.flags */
#define GZ_STATS_FLAG_BIASED 0x01u         /* mean significantly nonzero */
#define GZ_STATS_FLAG_CORRELATED 0x02u     /* errors of neighbours correlated */
#define GZ_STATS_FLAG_NOT_NORMAL 0x04u     /* Lilliefors test rejects normal */
#define GZ_STATS_FLAG_NOT_PREDICTED 0x08u  /* KS rejects the quantizer law */
#define GZ_STATS_FLAG_BOUND_EXCEEDED 0x10u /* some |e| > strict_bound */
#define GZ_STATS_FLAG_FEW_POINTS 0x20u     /* count < 100: tests unreliable */
#define GZ_STATS_FLAG_DEGENERATE 0x40u     /* all errors equal: no fit */

/* Results. Quantities that cannot be computed (too few points, zero
 * variance) are NaN. */
typedef struct gz_error_stats {
  gz_error_stats_params_t params;    /* copy of the params that were tested */
  uint64_t count;                    /* points analysed */
  uint64_t masked;                   /* points skipped by the mask */
  uint64_t nonfinite;                /* points skipped: exact, approx or e not finite */
  uint64_t zero_count;               /* analysed points with approx == exact */
  double mean;                       /* of e */
  double stddev;                     /* sample standard deviation (divisor count - 1) */
  double skewness;                   /* m3 / m2^1.5 */
  double kurtosis;                   /* excess: m4 / m2^2 - 3 (normal 0, uniform -1.2) */
  double max_abs;                    /* max |e| */
  double fit_mu;                     /* maximum-likelihood normal fit: mean */
  double fit_sigma;                  /* and sqrt(m2) (divisor count) */
  double ks_normal_d;                /* KS vs the fitted normal ... */
  double ks_normal_p;                /* ... p-value with the Lilliefors correction */
  double ad_normal_a2;               /* Anderson-Darling vs the fitted normal ... */
  double ad_normal_p;                /* ... p-value (case 3) */
  double ks_pred_d;                  /* KS vs the quantizer law (sum of uniforms) ... */
  double ks_pred_p;                  /* ... p-value (simple hypothesis) */
  double ks_paper_d;                 /* KS vs N(0, paper.sigma^2) ... */
  double ks_paper_p;                 /* ... p-value */
  int pred_law_exact;                /* 1: exact Irwin-Hall CDF; 0: Edgeworth (nq > 32) */
  double sigma_i_measured;           /* per-quantization sigma implied by stddev */
  double eb_over_sigma_i;            /* eb / sigma_i_measured: the paper assumes 3,
                                        a uniform error gives sqrt 3 = 1.73 */
  gz_stats_model_t paper;            /* sigma_i = eb / 3, normal */
  gz_stats_model_t quantizer;        /* sigma_i = eb / sqrt 3, uniform */
  double strict_bound;               /* SUM/MEAN: scale nq eb; MAX/MIN: scale eb */
  uint64_t bound_exceeded;           /* points with |e| > strict_bound */
  unsigned nlags;                    /* = params.max_lag */
  double autocorr[GZ_STATS_MAX_LAG]; /* autocorr[l - 1]: lag l */
  double n_eff;                      /* count / max(1, 1 + 2 sum_l autocorr): the
                                        independent-equivalent sample size */
  unsigned flags;                    /* GZ_STATS_FLAG_* */
} gz_error_stats_t;

/* Analyse e[i] = approx[i] - exact[i] over n > 0 points (caller owns all
 * arrays; mask may be NULL, mask[i] != 0 skips point i). params is
 * required (eb has no default). Points whose exact, approx or difference is
 * not finite are skipped and counted; points stored verbatim (e == 0) are
 * included. Allocates n doubles for the duration of the call. GZ_ERR_ARG on
 * a NULL pointer, n == 0 or a parameter out of range; GZ_ERR_NOMEM. A fully
 * masked input gives GZ_OK, count 0, verdicts GZ_STATS_NA. */
gz_result_t gz_error_stats(const gz_error_stats_params_t *params, const double *exact,
                           const double *approx, const unsigned char *mask, size_t n,
                           gz_error_stats_t *stats);

/* One line of findings about the error model into buf (caller owns, len
 * bytes, always NUL-terminated when len > 0), e.g. "sum of 4: errors close
 * to N(1.2e-06, (5.8e-04)^2) (KS p = 0.41, kurtosis -1.2); match the
 * quantizer's law (KS p = 0.3); published +-2 sqrt(n) sigma interval holds
 * 74.9 % (assumes 95.44 %: model too optimistic); quantizer model holds
 * 95.6 % (predicts 95.7 %: as predicted)".
 * GZ_ERR_CAPACITY when truncated (512 bytes always suffice). */
gz_result_t gz_error_stats_summary(const gz_error_stats_t *stats, char *buf, size_t len);

/* The "error_stats" JSON object (no key, no trailing newline) into buf
 * (caller owns, len bytes); *out_len (may be NULL) receives its length.
 * GZ_ERR_CAPACITY when it does not fit (4096 bytes always suffice). */
gz_result_t gz_error_stats_json(const gz_error_stats_t *stats, char *buf, size_t len,
                                size_t *out_len);

/* Histogram of the errors and the three densities, for plotting. */
typedef struct gz_error_hist {
  double x0, x1;     /* in/out: error range; x1 <= x0 on input = choose
                        [-R, R], R = max(max_abs, 3.5 sigma of the fit and
                        of both models) */
  size_t nbins;      /* >= 1 */
  double *density;   /* caller owns, nbins values: bin count / (count *
                        bin width), comparable with the pdfs */
  uint64_t below;    /* out: points with e < x0 */
  uint64_t above;    /* out: points with e > x1 */
  size_t npoints;    /* curve points, evenly spaced over [x0, x1]
                        inclusive; 0 = no curves, otherwise >= 2 */
  double *x;         /* caller owns, npoints values; may be NULL */
  double *pdf_fit;   /* fitted normal (NaN without a fit); caller owns;
                        may be NULL */
  double *pdf_paper; /* N(0, paper.sigma^2); caller owns; may be NULL */
  double *pdf_pred;  /* quantizer law; caller owns; may be NULL */
} gz_error_hist_t;

/* Fill hist from the same arrays and mask that produced stats. Allocates
 * nothing. GZ_ERR_ARG on NULL, n == 0, nbins == 0, npoints == 1. */
gz_result_t gz_error_stats_histogram(const gz_error_stats_t *stats, const double *exact,
                                     const double *approx, const unsigned char *mask,
                                     size_t n, gz_error_hist_t *hist);
/* --- end of error-propagation statistics --- */

#ifdef __cplusplus
}
#endif
#endif /* GZCOLL_H */
