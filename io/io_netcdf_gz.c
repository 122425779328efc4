/* io_netcdf_gz.c - netCDF-4 output whose variable is compressed with the
 * gzstack codec through its HDF5 filter (h5z/h5z_gzstack_filter.c, testing
 * filter id 390): any netCDF/HDF5 reader with the plugin on HDF5_PLUGIN_PATH
 * reads the values back within the bound recorded in the variable's
 * attributes; a reader without it fails to read the variable. The writer
 * registers the filter in the HDF5 library netCDF uses (H5Zregister), and so
 * does the netCDF reader (io_netcdf.c), so gzstack needs no plugin path to
 * write or to read its own files. */
#define _GNU_SOURCE /* dladdr */
#include "gz_io.h"
#include "gz_io_commit.h"

#include "h5z_gzstack.h"

#include <dlfcn.h>
#include <netcdf.h>
#include <netcdf_filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Register the filter with the HDF5 library that netCDF calls: the process
 * may hold two (Debian's serial one under netCDF, the MPI one under our HDF5
 * I/O), so H5Zregister is looked up among netCDF's own dependencies. Returns
 * 0 when ncid's library has the filter afterwards. */
int gz_io_nc_register_filter(int ncid) {
  typedef int (*reg_fn)(const void *);
  int (*anchor)(const char *, int, int *) = nc_create;
  void *addr, *lib, *sym;
  reg_fn reg;
  Dl_info info;
  int ok = 0;
  if (nc_inq_filter_avail(ncid, GZ_H5Z_FILTER_ID) == NC_NOERR)
    return 0;
  memcpy(&addr, &anchor, sizeof addr);
  if (!dladdr(addr, &info) || !info.dli_fname)
    return -1;
  lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib)
    return -1;
  sym = dlsym(lib, "H5Zregister");
  if (sym) {
    memcpy(&reg, &sym, sizeof reg);
    ok = reg(gz_h5z_filter_class()) >= 0;
  }
  dlclose(lib);
  return ok && nc_inq_filter_avail(ncid, GZ_H5Z_FILTER_ID) == NC_NOERR ? 0 : -1;
}

size_t gz_io_gz_chunk_values(const gz_meta_t *meta) {
  size_t chunk[GZ_IO_MAXDIMS], values = 1;
  unsigned cd[6 + GZ_IO_MAXDIMS];
  gz_h5z_setup((unsigned)meta->dtype, 0, meta->ndims, meta->dims, chunk, cd);
  for (int d = 0; d < meta->ndims; d++)
    values *= chunk[d];
  return values;
}

/* The values of src put one HDF5 chunk (chunk[]) at a time, each whole and
 * once (a chunk written in parts would be filtered, read back and filtered
 * again). The filter's chunks (whole inner dimensions, one partial
 * dimension, ones before it: gz_h5z_setup) are runs of consecutive values.
 * A netCDF status, or -1 when the source failed (err). */
static int put_chunks(int ncid, int varid, const gz_meta_t *meta, const size_t *chunk,
                      const gz_io_source_t *src, char *err, size_t errlen) {
  size_t most = 1;
  int status = NC_NOERR;
  for (int d = 0; d < meta->ndims; d++)
    most *= chunk[d];
  for (size_t flat = 0, n = gz_meta_count(meta), k; flat < n && status == NC_NOERR;
       flat += k) {
    size_t start[GZ_IO_MAXDIMS], count[GZ_IO_MAXDIMS];
    const void *p;
    k = gz_io_next_box(meta, flat, most, start, count);
    for (int d = 0; d < meta->ndims; d++)
      if (start[d] % chunk[d] != 0 ||
          count[d] != (chunk[d] < meta->dims[d] - start[d] ? chunk[d]
                                                           : meta->dims[d] - start[d])) {
        gz_io_errorf(err, errlen, "internal: box %zu is not a chunk", flat);
        return -1; /* cannot happen with gz_h5z_setup's chunks */
      }
    if (!(p = gz_io_source_get(src, meta, flat, k, err, errlen)))
      return -1;
    status = meta->dtype == GZ_FLOAT32 ? nc_put_vara_float(ncid, varid, start, count, p)
                                       : nc_put_vara_double(ncid, varid, start, count, p);
  }
  return status;
}

int gz_io_write_netcdf_gz(const char *tmp, const char *path, const gz_meta_t *meta,
                          const gz_io_source_t *src, const gz_io_bound_t *b, char *err,
                          size_t errlen) {
  int ncid = -1, varid, status = NC_NOERR, dimids[GZ_IO_MAXDIMS], adopted = 0;
  unsigned cd[6 + GZ_IO_MAXDIMS];
  size_t chunk[GZ_IO_MAXDIMS], ncd;
  const char *vname = strrchr(meta->var, '/'), *what = "cannot create the file";
  const char *note = GZ_H5Z_NOTE;
  char named[4200];
  vname = vname ? vname + 1 : meta->var;
  if (!vname[0])
    vname = "data";
  ncd = gz_h5z_setup((unsigned)meta->dtype, b->abs_bound, meta->ndims, meta->dims, chunk,
                     cd);
  /* netCDF creates its file by name: a named temporary, moved at once into
   * the unnamed tmp (gz_io_temp_adopt) */
  if (gz_io_temp_for_library(tmp, path, named, sizeof named) != 0) {
    gz_io_errorf(err, errlen, "%s: file name too long", path);
    return -1;
  }
  if ((status = nc_create(named, NC_NETCDF4 | NC_CLOBBER, &ncid)) != NC_NOERR)
    goto fail;
  if (gz_io_temp_adopt(named, tmp, err, errlen) != 0) {
    nc_close(ncid);
    gz_io_discard(named);
    return -1;
  }
  adopted = 1;
  what = "cannot define the dimensions";
  for (int i = 0; i < meta->ndims; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s", meta->dim_names[i][0] ? meta->dim_names[i] : "dim");
    if (!meta->dim_names[i][0] || nc_inq_dimid(ncid, name, &dimids[i]) == NC_NOERR)
      snprintf(name, sizeof name, "dim%d", i);
    if ((status = nc_def_dim(ncid, name, meta->dims[i], &dimids[i])) != NC_NOERR)
      goto fail;
  }
  what = "cannot define the compressed variable";
  if ((status = nc_def_var(ncid, vname, meta->dtype == GZ_FLOAT32 ? NC_FLOAT : NC_DOUBLE,
                           meta->ndims, dimids, &varid)) != NC_NOERR ||
      (status = nc_def_var_chunking(ncid, varid, NC_CHUNKED, chunk)) != NC_NOERR)
    goto fail;
  what = "cannot register the gzstack HDF5 filter in netCDF's HDF5 library";
  status = NC_ENOFILTER;
  if (gz_io_nc_register_filter(ncid) != 0)
    goto fail;
  what = "cannot attach the gzstack HDF5 filter";
  if ((status = nc_def_var_filter(ncid, varid, GZ_H5Z_FILTER_ID, ncd, cd)) != NC_NOERR)
    goto fail;
  what = "cannot write the attributes";
  if ((status = nc_put_att_double(ncid, varid, "gzstack_abs_error_bound", NC_DOUBLE, 1,
                                  &b->abs_bound)) != NC_NOERR ||
      (status = nc_put_att_text(ncid, varid, "gzstack_eb_mode", strlen(b->mode),
                                b->mode)) != NC_NOERR ||
      (status = nc_put_att_double(ncid, varid, "gzstack_eb_target", NC_DOUBLE, 1,
                                  &b->target)) != NC_NOERR ||
      (status = nc_put_att_text(ncid, varid, "gzstack_compression", strlen(note),
                                note)) != NC_NOERR ||
      (meta->has_fill &&
       (status = meta->dtype == GZ_FLOAT32
                     ? nc_put_att_float(ncid, varid, "_FillValue", NC_FLOAT, 1,
                                        &(float){(float)meta->fill_value})
                     : nc_put_att_double(ncid, varid, "_FillValue", NC_DOUBLE, 1,
                                         &meta->fill_value)) != NC_NOERR) ||
      (meta->units[0] &&
       (status = nc_put_att_text(ncid, varid, "units", strlen(meta->units),
                                 meta->units)) != NC_NOERR) ||
      (meta->long_name[0] &&
       (status = nc_put_att_text(ncid, varid, "long_name", strlen(meta->long_name),
                                 meta->long_name)) != NC_NOERR))
    goto fail;
  what = "cannot write the data";
  if ((status = nc_enddef(ncid)) != NC_NOERR)
    goto fail;
  if ((status = put_chunks(ncid, varid, meta, chunk, src, err, errlen)) == -1) {
    nc_close(ncid); /* the source's message */
    return -1;
  }
  if (status != NC_NOERR)
    goto fail;
  status = nc_close(ncid);
  ncid = -1;
  if (status != NC_NOERR)
    goto fail;
  return 0;
fail:
  if (ncid >= 0)
    nc_close(ncid);
  if (!adopted && strcmp(named, tmp) != 0)
    gz_io_discard(named); /* the caller drops tmp */
  gz_io_errorf(err, errlen, "%s: %s: %s", path, what, nc_strerror(status));
  return -1;
}
