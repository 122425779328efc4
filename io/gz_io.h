/*
 * gz_io.h - readers and writers for the datasets gzstack stacks and reduces:
 * raw binary, netCDF (classic, 64-bit offset, CDF-5, netCDF-4), HDF5, SEG-Y
 * (through libsegyio) and Madagascar RSF, and the variable metadata that
 * travels with them (also packed into .gzc archives).
 *
 * Conventions
 *  - Every call that can fail returns 0 on success and -1 on failure, with a
 *    message naming the file and the cause in the caller's err[errlen]
 *    (err may be NULL when errlen is 0). Nothing here exits or aborts.
 *  - Pointers are caller-owned unless stated otherwise.
 *  - Every file is written under a temporary name beside its final path and
 *    renamed into place when complete (gz_io_commit.h); an existing file is
 *    replaced only with force.
 *  - HDF5 files are opened with the MPI-IO driver on the communicator given
 *    to gz_reader_open(): opening and closing are then collective over that
 *    communicator (the outcome of an open is agreed on by every rank), reads
 *    are independent. netCDF and raw readers do not communicate.
 */
#ifndef GZ_IO_H
#define GZ_IO_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

/* gz_dtype_t. Found beside this header so that io/ sources compile without
 * the library's include path (consumers have it and get the same file). */
#include "gzcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GZ_IO_MAXDIMS 8

typedef enum {
  GZ_FMT_UNKNOWN = 0,
  GZ_FMT_RAW,
  GZ_FMT_NETCDF,
  GZ_FMT_HDF5,
  GZ_FMT_SEGY, /* io_segy.c: docs/seismic.md */
  GZ_FMT_RSF   /* io_rsf.c: Madagascar */
} gz_format_t;

/* "raw", "netcdf", "hdf5", "segy", "rsf" or "unknown"; never NULL. */
const char *gz_format_name(gz_format_t fmt);

/* Shape and type of a headerless raw file. dims include the record (first)
 * dimension; dims[0] == 0 infers the record count from the file size. */
typedef struct gz_raw_opts {
  int ndims;                  /* 1 .. GZ_IO_MAXDIMS */
  size_t dims[GZ_IO_MAXDIMS]; /* C order, slowest first */
  gz_dtype_t dtype;           /* GZ_FLOAT32 or GZ_FLOAT64 */
  int big_endian;             /* 1: stored big-endian; 0: little-endian */
} gz_raw_opts_t;

/* One attribute. Text: text is a NUL-terminated string of count bytes
 * (without the NUL), values NULL. Numeric: count doubles in values (NULL
 * when count is 0), text NULL. Both arrays are owned by the meta. */
typedef struct gz_attr {
  char name[64];
  int is_text;
  char *text;
  double *values;
  size_t count;
} gz_attr_t;

/* Coordinate variable of a dimension. values NULL (count 0, name "") when
 * the dimension has none; else count == the dimension's length. */
typedef struct gz_coord {
  char name[64];
  char units[64];
  char calendar[32]; /* CF calendar attribute ("" when absent) */
  double *values;
  size_t count;
} gz_coord_t;

/* Everything known about one variable and its file. A zeroed struct (or
 * gz_meta_init()) is an empty meta; the arrays are owned by it. */
typedef struct gz_meta {
  char var[256];    /* variable name / HDF5 dataset path */
  gz_dtype_t dtype; /* GZ_FLOAT64 if stored as double or as an integer type,
                       GZ_FLOAT32 if stored as float (or raw f32) */
  int ndims;
  size_t dims[GZ_IO_MAXDIMS];
  char dim_names[GZ_IO_MAXDIMS][64];
  char units[128];
  char long_name[256];
  int has_fill;                    /* _FillValue, or missing_value (see gz_reader_open) */
  double fill_value;               /* in unpacked units: compare with the values read */
  double scale_factor, add_offset; /* 1 and 0 unless has_scale */
  int has_scale;                   /* the file packs the data; the reader returns unpacked
                                      values, and gz_io_write() ignores these three fields */
  gz_coord_t coords[GZ_IO_MAXDIMS];
  gz_attr_t *attrs; /* other variable attributes, kept for the output */
  size_t nattrs;
  gz_attr_t *global_attrs;
  size_t nglobal_attrs;
  /* Headers of the source format kept byte for byte, so that a writer of
   * the same format can reproduce them ("" / NULL / 0 when none). "segy":
   * the layout is io_segy.c's (textual, binary, extended textual and trace
   * headers as stored). Other writers ignore them. */
  char native_format[16];
  unsigned char *native;
  size_t native_size;
} gz_meta_t;

/* ------------------------------------------------------------------------
 * Formats
 * ---------------------------------------------------------------------- */

/* By extension (case-insensitive): .nc/.nc4/.cdf -> NETCDF,
 * .h5/.hdf5/.he5 -> HDF5, .raw/.bin/.dat -> RAW, .sgy/.segy -> SEGY,
 * .rsf -> RSF; else UNKNOWN. */
gz_format_t gz_io_format_from_path(const char *path);

/* By signature: CDF\1, CDF\2, CDF\5 -> NETCDF; the HDF5 signature (at 0, 512,
 * 1024 or 2048) -> NETCDF if netCDF opens the file and finds the netCDF-4
 * mark (_NCProperties) or the name has a netCDF extension, else HDF5 (a
 * plain HDF5 file, which netCDF may also open, keeps its HDF5 paths and
 * attributes); otherwise by extension; a file the extension says nothing
 * of is SEGY when its binary header holds a valid sample format code and
 * its textual header starts with 'C' (EBCDIC or ASCII), RSF when it starts
 * with a Madagascar header line; else RAW. */
gz_format_t gz_io_detect(const char *path);

/* ------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------- */
typedef struct gz_reader gz_reader_t;

/* Open one variable of path.
 * var: netCDF variable name ("T", or "/group/T" in netCDF-4) or HDF5 dataset
 *      path ("/sst", "/group/data"). NULL: the only numeric variable that
 *      is not a coordinate (dimension scale); when there are several the
 *      error lists them (netCDF: root group only). Ignored for raw files
 *      (meta->var is then var, or "data").
 * raw: shape and type for raw files (required for them), ignored otherwise.
 * comm: communicator of the MPI-IO driver for HDF5 (MPI_COMM_SELF for an
 *      independent open); unused for other formats.
 * The format is detected (gz_io_detect); a file with the HDF5 signature
 * that netCDF cannot open, or where it does not find var, is then retried
 * as plain HDF5. Missing values: has_fill/fill_value come from _FillValue,
 * or from missing_value when there is no _FillValue or it is NaN (NaN is
 * always missing; ERSST stores land as missing_value -9.96921e36 beside a
 * NaN _FillValue); a missing_value that differs from the chosen fill is
 * kept in attrs. On success *out is a new reader (gz_reader_close() it). */
int gz_reader_open(const char *path, const char *var, const gz_raw_opts_t *raw,
                   MPI_Comm comm, gz_reader_t **out, char *err, size_t errlen);

/* The same with the format given (GZ_FMT_UNKNOWN: detect). Use GZ_FMT_HDF5
 * to read a netCDF-4 file through HDF5. */
int gz_reader_open_format(const char *path, gz_format_t fmt, const char *var,
                          const gz_raw_opts_t *raw, MPI_Comm comm, gz_reader_t **out,
                          char *err, size_t errlen);

const gz_meta_t *gz_reader_meta(const gz_reader_t *r); /* owned by the reader */
gz_format_t gz_reader_format(const gz_reader_t *r);
const char *gz_reader_path(const gz_reader_t *r);
size_t gz_reader_records(const gz_reader_t *r); /* length of the first dim */
/* Values per record: the product of the other dims (1 for a 1-D variable). */
size_t gz_reader_record_size(const gz_reader_t *r);

/* Read records [first, first+count) converted to dtype into dst (caller
 * owns, count*record_size values). Values are unpacked (scale_factor,
 * add_offset); missing values stay as stored (fill value or NaN): mask them
 * with meta. count 0 reads nothing. */
int gz_reader_read(gz_reader_t *r, size_t first, size_t count, gz_dtype_t dtype,
                   void *dst, char *err, size_t errlen);

/* Values [offset, offset+n) of record rec, flattened in C order, into dst
 * (caller owns, n values of dtype). For records too large to hold whole. */
int gz_reader_read_part(gz_reader_t *r, size_t rec, size_t offset, size_t n,
                        gz_dtype_t dtype, void *dst, char *err, size_t errlen);

/* Values [first, first+n) of the whole variable, flattened in C order (they
 * may span records), into dst (caller owns, n values of dtype). */
int gz_reader_read_values(gz_reader_t *r, size_t first, size_t n, gz_dtype_t dtype,
                          void *dst, char *err, size_t errlen);

/* Close and free (NULL is accepted). Collective for HDF5 (see above). */
void gz_reader_close(gz_reader_t *r);

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

/* Write one variable, data in meta->dtype (caller owns, product of dims
 * values, unpacked), to path in format fmt (GZ_FMT_UNKNOWN: from the
 * extension, an error if it says nothing). An existing path is refused
 * unless force; the file appears only when complete.
 *  NETCDF: always netCDF-4 (HDF5 inside): no 2/4 GiB limits, one code path
 *    for every size. Fixed-size dims named by meta->dim_names ("dimN" when
 *    empty), the variable (contiguous, the last component of meta->var;
 *    "data" when empty) with units, long_name, _FillValue (in the
 *    variable's type), then attrs (numbers as double, except missing_value,
 *    valid_min/max/range and actual_range in the variable's type) and
 *    global attrs. Coordinates become double variables named after their
 *    dimension, with units. Reserved names (_NCProperties, ...) and
 *    scale_factor/add_offset are not written.
 *  HDF5: the dataset at meta->var ("/data" when empty; groups created),
 *    IEEE little-endian, contiguous, with the same attributes (text as
 *    fixed-length strings) and the fill value in its creation properties.
 *    Each dimension gets a dimension scale (the HDF5 Dimension Scale
 *    convention, the same attributes the HL library writes) named after it
 *    beside the dataset: the coordinate values as double, or, without
 *    coordinates, an unwritten dataset marked as netCDF marks a bare
 *    dimension.
 *  RAW: the bare little-endian array; no metadata.
 *  SEGY: the last dimension is the trace, the product of the others the
 *    trace count. The headers of meta->native ("segy", when they describe
 *    that many traces of that length) are written byte for byte, except
 *    the sample format code when the data's type differs from the stored
 *    one; else headers are made (revision 1, big-endian, inline and
 *    crossline numbers from the coordinates). Samples are IEEE float32
 *    (format 5) for GZ_FLOAT32 data, IEEE float64 (format 6, revision 2)
 *    for GZ_FLOAT64, in the byte order of the headers; IBM float (format 1,
 *    through libsegyio's conversion of the float32 values) when the global
 *    text attribute segy_output_format is "ibm". With a global
 *    attribute gzstack_command (a stack's provenance) lines C35-C39 of the
 *    textual header carry the gzstack version, command and bound.
 *  RSF: a Madagascar header (n1 d1 o1 label1 unit1 ... from the dims in
 *    reverse order and uniform coordinates, data_format native_float or
 *    native_double, in="stdin") followed in the same file by the form-feed
 *    separator and the little-endian data (Madagascar's out=stdout form). */
int gz_io_write(const char *path, gz_format_t fmt, const gz_meta_t *meta,
                const void *data, int force, char *err, size_t errlen);

/* Where a writer takes the values from. data non-NULL: all of them, in
 * memory. Otherwise get() hands them over in order, a piece at a time: it
 * returns values [first, first+n) in meta->dtype (a pointer valid until the
 * next call), each call asking for the values right after the previous
 * call's; NULL with err on a failure. The writers ask for at most
 * GZ_IO_PIECE values at a time (SEG-Y: one trace), so a source that decodes
 * or reads as it goes keeps memory to a few pieces. */
typedef struct gz_io_source {
  const void *data;
  const void *(*get)(void *ctx, size_t first, size_t n, char *err, size_t errlen);
  void *ctx;
} gz_io_source_t;
#define GZ_IO_PIECE ((size_t)1 << 18)

/* gz_io_write() with the values from src: every format is written as the
 * values arrive (memory: a piece). */
int gz_io_write_from(const char *path, gz_format_t fmt, const gz_meta_t *meta,
                     const gz_io_source_t *src, int force, char *err, size_t errlen);

/* The bound a compressed output keeps and how it was asked for, recorded as
 * the variable's attributes gzstack_abs_error_bound (number),
 * gzstack_eb_mode (text) and gzstack_eb_target (number). */
typedef struct gz_io_bound {
  double abs_bound; /* every value within it */
  const char *mode; /* "abs", "rel", "psnr" or "norm" */
  double target;    /* what was asked in that mode (-e) */
} gz_io_bound_t;
/* Add (or replace) those three attributes in m. 0, or -1 (memory). */
int gz_io_bound_attrs(gz_meta_t *m, const gz_io_bound_t *b);

/* netCDF-4 file whose variable is compressed chunk by chunk with the gzstack
 * HDF5 filter plugin (h5z/, testing filter id 390) within b->abs_bound, with
 * the bound's attributes (gz_io_bound_attrs) and a gzstack_compression note
 * (io_netcdf_gz.c). The filter is registered in-process (no
 * HDF5_PLUGIN_PATH needed here, nor for gz_reader_open of the file
 * afterwards); other readers need the plugin. The values come from src one
 * HDF5 chunk at a time (memory: a chunk and what the filter makes of it).
 * Writes tmp (a temporary from gz_io_temp_path, dropped by the caller on
 * failure, named by gz_io_commit when complete); path names the file in
 * messages. */
int gz_io_write_netcdf_gz(const char *tmp, const char *path, const gz_meta_t *meta,
                          const gz_io_source_t *src, const gz_io_bound_t *b, char *err,
                          size_t errlen);
/* Values per HDF5 chunk of those two files' variable (meta's shape): its
 * chunks are runs of that many consecutive values (fewer at the end of a
 * dimension), whole inner dimensions and part of one more. */
size_t gz_io_gz_chunk_values(const gz_meta_t *meta);
/* The same as a plain HDF5 file: gz_io_write()'s HDF5 layout (attributes,
 * dimension scales), the dataset chunked and compressed with the filter's
 * encoding, written into tmp a chunk at a time (memory: a chunk and its
 * encoding; io_hdf5.c). */
int gz_io_write_hdf5_gz(const char *tmp, const char *path, const gz_meta_t *meta,
                        const gz_io_source_t *src, const gz_io_bound_t *b, char *err,
                        size_t errlen);

/* Whether some variable of the open netCDF group ncid names variable `name`
 * in its CF `bounds` or `climatology` attribute: cell bounds (time_bnds,
 * climatology_bounds), not data (io_netcdf_cf.c, for the netCDF code). */
int gz_io_nc_is_cell_bounds(int ncid, const char *name);
/* Put the values of src into the contiguous variable varid of the open
 * netCDF file ncid a box (gz_io_next_box) at a time: a netCDF status, or -1
 * when the source failed (err). Short writes also let a signal handler run
 * soon (io_netcdf.c). */
int gz_io_nc_put_boxes(int ncid, int varid, const gz_meta_t *meta,
                       const gz_io_source_t *src, char *err, size_t errlen);
/* Register the gzstack HDF5 filter in the HDF5 library under netCDF (for
 * the open file ncid): 0 when that library has it (io_netcdf_gz.c). */
int gz_io_nc_register_filter(int ncid);

/* What gz_io_write_netcdf_cf() adds for CF-aware tools (io_netcdf_cf.c). */
typedef struct gz_cf_extra {
  /* a netCDF input: the attributes of its coordinate variables (calendar,
   * standard_name, axis, ...) go onto the output's coordinates of the same
   * names, except _FillValue, actual_range, bounds and climatology; NULL:
   * none */
  const char *source;
  /* bounds of the first dimension, 2 per value, in its coordinate's units
   * (NULL: none): variable <dim>_bnds named by the coordinate's `bounds`
   * attribute, or with climatology set, climatology_bounds named by its
   * `climatology` attribute (CF 7.4) */
  const double *bounds;
  int climatology;
  /* data variables: deflate level 0-9 (0: none) with shuffle (1) or
   * without; chunk sizes of the first variable's dimensions (nchunks 0:
   * netCDF's default when deflated, else contiguous) */
  int deflate, shuffle;
  const size_t *chunks;
  int nchunks;
} gz_cf_extra_t;
/* netCDF-4 file of nvars variables metas[k] / datas[k] over dimensions of
 * the same names (the lengths must agree), written as gz_io_write() writes
 * one (coordinates as double with units and calendar, the variables'
 * attributes, metas[0]'s global attributes), with x's additions. An
 * existing path is refused unless force; the file appears only when
 * complete. */
int gz_io_write_netcdf_cf(const char *path, const gz_meta_t *const *metas,
                          const void *const *datas, int nvars, const gz_cf_extra_t *x,
                          int force, char *err, size_t errlen);
/* The numeric variables of a netCDF file's root group along its record
 * dimension (the unlimited one; without one, the first dimension of the
 * first numeric data variable), coordinate and bounds variables left out,
 * comma-separated into buf (io_netcdf_cf.c). 0, or -1 with err. */
int gz_io_netcdf_vars_along(const char *path, char *buf, size_t len, char *err,
                            size_t errlen);

/* The CF cell bounds of coordinate variable coord (n values) of a netCDF
 * file: the variable its `bounds` attribute names, n x 2 values read as
 * double into bnds (2 per value; in the coordinate's units, as CF asks).
 * 0 with *found 0 when there is no such attribute; -1 with err when the
 * file cannot be read or the bounds variable is missing or not n x 2
 * (io_netcdf_cf.c). */
int gz_io_netcdf_coord_bounds(const char *path, const char *coord, double *bnds, size_t n,
                              int *found, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * Metadata
 * ---------------------------------------------------------------------- */

/* An empty meta: zeroed, scale_factor 1, dtype GZ_FLOAT32. */
void gz_meta_init(gz_meta_t *m);

/* Number of values (product of the dims; 1 for ndims 0); 0 on overflow. */
size_t gz_meta_count(const gz_meta_t *m);

/* Deep copy into dst, which is overwritten (not freed first). 0, or -1 on
 * allocation failure with dst left empty. */
int gz_meta_copy(gz_meta_t *dst, const gz_meta_t *src);

/* Free the owned arrays; leaves a zeroed struct. NULL is accepted. */
void gz_meta_free(gz_meta_t *m);

/* Add or replace (by name) a global attribute; name is 1..63 bytes. For
 * provenance (gzstack_version, history, ...). 0, or -1 (bad name, memory). */
int gz_meta_add_global_text(gz_meta_t *m, const char *name, const char *text);
int gz_meta_add_global_number(gz_meta_t *m, const char *name, double value);

/* The same for variable attributes; values (count doubles) is copied. */
int gz_meta_add_attr_text(gz_meta_t *m, const char *name, const char *text);
int gz_meta_add_attr_numbers(gz_meta_t *m, const char *name, const double *values,
                             size_t count);

/* Attribute by name, or NULL. */
const gz_attr_t *gz_meta_find_attr(const gz_meta_t *m, const char *name);
const gz_attr_t *gz_meta_find_global(const gz_meta_t *m, const char *name);

/* Set (values non-NULL, count == dims[dim]) or clear (values NULL) the
 * coordinate values of dimension dim; values is copied. name and units may
 * be NULL (name then defaults to the dimension's name). */
int gz_meta_set_coord(gz_meta_t *m, int dim, const char *name, const char *units,
                      const double *values, size_t count);

/* Serialize to a self-contained little-endian blob (layout in io_meta.c).
 * buf NULL: returns the size needed. Else returns the bytes written, or 0
 * when cap is too small or the meta is inconsistent (ndims, counts). */
size_t gz_meta_pack(const gz_meta_t *m, void *buf, size_t cap);

/* Parse a blob made by gz_meta_pack(). The blob is untrusted: every length
 * and count is checked against the bytes present and the meta's limits; on
 * any inconsistency -1 with a message and m left empty. m is overwritten
 * (not freed first); gz_meta_free() it after success. */
int gz_meta_unpack(const void *buf, size_t size, gz_meta_t *m, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * Backends (internal to io/: the table io_common.c dispatches through).
 * ---------------------------------------------------------------------- */

/* One format's reader. open() fills meta (dtype = the type read() returns)
 * and a state of its own; read() reads the box start/count (ndims entries),
 * which is also the contiguous flat range [flat, flat+n) of the variable,
 * into dst in meta->dtype; close() frees the state. */
typedef struct gz_io_backend {
  gz_format_t format;
  int (*open)(const char *path, const char *var, const gz_raw_opts_t *raw, MPI_Comm comm,
              gz_meta_t *meta, void **state, char *err, size_t errlen);
  int (*read)(void *state, const gz_meta_t *meta, const size_t *start,
              const size_t *count, size_t flat, size_t n, void *dst, char *err,
              size_t errlen);
  void (*close)(void *state);
} gz_io_backend_t;

extern const gz_io_backend_t gz_io_backend_raw;    /* io_raw.c */
extern const gz_io_backend_t gz_io_backend_netcdf; /* io_netcdf.c */
extern const gz_io_backend_t gz_io_backend_hdf5;   /* io_hdf5.c */
extern const gz_io_backend_t gz_io_backend_segy;   /* io_segy.c */
extern const gz_io_backend_t gz_io_backend_rsf;    /* io_rsf.c */

/* Writers, called by gz_io_write_from() with a validated meta: they write
 * tmp (dropped by the caller on failure), take the values from src and name
 * path in messages. */
int gz_io_write_raw(const char *tmp, const char *path, const gz_meta_t *meta,
                    const gz_io_source_t *src, char *err, size_t errlen);
int gz_io_write_netcdf(const char *tmp, const char *path, const gz_meta_t *meta,
                       const gz_io_source_t *src, char *err, size_t errlen);
int gz_io_write_hdf5(const char *tmp, const char *path, const gz_meta_t *meta,
                     const gz_io_source_t *src, char *err, size_t errlen);
int gz_io_write_segy(const char *tmp, const char *path, const gz_meta_t *meta,
                     const gz_io_source_t *src, char *err, size_t errlen);
int gz_io_write_rsf(const char *tmp, const char *path, const gz_meta_t *meta,
                    const gz_io_source_t *src, char *err, size_t errlen);
/* Values [first, first+n) of src (see gz_io_source_t); NULL with err. */
const void *gz_io_source_get(const gz_io_source_t *src, const gz_meta_t *meta,
                             size_t first, size_t n, char *err, size_t errlen);
/* The box (start/count over meta's dims) of the values from flat on that is
 * one hyperslab of at most most values (at least one row part): whole inner
 * dimensions while they fit. Returns the values it holds. For writers that
 * put hyperslabs (netCDF, HDF5); successive boxes cover the array in order. */
size_t gz_io_next_box(const gz_meta_t *meta, size_t flat, size_t most, size_t *start,
                      size_t *count);

/* 1 if the file looks like SEG-Y (io_segy.c) / starts with an RSF header
 * (io_rsf.c): the content sniffers of gz_io_detect(). */
int gz_io_segy_probe(const char *path);
int gz_io_rsf_probe(const char *path);

/* 0: netCDF cannot open path; 1: it can; 2: it can and the file carries the
 * netCDF-4 mark (_NCProperties) (io_netcdf.c). */
int gz_io_netcdf_probe(const char *path);

/* Helpers shared by the backends (io_common.c / io_meta.c). */
size_t gz_io_dtype_size(gz_dtype_t dtype); /* 4, 8, or 0 */
/* 1 on a little-endian host. */
int gz_io_host_is_little(void);
/* Reverse the bytes of each of n elements of esize bytes at p, in place. */
void gz_io_swap_bytes(unsigned char *p, size_t n, size_t esize);
/* The n strings (NULL as empty) joined by '\n', malloc'ed; NULL out of
 * memory. */
char *gz_io_join_lines(char *const *strs, size_t n);
/* Read n bytes at byte off of fd (pread, retried when interrupted): NULL, or
 * why not (errno's text, or "unexpected end of file"), *got (may be NULL)
 * the bytes read before. */
const char *gz_io_pread_all(int fd, void *dst, size_t n, unsigned long long off,
                            size_t *got);
/* The end of a writer's file f: flushed (state 0) and closed. state: 0 all
 * was written, 1 a write failed (errno says why), -1 a failure whose message
 * is already in err. A failed write, flush or close is "PATH: write failed:
 * why". 0, or -1 on any failure. */
int gz_io_close_written(FILE *f, int state, const char *path, char *err, size_t errlen);
/* The system's reason for a failed write (a full disk, a file-size limit,
 * an I/O error, a read-only file system) when errno e is one, else NULL:
 * libhdf5 and netCDF-4 report such a failure in their own words, and this
 * is what the user needs to read. */
const char *gz_io_write_cause(int e);
void gz_io_errorf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Names the readers keep out of attrs and the writers never write
 * (netCDF/HDF5 bookkeeping such as _NCProperties or DIMENSION_LIST). */
int gz_io_reserved_attr(const char *name);
/* Append an attribute to a list (no replacement); text or values+count. */
int gz_io_attr_append(gz_attr_t **list, size_t *n, const char *name, const char *text,
                      const double *values, size_t count);
/* Fill has_fill/fill_value from the _FillValue and missing_value found
 * (NULL when absent), keeping the unused one in attrs when it differs. */
int gz_io_meta_set_fill(gz_meta_t *m, const double *fill, const double *missing);
/* After has_scale is known: fill_value in unpacked units. */
void gz_io_meta_unpack_fill(gz_meta_t *m);

#ifdef __cplusplus
}
#endif

#endif
