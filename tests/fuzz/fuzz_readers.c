/* fuzz_readers.c - libFuzzer target for the metadata paths of the readers
 * (io/: raw, netCDF, HDF5, SEG-Y, RSF). The first byte chooses the format
 * the bytes are written as (a temporary file with a .raw, .nc, .h5, .sgy or
 * .rsf name, since the libraries read files: bits 0-1 = 0, 1, 2, and 3 for
 * SEG-Y or, with bit 2, RSF) and, for raw files, the shape and type; the rest is
 * the file; bit 7 asks for the only data variable, else bits 5-6 name one
 * (the same bits give a raw file's type and byte order). The reader must open it or
 * refuse it with a message naming the file; an opened reader must describe a consistent
 * variable and read its first record (when small) without a memory error. MPI is not
 * started: HDF5 then reads through its default driver instead of MPI-IO (the same
 * metadata code; MPI's threads would also stop LeakSanitizer working).
 *
 * HDF5 and netCDF-4 files are only fuzzed with GZ_FUZZ_HDF5=1 in the
 * environment: Debian 12's libhdf5 (1.10.8) itself crashes on damaged files
 * within a minute (a NULL dereference in H5A__close under H5DSis_scale,
 * an overlapping memcpy in H5HG_read), reached from nc_open() before any of
 * our code runs, so bounded CI runs would only rediscover those. Long runs
 * with it set (tests/fuzz/asan.supp keeps the libraries' interceptor
 * reports out) look for faults in io/io_hdf5.c and io/io_netcdf.c; the
 * HDF5 seeds are replayed as valid files by tests/fuzz_replay either way.
 * libnetcdf also allocates what a classic header claims before checking it
 * against the file (gigabytes for a 13 KB file): scripts/gz.sh runs this
 * target with -fork=1 -ignore_ooms=1 so such inputs are skipped, and
 * crashes still stop it. */
#define _POSIX_C_SOURCE 200809L
#include "gz_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char paths[5][256];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static const char *ext[5] = {"raw", "nc", "h5", "sgy", "rsf"};
  const char *dir = getenv("TMPDIR");
  (void)argc;
  (void)argv;
  for (int i = 0; i < 5; i++)
    snprintf(paths[i], sizeof paths[i], "%s/gz_fuzz_readers_%ld.%s", dir ? dir : "/tmp",
             (long)getpid(), ext[i]);
  return 0;
}

/* The HDF5 signature at 0, 512, 1024 or 2048 (also netCDF-4 files). */
static int has_hdf5_signature(const uint8_t *p, size_t n) {
  static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (size_t off = 0; off <= 2048; off = off ? 2 * off : 512)
    if (off + 8 <= n && memcmp(p + off, sig, 8) == 0)
      return 1;
  return 0;
}

static void remove_files(void) {
  for (int i = 0; i < 5; i++)
    unlink(paths[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *names[4] = {"data", "t", "/wavefield", "sst"};
  static int registered;
  gz_raw_opts_t raw;
  gz_reader_t *r = NULL;
  char err[512];
  const char *path, *var;
  FILE *f;
  int sel;
  if (!registered) {
    registered = 1;
    atexit(remove_files);
  }
  if (size < 1)
    return 0;
  if (!getenv("GZ_FUZZ_HDF5") && has_hdf5_signature(data + 1, size - 1))
    return 0; /* see the top of the file */
  sel = data[0];
  path = paths[(sel & 3) == 3 ? 3 + (sel >> 2 & 1) : sel & 3];
  f = fopen(path, "wb");
  if (!f)
    return 0;
  if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) {
    fclose(f);
    return 0;
  }
  fclose(f);
  memset(&raw, 0, sizeof raw);
  raw.ndims = 2 + (sel >> 2 & 1); /* record dim inferred + 1 or 2 dims */
  raw.dims[0] = 0;
  raw.dims[1] = 1 + (size_t)(sel >> 3 & 3) * 7;
  raw.dims[2] = 3;
  raw.dtype = sel & 0x20 ? GZ_FLOAT64 : GZ_FLOAT32;
  raw.big_endian = !!(sel & 0x40);
  var = sel & 0x80 ? NULL : names[sel >> 5 & 3];
  err[0] = '\0';
  if (gz_reader_open(path, var, &raw, MPI_COMM_SELF, &r, err, sizeof err) != 0) {
    if (!err[0])
      abort(); /* refused without a message */
    return 0;
  }
  {
    const gz_meta_t *m = gz_reader_meta(r);
    size_t rs = gz_reader_record_size(r), nrec = gz_reader_records(r);
    if (m->ndims < 1 || m->ndims > GZ_IO_MAXDIMS || nrec != m->dims[0])
      abort();
    if (nrec > 0 && rs > 0 && rs <= (1u << 16)) {
      double *buf = malloc(rs * sizeof(double));
      if (buf)
        (void)gz_reader_read(r, 0, 1, GZ_FLOAT64, buf, err, sizeof err);
      free(buf);
    }
  }
  gz_reader_close(r);
  return 0;
}
