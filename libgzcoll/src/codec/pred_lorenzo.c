/* pred_lorenzo.c - Lorenzo predictor on codes: x(i,j,k) is predicted by
 * x(i,j,k-1) + x(i,j-1,k) + x(i-1,j,k) - x(i,j-1,k-1) - x(i-1,j,k-1)
 * - x(i-1,j-1,k) + x(i-1,j-1,k-1), neighbours outside the box being 0. With
 * leading sizes of 1 it reduces to the 2-D rule and to the previous value.
 * Residuals are in C order. */
#include "codec/predict.h"

#include "codec/chunk2.h"

/* One row, the neighbour rows that exist given by the constant flags (the
 * four call sites specialise it). In encode mode cur is only read, so the
 * loop carries no dependency. */
static inline void row(int64_t *cur, const int64_t *up, const int64_t *back,
                       const int64_t *bu, size_t n, uint64_t *u, int has_up, int has_back,
                       int decode) {
#define GZ_AT(r, has, k) ((has) ? (uint64_t)(r)[k] : 0u)
  for (size_t k = 0; k < n; k++) {
    uint64_t p = GZ_AT(up, has_up, k) + GZ_AT(back, has_back, k) -
                 GZ_AT(bu, has_up && has_back, k);
    if (k > 0)
      p += (uint64_t)cur[k - 1] - GZ_AT(up, has_up, k - 1) -
           GZ_AT(back, has_back, k - 1) + GZ_AT(bu, has_up && has_back, k - 1);
    if (decode)
      cur[k] = (int64_t)(p + gz_pred_unzigzag(u[k]));
    else
      u[k] = gz_pred_zigzag((uint64_t)cur[k] - p);
  }
#undef GZ_AT
}

/* The encoder's row: every prediction reads only the codes, so the loop has
 * no dependency and no branch (missing neighbour rows read as zeros
 * through the flags), which the compiler vectorises. */
static inline void row_enc(const int64_t *restrict cur, const int64_t *restrict up,
                           const int64_t *restrict back, const int64_t *restrict bu,
                           size_t n, uint64_t *restrict u, int has_up, int has_back) {
  uint64_t mu = has_up ? ~0ull : 0, mb = has_back ? ~0ull : 0, mub = mu & mb;
  if (n == 0)
    return;
  u[0] = gz_pred_zigzag(
      (uint64_t)cur[0] -
      (((uint64_t)up[0] & mu) + ((uint64_t)back[0] & mb) - ((uint64_t)bu[0] & mub)));
  for (size_t k = 1; k < n; k++) {
    uint64_t p = ((uint64_t)up[k] & mu) + ((uint64_t)back[k] & mb) -
                 ((uint64_t)bu[k] & mub) + (uint64_t)cur[k - 1] -
                 ((uint64_t)up[k - 1] & mu) - ((uint64_t)back[k - 1] & mb) +
                 ((uint64_t)bu[k - 1] & mub);
    u[k] = gz_pred_zigzag((uint64_t)cur[k] - p);
  }
}

/* The traversal of rows r0 <= r < r1 (row r = i d[1] + j), instantiated
 * twice: once for the baseline instruction set and once compiled for AVX2
 * (four int64 lanes instead of two for the encoder's independent rows).
 * Integer arithmetic: both give the same residuals and codes. */
#define GZ_LORENZO_BODY                                                                  \
  {                                                                                      \
    size_t plane = d[1] * d[2], i = d[1] ? r0 / d[1] : 0, j = d[1] ? r0 % d[1] : 0;      \
    for (size_t r = r0; r < r1; r++) {                                                   \
      size_t off = i * plane + j * d[2];                                                 \
      int64_t *cur = q + off;                                                            \
      const int64_t *up = j ? cur - d[2] : cur, *back = i ? cur - plane : cur;           \
      const int64_t *bu = i && j ? cur - plane - d[2] : cur;                             \
      if (!decode)                                                                       \
        row_enc(cur, up, back, bu, d[2], u + off, j > 0, i > 0);                         \
      else if (i && j)                                                                   \
        row(cur, up, back, bu, d[2], u + off, 1, 1, decode);                             \
      else if (j)                                                                        \
        row(cur, up, back, bu, d[2], u + off, 1, 0, decode);                             \
      else if (i)                                                                        \
        row(cur, up, back, bu, d[2], u + off, 0, 1, decode);                             \
      else                                                                               \
        row(cur, up, back, bu, d[2], u + off, 0, 0, decode);                             \
      if (++j == d[1]) {                                                                 \
        j = 0;                                                                           \
        i++;                                                                             \
      }                                                                                  \
    }                                                                                    \
  }

static void lorenzo(int64_t *q, const size_t d[3], uint64_t *u, size_t r0, size_t r1,
                    int decode) GZ_LORENZO_BODY

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#define HAVE_AVX2_PATH 1
    __attribute__((target("avx2"))) static void lorenzo_avx2(int64_t *q,
                                                             const size_t d[3],
                                                             uint64_t *u, size_t r0,
                                                             size_t r1,
                                                             int decode) GZ_LORENZO_BODY
#endif

    void gz_lorenzo_encode_rows(int64_t *q, const size_t d[3], uint64_t *u, size_t r0,
                                size_t r1) {
#ifdef HAVE_AVX2_PATH
  if (gz_chunk2_simd(-1)) {
    lorenzo_avx2(q, d, u, r0, r1, 0);
    return;
  }
#endif
  lorenzo(q, d, u, r0, r1, 0);
}

void gz_lorenzo_encode(int64_t *q, const size_t d[3], uint64_t *u) {
  gz_lorenzo_encode_rows(q, d, u, 0, d[0] * d[1]);
}

void gz_lorenzo_decode(const uint64_t *u, const size_t d[3], int64_t *q) {
  lorenzo(q, d, (uint64_t *)(uintptr_t)u, 0, d[0] * d[1], 1);
}
