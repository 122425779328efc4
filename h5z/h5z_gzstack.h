/* h5z_gzstack.h - the gzstack HDF5 filter (h5z_gzstack_filter.c), for the
 * plugin (h5z_gzstack.c) and for in-process registration by gzstack's
 * netCDF-4 and HDF5 writers (io/io_netcdf_gz.c, io/io_hdf5.c). This header
 * needs no HDF5 header. */
#ifndef GZ_H5Z_GZSTACK_H
#define GZ_H5Z_GZSTACK_H

#include <stddef.h>

/* Filter id from the range HDF5 reserves for testing (256-511), not
 * registered with The HDF Group. */
#define GZ_H5Z_FILTER_ID 390

/* The filter's H5Z_class2_t (as const void *, so that this header needs no
 * HDF5 header): for H5PLget_plugin_info and H5Zregister. */
const void *gz_h5z_filter_class(void);

/* The most bytes gz_h5z_encode() writes for a chunk of nbytes under cd (the
 * filter's cd_values, n_cd of them: gz_h5z_setup), or 0 for cd values the
 * filter does not know. */
size_t gz_h5z_encode_bound(size_t n_cd, const unsigned cd[], size_t nbytes);

/* The chunk of nbytes (a whole chunk, edge chunks padded to it) encoded as
 * the filter encodes it, into out (cap bytes): for writers that store
 * chunks themselves (H5Dwrite_chunk, io/io_hdf5.c). Its size, or 0 on a
 * failure. */
size_t gz_h5z_encode(size_t n_cd, const unsigned cd[], const void *chunk, size_t nbytes,
                     void *out, size_t cap);

/* What a file written with the filter says about it (its variable's
 * gzstack_compression attribute). */
#define GZ_H5Z_NOTE                                                                    \
  "gzstack codec, HDF5 filter 390 (testing range, unregistered); read with "         \
  "HDF5_PLUGIN_PATH holding libh5z_gzstack.so"

/* The filter's cd_values (into cd, 6 + ndims of them, the count returned)
 * for a dataset of dtype (1 float32, 2 float64) and ndims dims (C order)
 * kept within abs_bound, and its chunk shape (into chunk): whole trailing
 * dimensions, about 2^20 values a chunk. */
size_t gz_h5z_setup(unsigned dtype, double abs_bound, int ndims, const size_t *dims,
                    size_t *chunk, unsigned *cd);

#endif
