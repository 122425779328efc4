/* pool.c - fixed-size pools carved per call: the device pool and the pinned
 * staging buffer of a context are allocated once (gz_ctx_create) and never
 * grow, so no collective allocates device or pinned memory. The arithmetic
 * is the workspace's (gz_ws_add: 64-byte aligned, saturating). */
#include "coll_internal.h"
#include "device/backend.h"

gz_result_t gz_pool_reserve(gz_pool_t *pool, size_t bytes) {
  pool->used = 0;
  pool->reserved = 0;
  if (bytes == SIZE_MAX || bytes > pool->cap)
    return GZ_ERR_NOMEM;
  pool->reserved = bytes;
  return GZ_OK;
}

void *gz_pool_take(gz_pool_t *pool, size_t n, size_t elem) {
  size_t bytes = gz_ws_add(0, n, elem);
  void *p;
  if (bytes == SIZE_MAX || pool->used > pool->reserved ||
      bytes > pool->reserved - pool->used || (!pool->base && bytes))
    return NULL;
  p = pool->base + pool->used;
  pool->used += bytes;
  return bytes ? p : pool->base;
}
