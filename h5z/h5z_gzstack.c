/*
 * h5z_gzstack.c - HDF5 filter plugin for the gzstack codec, loaded by any
 * HDF5 reader (h5dump, h5py, netCDF-C, xarray) that finds libh5z_gzstack.so
 * in HDF5_PLUGIN_PATH, as H5Z-ZFP and H5Z-SZ3 are. The filter itself (id
 * 390, testing range, unregistered; its cd_values) is h5z_gzstack_filter.c.
 * The plugin links no HDF5 library: it only needs the headers for the plugin
 * types.
 */
#include "h5z_gzstack.h"

#include "gzcoll.h"

#include <H5PLextern.h>

/* The codec's dtype table (libgzcoll's result.c is not part of the plugin). */
size_t gz_dtype_size(gz_dtype_t dtype) {
  return dtype == GZ_FLOAT32 ? 4 : dtype == GZ_FLOAT64 ? 8 : 0;
}

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void *H5PLget_plugin_info(void) { return gz_h5z_filter_class(); }
