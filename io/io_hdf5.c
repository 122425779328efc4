/* io_hdf5.c - HDF5 reader (MPI-IO driver, hyperslab reads) and writer. This
 * file sees the parallel HDF5 headers and never netcdf.h.
 *
 * Reading: the dataset at a path ("/sst", "/group/data"); its dims from the
 * dataspace; dimension names and coordinates from the dimension scales
 * attached through DIMENSION_LIST (the HDF5 Dimension Scale convention, also
 * used by netCDF-4: a scale whose NAME starts with "This is a netCDF
 * dimension but not a netCDF variable" has no coordinate values), else
 * "dim0", ...; attributes units, long_name, _FillValue, missing_value,
 * scale_factor, add_offset, the others and the root group's. Integer
 * datasets are read as double. HDF5's own error printing is switched off;
 * the innermost message of its error stack is appended to ours.
 *
 * Writing: see gz_io_write() in gz_io.h. The dataset is written straight
 * into the file, a plain (contiguous) one a box at a time (memory: one box,
 * not the field), a filtered one a chunk at a time (memory: a chunk and its
 * encoding, not the file): see write_hdf5() for why and how a failed write
 * never reaches libhdf5's flush. The Dimension Scale attributes
 * (CLASS, NAME, REFERENCE_LIST, DIMENSION_LIST) are written with the core
 * library, with the types the HL library uses, so h5dump, h5py and netCDF
 * recognise them without linking libhdf5_hl. */
#define _GNU_SOURCE /* fallocate, memfd_create */
#include "gz_io.h"
#include "gz_io_commit.h"
#include "h5z_gzstack.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NC_BARE_DIM "This is a netCDF dimension but not a netCDF variable"

typedef struct {
  hid_t file, dset, fspace;
  char *path;
} h5_state_t;

static void h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *data) {
  char *buf = data;
  if (n == 0 && e->desc)
    snprintf(buf, 256, "%s", e->desc);
  return 0;
}

/* "path: what (HDF5: innermost message)"; clears the error stack. */
static int h5_error(char *err, size_t errlen, const char *path, const char *what) {
  char detail[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, detail);
  H5Eclear2(H5E_DEFAULT);
  if (detail[0])
    gz_io_errorf(err, errlen, "%s: %s (HDF5: %s)", path, what, detail);
  else
    gz_io_errorf(err, errlen, "%s: %s", path, what);
  return -1;
}

/* The gzstack filter in this HDF5 library (gzstack writes and reads its own
 * files without HDF5_PLUGIN_PATH). 0, or -1. */
static int register_filter(void) {
  if (H5Zfilter_avail(GZ_H5Z_FILTER_ID) > 0)
    return 0;
  return H5Zregister(gz_h5z_filter_class()) < 0 ? -1 : 0;
}

static void close_id(hid_t id) {
  if (id < 0)
    return;
  switch (H5Iget_type(id)) {
  case H5I_FILE:
    H5Fclose(id);
    break;
  case H5I_GROUP:
    H5Gclose(id);
    break;
  case H5I_DATASET:
    H5Dclose(id);
    break;
  case H5I_DATASPACE:
    H5Sclose(id);
    break;
  case H5I_DATATYPE:
    H5Tclose(id);
    break;
  case H5I_ATTR:
    H5Aclose(id);
    break;
  case H5I_GENPROP_LST:
    H5Pclose(id);
    break;
  default:
    break;
  }
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* ---------------------------------------------------------------------- */
/* Attribute reading                                                      */

/* Text of a string attribute (elements joined by '\n'), malloc'ed; NULL if
 * the attribute is not a string or cannot be read. */
static char *attr_text(hid_t attr) {
  hid_t ftype = H5Aget_type(attr), space = H5Aget_space(attr), mtype = -1;
  hssize_t np = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  char *out = NULL;
  if (ftype < 0 || space < 0 || np < 0 || H5Tget_class(ftype) != H5T_STRING)
    goto done;
  if (H5Tis_variable_str(ftype) > 0) {
    char **strs = calloc(np ? (size_t)np : 1, sizeof *strs);
    mtype = H5Tcopy(H5T_C_S1);
    if (!strs || mtype < 0 || H5Tset_size(mtype, H5T_VARIABLE) < 0 ||
        H5Aread(attr, mtype, strs) < 0) {
      free(strs);
      goto done;
    }
    out = gz_io_join_lines(strs, (size_t)np);
    H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, strs);
    free(strs);
  } else {
    size_t size = H5Tget_size(ftype), used = 0;
    char *raw;
    if (size == 0 || (np && (size_t)np > ((size_t)-1) / (size + 1)))
      goto done;
    raw = malloc(size * (size_t)np + 1);
    out = malloc((size + 1) * (size_t)np + 1);
    mtype = H5Tcopy(ftype);
    if (!raw || !out || mtype < 0 || (np && H5Aread(attr, mtype, raw) < 0)) {
      free(raw);
      free(out);
      out = NULL;
      goto done;
    }
    for (hssize_t i = 0; i < np; i++) {
      const char *e = raw + (size_t)i * size;
      size_t l = strnlen(e, size);
      if (i)
        out[used++] = '\n';
      memcpy(out + used, e, l);
      used += l;
    }
    out[used] = '\0';
    free(raw);
  }
done:
  close_id(mtype);
  close_id(space);
  close_id(ftype);
  return out;
}

/* Numeric attribute as doubles (malloc'ed, *count values); -1 if not numeric. */
static int attr_numbers(hid_t attr, double **values, size_t *count) {
  hid_t ftype = H5Aget_type(attr), space = H5Aget_space(attr);
  hssize_t np = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
  int rc = -1;
  *values = NULL;
  *count = 0;
  if (np >= 0 && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
    double *v = malloc((np ? (size_t)np : 1) * sizeof *v);
    if (v && (np == 0 || H5Aread(attr, H5T_NATIVE_DOUBLE, v) >= 0)) {
      *values = v;
      *count = (size_t)np;
      rc = 0;
    } else {
      free(v);
    }
  }
  close_id(space);
  close_id(ftype);
  return rc;
}

/* Read attribute name of obj into a fixed field if it is text that fits. */
static int text_field(hid_t obj, const char *name, char *field, size_t cap) {
  hid_t a;
  char *t;
  int ok = 0;
  if (H5Aexists(obj, name) <= 0 || (a = H5Aopen(obj, name, H5P_DEFAULT)) < 0)
    return 0;
  t = attr_text(a);
  if (t && strlen(t) < cap) {
    memcpy(field, t, strlen(t) + 1);
    ok = 1;
  }
  free(t);
  H5Aclose(a);
  return ok;
}

static int first_number(hid_t obj, const char *name, double *out) {
  hid_t a;
  double *v;
  size_t n;
  int ok = 0;
  if (H5Aexists(obj, name) <= 0 || (a = H5Aopen(obj, name, H5P_DEFAULT)) < 0)
    return 0;
  if (attr_numbers(a, &v, &n) == 0 && n > 0) {
    *out = v[0];
    ok = 1;
  }
  free(v);
  H5Aclose(a);
  return ok;
}

typedef struct {
  gz_attr_t **list;
  size_t *n;
  const char *const *skip; /* NULL-terminated names handled elsewhere */
  int failed;
} attr_ctx_t;

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  attr_ctx_t *c = data;
  hid_t a;
  char *text;
  double *v;
  size_t n;
  int rc = 0;
  (void)info;
  if (strlen(name) >= sizeof(((gz_attr_t *)0)->name) || gz_io_reserved_attr(name))
    return 0;
  for (int i = 0; c->skip && c->skip[i]; i++)
    if (strcmp(name, c->skip[i]) == 0)
      return 0;
  if ((a = H5Aopen(loc, name, H5P_DEFAULT)) < 0)
    return 0; /* unreadable attribute: skipped */
  if ((text = attr_text(a))) {
    rc = gz_io_attr_append(c->list, c->n, name, text, NULL, 0);
    free(text);
  } else if (attr_numbers(a, &v, &n) == 0) {
    rc = gz_io_attr_append(c->list, c->n, name, NULL, v, n);
    free(v);
  }
  H5Aclose(a);
  if (rc != 0) {
    c->failed = 1;
    return -1;
  }
  return 0;
}

/* All attributes of obj in creation order when tracked, else by name. */
static int read_attrs(hid_t obj, gz_attr_t **list, size_t *n, const char *const *skip) {
  attr_ctx_t c = {list, n, skip, 0};
  hsize_t idx = 0;
  if (H5Aiterate2(obj, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, attr_cb, &c) >= 0)
    return 0;
  if (c.failed)
    return -1;
  H5Eclear2(H5E_DEFAULT);
  idx = 0;
  return H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, &c) >= 0 ? 0 : -1;
}

static int is_dimension_scale(hid_t dset) {
  char cls[32] = "";
  return text_field(dset, "CLASS", cls, sizeof cls) &&
         strcmp(cls, "DIMENSION_SCALE") == 0;
}

/* ---------------------------------------------------------------------- */
/* Finding the dataset                                                    */

typedef struct {
  char *names; /* "a, b, c" */
  size_t cap, used;
  int all, count; /* all: list every dataset; else the data candidates */
  char first[1024];
} list_ctx_t;

static int numeric_dataset(hid_t d) {
  hid_t t = H5Dget_type(d), s = H5Dget_space(d);
  H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  int rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
  close_id(t);
  close_id(s);
  return rank >= 1 && (cls == H5T_FLOAT || cls == H5T_INTEGER);
}

static void list_add(list_ctx_t *c, const char *name) {
  int n;
  if (c->count == 0)
    snprintf(c->first, sizeof c->first, "/%s", name);
  c->count++;
  if (c->used + 1 >= c->cap)
    return;
  n = snprintf(c->names + c->used, c->cap - c->used, "%s/%s", c->used ? ", " : "", name);
  if (n < 0 || (size_t)n >= c->cap - c->used) {
    if (c->cap > 4)
      snprintf(c->names + c->cap - 4, 4, "...");
    c->used = c->cap;
    return;
  }
  c->used += (size_t)n;
}

/* Visit callback: every dataset but netCDF's bare dimensions, or the
 * candidates (numeric, not a dimension scale). */
static herr_t list_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
  list_ctx_t *c = data;
  hid_t o;
  if (info->type != H5L_TYPE_HARD)
    return 0;
  if ((o = H5Oopen(g, name, H5P_DEFAULT)) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  if (H5Iget_type(o) == H5I_DATASET) {
    if (c->all) {
      char bare[128] = "";
      text_field(o, "NAME", bare, sizeof bare);
      if (strncmp(bare, NC_BARE_DIM, strlen(NC_BARE_DIM)) != 0)
        list_add(c, name);
    } else if (numeric_dataset(o) && !is_dimension_scale(o)) {
      list_add(c, name);
    }
  }
  H5Oclose(o);
  return 0;
}

static void visit(hid_t file, list_ctx_t *c) {
  if (H5Lvisit(file, H5_INDEX_CRT_ORDER, H5_ITER_INC, list_cb, c) < 0) {
    H5Eclear2(H5E_DEFAULT);
    c->used = 0;
    c->count = 0;
    if (c->cap)
      c->names[0] = '\0';
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, list_cb, c);
  }
}

/* 1 if every component of the absolute path p exists as a link. */
static int path_exists(hid_t file, const char *p) {
  char buf[1024];
  size_t len = strlen(p);
  if (len == 0 || len >= sizeof buf || p[0] != '/')
    return 0;
  memcpy(buf, p, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char keep = buf[i];
      int ok;
      if (i == 1 && keep == '/')
        return 0;
      buf[i] = '\0';
      ok = H5Lexists(file, buf, H5P_DEFAULT) > 0;
      buf[i] = keep;
      if (!ok)
        return 0;
    }
  }
  return 1;
}

static hid_t open_dataset(const char *path, hid_t file, const char *var, char *dpath,
                          size_t dcap, char *err, size_t errlen) {
  char names[1024] = "";
  hid_t d = -1;
  if (var && var[0]) {
    snprintf(dpath, dcap, "%s%s", var[0] == '/' ? "" : "/", var);
    if (path_exists(file, dpath)) {
      hid_t o = H5Oopen(file, dpath, H5P_DEFAULT);
      if (o >= 0 && H5Iget_type(o) == H5I_DATASET)
        return o;
      close_id(o);
      H5Eclear2(H5E_DEFAULT);
      gz_io_errorf(err, errlen, "%s: '%s' is not a dataset", path, dpath);
      return -1;
    }
    list_ctx_t c = {names, sizeof names, 0, 1, 0, ""};
    visit(file, &c);
    gz_io_errorf(err, errlen, "%s: no dataset '%s' (datasets: %s)", path, dpath,
                 names[0] ? names : "none");
    return -1;
  }
  list_ctx_t c = {names, sizeof names, 0, 0, 0, ""};
  visit(file, &c);
  if (c.count == 1) {
    snprintf(dpath, dcap, "%s", c.first);
    d = H5Dopen2(file, dpath, H5P_DEFAULT);
    if (d < 0)
      h5_error(err, errlen, path, "cannot open the dataset");
    return d;
  }
  if (c.count > 1) {
    gz_io_errorf(err, errlen, "%s: several datasets (%s); choose one with --var", path,
                 names);
    return -1;
  }
  gz_io_errorf(err, errlen, "%s: no numeric dataset", path);
  return -1;
}

/* ---------------------------------------------------------------------- */
/* Dimension scales                                                       */

static int read_scale(const char *path, hid_t scale, size_t len, gz_meta_t *meta, int i,
                      char *err, size_t errlen) {
  char name[1024] = "", bare[128] = "";
  hid_t s;
  hsize_t n = 0;
  if (H5Iget_name(scale, name, sizeof name) > 0)
    snprintf(meta->dim_names[i], sizeof meta->dim_names[i], "%.63s", base_name(name));
  text_field(scale, "NAME", bare, sizeof bare);
  if (strncmp(bare, NC_BARE_DIM, strlen(NC_BARE_DIM)) == 0)
    return 0;
  s = H5Dget_space(scale);
  if (s < 0 || H5Sget_simple_extent_ndims(s) != 1 ||
      H5Sget_simple_extent_dims(s, &n, NULL) != 1 || n != len || len == 0 ||
      !numeric_dataset(scale)) {
    close_id(s);
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  H5Sclose(s);
  gz_coord_t *c = &meta->coords[i];
  if (!(c->values = malloc(len * sizeof(double)))) {
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  if (H5Dread(scale, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->values) < 0) {
    free(c->values);
    c->values = NULL;
    return h5_error(err, errlen, path, "cannot read a coordinate");
  }
  c->count = len;
  memcpy(c->name, meta->dim_names[i], sizeof c->name);
  text_field(scale, "units", c->units, sizeof c->units);
  text_field(scale, "calendar", c->calendar, sizeof c->calendar);
  return 0;
}

static int read_dims(const char *path, hid_t dset, const char *dpath, gz_meta_t *meta,
                     char *err, size_t errlen) {
  hid_t attr = -1, space = -1, vtype = -1;
  hvl_t lists[GZ_IO_MAXDIMS];
  int rc = 0, have = 0;
  for (int i = 0; i < meta->ndims; i++)
    snprintf(meta->dim_names[i], sizeof meta->dim_names[i], "dim%d", i);
  if (meta->ndims == 1 && is_dimension_scale(dset)) /* a coordinate itself */
    return read_scale(path, dset, meta->dims[0], meta, 0, err, errlen);
  if (H5Aexists(dset, "DIMENSION_LIST") <= 0)
    return 0;
  attr = H5Aopen(dset, "DIMENSION_LIST", H5P_DEFAULT);
  space = attr >= 0 ? H5Aget_space(attr) : -1;
  vtype = H5Tvlen_create(H5T_STD_REF_OBJ);
  if (attr < 0 || space < 0 || vtype < 0 ||
      H5Sget_simple_extent_npoints(space) != (hssize_t)meta->ndims ||
      H5Aread(attr, vtype, lists) < 0) {
    H5Eclear2(H5E_DEFAULT);
    goto done; /* unusable list: keep the default names */
  }
  have = 1;
  for (int i = 0; i < meta->ndims && rc == 0; i++) {
    hid_t scale;
    if (lists[i].len < 1 || !lists[i].p)
      continue;
    scale = H5Rdereference2(dset, H5P_DEFAULT, H5R_OBJECT, lists[i].p);
    if (scale < 0) {
      H5Eclear2(H5E_DEFAULT);
      continue;
    }
    if (H5Iget_type(scale) == H5I_DATASET)
      rc = read_scale(path, scale, meta->dims[i], meta, i, err, errlen);
    close_id(scale);
  }
done:
  if (have)
    H5Dvlen_reclaim(vtype, space, H5P_DEFAULT, lists);
  close_id(vtype);
  close_id(space);
  close_id(attr);
  (void)dpath;
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Reader                                                                 */

static int h5r_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                    MPI_Comm comm, gz_meta_t *meta, void **state, char *err,
                    size_t errlen) {
  static const char *const handled[] = {
      "units",        "long_name",  "_FillValue", "missing_value",
      "scale_factor", "add_offset", NULL};
  h5_state_t *s = calloc(1, sizeof *s);
  hid_t fapl = -1, type = -1, root = -1;
  hsize_t hd[GZ_IO_MAXDIMS];
  H5T_class_t cls;
  int rank, mpi_on = 0, mpi_done = 0, units_ok, long_ok, has_fv, has_mv;
  double fv = 0, mv = 0;
  const char *skip[7];
  h5_quiet();
  if (!s || !(s->path = strdup(path))) {
    free(s);
    gz_io_errorf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  s->file = s->dset = s->fspace = -1;
  MPI_Initialized(&mpi_on);
  MPI_Finalized(&mpi_done);
  register_filter(); /* files gzstack wrote with its filter (else HDF5's plugin path) */
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || (mpi_on && !mpi_done && comm != MPI_COMM_NULL &&
                   H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0)) {
    h5_error(err, errlen, path, "cannot set up the MPI-IO driver");
    goto fail;
  }
  s->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  if (s->file < 0) {
    h5_error(err, errlen, path, "not an HDF5 file, or it cannot be opened");
    goto fail;
  }
  H5Pclose(fapl);
  fapl = -1;
  s->dset = open_dataset(path, s->file, var, meta->var, sizeof meta->var, err, errlen);
  if (s->dset < 0)
    goto fail;
  type = H5Dget_type(s->dset);
  cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  if (cls == H5T_FLOAT)
    meta->dtype = H5Tget_size(type) == 4 ? GZ_FLOAT32 : GZ_FLOAT64;
  else if (cls == H5T_INTEGER)
    meta->dtype = GZ_FLOAT64;
  else {
    gz_io_errorf(err, errlen, "%s: dataset '%s' is not numeric", path, meta->var);
    goto fail;
  }
  s->fspace = H5Dget_space(s->dset);
  rank = s->fspace >= 0 ? H5Sget_simple_extent_ndims(s->fspace) : -1;
  if (rank < 1 || rank > GZ_IO_MAXDIMS) {
    H5Eclear2(H5E_DEFAULT);
    gz_io_errorf(err, errlen, "%s: dataset '%s' has %d dimensions (1..%d supported)",
                 path, meta->var, rank, GZ_IO_MAXDIMS);
    goto fail;
  }
  H5Sget_simple_extent_dims(s->fspace, hd, NULL);
  meta->ndims = rank;
  for (int i = 0; i < rank; i++) {
    if (hd[i] > (hsize_t)SIZE_MAX) {
      gz_io_errorf(err, errlen, "%s: dataset '%s' is too large", path, meta->var);
      goto fail;
    }
    meta->dims[i] = (size_t)hd[i];
  }
  if (read_dims(path, s->dset, meta->var, meta, err, errlen) != 0)
    goto fail;
  units_ok = text_field(s->dset, "units", meta->units, sizeof meta->units);
  long_ok = text_field(s->dset, "long_name", meta->long_name, sizeof meta->long_name);
  has_fv = first_number(s->dset, "_FillValue", &fv);
  has_mv = first_number(s->dset, "missing_value", &mv);
  meta->scale_factor = 1.0;
  meta->add_offset = 0.0;
  if (first_number(s->dset, "scale_factor", &meta->scale_factor))
    meta->has_scale = 1;
  if (first_number(s->dset, "add_offset", &meta->add_offset))
    meta->has_scale = 1;
  {
    int k = 0;
    if (units_ok)
      skip[k++] = handled[0];
    if (long_ok)
      skip[k++] = handled[1];
    if (has_fv)
      skip[k++] = handled[2];
    if (has_mv)
      skip[k++] = handled[3];
    if (meta->has_scale) {
      skip[k++] = handled[4];
      skip[k++] = handled[5];
    }
    skip[k] = NULL;
  }
  if (read_attrs(s->dset, &meta->attrs, &meta->nattrs, skip) != 0 ||
      gz_io_meta_set_fill(meta, has_fv ? &fv : NULL, has_mv ? &mv : NULL) != 0) {
    h5_error(err, errlen, path, "cannot read the dataset's attributes");
    goto fail;
  }
  gz_io_meta_unpack_fill(meta);
  root = H5Oopen(s->file, "/", H5P_DEFAULT);
  if (root < 0 ||
      read_attrs(root, &meta->global_attrs, &meta->nglobal_attrs, NULL) != 0) {
    h5_error(err, errlen, path, "cannot read the global attributes");
    goto fail;
  }
  H5Oclose(root);
  H5Tclose(type);
  *state = s;
  return 0;
fail:
  close_id(root);
  close_id(type);
  close_id(fapl);
  close_id(s->fspace);
  close_id(s->dset);
  close_id(s->file);
  H5Eclear2(H5E_DEFAULT);
  free(s->path);
  free(s);
  return -1;
}

static int h5r_read(void *state, const gz_meta_t *meta, const size_t *start,
                    const size_t *count, size_t flat, size_t n, void *dst, char *err,
                    size_t errlen) {
  h5_state_t *s = state;
  hsize_t hs[GZ_IO_MAXDIMS], hc[GZ_IO_MAXDIMS];
  hid_t mspace, mtype = meta->dtype == GZ_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  herr_t rc;
  for (int i = 0; i < meta->ndims; i++) {
    hs[i] = start[i];
    hc[i] = count[i];
  }
  if (H5Sselect_hyperslab(s->fspace, H5S_SELECT_SET, hs, NULL, hc, NULL) < 0)
    return h5_error(err, errlen, s->path, "cannot select the values to read");
  /* the memory in the box's shape (n values): rows copied, not values */
  mspace = H5Screate_simple(meta->ndims, hc, NULL);
  rc = mspace < 0 ? -1 : H5Dread(s->dset, mtype, mspace, s->fspace, H5P_DEFAULT, dst);
  if (rc < 0) {
    char what[320];
    snprintf(what, sizeof what, "reading '%s' failed", meta->var);
    h5_error(err, errlen, s->path, what); /* before any call clears the stack */
  }
  close_id(mspace);
  return rc < 0 ? -1 : 0;
}

static void h5r_close(void *state) {
  h5_state_t *s = state;
  if (!s)
    return;
  close_id(s->fspace);
  close_id(s->dset);
  close_id(s->file);
  free(s->path);
  free(s);
}

const gz_io_backend_t gz_io_backend_hdf5 = {GZ_FMT_HDF5, h5r_open, h5r_read, h5r_close};

/* ---------------------------------------------------------------------- */
/* Writer                                                                 */

/* Scalar fixed-length string attribute: text of strlen bytes (netCDF's
 * layout for text), or with its NUL counted (the HL library's layout for
 * CLASS and NAME, which its readers expect). */
static int put_string(hid_t obj, const char *name, const char *text, int with_nul) {
  size_t len = text ? strlen(text) : 0, size = len + (with_nul ? 1 : 0);
  hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = -1;
  int rc = -1;
  if (t >= 0 && s >= 0 && H5Tset_size(t, size ? size : 1) >= 0 &&
      H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 &&
      (a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
    rc = H5Awrite(a, t, len ? text : "") < 0 ? -1 : 0;
  close_id(a);
  close_id(s);
  close_id(t);
  return rc;
}

static int put_text(hid_t obj, const char *name, const char *text) {
  return put_string(obj, name, text, 0);
}

/* 1-D numeric attribute of count values (null dataspace when 0). */
static int put_numbers(hid_t obj, const char *name, hid_t ftype, const double *v,
                       size_t count) {
  hsize_t n = count;
  hid_t s = count ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_NULL), a = -1;
  int rc = -1;
  if (s >= 0 && (a = H5Acreate2(obj, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
    rc = count == 0 || H5Awrite(a, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
  close_id(a);
  close_id(s);
  return rc;
}

static int is_value_attr(const char *name) {
  return strcmp(name, "missing_value") == 0 || strcmp(name, "valid_min") == 0 ||
         strcmp(name, "valid_max") == 0 || strcmp(name, "valid_range") == 0 ||
         strcmp(name, "actual_range") == 0;
}

static int put_attrs(hid_t obj, const gz_attr_t *a, size_t n, hid_t vtype,
                     const gz_meta_t *m, const char **failed) {
  for (size_t i = 0; i < n; i++) {
    const char *name = a[i].name;
    int rc;
    if (!name[0] || gz_io_reserved_attr(name) || strcmp(name, "_FillValue") == 0)
      continue;
    if (m && (strcmp(name, "scale_factor") == 0 || strcmp(name, "add_offset") == 0 ||
              (m->units[0] && strcmp(name, "units") == 0) ||
              (m->long_name[0] && strcmp(name, "long_name") == 0)))
      continue;
    if (H5Aexists(obj, name) > 0)
      H5Adelete(obj, name); /* a repeated name: the last one wins */
    rc = a[i].is_text
             ? put_text(obj, name, a[i].text)
             : put_numbers(obj, name, m && is_value_attr(name) ? vtype : H5T_IEEE_F64LE,
                           a[i].values, a[i].count);
    if (rc != 0) {
      *failed = name;
      return -1;
    }
  }
  return 0;
}

typedef struct {
  hobj_ref_t ref;
  int dim;
} ds_ref_t;

/* Create (or find, for a repeated dim name) the scale of dim i in group g. */
static hid_t make_scale(hid_t g, const gz_meta_t *m, int i, const char *name) {
  hsize_t len = m->dims[i];
  hid_t d = -1, sp = -1, dcpl = -1;
  char bare[128];
  if (H5Lexists(g, name, H5P_DEFAULT) > 0)
    return H5Dopen2(g, name, H5P_DEFAULT);
  sp = H5Screate_simple(1, &len, NULL);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (sp < 0 || dcpl < 0)
    goto done;
  if (m->coords[i].values) {
    d = H5Dcreate2(g, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0 ||
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                 m->coords[i].values) < 0 ||
        (m->coords[i].units[0] && put_text(d, "units", m->coords[i].units) != 0) ||
        put_string(d, "NAME", name, 1) != 0)
      goto fail;
  } else {
    /* never written: no storage is allocated, reads give the fill (0) */
    d = H5Dcreate2(g, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    snprintf(bare, sizeof bare, "%s.%10llu", NC_BARE_DIM, (unsigned long long)len);
    if (d < 0 || put_string(d, "NAME", bare, 1) != 0)
      goto fail;
  }
  if (put_string(d, "CLASS", "DIMENSION_SCALE", 1) != 0)
    goto fail;
  goto done;
fail:
  close_id(d);
  d = -1;
done:
  close_id(dcpl);
  close_id(sp);
  return d;
}

/* Attach the scales: DIMENSION_LIST on the dataset, REFERENCE_LIST on each
 * scale (one entry per dimension it serves). */
static int attach_scales(hid_t file, hid_t g, hid_t dset, const char *dpath,
                         const gz_meta_t *m) {
  char names[GZ_IO_MAXDIMS][64], spath[GZ_IO_MAXDIMS][1100];
  hobj_ref_t refs[GZ_IO_MAXDIMS], dref;
  hvl_t lists[GZ_IO_MAXDIMS];
  int has[GZ_IO_MAXDIMS] = {0}, rc = -1;
  const char *vname = base_name(dpath);
  char gpath[1024];
  hid_t vt = -1, sp = -1, a = -1, ct = -1;
  hsize_t n = (hsize_t)m->ndims;
  size_t glen = (size_t)(vname - dpath);
  snprintf(gpath, sizeof gpath, "%.*s", (int)glen, dpath); /* ends with '/' */
  if (H5Rcreate(&dref, file, dpath, H5R_OBJECT, -1) < 0)
    return -1;
  for (int i = 0; i < m->ndims; i++) {
    hid_t d;
    lists[i].len = 0;
    lists[i].p = NULL;
    if (m->dim_names[i][0])
      snprintf(names[i], sizeof names[i], "%s", m->dim_names[i]);
    else
      snprintf(names[i], sizeof names[i], "dim%d", i);
    if (strcmp(names[i], vname) == 0)
      continue; /* the dataset is its own coordinate */
    if ((d = make_scale(g, m, i, names[i])) < 0)
      return -1;
    H5Dclose(d);
    snprintf(spath[i], sizeof spath[i], "%s%s", gpath, names[i]);
    if (H5Rcreate(&refs[i], file, spath[i], H5R_OBJECT, -1) < 0)
      return -1;
    lists[i].len = 1;
    lists[i].p = &refs[i];
    has[i] = 1;
  }
  vt = H5Tvlen_create(H5T_STD_REF_OBJ);
  sp = H5Screate_simple(1, &n, NULL);
  if (vt < 0 || sp < 0 ||
      (a = H5Acreate2(dset, "DIMENSION_LIST", vt, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      H5Awrite(a, vt, lists) < 0)
    goto done;
  close_id(a);
  a = -1;
  close_id(sp);
  sp = -1;
  ct = H5Tcreate(H5T_COMPOUND, sizeof(ds_ref_t));
  if (ct < 0 || H5Tinsert(ct, "dataset", HOFFSET(ds_ref_t, ref), H5T_STD_REF_OBJ) < 0 ||
      H5Tinsert(ct, "dimension", HOFFSET(ds_ref_t, dim), H5T_NATIVE_INT) < 0)
    goto done;
  for (int i = 0; i < m->ndims; i++) {
    ds_ref_t entries[GZ_IO_MAXDIMS];
    hsize_t ne = 0;
    hid_t d;
    if (!has[i])
      continue;
    int first = 1;
    for (int j = 0; j < i; j++)
      if (has[j] && strcmp(names[j], names[i]) == 0)
        first = 0;
    if (!first)
      continue; /* written with the first dimension of this name */
    for (int j = i; j < m->ndims; j++)
      if (has[j] && strcmp(names[j], names[i]) == 0) {
        entries[ne].ref = dref;
        entries[ne].dim = j;
        ne++;
      }
    d = H5Dopen2(g, names[i], H5P_DEFAULT);
    sp = H5Screate_simple(1, &ne, NULL);
    if (d < 0 || sp < 0 ||
        (a = H5Acreate2(d, "REFERENCE_LIST", ct, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(a, ct, entries) < 0) {
      close_id(d);
      goto done;
    }
    close_id(a);
    a = -1;
    close_id(sp);
    sp = -1;
    H5Dclose(d);
  }
  rc = 0;
done:
  close_id(ct);
  close_id(a);
  close_id(sp);
  close_id(vt);
  return rc;
}

/* The dataset's layout: contiguous (ncd 0), or chunks of chunk[] through
 * the gzstack filter with its ncd cd values. */
typedef struct h5_filter {
  size_t ncd;
  unsigned cd[6 + GZ_IO_MAXDIMS];
  size_t chunk[GZ_IO_MAXDIMS];
} h5_filter_t;

static int set_layout(hid_t dcpl, const gz_meta_t *meta, const h5_filter_t *f) {
  hsize_t hc[GZ_IO_MAXDIMS];
  if (!f->ncd)
    return H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ? -1 : 0;
  for (int i = 0; i < meta->ndims; i++)
    hc[i] = f->chunk[i];
  return register_filter() != 0 || H5Pset_chunk(dcpl, meta->ndims, hc) < 0 ||
                 H5Pset_filter(dcpl, GZ_H5Z_FILTER_ID, H5Z_FLAG_MANDATORY, f->ncd,
                               f->cd) < 0
             ? -1
             : 0;
}

/* libhdf5 1.10.8 cannot survive a failed flush of its metadata cache: the
 * failure leaves the cache's skip list enabled, every later flush (the one
 * in H5Fclose too) then fails with "slist already enabled?", H5Fclose
 * fails, and H5close (at exit, or in MPI_Finalize) dereferences the
 * half-closed file and crashes. A failed write of raw data is harmless.
 * So a file on disk is written in this order: all the metadata (dataset,
 * attributes, dimension scales), its space then reserved with the data's
 * (reserve; a filtered dataset's space is reserved as it grows, before
 * each chunk), the data, the space up to the file's end reserved again,
 * and H5Fclose, whose flush then only writes into blocks the file already
 * has. When a reservation or a write fails, libhdf5's descriptor is
 * pointed at an anonymous in-memory file (divert), so that the flush of
 * H5Fclose succeeds there, and the temporary is dropped by the caller. */

/* libhdf5's descriptor of file (the sec2 driver's), or -1. */
static int h5_descriptor(hid_t file) {
  void *h = NULL;
  return H5Fget_vfd_handle(file, H5P_DEFAULT, &h) >= 0 && h ? *(int *)h : -1;
}

/* Zeros written over every hole of fd's first end bytes (the regions never
 * written: SEEK_HOLE, or everything past the end of the file where the file
 * system does not report holes), so that blocks exist there. 0, or -1 with
 * errno. */
static int fill_holes(int fd, off_t end) {
  static const char zeros[65536];
  for (off_t pos = 0; pos < end;) {
    off_t hole = lseek(fd, pos, SEEK_HOLE), data;
    if (hole < 0 && errno != ENXIO)
      return -1;
    if (hole < 0)
      hole = pos; /* pos at or past the end of the file: a hole to end */
    if (hole >= end)
      break;
    data = lseek(fd, hole, SEEK_DATA);
    if (data < 0 && errno != ENXIO)
      return -1;
    if (data < 0 || data > end)
      data = end; /* no data after the hole (ENXIO), or past end */
    for (off_t at = hole; at < data; at += (off_t)sizeof zeros) {
      size_t n = data - at < (off_t)sizeof zeros ? (size_t)(data - at) : sizeof zeros;
      if (gz_io_pwrite_all(fd, zeros, n, at) != 0)
        return -1;
    }
    pos = data;
  }
  return 0;
}

/* Blocks on disk for the file's bytes so far (everything libhdf5 has
 * allocated: its end of allocation) and more bytes after them: fallocate. 0,
 * or -1 with errno (ENOSPC, EFBIG). Where the file system cannot reserve
 * (EOPNOTSUPP: some network and FUSE file systems), the bytes so far get
 * their blocks by writing zeros into the holes among them (fill_holes: the
 * metadata libhdf5 has allocated but not yet written; never a written byte),
 * the file-size limit is checked for the more bytes, and they are not
 * reserved: the data are then written unreserved, where a failed write is
 * harmless (the data's own blocks), and only the metadata needs blocks. */
static int reserve(hid_t file, size_t more) {
  struct rlimit rl;
  haddr_t end = 0;
  int fd = h5_descriptor(file);
  if (fd < 0 || H5Fget_eoa(file, &end) < 0) {
    errno = EIO;
    return -1;
  }
  if (end + more == 0 || fallocate(fd, 0, 0, (off_t)(end + more)) == 0)
    return 0;
  if (errno != EOPNOTSUPP && errno != ENOSYS)
    return -1;
  if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      end + more > (haddr_t)rl.rlim_cur) {
    errno = EFBIG;
    return -1;
  }
  return fill_holes(fd, (off_t)end);
}

/* The file cut to libhdf5's end of allocation where a reservation (of a
 * chunk's room) left it longer: the file libhdf5 would have written. 0, or
 * -1 with errno. */
static int trim(hid_t file) {
  haddr_t end = 0;
  struct stat st;
  int fd = h5_descriptor(file);
  if (fd < 0 || H5Fget_eoa(file, &end) < 0 || fstat(fd, &st) != 0) {
    errno = EIO;
    return -1;
  }
  return (haddr_t)st.st_size > end ? ftruncate(fd, (off_t)end) : 0;
}

/* After a failure: what libhdf5 still writes while the file closes goes to
 * an anonymous in-memory file, sparse, dropped with its descriptor. */
static void divert(hid_t file) {
  int fd = h5_descriptor(file), m;
  if (fd < 0 || (m = memfd_create("gzstack-h5-discard", MFD_CLOEXEC)) < 0)
    return;
  dup2(m, fd);
  close(m);
}

/* A plain dataset's values from src, a box (gz_io_next_box) at a time. 0,
 * -1 (HDF5 failed: errno), or -2 (the source did: err). */
static int put_values(hid_t dset, hid_t mtype, const gz_meta_t *meta,
                      const gz_io_source_t *src, char *err, size_t errlen) {
  size_t n = gz_meta_count(meta);
  hid_t fspace = -1, mspace = -1;
  int rc = 0;
  if ((fspace = H5Dget_space(dset)) < 0)
    return -1;
  for (size_t flat = 0, k; flat < n && rc == 0; flat += k) {
    size_t start[GZ_IO_MAXDIMS], count[GZ_IO_MAXDIMS];
    hsize_t hs[GZ_IO_MAXDIMS], hc[GZ_IO_MAXDIMS];
    const void *p;
    k = gz_io_next_box(meta, flat, GZ_IO_PIECE, start, count);
    for (int d = 0; d < meta->ndims; d++) {
      hs[d] = start[d];
      hc[d] = count[d];
    }
    if (!(p = gz_io_source_get(src, meta, flat, k, err, errlen))) {
      rc = -2;
      break;
    }
    /* the memory in the box's own shape: libhdf5 then copies rows, not
     * single values (a 1-D memory space costs it an iteration per value) */
    mspace = H5Screate_simple(meta->ndims, hc, NULL);
    rc = mspace >= 0 &&
                 H5Sselect_hyperslab(fspace, H5S_SELECT_SET, hs, NULL, hc, NULL) >= 0 &&
                 H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, p) >= 0
             ? 0
             : -1;
    close_id(mspace);
  }
  close_id(fspace);
  return rc;
}

/* Room reserved beyond a chunk for what storing it adds to the chunk index:
 * a v1 B-tree, whose split allocates two nodes of at most 5736 bytes (64
 * children; 65 keys of 8 + 8 x (ndims + 1) bytes, ndims <= 8), and a 2 KiB
 * block of libhdf5's metadata aggregator. */
#define GZ_H5_INDEX_ROOM ((size_t)16 << 10)

/* A filtered dataset's values from src, one chunk per box, each whole: the
 * filter's chunks (whole inner dimensions, one partial dimension, ones
 * before it: gz_h5z_setup) are runs of consecutive values, an edge chunk's
 * values the first rows of its full shape (the rest padding, which readers
 * never see). Each chunk is encoded here as the filter encodes it
 * (gz_h5z_encode), the file's space so far and the chunk's reserved, and
 * the encoding stored as it is (H5Dwrite_chunk): its size is known before
 * libhdf5 gives it an address, so a full disk or a file-size limit fails in
 * the reservation, and what libhdf5 has allocated stays within blocks the
 * file has. Memory: a chunk and its encoding. 0, -1 (HDF5 or the
 * reservation failed: errno), or -2 (err: the source failed, or the
 * codec). */
static int put_chunks(hid_t file, hid_t dset, const char *path, const gz_meta_t *meta,
                      const gz_io_source_t *src, const h5_filter_t *f, char *err,
                      size_t errlen) {
  size_t n = gz_meta_count(meta), elem = gz_io_dtype_size(meta->dtype), most = 1;
  size_t bytes, cap;
  uint8_t *pad = NULL, *out = NULL;
  int rc = 0;
  for (int d = 0; d < meta->ndims; d++)
    most *= f->chunk[d];
  bytes = most * elem;
  cap = gz_h5z_encode_bound(f->ncd, f->cd, bytes);
  if (!cap || !(out = malloc(cap)))
    goto nomem;
  for (size_t flat = 0, k; flat < n && rc == 0; flat += k) {
    size_t start[GZ_IO_MAXDIMS], count[GZ_IO_MAXDIMS], size, row = 1;
    hsize_t hs[GZ_IO_MAXDIMS];
    const void *p;
    int partial = 0;
    k = gz_io_next_box(meta, flat, most, start, count);
    for (int d = meta->ndims - 1; d >= 0 && count[d] == f->chunk[d]; d--)
      row *= count[d]; /* the values after the partial dimension */
    for (int d = 0; d < meta->ndims; d++) {
      size_t full =
          f->chunk[d] < meta->dims[d] - start[d] ? f->chunk[d] : meta->dims[d] - start[d];
      hs[d] = start[d];
      if (start[d] % f->chunk[d] != 0 || count[d] != full ||
          (partial && count[d] != f->chunk[d])) {
        gz_io_errorf(err, errlen, "internal: box %zu is not a chunk", flat);
        rc = -2; /* cannot happen with gz_h5z_setup's chunks */
      }
      partial |= count[d] != f->chunk[d];
    }
    if (rc != 0 || !(p = gz_io_source_get(src, meta, flat, k, err, errlen))) {
      rc = -2;
      break;
    }
    if (k < most) { /* an edge chunk, padded with its last row */
      if (!pad && !(pad = malloc(bytes)))
        goto nomem;
      memcpy(pad, p, k * elem);
      for (size_t at = k; at < most; at += row)
        memcpy(pad + at * elem, pad + (k - row) * elem, row * elem);
      p = pad;
    }
    if (!(size = gz_h5z_encode(f->ncd, f->cd, p, bytes, out, cap))) {
      gz_io_errorf(err, errlen, "%s: cannot encode the chunk at value %zu", path, flat);
      rc = -2;
      break;
    }
    rc = reserve(file, size + GZ_H5_INDEX_ROOM) == 0 &&
                 H5Dwrite_chunk(dset, H5P_DEFAULT, 0, hs, size, out) >= 0
             ? 0
             : -1;
  }
  goto done;
nomem:
  gz_io_errorf(err, errlen, "%s: out of memory for a chunk of %zu bytes", path, bytes);
  rc = -2;
done:
  free(pad);
  free(out);
  return rc;
}

/* The HDF5 file, written by libhdf5 into the file named, created there and
 * moved into the unnamed tmp (gz_io_temp_adopt; named is tmp when tmp is
 * named), in the order above. A plain dataset (filter->ncd 0) has its
 * data's space reserved with the metadata's; a filtered one, whose size is
 * known only as its chunks are encoded, has each chunk's reserved before
 * it is stored (put_chunks). */
static int write_hdf5(const char *named, const char *tmp, const char *path,
                      const gz_meta_t *meta, const gz_io_source_t *src,
                      const h5_filter_t *filter, char *err, size_t errlen) {
  char dpath[1024], gpath[1024];
  hsize_t hd[GZ_IO_MAXDIMS];
  hid_t file = -1, fapl = -1, lcpl = -1, dcpl = -1, space = -1, dset = -1, g = -1;
  hid_t root = -1;
  hid_t ftype = meta->dtype == GZ_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  hid_t mtype = meta->dtype == GZ_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  const char *what = "cannot create the file", *failed = NULL, *cause;
  size_t bytes = filter->ncd ? 0 : gz_meta_count(meta) * gz_io_dtype_size(meta->dtype);
  int n, rc;
  h5_quiet();
  errno = 0; /* gz_io_write_cause() looks at what libhdf5's write() left */
  n = snprintf(dpath, sizeof dpath, "%s%s", meta->var[0] == '/' ? "" : "/",
               meta->var[0] ? meta->var : "data");
  if (n < 0 || (size_t)n >= sizeof dpath || dpath[strlen(dpath) - 1] == '/') {
    gz_io_errorf(err, errlen, "%s: bad dataset path '%s'", path, meta->var);
    return -1;
  }
  snprintf(gpath, sizeof gpath, "%.*s", (int)(base_name(dpath) - dpath), dpath);
  if (strlen(gpath) > 1)
    gpath[strlen(gpath) - 1] = '\0'; /* "/grp/" -> "/grp"; "/" stays */
  for (int i = 0; i < meta->ndims; i++)
    hd[i] = meta->dims[i];
  if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_fapl_sec2(fapl) < 0 ||
      (file = H5Fcreate(named, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
    goto fail;
  if (gz_io_temp_adopt(named, tmp, err, errlen) != 0) {
    rc = -1;
    goto done;
  }
  what = "cannot create the dataset";
  lcpl = H5Pcreate(H5P_LINK_CREATE);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  space = H5Screate_simple(meta->ndims, hd, NULL);
  if (lcpl < 0 || dcpl < 0 || space < 0 ||
      H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
      set_layout(dcpl, meta, filter) != 0 ||
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0)
    goto fail;
  if (meta->has_fill) {
    float f = (float)meta->fill_value;
    if (H5Pset_fill_value(dcpl, mtype,
                          meta->dtype == GZ_FLOAT32
                              ? (const void *)&f
                              : (const void *)&meta->fill_value) < 0)
      goto fail;
  }
  if ((dset = H5Dcreate2(file, dpath, ftype, space, lcpl, dcpl, H5P_DEFAULT)) < 0)
    goto fail;
  what = "cannot write the dataset's attributes";
  if ((meta->units[0] && put_text(dset, "units", meta->units) != 0) ||
      (meta->long_name[0] && put_text(dset, "long_name", meta->long_name) != 0))
    goto fail;
  if (meta->has_fill) {
    hsize_t one = 1;
    hid_t s1 = H5Screate_simple(1, &one, NULL);
    hid_t a =
        s1 < 0 ? -1 : H5Acreate2(dset, "_FillValue", ftype, s1, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &meta->fill_value) >= 0;
    close_id(a);
    close_id(s1);
    if (!ok)
      goto fail;
  }
  if (put_attrs(dset, meta->attrs, meta->nattrs, ftype, meta, &failed) != 0)
    goto fail;
  what = "cannot write the dimension scales";
  if ((g = H5Oopen(file, gpath, H5P_DEFAULT)) < 0 ||
      attach_scales(file, g, dset, dpath, meta) != 0)
    goto fail;
  what = "cannot write the global attributes";
  if ((root = H5Oopen(file, "/", H5P_DEFAULT)) < 0 ||
      put_attrs(root, meta->global_attrs, meta->nglobal_attrs, ftype, NULL, &failed) != 0)
    goto fail;
  /* the metadata's space and a plain dataset's (the data goes at the end),
   * then the data */
  what = "cannot write the data";
  if (reserve(file, bytes) != 0)
    goto fail;
  rc = filter->ncd ? put_chunks(file, dset, path, meta, src, filter, err, errlen)
                   : put_values(dset, mtype, meta, src, err, errlen);
  if (rc == -2) {
    rc = -1; /* the source's message */
    goto done;
  }
  if (rc != 0)
    goto fail;
  what = "cannot finish the file";
  close_id(root);
  close_id(g);
  root = g = -1;
  rc = H5Dclose(dset) < 0 ? -1 : 0;
  dset = -1;
  if (rc != 0 || reserve(file, 0) != 0 || trim(file) != 0)
    goto fail;
  rc = H5Fclose(file) < 0 ? -1 : 0;
  file = -1;
  if (rc != 0)
    goto fail;
  goto done;
fail:
  cause = gz_io_write_cause(errno);
  if (cause) {
    H5Eclear2(H5E_DEFAULT);
    gz_io_errorf(err, errlen, "%s: %s: %s", path, what, cause);
  } else if (failed) {
    char w[200];
    snprintf(w, sizeof w, "%s (%s)", what, failed);
    h5_error(err, errlen, path, w);
  } else {
    h5_error(err, errlen, path, what);
  }
  rc = -1;
done:
  if (rc != 0 && file >= 0)
    divert(file);
  close_id(root);
  close_id(g);
  close_id(dset);
  close_id(space);
  close_id(dcpl);
  close_id(lcpl);
  close_id(fapl);
  close_id(file);
  return rc;
}

/* write_hdf5 into tmp, through a named temporary when tmp has no name
 * (libhdf5 creates its file by a name it resolves). */
static int write_hdf5_temp(const char *tmp, const char *path, const gz_meta_t *meta,
                           const gz_io_source_t *src, const h5_filter_t *filter,
                           char *err, size_t errlen) {
  char named[4200];
  if (gz_io_temp_for_library(tmp, path, named, sizeof named) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if (write_hdf5(named, tmp, path, meta, src, filter, err, errlen) == 0)
    return 0;
  if (strcmp(named, tmp) != 0)
    gz_io_discard(named); /* when not yet moved; the caller drops tmp */
  return -1;
}

int gz_io_write_hdf5(const char *tmp, const char *path, const gz_meta_t *meta,
                     const gz_io_source_t *src, char *err, size_t errlen) {
  h5_filter_t contiguous = {0, {0}, {0}};
  return write_hdf5_temp(tmp, path, meta, src, &contiguous, err, errlen);
}

int gz_io_write_hdf5_gz(const char *tmp, const char *path, const gz_meta_t *meta,
                        const gz_io_source_t *src, const gz_io_bound_t *b, char *err,
                        size_t errlen) {
  h5_filter_t f;
  gz_meta_t m;
  int rc;
  if (gz_meta_copy(&m, meta) != 0)
    return gz_io_errorf(err, errlen, "%s: out of memory for the metadata", path), -1;
  f.ncd = gz_h5z_setup((unsigned)meta->dtype, b->abs_bound, meta->ndims, meta->dims,
                       f.chunk, f.cd);
  if (gz_io_bound_attrs(&m, b) != 0 ||
      gz_meta_add_attr_text(&m, "gzstack_compression", GZ_H5Z_NOTE) != 0) {
    gz_io_errorf(err, errlen, "%s: out of memory for the metadata", path);
    rc = -1;
  } else {
    rc = write_hdf5_temp(tmp, path, &m, src, &f, err, errlen);
  }
  gz_meta_free(&m);
  return rc;
}
