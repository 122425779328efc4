/* whole_stream.c - the codec stream of an archive `gzstack compress` wrote
 * chunk by chunk must be the bytes gz_compress() writes for the whole input
 * in one call, with the archive's absolute bound.
 * Usage: whole_stream ARCHIVE INPUT VAR|- DIMS|- f32|f64 CHUNK auto|none
 * (DIMS: the whole raw file's shape; CHUNK 0: the default). */
#include "gz_test.h"

#include "app.h"
#include "gz_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  gz_raw_opts_t raw;
  gz_reader_t *r = NULL;
  gz_codec_params_t p = GZ_CODEC_PARAMS_INIT;
  gz_stream_info_t info;
  const gz_meta_t *m;
  unsigned char *arch = NULL, *out = NULL;
  void *x = NULL;
  size_t asize = 0, n, cap, size = 0;
  uint64_t msize = 0;
  char err[512];
  int same = 0;
  MPI_Init(&argc, &argv);
  if (argc != 8) {
    fprintf(stderr,
            "usage: whole_stream ARCHIVE INPUT VAR|- DIMS|- f32|f64 CHUNK auto|none\n");
    MPI_Finalize();
    return 2;
  }
  memset(&raw, 0, sizeof raw);
  raw.dtype = strcmp(argv[5], "f64") ? GZ_FLOAT32 : GZ_FLOAT64;
  arch = gz_test_read_file(argv[1], &asize);
  for (int i = 0; arch && asize > 20 && i < 8; i++)
    msize |= (uint64_t)arch[8 + i] << (8 * i);
  if (!arch || asize < 20 + msize ||
      gz_stream_info(arch + 20 + msize, asize - 20 - msize, &info) != GZ_OK ||
      (strcmp(argv[4], "-") && gz_parse_dims(argv[4], &raw) != 0) ||
      gz_reader_open(argv[2], strcmp(argv[3], "-") ? argv[3] : NULL,
                     strcmp(argv[4], "-") ? &raw : NULL, MPI_COMM_SELF, &r, err,
                     sizeof err) != 0) {
    fprintf(stderr, "whole_stream: cannot read %s or %s\n", argv[1], argv[2]);
    goto done;
  }
  m = gz_reader_meta(r);
  n = gz_meta_count(m);
  p.dtype = m->dtype;
  p.eb_mode = GZ_EB_ABS;
  p.error_bound = info.abs_bound;
  p.chunk_len = (uint32_t)atoi(argv[6]);
  p.threads = 1;
  p.predictor = strcmp(argv[7], "auto") ? GZ_PRED_NONE : GZ_PRED_AUTO;
  p.ndims = m->ndims <= GZ_CODEC_MAXDIMS ? (unsigned)m->ndims : 0;
  for (unsigned d = 0; d < p.ndims; d++)
    p.dims[d] = m->dims[d];
  cap = gz_compress_bound(p.dtype, n, p.chunk_len);
  x = malloc(n * gz_dtype_size(p.dtype) + 1);
  out = malloc(cap + 1);
  if (x && out &&
      gz_reader_read(r, 0, gz_reader_records(r), p.dtype, x, err, sizeof err) == 0 &&
      gz_compress(&p, x, n, out, cap, &size) == GZ_OK)
    same = size == asize - 20 - msize && memcmp(out, arch + 20 + msize, size) == 0;
  if (!same)
    fprintf(
        stderr,
        "whole_stream: %s: the stream (%zu bytes) is not the whole-buffer one (%zu)\n",
        argv[1], (size_t)(asize - 20 - msize), size);
done:
  gz_reader_close(r);
  free(x);
  free(out);
  free(arch);
  MPI_Finalize();
  return same ? 0 : 1;
}
