/* io_netcdf.c - netCDF reader and writer (classic, 64-bit offset, CDF-5 and
 * netCDF-4 files). This file sees netCDF's include path (built against the
 * serial HDF5) and never hdf5.h; io_hdf5.c is its mirror image.
 *
 * Reading: one variable, optionally in a netCDF-4 group ("/grp/T"). Its
 * dims, coordinate variables (a 1-D variable named after its dimension, in
 * the variable's group or a parent, read as double), units, long_name,
 * _FillValue/missing_value, scale_factor/add_offset and the other variable
 * and global attributes go to the meta. Integer variables are read as
 * double; boxes are read with nc_get_vara_float/double. A classic-format
 * file (CDF-1/2/5) is checked by our own header parser before libnetcdf
 * sees it: a malformed header is refused (libnetcdf's parser can be made
 * to crash), and so is a file shorter than its header says (the library
 * would silently return zeros past the end of the file).
 *
 * Writing: always netCDF-4 (see gz_io_write() in gz_io.h). */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"
#include "gz_io_commit.h"

#include <errno.h>
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  int ncid, gid, varid;
  char *path;
} nc_state_t;

static int nc_error(char *err, size_t errlen, const char *path, const char *what,
                    int status) {
  gz_io_errorf(err, errlen, "%s: %s: %s", path, what, nc_strerror(status));
  return -1;
}

static int is_numeric(nc_type t) {
  switch (t) {
  case NC_BYTE:
  case NC_UBYTE:
  case NC_SHORT:
  case NC_USHORT:
  case NC_INT:
  case NC_UINT:
  case NC_INT64:
  case NC_UINT64:
  case NC_FLOAT:
  case NC_DOUBLE:
    return 1;
  default:
    return 0;
  }
}

/* 1 if varid is a coordinate variable: 1-D, named after its dimension. */
static int is_coordinate(int gid, int varid) {
  char vname[NC_MAX_NAME + 1], dname[NC_MAX_NAME + 1];
  int ndims = 0, dimid;
  if (nc_inq_varname(gid, varid, vname) != NC_NOERR ||
      nc_inq_varndims(gid, varid, &ndims) != NC_NOERR || ndims != 1 ||
      nc_inq_vardimid(gid, varid, &dimid) != NC_NOERR ||
      nc_inq_dimname(gid, dimid, dname) != NC_NOERR)
    return 0;
  return strcmp(vname, dname) == 0;
}

/* "a, b, c" (the variables of group gid) into buf, shortened with "...". */
static void list_vars(int gid, int (*keep)(int, int), char *buf, size_t len) {
  int nvars = 0, *ids = NULL;
  size_t used = 0;
  buf[0] = '\0';
  if (nc_inq_varids(gid, &nvars, NULL) != NC_NOERR || nvars <= 0 ||
      !(ids = malloc((size_t)nvars * sizeof *ids)) ||
      nc_inq_varids(gid, &nvars, ids) != NC_NOERR) {
    free(ids);
    return;
  }
  for (int i = 0; i < nvars; i++) {
    char name[NC_MAX_NAME + 1];
    int n;
    if ((keep && !keep(gid, ids[i])) || nc_inq_varname(gid, ids[i], name) != NC_NOERR)
      continue;
    n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
    if (n < 0 || (size_t)n >= len - used) {
      if (len > 4)
        snprintf(buf + (used < len - 4 ? used : len - 4), 4, "...");
      break;
    }
    used += (size_t)n;
  }
  free(ids);
}

/* A variable some variable's CF `bounds` or `climatology` attribute names
 * (time_bnds, lat_bnds, climatology_bounds): cell bounds, not data. */
static int is_cell_bounds(int gid, int varid) {
  char name[NC_MAX_NAME + 1];
  return nc_inq_varname(gid, varid, name) == NC_NOERR &&
         gz_io_nc_is_cell_bounds(gid, name);
}

static int is_numeric_candidate(int gid, int varid) {
  nc_type t;
  int ndims = 0;
  return nc_inq_vartype(gid, varid, &t) == NC_NOERR && is_numeric(t) &&
         nc_inq_varndims(gid, varid, &ndims) == NC_NOERR && ndims >= 1 &&
         !is_coordinate(gid, varid) && !is_cell_bounds(gid, varid);
}

/* The only non-coordinate numeric variable (several: an error listing them). */
static int choose_default(const char *path, int gid, int *varid, char *err,
                          size_t errlen) {
  int nvars = 0, *ids = NULL;
  if (nc_inq_varids(gid, &nvars, NULL) != NC_NOERR || nvars < 0)
    nvars = 0;
  if (nvars && (!(ids = malloc((size_t)nvars * sizeof *ids)) ||
                nc_inq_varids(gid, &nvars, ids) != NC_NOERR)) {
    free(ids);
    gz_io_errorf(err, errlen, "%s: cannot list the variables", path);
    return -1;
  }
  int found = 0, pick = -1;
  for (int i = 0; i < nvars; i++)
    if (is_numeric_candidate(gid, ids[i])) {
      found++;
      pick = ids[i];
    }
  if (found == 1) {
    free(ids);
    *varid = pick;
    return 0;
  }
  if (found > 1) {
    char names[1024];
    list_vars(gid, is_numeric_candidate, names, sizeof names);
    free(ids);
    gz_io_errorf(err, errlen, "%s: several data variables (%s); choose one with --var",
                 path, names);
    return -1;
  }
  free(ids);
  gz_io_errorf(err, errlen, "%s: no numeric data variable", path);
  return -1;
}

/* Locate var ("name", "/name" or "/grp/sub/name"). */
static int find_var(const char *path, int ncid, const char *var, int *gid, int *varid,
                    char *err, size_t errlen) {
  const char *name = var, *slash;
  int status;
  while (*name == '/')
    name++;
  slash = strrchr(name, '/');
  *gid = ncid;
  if (slash) {
    char grp[1024];
    int n = snprintf(grp, sizeof grp, "/%.*s", (int)(slash - name), name);
    if (n < 0 || (size_t)n >= sizeof grp ||
        (status = nc_inq_grp_full_ncid(ncid, grp, gid)) != NC_NOERR) {
      gz_io_errorf(err, errlen, "%s: no group '%s' for variable '%s'", path,
                   n > 0 && (size_t)n < sizeof grp ? grp : "?", var);
      return -1;
    }
    name = slash + 1;
  }
  status = nc_inq_varid(*gid, name, varid);
  if (status != NC_NOERR) {
    char names[1024];
    list_vars(*gid, NULL, names, sizeof names);
    gz_io_errorf(err, errlen, "%s: no variable '%s' (variables: %s)", path, var,
                 names[0] ? names : "none");
    return -1;
  }
  return 0;
}

/* Append attribute aname of (gid, varid) to a list; unsupported types and
 * names too long for gz_attr_t are skipped. */
static int read_attr(const char *path, int gid, int varid, const char *aname,
                     gz_attr_t **list, size_t *n, char *err, size_t errlen) {
  nc_type t;
  size_t len;
  int status, rc = 0;
  if (strlen(aname) >= sizeof(((gz_attr_t *)0)->name) || gz_io_reserved_attr(aname))
    return 0;
  if ((status = nc_inq_att(gid, varid, aname, &t, &len)) != NC_NOERR)
    return nc_error(err, errlen, path, aname, status);
  if (t == NC_CHAR) {
    char *text = malloc(len + 1);
    if (!text)
      goto nomem;
    if ((status = nc_get_att_text(gid, varid, aname, text)) != NC_NOERR) {
      free(text);
      return nc_error(err, errlen, path, aname, status);
    }
    text[len] = '\0';
    rc = gz_io_attr_append(list, n, aname, text, NULL, 0);
    free(text);
  } else if (t == NC_STRING) {
    char **strs = calloc(len ? len : 1, sizeof *strs), *joined;
    if (!strs)
      goto nomem;
    if ((status = nc_get_att_string(gid, varid, aname, strs)) != NC_NOERR) {
      free(strs);
      return nc_error(err, errlen, path, aname, status);
    }
    if ((joined = gz_io_join_lines(strs, len)) != NULL)
      rc = gz_io_attr_append(list, n, aname, joined, NULL, 0);
    nc_free_string(len, strs);
    free(strs);
    free(joined);
    if (!joined)
      goto nomem;
  } else if (is_numeric(t)) {
    double *v = malloc((len ? len : 1) * sizeof *v);
    if (!v)
      goto nomem;
    if (len && (status = nc_get_att_double(gid, varid, aname, v)) != NC_NOERR) {
      free(v);
      return nc_error(err, errlen, path, aname, status);
    }
    rc = gz_io_attr_append(list, n, aname, NULL, v, len);
    free(v);
  }
  if (rc != 0)
    goto nomem;
  return 0;
nomem:
  gz_io_errorf(err, errlen, "%s: out of memory reading attribute %s", path, aname);
  return -1;
}

/* First value of a numeric attribute; 1 if present. */
static int att_first_double(int gid, int varid, const char *name, double *out,
                            nc_type *type) {
  size_t len;
  nc_type t;
  double *v;
  int ok;
  if (nc_inq_att(gid, varid, name, &t, &len) != NC_NOERR || !is_numeric(t) || len == 0)
    return 0;
  if (!(v = malloc(len * sizeof *v)))
    return 0;
  ok = nc_get_att_double(gid, varid, name, v) == NC_NOERR;
  if (ok)
    *out = v[0];
  free(v);
  if (type)
    *type = t;
  return ok;
}

/* Text attribute into a field of cap bytes; 1 if it fits. */
static int att_text_field(int gid, int varid, const char *name, char *field, size_t cap) {
  size_t len;
  nc_type t;
  if (nc_inq_att(gid, varid, name, &t, &len) != NC_NOERR || t != NC_CHAR || len >= cap)
    return 0;
  if (len && nc_get_att_text(gid, varid, name, field) != NC_NOERR)
    return 0;
  field[len] = '\0';
  field[strnlen(field, len)] = '\0';
  return 1;
}

static int read_coordinate(const char *path, int gid, int dimid, const char *dname,
                           size_t len, gz_coord_t *c, char *err, size_t errlen) {
  int g = gid, cv, ndims, cdim, parent, status;
  nc_type t;
  for (;;) {
    if (nc_inq_varid(g, dname, &cv) == NC_NOERR)
      break;
    if (nc_inq_grp_parent(g, &parent) != NC_NOERR)
      return 0; /* no coordinate variable */
    g = parent;
  }
  if (nc_inq_varndims(g, cv, &ndims) != NC_NOERR || ndims != 1 ||
      nc_inq_vardimid(g, cv, &cdim) != NC_NOERR || cdim != dimid ||
      nc_inq_vartype(g, cv, &t) != NC_NOERR || !is_numeric(t) || len == 0)
    return 0;
  if (!(c->values = malloc(len * sizeof(double)))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  if ((status = nc_get_var_double(g, cv, c->values)) != NC_NOERR) {
    free(c->values);
    c->values = NULL;
    return nc_error(err, errlen, path, dname, status);
  }
  c->count = len;
  snprintf(c->name, sizeof c->name, "%.63s", dname);
  att_text_field(g, cv, "units", c->units, sizeof c->units);
  att_text_field(g, cv, "calendar", c->calendar, sizeof c->calendar);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Classic-format size check: a minimal parser of the CDF-1/2/5 header
 * (big-endian; the layout of the netCDF "classic format specification"),
 * enough to find where the last variable's data ends. Hostile-safe: every
 * count is checked against the bytes present. */

typedef struct {
  const unsigned char *p;
  size_t n, pos;
  int v5, v1;
  int bad; /* 1: malformed, 2: ran past the bytes read so far */
} cdf_t;

static uint64_t cdf_u32(cdf_t *h) {
  uint64_t v = 0;
  if (h->bad || h->n - h->pos < 4) {
    h->bad = h->bad ? h->bad : 2;
    return 0;
  }
  for (int i = 0; i < 4; i++)
    v = (v << 8) | h->p[h->pos++];
  return v;
}

static uint64_t cdf_u64(cdf_t *h) {
  uint64_t hi = cdf_u32(h);
  return (hi << 32) | cdf_u32(h);
}

static uint64_t cdf_count(cdf_t *h) { return h->v5 ? cdf_u64(h) : cdf_u32(h); }

static void cdf_skip(cdf_t *h, uint64_t n) {
  if (h->bad)
    return;
  if (n > UINT64_MAX - 3) {
    h->bad = 1;
    return;
  }
  n = (n + 3) & ~(uint64_t)3;
  if (n > h->n - h->pos) {
    h->bad = 2;
    return;
  }
  h->pos += (size_t)n;
}

static uint64_t cdf_type_size(uint64_t t) {
  static const uint64_t sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  return t < sizeof sizes / sizeof sizes[0] ? sizes[t] : 0;
}

static void cdf_atts(cdf_t *h) {
  uint64_t tag = cdf_u32(h), n = cdf_count(h);
  if (h->bad || (tag == 0 && n == 0))
    return;
  if (tag != 0x0C) {
    h->bad = 1;
    return;
  }
  for (uint64_t i = 0; i < n && !h->bad; i++) {
    uint64_t ts, cnt;
    cdf_skip(h, cdf_count(h));
    ts = cdf_type_size(cdf_u32(h));
    cnt = cdf_count(h);
    if (!h->bad && (ts == 0 || cnt > UINT64_MAX / 8)) {
      h->bad = 1;
      return;
    }
    cdf_skip(h, cnt * ts);
  }
}

/* Bytes the header says the file holds (0: not computable). */
static uint64_t cdf_expected(cdf_t *h) {
  uint64_t numrecs, ndims, nvars, tag, recsize = 0, nrecvars = 0, end = 0, *dimlen = NULL;
  int streaming;
  typedef struct {
    uint64_t begin, size;
    int rec;
  } var_t;
  var_t *vars = NULL;
  if (h->n < 4 || memcmp(h->p, "CDF", 3) != 0)
    return 0;
  h->v5 = h->p[3] == 5;
  h->v1 = h->p[3] == 1;
  h->pos = 4;
  numrecs = h->v5 ? cdf_u64(h) : cdf_u32(h);
  /* streaming (the record count not recorded): the header is still checked,
   * but the end of the data is not computable */
  streaming = numrecs == (h->v5 ? UINT64_MAX : 0xFFFFFFFFu);
  tag = cdf_u32(h);
  ndims = cdf_count(h);
  if (h->bad || (tag != 0x0A && !(tag == 0 && ndims == 0)) || ndims > h->n / 8) {
    h->bad = h->bad ? h->bad : 1;
    return 0;
  }
  dimlen = calloc(ndims ? (size_t)ndims : 1, sizeof *dimlen);
  for (uint64_t i = 0; dimlen && i < ndims && !h->bad; i++) {
    cdf_skip(h, cdf_count(h));
    dimlen[i] = cdf_count(h);
  }
  cdf_atts(h);
  tag = cdf_u32(h);
  nvars = cdf_count(h);
  if (!dimlen || h->bad || (tag != 0x0B && !(tag == 0 && nvars == 0)) ||
      nvars > h->n / 8) {
    h->bad = h->bad ? h->bad : 1;
    goto done;
  }
  vars = calloc(nvars ? (size_t)nvars : 1, sizeof *vars);
  for (uint64_t i = 0; vars && i < nvars && !h->bad; i++) {
    uint64_t nd, prod = 1, ts;
    cdf_skip(h, cdf_count(h)); /* name */
    nd = cdf_count(h);
    for (uint64_t k = 0; k < nd && !h->bad; k++) {
      uint64_t id = cdf_count(h);
      if (h->bad)
        break;
      if (id >= ndims) {
        h->bad = 1;
        break;
      }
      if (dimlen[id] == 0) {
        if (k != 0)
          h->bad = 1;
        vars[i].rec = 1;
      } else if (prod > UINT64_MAX / dimlen[id]) {
        h->bad = 1;
      } else {
        prod *= dimlen[id];
      }
    }
    cdf_atts(h);
    ts = cdf_type_size(cdf_u32(h));
    if (h->v5)
      cdf_u64(h);
    else
      cdf_u32(h); /* vsize: recomputed below (it saturates for big variables) */
    vars[i].begin = h->v1 ? cdf_u32(h) : cdf_u64(h);
    if (h->bad)
      break;
    if (ts == 0 || prod > UINT64_MAX / 8) {
      h->bad = 1;
      break;
    }
    vars[i].size = prod * ts;
    if (vars[i].rec) {
      nrecvars++;
      recsize += (vars[i].size + 3) & ~(uint64_t)3;
    }
  }
  if (!vars || h->bad || streaming)
    goto done;
  if (nrecvars == 1)
    for (uint64_t i = 0; i < nvars; i++)
      if (vars[i].rec)
        recsize = vars[i].size; /* a single record variable is not padded */
  for (uint64_t i = 0; i < nvars; i++) {
    uint64_t e = vars[i].begin;
    if (vars[i].rec) {
      if (numrecs == 0 || vars[i].size == 0)
        continue;
      if (recsize && numrecs - 1 > (UINT64_MAX - e - vars[i].size) / recsize) {
        h->bad = 1;
        goto done;
      }
      e += (numrecs - 1) * recsize + vars[i].size;
    } else {
      if (vars[i].size > UINT64_MAX - e) {
        h->bad = 1;
        goto done;
      }
      e += vars[i].size;
    }
    if (e > end)
      end = e;
  }
done:
  free(dimlen);
  free(vars);
  return h->bad || streaming ? 0 : end;
}

/* -1 (with a message) if path is a classic-format file (it begins with
 * "CDF") whose header is malformed, runs past the end of the file, or
 * describes more data than the file holds; 0 otherwise. Called before
 * nc_open: libnetcdf's own classic-header parser trusts some counts (a
 * CDF-5 text attribute of 2^63 characters ends in a memcpy of -1 bytes
 * inside nc_open, found by fuzz_readers), so a header this parser cannot
 * follow never reaches it. */
static int check_classic_header(const char *path, char *err, size_t errlen) {
  struct stat st;
  size_t cap = 1 << 16;
  FILE *f = fopen(path, "rb");
  int rc = 0;
  if (!f || fstat(fileno(f), &st) != 0) {
    if (f)
      fclose(f);
    return 0;
  }
  for (;;) {
    size_t want = (unsigned long long)st.st_size < cap ? (size_t)st.st_size : cap, got;
    unsigned char *buf = malloc(want ? want : 1);
    cdf_t h = {buf, 0, 0, 0, 0, 0};
    uint64_t expect;
    if (!buf)
      break;
    rewind(f);
    got = fread(buf, 1, want, f);
    h.n = got;
    expect = cdf_expected(&h);
    free(buf);
    if (h.bad == 2 && got == want && want < (size_t)st.st_size &&
        cap < ((size_t)1 << 28)) {
      cap *= 4; /* a long header: read more of it */
      continue;
    }
    if (h.bad == 2 && got == (size_t)st.st_size) {
      gz_io_errorf(err, errlen, "%s: truncated: the header runs past the end of the file",
                   path);
      rc = -1;
    } else if (h.bad == 1) {
      gz_io_errorf(
          err, errlen,
          "%s: not a valid netCDF classic file: its header is malformed (a count, "
          "type or dimension id out of range)",
          path);
      rc = -1;
    } else if (expect && (uint64_t)st.st_size < expect) {
      gz_io_errorf(
          err, errlen,
          "%s: truncated: %llu bytes, but its header describes %llu bytes of data", path,
          (unsigned long long)st.st_size, (unsigned long long)expect);
      rc = -1;
    }
    break;
  }
  fclose(f);
  return rc;
}

static int ncr_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                    MPI_Comm comm, gz_meta_t *meta, void **state, char *err,
                    size_t errlen) {
  nc_state_t *s = calloc(1, sizeof *s);
  char vname[NC_MAX_NAME + 1];
  int status, ndims = 0, natts = 0, dimids[NC_MAX_VAR_DIMS], nglobal = 0;
  nc_type t, st;
  double fv = 0, mv = 0;
  int has_fv, has_mv;
  if (!s || !(s->path = strdup(path))) {
    free(s);
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  if (check_classic_header(path, err, errlen) != 0) {
    free(s->path);
    free(s);
    return -1;
  }
  if ((status = nc_open(path, NC_NOWRITE, &s->ncid)) != NC_NOERR) {
    nc_error(err, errlen, path, "cannot open as netCDF", status);
    free(s->path);
    free(s);
    return -1;
  }
  /* files gzstack wrote with its filter (else HDF5's plugin path decides) */
  (void)gz_io_nc_register_filter(s->ncid);
  if (var && var[0]) {
    if (find_var(path, s->ncid, var, &s->gid, &s->varid, err, errlen) != 0)
      goto fail;
  } else {
    s->gid = s->ncid;
    if (choose_default(path, s->ncid, &s->varid, err, errlen) != 0)
      goto fail;
  }
  if ((status = nc_inq_var(s->gid, s->varid, vname, &t, &ndims, NULL, &natts)) !=
      NC_NOERR) {
    nc_error(err, errlen, path, "cannot inquire the variable", status);
    goto fail;
  }
  snprintf(meta->var, sizeof meta->var, "%.255s", var && var[0] ? var : vname);
  if (!is_numeric(t)) {
    gz_io_errorf(err, errlen, "%s: variable '%s' is not numeric", path, vname);
    goto fail;
  }
  if (ndims < 1 || ndims > GZ_IO_MAXDIMS) {
    gz_io_errorf(err, errlen, "%s: variable '%s' has %d dimensions (1..%d supported)",
                 path, vname, ndims, GZ_IO_MAXDIMS);
    goto fail;
  }
  nc_inq_vardimid(s->gid, s->varid, dimids);
  meta->dtype = t == NC_FLOAT ? GZ_FLOAT32 : GZ_FLOAT64;
  meta->ndims = ndims;
  for (int i = 0; i < ndims; i++) {
    char dname[NC_MAX_NAME + 1];
    size_t len;
    if ((status = nc_inq_dim(s->gid, dimids[i], dname, &len)) != NC_NOERR) {
      nc_error(err, errlen, path, "cannot inquire a dimension", status);
      goto fail;
    }
    meta->dims[i] = len;
    snprintf(meta->dim_names[i], sizeof meta->dim_names[i], "%.63s", dname);
    if (read_coordinate(path, s->gid, dimids[i], dname, len, &meta->coords[i], err,
                        errlen) != 0)
      goto fail;
  }
  /* Attributes with a place of their own, then the rest. */
  int units_ok =
      att_text_field(s->gid, s->varid, "units", meta->units, sizeof meta->units);
  int long_ok = att_text_field(s->gid, s->varid, "long_name", meta->long_name,
                               sizeof meta->long_name);
  has_fv = att_first_double(s->gid, s->varid, "_FillValue", &fv, NULL);
  has_mv = att_first_double(s->gid, s->varid, "missing_value", &mv, NULL);
  meta->scale_factor = 1.0;
  meta->add_offset = 0.0;
  if (att_first_double(s->gid, s->varid, "scale_factor", &meta->scale_factor, &st))
    meta->has_scale = 1;
  if (att_first_double(s->gid, s->varid, "add_offset", &meta->add_offset, &st))
    meta->has_scale = 1;
  for (int i = 0; i < natts; i++) {
    char aname[NC_MAX_NAME + 1];
    if ((status = nc_inq_attname(s->gid, s->varid, i, aname)) != NC_NOERR) {
      nc_error(err, errlen, path, "cannot list attributes", status);
      goto fail;
    }
    if ((units_ok && strcmp(aname, "units") == 0) ||
        (long_ok && strcmp(aname, "long_name") == 0) ||
        (has_fv && strcmp(aname, "_FillValue") == 0) ||
        (has_mv && strcmp(aname, "missing_value") == 0) ||
        (meta->has_scale &&
         (strcmp(aname, "scale_factor") == 0 || strcmp(aname, "add_offset") == 0)))
      continue;
    if (read_attr(path, s->gid, s->varid, aname, &meta->attrs, &meta->nattrs, err,
                  errlen) != 0)
      goto fail;
  }
  if (gz_io_meta_set_fill(meta, has_fv ? &fv : NULL, has_mv ? &mv : NULL) != 0) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    goto fail;
  }
  gz_io_meta_unpack_fill(meta);
  nc_inq_natts(s->ncid, &nglobal);
  for (int i = 0; i < nglobal; i++) {
    char aname[NC_MAX_NAME + 1];
    if ((status = nc_inq_attname(s->ncid, NC_GLOBAL, i, aname)) != NC_NOERR) {
      nc_error(err, errlen, path, "cannot list global attributes", status);
      goto fail;
    }
    if (read_attr(path, s->ncid, NC_GLOBAL, aname, &meta->global_attrs,
                  &meta->nglobal_attrs, err, errlen) != 0)
      goto fail;
  }
  *state = s;
  return 0;
fail:
  nc_close(s->ncid);
  free(s->path);
  free(s);
  return -1;
}

static int ncr_read(void *state, const gz_meta_t *meta, const size_t *start,
                    const size_t *count, size_t flat, size_t n, void *dst, char *err,
                    size_t errlen) {
  nc_state_t *s = state;
  int status = meta->dtype == GZ_FLOAT32
                   ? nc_get_vara_float(s->gid, s->varid, start, count, dst)
                   : nc_get_vara_double(s->gid, s->varid, start, count, dst);
  if (status != NC_NOERR) {
    char what[320];
    snprintf(what, sizeof what, "reading '%s' failed", meta->var);
    return nc_error(err, errlen, s->path, what, status);
  }
  return 0;
}

static void ncr_close(void *state) {
  nc_state_t *s = state;
  if (!s)
    return;
  nc_close(s->ncid);
  free(s->path);
  free(s);
}

const gz_io_backend_t gz_io_backend_netcdf = {GZ_FMT_NETCDF, ncr_open, ncr_read,
                                              ncr_close};

int gz_io_netcdf_probe(const char *path) {
  int ncid, marked;
  if (!path || nc_open(path, NC_NOWRITE, &ncid) != NC_NOERR)
    return 0;
  marked = nc_inq_att(ncid, NC_GLOBAL, "_NCProperties", NULL, NULL) == NC_NOERR;
  nc_close(ncid);
  return marked ? 2 : 1;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                */

/* Numeric attributes that hold data values: written in the data's type. */
static int is_value_attr(const char *name) {
  return strcmp(name, "missing_value") == 0 || strcmp(name, "valid_min") == 0 ||
         strcmp(name, "valid_max") == 0 || strcmp(name, "valid_range") == 0 ||
         strcmp(name, "actual_range") == 0;
}

static int put_attrs(int ncid, int varid, const gz_attr_t *a, size_t n, nc_type vtype,
                     const gz_meta_t *m, const char **failed) {
  for (size_t i = 0; i < n; i++) {
    int status;
    const char *name = a[i].name;
    if (!name[0] || gz_io_reserved_attr(name) || strcmp(name, "_FillValue") == 0)
      continue;
    if (m && (strcmp(name, "scale_factor") == 0 || strcmp(name, "add_offset") == 0 ||
              (m->units[0] && strcmp(name, "units") == 0) ||
              (m->long_name[0] && strcmp(name, "long_name") == 0)))
      continue;
    if (a[i].is_text)
      status = nc_put_att_text(ncid, varid, name, a[i].text ? strlen(a[i].text) : 0,
                               a[i].text ? a[i].text : "");
    else
      status = nc_put_att_double(ncid, varid, name,
                                 m && is_value_attr(name) ? vtype : NC_DOUBLE, a[i].count,
                                 a[i].values);
    if (status != NC_NOERR) {
      *failed = name;
      return status;
    }
  }
  return NC_NOERR;
}

int gz_io_nc_put_boxes(int ncid, int varid, const gz_meta_t *meta,
                       const gz_io_source_t *src, char *err, size_t errlen) {
  int status = NC_NOERR;
  for (size_t flat = 0, n = gz_meta_count(meta), k; flat < n && status == NC_NOERR;
       flat += k) {
    size_t start[GZ_IO_MAXDIMS], count[GZ_IO_MAXDIMS];
    const void *p;
    k = gz_io_next_box(meta, flat, GZ_IO_PIECE, start, count);
    if (!(p = gz_io_source_get(src, meta, flat, k, err, errlen)))
      return -1;
    status = meta->dtype == GZ_FLOAT32 ? nc_put_vara_float(ncid, varid, start, count, p)
                                       : nc_put_vara_double(ncid, varid, start, count, p);
  }
  return status;
}

/* gz_io_write_netcdf() into the file named (created by netCDF, then moved
 * into the unnamed tmp: gz_io_temp_adopt). */
static int write_netcdf(const char *named, const char *tmp, const char *path,
                        const gz_meta_t *meta, const gz_io_source_t *src, char *err,
                        size_t errlen) {
  int ncid, varid, status, old_fill, dimids[GZ_IO_MAXDIMS], cvids[GZ_IO_MAXDIMS];
  nc_type vtype = meta->dtype == GZ_FLOAT32 ? NC_FLOAT : NC_DOUBLE;
  const char *vname = strrchr(meta->var, '/'), *what = "cannot create the file";
  const char *failed = NULL, *cause;
  char names[GZ_IO_MAXDIMS][64];
  errno = 0; /* gz_io_write_cause() looks at what the HDF5 layer's write() left */
  vname = vname ? vname + 1 : meta->var;
  if (!vname[0])
    vname = "data";
  if ((status = nc_create(named, NC_NETCDF4 | NC_CLOBBER, &ncid)) != NC_NOERR)
    return nc_error(err, errlen, path, what, status);
  if (gz_io_temp_adopt(named, tmp, err, errlen) != 0) {
    nc_close(ncid);
    return -1;
  }
  nc_set_fill(ncid, NC_NOFILL, &old_fill);
  for (int i = 0; i < meta->ndims; i++) {
    size_t len = 0;
    cvids[i] = -1;
    if (meta->dim_names[i][0])
      snprintf(names[i], sizeof names[i], "%s", meta->dim_names[i]);
    else
      snprintf(names[i], sizeof names[i], "dim%d", i);
    if (nc_inq_dimid(ncid, names[i], &dimids[i]) == NC_NOERR) {
      nc_inq_dimlen(ncid, dimids[i], &len);
      if (len != meta->dims[i]) {
        gz_io_errorf(err, errlen, "%s: dimension name '%s' used with lengths %zu and %zu",
                     path, names[i], len, meta->dims[i]);
        nc_close(ncid);
        return -1;
      }
      continue; /* same dimension again: defined once, coordinate once */
    }
    what = "cannot define a dimension";
    if ((status = nc_def_dim(ncid, names[i], meta->dims[i], &dimids[i])) != NC_NOERR)
      goto nc_fail;
    if (meta->coords[i].values && strcmp(names[i], vname) != 0) {
      what = "cannot define a coordinate variable";
      if ((status = nc_def_var(ncid, names[i], NC_DOUBLE, 1, &dimids[i], &cvids[i])) !=
          NC_NOERR)
        goto nc_fail;
      if (meta->coords[i].units[0] &&
          (status =
               nc_put_att_text(ncid, cvids[i], "units", strlen(meta->coords[i].units),
                               meta->coords[i].units)) != NC_NOERR)
        goto nc_fail;
    }
  }
  what = "cannot define the variable";
  if ((status = nc_def_var(ncid, vname, vtype, meta->ndims, dimids, &varid)) !=
          NC_NOERR ||
      (status = nc_def_var_chunking(ncid, varid, NC_CONTIGUOUS, NULL)) != NC_NOERR)
    goto nc_fail;
  what = "cannot write the variable's attributes";
  if (meta->has_fill) {
    float f = (float)meta->fill_value;
    status = vtype == NC_FLOAT
                 ? nc_put_att_float(ncid, varid, "_FillValue", NC_FLOAT, 1, &f)
                 : nc_put_att_double(ncid, varid, "_FillValue", NC_DOUBLE, 1,
                                     &meta->fill_value);
    if (status != NC_NOERR)
      goto nc_fail;
  }
  if ((meta->units[0] &&
       (status = nc_put_att_text(ncid, varid, "units", strlen(meta->units),
                                 meta->units)) != NC_NOERR) ||
      (meta->long_name[0] &&
       (status = nc_put_att_text(ncid, varid, "long_name", strlen(meta->long_name),
                                 meta->long_name)) != NC_NOERR))
    goto nc_fail;
  if ((status = put_attrs(ncid, varid, meta->attrs, meta->nattrs, vtype, meta,
                          &failed)) != NC_NOERR)
    goto nc_fail;
  what = "cannot write the global attributes";
  if ((status = put_attrs(ncid, NC_GLOBAL, meta->global_attrs, meta->nglobal_attrs, vtype,
                          NULL, &failed)) != NC_NOERR)
    goto nc_fail;
  what = "cannot finish the header";
  if ((status = nc_enddef(ncid)) != NC_NOERR)
    goto nc_fail;
  what = "cannot write a coordinate variable";
  for (int i = 0; i < meta->ndims; i++)
    if (cvids[i] >= 0 &&
        (status = nc_put_var_double(ncid, cvids[i], meta->coords[i].values)) != NC_NOERR)
      goto nc_fail;
  what = "cannot write the data";
  if ((status = gz_io_nc_put_boxes(ncid, varid, meta, src, err, errlen)) == -1) {
    nc_close(ncid);
    return -1;
  }
  if (status != NC_NOERR)
    goto nc_fail;
  if ((status = nc_close(ncid)) != NC_NOERR) {
    if ((cause = gz_io_write_cause(errno)) != NULL)
      gz_io_errorf(err, errlen, "%s: cannot finish the file: %s: %s", path,
                   nc_strerror(status), cause);
    else
      nc_error(err, errlen, path, "cannot finish the file", status);
    return -1;
  }
  return 0;
nc_fail:
  cause = gz_io_write_cause(errno);
  if (failed)
    gz_io_errorf(err, errlen, "%s: %s (%s): %s%s%s", path, what, failed,
                 nc_strerror(status), cause ? ": " : "", cause ? cause : "");
  else if (cause)
    gz_io_errorf(err, errlen, "%s: %s: %s: %s", path, what, nc_strerror(status), cause);
  else
    nc_error(err, errlen, path, what, status);
  nc_close(ncid);
  return -1;
}

int gz_io_write_netcdf(const char *tmp, const char *path, const gz_meta_t *meta,
                       const gz_io_source_t *src, char *err, size_t errlen) {
  char named[4200];
  if (gz_io_temp_for_library(tmp, path, named, sizeof named) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if (write_netcdf(named, tmp, path, meta, src, err, errlen) == 0)
    return 0;
  if (strcmp(named, tmp) != 0)
    gz_io_discard(named); /* when not yet moved; the caller drops tmp */
  return -1;
}
