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

/* Prediction of line[i * s] from its known neighbours at stride h. */
static inline uint64_t pred_at(const int64_t *line, size_t i, size_t h, size_t n,
                               size_t s) {
  uint64_t a = (uint64_t)line[(i - h) * s];
  if (i + h < n) {
    uint64_t b = (uint64_t)line[(i + h) * s];
    if (i >= 3 * h && i + 3 * h < n) {
      uint64_t a3 = (uint64_t)line[(i - 3 * h) * s], b3 = (uint64_t)line[(i + 3 * h) * s];
      uint64_t v = 9 * (a + b) - a3 - b3 + 8;
      return (uint64_t)((int64_t)v >> 4);
    }
    return (uint64_t)((int64_t)(a + b + 1) >> 1);
  }
  return a;
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
          for (size_t k = start[2]; k < d[2]; k += step[2]) {
            size_t idx = i * stride[0] + j * stride[1] + k, c = a == 0   ? i
                                                                : a == 1 ? j
                                                                         : k;
            const int64_t *line = q + idx - c * stride[a];
            uint64_t p = pred_at(line, c, h, d[a], stride[a]);
            if (decode)
              q[idx] = (int64_t)(p + gz_pred_unzigzag(u[pos++]));
            else
              u[pos++] = gz_pred_zigzag((uint64_t)q[idx] - p);
          }
        }
      }
    }
    if (h == 1)
      break;
  }
}

void gz_interp_encode(int64_t *q, const size_t d[3], uint64_t *u) {
  interp(q, d, u, 0);
}

void gz_interp_decode(const uint64_t *u, const size_t d[3], int64_t *q) {
  interp(q, d, (uint64_t *)(uintptr_t)u, 1);
}
