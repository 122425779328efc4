/*
 * gzcoll_pmpi.h - internal header of libgzcoll_pmpi, the MPI profiling-
 * interface (PMPI) library that routes qualifying MPI collectives of an
 * unmodified application through libgzcoll. Not installed; the library's
 * only exported symbols are the MPI_* entry points it defines and
 * gzcoll_pmpi_counters() (see gzcoll_pmpi.map).
 *
 * Files
 *   intercept.c   MPI_Allreduce ... MPI_Alltoall: qualify, route, fall back
 *   p2p.c         MPI_Send / MPI_Recv on communicators whose program asserted
 *                 gzcoll_assert_p2p_pairs (MPI_Comm_set_info, _dup_with_info)
 *   lifecycle.c   MPI_Init, MPI_Init_thread, MPI_Finalize hooks
 *   env_config.c  the GZCOLL_* environment variables
 *   comm_cache.c  per-communicator state: agreement communicator, context
 *   report.c      counters, the GZCOLL_VERBOSE exit report, the query call
 *
 * Recursion guard. libgzcoll itself calls MPI_Allreduce, MPI_Bcast, MPI_Send,
 * MPI_Recv ... on its private communicators. Inside this shared object those
 * references are bound at run time like any other (the dynamic linker finds
 * our own MPI_* definitions first, preloaded or linked), so without a guard a
 * compressed allreduce would re-enter MPI_Allreduce here, qualify again and
 * recurse (and create contexts on libgzcoll's private communicators). Every
 * call into libgzcoll therefore runs between gzp_enter() and gzp_leave(), and
 * every entry point first checks gzp_inside: a call made from inside
 * libgzcoll goes straight to PMPI_ and is not counted. The flag is
 * thread-local, so another thread's application call is not mistaken for an
 * inner one.
 */
#ifndef GZCOLL_PMPI_H
#define GZCOLL_PMPI_H

#include "gzcoll.h"

#include <stddef.h>

/* Call kinds, in report order. */
typedef enum gzp_kind {
  GZP_ALLREDUCE = 0,
  GZP_REDUCE_SCATTER_BLOCK,
  GZP_ALLGATHER,
  GZP_BCAST,
  GZP_SCATTER,
  GZP_ALLTOALL,
  GZP_SEND,
  GZP_RECV,
  GZP_KIND_COUNT
} gzp_kind_t;

/* "allreduce", "reduce_scatter_block", ..., "send", "recv". */
const char *gzp_kind_name(gzp_kind_t kind);

/* ---- recursion guard ----------------------------------------------------- */

extern _Thread_local int gzp_inside;
static inline void gzp_enter(void) { gzp_inside++; }
static inline void gzp_leave(void) { gzp_inside--; }

/* ---- configuration (env_config.c) --------------------------------------- */

typedef struct gzp_config {
  int enabled;          /* 0: every call passes through unchanged */
  gz_config_t gz;       /* error bound, mode and policy for libgzcoll */
  size_t min_bytes;     /* smallest message routed through libgzcoll */
  unsigned collectives; /* bit (1u << kind) per intercepted collective */
  int p2p;              /* honour the gzcoll_assert_p2p_pairs info assertion */
  int verbose;          /* exit report */
  char algo[128];       /* GZCOLL_ALGO as given ("" = auto), for the report */
} gzp_config_t;

/* Parse the environment once (thread-safe; needs MPI initialized for the
 * rank-0 warnings) and return the result; never NULL. */
const gzp_config_t *gzp_config(void);

/* Stop honouring the point-to-point assertion (from MPI_Init under
 * MPI_THREAD_MULTIPLE, before any communicator can carry one); p2p.c says so
 * if a program then asserts it. */
void gzp_config_disable_p2p(void);

/* Collective over MPI_COMM_WORLD, from MPI_Init / MPI_Init_thread: one
 * MAX of a hash of the parsed settings; if they differ between ranks (an
 * environment not passed to every rank), every rank switches the library
 * off (pass-through, no report) and rank 0 says so. */
void gzp_config_agree(void);

/* Print one line "gzcoll_pmpi: ..." on rank 0 of MPI_COMM_WORLD. */
void gzp_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- per-communicator state (comm_cache.c) ------------------------------ */

/* What is cached on an intra-communicator of two or more ranks once a call
 * on it was worth considering; identical on every rank of it. */
typedef struct gzp_comm {
  MPI_Comm agree;   /* private duplicate carrying the routing agreements
                       (MPI_COMM_NULL until the first one) */
  int dev_possible; /* some rank may see device memory (agreed, MAX) */
  int refused;      /* pass through for good: gz_ctx_create failed (agreed
                       by libgzcoll) or the duplicate is missing somewhere */
  int p2p;          /* every rank asserted gzcoll_assert_p2p_pairs (agreed in
                       MPI_Comm_set_info / MPI_Comm_dup_with_info); ctx set */
  gz_ctx_t ctx;     /* NULL until the first call agreed compressible */
} gzp_comm_t;

/* The state of comm, set up collectively on first use: every rank of comm
 * reaches this call for the same collective (intercept.c calls it only on
 * decisions every rank computes identically). NULL: pass through (MPI_COMM_
 * NULL, inter-communicator, single rank, or the setup failed somewhere); the
 * decision is cached with the communicator, identical on every rank. */
gzp_comm_t *gzp_comm_get(MPI_Comm comm);
/* Bits of the flag word of a routing agreement (intercept.c): the element
 * type this rank can compress, and (set by gzp_comm_agree) "my agreement
 * duplicate exists". */
#define GZP_F32 1u
#define GZP_F64 2u
#define GZP_AGREE_OK 4u
/* ... and, in the agreement of an info assertion (p2p.c): "my info says
 * true", "my info does not name the key". */
#define GZP_P2P_TRUE 8u
#define GZP_P2P_ABSENT 16u

/* One agreement among the ranks of comm (collective; every rank calls it
 * for the same call): *all = the MPI_BAND of every rank's local word. 0 (and
 * *all = 0, c->refused on every rank) when it could not be carried out. */
int gzp_comm_agree(MPI_Comm comm, gzp_comm_t *c, unsigned local, unsigned *all);
/* The context of comm, created collectively on the first call every rank
 * agreed to compress (libgzcoll agrees on a refusal: c->refused on every
 * rank, NULL from then on). */
gz_ctx_t gzp_comm_context(MPI_Comm comm, gzp_comm_t *c);
/* The context of comm if every rank asserted point-to-point pairing on it
 * (c->p2p), else NULL; never creates one and never communicates. */
gz_ctx_t gzp_comm_p2p_ctx(MPI_Comm comm);
/* Release the state of MPI_COMM_WORLD and MPI_COMM_SELF and the attribute
 * key (collective; from MPI_Finalize before PMPI_Finalize). */
void gzp_comm_finalize(void);

/* ---- counters and report (report.c) ------------------------------------- */

/* A call that went through libgzcoll: its report (NULL if it failed) and
 * wall time; fellback = libgzcoll failed and the call was redone by PMPI. */
void gzp_count_routed(gzp_kind_t kind, const gz_report_t *rep, double seconds,
                      int fellback);
/* A call passed to PMPI_ unchanged (did not qualify). */
void gzp_count_passed(gzp_kind_t kind);
/* Context bookkeeping. */
void gzp_count_ctx(int created);
/* Collective over MPI_COMM_WORLD when verbose: the exit report on rank 0. */
void gzp_report_finalize(void);

#endif
