/*
 * stack_read_root.c - step 2 of `gzstack stack` with --read root: rank 0
 * reads; round k sends snapshot kP + q to rank q with gz_scatter
 * (compressed, one quantization per value) and the missing-value mask as
 * packed bits (MPI_Scatter). The scatter moves doubles converted from the
 * input's values, so its only rounding is the double reconstruction; its
 * bytes_raw is counted at the input's element size. When the library would
 * not compress, the snapshots move exactly in their own type. The bound is
 * split between the scatter and the allreduce (stack_bound.h); --eb-mode
 * rel makes rank 0 read everything twice (the range first). With --verify,
 * rank 0 also accumulates the original values (the exact reference).
 */
#include "stack_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0: the reader of file f, reusing the open one. */
static gz_reader_t *reader_for(const gzs_opts_t *o, gz_reader_t **cur, int *cur_f, int f,
                               char *err, size_t errlen) {
  if (*cur && *cur_f == f)
    return *cur;
  gz_reader_close(*cur);
  *cur = NULL;
  *cur_f = -1;
  if (gzs_open_input(o, o->inputs[f], MPI_COMM_SELF, cur, err, errlen) != 0)
    return NULL;
  *cur_f = f;
  return *cur;
}

/* Rank 0 with --eb-mode rel: the range of the valid values, read first. */
static int root_range(const gzs_opts_t *o, gzs_run_t *r, double *lo, double *hi,
                      char *err, size_t errlen) {
  size_t slab = gzs_slab_values(o), M = r->npoints, blen = M < slab ? M : slab;
  double *buf = malloc(sizeof(double) * blen + 1);
  gz_reader_t *cur = NULL;
  int cur_f = -1, rc = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  if (!buf) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint64_t g = 0; g < r->nsnap && rc == 0; g++) {
    uint64_t rec;
    int f = gzs_locate(r, g, &rec);
    gz_reader_t *rd = reader_for(o, &cur, &cur_f, f, err, errlen);
    if (!rd) {
      rc = -1;
      break;
    }
    for (size_t off = 0; off < M && rc == 0; off += blen) {
      size_t n = M - off < blen ? M - off : blen;
      double t0 = MPI_Wtime();
      if (gzs_read_part(rd, rec, off, n, M, buf, err, errlen) != 0) {
        rc = -1;
        break;
      }
      r->t.read += MPI_Wtime() - t0;
      for (size_t i = 0; i < n; i++) {
        double v = buf[i];
        if (isfinite(v) && !(r->files[f].has_fill && v == r->files[f].fill)) {
          *lo = v < *lo ? v : *lo;
          *hi = v > *hi ? v : *hi;
        }
      }
    }
  }
  gz_reader_close(cur);
  free(buf);
  return rc;
}

/* Would the scatter of n doubles go uncompressed? Then the snapshots move
 * exactly, in their own type, with MPI_Scatter (half the bytes of doubles
 * for float32 inputs). The library's choice is read from gz_explain's
 * "...: ALGO (" (same answer on every rank); anything unexpected keeps the
 * compressed scatter. */
static int scatter_is_mpi(gz_ctx_t ctx, size_t n, const gzs_opts_t *o,
                          const gzs_run_t *r) {
  char buf[512];
  const char *p;
  if (!strcmp(gzs_algo_name(o), "mpi") || !(r->e_scatter > 0))
    return 1;
  if (gz_explain(ctx, "scatter", n, GZ_FLOAT64, buf, sizeof buf) != GZ_OK)
    return 0;
  p = strstr(buf, " ranks: ");
  return p && !strncmp(p + 8, "mpi (", 5);
}

/* Exact scatter in the input's type. conv (float32 inputs): room for
 * (P + 1) n floats on rank 0, n elsewhere. */
static int plain_scatter(const gzs_run_t *r, const double *send, double *recv,
                         float *conv, size_t n, MPI_Comm comm, gz_report_t *rep) {
  int P = r->size, rc;
  memset(rep, 0, sizeof *rep);
  rep->algo = "mpi";
  snprintf(rep->reason, sizeof rep->reason,
           "uncompressed MPI_Scatter in the input's type");
  if (r->dtype == GZ_FLOAT32) {
    float *rf = r->rank == 0 ? conv + (size_t)P * n : conv;
    if (r->rank == 0)
      for (size_t i = 0; i < n * (size_t)P; i++)
        conv[i] = (float)send[i]; /* exact: the values were read as float */
    rc = MPI_Scatter(conv, (int)n, MPI_FLOAT, rf, (int)n, MPI_FLOAT, 0, comm);
    for (size_t i = 0; i < n; i++)
      recv[i] = rf[i];
  } else {
    rc = MPI_Scatter(send, (int)n, MPI_DOUBLE, recv, (int)n, MPI_DOUBLE, 0, comm);
  }
  if (r->rank == 0)
    rep->bytes_raw = rep->bytes_sent = (uint64_t)(P - 1) * n * gz_dtype_size(r->dtype);
  return rc == MPI_SUCCESS ? 0 : -1;
}

int gzs_read_root(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                  size_t errlen) {
  int P = r->size, rank = r->rank, failed = 0, cur_f = -1;
  size_t slab = gzs_slab_values(o), M = r->npoints, blen, nbytes;
  double *send = NULL, *recv = NULL;
  float *conv = NULL;
  unsigned char *bits = NULL, *mybits = NULL;
  gz_reader_t *cur = NULL;
  gz_ctx_t ctx = NULL;
  gz_config_t cfg = GZ_CONFIG_INIT;
  gzs_acc_t s;
  gzs_acc_t ex;
  uint32_t *ex_counts = NULL; /* rank 0's own counts (the global ones are used) */
  uint64_t rounds = (r->nsnap + (uint64_t)P - 1) / (uint64_t)P;
  gz_result_t grc;
  double range[2] = {0, 0};
  int first_report = 1;
  double t_setup;

  /* slabs: rank 0 holds P of them */
  blen = slab / (size_t)P;
  blen = blen < 1024 ? 1024 : blen;
  blen = blen > M ? M : blen;
  blen = blen > GZS_MPI_CHUNK ? GZS_MPI_CHUNK : blen;
  nbytes = (blen + 7) / 8;
  gzs_acc_init(&s, o->op, NULL, &r->counts, M);
  gzs_acc_init(&ex, o->op, NULL, &ex_counts, M);

  /* the absolute bound, first (rel: from rank 0's pre-pass), and its split
   * between the scatter and the allreduce */
  if (o->eb_mode == GZ_EB_REL && o->e > 0) {
    if (rank == 0 && root_range(o, r, &range[0], &range[1], err, errlen) != 0)
      failed = 1;
    if (gzs_agree(comm, failed, err))
      return -1;
    MPI_Bcast(range, 2, MPI_DOUBLE, 0, comm);
  }
  r->e_abs = gzs_bound_abs(o->e, o->eb_mode, range[0], range[1]);
  {
    gzs_split_t split = gzs_bound_split(o->op, o->bound, 1, r->e_abs, r->nsnap);
    r->e_scatter = split.e_scatter;
    r->e_allreduce = split.e_allreduce;
  }

  r->acc = s.acc = gzs_acc_alloc(o->op, M);
  recv = malloc(sizeof(double) * blen + 1);
  mybits = malloc(nbytes + 1);
  if (r->dtype == GZ_FLOAT32)
    conv = malloc(sizeof(float) * blen * (size_t)(rank == 0 ? P + 1 : 1));
  if (rank == 0) {
    send = malloc(sizeof(double) * blen * (size_t)P + 1);
    bits = malloc(nbytes * (size_t)P + 1);
    if (o->verify)
      r->exact = ex.acc = gzs_acc_alloc(o->op, M);
  }
  if (!r->acc || !recv || !mybits || (r->dtype == GZ_FLOAT32 && !conv) ||
      (rank == 0 && (!send || !bits)) || (rank == 0 && o->verify && !ex.acc)) {
    snprintf(err, errlen, "out of memory for snapshots of %zu values", M);
    failed = 1;
  }
  if (gzs_agree(comm, failed, err)) {
    failed = 1;
    goto fail;
  }

  cfg.error_bound = r->e_scatter > 0 ? r->e_scatter : 1.0;
  cfg.bound_policy = GZ_BOUND_STRICT; /* scatter: one quantization of e_scatter */
  snprintf(cfg.algo, sizeof cfg.algo, "%s",
           !strcmp(gzs_algo_name(o), "mpi") || !(r->e_scatter > 0) ? "mpi" : "auto");
  t_setup = MPI_Wtime();
  grc = gz_ctx_create(comm, &cfg, &ctx);
  r->t.setup += MPI_Wtime() - t_setup;
  if (grc != GZ_OK) {
    snprintf(err, errlen, "compressed scatter: %s", gz_strerror(grc));
    failed = 1;
  }
  if (gzs_agree(comm, failed, err)) {
    failed = 1;
    goto fail;
  }

  for (uint64_t k = 0; k < rounds && !failed; k++) {
    int oom = 0;
    for (size_t off = 0; off < M && !failed; off += blen) {
      size_t n = M - off < blen ? M - off : blen, nb = (n + 7) / 8;
      int hdr[2] = {0, 0}; /* status, any value missing */
      uint64_t g = k * (uint64_t)P + (uint64_t)rank;
      gz_report_t rep;
      if (rank == 0) {
        memset(bits, 0, nb * (size_t)P);
        for (int q = 0; q < P && !hdr[0]; q++) {
          uint64_t gq = k * (uint64_t)P + (uint64_t)q, rec;
          double *x = send + (size_t)q * n, t0 = MPI_Wtime();
          unsigned char *bq = bits + (size_t)q * nb;
          const gzs_file_t *fi;
          gz_reader_t *rd;
          if (gq >= r->nsnap) {
            memset(x, 0, sizeof(double) * n);
            continue;
          }
          fi = &r->files[gzs_locate(r, gq, &rec)];
          if (!(rd = reader_for(o, &cur, &cur_f, (int)(fi - r->files), err, errlen)) ||
              gzs_read_part(rd, rec, off, n, M, x, err, errlen) != 0) {
            hdr[0] = 1;
            break;
          }
          r->t.read += MPI_Wtime() - t0;
          if (ex.acc &&
              gzs_accumulate(&ex, x, off, n, fi->has_fill, fi->fill, NULL) != 0) {
            snprintf(err, errlen, "out of memory for the per-point counts");
            hdr[0] = 1;
          }
          for (size_t i = 0; i < n; i++) {
            if (!isfinite(x[i]) || (fi->has_fill && x[i] == fi->fill)) {
              x[i] = 0.0;
              bq[i >> 3] |= (unsigned char)(1u << (i & 7));
              hdr[1] = 1;
            }
          }
        }
      }
      MPI_Bcast(hdr, 2, MPI_INT, 0, comm);
      if (hdr[0]) { /* rank 0 could not read: it says why, everyone stops */
        if (rank == 0)
          fprintf(stderr, "gzstack stack: %s\n", err);
        failed = 1;
        break;
      }
      if (hdr[1]) {
        double t0 = MPI_Wtime();
        MPI_Scatter(bits, (int)nb, MPI_BYTE, mybits, (int)nb, MPI_BYTE, 0, comm);
        r->t.communicate += MPI_Wtime() - t0;
        if (rank == 0)
          r->mask_bytes += (uint64_t)nb * (uint64_t)(P - 1);
      }
      if (scatter_is_mpi(ctx, n, o, r)) {
        double t0 = MPI_Wtime();
        if (plain_scatter(r, send, recv, conv, n, comm, &rep) != 0) {
          if (rank == 0)
            fprintf(stderr, "gzstack stack: MPI_Scatter failed\n");
          failed = 1;
          break;
        }
        rep.seconds = MPI_Wtime() - t0;
      } else {
        grc = gz_scatter(ctx, send, recv, n, GZ_FLOAT64, 0, &rep);
        if (grc != GZ_OK) { /* agreed by the library */
          if (rank == 0)
            fprintf(stderr, "gzstack stack: compressed scatter failed: %s\n",
                    gz_strerror(grc));
          failed = 1;
          break;
        }
        rep.bytes_raw =
            rep.bytes_raw / 8 * gz_dtype_size(r->dtype); /* at the input's size */
      }
      gzs_report_add(&r->sc, &rep, first_report);
      first_report = 0;
      if (g < r->nsnap &&
          gzs_accumulate(&s, recv, off, n, 0, 0.0, hdr[1] ? mybits : NULL) != 0)
        oom = 1;
    }
    if (failed)
      break;
    if (k * (uint64_t)P + (uint64_t)rank < r->nsnap)
      s.done++;
    ex.done += (uint64_t)P;
    if (gzs_agree(comm, oom, "out of memory for the per-point counts")) {
      failed = 1;
      break;
    }
    gzs_progress(o, r, 0, "reading and scattering: %llu/%llu snapshots",
                 (unsigned long long)((k + 1) * (uint64_t)P < r->nsnap
                                          ? (k + 1) * (uint64_t)P
                                          : r->nsnap),
                 (unsigned long long)r->nsnap);
  }
  r->have_scatter = 1;
  r->t.compress += r->sc.seconds_codec; /* the scatter's time, in this phase */
  r->t.communicate += r->sc.seconds - r->sc.seconds_codec;
  r->lo = s.lo;
  r->hi = s.hi;
fail:
  free(ex_counts);
  gz_reader_close(cur);
  gz_ctx_destroy(ctx);
  free(send);
  free(recv);
  free(conv);
  free(bits);
  free(mybits);
  return failed ? -1 : 0;
}
