/* result.c - result strings, version, backend, eb mode and bound names. */
#include "gzcoll.h"

#include "gz_device.h"

const char *gz_strerror(gz_result_t rc) {
  static const char *const text[] = {
#define GZ_RESULT_TEXT_(name, str) str,
      GZ_RESULT_LIST(GZ_RESULT_TEXT_)
#undef GZ_RESULT_TEXT_
  };
  if ((int)rc < 0 || rc >= GZ_RESULT_COUNT)
    return "unknown result";
  return text[rc];
}

const char *gz_version(void) { return GZCOLL_VERSION_STRING; }

const char *gz_backends(void) { return gz_device_built() ? "cpu,cuda" : "cpu"; }

const char *gz_eb_mode_name(gz_eb_mode_t mode) {
  static const char *const names[] = {"abs", "rel", "pwrel"};
  return (int)mode >= 0 && (int)mode < 3 ? names[mode] : NULL;
}

const char *gz_bound_name(gz_bound_policy_t policy) {
  return policy == GZ_BOUND_STRICT        ? "strict"
         : policy == GZ_BOUND_PER_MESSAGE ? "per-message"
                                          : NULL;
}

size_t gz_dtype_size(gz_dtype_t dtype) {
  switch (dtype) {
  case GZ_FLOAT32:
    return 4;
  case GZ_FLOAT64:
    return 8;
  }
  return 0;
}
