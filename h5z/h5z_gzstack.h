/* h5z_gzstack.h - the gzstack HDF5 filter (h5z_gzstack_filter.c), for the
 * plugin (h5z_gzstack.c) and for in-process registration by gzstack's
 * netCDF-4 writer (io/io_netcdf_gz.c). */
#ifndef GZ_H5Z_GZSTACK_H
#define GZ_H5Z_GZSTACK_H

/* Filter id from the range HDF5 reserves for testing (256-511), not
 * registered with The HDF Group. */
#define GZ_H5Z_FILTER_ID 390

/* The filter's H5Z_class2_t (as const void *, so that this header needs no
 * HDF5 header): for H5PLget_plugin_info and H5Zregister. */
const void *gz_h5z_filter_class(void);

#endif
