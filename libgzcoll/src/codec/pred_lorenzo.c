/* pred_lorenzo.c - Lorenzo predictor on codes: x(i,j,k) is predicted by
 * x(i,j,k-1) + x(i,j-1,k) + x(i-1,j,k) - x(i,j-1,k-1) - x(i-1,j,k-1)
 * - x(i-1,j-1,k) + x(i-1,j-1,k-1), neighbours outside the box being 0. With
 * leading sizes of 1 it reduces to the 2-D rule and to the previous value.
 * Residuals are in C order. */
#include "codec/predict.h"

/* Rows of the box as uint64 (wrapping arithmetic); a missing row is NULL. */
static inline uint64_t at(const int64_t *row, size_t k) {
  return row ? (uint64_t)row[k] : 0;
}

static inline uint64_t predict(const int64_t *cur, const int64_t *up, const int64_t *back,
                               const int64_t *bu, size_t k) {
  uint64_t p = at(up, k) + at(back, k) - at(bu, k);
  if (k > 0)
    p += (uint64_t)cur[k - 1] - at(up, k - 1) - at(back, k - 1) + at(bu, k - 1);
  return p;
}

/* One row; encode or decode. The interior loop runs without the k > 0 test. */
static inline void row(int64_t *cur, const int64_t *up, const int64_t *back,
                       const int64_t *bu, size_t n, const uint8_t *esc, uint64_t *u,
                       int decode) {
  for (size_t k = 0; k < n; k++) {
    uint64_t p = predict(cur, up, back, bu, k);
    if (decode) {
      cur[k] = (int64_t)(p + gz_pred_unzigzag(u[k]));
    } else if (esc && esc[k]) {
      cur[k] = (int64_t)p;
      u[k] = 0;
    } else {
      u[k] = gz_pred_zigzag((uint64_t)cur[k] - p);
    }
  }
}

static void lorenzo(int64_t *q, const uint8_t *esc, const size_t d[3], uint64_t *u,
                    int decode) {
  size_t plane = d[1] * d[2];
  for (size_t i = 0; i < d[0]; i++) {
    for (size_t j = 0; j < d[1]; j++) {
      size_t off = i * plane + j * d[2];
      int64_t *cur = q + off;
      const int64_t *up = j ? cur - d[2] : NULL;
      const int64_t *back = i ? cur - plane : NULL;
      const int64_t *bu = i && j ? cur - plane - d[2] : NULL;
      row(cur, up, back, bu, d[2], esc ? esc + off : NULL, u + off, decode);
    }
  }
}

void gz_lorenzo_encode(int64_t *q, const uint8_t *esc, const size_t d[3], uint64_t *u) {
  lorenzo(q, esc, d, u, 0);
}

void gz_lorenzo_decode(const uint64_t *u, const size_t d[3], int64_t *q) {
  lorenzo(q, NULL, d, (uint64_t *)(uintptr_t)u, 1);
}
