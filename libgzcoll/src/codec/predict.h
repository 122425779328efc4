/* predict.h - predictors of format version 2 (src/codec/), on the integer
 * codes of one chunk viewed as a 3-D box d[0] x d[1] x d[2] (C order, d[0]
 * slowest; 1-D and 2-D data have leading sizes of 1).
 *
 * Prediction is exact integer arithmetic on codes (wrapping in uint64, so even
 * hostile streams decode without undefined behaviour): the decoder recomputes
 * the same prediction and adds the residual, so codes come back bit-exact and
 * the bound and escape rules of the quantizer are untouched.
 *
 * encode: u receives the zigzag residuals of all d0*d1*d2 codes q (only
 * read), in the predictor's own order. decode: the inverse, writes q from u.
 * (Escaped values carry the previous code in C order, chunk2.c.)
 */
#ifndef GZ_PREDICT_H
#define GZ_PREDICT_H

#include <stddef.h>
#include <stdint.h>

/* Lorenzo: the 1, 2 or 3-D parallelogram rule on the previous neighbours
 * (pred_lorenzo.c). */
void gz_lorenzo_encode(int64_t *q, const size_t d[3], uint64_t *u);
/* The residuals of rows r0 <= r < r1 only (row r = i d[1] + j: the d[2]
 * codes from (r d[2]); reads the codes of rows r - d[1] - 1 .. r). */
void gz_lorenzo_encode_rows(int64_t *q, const size_t d[3], uint64_t *u, size_t r0,
                            size_t r1);
void gz_lorenzo_decode(const uint64_t *u, const size_t d[3], int64_t *q);

/* Multilevel interpolation: cubic (linear near the edges) along each axis
 * in turn, halving the stride each level (pred_interp.c). */
void gz_interp_encode(int64_t *q, const size_t d[3], uint64_t *u);
void gz_interp_decode(const uint64_t *u, const size_t d[3], int64_t *q);

/* Prediction from reconstructed values with quantized prediction errors
 * (SZ's scheme, in fixed point; pred_value.c), fused with quantization:
 * encode reads the d0*d1*d2 values x (float64 when f64, else float32),
 * writes the zigzag bins u in visiting order and the escape flags esc (C
 * order), using R as scratch for the reconstructed grid codes (the AVX2
 * encoder, chosen with gz_chunk2_simd, skips those no later prediction
 * reads; same u and esc); returns the escape count. runs (may be NULL):
 * room for n + 1 uint32, where the AVX2 Lorenzo encoder lists the runs of
 * escapes too (start, end, ...; C order, each as long as it goes), their
 * count of uint32 in *nruns; SIZE_MAX there when not listed (the portable
 * encoders, QINTERP). decode writes every value (escapes get the
 * prediction; chunk2.c overwrites them). eb > 0. */
enum { GZ_VPRED_LORENZO = 1, GZ_VPRED_INTERP = 2 };
void gz_vq_grid(double eb, double *unit, double *inv_unit);
size_t gz_vpred_encode(int kind, int f64, const void *x, const size_t d[3], double eb,
                       uint64_t *R, uint64_t *u, uint8_t *esc, uint32_t *runs,
                       size_t *nruns);
void gz_vpred_decode(int kind, int f64, const uint64_t *u, const size_t d[3], double eb,
                     uint64_t *R, void *out);

static inline uint64_t gz_pred_zigzag(uint64_t d) {
  return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}
static inline uint64_t gz_pred_unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* The interpolation predictor's rule, shared by gz_interp_* on codes and
 * gz_vpred_* on reconstructed values. Which neighbours exist for coordinate
 * i at stride h on a line of n: 2 = cubic (i -+ h, i -+ 3h); 4 and 5 =
 * quadratic when i - 3h or i + 3h is missing; 1 = linear (i -+ h); 3 =
 * linear extrapolation from i - h and i - 3h at the end of the line; 0 = the
 * point at i - h. */
static inline int gz_interp_mode(size_t i, size_t h, size_t n) {
  if (i + h >= n)
    return i >= 3 * h ? 3 : 0;
  if (i >= 3 * h)
    return i + 3 * h < n ? 2 : 5;
  return i + 3 * h < n ? 4 : 1;
}

/* Prediction of p[0] from its neighbours at +-o and +-3o (o = h times the
 * axis stride), wrapping in uint64 and rounding down (codes are read as
 * uint64: the same bits). */
static inline uint64_t gz_interp_pred(const uint64_t *p, ptrdiff_t o, int mode) {
  uint64_t a = p[-o], b, a3, b3;
  if (mode == 0)
    return a;
  if (mode == 3) /* linear extrapolation from -h and -3h */
    return (uint64_t)((int64_t)(3 * a - p[-3 * o] + 1) >> 1);
  b = p[o];
  if (mode == 1)
    return (uint64_t)((int64_t)(a + b + 1) >> 1);
  if (mode == 4) /* quadratic through -h, +h, +3h */
    return (uint64_t)((int64_t)(3 * a + 6 * b - p[3 * o] + 4) >> 3);
  if (mode == 5) /* quadratic through -3h, -h, +h */
    return (uint64_t)((int64_t)(6 * a + 3 * b - p[-3 * o] + 4) >> 3);
  a3 = p[-3 * o];
  b3 = p[3 * o];
  return (uint64_t)((int64_t)(9 * (a + b) - a3 - b3 + 8) >> 4);
}

#endif
