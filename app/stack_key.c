/*
 * stack_key.c - key-based stacking of SEG-Y traces (`--key cdp`), Seismic
 * Unix's `sustack key=cdp` over any number of files and ranks.
 *
 * Scan (replaces stack_scan.c's): file i is opened by rank i mod P, which
 * reads the key of each of its traces from the trace headers the reader
 * keeps (gz_meta_t.native) and its sample count; the key table goes to
 * every rank (an exact MPI_Allreduce of int32 values, one contributor per
 * entry). Every rank then forms the same groups: the traces sharing a key
 * value, numbered in the order of each group's first trace (file order,
 * then trace order; for a file sorted by the key in either direction this
 * is sustack's output order). The output is [group][sample], one trace a
 * group; its headers are those of each group's first trace (gathered on
 * rank 0 with a bitwise-or reduction of the zero-initialised header
 * table), with the fold written to --fold-key (nhs), tracl renumbered and
 * offset set to 0 unless it is the key, as sustack does.
 *
 * Read (gzs_read): rank r accumulates the contiguous range of global
 * traces [T r / P, T (r+1) / P) into the points of their groups. Counts
 * are kept for every point from the start (each group has its own fold),
 * so the mean divides each point by the samples that went into it: the
 * fold, or with --normalize live the non-zero samples. A group spanning
 * several ranks is summed by the compressed allreduce of stack_reduce.c
 * with the same strict bound as an image stack; the counts are summed
 * exactly. The bound of the mean is the sum's bound divided by the
 * smallest positive count (stack_bound.h): under --normalize live that is
 * the smallest live count, often 1 (docs/seismic.md).
 */
#include "stack_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TRH 240

/* ---- trace header fields --------------------------------------------------
 * Byte (1-based), size, Seismic Unix name, segyio TraceField name. */
typedef struct key_field {
  short byte, size;
  const char *su, *segyio;
} key_field_t;

static const key_field_t fields[] = {
    {1, 4, "tracl", "TRACE_SEQUENCE_LINE"},
    {5, 4, "tracr", "TRACE_SEQUENCE_FILE"},
    {9, 4, "fldr", "FieldRecord"},
    {13, 4, "tracf", "TraceNumber"},
    {17, 4, "ep", "EnergySourcePoint"},
    {21, 4, "cdp", "CDP"},
    {25, 4, "cdpt", "CDP_TRACE"},
    {29, 2, "trid", "TraceIdentificationCode"},
    {31, 2, "nvs", "NSummedTraces"},
    {33, 2, "nhs", "NStackedTraces"},
    {35, 2, "duse", "DataUse"},
    {37, 4, "offset", "offset"},
    {41, 4, "gelev", "ReceiverGroupElevation"},
    {45, 4, "selev", "SourceSurfaceElevation"},
    {49, 4, "sdepth", "SourceDepth"},
    {53, 4, "gdel", "ReceiverDatumElevation"},
    {57, 4, "sdel", "SourceDatumElevation"},
    {61, 4, "swdep", "SourceWaterDepth"},
    {65, 4, "gwdep", "GroupWaterDepth"},
    {69, 2, "scalel", "ElevationScalar"},
    {71, 2, "scalco", "SourceGroupScalar"},
    {73, 4, "sx", "SourceX"},
    {77, 4, "sy", "SourceY"},
    {81, 4, "gx", "GroupX"},
    {85, 4, "gy", "GroupY"},
    {89, 2, "counit", "CoordinateUnits"},
    {91, 2, "wevel", "WeatheringVelocity"},
    {93, 2, "swevel", "SubWeatheringVelocity"},
    {95, 2, "sut", "SourceUpholeTime"},
    {97, 2, "gut", "GroupUpholeTime"},
    {99, 2, "sstat", "SourceStaticCorrection"},
    {101, 2, "gstat", "GroupStaticCorrection"},
    {103, 2, "tstat", "TotalStaticApplied"},
    {105, 2, "laga", "LagTimeA"},
    {107, 2, "lagb", "LagTimeB"},
    {109, 2, "delrt", "DelayRecordingTime"},
    {111, 2, "muts", "MuteTimeStart"},
    {113, 2, "mute", "MuteTimeEND"},
    {115, 2, "ns", "TRACE_SAMPLE_COUNT"},
    {117, 2, "dt", "TRACE_SAMPLE_INTERVAL"},
    {119, 2, "gain", "GainType"},
    {121, 2, "igc", "InstrumentGainConstant"},
    {123, 2, "igi", "InstrumentInitialGain"},
    {125, 2, "corr", "Correlated"},
    {127, 2, "sfs", "SweepFrequencyStart"},
    {129, 2, "sfe", "SweepFrequencyEnd"},
    {131, 2, "slen", "SweepLength"},
    {133, 2, "styp", "SweepType"},
    {135, 2, "stat", "SweepTraceTaperLengthStart"},
    {137, 2, "stae", "SweepTraceTaperLengthEnd"},
    {139, 2, "tatyp", "TaperType"},
    {141, 2, "afilf", "AliasFilterFrequency"},
    {143, 2, "afils", "AliasFilterSlope"},
    {145, 2, "nofilf", "NotchFilterFrequency"},
    {147, 2, "nofils", "NotchFilterSlope"},
    {149, 2, "lcf", "LowCutFrequency"},
    {151, 2, "hcf", "HighCutFrequency"},
    {153, 2, "lcs", "LowCutSlope"},
    {155, 2, "hcs", "HighCutSlope"},
    {157, 2, "year", "YearDataRecorded"},
    {159, 2, "day", "DayOfYear"},
    {161, 2, "hour", "HourOfDay"},
    {163, 2, "minute", "MinuteOfHour"},
    {165, 2, "sec", "SecondOfMinute"},
    {167, 2, "timbas", "TimeBaseCode"},
    {169, 2, "trwf", "TraceWeightingFactor"},
    {171, 2, "grnors", "GeophoneGroupNumberRoll1"},
    {173, 2, "grnofr", "GeophoneGroupNumberFirstTraceOrigField"},
    {175, 2, "grnlof", "GeophoneGroupNumberLastTraceOrigField"},
    {177, 2, "gaps", "GapSize"},
    {179, 2, "otrav", "OverTravel"},
    {181, 4, "cdpx", "CDP_X"},
    {185, 4, "cdpy", "CDP_Y"},
    {189, 4, "iline", "INLINE_3D"},
    {193, 4, "xline", "CROSSLINE_3D"},
    {197, 4, "sp", "ShotPoint"},
    {201, 2, "scalsp", "ShotPointScalar"},
    {203, 2, "trunit", "TraceValueMeasurementUnit"},
    {205, 4, "tdcm", "TransductionConstantMantissa"},
    {209, 2, "tdcp", "TransductionConstantPower"},
    {211, 2, "tdunit", "TransductionUnit"},
    {213, 2, "triden", "TraceIdentifier"},
    {215, 2, "sctrh", "ScalarTraceHeader"},
    {217, 2, "stype", "SourceType"},
    {219, 4, "sedm", "SourceEnergyDirectionMantissa"},
    {223, 2, "sede", "SourceEnergyDirectionExponent"},
    {225, 4, "smm", "SourceMeasurementMantissa"},
    {229, 2, "sme", "SourceMeasurementExponent"},
    {231, 2, "smunit", "SourceMeasurementUnit"},
    {233, 4, "uint1", "UnassignedInt1"},
    {237, 4, "uint2", "UnassignedInt2"},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* The field named v (SU or segyio name, any case, or its byte), or -1. */
static int field_of(const char *v) {
  char *end;
  long b = strtol(v, &end, 10);
  for (int i = 0; i < NFIELDS; i++)
    if ((end != v && !*end && b == fields[i].byte) || !strcasecmp(v, fields[i].su) ||
        !strcasecmp(v, fields[i].segyio))
      return i;
  return -1;
}

static const char *field_refused =
    "no such trace header field: use a Seismic Unix name (cdp, offset, fldr, ep, "
    "iline, ...), a segyio TraceField name (CDP, offset, FieldRecord, INLINE_3D, ...) "
    "or the first byte of a field (21)";

const char *gzs_check_key(gzs_opts_t *o, const char *v) {
  int k = field_of(v);
  if (k < 0)
    return field_refused;
  o->key_byte = fields[k].byte;
  o->key_size = fields[k].size;
  if (o->read_root)
    return "--key reads in parallel only (use --read parallel)";
  if (o->have_steps || o->have_dates)
    return "--key stacks every trace of its inputs; --steps, --years, --months and "
           "--seasons select the records of an image stack";
  return NULL;
}

const char *gzs_check_fold_key(gzs_opts_t *o, const char *v) {
  int k = field_of(v);
  if (k < 0)
    return field_refused;
  o->fold_byte = fields[k].byte;
  o->fold_size = fields[k].size;
  return NULL;
}

const char *gzs_check_normalize(gzs_opts_t *o, const char *v) {
  (void)v;
  if (o->normalize_live && o->op != GZS_OP_MEAN && o->op != GZS_OP_RMS)
    return "live normalisation divides a mean: use it with --op mean or rms";
  if (o->normalize_live && o->read_root)
    return "--normalize live reads in parallel only (use --read parallel)";
  return NULL;
}

/* ---- header bytes --------------------------------------------------------- */

static int32_t get_field(const unsigned char *h, int byte, int size, int lsb) {
  uint32_t u = 0;
  const unsigned char *p = h + byte - 1;
  for (int i = 0; i < size; i++)
    u = (u << 8) | p[lsb ? size - 1 - i : i];
  if (size == 2)
    return (int32_t)(int16_t)(uint16_t)u;
  return (int32_t)u;
}

static void put_field(unsigned char *h, int byte, int size, int32_t v, int lsb) {
  uint32_t u = (uint32_t)v;
  unsigned char *p = h + byte - 1;
  for (int i = 0; i < size; i++)
    p[lsb ? i : size - 1 - i] = (unsigned char)(u >> (8 * i));
}

/* A trace header from byte order `from` to `to`, field by field (the
 * fields tile the 240 bytes). */
static void header_order(unsigned char *dst, const unsigned char *src, int from, int to) {
  memcpy(dst, src, TRH);
  if (from == to)
    return;
  for (int i = 0; i < NFIELDS; i++)
    put_field(dst, fields[i].byte, fields[i].size,
              get_field(src, fields[i].byte, fields[i].size, from), to);
}

static int meta_lsb(const gz_meta_t *m) {
  const gz_attr_t *a = gz_meta_find_global(m, "segy_byte_order");
  return a && a->is_text && a->text && !strcmp(a->text, "little-endian");
}

/* ---- scan ----------------------------------------------------------------- */

/* One group while forming them: a key value, its first trace, its fold. */
typedef struct group {
  int32_t key;
  uint64_t first;
  uint32_t fold;
} group_t;

static int by_key_then_trace(const void *a, const void *b) {
  const group_t *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

static int by_first(const void *a, const void *b) {
  const group_t *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The first file's meta, reshaped to [trace][group][sample] with the
 * groups' headers; rank 0. hdr: G trace headers. */
static int key_meta(const gzs_opts_t *o, gzs_run_t *r, const group_t *g, size_t G,
                    size_t ns, const unsigned char *hdr) {
  gz_meta_t *m = &r->meta0;
  int lsb = meta_lsb(m);
  size_t ntr0 = (size_t)r->files[0].records, head = m->native_size - ntr0 * TRH;
  unsigned char *native = malloc(head + G * TRH + 1);
  double *kv = malloc(sizeof(double) * G + 1);
  const char *name = o->key_text;
  int rc = -1, k = field_of(o->key_text);
  if (!native || !kv)
    goto done;
  if (k >= 0)
    name = fields[k].su;
  memcpy(native, m->native, head);
  for (size_t i = 0; i < G; i++) {
    unsigned char *h = native + head + i * TRH;
    memcpy(h, hdr + i * TRH, TRH);
    put_field(h, o->fold_byte, o->fold_size,
              g[i].fold > (o->fold_size == 2 ? 32767u : 2147483647u)
                  ? (o->fold_size == 2 ? 32767 : 2147483647)
                  : (int32_t)g[i].fold,
              lsb);
    if (o->fold_byte != 1 && o->key_byte != 1)
      put_field(h, 1, 4, (int32_t)(i + 1), lsb); /* tracl: the output sequence */
    if (o->fold_byte != 37 && o->key_byte != 37)
      put_field(h, 37, 4, 0, lsb); /* offset: several were summed */
    kv[i] = g[i].key;
  }
  /* dims: [trace][group][time], the time axis kept */
  {
    int last = m->ndims - 1;
    gz_coord_t time = m->coords[last];
    char tname[64];
    memcpy(tname, m->dim_names[last], sizeof tname);
    memset(&m->coords[last], 0, sizeof m->coords[last]);
    for (int d = 0; d < GZ_IO_MAXDIMS; d++) {
      free(m->coords[d].values);
      memset(&m->coords[d], 0, sizeof m->coords[d]);
    }
    m->ndims = 3;
    m->dims[0] = 1;
    m->dims[1] = G;
    m->dims[2] = ns;
    snprintf(m->dim_names[0], sizeof m->dim_names[0], "trace");
    snprintf(m->dim_names[1], sizeof m->dim_names[1], "%s", name);
    memcpy(m->dim_names[2], tname, sizeof tname);
    m->coords[2] = time;
    for (int d = 3; d < GZ_IO_MAXDIMS; d++)
      m->dims[d] = 0;
    if (gz_meta_set_coord(m, 1, name, "", kv, G) != 0)
      goto done;
  }
  free(m->native);
  m->native = native;
  m->native_size = head + G * TRH;
  native = NULL;
  if (gz_meta_add_global_number(m, "segy_traces", (double)G) != 0 ||
      gz_meta_add_global_text(m, "gzstack_key", name) != 0 ||
      gz_meta_add_global_text(m, "gzstack_normalize",
                              o->normalize_live ? "live" : "fold") != 0)
    goto done;
  rc = 0;
done:
  free(native);
  free(kv);
  return rc;
}

int gzs_key_scan(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                 size_t errlen) {
  int nf = o->ninputs, P = r->size, failed = 0;
  enum { W = 4 }; /* per file: traces, samples, dtype, byte order */
  uint64_t *words = calloc((size_t)nf * W + 1, sizeof(uint64_t)), T = 0, maxfold = 0;
  unsigned char **mine = calloc((size_t)nf + 1, sizeof(unsigned char *));
  int32_t *keys = NULL;
  group_t *g = NULL;
  unsigned char *hdr = NULL;
  size_t G = 0, ns = 0;

  r->files = calloc((size_t)nf + 1, sizeof(gzs_file_t));
  r->nfiles = nf;
  if (!words || !mine || !r->files) {
    snprintf(err, errlen, "out of memory for %d inputs", nf);
    failed = 1;
  }
  /* my files: shape, byte order, and their trace headers kept */
  for (int i = r->rank; i < nf && !failed; i += P) {
    gz_reader_t *rd = NULL;
    const gz_meta_t *m;
    uint64_t *w = words + (size_t)i * W;
    size_t n, t;
    if (gzs_open_input(o, o->inputs[i], MPI_COMM_SELF, &rd, err, errlen) != 0) {
      failed = 1;
      break;
    }
    m = gz_reader_meta(rd);
    if (gz_reader_format(rd) != GZ_FMT_SEGY || strcmp(m->native_format, "segy") != 0) {
      snprintf(err, errlen,
               "%s: --key %s groups SEG-Y traces by a trace header field; this is a %s "
               "file",
               o->inputs[i], o->key_text, gz_format_name(gz_reader_format(rd)));
      failed = 1;
    } else {
      n = m->dims[m->ndims - 1];
      t = gz_meta_count(m) / n;
      w[0] = t;
      w[1] = n;
      w[2] = (uint64_t)m->dtype;
      w[3] = (uint64_t)meta_lsb(m);
      mine[i] = malloc(t * TRH + 1);
      if (!mine[i]) {
        snprintf(err, errlen, "%s: out of memory for %zu trace headers", o->inputs[i], t);
        failed = 1;
      } else {
        memcpy(mine[i], m->native + m->native_size - t * TRH, t * TRH);
      }
      if (i == 0 && !failed) {
        if (gz_meta_copy(&r->meta0, m) != 0) {
          snprintf(err, errlen, "out of memory");
          failed = 1;
        } else {
          r->has_meta0 = 1;
        }
      }
    }
    gz_reader_close(rd);
  }
  if (gzs_agree(comm, failed, err))
    goto fail;
  MPI_Allreduce(MPI_IN_PLACE, words, nf * W, MPI_UINT64_T, MPI_SUM, comm);

  /* one trace length; the widest type */
  ns = (size_t)words[1];
  r->dtype = GZ_FLOAT32;
  for (int i = 0; i < nf; i++) {
    gzs_file_t *f = &r->files[i];
    const uint64_t *w = words + (size_t)i * W;
    f->records = w[0];
    f->first = T;
    f->format = GZ_FMT_SEGY;
    f->dtype = (int)w[2];
    f->ndims = 2;
    f->dims[0] = w[0];
    f->dims[1] = w[1];
    T += w[0];
    if (w[2] == GZ_FLOAT64)
      r->dtype = GZ_FLOAT64;
    if (!failed && w[1] != ns) {
      snprintf(err, errlen,
               "%s: %llu samples per trace, but %s has %zu (--key %s stacks traces of "
               "one length)",
               o->inputs[i], (unsigned long long)w[1], o->inputs[0], ns, o->key_text);
      failed = 1;
    }
  }
  if (!failed && (T == 0 || T > UINT32_MAX)) {
    snprintf(err, errlen, "%llu traces: --key stacks 1 to %u", (unsigned long long)T,
             UINT32_MAX);
    failed = 1;
  }
  if (failed) { /* every rank reached the same verdict; rank 0 says it */
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    goto fail;
  }

  /* every trace's key to every rank (one contributor per entry: exact) */
  keys = calloc(T + 1, sizeof(int32_t));
  if (gzs_agree(comm, !keys, "out of memory for the trace keys"))
    goto fail;
  for (int i = 0; i < nf; i++) {
    int lsb = (int)words[(size_t)i * W + 3];
    for (uint64_t t = 0; mine[i] && t < r->files[i].records; t++)
      keys[r->files[i].first + t] =
          get_field(mine[i] + t * TRH, o->key_byte, o->key_size, lsb);
  }
  for (uint64_t off = 0; off < T; off += GZS_MPI_CHUNK) {
    int n = (int)(T - off < GZS_MPI_CHUNK ? T - off : GZS_MPI_CHUNK);
    MPI_Allreduce(MPI_IN_PLACE, keys + off, n, MPI_INT32_T, MPI_SUM, comm);
  }

  /* the groups, the same on every rank */
  g = malloc(sizeof(group_t) * T + 1);
  r->key_group_of = malloc(sizeof(uint32_t) * T + 1);
  if (gzs_agree(comm, !g || !r->key_group_of, "out of memory for the trace groups"))
    goto fail;
  for (uint64_t t = 0; t < T; t++)
    g[t] = (group_t){keys[t], t, 1};
  qsort(g, T, sizeof *g, by_key_then_trace);
  for (uint64_t t = 0; t < T; t++) {
    if (G > 0 && g[G - 1].key == g[t].key) {
      g[G - 1].fold++;
    } else {
      g[G++] = g[t];
    }
  }
  qsort(g, G, sizeof *g, by_first);
  {
    /* each trace's group: binary search of its key among the groups by key */
    group_t *byk = malloc(sizeof(group_t) * G + 1);
    uint32_t *gid = malloc(sizeof(uint32_t) * G + 1);
    if (gzs_agree(comm, !byk || !gid, "out of memory for the trace groups")) {
      free(byk);
      free(gid);
      goto fail;
    }
    for (size_t i = 0; i < G; i++) {
      byk[i] = g[i];
      byk[i].fold = (uint32_t)i; /* the group's number */
    }
    qsort(byk, G, sizeof *byk, by_key_then_trace);
    for (size_t i = 0; i < G; i++)
      gid[i] = byk[i].fold;
    for (uint64_t t = 0; t < T; t++) {
      size_t lo = 0, hi = G - 1;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (byk[mid].key < keys[t])
          lo = mid + 1;
        else
          hi = mid;
      }
      r->key_group_of[t] = gid[lo];
    }
    free(byk);
    free(gid);
  }
  for (size_t i = 0; i < G; i++)
    if (g[i].fold > maxfold)
      maxfold = g[i].fold;

  /* the first trace's header of each group, to rank 0 */
  if (G > SIZE_MAX / TRH / 2 || (size_t)ns > SIZE_MAX / 16 / G) {
    snprintf(err, errlen, "%zu groups of %zu samples cannot be stacked", G, ns);
    if (r->rank == 0)
      fprintf(stderr, "gzstack stack: %s\n", err);
    goto fail;
  }
  hdr = calloc(G * TRH + 1, 1);
  if (gzs_agree(comm, !hdr, "out of memory for the output trace headers"))
    goto fail;
  for (size_t i = 0; i < G; i++) {
    uint64_t rec;
    int f = gzs_locate(r, g[i].first, &rec);
    if (mine[f]) /* in the first file's byte order */
      header_order(hdr + i * TRH, mine[f] + rec * TRH, (int)words[(size_t)f * W + 3],
                   (int)words[3]);
  }
  for (size_t off = 0; off < G * TRH; off += GZS_MPI_CHUNK) {
    int n = (int)(G * TRH - off < GZS_MPI_CHUNK ? G * TRH - off : GZS_MPI_CHUNK);
    MPI_Allreduce(MPI_IN_PLACE, hdr + off, n, MPI_UNSIGNED_CHAR, MPI_BOR, comm);
  }
  if (gzs_agree(comm, r->rank == 0 && key_meta(o, r, g, G, ns, hdr) != 0,
                "out of memory for the output headers"))
    goto fail;

  r->key_traces = T;
  r->key_groups = G;
  r->key_lsb = (int)words[3];
  r->nsnap = maxfold; /* the most samples added at one point */
  r->snap_ndims = 2;
  r->snap_dims[0] = G;
  r->snap_dims[1] = ns;
  r->npoints = G * ns;
  r->my_first = T * (uint64_t)r->rank / (uint64_t)P;
  r->my_count = T * (uint64_t)(r->rank + 1) / (uint64_t)P - r->my_first;
  free(words);
  for (int i = 0; i < nf; i++)
    free(mine[i]);
  free(mine);
  free(keys);
  free(g);
  free(hdr);
  return 0;
fail:
  free(words);
  for (int i = 0; mine && i < nf; i++)
    free(mine[i]);
  free(mine);
  free(keys);
  free(g);
  free(hdr);
  return -1;
}

/* ---- read ----------------------------------------------------------------- */

/* The largest fold (traces in one group): the most terms a sum has. */
static uint64_t key_max_fold(const gzs_run_t *r) {
  uint64_t most = 0, *fold = calloc(r->key_groups + 1, sizeof(uint64_t));
  if (!fold)
    return r->key_traces; /* no memory: every trace, a finer grid */
  for (uint64_t t = 0; t < r->key_traces; t++)
    if (++fold[r->key_group_of[t]] > most)
      most = fold[r->key_group_of[t]];
  free(fold);
  return most;
}

int gzs_key_read(const gzs_opts_t *o, gzs_run_t *r, MPI_Comm comm, char *err,
                 size_t errlen) {
  size_t M = r->npoints, ns = r->snap_dims[1], slab = gzs_slab_values(o);
  size_t per = slab / ns > 0 ? slab / ns : 1; /* traces per read */
  uint64_t lo = r->my_first, hi = r->my_first + r->my_count;
  double *buf = malloc(sizeof(double) * per * ns + 1);
  gzs_acc_t s;
  int failed = 0;

  r->acc = gzs_acc_alloc(o->op, M);
  r->counts = calloc(M + 1, sizeof(uint32_t)); /* every group its own fold */
  gzs_acc_init(&s, o->op, r->acc, &r->counts, M);
  s.square = r->moment_pass == 2;
  s.center = r->center;
  s.zero_missing = o->normalize_live;
  if (!buf || !r->acc || !r->counts || gzs_acc_codes(o, r, &s, key_max_fold(r)) != 0) {
    snprintf(err, errlen, "out of memory for %zu groups of %zu samples", r->key_groups,
             ns);
    failed = 1;
  }
  for (int f = 0; f < r->nfiles && !failed; f++) {
    const gzs_file_t *fi = &r->files[f];
    uint64_t a = fi->first > lo ? fi->first : lo;
    uint64_t b = fi->first + fi->records < hi ? fi->first + fi->records : hi;
    gz_reader_t *rd = NULL;
    double t0 = MPI_Wtime();
    if (a >= b)
      continue;
    if (gzs_open_input(o, o->inputs[f], MPI_COMM_SELF, &rd, err, errlen) != 0) {
      failed = 1;
      break;
    }
    r->t.read += MPI_Wtime() - t0;
    for (uint64_t t = a; t < b && !failed; t += per) {
      size_t k = b - t < per ? (size_t)(b - t) : per;
      t0 = MPI_Wtime();
      if (gz_reader_read_part(rd, 0, (size_t)(t - fi->first) * ns, k * ns, GZ_FLOAT64,
                              buf, err, errlen) != 0) {
        failed = 1;
        break;
      }
      r->t.read += MPI_Wtime() - t0;
      gzs_scale(o, (uint64_t)f, buf, k * ns, 0, 0.0);
      for (size_t j = 0; j < k && !failed; j++)
        if (gzs_accumulate(&s, buf + j * ns, (size_t)r->key_group_of[t + j] * ns, ns, 0,
                           0.0, NULL) != 0) {
          snprintf(err, errlen, "out of memory for the per-point counts");
          failed = 1;
        }
      gzs_progress(o, r, 0, "reading: %llu/%llu traces on rank 0",
                   (unsigned long long)(t + k - lo), (unsigned long long)r->my_count);
    }
    gz_reader_close(rd);
  }
  gzs_acc_report(&s, r);
  free(buf);
  return gzs_agree(comm, failed, err) ? -1 : 0;
}
