/* pred_value.c - prediction from reconstructed values with quantized
 * prediction errors (SZ's scheme), in fixed point so that encoder and
 * decoder compute bit-identical predictions.
 *
 * Codes on the fixed grid of unit u = 2 eb / 33: X = rint(x / u). A point's
 * prediction P (integer, from already reconstructed neighbours R, by the
 * Lorenzo rule or the multilevel interpolation of pred_interp.c) gives the
 * bin k = floor((X - P + 16) / 32) and the reconstruction R = P + 32 k, so
 * |X - R| <= 16 and |x - R u| <= u / 2 + 16 u = eb: the prediction error is
 * quantized in bins of 32 u = 2 eb x 32/33, centred on the prediction.
 * Predicting codes instead (pred_lorenzo.c, pred_interp.c) adds the rounding
 * of every neighbour to the grid to the residual; centring the bins on the
 * prediction leaves a smooth field's residuals mostly 0.
 *
 * Each value is checked in its own precision after reconstruction,
 * (T)(R u) within eb of x, exactly as the quantizer checks; a value that
 * fails (NaN, Inf, -0.0, subnormals, +0.0 not reconstructed as R = 0, out
 * of the code range, or rounding beyond eb) is an escape: k = 0 and R = P, its bits
 * stored verbatim by chunk2.c. All integer arithmetic wraps in uint64, so hostile streams
 * decode without undefined behaviour.
 */
#include "codec/predict.h"

#include "gz_block.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define VQ_BIN 32 /* bin width in grid units (a power of two) */
#define VQ_HALF 16

typedef struct vctx {
  const void *x; /* encode: the values */
  void *out;     /* decode: the values (escapes overwritten later) */
  uint64_t *R;   /* reconstructed grid codes, C order */
  uint64_t *u;   /* zigzag bins in visiting order */
  uint8_t *esc;  /* encode: escape flags, C order */
  /* 32-bit (chunks hold at most 2^24 values): a size_t would share
   * uint64_t's type, so every store to R or u would reload it */
  uint32_t pos, nesc;
  double eb, unit, inv_unit, limit;
} vctx_t;

void gz_vq_grid(double eb, double *unit, double *inv_unit) {
  *unit = 2.0 * eb / (2 * VQ_HALF + 1);
  *inv_unit = 1.0 / *unit;
}

/* The traversals below are instantiated for each (decode, f64) pair, so
 * these flags are constants inside them. */
#define GZ_VINLINE static inline __attribute__((always_inline))

GZ_VINLINE void vvisit(vctx_t *restrict c, size_t idx, uint64_t p, const int decode,
                       const int f64) {
  if (decode) {
    uint64_t r = p + (gz_pred_unzigzag(c->u[c->pos++]) << 5);
    double rv = (double)(int64_t)r * c->unit;
    c->R[idx] = r;
    if (f64)
      ((double *)c->out)[idx] = rv;
    else
      ((float *)c->out)[idx] = (float)rv;
  } else {
    double v, sh, rv, tiny;
    uint64_t xq, k, r;
    int ok, in, nonzero;
    if (f64) {
      v = ((const double *)c->x)[idx];
      tiny = DBL_MIN;
    } else {
      v = (double)((const float *)c->x)[idx];
      tiny = (double)FLT_MIN;
    }
    sh = v * c->inv_unit + GZ_RINT_SHIFT;
    in = fabs(sh - GZ_RINT_SHIFT) <= c->limit; /* false for NaN and Inf */
    xq = in ? (uint64_t)gz_rint_code(sh) : p;
    k = (uint64_t)((int64_t)(xq - p + VQ_HALF) >> 5);
    r = p + (k << 5);
    rv = (double)(int64_t)r * c->unit;
    if (!f64)
      rv = (double)(float)rv;
    /* zeros and subnormals come back bit-exact: +0.0 only from R = 0 */
    nonzero = v != 0 || signbit(v);
    ok = in & (fabs(v - rv) <= c->eb) & !((fabs(v) < tiny) & (nonzero | (r != 0)));
    if (!ok) {
      k = 0;
      r = p;
      c->esc[idx] = 1;
      c->nesc++;
    }
    c->R[idx] = r;
    c->u[c->pos++] = gz_pred_zigzag(k);
  }
}

GZ_VINLINE void vlorenzo(vctx_t *restrict c, const size_t d[3], const int decode,
                         const int f64) {
  size_t plane = d[1] * d[2];
  for (size_t i = 0; i < d[0]; i++) {
    for (size_t j = 0; j < d[1]; j++) {
      size_t off = i * plane + j * d[2];
      const uint64_t *cur = c->R + off;
      const uint64_t *up = j ? cur - d[2] : NULL, *back = i ? cur - plane : NULL;
      const uint64_t *bu = i && j ? cur - plane - d[2] : NULL;
      for (size_t k = 0; k < d[2]; k++) {
        uint64_t p = 0;
        if (up)
          p += up[k] - (k ? up[k - 1] : 0);
        if (back)
          p += back[k] - (k ? back[k - 1] : 0);
        if (bu)
          p -= bu[k] - (k ? bu[k - 1] : 0);
        if (k)
          p += cur[k - 1];
        vvisit(c, off + k, p, decode, f64);
      }
    }
  }
}

GZ_VINLINE void vinterp(vctx_t *restrict c, const size_t d[3], const int decode,
                        const int f64) {
  size_t stride[3] = {d[1] * d[2], d[2], 1}, longest = d[0], top = 1;
  if (d[1] > longest)
    longest = d[1];
  if (d[2] > longest)
    longest = d[2];
  if (longest == 0)
    return;
  vvisit(c, 0, 0, decode, f64); /* the origin, predicted by 0 */
  while (top * 2 < longest)
    top *= 2;
  for (size_t h = top; h >= 1 && longest > 1; h /= 2) {
    for (int a = 0; a < 3; a++) {
      size_t start[3], step[3];
      ptrdiff_t o;
      if (d[a] <= h)
        continue;
      o = (ptrdiff_t)(h * stride[a]);
      for (int k = 0; k < 3; k++) {
        start[k] = k == a ? h : 0;
        step[k] = k == a ? 2 * h : (k < a ? h : 2 * h);
      }
      for (size_t i = start[0]; i < d[0]; i += step[0]) {
        for (size_t j = start[1]; j < d[1]; j += step[1]) {
          size_t base = i * stride[0] + j * stride[1];
          if (a == 2) {
            size_t k = start[2];
            /* interior of the row: cubic */
            for (; k < d[2] && k < 3 * h; k += step[2])
              vvisit(c, base + k,
                     gz_interp_pred(c->R + base + k, o, gz_interp_mode(k, h, d[2])),
                     decode, f64);
            for (; k + 3 * h < d[2]; k += step[2])
              vvisit(c, base + k, gz_interp_pred(c->R + base + k, o, 2), decode, f64);
            for (; k < d[2]; k += step[2])
              vvisit(c, base + k,
                     gz_interp_pred(c->R + base + k, o, gz_interp_mode(k, h, d[2])),
                     decode, f64);
          } else {
            int mode = gz_interp_mode(a == 0 ? i : j, h, d[a]);
            if (mode == 2)
              for (size_t k = 0; k < d[2]; k += step[2])
                vvisit(c, base + k, gz_interp_pred(c->R + base + k, o, 2), decode, f64);
            else
              for (size_t k = 0; k < d[2]; k += step[2])
                vvisit(c, base + k, gz_interp_pred(c->R + base + k, o, mode), decode,
                       f64);
          }
        }
      }
    }
    if (h == 1)
      break;
  }
}

#define GZ_VINSTANCE(name, decode, f64)                                                  \
  static void name(vctx_t *restrict c, int kind, const size_t d[3]) {                    \
    if (kind == GZ_VPRED_INTERP)                                                         \
      vinterp(c, d, decode, f64);                                                        \
    else                                                                                 \
      vlorenzo(c, d, decode, f64);                                                       \
  }
GZ_VINSTANCE(encode_f32, 0, 0)
GZ_VINSTANCE(encode_f64, 0, 1)
GZ_VINSTANCE(decode_f32, 1, 0)
GZ_VINSTANCE(decode_f64, 1, 1)

size_t gz_vpred_encode(int kind, int f64, const void *x, const size_t d[3], double eb,
                       uint64_t *R, uint64_t *u, uint8_t *esc) {
  vctx_t c;
  memset(&c, 0, sizeof c);
  c.x = x;
  c.R = R;
  c.u = u;
  c.esc = esc;
  c.eb = eb;
  c.limit = GZ_CODE_LIMIT;
  gz_vq_grid(eb, &c.unit, &c.inv_unit);
  memset(esc, 0, d[0] * d[1] * d[2]);
  (f64 ? encode_f64 : encode_f32)(&c, kind, d);
  return c.nesc;
}

void gz_vpred_decode(int kind, int f64, const uint64_t *u, const size_t d[3], double eb,
                     uint64_t *R, void *out) {
  vctx_t c;
  memset(&c, 0, sizeof c);
  c.out = out;
  c.R = R;
  c.u = (uint64_t *)(uintptr_t)u;
  c.eb = eb;
  gz_vq_grid(eb, &c.unit, &c.inv_unit);
  (f64 ? decode_f64 : decode_f32)(&c, kind, d);
}
