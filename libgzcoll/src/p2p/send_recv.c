/*
 * send_recv.c - compressed point-to-point: gz_send / gz_recv.
 *
 * Algorithm
 *   The sender quantizes once (eb = e; REL: e times the range of its own
 *   buffer), encodes the codes, and sends one message: a 32-byte header and
 *   the payload. The receiver learns the compressed size from the message
 *   (MPI_Mprobe + MPI_Get_count), checks the header against the count and
 *   type it expects, decodes once and dequantizes. Messages travel on the
 *   context's private p2p communicator, so user tags never meet collective
 *   traffic. A payload larger than the largest single message goes as a
 *   header-only message flagged "parts follow", then the payload in parts
 *   from the same source with the same tag (MPI keeps their order).
 *
 *   Header, little-endian:
 *     0  4  magic "GZP2" (GZP1: codes without the segment index)
 *     4  1  kind: 0 raw values, 1 encoded codes (the collectives' indexed
 *           encoding, codes_indexed.c), 2 sender failed
 *     5  1  dtype
 *     6  1  flags: bit 0 = payload follows in parts
 *     7  1  reserved
 *     8  8  count (values)
 *    16  8  eb (double; 0 for raw)
 *    24  8  payload bytes
 *
 * Uncompressed (kind 0, exact) when forced to mpi, when auto finds that
 * compression does not pay, or when a value cannot be quantized (NaN, Inf,
 * out of range). A sender that fails after its arguments were checked
 * (allocation) still sends a header of kind 2 so the receiver returns
 * GZ_ERR_REMOTE instead of waiting. A receiver expecting another count or
 * type consumes the message and returns GZ_ERR_ARG.
 *
 * Cost: alpha + D / CR beta, plus encode + quantize at the sender and decode
 * + dequantize at the receiver. Point to point, so no agreement: the
 * report algo is "mpi" (the transport), compressed says whether the
 * payload was compressed.
 */
#include "coll_internal.h"

#include "gz_block_walk.h"

#include <math.h>
#include <string.h>

#define GZ_P2P_HEADER 32
#define GZ_P2P_RAW 0
#define GZ_P2P_CODES 1
#define GZ_P2P_FAILED 2
#define GZ_P2P_PARTS 1

typedef struct p2p_header {
  int kind, dtype, flags;
  uint64_t count, payload;
  double eb;
} p2p_header_t;

static void header_write(unsigned char *p, const p2p_header_t *h) {
  uint64_t bits;
  memcpy(p, "GZP2", 4);
  p[4] = (unsigned char)h->kind;
  p[5] = (unsigned char)h->dtype;
  p[6] = (unsigned char)h->flags;
  p[7] = 0;
  gz_put_u64le(p + 8, h->count);
  memcpy(&bits, &h->eb, 8);
  gz_put_u64le(p + 16, bits);
  gz_put_u64le(p + 24, h->payload);
}

static gz_result_t header_read(const unsigned char *p, size_t n, p2p_header_t *h) {
  uint64_t bits;
  if (n < GZ_P2P_HEADER || memcmp(p, "GZP2", 4) != 0 || p[4] > GZ_P2P_FAILED)
    return GZ_ERR_CORRUPT;
  h->kind = p[4];
  h->dtype = p[5];
  h->flags = p[6];
  h->count = gz_get_u64le(p + 8);
  bits = gz_get_u64le(p + 16);
  memcpy(&h->eb, &bits, 8);
  h->payload = gz_get_u64le(p + 24);
  return GZ_OK;
}

/* Send len bytes in parts of at most ctx->part_bytes. */
static gz_result_t send_parts(gz_ctx_t ctx, const unsigned char *p, size_t len, int dest,
                              int tag) {
  size_t part = ctx->part_bytes;
  for (size_t off = 0; off < len; off += part) {
    size_t n = len - off < part ? len - off : part;
    if (MPI_Send(p + off, (int)n, MPI_BYTE, dest, tag, ctx->p2p) != MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  return GZ_OK;
}

static gz_result_t recv_parts(gz_ctx_t ctx, unsigned char *p, size_t len, int src,
                              int tag) {
  size_t part = ctx->part_bytes;
  for (size_t off = 0; off < len; off += part) {
    size_t n = len - off < part ? len - off : part;
    if (MPI_Recv(p + off, (int)n, MPI_BYTE, src, tag, ctx->p2p, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return GZ_ERR_MPI;
  }
  return GZ_OK;
}

gz_result_t gz_send(gz_ctx_t ctx, const void *buf, size_t count, gz_dtype_t dtype,
                    int dest, int tag, gz_report_t *report) {
  gz_run_t run;
  gz_choice_t ch;
  p2p_header_t h = {GZ_P2P_RAW, (int)dtype, 0, count, 0, 0.0};
  unsigned char hdr[GZ_P2P_HEADER], *msg = NULL;
  int64_t *codes = NULL;
  size_t esz = gz_dtype_size(dtype), raw, cap, size = 0;
  double absmax = 0;
  const char *reason;
  gz_result_t rc = GZ_OK;

  if (!ctx)
    return GZ_ERR_ARG;
  if (dest == MPI_PROC_NULL)
    return GZ_OK;
  if (dest < 0 || dest >= ctx->size || tag < 0 || tag > ctx->tag_ub)
    return GZ_ERR_ARG; /* nobody to tell */
  gz_run_begin(&run, dtype);
  if (!esz || (count && !buf) || count > SIZE_MAX / 16) {
    rc = GZ_ERR_ARG;
    goto fn_fail;
  }
  raw = count * esz;
  rc = gz_select(ctx, GZ_COLL_P2P, count, dtype, &ch);
  if (rc != GZ_OK)
    goto fn_fail;
  reason = gz_row_is_mpi(ch.algo) ? ch.reason : "compressed point-to-point";
  if (!gz_row_is_mpi(ch.algo) && ctx->cfg.eb_mode == GZ_EB_PWREL)
    reason = GZ_WHY_PWREL;
  else if (!gz_row_is_mpi(ch.algo)) {
    double lo, hi;
    h.eb = ctx->cfg.error_bound;
    gz_local_range(dtype, buf, count, &lo, &hi, &absmax);
    if (ctx->cfg.eb_mode == GZ_EB_REL)
      h.eb *= hi >= lo ? hi - lo : 0.0;
    if (h.eb > 0 && isfinite(h.eb) && h.eb < 1e300)
      h.kind = GZ_P2P_CODES;
    else
      reason = GZ_WHY_DEGENERATE;
  }

  /* workspace: header + payload (+ codes when compressing) */
  cap = h.kind == GZ_P2P_CODES ? gz_codes_indexed_bound(count) : raw;
  rc = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, GZ_P2P_HEADER + cap, 1),
                                    h.kind == GZ_P2P_CODES ? count : 0, sizeof(int64_t)));
  if (rc != GZ_OK)
    goto fn_fail;
  msg = gz_ws_take(ctx, GZ_P2P_HEADER + cap, 1);
  codes = gz_ws_take(ctx, h.kind == GZ_P2P_CODES ? count : 0, sizeof(int64_t));
  if (h.kind == GZ_P2P_CODES) {
    rc = gz_run_quantize(&run, dtype, buf, count, h.eb, GZ_COLL_CODE_LIMIT, codes);
    if (rc == GZ_OK)
      rc = gz_run_encode(&run, codes, count, msg + GZ_P2P_HEADER, cap, &size);
    if (rc == GZ_ERR_RANGE) { /* NaN, Inf or out of range: send the values */
      h.kind = GZ_P2P_RAW;
      h.eb = 0;
      rc = GZ_OK;
      reason = GZ_WHY_ESCAPE;
    } else if (rc != GZ_OK) {
      goto fn_fail;
    }
  }
  if (h.kind == GZ_P2P_RAW) {
    size = raw;
    if (GZ_P2P_HEADER + size <= ctx->part_bytes)
      memcpy(msg + GZ_P2P_HEADER, buf, size);
  }
  h.payload = size;
  run.bytes_raw = raw;
  run.bytes_sent = GZ_P2P_HEADER + size;
  if (GZ_P2P_HEADER + size <= ctx->part_bytes) {
    header_write(msg, &h);
    rc = send_parts(ctx, msg, GZ_P2P_HEADER + size, dest, tag);
  } else {
    h.flags = GZ_P2P_PARTS;
    header_write(hdr, &h);
    rc = send_parts(ctx, hdr, GZ_P2P_HEADER, dest, tag);
    if (rc == GZ_OK)
      rc = send_parts(ctx, h.kind == GZ_P2P_RAW ? buf : msg + GZ_P2P_HEADER, size, dest,
                      tag);
  }
  if (rc != GZ_OK)
    goto fn_exit; /* the transport failed: nothing more can be told */
  gz_run_report(ctx, &run, report, gz_algorithm(GZ_COLL_P2P, GZ_ALGO_MPI_NAME),
                h.kind == GZ_P2P_CODES, h.eb,
                h.kind == GZ_P2P_CODES ? h.eb + gz_round_slop(dtype, absmax + h.eb) : 0.0,
                reason);
fn_exit:
  return rc;

fn_fail:
  /* tell the receiver, so it does not wait for a message that never comes */
  h.kind = GZ_P2P_FAILED;
  h.flags = 0;
  h.count = 0;
  h.payload = 0;
  header_write(hdr, &h);
  if (MPI_Send(hdr, GZ_P2P_HEADER, MPI_BYTE, dest, tag, ctx->p2p) != MPI_SUCCESS)
    rc = GZ_ERR_MPI;
  goto fn_exit;
}

gz_result_t gz_recv(gz_ctx_t ctx, void *buf, size_t count, gz_dtype_t dtype, int source,
                    int tag, gz_report_t *report) {
  gz_run_t run;
  p2p_header_t h;
  MPI_Message msg;
  MPI_Status st;
  unsigned char hdr[GZ_P2P_HEADER], *data = NULL;
  const unsigned char *payload = NULL;
  int64_t *codes = NULL;
  int n = 0;
  size_t esz = gz_dtype_size(dtype);
  gz_result_t rc = GZ_OK, bad = GZ_OK;
  double rb = 0;

  if (!ctx)
    return GZ_ERR_ARG;
  if (source == MPI_PROC_NULL)
    return GZ_OK;
  if ((source != MPI_ANY_SOURCE && (source < 0 || source >= ctx->size)) ||
      (tag != MPI_ANY_TAG && (tag < 0 || tag > ctx->tag_ub)))
    return GZ_ERR_ARG;
  gz_run_begin(&run, dtype);
  if (!esz || (count && !buf) || count > SIZE_MAX / 16)
    bad = GZ_ERR_ARG; /* still consume the message */

  if (MPI_Mprobe(source, tag, ctx->p2p, &msg, &st) != MPI_SUCCESS) {
    rc = GZ_ERR_MPI;
    goto fn_exit;
  }
  MPI_Get_count(&st, MPI_BYTE, &n);
  if (n == GZ_P2P_HEADER) { /* header only: no payload, or parts follow */
    if (MPI_Mrecv(hdr, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      rc = GZ_ERR_MPI;
      goto fn_exit;
    }
    rc = header_read(hdr, (size_t)n, &h);
    if (rc == GZ_OK && !(h.flags & GZ_P2P_PARTS) && h.payload != 0)
      rc = GZ_ERR_CORRUPT;
    if (rc == GZ_OK)
      rc = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, (size_t)h.payload, 1),
                                        bad == GZ_OK ? count : 0, sizeof(int64_t)));
    if (rc != GZ_OK)
      goto fn_exit; /* parts that may follow stay queued */
    data = gz_ws_take(ctx, (size_t)h.payload, 1);
    if (h.flags & GZ_P2P_PARTS)
      rc = recv_parts(ctx, data, (size_t)h.payload, st.MPI_SOURCE, st.MPI_TAG);
    payload = data;
  } else {
    rc = gz_ws_reserve(ctx, gz_ws_add(gz_ws_add(0, (size_t)n, 1),
                                      bad == GZ_OK ? count : 0, sizeof(int64_t)));
    if (rc != GZ_OK) { /* receive nothing: the message is truncated away */
      MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
      goto fn_exit;
    }
    data = gz_ws_take(ctx, (size_t)n, 1);
    if (MPI_Mrecv(data, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      rc = GZ_ERR_MPI;
    if (rc == GZ_OK)
      rc = header_read(data, (size_t)n, &h);
    if (rc == GZ_OK && h.payload != (uint64_t)n - GZ_P2P_HEADER)
      rc = GZ_ERR_CORRUPT;
    payload = data + GZ_P2P_HEADER;
  }
  if (rc != GZ_OK)
    goto fn_exit;

  if (h.kind == GZ_P2P_FAILED)
    rc = GZ_ERR_REMOTE;
  else if (bad != GZ_OK || h.count != count || h.dtype != (int)dtype)
    rc = GZ_ERR_ARG;
  else if (h.kind == GZ_P2P_RAW && h.payload != count * esz)
    rc = GZ_ERR_CORRUPT;
  else if (h.kind == GZ_P2P_CODES && (!(h.eb > 0) || !isfinite(h.eb)))
    rc = GZ_ERR_CORRUPT;
  if (rc != GZ_OK)
    goto fn_exit;
  if (h.kind == GZ_P2P_RAW) {
    gz_copy(dtype, buf, payload, count);
  } else {
    codes = gz_ws_take(ctx, count, sizeof(int64_t));
    rc = gz_run_decode(&run, payload, (size_t)h.payload, codes, count);
    if (rc == GZ_OK)
      rc = gz_run_dequantize(&run, dtype, codes, count, h.eb, buf);
    if (rc != GZ_OK)
      goto fn_exit;
    rb = h.eb + gz_round_slop(dtype, 2.0 * h.eb * (double)gz_codes_absmax(codes, count));
  }
  gz_run_report(ctx, &run, report, gz_algorithm(GZ_COLL_P2P, GZ_ALGO_MPI_NAME),
                h.kind == GZ_P2P_CODES, h.kind == GZ_P2P_CODES ? h.eb : 0.0, rb,
                h.kind == GZ_P2P_CODES ? "compressed point-to-point"
                                       : "uncompressed point-to-point");
fn_exit:
  return rc;
}

/* The cost model's two rows for point to point (any compressed name forces
 * the compressed variant): alpha + D beta uncompressed, alpha + C beta +
 * 4 n t (quantize, encode, decode, dequantize) compressed. */
static double cost_mpi(const gz_cost_t *c) { return c->alpha + c->D * c->beta; }

static double cost_compressed(const gz_cost_t *c) {
  return c->alpha + c->C * c->beta + 4 * c->n * c->t;
}

const gz_algorithm_t gz_algo_p2p_mpi = {
    .name = "mpi", .coll = GZ_COLL_P2P, .cost = cost_mpi};
const gz_algorithm_t gz_algo_p2p_compressed = {
    .name = "compressed", .coll = GZ_COLL_P2P, .cost = cost_compressed};
