/*
 * stack_scan.c - step 1 of `gzstack stack`: file i is opened by rank i mod P
 * (independently) for its shape, type, record count and fill value; the
 * table goes to every rank and every snapshot must have the first file's
 * shape and type. Then each rank knows its share of the snapshots:
 *   parallel reading: the contiguous block [N r / P, N (r+1) / P);
 *   root reading: snapshots r, r + P, r + 2P, ... (rank 0 sends them).
 */
#include "stack_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dtype_name(int t) { return t == GZ_FLOAT32 ? "f32" : "f64"; }

static void shape_text(const gzs_file_t *f, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 1; d < f->ndims && n + 24 < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%llu", d > 1 ? "x" : "",
                          (unsigned long long)f->dims[d]);
  if (f->ndims <= 1)
    snprintf(buf, len, "scalar");
  snprintf(buf + strlen(buf), len - strlen(buf), " %s", dtype_name(f->dtype));
}

int gzs_open_input(const gzs_opts_t *o, const char *path, MPI_Comm comm, gz_reader_t **rd,
                   char *err, size_t errlen) {
  gz_raw_opts_t raw = o->raw;
  if (o->have_raw) {
    memmove(raw.dims + 1, o->raw.dims, sizeof(size_t) * (size_t)o->raw.ndims);
    raw.dims[0] = 0; /* the snapshot count follows from the file size */
    raw.ndims = o->raw.ndims + 1;
  }
  return gz_reader_open(path, o->var, o->have_raw ? &raw : NULL, comm, rd, err, errlen);
}

int gzs_scan(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err, size_t errlen) {
  int nf = o->ninputs, P = r->size, failed = 0;
  const int W = 4 + GZ_IO_MAXDIMS; /* uint64 words per file */
  uint64_t *words = calloc((size_t)nf * (size_t)W + 1, sizeof(uint64_t));
  unsigned char **dflags = calloc((size_t)nf + 1, sizeof(unsigned char *));
  unsigned char *dates = NULL;
  double *fills = calloc((size_t)nf + 1, sizeof(double));
  double **tdays = calloc((size_t)nf + 1, sizeof(double *)); /* --group: times */
  double **tym = calloc((size_t)nf + 1, sizeof(double *));
  double **tml = calloc((size_t)nf + 1, sizeof(double *));
  double **tbn = calloc((size_t)nf + 1, sizeof(double *)); /* the input's time bounds */
  int grouped = gzs_need_times(o);

  r->files = calloc((size_t)nf + 1, sizeof(gzs_file_t));
  r->nfiles = nf;
  if (!words || !fills || !r->files || !tdays || !tym || !tml || !tbn) {
    snprintf(err, errlen, "out of memory for %d inputs", nf);
    failed = 1;
  }
  for (int i = r->rank; i < nf && !failed; i += P) {
    gz_reader_t *rd = NULL;
    const gz_meta_t *m;
    uint64_t *w = words + (size_t)i * (size_t)W;
    if (gzs_open_input(o, o->inputs[i], MPI_COMM_SELF, &rd, err, errlen) != 0) {
      failed = 1;
      break;
    }
    m = gz_reader_meta(rd);
    if (m->ndims < 1) {
      snprintf(
          err, errlen,
          "%s: variable %s is a scalar; snapshots are taken along its first dimension",
          o->inputs[i], m->var);
      failed = 1;
    } else if (m->dtype != GZ_FLOAT32 && m->dtype != GZ_FLOAT64) {
      snprintf(err, errlen, "%s: variable %s has an unsupported type", o->inputs[i],
               m->var);
      failed = 1;
    } else {
      w[0] = gz_reader_records(rd);
      w[1] = (uint64_t)gz_reader_format(rd);
      w[2] = (uint64_t)m->dtype;
      w[3] = (uint64_t)m->ndims | ((uint64_t)(m->has_fill != 0) << 32);
      for (int d = 0; d < m->ndims; d++)
        w[4 + d] = m->dims[d];
      fills[i] = m->has_fill ? m->fill_value : 0.0;
      if (o->have_dates && !failed) {
        dflags[i] = malloc(m->dims[0] + 1);
        if (!dflags[i] ||
            gzs_date_flags(o, o->inputs[i], m, dflags[i], err, errlen) != 0) {
          if (!dflags[i])
            snprintf(err, errlen, "out of memory");
          failed = 1;
        }
      }
      if (grouped && !failed) {
        tdays[i] = malloc(sizeof(double) * m->dims[0] + 1);
        tym[i] = malloc(sizeof(double) * m->dims[0] + 1);
        tml[i] = malloc(sizeof(double) * m->dims[0] + 1);
        tbn[i] = malloc(sizeof(double) * 2 * m->dims[0] + 1);
        if (!tdays[i] || !tym[i] || !tml[i] || !tbn[i] ||
            gzs_record_times(o, o->inputs[i], m, gz_reader_format(rd) == GZ_FMT_NETCDF,
                             tdays[i], tym[i], tml[i], tbn[i], err, errlen) != 0) {
          if (!tdays[i] || !tym[i] || !tml[i] || !tbn[i])
            snprintf(err, errlen, "out of memory");
          failed = 1;
        }
      }
      if (i == 0 && gz_meta_copy(&r->meta0, m) == 0)
        r->has_meta0 = 1;
      else if (i == 0) {
        snprintf(err, errlen, "out of memory");
        failed = 1;
      }
    }
    gz_reader_close(rd);
  }
  if (gzs_agree(comm, failed || !dflags, err)) {
    free(words);
    free(fills);
    for (int i = 0; tdays && tym && tml && tbn && i < nf; i++) {
      free(tdays[i]);
      free(tym[i]);
      free(tml[i]);
      free(tbn[i]);
    }
    free(tdays);
    free(tym);
    free(tml);
    free(tbn);
    for (int i = 0; dflags && i < nf; i++)
      free(dflags[i]);
    free(dflags);
    return -1;
  }
  MPI_Allreduce(MPI_IN_PLACE, words, nf * W, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, fills, nf, MPI_DOUBLE, MPI_SUM, comm);
  r->nsnap = 0;
  for (int i = 0; i < nf; i++) {
    gzs_file_t *f = &r->files[i];
    const uint64_t *w = words + (size_t)i * (size_t)W;
    f->records = w[0];
    f->format = (int)w[1];
    f->dtype = (int)w[2];
    f->ndims = (int)(w[3] & 0xffffffffu);
    f->has_fill = (int)(w[3] >> 32);
    for (int d = 0; d < f->ndims; d++)
      f->dims[d] = w[4 + d];
    f->fill = fills[i];
    f->first = r->nsnap;
    f->base = r->nsnap;
    r->nsnap += f->records;
  }
  free(words);
  free(fills);
  if (o->have_dates) { /* every rank: the flags of every record */
    dates = calloc(r->nsnap + 1, 1);
    for (int i = 0; i < nf && dates; i++)
      if (dflags[i])
        memcpy(dates + r->files[i].first, dflags[i], r->files[i].records);
    failed = gzs_agree(comm, !dates, "out of memory for the record dates");
    for (uint64_t off = 0; !failed && off < r->nsnap; off += GZS_MPI_CHUNK) {
      int n = (int)(r->nsnap - off < GZS_MPI_CHUNK ? r->nsnap - off : GZS_MPI_CHUNK);
      MPI_Allreduce(MPI_IN_PLACE, dates + off, n, MPI_UNSIGNED_CHAR, MPI_MAX, comm);
    }
  }
  if (grouped && !failed) { /* every rank: the times of every record */
    r->rec_days = calloc(r->nsnap + 1, sizeof(double));
    r->rec_ym = calloc(r->nsnap + 1, sizeof(double));
    r->rec_mlen = calloc(r->nsnap + 1, sizeof(double));
    r->rec_bnd = calloc(2 * r->nsnap + 1, sizeof(double));
    for (int i = 0; i < nf && r->rec_days && r->rec_ym && r->rec_mlen && r->rec_bnd; i++)
      if (tdays[i]) {
        memcpy(r->rec_bnd + 2 * r->files[i].first, tbn[i],
               sizeof(double) * 2 * r->files[i].records);
        memcpy(r->rec_mlen + r->files[i].first, tml[i],
               sizeof(double) * r->files[i].records);
        memcpy(r->rec_days + r->files[i].first, tdays[i],
               sizeof(double) * r->files[i].records);
        memcpy(r->rec_ym + r->files[i].first, tym[i],
               sizeof(double) * r->files[i].records);
      }
    failed = gzs_agree(comm, !r->rec_days || !r->rec_ym || !r->rec_mlen || !r->rec_bnd,
                       "out of memory for the times");
    for (uint64_t off = 0; !failed && off < r->nsnap; off += GZS_MPI_CHUNK) {
      int n = (int)(r->nsnap - off < GZS_MPI_CHUNK ? r->nsnap - off : GZS_MPI_CHUNK);
      MPI_Allreduce(MPI_IN_PLACE, r->rec_days + off, n, MPI_DOUBLE, MPI_SUM, comm);
      MPI_Allreduce(MPI_IN_PLACE, r->rec_ym + off, n, MPI_DOUBLE, MPI_SUM, comm);
      MPI_Allreduce(MPI_IN_PLACE, r->rec_mlen + off, n, MPI_DOUBLE, MPI_SUM, comm);
    }
    for (uint64_t off = 0; !failed && off < 2 * r->nsnap; off += GZS_MPI_CHUNK) {
      uint64_t left = 2 * r->nsnap - off;
      int n = (int)(left < GZS_MPI_CHUNK ? left : GZS_MPI_CHUNK);
      MPI_Allreduce(MPI_IN_PLACE, r->rec_bnd + off, n, MPI_DOUBLE, MPI_SUM, comm);
    }
    r->has_time = 1;
    for (uint64_t j = 0; !failed && j < r->nsnap; j++)
      r->has_time &= !isnan(r->rec_days[j]);
  }
  for (int i = 0; i < nf; i++) {
    free(dflags[i]);
    free(tdays[i]);
    free(tym[i]);
    free(tml[i]);
    free(tbn[i]);
  }
  free(dflags);
  free(tdays);
  free(tym);
  free(tml);
  free(tbn);
  if (!failed && (o->have_steps || o->have_dates) &&
      gzs_select_steps(o, r, dates, err, errlen) != 0)
    failed = 1;
  free(dates);

  /* every snapshot has the first file's shape and type */
  for (int i = 1; i < nf && !failed; i++) {
    const gzs_file_t *a = &r->files[0], *b = &r->files[i];
    int same = a->ndims == b->ndims && a->dtype == b->dtype;
    for (int d = 1; same && d < a->ndims; d++)
      same = a->dims[d] == b->dims[d];
    if (!same) {
      char sa[256], sb[256];
      shape_text(a, sa, sizeof sa);
      shape_text(b, sb, sizeof sb);
      snprintf(err, errlen,
               "%s: snapshot shape %s differs from %s in %s (every snapshot must have "
               "the same shape and type)",
               o->inputs[i], sb, sa, o->inputs[0]);
      failed = 1;
    }
  }
  if (!failed && r->nsnap == 0 && !o->have_steps && !o->have_dates) {
    snprintf(err, errlen, "the inputs hold no snapshot (first dimension of length 0)");
    failed = 1;
  }
  if (!failed) {
    const gzs_file_t *f = &r->files[0];
    r->dtype = (gz_dtype_t)f->dtype;
    r->snap_ndims = f->ndims - 1;
    r->npoints = 1;
    for (int d = 1; d < f->ndims; d++) {
      r->snap_dims[d - 1] = (size_t)f->dims[d];
      if (f->dims[d] && r->npoints > SIZE_MAX / 16 / f->dims[d])
        failed = 1;
      r->npoints *= (size_t)f->dims[d];
    }
    if (failed || r->npoints == 0)
      snprintf(err, errlen, "%s: snapshots of %zu values cannot be stacked", o->inputs[0],
               r->npoints);
    failed = failed || r->npoints == 0;
    if (r->nsnap > UINT32_MAX) {
      snprintf(err, errlen, "%llu snapshots: at most %u can be stacked",
               (unsigned long long)r->nsnap, UINT32_MAX);
      failed = 1;
    }
  }
  /* every rank computed the same verdict; rank 0 prints it */
  if (failed) {
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    return -1;
  }
  if (o->read_root) {
    r->my_first = 0;
    r->my_count = r->nsnap / (uint64_t)P + ((uint64_t)r->rank < r->nsnap % (uint64_t)P);
  } else {
    r->my_first = r->nsnap * (uint64_t)r->rank / (uint64_t)P;
    r->my_count = r->nsnap * (uint64_t)(r->rank + 1) / (uint64_t)P - r->my_first;
  }
  return 0;
}
