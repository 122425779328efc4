/*
 * coll_internal.h - what the collectives share: the context, the workspace
 * pool, the status agreement, the quantization plan, selection, the one
 * collective driver with its descriptors and registry of algorithms, and
 * the small helpers (byte transfers of any size, block layout, timed codec
 * calls). Internal to libgzcoll.
 *
 * Every compressed collective follows the same shape, written once in
 * coll_driver.c (gz_coll_run); a front-end (allreduce.c, bcast.c, ...) only
 * describes its collective (gz_coll_desc_t) and each algorithm is one row
 * of the registry (gz_algorithm_t, registry.def):
 *   1. validate locally (an invalid argument is remembered, not returned);
 *   2. select the algorithm (deterministic: the same on every rank);
 *   3. reserve the whole workspace of the call (gz_ws_reserve);
 *   4. quantize the local contribution once (gz_run_quantize);
 *   5. agree (gz_agree_quantized): one small MPI_Allreduce(MAX) that carries
 *      local errors, "some value is not quantizable", the call's signature
 *      and the value range; any error -> every rank returns; escape -> plain
 *      MPI;
 *   6. run the algorithm on integer codes; remember local failures but keep
 *      communicating so that no peer waits forever;
 *   7. agree on the outcome (gz_agree_final), dequantize once, report.
 */
#ifndef GZ_COLL_INTERNAL_H
#define GZ_COLL_INTERNAL_H

#include "gzcoll.h"

#include "gz_block.h"

#include "device/backend.h"

#include <stddef.h>
#include <stdint.h>

/* Largest |sum of codes| of a collective, four single codes (2^52): its
 * reconstruction 2eb*Q is exact in double. A plan gives each of S summed
 * terms GZ_COLL_CODE_LIMIT / S; the quantizer also caps every single code at
 * GZ_CODE_LIMIT (2^50, kernels/gz_block.h), the one per-code limit of the
 * project. */
#define GZ_COLL_CODE_LIMIT ((int64_t)(4 * GZ_CODE_LIMIT))

/* Auto never compresses messages below this many raw bytes per rank. */
#define GZ_AUTO_MIN_BYTES 8192u

/* Defaults of the cost model (overridable by config / environment). */
#define GZ_DEFAULT_LINK_BPS 1.25e9        /* 10 Gb/s */
#define GZ_DEFAULT_ALPHA 5e-6             /* seconds per message */
#define GZ_DEFAULT_RATIO 4.0              /* until a compressed call measured one */
#define GZ_DEFAULT_CHUNK 16384u           /* ring pipeline chunk, elements */
#define GZ_DEFAULT_PART ((size_t)1 << 30) /* largest single MPI message */

/* Tag bases on the context's private communicator. */
#define GZ_TAG_REDOUB 1
#define GZ_TAG_BCAST 2
#define GZ_TAG_SCATTER 3
#define GZ_TAG_ALLTOALL 4
#define GZ_TAG_RING 16 /* ring tags: GZ_TAG_RING + [0, 4 * chunks) */

/* The registry's rows (registry.def), numbered in its order: GZ_ROW_<row>
 * is the index of the row whose file defines gz_algo_<row>. */
enum gz_row {
#define GZ_ALGORITHM(row) GZ_ROW_##row,
#include "registry.def"
#undef GZ_ALGORITHM
  GZ_ROWS
};

/* One algorithm of one collective: a row of the registry (defined below). */
typedef struct gz_algorithm gz_algorithm_t;

typedef enum gz_coll {
  GZ_COLL_ALLREDUCE = 0,
  GZ_COLL_REDUCE_SCATTER,
  GZ_COLL_ALLGATHER,
  GZ_COLL_BCAST,
  GZ_COLL_SCATTER,
  GZ_COLL_ALLTOALL,
  GZ_COLL_P2P,
  GZ_COLL_COUNT
} gz_coll_t;

/* The measured model (model.c, docs/performance-model.md). Size classes
 * (a factor of 4 in bytes per rank each) for the bookkeeping of which path
 * was measured when; exploration of the path not chosen at most once per
 * class and interval (GZ_EXPLORE_FIRST calls, doubling while the choice is
 * confirmed, up to GZ_EXPLORE_MAX), and only what the class's budget pays
 * for (select.c): the trials' extra time, measured, at most GZ_EXPLORE_SHARE
 * of the class's measured time, a trial counted at no less than one call of
 * the choice before it is measured. */
#define GZ_MODEL_CLASSES 24
#define GZ_EXPLORE_FIRST 16u
#define GZ_EXPLORE_MAX 1024u
#define GZ_EXPLORE_RATIO 4.0  /* never explore a path predicted > 4x slower */
#define GZ_EXPLORE_SHARE 0.05 /* of the class's measured time */
#define GZ_LEARN_WEIGHT 0.6   /* geometric weight of a new bandwidth sample */

/* Which model inputs are pinned (configuration / environment): not probed,
 * not learnt. */
enum {
  GZ_PIN_LINK = 1,
  GZ_PIN_ALPHA = 2,
  GZ_PIN_CODEC = 4,
  GZ_PIN_RATIO = 8,
  GZ_PIN_NOLEARN = 16,
  GZ_PIN_LINK_ENV = 32 /* the link came from GZCOLL_LINK_BPS */
};

/* What the context knows of one (collective, size class, algorithm). */
typedef struct gz_seen {
  uint32_t n;       /* calls measured */
  uint64_t last;    /* class call number of the latest measurement */
  double seconds;   /* latest measured (agreed) time */
  double predicted; /* the model's time for it, before that call */
} gz_seen_t;

/* Bookkeeping of one call (set by gz_select, read by the agreements). */
typedef struct gz_call {
  int timed; /* this call feeds the model (P > 1, collective) */
  gz_coll_t coll;
  const gz_algorithm_t *algo; /* the choice of gz_select (a host row) */
  int explore;                /* 1: auto runs the path not chosen, to measure it */
  double count;               /* elements per rank as the model counts them */
  size_t esz;
  double predicted;       /* the model's time of the choice */
  double t0, t_in, t_out; /* entry, first agreement entered / left */
  double measured;        /* agreed at the final agreement (compressed paths) */
  int final_seen;         /* the final agreement ran and measured */
} gz_call_t;

/* A measured call not yet agreed (the MPI path: its time rides with the
 * next call's first agreement). */
typedef struct gz_pending {
  int valid;
  const gz_algorithm_t *algo; /* a host row */
  double count;
  size_t esz;
  double pre, post; /* this rank's seconds before / after the first agreement */
  double predicted;
  int explore; /* the call explored (charged to the budget when agreed) */
} gz_pending_t;

/* Where a forced algorithm came from. */
typedef enum { GZ_FORCE_NONE = 0, GZ_FORCE_CONFIG, GZ_FORCE_ENV } gz_force_src_t;

/* ---- the one workspace allocator (pool.c) -------------------------------- */

/* A bump allocator: a call reserves all it needs at its start, then takes
 * pieces (64-byte aligned) and never frees one; the next reservation starts
 * over. The host workspace grows at a reservation (the only allocation of
 * a call, agreed on like any local failure; cfg.pool_bytes preallocates);
 * the device pool and the pinned staging are allocated once at
 * gz_ctx_create and never grow. */
typedef struct gz_pool {
  unsigned char *base;
  size_t cap, used, reserved;
  int grows; /* 1: the host workspace (aligned_alloc) */
} gz_pool_t;

/* Saturating size arithmetic: total + n * elem rounded up to the alignment
 * of the pool; SIZE_MAX on overflow (the reservation then fails). */
size_t gz_ws_add(size_t total, size_t n, size_t elem);
/* Start a call needing bytes (gz_ws_add arithmetic): GZ_ERR_NOMEM when
 * bytes > cap and the pool does not grow, or the allocation fails. */
gz_result_t gz_pool_reserve(gz_pool_t *pool, size_t bytes);
/* Carve n * elem bytes; NULL when the reservation is exceeded (a bug in the
 * caller's accounting). */
void *gz_pool_take(gz_pool_t *pool, size_t n, size_t elem);
/* Free a growing pool's memory. */
void gz_pool_free(gz_pool_t *pool);

struct gz_ctx {
  MPI_Comm comm; /* private duplicate for collective traffic */
  MPI_Comm p2p;  /* private duplicate for gz_send/gz_recv */
  int rank, size;
  int tag_ub;
  gz_config_t cfg;
  /* algorithm forced per collective (its host row; NULL = choose), and why */
  const gz_algorithm_t *forced[GZ_COLL_COUNT];
  gz_force_src_t force_src[GZ_COLL_COUNT];
  int force_bad[GZ_COLL_COUNT]; /* config forces an algorithm that does not apply */
  /* transfer shape */
  size_t chunk_elems; /* ring pipeline chunk */
  size_t part_bytes;  /* largest single message */
  int wide_codes;     /* GZCOLL_WIDE_CODES: int64 codes even where int32 fit */
  gz_pool_t ws;       /* the host workspace, reserved per call, carved by gz_ws_take */
  /* cost model (identical on every rank: updated only from agreed values) */
  double alpha;     /* seconds per message */
  double link_bps;  /* bytes per second on the link */
  double codec_eps; /* elements per second of one codec pass */
  double ratio;     /* compression ratio of integer codes */
  /* local samples of the last compressed call, folded in at the next
   * agreement (min over ranks) */
  double sample_ratio, sample_eps;
  /* measured model (model.c) */
  int pinned;                  /* GZ_PIN_* */
  double bw[GZ_COLL_COUNT][2]; /* effective B/s of the MPI [0] and the
                                  compressed [1] paths; 0 = link_bps */
  double probe_seconds;        /* what the probe at create took */
  double probe_stage[5];       /* this rank's seconds of its stages: codec,
                                  latency, ring steps, MPI's allreduce, agreement */
  double probe_bytes;          /* its largest ring step (B) */
  int probe_ar_reps;           /* MPI allreduces it timed (1, or all repeats) */
  unsigned char *probe_buf;    /* its buffers, from gz_model_probe_prepare */
  char probe_note[160];        /* for gz_explain */
  uint64_t class_calls[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  uint64_t next_explore[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  uint32_t explore_gap[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  /* exploration's budget per class: the agreed measured seconds of its
   * calls; what its trials cost beyond the choice (the open one at its
   * charge, the others at their measured extra); the open trial's charge
   * and the choice's measured time it is compared with */
  double class_time[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  double explore_spent[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  double explore_charge[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  double explore_base[GZ_COLL_COUNT][GZ_MODEL_CLASSES];
  gz_seen_t seen[GZ_MODEL_CLASSES][GZ_ROWS]; /* [class][host row] */
  uint64_t explored;                         /* calls that ran the path not chosen */
  gz_call_t cur;
  gz_pending_t pend;
  double test_scale[2]; /* testing (tests/model): factor on the measured time
                           of the MPI [0] / compressed [1] paths; 0 = 1 */
  /* device backend (device/, ctx.c): set up once at gz_ctx_create */
  int dev_enabled;  /* cfg.device_pool_bytes > 0 (same on every rank) */
  int dev_ops;      /* GZCOLL_BACKEND=ops: host buffers also take the device
                       algorithms, with the CPU ops (testing; same on all) */
  int dev_count;    /* devices this rank sees */
  int dev_ready;    /* this rank's pool, staging and streams exist */
  int cuda_aware;   /* MPI moves device memory */
  gz_pool_t dpool;  /* device memory */
  gz_pool_t hstage; /* pinned host staging, as large as dpool */
  void *streams[GZ_DEV_STREAMS];
  unsigned char *d_small, *h_small; /* GZ_DEV_SMALL per stream + P sizes */
};

/* ---- the host workspace (ctx->ws, a gz_pool_t) -------------------------- */

/* Make room for bytes (only at the start of a call: moves the pool). */
static inline gz_result_t gz_ws_reserve(gz_ctx_t ctx, size_t bytes) {
  return gz_pool_reserve(&ctx->ws, bytes);
}
/* Carve n * elem bytes from the reserved workspace (aligned). NULL only if
 * the caller's reservation was too small (a bug). */
static inline void *gz_ws_take(gz_ctx_t ctx, size_t n, size_t elem) {
  return gz_pool_take(&ctx->ws, n, elem);
}
/* Stages that run one after the other share workspace: mark, then release
 * everything taken since the mark. */
static inline size_t gz_ws_mark(gz_ctx_t ctx) { return ctx->ws.used; }
static inline void gz_ws_release(gz_ctx_t ctx, size_t mark) { ctx->ws.used = mark; }

/* ---- per-call bookkeeping ----------------------------------------------- */

typedef struct gz_run {
  size_t esz;          /* bytes of one element of the caller's type */
  double t0;           /* MPI_Wtime() at entry */
  double t_codec;      /* seconds in quantize/encode/decode/reduce */
  uint64_t passes;     /* element-passes of the codec (cost model unit) */
  uint64_t bytes_raw;  /* raw-equivalent bytes sent by this rank */
  uint64_t bytes_sent; /* bytes actually sent */
  uint64_t code_bytes; /* encoded bytes produced (ratio sample) */
  uint64_t code_elems; /* codes encoded (ratio sample) */
} gz_run_t;

void gz_run_begin(gz_run_t *run, gz_dtype_t dtype);
gz_result_t gz_run_quantize(gz_run_t *run, gz_dtype_t dtype, const void *in, size_t n,
                            double eb, int64_t code_limit, int64_t *codes);
gz_result_t gz_run_dequantize(gz_run_t *run, gz_dtype_t dtype, const int64_t *codes,
                              size_t n, double eb, void *out);
/* The same from int64 or (narrow) int32 codes, with the largest |code|
 * (amax; may be NULL) found in the same pass. */
gz_result_t gz_run_dequantize_absmax(gz_run_t *run, gz_dtype_t dtype, const void *codes,
                                     int narrow, size_t n, double eb, void *out,
                                     int64_t *amax);
/* Codes are int64, or int32 ("narrow") in a call whose agreed range keeps
 * every code and every sum of terms codes below 2^31 (gz_codes_fit32: the
 * same answer on every rank from the agreed absmax; monotone, so a rank whose
 * own range fits whenever the agreed one does). The _w codec calls take
 * either; widen/narrow convert a buffer in place. */
int gz_codes_fit32(double absmax, double eb, int terms);
void gz_codes_widen(void *codes, size_t n);
void gz_codes_narrow(void *codes, size_t n);
static inline void *gz_code_at(void *codes, int narrow, size_t i) {
  return (char *)codes + i * (narrow ? sizeof(int32_t) : sizeof(int64_t));
}
gz_result_t gz_run_encode_w(gz_run_t *run, const void *codes, int narrow, size_t n,
                            void *out, size_t cap, size_t *out_size);
gz_result_t gz_run_decode_w(gz_run_t *run, const void *in, size_t size, void *codes,
                            int narrow, size_t n);
gz_result_t gz_run_decode_reduce_w(gz_run_t *run, gz_op_t op, const void *in, size_t size,
                                   void *acc, int narrow, size_t n);
/* The result's values, written by an algorithm's last decode (decode fused
 * with dequantization) instead of a dequantize pass over the codes. */
typedef struct gz_values {
  gz_dtype_t dtype;
  void *out;    /* the value of code i at element i */
  double eb;    /* the dequantization's bound (the plan's eb / divisor) */
  int64_t amax; /* out: the largest |code| written so far */
} gz_values_t;
/* Decode n codes of an encoding straight into values off .. off + n - 1. */
gz_result_t gz_run_decode_values(gz_run_t *run, const void *in, size_t size,
                                 gz_values_t *v, size_t off, size_t n);
/* Decode n codes, combine them with op into a copy of acc (codes
 * off .. off + n - 1, int32 with narrow; acc is not written) and write the
 * values of the result there: the last decode+reduce of an algorithm. */
gz_result_t gz_run_decode_reduce_values(gz_run_t *run, gz_op_t op, const void *in,
                                        size_t size, const void *acc, int narrow,
                                        gz_values_t *v, size_t off, size_t n);
/* Dequantize n codes (int32 with narrow) into values off .. off + n - 1. */
gz_result_t gz_run_values(gz_run_t *run, const void *codes, int narrow, gz_values_t *v,
                          size_t off, size_t n);
gz_result_t gz_run_encode(gz_run_t *run, const int64_t *codes, size_t n, void *out,
                          size_t cap, size_t *out_size);
gz_result_t gz_run_decode(gz_run_t *run, const void *in, size_t size, int64_t *codes,
                          size_t n);
gz_result_t gz_run_decode_reduce(gz_run_t *run, gz_op_t op, const void *in, size_t size,
                                 int64_t *acc, size_t n);
/* Fill report (may be NULL) and fold this call's samples into the context. */
void gz_run_report(gz_ctx_t ctx, gz_run_t *run, gz_report_t *report,
                   const gz_algorithm_t *algo, int compressed, double quant_bound,
                   double result_bound, const char *reason);

/* ---- status agreement --------------------------------------------------- */

typedef struct gz_agree {
  gz_result_t err; /* in: local result; out: unchanged */
  int escape;      /* in: some local value is not quantizable; out: any rank */
  double absmax;   /* in/out: largest finite |x| (local / over all ranks) */
  double lo, hi;   /* in/out: finite min / max (local / over all ranks) */
  double sig[4];   /* in: the call's signature, must match on all ranks */
  int quiet;       /* in: wait without spinning (gz_allreduce_max) */
} gz_agree_t;

void gz_agree_init(gz_agree_t *a);
/* One MPI_Allreduce(MAX) over a few doubles. Returns GZ_OK when no rank
 * failed; otherwise the local error on the failing rank(s), GZ_ERR_REMOTE on
 * the others, GZ_ERR_ARG on all when the signatures differ. */
gz_result_t gz_agree(gz_ctx_t ctx, gz_agree_t *a);
/* Agree on the outcome of the data movement (same return convention);
 * quiet: wait without spinning (gz_allreduce_max). */
gz_result_t gz_agree_final(gz_ctx_t ctx, gz_result_t local, int quiet);
/* The first message of a host algorithm (its row's first hook): codes
 * [off, off + len) in the indexed encoding, in pieces of piece codes (the
 * last may be shorter), piece k at msg + k * stride, its size in sizes[k].
 * The quantization writes it in the same pass, tile by tile from cache
 * (quantize fused with encode); without keep those codes are not written
 * to the code buffer at all (the algorithm never reads them). */
typedef struct gz_first {
  size_t off, len, piece, stride;
  int keep;
  unsigned char *msg; /* set by the driver (the algorithm's workspace) */
  size_t *sizes;
} gz_first_t;
/* gz_run_quantize that also sets range->lo, hi and absmax (gz_local_range's
 * values; range may be NULL) in the same pass over the input; with a range
 * and *narrow set, int32 codes while the range fits gz_codes_fit32(terms)
 * (*narrow out: whether the codes are int32); with first (may be NULL) the
 * first message too. */
gz_result_t gz_run_quantize_range(gz_run_t *run, gz_dtype_t dtype, const void *in,
                                  size_t n, double eb, int64_t code_limit, void *codes,
                                  gz_agree_t *range, int *narrow, int terms,
                                  gz_first_t *first);

/* ---- quantization plan -------------------------------------------------- */

typedef struct gz_plan {
  double e_abs;       /* the user's bound in absolute units */
  double eb;          /* bound of one quantization */
  int64_t code_limit; /* per-rank |q| limit */
  int usable;         /* 0: degenerate bound (REL of a constant field...) */
} gz_plan_t;

/* sum_terms: how many quantized contributions are added (P for SUM, 1 for
 * MAX/MIN and data movement); scale: the result is divided by it (mean),
 * which widens a strict bound by the same factor; range: global max - min
 * for REL (ignored for ABS). */
void gz_plan_make(gz_ctx_t ctx, int sum_terms, double scale, double range,
                  gz_plan_t *plan);
/* The plan of one call: in REL mode the global value range is agreed first
 * (ag carries this rank's range; *agreed is set), then gz_plan_make(). An
 * error is the agreement's, already the same on every rank. */
gz_result_t gz_plan_agreed(gz_ctx_t ctx, gz_agree_t *ag, int sum_terms, double scale,
                           gz_plan_t *plan, int *agreed);
/* The reason given when plan.usable is 0. */
#define GZ_WHY_DEGENERATE "degenerate bound (zero range or underflow): sent uncompressed"
/* The reason under GZ_EB_PWREL where no cast applies. */
#define GZ_WHY_PWREL "pointwise relative bound: no cast applies here, sent exactly"
/* Rounding of the final conversion 2eb*Q -> T for results up to |r| = rmax:
 * one rounding in double plus, for float32, half an ulp of float32. */
double gz_round_slop(gz_dtype_t dtype, double rmax);
/* Bound of a SUM of P quantized terms divided by divisor (1 for a plain
 * sum); rmax is the largest |result| (after the division). */
double gz_sum_bound(gz_dtype_t dtype, int P, double eb, double absmax, double rmax,
                    double divisor);
/* Bound of a plain floating-point SUM of P terms of magnitude <= absmax. */
double gz_mpi_sum_bound(gz_dtype_t dtype, int P, double absmax);
/* Largest |code| in codes[0..n). */
int64_t gz_codes_absmax(const int64_t *codes, size_t n);

/* ---- selection (select.c) ----------------------------------------------- */

typedef struct gz_choice {
  const gz_algorithm_t *algo; /* the host row chosen */
  int forced;                 /* 1 when forced by config or environment */
  int by_model;               /* 1 when the cost model chose */
  double cost[GZ_ROWS];       /* seconds, by row; < 0 when not applicable */
  char reason[96];
} gz_choice_t;

const char *gz_coll_name(gz_coll_t coll);
/* The collective named by s[0..len) (any case; aliases reduce_scatter_block,
 * send, recv): 1 and *coll, or 0. */
int gz_coll_lookup(const char *s, size_t len, gz_coll_t *coll);
/* GZ_ERR_ARG when the configuration forces an algorithm that does not
 * apply (identical on every rank). */
gz_result_t gz_select(gz_ctx_t ctx, gz_coll_t coll, size_t count, gz_dtype_t dtype,
                      gz_choice_t *choice);

/* The model's seconds of one algorithm with explicit inputs (bw: bytes/s of
 * the path's transfers); < 0 when it does not apply. */
double gz_model_time(const gz_model_t *m, const gz_algorithm_t *algo, double count,
                     size_t esz, double bw);
/* The context's model inputs and the bandwidth of one path. */
void gz_model_of_ctx(gz_ctx_t ctx, gz_model_t *m);
double gz_path_bw(gz_ctx_t ctx, const gz_algorithm_t *algo);
/* The context's model time of one algorithm; < 0 when it does not apply. */
double gz_ctx_model_time(gz_ctx_t ctx, const gz_algorithm_t *algo, size_t count,
                         size_t esz);
int gz_size_class(double bytes);

/* ---- measured model (model.c) ------------------------------------------- */

/* Elements per second of one codec pass over n smooth float32 values, best
 * of reps (ctx.c; 2.5e8 if it cannot run). */
double gz_calibrate(size_t n, int reps);

/* At gz_ctx_create, before the configuration is agreed: the probe's buffers
 * if it will run (local; 0 when they cannot be allocated: the agreement then
 * skips the probe on every rank). */
int gz_model_probe_prepare(gz_ctx_t ctx);
/* After the configuration agreed, go = every rank prepared: measure the
 * codec, alpha, the ring-neighbour bandwidth and the MPI allreduce's,
 * agreed (slowest) on every rank, and free the buffers. Collective; the
 * result is the same on every rank. */
gz_result_t gz_model_probe(gz_ctx_t ctx, int go);
/* The probe's stop rule (model.c): with the link at least lb B/s and the
 * codec at eps values/s per pass, MPI wins every choice and the compressed
 * paths no longer depend on the link (1), or a larger step could matter (0). */
int gz_model_mpi_wins_anyway(gz_ctx_t ctx, double lb, double eps);
/* The probe's agreed vector (MPI_MAX over ranks, model.c): the slowest and
 * (negated) fastest rank's 8-byte step, the slowest rank's fastest step of
 * each size, then (negated) the fastest rank's, the codec (negated), then
 * each repeat of MPI's allreduce, negated: per repeat the fastest rank's
 * time, the collective's own (0 for the repeats after the first when they
 * did not run: gz_model_probe_repeats). */
#define GZ_PROBE_AR_REPS 3
enum {
  GZ_PV_T8,
  GZ_PV_NT8,
  GZ_PV_LARGE,
  GZ_PV_MAX,
  GZ_PV_NLARGE,
  GZ_PV_NMAX,
  GZ_PV_EPS,
  GZ_PV_ELAPSED, /* the probe's time before its agreement, the slowest rank's */
  GZ_PV_NAR,
  GZ_PV_N = GZ_PV_NAR + GZ_PROBE_AR_REPS
};
/* After the probe's agreement of v: does it time the other repeats of MPI's
 * allreduce? When they are cheap (the first under 3 ms, or 2 of it under
 * an eighth of the probe so far) or the first looks disturbed
 * (longer than 2 ceil(log2 size) of the slowest rank's 8-byte steps plus
 * its 512 KiB step). */
int gz_model_probe_repeats(const double *v, int size);
/* After gz_model_probe_apply: would no rate of MPI's allreduce between the
 * present one and the link make auto's choice of an allreduce more than 10 %
 * slower than the cheapest (1)? The probe then skips the repeats (model.c). */
int gz_model_mpi_rate_moot(gz_ctx_t ctx);
/* The model's inputs from an agreed probe vector v whose ring steps were of
 * s1 and s2 bytes (s1 = 8: only one size of large steps) and whose
 * allreduces were of ar_n doubles: alpha, link_bps, the MPI path (each
 * only where not pinned). Every rank computes the same from the same v. */
void gz_model_probe_apply(gz_ctx_t ctx, const double *v, size_t s1, size_t s2, int ar_n);
/* An explored call of coll was measured (agreed) at seconds: its charge to
 * the class's budget becomes its measured extra over the choice (select.c). */
void gz_explore_measured(gz_ctx_t ctx, gz_coll_t coll, double bytes, double seconds);
/* Learn from one agreed measured call (identical arguments on every rank). */
void gz_model_learn(gz_ctx_t ctx, const gz_algorithm_t *algo, double count, size_t esz,
                    double seconds, double predicted);
/* One agreed measured call: learn from it, add it to its class's time and,
 * when it explored, charge its measured extra (what the agreements call;
 * tests feed simulated times through it). */
void gz_model_measured(gz_ctx_t ctx, const gz_algorithm_t *algo, double count, size_t esz,
                       double seconds, double predicted, int explore);
/* Doubles the agreements carry for the model (MAX over ranks). */
#define GZ_MODEL_AG_N 10
/* Pack this rank's pending sample (first agreement of a call) / unpack the
 * agreed one and learn from it. */
void gz_model_pack(gz_ctx_t ctx, double *v);
void gz_model_unpack(gz_ctx_t ctx, const double *v);
/* At the end of a call on this rank (gz_run_report): the report's predicted
 * and measured time; an MPI-path call becomes the pending sample. */
void gz_model_end_call(gz_ctx_t ctx, const gz_algorithm_t *algo, int compressed,
                       gz_report_t *report);
/* The final agreement's two doubles (this call's time before / after the
 * first agreement, MAX over ranks); unpack learns when ok (no rank failed). */
void gz_model_final_pack(gz_ctx_t ctx, double *v);
void gz_model_final_unpack(gz_ctx_t ctx, const double *v, int ok);

/* ---- steps of a compressed call (coll_common.c) ------------------------- */

/* The reason given when some value could not be quantized. */
#define GZ_WHY_ESCAPE "non-finite or out-of-range values: sent uncompressed"
/* Step 5: agree once this rank has reserved its workspace and quantized
 * (or not: a rank without values of its own). local: the result of that;
 * GZ_ERR_RANGE (some value cannot be quantized) is no error but an escape
 * (ag->escape, over all ranks after the agreement: the caller then takes
 * the MPI path with GZ_WHY_ESCAPE). Returns gz_agree's result, the same on
 * every rank, and sets *agreed when it is GZ_OK. */
gz_result_t gz_agree_quantized(gz_ctx_t ctx, gz_agree_t *ag, gz_result_t local,
                               int *agreed);
/* ---- helpers (coll_common.c) -------------------------------------------- */

MPI_Datatype gz_mpi_type(gz_dtype_t dtype);
/* Finite min, max and max |x| of n values (lo = +inf, hi = -inf, absmax = 0
 * when none is finite). */
void gz_local_range(gz_dtype_t dtype, const void *in, size_t n, double *lo, double *hi,
                    double *absmax);
/* Block b of count elements split into P nearly equal blocks (the first
 * count % P blocks one longer). */
size_t gz_block_off(size_t count, int P, int b);
size_t gz_block_len(size_t count, int P, int b);
/* Send ssize bytes to dest and receive up to rcap bytes from src (either may
 * be MPI_PROC_NULL), in parts of at most ctx->part_bytes; a part shorter than
 * that ends a message. Each part is a non-blocking receive and send, waited
 * for with MPI_Waitall, or with quiet by gz_wait_quietly (a scatter's
 * receivers, which wait while the root compresses). *rsize (may be NULL)
 * receives the bytes received; run (may be NULL) counts the bytes sent. */
gz_result_t gz_transfer(gz_ctx_t ctx, int tag, const void *sbuf, size_t ssize, int dest,
                        void *rbuf, size_t rcap, int src, size_t *rsize, gz_run_t *run,
                        int quiet);
/* gz_transfer waited for by MPI (not quiet). */
gz_result_t gz_xfer(gz_ctx_t ctx, int tag, const void *sbuf, size_t ssize, int dest,
                    void *rbuf, size_t rcap, int src, size_t *rsize, gz_run_t *run);
/* Complete req without spinning for long: MPI_Test for 50 us, then 50 us
 * naps between tests, so a rank that waits for another (a scatter's
 * receivers while the root compresses) leaves the CPU to ranks that work
 * where ranks share cores. st may be MPI_STATUS_IGNORE. A failed MPI_Test
 * returns GZ_ERR_MPI with the request complete (*req MPI_REQUEST_NULL): one
 * that MPI did not complete is waited for with MPI_Wait, never left
 * pending. */
gz_result_t gz_wait_quietly(MPI_Request *req, MPI_Status *st);
/* MPI_Allreduce(MAX) of n doubles in place over ctx->comm; with quiet
 * waited for quietly (gz_wait_quietly: the agreements of rooted calls,
 * whose ranks wait while the root or the receivers compress: gz_agree with
 * quiet, gz_agree_final). */
gz_result_t gz_allreduce_max(gz_ctx_t ctx, double *v, int n, int quiet);
/* A committed datatype of n contiguous elements (n may exceed INT_MAX);
 * *count receives the count to pass with it. Free with gz_mpi_block_free. */
gz_result_t gz_mpi_block(gz_dtype_t dtype, size_t n, MPI_Datatype *type, int *count);
void gz_mpi_block_free(MPI_Datatype *type);
/* Ring pipeline geometry for count codes over P blocks: chunk elements per
 * message and chunks per block, small enough that 4 * chunks tags fit
 * under MPI_TAG_UB. */
void gz_ring_geometry(gz_ctx_t ctx, size_t count, size_t *chunk, size_t *nch);
/* Relative ranks in the binomial subtree of relative rank rr (P ranks):
 * [rr, rr + gz_binomial_subtree(rr, P)); P for the root (rr 0). */
int gz_binomial_subtree(int rr, int P);
/* Copy n elements (memmove semantics). */
void gz_copy(gz_dtype_t dtype, void *dst, const void *src, size_t n);
/* Divide n elements by divisor (nothing when it is 1: the mean's last step). */
void gz_scale(gz_dtype_t dtype, void *buf, size_t n, double divisor);

/* ---- one collective call, described (coll_driver.c) ----------------------- */

/* The arguments of one call, and what the collective's check derives from
 * them for the driver. */
typedef struct gz_args {
  const void *sendbuf; /* as the caller passed them (GZ_IN_PLACE allowed) */
  void *recvbuf;
  size_t count; /* elements per rank (per block) as the model counts them */
  gz_dtype_t dtype;
  gz_op_t op;     /* reductions; GZ_OP_SUM (unused) for data movement */
  int root;       /* rooted collectives; 0 otherwise */
  double divisor; /* the mean's divisor; 1 otherwise */
  /* set by the check: */
  int quantizes;  /* this rank quantizes values (set by the driver) */
  const void *in; /* the values this rank quantizes: n_in of them; */
  size_t n_in;    /* their range is the call's local value range */
  size_t n_codes; /* codes this rank holds while the algorithm runs */
  size_t in_off;  /* where this rank's quantized values start in them */
  void *out;      /* the codes [out_off, out_off + n_out) are */
  size_t out_off; /* dequantized into out at the end (n_out 0: the */
  size_t n_out;   /* algorithm dequantized, or nothing to do) */
  int exact;      /* this rank's result is its own values, copied */
  size_t total;   /* count * P where the call holds P blocks */
  /* the device path (set by the driver before the check) */ gz_exec_t
      *ex; /* NULL: the host path; else &exec (CUDA or CPU backend) */
  gz_exec_t exec;
  int local_dev; /* this rank's buffers: 1 device, 0 host, -1 mixed */
  /* GZ_EB_PWREL (set by the driver before the workspace): the narrow format
   * the values travel in (gz_cast_t of codec/codec.h; 0: codes) */
  int cast;
} gz_args_t;

/* The arguments as a caller passed them (op SUM, root 0, divisor 1: a
 * front-end sets what its collective has). */
static inline gz_args_t gz_args_of(const void *sendbuf, void *recvbuf, size_t count,
                                   gz_dtype_t dtype) {
  gz_args_t a = {.sendbuf = sendbuf,
                 .recvbuf = recvbuf,
                 .count = count,
                 .dtype = dtype,
                 .divisor = 1};
  return a;
}
/* An operation of the reductions. */
static inline int gz_op_valid(gz_op_t op) {
  return op == GZ_OP_SUM || op == GZ_OP_MAX || op == GZ_OP_MIN;
}

/* What an algorithm runs on: the call, and (compressed algorithms) the
 * call's a->n_codes integer codes quantized with bound eb. The MPI path
 * runs on a->sendbuf / a->recvbuf (codes NULL). An algorithm may say more
 * in reason (the report's, else the selection's). */
typedef struct gz_job {
  const gz_args_t *a;
  int64_t *codes;
  double eb;
  gz_run_t *run;
  const gz_algorithm_t *chosen; /* what selection chose (a host row; a
                                   device row of another name may stand in) */
  char reason[96];
  int narrow;        /* codes are int32 (host allreduce whose agreed range fits) */
  void *msg0;        /* first_msg rows: the encoded codes (encode_bound bytes) */
  size_t msg0_size;  /* its size */
  gz_first_t *first; /* host rows with a first hook: the message written while
                        quantizing (NULL: none) */
  int dequantized;   /* out: the algorithm wrote a->out itself (gz_values_t) */
  int64_t amax;      /* out, with dequantized: the largest |result code| */
} gz_job_t;

/* The cost model's inputs for one call (select.c, docs/performance-model.md):
 * P ranks, n elements of D bytes in all, alpha per message, beta seconds per
 * byte, C compressed bytes, t seconds per codec pass of one element,
 * L = ceil(log2 P), g = L alpha (one small status allreduce), beta_x seconds
 * per byte of one whole-buffer exchange (both directions at once, nothing
 * overlapped: the MPI path's rate, as MPI's own allreduce moves its data),
 * beta_link seconds per byte of the link (the probe's blocking ring-neighbour
 * MPI_Sendrecv, unless a pin or MPI's learnt rate set it higher). */
typedef struct gz_cost {
  double P, n, D, alpha, beta, C, t, L, g, beta_x, beta_link;
} gz_cost_t;

/* One row of the registry (registry.def): an algorithm of one collective.
 * Its name is its identity: what GZCOLL_ALGO, cfg.algo, gz_explain and
 * reports say. Rows of several collectives may share a name ("ring"); the
 * name "mpi" is each collective's uncompressed MPI path, with no ws. */
struct gz_algorithm {
  const char *name; /* lower case, < GZ_ALGO_NAME_MAX bytes */
  gz_coll_t coll;
  int device; /* runs on a->ex's backend (calls on device buffers) */
  /* bytes of workspace beyond the call's codes (compressed algorithms) */
  size_t (*ws)(gz_ctx_t ctx, const gz_args_t *a);
  /* run it; a local failure is returned after the last message */
  gz_result_t (*run)(gz_ctx_t ctx, gz_job_t *j);
  /* modelled seconds */
  double (*cost)(const gz_cost_t *c);
  /* device rows: the first message is the call's own codes; the driver
   * quantizes fused with its encoding into j->msg0, which the algorithm
   * sends first and then uses as its send buffer (its ws counts it) */
  int first_msg;
  /* host rows (optional): where their first message lies (f->len 0: none);
   * the driver quantizes those codes fused with its encoding (gz_first_t,
   * j->first) into workspace the row's ws counts */
  void (*first)(gz_ctx_t ctx, const gz_args_t *a, gz_first_t *f);
};

/* The MPI library's own collectives whose cost is (P-1) messages of D
 * bytes (reduce_scatter, allgather, alltoall): g + (P-1)(alpha + D beta). */
double gz_cost_mpi_steps(const gz_cost_t *c);
/* An uncompressed transfer of blocks * count elements by this rank. */
void gz_run_plain(gz_run_t *run, double blocks, size_t count);
/* The MPI path of a collective that moves blocks of a->count elements:
 * call is the MPI call on blocks of n elements of type (a derived datatype
 * above INT_MAX elements), returning MPI's result; on success this rank
 * sent blocks plain blocks (gz_run_plain). */
typedef int (*gz_mpi_blocks_fn)(gz_ctx_t ctx, const gz_args_t *a, int n,
                                MPI_Datatype type);
gz_result_t gz_mpi_blocks(gz_ctx_t ctx, gz_job_t *j, gz_mpi_blocks_fn call,
                          double blocks);

/* The name of the uncompressed MPI path of every collective. */
#define GZ_ALGO_MPI_NAME "mpi"
/* Row i of the registry (0 <= i < GZ_ROWS) and the index of a row. */
const gz_algorithm_t *gz_row(int i);
int gz_row_index(const gz_algorithm_t *row);
/* 1 for an MPI path row ("mpi"). */
int gz_row_is_mpi(const gz_algorithm_t *row);
/* The canonical spelling of an algorithm name (any case, blanks around,
 * aliases resolved): "auto" for auto, the name of some row, or NULL when no
 * collective knows the name (or name is NULL or empty). */
const char *gz_algo_canon(const char *name);
/* The host row of coll named name (canonical; p2p: any name but mpi is its
 * one compressed row); NULL when no algorithm of coll has that name. */
const gz_algorithm_t *gz_algorithm(gz_coll_t coll, const char *name);
/* The device row of coll named name, else coll's compressed device row
 * standing in for a compressed algorithm without a device variant; NULL
 * when none. */
const gz_algorithm_t *gz_algorithm_device(gz_coll_t coll, const char *name);

/* A collective, described once. */
typedef struct gz_coll_desc {
  gz_coll_t coll;
  int reduces; /* combines values with a->op: SUM plans for P terms */
  int rooted;  /* only the root's values are quantized (the value range) */
  /* argument checks: fill the derived fields of a; GZ_ERR_ARG when invalid
   * (remembered, agreed) */
  gz_result_t (*check)(gz_ctx_t ctx, gz_args_t *a);
  int device; /* device buffers take the device rows (a->ex) */
  /* optional, after the final agreement: the rank's own block, copied
   * exactly (with a->ex's memcpy on the device path) */
  gz_result_t (*own)(gz_ctx_t ctx, const gz_args_t *a);
  /* its compressed algorithms can move values cast to a narrower format
   * (GZ_EB_PWREL, codec/cast.c) instead of codes; other collectives take
   * the MPI path under that mode */
  int casts;
} gz_coll_desc_t;

/* Run one call of the collective d (validate, select, plan, reserve,
 * quantize, agree, run, agree, dequantize, report; the MPI path when
 * chosen, degenerate or escaping). */
gz_result_t gz_coll_run(gz_ctx_t ctx, const gz_coll_desc_t *d, gz_args_t *a,
                        gz_report_t *report);

/* ---- the ring pipeline (ring.c) and its two algorithms -------------------- */

typedef struct gz_ring gz_ring_t;
/* What a ring algorithm says: which block goes where, and what is done
 * with a chunk that arrives. */
typedef struct gz_ring_ops {
  int lag;     /* in step s rank r sends block (r - s - lag) mod P */
  int tag_set; /* its two tag sets: tag_set, tag_set + 1 (of 4) */
  int keep;    /* 1: a slot per (block, chunk) kept to the end (chunks are
                  forwarded from where they arrived); 0: two send sets by
                  step parity and one receive set */
  /* Chunk k of block b arrived in step s (bytes at in); next: the block
   * travels on in step s + 1 (the algorithm sends it with gz_ring_send or
   * gz_ring_encode_send). Returns GZ_ERR_MPI only; codec failures go to
   * gz_ring_note. */
  gz_result_t (*arrived)(gz_ring_t *g, int s, int b, size_t k, const unsigned char *in,
                         size_t bytes, int next);
} gz_ring_ops_t;

struct gz_ring {
  gz_ctx_t ctx;
  const gz_ring_ops_t *ops;
  void *acc;  /* count codes in P blocks (gz_block_off) */
  int narrow; /* int32 codes */
  size_t count, chunk, nch, cap;
  gz_op_t op;
  int P, r, left, right;
  unsigned char *slots;                  /* cap bytes each */
  unsigned char *send_set[2], *recv_set; /* without keep: the three sets */
  const gz_first_t *pre; /* step 0's chunks, already encoded (may be NULL) */
  gz_values_t *vals;     /* the blocks wanted as values there (may be NULL) */
  MPI_Request *sreq, *rreq;
  int *idx;
  MPI_Status *st;
  size_t pending; /* receives of the current step not yet processed */
  gz_result_t local;
  gz_run_t *run;
};

/* A ring algorithm's first message (its row's first hook): block r - 1 of
 * count codes in the pipeline's chunks, not kept (step 0 sends it and the
 * ring never reads its codes). gz_ring_first_ws: ws plus its buffer and
 * sizes (taken by the driver). */
void gz_ring_first(gz_ctx_t ctx, size_t count, gz_first_t *f);
size_t gz_ring_first_ws(gz_ctx_t ctx, size_t count, size_t ws);
/* pre: step 0's chunks come encoded (they use one set of slots less) */
size_t gz_ring_ws(gz_ctx_t ctx, const gz_ring_ops_t *ops, size_t count, int pre);
/* Run the P-1 steps of the ring; the first local failure or GZ_OK.
 * pre (may be NULL, not with keep): step 0's chunks, encoded by the
 * driver's quantization (gz_first_t); its message buffer serves as the
 * first send set. vals (may be NULL): the blocks are wanted as values; the
 * block sent in step 0 is dequantized chunk by chunk right after its encode
 * (the algorithm's arrived hook writes the others). */
gz_result_t gz_ring_run(gz_ctx_t ctx, const gz_ring_ops_t *ops, void *acc, int narrow,
                        size_t count, gz_op_t op, const gz_first_t *pre,
                        gz_values_t *vals, gz_run_t *run);
/* Chunk k of block b: its codes in acc, its first element and its length. */
void *gz_ring_codes(const gz_ring_t *g, int b, size_t k);
size_t gz_ring_off(const gz_ring_t *g, int b, size_t k);
size_t gz_ring_chunk_len(const gz_ring_t *g, int b, size_t k);
/* Send the size bytes in the send slot of (s, b, k) as step s (with keep,
 * the slot it arrived in: a forward). */
gz_result_t gz_ring_send(gz_ring_t *g, int s, int b, size_t k, size_t size);
/* Encode chunk k of block b into its send slot and send it as step s. */
gz_result_t gz_ring_encode_send(gz_ring_t *g, int s, int b, size_t k);
/* Remember the first local failure. */
void gz_ring_note(gz_ring_t *g, gz_result_t rc);

/* pre: step 0's chunks come encoded (gz_first_t; they use one set of slots
 * less) */
size_t gz_reduce_scatter_ring_ws(gz_ctx_t ctx, size_t count, int pre);
size_t gz_allgather_ring_ws(gz_ctx_t ctx, size_t count);
/* acc: count codes split in P blocks (gz_block_off); out: block r of rank r
 * reduced over all ranks (other blocks clobbered). pre (may be NULL): block
 * r - 1, sent in step 0, already encoded in chunks (its codes are not read). */
gz_result_t gz_reduce_scatter_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                                   gz_op_t op, const gz_first_t *pre, gz_run_t *run);
/* acc: count codes in P blocks, block r valid on rank r; out: every block on
 * every rank. Each block is encoded once by its owner. With vals (may be
 * NULL) the blocks are written as values there instead (the own block
 * dequantized after its encoding, the others decoded straight into values);
 * acc then holds only block r. */
gz_result_t gz_allgather_ring(gz_ctx_t ctx, void *acc, int narrow, size_t count,
                              gz_values_t *vals, gz_run_t *run);

/* ---- device-centric paths (device/, *_device.c) ------------------------- */

/* Tag of the device algorithms (their own, never mixed with the others). */
#define GZ_TAG_DEVICE 5
/* Elements per piece of the uncompressed (escape / mpi) path on device
 * buffers, the same on every rank. */
#define GZ_DEV_PIECE ((size_t)1 << 20)

/* At gz_ctx_create (after the configuration): read GZCOLL_BACKEND and
 * GZCOLL_CUDA_AWARE, and with cfg.device_pool_bytes > 0 allocate this rank's
 * device pool, pinned staging and streams (a rank without a device gets a
 * host staging buffer only). Local result; the caller agrees. */
gz_result_t gz_dev_ctx_setup(gz_ctx_t ctx);
void gz_dev_ctx_teardown(gz_ctx_t ctx);

/* Whether this call takes the device path: with ctx->dev_enabled, one
 * MPI_Allreduce(MAX) of "some buffer of mine is device memory" (or
 * GZCOLL_BACKEND=ops); 0 without a device pool (no communication).
 * *local_dev: this rank's buffers are on the device. */
gz_result_t gz_dev_path(gz_ctx_t ctx, const void *a, const void *b, int *any,
                        int *local_dev);
/* The call's memory: the device pool or the host workspace. */
gz_result_t gz_dev_reserve(gz_ctx_t ctx, int on_device, size_t bytes);
void *gz_dev_take(gz_ctx_t ctx, int on_device, size_t n, size_t elem);
/* ctx->size + 1 host-readable u64 slots (pinned with a device). */
uint64_t *gz_dev_size_slots(gz_ctx_t ctx);
/* An exec on stream slot s: the CUDA backend when on_device, else the CPU. */
void gz_exec_make(gz_ctx_t ctx, int on_device, int s, gz_exec_t *ex);
/* Move ssize bytes to dest / up to rcap bytes from src like gz_xfer, where
 * sbuf and rbuf live on the exec's backend: device memory goes through MPI
 * directly when ctx->cuda_aware, else through the pinned staging stage
 * (room for ssize + rcap bytes). */
gz_result_t gz_dev_xfer(gz_ctx_t ctx, gz_exec_t *ex, int tag, const void *sbuf,
                        size_t ssize, int dest, void *rbuf, size_t rcap, int src,
                        size_t *rsize, unsigned char *stage, gz_run_t *run);

#endif
