/*
 * h5z_gzstack_filter.c - the HDF5 filter of the gzstack codec (stream format
 * 2): its callback and its H5Z_class2_t. Built into the plugin
 * (h5z_gzstack.c, loaded by h5dump, h5py, netCDF-C, xarray through
 * HDF5_PLUGIN_PATH) and into gzstack itself, which registers it in-process
 * (H5Zregister, io/io_netcdf_gz.c) so that writing needs no plugin path.
 *
 * Filter id GZ_H5Z_FILTER_ID (390) lies in the range HDF5 reserves for
 * testing (256-511): it is NOT registered with The HDF Group yet.
 *
 * cd_values (unsigned ints), written by the gzstack writer:
 *   [0] cd layout version (1)   [1] dtype (1 float32, 2 float64)
 *   [2] bound mode (0: absolute; the writer converts the others to absolute)
 *   [3],[4] the absolute bound as a double, low and high 32 bits
 *   [5] ndims (0..8)  [6..6+ndims) the chunk's dimensions (C order)
 * Each chunk is one self-checking gzstack stream; a stream that fails its
 * checks makes the filter fail, so a reader reports an error and never
 * returns wrong values.
 */
#include "h5z_gzstack.h"

#include "gzcoll.h"

#include <H5PLextern.h> /* H5Zpublic.h with the types it needs */
#include <stdlib.h>
#include <string.h>

/* The codec's parameters for a chunk of nbytes under cd (see the top). 0,
 * or -1 for cd values this filter does not write or a size that is not
 * whole values. */
static int chunk_params(size_t n_cd, const unsigned cd[], size_t nbytes,
                        gz_codec_params_t *p, size_t *n) {
  uint64_t bits;
  size_t elem, prod = 1;
  if (n_cd < 6 || cd[0] != 1 || (cd[1] != 1 && cd[1] != 2) || cd[2] != 0 || cd[5] > 8 ||
      n_cd < 6 + (size_t)cd[5])
    return -1;
  *p = (gz_codec_params_t)GZ_CODEC_PARAMS_INIT;
  p->dtype = (gz_dtype_t)cd[1];
  elem = gz_dtype_size(p->dtype);
  bits = (uint64_t)cd[3] | (uint64_t)cd[4] << 32;
  memcpy(&p->error_bound, &bits, sizeof bits);
  p->predictor = GZ_PRED_AUTO;
  p->threads = 1;
  *n = nbytes / elem;
  if (*n * elem != nbytes)
    return -1;
  for (unsigned k = 0; k < cd[5]; k++)
    prod *= cd[6 + k];
  if (prod == *n) { /* a whole chunk (edge chunks are padded to it) */
    p->ndims = cd[5];
    for (unsigned k = 0; k < cd[5]; k++)
      p->dims[k] = cd[6 + k];
  }
  return 0;
}

size_t gz_h5z_encode_bound(size_t n_cd, const unsigned cd[], size_t nbytes) {
  gz_codec_params_t p;
  size_t n;
  return chunk_params(n_cd, cd, nbytes, &p, &n) == 0 ? gz_compress_bound(p.dtype, n, 0)
                                                      : 0;
}

size_t gz_h5z_encode(size_t n_cd, const unsigned cd[], const void *chunk, size_t nbytes,
                     void *out, size_t cap) {
  gz_codec_params_t p;
  size_t n, size = 0;
  if (chunk_params(n_cd, cd, nbytes, &p, &n) != 0 ||
      gz_compress(&p, chunk, n, out, cap, &size) != GZ_OK)
    return 0;
  return size;
}

static size_t compress_chunk(size_t n_cd, const unsigned cd[], size_t nbytes,
                             size_t *buf_size, void **buf) {
  size_t cap = gz_h5z_encode_bound(n_cd, cd, nbytes), size;
  void *out = cap ? malloc(cap) : NULL;
  if (!out || (size = gz_h5z_encode(n_cd, cd, *buf, nbytes, out, cap)) == 0) {
    free(out);
    return 0;
  }
  free(*buf);
  *buf = out;
  *buf_size = cap;
  return size;
}

static size_t decompress_chunk(size_t n_cd, const unsigned cd[], size_t nbytes,
                               size_t *buf_size, void **buf) {
  gz_stream_info_t info;
  void *out;
  size_t bytes;
  if (gz_stream_info(*buf, nbytes, &info) != GZ_OK ||
      (n_cd >= 2 && (unsigned)info.dtype != cd[1]))
    return 0;
  bytes = (size_t)info.count * gz_dtype_size(info.dtype);
  out = malloc(bytes ? bytes : 1);
  if (!out || gz_decompress(*buf, nbytes, out, (size_t)info.count) != GZ_OK) {
    free(out);
    return 0;
  }
  free(*buf);
  *buf = out;
  *buf_size = bytes;
  return bytes;
}

static size_t gz_h5z_filter(unsigned flags, size_t n_cd, const unsigned cd[],
                            size_t nbytes, size_t *buf_size, void **buf) {
  if (flags & H5Z_FLAG_REVERSE)
    return decompress_chunk(n_cd, cd, nbytes, buf_size, buf);
  return compress_chunk(n_cd, cd, nbytes, buf_size, buf);
}

static const H5Z_class2_t gz_h5z_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)GZ_H5Z_FILTER_ID,
    1,
    1,
    "gzstack error-bounded codec (testing id 390, unregistered)",
    NULL,
    NULL,
    (H5Z_func_t)gz_h5z_filter,
};

const void *gz_h5z_filter_class(void) { return &gz_h5z_class; }

#define GZ_H5Z_CHUNK_VALUES (1u << 20)

size_t gz_h5z_setup(unsigned dtype, double abs_bound, int ndims, const size_t *dims,
                    size_t *chunk, unsigned *cd) {
  size_t rest = 1;
  uint64_t bits;
  for (int i = ndims - 1; i >= 0; i--) {
    size_t fit = rest >= GZ_H5Z_CHUNK_VALUES ? 1 : GZ_H5Z_CHUNK_VALUES / rest;
    chunk[i] = dims[i] < fit ? dims[i] : (fit ? fit : 1);
    rest *= chunk[i];
  }
  memcpy(&bits, &abs_bound, sizeof bits);
  cd[0] = 1;
  cd[1] = dtype;
  cd[2] = 0;
  cd[3] = (unsigned)(bits & 0xffffffffu);
  cd[4] = (unsigned)(bits >> 32);
  cd[5] = (unsigned)ndims;
  for (int i = 0; i < ndims; i++)
    cd[6 + i] = (unsigned)chunk[i];
  return 6 + (size_t)ndims;
}
