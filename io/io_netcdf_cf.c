/*
 * io_netcdf_cf.c - a netCDF output with what CF-aware tools (cdo, ncra,
 * xarray) look for beyond gz_io_write(): the attributes of the coordinate
 * variables copied from a netCDF input (standard_name, axis, calendar,
 * long_name, ...), time bounds or CF climatology bounds of the record
 * dimension, several variables, and deflate / shuffle / chunking of the
 * data variables. The file is written under a temporary name and renamed
 * into place only when complete (gz_io_commit.h). And the input side: a
 * coordinate's own cell bounds (gz_io_netcdf_coord_bounds).
 */
#include "gz_io.h"
#include "gz_io_commit.h"

#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Attributes of a coordinate that describe the input's values, or name
 * variables that are not copied: left out. */
static int skip_coord_attr(const char *name) {
  return !strcmp(name, "_FillValue") || !strcmp(name, "actual_range") ||
         !strcmp(name, "bounds") || !strcmp(name, "climatology") ||
         !strcmp(name, "missing_value") || name[0] == '_';
}

/* Every attribute of src's variable of the same name onto each coordinate
 * variable of the output (absent in src: left as written). */
static int copy_coord_attrs(int src, int out, const gz_meta_t *m) {
  for (int d = 0; d < m->ndims; d++) {
    char dname[NC_MAX_NAME + 1], aname[NC_MAX_NAME + 1];
    int dimid, ovid, svid, natts, status;
    if (nc_inq_dimid(out, m->dim_names[d][0] ? m->dim_names[d] : "", &dimid) !=
            NC_NOERR ||
        nc_inq_dimname(out, dimid, dname) != NC_NOERR ||
        nc_inq_varid(out, dname, &ovid) != NC_NOERR ||
        nc_inq_varid(src, dname, &svid) != NC_NOERR ||
        nc_inq_varnatts(src, svid, &natts) != NC_NOERR)
      continue;
    for (int a = 0; a < natts; a++) {
      if (nc_inq_attname(src, svid, a, aname) != NC_NOERR || skip_coord_attr(aname))
        continue;
      if ((status = nc_copy_att(src, svid, aname, out, ovid)) != NC_NOERR)
        return status;
    }
  }
  return NC_NOERR;
}

/* Attributes whose numbers are data values: in the variable's type. */
static int value_attr(const char *name) {
  return !strcmp(name, "missing_value") || !strcmp(name, "valid_min") ||
         !strcmp(name, "valid_max") || !strcmp(name, "valid_range");
}

/* Storage of a data variable: contiguous, or chunked (x->chunks, else
 * netCDF's default chunks) with deflate / shuffle. */
static int def_storage(int ncid, int varid, const gz_meta_t *m, const gz_cf_extra_t *x) {
  size_t chunk[GZ_IO_MAXDIMS];
  int status;
  if (!x->deflate && !x->nchunks)
    return nc_def_var_chunking(ncid, varid, NC_CONTIGUOUS, NULL);
  if (x->nchunks) {
    for (int d = 0; d < m->ndims; d++)
      chunk[d] = x->chunks[d] < m->dims[d] ? x->chunks[d] : m->dims[d];
    if ((status = nc_def_var_chunking(ncid, varid, NC_CHUNKED, chunk)) != NC_NOERR)
      return status;
  }
  if (x->deflate)
    return nc_def_var_deflate(ncid, varid, x->shuffle, 1, x->deflate);
  return NC_NOERR;
}

/* A dimension by name: defined, or checked against its length. */
static int def_dim(int ncid, const char *name, size_t len, int *dimid) {
  size_t have;
  int status;
  if (nc_inq_dimid(ncid, name, dimid) == NC_NOERR) {
    if ((status = nc_inq_dimlen(ncid, *dimid, &have)) != NC_NOERR)
      return status;
    return have == len ? NC_NOERR : NC_EDIMSIZE;
  }
  return nc_def_dim(ncid, name, len, dimid);
}

/* The coordinate variables of m's dimensions not defined yet (double,
 * units, calendar); cvids[d] -1 when none. */
static int def_coords(int ncid, const gz_meta_t *m, int *cvids) {
  for (int d = 0; d < m->ndims; d++) {
    const gz_coord_t *c = &m->coords[d];
    int dimid, status;
    cvids[d] = -1;
    if (!c->values || nc_inq_varid(ncid, m->dim_names[d], &dimid) == NC_NOERR)
      continue;
    if ((status = nc_inq_dimid(ncid, m->dim_names[d], &dimid)) != NC_NOERR ||
        (status = nc_def_var(ncid, m->dim_names[d], NC_DOUBLE, 1, &dimid, &cvids[d])) !=
            NC_NOERR)
      return status;
    if (c->units[0] && (status = nc_put_att_text(ncid, cvids[d], "units",
                                                 strlen(c->units), c->units)) != NC_NOERR)
      return status;
    if (c->calendar[0] &&
        (status = nc_put_att_text(ncid, cvids[d], "calendar", strlen(c->calendar),
                                  c->calendar)) != NC_NOERR)
      return status;
  }
  return NC_NOERR;
}

/* The global attributes of m. */
static int put_globals(int ncid, const gz_meta_t *m) {
  for (size_t i = 0; i < m->nglobal_attrs; i++) {
    const gz_attr_t *a = &m->global_attrs[i];
    int status;
    if (!a->name[0] || a->name[0] == '_' || gz_io_reserved_attr(a->name))
      continue;
    status =
        a->is_text
            ? nc_put_att_text(ncid, NC_GLOBAL, a->name, a->count, a->text ? a->text : "")
            : nc_put_att_double(ncid, NC_GLOBAL, a->name, NC_DOUBLE, a->count, a->values);
    if (status != NC_NOERR)
      return status;
  }
  return NC_NOERR;
}

/* A data variable of meta's shape over dimensions of the same names. */
static int def_var(int ncid, const gz_meta_t *m, const gz_cf_extra_t *x, int *varid,
                   const char **what) {
  int dimids[GZ_IO_MAXDIMS], status;
  nc_type t = m->dtype == GZ_FLOAT32 ? NC_FLOAT : NC_DOUBLE;
  const char *vname = strrchr(m->var, '/');
  vname = vname ? vname + 1 : m->var;
  *what = "cannot define a dimension";
  for (int d = 0; d < m->ndims; d++)
    if ((status = def_dim(ncid, m->dim_names[d], m->dims[d], &dimids[d])) != NC_NOERR)
      return status;
  *what = "cannot define a variable (or its compression)";
  if ((status = nc_def_var(ncid, vname[0] ? vname : "data", t, m->ndims, dimids,
                           varid)) != NC_NOERR ||
      (status = def_storage(ncid, *varid, m, x)) != NC_NOERR)
    return status;
  *what = "cannot write the attributes of a variable";
  if (m->has_fill) {
    float f = (float)m->fill_value;
    status = t == NC_FLOAT
                 ? nc_put_att_float(ncid, *varid, "_FillValue", t, 1, &f)
                 : nc_put_att_double(ncid, *varid, "_FillValue", t, 1, &m->fill_value);
    if (status != NC_NOERR)
      return status;
  }
  if (m->units[0] && (status = nc_put_att_text(ncid, *varid, "units", strlen(m->units),
                                               m->units)) != NC_NOERR)
    return status;
  if (m->long_name[0] &&
      (status = nc_put_att_text(ncid, *varid, "long_name", strlen(m->long_name),
                                m->long_name)) != NC_NOERR)
    return status;
  for (size_t i = 0; i < m->nattrs; i++) {
    const gz_attr_t *a = &m->attrs[i];
    if (!a->name[0] || a->name[0] == '_' || !strcmp(a->name, "scale_factor") ||
        !strcmp(a->name, "add_offset") || (m->units[0] && !strcmp(a->name, "units")) ||
        (m->long_name[0] && !strcmp(a->name, "long_name")))
      continue;
    status =
        a->is_text
            ? nc_put_att_text(ncid, *varid, a->name, a->count, a->text ? a->text : "")
            : nc_put_att_double(ncid, *varid, a->name,
                                value_attr(a->name) ? t : NC_DOUBLE, a->count, a->values);
    if (status != NC_NOERR)
      return status;
  }
  return NC_NOERR;
}

/* The bounds variable of the record dimension (dimension 0 of m). */
static int def_bounds(int ncid, const gz_meta_t *m, const gz_cf_extra_t *x, int *bvid) {
  int tdim, bdim, tvid, dims[2], status;
  char name[NC_MAX_NAME + 1];
  if ((status = nc_inq_dimid(ncid, m->dim_names[0], &tdim)) != NC_NOERR ||
      (status = nc_inq_varid(ncid, m->dim_names[0], &tvid)) != NC_NOERR)
    return status;
  if (nc_inq_dimid(ncid, "bnds", &bdim) != NC_NOERR &&
      (status = nc_def_dim(ncid, "bnds", 2, &bdim)) != NC_NOERR)
    return status;
  if (x->climatology)
    snprintf(name, sizeof name, "climatology_bounds");
  else
    snprintf(name, sizeof name, "%.*s_bnds", NC_MAX_NAME - 6, m->dim_names[0]);
  dims[0] = tdim;
  dims[1] = bdim;
  if ((status = nc_def_var(ncid, name, NC_DOUBLE, 2, dims, bvid)) != NC_NOERR)
    return status;
  return nc_put_att_text(ncid, tvid, x->climatology ? "climatology" : "bounds",
                         strlen(name), name);
}

/* The whole file at tmp. */
static int write_all(const char *named, const char *tmp, const char *path,
                     const gz_meta_t *const *metas, const void *const *datas, int nvars,
                     const gz_cf_extra_t *x, char *err, size_t errlen) {
  int ncid = -1, src = -1, status, bvid = -1, old, varids[64], cvids[64][GZ_IO_MAXDIMS];
  const char *what = "cannot create the file";
  if (nvars > 64) {
    gz_io_errorf(err, errlen, "%s: at most 64 variables", path);
    return -1;
  }
  for (int d = 0; x->nchunks && d < metas[0]->ndims; d++)
    if (x->nchunks != metas[0]->ndims || x->chunks[d] == 0) {
      gz_io_errorf(err, errlen,
                   "%s: --chunks needs %d sizes >= 1 (the output's dimensions), got %d",
                   path, metas[0]->ndims, x->nchunks);
      return -1;
    }
  if ((status = nc_create(named, NC_NETCDF4 | NC_CLOBBER, &ncid)) != NC_NOERR)
    goto fail;
  if (gz_io_temp_adopt(named, tmp, err, errlen) != 0) { /* into the unnamed tmp */
    nc_close(ncid);
    return -1;
  }
  nc_set_fill(ncid, NC_NOFILL, &old);
  if (x->source && nc_open(x->source, NC_NOWRITE, &src) != NC_NOERR)
    src = -1;
  for (int k = 0; k < nvars; k++) {
    what = "cannot define a dimension";
    for (int d = 0; d < metas[k]->ndims; d++) {
      int dimid;
      if ((status = def_dim(ncid, metas[k]->dim_names[d], metas[k]->dims[d], &dimid)) !=
          NC_NOERR)
        goto fail;
    }
    what = "cannot define a coordinate variable";
    if ((status = def_coords(ncid, metas[k], cvids[k])) != NC_NOERR)
      goto fail;
    if ((status = def_var(ncid, metas[k], x, &varids[k], &what)) != NC_NOERR)
      goto fail;
  }
  if (src >= 0) {
    what = "cannot copy the coordinates' attributes";
    for (int k = 0; k < nvars; k++)
      if ((status = copy_coord_attrs(src, ncid, metas[k])) != NC_NOERR)
        goto fail;
  }
  what = "cannot define the time bounds";
  if (x->bounds && (status = def_bounds(ncid, metas[0], x, &bvid)) != NC_NOERR)
    goto fail;
  what = "cannot write the global attributes";
  if ((status = put_globals(ncid, metas[0])) != NC_NOERR)
    goto fail;
  what = "cannot finish the header";
  if ((status = nc_enddef(ncid)) != NC_NOERR)
    goto fail;
  what = "cannot write a coordinate variable";
  for (int k = 0; k < nvars; k++)
    for (int d = 0; d < metas[k]->ndims; d++)
      if (cvids[k][d] >= 0 &&
          (status = nc_put_var_double(ncid, cvids[k][d], metas[k]->coords[d].values)) !=
              NC_NOERR)
        goto fail;
  what = "cannot write the data";
  for (int k = 0; k < nvars; k++) {
    gz_io_source_t in = {datas[k], NULL, NULL};
    if (x->deflate || x->nchunks) /* chunked: whole, each chunk filtered once */
      status = metas[k]->dtype == GZ_FLOAT32
                   ? nc_put_var_float(ncid, varids[k], datas[k])
                   : nc_put_var_double(ncid, varids[k], datas[k]);
    else /* contiguous: in pieces (a signal's handler waits for one only) */
      status = gz_io_nc_put_boxes(ncid, varids[k], metas[k], &in, NULL, 0);
    if (status != NC_NOERR)
      goto fail;
  }
  what = "cannot write the time bounds";
  if (bvid >= 0 && (status = nc_put_var_double(ncid, bvid, x->bounds)) != NC_NOERR)
    goto fail;
  if (src >= 0)
    nc_close(src);
  src = -1;
  what = "cannot finish the file";
  status = nc_close(ncid);
  ncid = -1;
  if (status != NC_NOERR)
    goto fail;
  return 0;
fail:
  if (src >= 0)
    nc_close(src);
  if (ncid >= 0)
    nc_close(ncid);
  gz_io_errorf(err, errlen, "%s: %s: %s", path, what, nc_strerror(status));
  return -1;
}

int gz_io_write_netcdf_cf(const char *path, const gz_meta_t *const *metas,
                          const void *const *datas, int nvars, const gz_cf_extra_t *x,
                          int force, char *err, size_t errlen) {
  char tmp[4096] = "", named[4200];
  unsigned long long need = 65536;
  if (nvars < 1 || !metas || !datas || !x) {
    gz_io_errorf(err, errlen, "%s: nothing to write", path);
    return -1;
  }
  for (int k = 0; k < nvars; k++)
    need +=
        (unsigned long long)gz_meta_count(metas[k]) * gz_io_dtype_size(metas[k]->dtype);
  if (gz_io_check_target(path, force, err, errlen) != 0 ||
      gz_io_check_space(path, need + need / 100, err, errlen) != 0)
    return -1;
  /* netCDF creates a named file, moved at once into the unnamed tmp */
  if (gz_io_temp_path(path, tmp, sizeof tmp) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if (gz_io_temp_for_library(tmp, path, named, sizeof named) != 0) {
    gz_io_discard(tmp);
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if (write_all(named, tmp, path, metas, datas, nvars, x, err, errlen) != 0) {
    if (strcmp(named, tmp) != 0)
      gz_io_discard(named); /* when not yet moved */
    gz_io_discard(tmp);
    return -1;
  }
  return gz_io_commit(tmp, path, force, err, errlen);
}

int gz_io_nc_is_cell_bounds(int ncid, const char *name) {
  int nvars;
  if (nc_inq_nvars(ncid, &nvars) != NC_NOERR)
    return 0;
  for (int v = 0; v < nvars; v++) {
    static const char *const refs[] = {"bounds", "climatology"};
    for (int k = 0; k < 2; k++) {
      char text[NC_MAX_NAME + 1];
      size_t len;
      nc_type t;
      if (nc_inq_att(ncid, v, refs[k], &t, &len) == NC_NOERR && t == NC_CHAR &&
          len < sizeof text && nc_get_att_text(ncid, v, refs[k], text) == NC_NOERR) {
        text[len] = '\0';
        if (!strcmp(text, name))
          return 1;
      }
    }
  }
  return 0;
}

/* A coordinate variable (1-D, named after its dimension), or cell bounds. */
static int is_aux(int ncid, int varid, const char *name) {
  int ndims, dimid;
  char dname[NC_MAX_NAME + 1];
  if (nc_inq_varndims(ncid, varid, &ndims) == NC_NOERR && ndims == 1 &&
      nc_inq_vardimid(ncid, varid, &dimid) == NC_NOERR &&
      nc_inq_dimname(ncid, dimid, dname) == NC_NOERR && !strcmp(dname, name))
    return 1;
  return gz_io_nc_is_cell_bounds(ncid, name);
}

int gz_io_netcdf_vars_along(const char *path, char *buf, size_t len, char *err,
                            size_t errlen) {
  int ncid, nvars, unlim = -1, axis = -1, status;
  size_t n = 0;
  if ((status = nc_open(path, NC_NOWRITE, &ncid)) != NC_NOERR) {
    gz_io_errorf(err, errlen, "%s: cannot open as netCDF: %s", path, nc_strerror(status));
    return -1;
  }
  nc_inq_unlimdim(ncid, &unlim);
  axis = unlim;
  nc_inq_nvars(ncid, &nvars);
  buf[0] = '\0';
  for (int pass = axis >= 0; pass < 2; pass++) /* 0: find the axis; 1: list */
    for (int v = 0; v < nvars; v++) {
      char name[NC_MAX_NAME + 1];
      int ndims, dimids[NC_MAX_VAR_DIMS];
      nc_type t;
      if (nc_inq_var(ncid, v, name, &t, &ndims, dimids, NULL) != NC_NOERR || ndims < 1 ||
          t == NC_CHAR || t == NC_STRING || t > NC_UINT64 || is_aux(ncid, v, name))
        continue;
      if (pass == 0) {
        axis = dimids[0]; /* no record dimension: the first data variable's first */
        break;
      }
      if (dimids[0] != axis)
        continue;
      if (n + strlen(name) + 2 > len) {
        nc_close(ncid);
        gz_io_errorf(err, errlen, "%s: too many variables", path);
        return -1;
      }
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", name);
    }
  nc_close(ncid);
  if (n == 0) {
    gz_io_errorf(err, errlen, "%s: no numeric variable along a record dimension", path);
    return -1;
  }
  return 0;
}

int gz_io_netcdf_coord_bounds(const char *path, const char *coord, double *bnds, size_t n,
                              int *found, char *err, size_t errlen) {
  int ncid, vid, bid, ndims, dimids[NC_MAX_VAR_DIMS], status, rc = -1;
  char name[NC_MAX_NAME + 1];
  size_t len, d0 = 0, d1 = 0;
  nc_type t;
  *found = 0;
  if ((status = nc_open(path, NC_NOWRITE, &ncid)) != NC_NOERR) {
    gz_io_errorf(err, errlen, "%s: cannot open as netCDF: %s", path, nc_strerror(status));
    return -1;
  }
  if (nc_inq_varid(ncid, coord, &vid) != NC_NOERR ||
      nc_inq_att(ncid, vid, "bounds", &t, &len) != NC_NOERR) {
    rc = 0; /* no coordinate variable, or no bounds */
    goto done;
  }
  if (t != NC_CHAR || len == 0 || len >= sizeof name ||
      nc_get_att_text(ncid, vid, "bounds", name) != NC_NOERR) {
    gz_io_errorf(err, errlen, "%s: %s:bounds is not the name of a variable", path, coord);
    goto done;
  }
  name[len] = '\0';
  if (nc_inq_varid(ncid, name, &bid) != NC_NOERR) {
    gz_io_errorf(err, errlen, "%s: %s:bounds names %s, which the file does not hold",
                 path, coord, name);
    goto done;
  }
  if (nc_inq_var(ncid, bid, NULL, &t, &ndims, dimids, NULL) != NC_NOERR || ndims != 2 ||
      nc_inq_dimlen(ncid, dimids[0], &d0) != NC_NOERR ||
      nc_inq_dimlen(ncid, dimids[1], &d1) != NC_NOERR || d0 != n || d1 != 2 ||
      t == NC_CHAR || t == NC_STRING) {
    gz_io_errorf(err, errlen,
                 "%s: the bounds %s of %s are not %zu x 2 numbers (%zu x %zu found)",
                 path, name, coord, n, d0, d1);
    goto done;
  }
  if (n && (status = nc_get_var_double(ncid, bid, bnds)) != NC_NOERR) {
    gz_io_errorf(err, errlen, "%s: cannot read %s: %s", path, name, nc_strerror(status));
    goto done;
  }
  *found = 1;
  rc = 0;
done:
  nc_close(ncid);
  return rc;
}
