/* pool.c - the one workspace allocator of the library: a bump allocator
 * reserved per call and carved by pieces (coll_internal.h). Three pools use
 * it: the host workspace (ctx->ws, grows at a reservation and is kept, so
 * calls of the same shape allocate nothing), and with a device the device
 * pool and the pinned staging (allocated once at gz_ctx_create, never
 * grown, so no collective allocates device or pinned memory). */
#include "coll_internal.h"

#include <stdlib.h>

#define GZ_POOL_ALIGN 64u

size_t gz_ws_add(size_t total, size_t n, size_t elem) {
  size_t bytes;
  if (total == SIZE_MAX || (elem && n > SIZE_MAX / elem))
    return SIZE_MAX;
  bytes = n * elem;
  if (bytes > SIZE_MAX - 2 * GZ_POOL_ALIGN)
    return SIZE_MAX;
  bytes = (bytes + GZ_POOL_ALIGN - 1) & ~(size_t)(GZ_POOL_ALIGN - 1);
  if (total > SIZE_MAX - bytes)
    return SIZE_MAX;
  return total + bytes;
}

gz_result_t gz_pool_reserve(gz_pool_t *pool, size_t bytes) {
  pool->used = 0;
  pool->reserved = 0;
  if (bytes == SIZE_MAX || (bytes > pool->cap && !pool->grows))
    return GZ_ERR_NOMEM;
  if (bytes > pool->cap) { /* a growing pool: a larger buffer */
    gz_pool_free(pool);
    if (!(pool->base = aligned_alloc(GZ_POOL_ALIGN, gz_ws_add(0, bytes, 1))))
      return GZ_ERR_NOMEM;
    pool->cap = bytes;
  }
  pool->reserved = bytes;
  return GZ_OK;
}

void *gz_pool_take(gz_pool_t *pool, size_t n, size_t elem) {
  static _Alignas(GZ_POOL_ALIGN) unsigned char empty[GZ_POOL_ALIGN];
  size_t bytes = gz_ws_add(0, n, elem);
  void *p;
  if (bytes == 0) /* nothing: a valid pointer all the same */
    return pool->base ? (void *)pool->base : (void *)empty;
  if (bytes == SIZE_MAX || pool->used > pool->reserved ||
      bytes > pool->reserved - pool->used || !pool->base)
    return NULL;
  p = pool->base + pool->used;
  pool->used += bytes;
  return p;
}

void gz_pool_free(gz_pool_t *pool) {
  if (pool->grows)
    free(pool->base);
  pool->base = NULL;
  pool->cap = pool->used = pool->reserved = 0;
}
