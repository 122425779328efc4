/* pred_interp.c - multilevel interpolation predictor on codes (the idea of
 * SZ3's interpolation, applied losslessly to integer codes).
 *
 * Level h (a power of two, from the largest below the longest side down to
 * 1) starts with every point whose coordinates are multiples of 2h known and
 * predicts the others axis by axis: along axis a, the points whose coordinate
 * a is an odd multiple of h, the axes before a at multiples of h, the axes
 * after a at multiples of 2h, from the known points at +-h and +-3h on the
 * same line: cubic (-1 9 9 -1)/16 when all four exist, linear when +-h
 * exist, else the point at -h. The origin is predicted by 0. Every point is
 * visited once; residuals are stored in visiting order.
 */
#include "codec/predict.h"

static inline void visit(int64_t *q, size_t idx, ptrdiff_t o, int mode, uint64_t *u,
                         size_t *pos, int decode) {
  uint64_t p = gz_interp_pred((const uint64_t *)(q + idx), o, mode);
  if (decode)
    q[idx] = (int64_t)(p + gz_pred_unzigzag(u[(*pos)++]));
  else
    u[(*pos)++] = gz_pred_zigzag((uint64_t)q[idx] - p);
}

static void interp(int64_t *q, const size_t d[3], uint64_t *u, int decode) {
  size_t stride[3] = {d[1] * d[2], d[2], 1}, longest = d[0], top = 1, pos = 0;
  if (d[1] > longest)
    longest = d[1];
  if (d[2] > longest)
    longest = d[2];
  if (longest == 0)
    return;
  /* the origin */
  if (decode) {
    q[0] = (int64_t)gz_pred_unzigzag(u[pos++]);
  } else {
    u[pos++] = gz_pred_zigzag((uint64_t)q[0]);
  }
  while (top * 2 < longest)
    top *= 2;
  for (size_t h = top; h >= 1 && longest > 1; h /= 2) {
    for (int a = 0; a < 3; a++) {
      size_t start[3], step[3];
      if (d[a] <= h)
        continue;
      for (int k = 0; k < 3; k++) {
        start[k] = k == a ? h : 0;
        step[k] = k == a ? 2 * h : (k < a ? h : 2 * h);
      }
      for (size_t i = start[0]; i < d[0]; i += step[0]) {
        for (size_t j = start[1]; j < d[1]; j += step[1]) {
          size_t base = i * stride[0] + j * stride[1];
          ptrdiff_t o = (ptrdiff_t)(h * stride[a]);
          if (a == 2) { /* along the row: the mode changes near its ends */
            for (size_t k = start[2]; k < d[2]; k += step[2])
              visit(q, base + k, o, gz_interp_mode(k, h, d[2]), u, &pos, decode);
          } else { /* across rows: one mode for the whole row */
            int mode = gz_interp_mode(a == 0 ? i : j, h, d[a]);
            if (mode == 2)
              for (size_t k = 0; k < d[2]; k += step[2])
                visit(q, base + k, o, 2, u, &pos, decode);
            else
              for (size_t k = 0; k < d[2]; k += step[2])
                visit(q, base + k, o, mode, u, &pos, decode);
          }
        }
      }
    }
    if (h == 1)
      break;
  }
}

void gz_interp_encode(int64_t *q, const size_t d[3], uint64_t *u) { interp(q, d, u, 0); }

void gz_interp_decode(const uint64_t *u, const size_t d[3], int64_t *q) {
  interp(q, d, (uint64_t *)(uintptr_t)u, 1);
}
