/* fuzz_meta.c - libFuzzer target: the metadata blob of a .gzc archive
 * (io/io_meta.c gz_meta_unpack) is untrusted input; any byte string must
 * be parsed or refused with a message, never read or write out of bounds.
 * A parsed blob must pack again and parse to the same packed bytes. */
#include "gz_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gz_meta_t m, again;
  char err[256];
  size_t n, n2;
  uint8_t *buf, *buf2;
  if (gz_meta_unpack(data, size, &m, err, sizeof err) != 0)
    return 0;
  n = gz_meta_pack(&m, NULL, 0);
  buf = malloc(n + 1);
  buf2 = malloc(n + 1);
  if (buf && buf2 && gz_meta_pack(&m, buf, n) == n &&
      gz_meta_unpack(buf, n, &again, err, sizeof err) == 0) {
    n2 = gz_meta_pack(&again, buf2, n);
    if (n2 != n || memcmp(buf, buf2, n) != 0)
      abort(); /* pack(unpack(pack(m))) must be stable */
    gz_meta_free(&again);
  }
  free(buf);
  free(buf2);
  gz_meta_free(&m);
  return 0;
}
