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
void gz_lorenzo_decode(const uint64_t *u, const size_t d[3], int64_t *q);

/* Multilevel interpolation: cubic (linear near the edges) along each axis
 * in turn, halving the stride each level (pred_interp.c). */
void gz_interp_encode(int64_t *q, const size_t d[3], uint64_t *u);
void gz_interp_decode(const uint64_t *u, const size_t d[3], int64_t *q);

/* Prediction from reconstructed values with quantized prediction errors
 * (SZ's scheme, in fixed point; pred_value.c), fused with quantization:
 * encode reads the d0*d1*d2 values x (float64 when f64, else float32),
 * writes the zigzag bins u in visiting order, the reconstructed grid codes
 * R and the escape flags esc (C order); returns the escape count. decode
 * writes every value (escapes get the prediction; chunk2.c overwrites them).
 * eb > 0. */
enum { GZ_VPRED_LORENZO = 1, GZ_VPRED_INTERP = 2 };
void gz_vq_grid(double eb, double *unit, double *inv_unit);
size_t gz_vpred_encode(int kind, int f64, const void *x, const size_t d[3], double eb,
                       uint64_t *R, uint64_t *u, uint8_t *esc);
void gz_vpred_decode(int kind, int f64, const uint64_t *u, const size_t d[3], double eb,
                     uint64_t *R, void *out);

static inline uint64_t gz_pred_zigzag(uint64_t d) {
  return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}
static inline uint64_t gz_pred_unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

#endif
