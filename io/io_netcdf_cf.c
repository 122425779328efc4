/*
 * io_netcdf_cf.c - a netCDF output with what CF-aware tools (cdo, ncra,
 * xarray) look for beyond gz_io_write(): the attributes of the coordinate
 * variables copied from a netCDF input (standard_name, axis, calendar,
 * long_name, ...), time bounds or CF climatology bounds of the record
 * dimension, and further variables beside the first. The file is made by
 * gz_io_write() under a temporary name, completed here, and renamed into
 * place only when complete (gz_io_commit.h).
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

/* One more variable of meta's shape over dimensions of the same names. */
static int def_var(int ncid, const gz_meta_t *m, int *varid, const char **what) {
  int dimids[GZ_IO_MAXDIMS], status;
  nc_type t = m->dtype == GZ_FLOAT32 ? NC_FLOAT : NC_DOUBLE;
  const char *vname = strrchr(m->var, '/');
  vname = vname ? vname + 1 : m->var;
  *what = "cannot define a dimension of a further variable";
  for (int d = 0; d < m->ndims; d++) {
    size_t len;
    if (nc_inq_dimid(ncid, m->dim_names[d], &dimids[d]) == NC_NOERR) {
      if ((status = nc_inq_dimlen(ncid, dimids[d], &len)) != NC_NOERR)
        return status;
      if (len != m->dims[d])
        return NC_EDIMSIZE;
    } else if ((status = nc_def_dim(ncid, m->dim_names[d], m->dims[d], &dimids[d])) !=
               NC_NOERR) {
      return status;
    }
  }
  *what = "cannot define a further variable";
  if ((status = nc_def_var(ncid, vname[0] ? vname : "data", t, m->ndims, dimids,
                           varid)) != NC_NOERR ||
      (status = nc_def_var_chunking(ncid, *varid, NC_CONTIGUOUS, NULL)) != NC_NOERR)
    return status;
  *what = "cannot write the attributes of a further variable";
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

/* The metadata and data of the output written to tmp; completed there. */
static int complete(const char *tmp, const char *path, const gz_meta_t *const *metas,
                    const void *const *datas, int nvars, const gz_cf_extra_t *x,
                    char *err, size_t errlen) {
  int ncid = -1, src = -1, status, bvid = -1, varids[64];
  const char *what = "cannot reopen the file";
  if (nvars > 64) {
    gz_io_errorf(err, errlen, "%s: at most 64 variables", path);
    return -1;
  }
  if ((status = nc_open(tmp, NC_WRITE, &ncid)) != NC_NOERR ||
      (status = nc_redef(ncid)) != NC_NOERR)
    goto fail;
  if (x->source && nc_open(x->source, NC_NOWRITE, &src) == NC_NOERR) {
    what = "cannot copy the coordinates' attributes";
    if ((status = copy_coord_attrs(src, ncid, metas[0])) != NC_NOERR)
      goto fail;
  }
  for (int k = 1; k < nvars; k++)
    if ((status = def_var(ncid, metas[k], &varids[k], &what)) != NC_NOERR)
      goto fail;
  what = "cannot define the time bounds";
  if (x->bounds && (status = def_bounds(ncid, metas[0], x, &bvid)) != NC_NOERR)
    goto fail;
  what = "cannot finish the header";
  if ((status = nc_enddef(ncid)) != NC_NOERR)
    goto fail;
  what = "cannot write a further variable";
  for (int k = 1; k < nvars; k++) {
    status = metas[k]->dtype == GZ_FLOAT32 ? nc_put_var_float(ncid, varids[k], datas[k])
                                           : nc_put_var_double(ncid, varids[k], datas[k]);
    if (status != NC_NOERR)
      goto fail;
  }
  what = "cannot write the time bounds";
  if (bvid >= 0 && (status = nc_put_var_double(ncid, bvid, x->bounds)) != NC_NOERR)
    goto fail;
  if (src >= 0)
    nc_close(src);
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
  char tmp[4096];
  if (nvars < 1 || !metas || !datas || !x) {
    gz_io_errorf(err, errlen, "%s: nothing to write", path);
    return -1;
  }
  if (gz_io_check_target(path, force, err, errlen) != 0)
    return -1;
  if (gz_io_temp_path(path, tmp, sizeof tmp) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if (gz_io_write(tmp, GZ_FMT_NETCDF, metas[0], datas[0], 1, err, errlen) != 0 ||
      complete(tmp, path, metas, datas, nvars, x, err, errlen) != 0) {
    unlink(tmp);
    return -1;
  }
  return gz_io_commit(tmp, path, force, err, errlen);
}
