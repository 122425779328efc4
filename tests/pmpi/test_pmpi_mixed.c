/*
 * test_pmpi_mixed.c - legal MPI programs whose ranks describe the same
 * message differently must neither hang nor change result under
 * libgzcoll_pmpi (issue 14).
 *
 * MPI requires only matching type signatures for the data-movement
 * collectives, so one rank may send n MPI_FLOAT while another receives one
 * contiguous type of n floats, a vector with gaps or a struct. For every
 * intercepted data-movement collective (bcast, scatter, allgather,
 * alltoall) and both element types, each case gives every rank a
 * description of its send and receive side:
 *   basic      n MPI_FLOAT / MPI_DOUBLE
 *   contig     1 MPI_Type_contiguous(n)
 *   vector     1 MPI_Type_vector(n/2, 2, 3): pairs with one-element gaps
 *   struct     n/2 of a struct {x at 0, x at 2} resized to 3 elements
 * in patterns: all basic (the control: routed and compressed when the
 * message is at least GZCOLL_MIN_BYTES), the root (rank 0 for allgather and
 * alltoall) derived and the others basic, the reverse, odd ranks derived,
 * one rank's send side derived and its receive side basic, all derived;
 * in place where MPI allows it; counts 12 (the scatter), 4098 and
 * 10000 (above the default threshold at every rank count). Reductions
 * (allreduce, reduce_scatter_block) run with plain types for completeness.
 *
 * Checks, per call: every received element equals the value sent (exactly:
 * the test runs integer-valued data with GZCOLL_BOUND=per-message
 * GZCOLL_ERROR_BOUND=0.25, a quantization step of 1/2; with --real,
 * real-valued data within the bound when the call was compressed, exactly
 * otherwise; a SUM within e plus half an ulp of the exact sum, the
 * documented semantics, also with a bound below the data's ulp, variant
 * _tiny), the gaps of a derived receive buffer are untouched, bcast and
 * allgather leave the same values on every rank, reductions equal the PMPI_
 * result bit for bit (integer data), and the library's counters show the
 * call routed and compressed exactly when every rank described it with the
 * same predefined type and the message reaches the threshold, passed
 * through otherwise. Before issue 14 this program hung on its first mixed
 * call.
 */
#include "gz_test.h"
#include "pmpi_data.h"
#include "pmpi_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_ALLREDUCE, K_RSB, K_ALLGATHER, K_BCAST, K_SCATTER, K_ALLTOALL };
enum { D_BASIC, D_CONTIG, D_VECTOR, D_STRUCT, D_COUNT };
static const char *const desc_names[D_COUNT] = {"basic", "contig", "vector", "struct"};

/* Which ranks describe which side with the derived type d. */
enum {
  P_ALL_BASIC,      /* control */
  P_ROOT_DERIVED,   /* root (or rank 0) derived, others basic */
  P_OTHERS_DERIVED, /* the reverse */
  P_ODD_DERIVED,    /* odd ranks derived */
  P_SEND_DERIVED,   /* last rank: send side derived, receive side basic */
  P_ALL_DERIVED,
  P_COUNT
};
static const char *const pattern_names[P_COUNT] = {
    "all basic",   "root derived",          "others derived",
    "odd derived", "one send side derived", "all derived"};

#define SENTINEL (-7777.5)

static int rank, nranks, real_mode;
static double e;
static size_t min_bytes;
static long cases;
static int trace; /* PMPI_MIXED_TRACE=1: one line per call on rank 0 */

/* A description of one block of n elements of base type t. */
typedef struct desc {
  int kind;
  MPI_Datatype type; /* committed (or the predefined type) */
  int count;         /* count argument for one block */
  size_t extent;     /* elements spanned by one block */
} desc_t;

/* Buffer position (in elements) of element i of a block. */
static size_t elem_pos(int kind, size_t i) {
  switch (kind) {
  case D_VECTOR:
    return i / 2 * 3 + i % 2;
  case D_STRUCT:
    return i / 2 * 3 + i % 2 * 2;
  default:
    return i;
  }
}

static desc_t make_desc(int kind, const pmpi_type_t *t, size_t n) {
  desc_t d = {kind, t->type, (int)n, n};
  MPI_Datatype tmp;
  switch (kind) {
  case D_CONTIG:
    MPI_Type_contiguous((int)n, t->type, &d.type);
    d.count = 1;
    break;
  case D_VECTOR:
    MPI_Type_vector((int)n / 2, 2, 3, t->type, &d.type);
    d.count = 1;
    d.extent = (n / 2 - 1) * 3 + 2;
    break;
  case D_STRUCT: {
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {0, 2 * (MPI_Aint)t->esz};
    MPI_Datatype types[2] = {t->type, t->type};
    MPI_Type_create_struct(2, lens, disp, types, &tmp);
    MPI_Type_create_resized(tmp, 0, 3 * (MPI_Aint)t->esz, &d.type);
    MPI_Type_free(&tmp);
    d.count = (int)n / 2;
    d.extent = n / 2 * 3;
    break;
  }
  default:
    return d;
  }
  MPI_Type_commit(&d.type);
  return d;
}

static void free_desc(desc_t *d) {
  if (d->kind != D_BASIC)
    MPI_Type_free(&d->type);
}

/* The description rank r uses for its send (side 0) or receive (side 1)
 * side under pattern p with derived kind dk; root is rank 0 where the
 * collective has none. */
static int desc_of(int p, int dk, int r, int root, int side) {
  switch (p) {
  case P_ROOT_DERIVED:
    return r == root ? dk : D_BASIC;
  case P_OTHERS_DERIVED:
    return r != root ? dk : D_BASIC;
  case P_ODD_DERIVED:
    return r % 2 ? dk : D_BASIC;
  case P_SEND_DERIVED:
    return r == nranks - 1 && side == 0 ? dk : D_BASIC;
  case P_ALL_DERIVED:
    return dk;
  default:
    return D_BASIC;
  }
}

/* Buffers of `blocks` blocks in description d, filled with the sentinel. */
static void *alloc_blocks(const pmpi_type_t *t, const desc_t *d, int blocks) {
  size_t len = d->extent * (size_t)blocks + 1;
  void *buf = malloc(len * t->esz);
  for (size_t k = 0; k < len; k++)
    pmpi_set(t, buf, k, SENTINEL);
  return buf;
}

static size_t pos(const desc_t *d, int b, size_t i) {
  return (size_t)b * d->extent + elem_pos(d->kind, i);
}

/* Write the values of sender s, logical indices first.. into block b. */
static void put_block(const pmpi_type_t *t, const desc_t *d, void *buf, int b, size_t n,
                      int s, size_t first, int salt) {
  for (size_t i = 0; i < n; i++)
    pmpi_set(t, buf, pos(d, b, i), pmpi_input(t, !real_mode, s, first + i, salt));
}

typedef struct tally {
  size_t wrong, gaps;
  double worst;
} tally_t;

/* Compare block b of buf against sender s's values; tol 0 = exact. */
static void check_block(tally_t *ty, const pmpi_type_t *t, const desc_t *d,
                        const void *buf, int b, size_t n, int s, size_t first, int salt,
                        double tol, double *logical) {
  for (size_t i = 0; i < n; i++) {
    double want = pmpi_input(t, !real_mode, s, first + i, salt);
    double got = pmpi_get(t, buf, pos(d, b, i));
    double err = fabs(got - want);
    if (logical)
      logical[(size_t)b * n + i] = got;
    if (tol > 0 ? !(err <= pmpi_tol(want, tol, t->is_float)) : got != want)
      ty->wrong++;
    if (err > ty->worst)
      ty->worst = err;
  }
  /* the gaps between elements of a non-contiguous description (a vector's
   * extent ends with its last pair: the next block follows at once) */
  if (d->kind == D_VECTOR || d->kind == D_STRUCT)
    for (size_t i = 0; i + (d->kind == D_VECTOR ? 2 : 1) < n; i += 2) {
      size_t g = (size_t)b * d->extent + i / 2 * 3 + (d->kind == D_VECTOR ? 2 : 1);
      if (pmpi_get(t, buf, g) != SENTINEL)
        ty->gaps++;
    }
}

static unsigned long long snap[6][7];

static void counters_before(int kind) { pmpi_counters(pmpi_kinds[kind], snap[kind]); }

/* Routed exactly when expected; compressed when routed (forced algorithms). */
static void counters_after(int kind, int routed, const char *what) {
  unsigned long long c[7];
  pmpi_counters(pmpi_kinds[kind], c);
  GZ_CHECK(c[PC_ROUTED] - snap[kind][PC_ROUTED] == (unsigned)routed &&
               c[PC_PASSED] - snap[kind][PC_PASSED] == (unsigned)!routed &&
               c[PC_FALLBACK] == snap[kind][PC_FALLBACK],
           "%s: routed +%llu passed +%llu fallback +%llu, expected routed %d", what,
           c[PC_ROUTED] - snap[kind][PC_ROUTED], c[PC_PASSED] - snap[kind][PC_PASSED],
           c[PC_FALLBACK] - snap[kind][PC_FALLBACK], routed);
  GZ_CHECK(c[PC_COMPRESSED] - snap[kind][PC_COMPRESSED] == (unsigned)routed,
           "%s: routed but not compressed", what);
}

/* Whether the library must route the call: every rank uses the predefined
 * type on every side it describes, and the message (bytes of the largest
 * buffer of one rank) reaches the threshold. */
static int expect_routed(int all_basic, size_t bytes) {
  return all_basic && nranks > 1 && bytes > 0 && bytes >= min_bytes;
}

static void report(const char *what, const tally_t *ty, int same) {
  if (trace && rank == 0)
    fprintf(stderr, "done: %s\n", what);
  GZ_CHECK(ty->wrong == 0, "%s: %zu elements wrong (max |err| %g)", what, ty->wrong,
           ty->worst);
  GZ_CHECK(ty->gaps == 0, "%s: %zu gaps of the receive type overwritten", what, ty->gaps);
  GZ_CHECK(same, "%s: ranks hold different values", what);
  cases++;
}

static int same_logical(const double *v, size_t n) {
  return pmpi_same_on_all(v, n * sizeof *v, MPI_COMM_WORLD);
}

/* ---- the four data-movement collectives --------------------------------- */

static void run_bcast(const pmpi_type_t *t, size_t n, int p, int dk, int salt) {
  int root = nranks - 1, all_basic = 1, routed;
  desc_t d = make_desc(desc_of(p, dk, rank, root, 1), t, n);
  void *buf = alloc_blocks(t, &d, 1);
  double *logical = malloc(n * sizeof *logical);
  tally_t ty = {0, 0, 0};
  char what[128];
  for (int r = 0; r < nranks; r++)
    all_basic &= desc_of(p, dk, r, root, 1) == D_BASIC;
  routed = expect_routed(all_basic, n * t->esz);
  snprintf(what, sizeof what, "bcast %s n=%zu %s (%s)", t->name, n, pattern_names[p],
           desc_names[dk]);
  if (rank == root)
    put_block(t, &d, buf, 0, n, root, 0, salt);
  counters_before(K_BCAST);
  GZ_CHECK(MPI_Bcast(buf, d.count, d.type, root, MPI_COMM_WORLD) == MPI_SUCCESS, "%s",
           what);
  counters_after(K_BCAST, routed, what);
  check_block(&ty, t, &d, buf, 0, n, root, 0, salt, routed && real_mode ? e : 0, logical);
  report(what, &ty, same_logical(logical, n));
  free(buf);
  free(logical);
  free_desc(&d);
}

static void run_scatter(const pmpi_type_t *t, size_t n, int p, int dk, int in_place,
                        int salt) {
  int root = nranks / 2, all_basic = 1, routed, is_root = rank == root;
  desc_t ds = make_desc(desc_of(p, dk, rank, root, 0), t, n);
  desc_t dr = make_desc(desc_of(p, dk, rank, root, 1), t, n);
  void *send = is_root ? alloc_blocks(t, &ds, nranks) : NULL;
  void *recv = alloc_blocks(t, &dr, 1);
  tally_t ty = {0, 0, 0};
  char what[128];
  /* significant: the root's send side (and its receive side unless in
   * place), every other rank's receive side */
  for (int r = 0; r < nranks; r++) {
    if (r == root)
      all_basic &= desc_of(p, dk, r, root, 0) == D_BASIC &&
                   (in_place || desc_of(p, dk, r, root, 1) == D_BASIC);
    else
      all_basic &= desc_of(p, dk, r, root, 1) == D_BASIC;
  }
  routed = expect_routed(all_basic, n * t->esz * (size_t)nranks);
  snprintf(what, sizeof what, "scatter %s n=%zu %s (%s)%s", t->name, n, pattern_names[p],
           desc_names[dk], in_place ? " in place" : "");
  if (is_root)
    for (int b = 0; b < nranks; b++)
      put_block(t, &ds, send, b, n, root, (size_t)b * n, salt);
  counters_before(K_SCATTER);
  if (is_root)
    GZ_CHECK(MPI_Scatter(send, ds.count, ds.type, in_place ? MPI_IN_PLACE : recv,
                         dr.count, dr.type, root, MPI_COMM_WORLD) == MPI_SUCCESS,
             "%s", what);
  else /* the send arguments are not significant here */
    GZ_CHECK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, recv, dr.count, dr.type, root,
                         MPI_COMM_WORLD) == MPI_SUCCESS,
             "%s", what);
  counters_after(K_SCATTER, routed, what);
  if (is_root && in_place) /* the root's block stays where it is, untouched */
    check_block(&ty, t, &ds, send, root, n, root, (size_t)root * n, salt, 0, NULL);
  else
    check_block(&ty, t, &dr, recv, 0, n, root, (size_t)rank * n, salt,
                routed && real_mode ? e : 0, NULL);
  report(what, &ty, 1);
  free(send);
  free(recv);
  free_desc(&ds);
  free_desc(&dr);
}

/* Allgather and alltoall (same signature): whether the call qualifies by
 * its types (every rank's receive side basic, and its send side unless in
 * place), then the call itself, in place or not. */
typedef int (*gather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                         MPI_Comm);
static int all_basic_both(int p, int dk, int in_place) {
  int all_basic = 1;
  for (int r = 0; r < nranks; r++)
    all_basic &= desc_of(p, dk, r, 0, 1) == D_BASIC &&
                 (in_place || desc_of(p, dk, r, 0, 0) == D_BASIC);
  return all_basic;
}
static void call_gather(gather_fn fn, int in_place, const void *send, const desc_t *ds,
                        void *recv, const desc_t *dr, const char *what) {
  if (in_place)
    GZ_CHECK(fn(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, dr->count, dr->type,
                MPI_COMM_WORLD) == MPI_SUCCESS,
             "%s", what);
  else
    GZ_CHECK(fn(send, ds->count, ds->type, recv, dr->count, dr->type, MPI_COMM_WORLD) ==
                 MPI_SUCCESS,
             "%s", what);
}

static void run_allgather(const pmpi_type_t *t, size_t n, int p, int dk, int in_place,
                          int salt) {
  int routed;
  desc_t ds = make_desc(desc_of(p, dk, rank, 0, 0), t, n);
  desc_t dr = make_desc(desc_of(p, dk, rank, 0, 1), t, n);
  void *send = alloc_blocks(t, &ds, 1), *recv = alloc_blocks(t, &dr, nranks);
  double *logical = malloc(n * (size_t)nranks * sizeof *logical);
  tally_t ty = {0, 0, 0};
  char what[128];
  routed = expect_routed(all_basic_both(p, dk, in_place), n * t->esz * (size_t)nranks);
  snprintf(what, sizeof what, "allgather %s n=%zu %s (%s)%s", t->name, n,
           pattern_names[p], desc_names[dk], in_place ? " in place" : "");
  if (in_place)
    put_block(t, &dr, recv, rank, n, rank, 0, salt);
  else
    put_block(t, &ds, send, 0, n, rank, 0, salt);
  counters_before(K_ALLGATHER);
  call_gather(MPI_Allgather, in_place, send, &ds, recv, &dr, what);
  counters_after(K_ALLGATHER, routed, what);
  for (int s = 0; s < nranks; s++)
    check_block(&ty, t, &dr, recv, s, n, s, 0, salt, routed && real_mode ? e : 0,
                logical);
  report(what, &ty, same_logical(logical, n * (size_t)nranks));
  free(send);
  free(recv);
  free(logical);
  free_desc(&ds);
  free_desc(&dr);
}

static void run_alltoall(const pmpi_type_t *t, size_t n, int p, int dk, int in_place,
                         int salt) {
  int routed;
  desc_t ds = make_desc(desc_of(p, dk, rank, 0, 0), t, n);
  desc_t dr = make_desc(desc_of(p, dk, rank, 0, 1), t, n);
  void *send = alloc_blocks(t, &ds, nranks), *recv = alloc_blocks(t, &dr, nranks);
  tally_t ty = {0, 0, 0};
  char what[128];
  routed = expect_routed(all_basic_both(p, dk, in_place), n * t->esz * (size_t)nranks);
  snprintf(what, sizeof what, "alltoall %s n=%zu %s (%s)%s", t->name, n, pattern_names[p],
           desc_names[dk], in_place ? " in place" : "");
  for (int b = 0; b < nranks; b++) {
    if (in_place)
      put_block(t, &dr, recv, b, n, rank, (size_t)b * n, salt);
    else
      put_block(t, &ds, send, b, n, rank, (size_t)b * n, salt);
  }
  counters_before(K_ALLTOALL);
  call_gather(MPI_Alltoall, in_place, send, &ds, recv, &dr, what);
  counters_after(K_ALLTOALL, routed, what);
  for (int s = 0; s < nranks; s++)
    check_block(&ty, t, &dr, recv, s, n, s, (size_t)rank * n, salt,
                routed && real_mode ? e : 0, NULL);
  report(what, &ty, 1);
  free(send);
  free(recv);
  free_desc(&ds);
  free_desc(&dr);
}

/* ---- reductions with plain types ----------------------------------------- */

/* The documented bound of a compressed SUM against the EXACT sum (docs/
 * pmpi.md): bound, plus half an ulp of the result type at the result's
 * magnitude (float32), plus the double roundings 2^-50 (P max|x| + |r|);
 * real inputs lie in [-100, 100). Exact sums of float inputs in double. */
static double sum_tol(const pmpi_type_t *t, double exact, double got, double bound) {
  double rmax = fmax(fabs(got), fabs(exact) + bound);
  double half_ulp = t->is_float && rmax > 0 ? ldexp(1.0, ilogb(rmax) - 24) : 0.0;
  return bound * (1.0 + 1e-12) + half_ulp + ldexp(nranks * 100.0 + rmax, -50);
}

/* The n results of a SUM, element i the sum over the ranks of input
 * first + i: within sum_tol of the exact sum (real data), else equal to it
 * and to PMPI_'s bytes in ref. */
static void check_sum(tally_t *ty, const pmpi_type_t *t, const void *recv,
                      const void *ref, size_t n, size_t first, int salt, double bound,
                      const char *what) {
  for (size_t i = 0; i < n; i++) {
    double exact = 0, got = pmpi_get(t, recv, i);
    for (int r = 0; r < nranks; r++)
      exact += pmpi_input(t, !real_mode, r, first + i, salt);
    if (real_mode ? !(fabs(got - exact) <= sum_tol(t, exact, got, bound)) : got != exact)
      ty->wrong++;
    ty->worst = fmax(ty->worst, fabs(got - exact));
  }
  if (!real_mode)
    GZ_CHECK(memcmp(recv, ref, n * t->esz) == 0, "%s: differs from PMPI_", what);
}

static void run_reductions(const pmpi_type_t *t, size_t n, int in_place, int salt) {
  size_t all = n * (size_t)nranks;
  void *send = malloc(all * t->esz), *recv = malloc(all * t->esz),
       *ref = malloc(all * t->esz);
  double bound =
      real_mode ? (pmpi_env_is("GZCOLL_BOUND", "per-message") ? nranks : 1) * e : 0;
  tally_t ty = {0, 0, 0};
  char what[128];
  int routed;

  /* allreduce SUM over n values */
  snprintf(what, sizeof what, "allreduce %s n=%zu%s", t->name, n,
           in_place ? " in place" : "");
  pmpi_fill(t, !real_mode, send, n, rank, 0, salt);
  PMPI_Allreduce(send, ref, (int)n, t->type, MPI_SUM, MPI_COMM_WORLD);
  if (in_place)
    memcpy(recv, send, n * t->esz);
  routed = expect_routed(1, n * t->esz);
  counters_before(K_ALLREDUCE);
  MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, t->type, MPI_SUM,
                MPI_COMM_WORLD);
  counters_after(K_ALLREDUCE, routed, what);
  check_sum(&ty, t, recv, ref, n, 0, salt, bound, what);
  report(what, &ty, pmpi_same_on_all(recv, n * t->esz, MPI_COMM_WORLD));

  /* reduce_scatter_block SUM, n values per rank */
  snprintf(what, sizeof what, "reduce_scatter_block %s n=%zu%s", t->name, n,
           in_place ? " in place" : "");
  memset(&ty, 0, sizeof ty);
  pmpi_fill(t, !real_mode, send, all, rank, 0, salt + 1);
  PMPI_Reduce_scatter_block(send, ref, (int)n, t->type, MPI_SUM, MPI_COMM_WORLD);
  if (in_place)
    memcpy(recv, send, all * t->esz);
  routed = expect_routed(1, all * t->esz);
  counters_before(K_RSB);
  MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, (int)n, t->type, MPI_SUM,
                           MPI_COMM_WORLD);
  counters_after(K_RSB, routed, what);
  check_sum(&ty, t, recv, ref, n, (size_t)rank * n, salt + 1, bound, what);
  report(what, &ty, 1);
  free(send);
  free(recv);
  free(ref);
}

int main(int argc, char **argv) {
  const size_t counts[3] = {12, 4098, 10000};
  int salt = 0;
  gz_test_init_mpi(&argc, &argv, &rank, &nranks);
  trace = pmpi_env_is("PMPI_MIXED_TRACE", "1");
  real_mode = argc > 1 && strcmp(argv[1], "--real") == 0;
  e = pmpi_env_double("GZCOLL_ERROR_BOUND", 0);
  min_bytes = (size_t)pmpi_env_double("GZCOLL_MIN_BYTES", 65536);
  GZ_CHECK(e > 0, "GZCOLL_ERROR_BOUND must be set by the test");
  GZ_CHECK(pmpi_counter("contexts", 0) == 0 && pmpi_counters("bcast", snap[0]) == 0,
           "libgzcoll_pmpi is not loaded, or made a context before any call");

  for (int ti = 0; ti < 2; ti++) {
    const pmpi_type_t *t = &pmpi_types[ti];
    for (int ci = 0; ci < 3; ci++) {
      size_t n = counts[ci];
      for (int in_place = 0; in_place < 2; in_place++)
        run_reductions(t, n, in_place, ++salt);
      for (int p = 0; p < P_COUNT; p++) {
        /* derived kinds: all three for the mixed patterns, one otherwise */
        int dk_first = p == P_ALL_BASIC ? D_BASIC : D_CONTIG;
        int dk_last = p == P_ALL_BASIC     ? D_BASIC
                      : p == P_ALL_DERIVED ? D_CONTIG
                                           : D_STRUCT;
        for (int dk = dk_first; dk <= dk_last; dk++) {
          run_bcast(t, n, p, dk, ++salt);
          for (int in_place = 0; in_place < 2; in_place++) {
            run_scatter(t, n, p, dk, in_place, ++salt);
            run_allgather(t, n, p, dk, in_place, ++salt);
            run_alltoall(t, n, p, dk, in_place, ++salt);
          }
        }
      }
    }
  }
  if (rank == 0)
    printf("%ld calls checked at %d ranks (min_bytes %zu, %s data)\n", cases, nranks,
           min_bytes, real_mode ? "real" : "integer");
  return gz_test_end_mpi();
}
