/*
 * device_ctx.c - the context's side of the device backend: the pool,
 * staging and streams allocated once at gz_ctx_create, the per-call
 * decision "device path or not", execs, transfers of device buffers
 * (CUDA-aware MPI or pinned staging), and device selection by node-local
 * rank. See backend.h for the operations and gzcoll.h ("GPU buffers").
 */
#include "coll_internal.h"
#include "device/backend.h"
#include "gz_env.h"

#include "gz_device.h"

#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#endif

/* Host-readable slot of an exec's small buffer where encode sizes land. */
#define SM_HOST_SIZE 48

/* Whether MPI moves device memory, asked at run time where the MPI can say
 * (Open MPI's MPIX_Query_cuda_support: its compile-time macro only tells how
 * the headers were built). -1 when this MPI cannot tell. */
static int mpi_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return -1;
#endif
}

/* GZCOLL_CUDA_AWARE unset/"auto": what MPI says (no when it cannot tell);
 * "0": staged; "1": device pointers to MPI, refused (GZ_ERR_UNSUPPORTED)
 * when the MPI says it is not CUDA-aware; anything else GZ_ERR_ARG. */
static gz_result_t detect_cuda_aware(int *aware) {
  static const char *const settings[] = {"auto", "0", "1", NULL};
  int mpi = mpi_cuda_aware(), setting = 0;
  *aware = mpi == 1;
  if (gz_env_enum("GZCOLL_CUDA_AWARE", settings, &setting) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  if (setting == 0) /* unset or "auto" */
    return GZ_OK;
  *aware = setting == 2;
  return *aware && mpi == 0 ? GZ_ERR_UNSUPPORTED : GZ_OK;
}

static size_t small_bytes(gz_ctx_t ctx) {
  return (size_t)GZ_DEV_SMALL * GZ_DEV_STREAMS + 8 * (size_t)(ctx->size + 1);
}

gz_result_t gz_dev_ctx_setup(gz_ctx_t ctx) {
  static const char *const backends[] = {"auto", "ops", NULL};
  size_t bytes = ctx->cfg.device_pool_bytes, small = small_bytes(ctx);
  size_t stage = bytes > GZ_DEV_PIECE * 8 ? bytes : GZ_DEV_PIECE * 8;
  int backend = 0;
  gz_result_t rc;
  if (gz_env_enum("GZCOLL_BACKEND", backends, &backend) == GZ_ENV_BAD)
    return GZ_ERR_ARG;
  ctx->dev_ops = backend == 1;
  ctx->dev_enabled = bytes > 0;
  if (!ctx->dev_enabled)
    return ctx->dev_ops ? GZ_ERR_ARG : GZ_OK;
  ctx->dev_count = gz_device_count(NULL, 0);
  if ((rc = detect_cuda_aware(&ctx->cuda_aware)) != GZ_OK)
    return rc;
  if (ctx->dev_count <= 0) { /* CPU execs only: host memory for their sizes */
    ctx->h_small = calloc(1, small);
    return ctx->h_small ? GZ_OK : GZ_ERR_NOMEM;
  }
  if (gz_dev_malloc((void **)&ctx->dpool.base, bytes) != GZ_DEV_OK ||
      gz_dev_host_alloc((void **)&ctx->hstage.base, stage) != GZ_DEV_OK ||
      gz_dev_malloc((void **)&ctx->d_small, small) != GZ_DEV_OK ||
      gz_dev_host_alloc((void **)&ctx->h_small, small) != GZ_DEV_OK)
    return GZ_ERR_NOMEM;
  ctx->dpool.cap = bytes;
  ctx->hstage.cap = stage;
  for (int s = 0; s < GZ_DEV_STREAMS; s++)
    if (gz_dev_stream_create(&ctx->streams[s]) != GZ_DEV_OK)
      return GZ_ERR_NOMEM;
  if (gz_dev_memset_async(ctx->d_small, 0, small, ctx->streams[0]) != GZ_DEV_OK ||
      gz_dev_stream_sync(ctx->streams[0]) != GZ_DEV_OK)
    return GZ_ERR_UNSUPPORTED;
  memset(ctx->h_small, 0, small);
  ctx->dev_ready = 1;
  return GZ_OK;
}

void gz_dev_ctx_teardown(gz_ctx_t ctx) {
  for (int s = 0; s < GZ_DEV_STREAMS; s++)
    gz_dev_stream_destroy(ctx->streams[s]);
  if (ctx->dev_count > 0) {
    gz_dev_free(ctx->dpool.base);
    gz_dev_free(ctx->d_small);
    gz_dev_host_free(ctx->hstage.base);
    gz_dev_host_free(ctx->h_small);
  } else {
    free(ctx->h_small);
  }
  memset(ctx->streams, 0, sizeof ctx->streams);
  ctx->dpool.base = ctx->hstage.base = ctx->d_small = ctx->h_small = NULL;
  ctx->dev_ready = 0;
}

gz_result_t gz_dev_reserve(gz_ctx_t ctx, int on_device, size_t bytes) {
  return on_device ? gz_pool_reserve(&ctx->dpool, bytes) : gz_ws_reserve(ctx, bytes);
}

void *gz_dev_take(gz_ctx_t ctx, int on_device, size_t n, size_t elem) {
  return on_device ? gz_pool_take(&ctx->dpool, n, elem) : gz_ws_take(ctx, n, elem);
}

static int is_dev(gz_ctx_t ctx, const void *p) {
  return p && p != GZ_IN_PLACE && ctx->dev_count > 0 && gz_dev_is_device_ptr(p);
}
static int is_host(gz_ctx_t ctx, const void *p) {
  return p && p != GZ_IN_PLACE && !is_dev(ctx, p);
}

gz_result_t gz_dev_path(gz_ctx_t ctx, const void *a, const void *b, int *any,
                        int *local_dev) {
  int v;
  *any = 0;
  *local_dev = 0;
  if (!ctx->dev_enabled)
    return GZ_OK;
  if (is_dev(ctx, a) || is_dev(ctx, b))
    *local_dev = is_host(ctx, a) || is_host(ctx, b) ? -1 : 1; /* -1: mixed */
  v = *local_dev ? 2 : ctx->dev_ops;
  if (MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, ctx->comm) != MPI_SUCCESS)
    return GZ_ERR_MPI;
  *any = v > 0;
  return GZ_OK;
}

void gz_exec_make(gz_ctx_t ctx, int on_device, int s, gz_exec_t *ex) {
  memset(ex, 0, sizeof *ex);
  ex->err = GZ_OK;
  s %= GZ_DEV_STREAMS;
  ex->h_small = ctx->h_small ? ctx->h_small + (size_t)s * GZ_DEV_SMALL : NULL;
  ex->size_out = ex->h_small ? (uint64_t *)(ex->h_small + SM_HOST_SIZE) : NULL;
  if (on_device && ctx->dev_ready) {
    ex->be = &gz_backend_cuda;
    ex->stream = ctx->streams[s];
    ex->d_small = ctx->d_small + (size_t)s * GZ_DEV_SMALL;
    ex->d_flags = (unsigned *)ex->d_small;
  } else {
    ex->be = &gz_backend_cpu;
  }
}

uint64_t *gz_dev_size_slots(gz_ctx_t ctx) {
  return ctx->h_small ? (uint64_t *)(ctx->h_small + (size_t)GZ_DEV_SMALL * GZ_DEV_STREAMS)
                      : NULL;
}

gz_result_t gz_dev_xfer(gz_ctx_t ctx, gz_exec_t *ex, int tag, const void *sbuf,
                        size_t ssize, int dest, void *rbuf, size_t rcap, int src,
                        size_t *rsize, unsigned char *stage, gz_run_t *run) {
  gz_result_t rc = GZ_OK;
  size_t got = 0;
  if (!ex->be->on_device || ctx->cuda_aware)
    return gz_xfer(ctx, tag, sbuf, ssize, dest, rbuf, rcap, src, rsize, run);
  /* staged: compressed bytes only, through pinned memory */
  if (dest != MPI_PROC_NULL && ssize &&
      (ex->be->memcpy(ex, stage, sbuf, ssize) != GZ_OK || ex->be->sync(ex) != GZ_OK))
    ssize = 0, rc = GZ_ERR_UNSUPPORTED; /* still take part in the exchange */
  if (gz_xfer(ctx, tag, stage, ssize, dest, stage + ssize, rcap, src, &got, run) != GZ_OK)
    return GZ_ERR_MPI;
  if (src != MPI_PROC_NULL && got &&
      (ex->be->memcpy(ex, rbuf, stage + ssize, got) != GZ_OK ||
       ex->be->sync(ex) != GZ_OK) &&
      rc == GZ_OK)
    rc = GZ_ERR_UNSUPPORTED;
  if (rsize)
    *rsize = got;
  return rc;
}

gz_result_t gz_device_select(MPI_Comm comm, int *device) {
  MPI_Comm local = MPI_COMM_NULL;
  int rank = 0, lrank = 0, n = gz_device_count(NULL, 0), d;
  if (device)
    *device = -1;
  if (comm == MPI_COMM_NULL)
    return GZ_ERR_ARG;
  MPI_Comm_rank(comm, &rank);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) !=
      MPI_SUCCESS)
    return GZ_ERR_MPI;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_free(&local);
  if (n <= 0)
    return GZ_ERR_UNSUPPORTED;
  d = lrank % n;
  if (gz_dev_set(d) != GZ_DEV_OK)
    return GZ_ERR_UNSUPPORTED;
  if (device)
    *device = d;
  return GZ_OK;
}

int gz_is_device_pointer(const void *p) { return gz_dev_is_device_ptr(p); }
