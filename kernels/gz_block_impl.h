/*
 * gz_block_impl.h - body of the per-block codec for one element type.
 * Included by gz_block.h once per type with GZ_T (float/double), GZ_U and
 * GZ_I (unsigned/signed integers of the same width), GZ_SFX (f32/f64) and
 * GZ_T_MIN_NORMAL defined; it undefines them at the end.
 */
#define GZ_CAT2_(a, b) a##_##b
#define GZ_CAT_(a, b) GZ_CAT2_(a, b)
#define GZ_FN(name) GZ_CAT_(name, GZ_SFX)

/* Order-preserving map between the bits of a value and a signed integer:
 * lossless mode codes. Every bit pattern (NaN payloads included) survives. */
GZ_HD static inline int64_t GZ_FN(gz_ordered)(GZ_T x) {
  GZ_I s;
  memcpy(&s, &x, sizeof s);
  return (int64_t)(GZ_I)(s ^ (GZ_I)((GZ_U)(s >> (sizeof(GZ_I) * 8 - 1)) >> 1));
}

GZ_HD static inline GZ_T GZ_FN(gz_unordered)(int64_t q) {
  GZ_I s = (GZ_I)(GZ_U)(uint64_t)q;
  GZ_T x;
  s = (GZ_I)(s ^ (GZ_I)((GZ_U)(s >> (sizeof(GZ_I) * 8 - 1)) >> 1));
  memcpy(&x, &s, sizeof x);
  return x;
}

GZ_HD static inline GZ_T GZ_FN(gz_dequant)(int64_t q, const gz_quant_t *qp) {
  return (GZ_T)GZ_MUL((double)q, qp->step);
}

/* Quantize one value: *q receives the code (0 when not quantizable).
 * for_stream = 1 (the stream codec): the value is quantizable when
 *   x' = (T)(step q) is within eb of x in the element's precision, and -0.0
 *   and subnormals are refused so they stay bit-exact.
 * for_stream = 0 (codes for the collectives, which are summed before any
 *   conversion to T): quantizable when |x - step q| <= eb in double. */
GZ_HD static inline int GZ_FN(gz_quantize_one)(GZ_T x, const gz_quant_t *qp,
                                               int for_stream, int64_t *q) {
  double v = (double)x, shifted = GZ_ADD(GZ_MUL(v, qp->inv_step), GZ_RINT_SHIFT);
  double qd = GZ_ADD(shifted, -GZ_RINT_SHIFT); /* rint(v / step) */
  int in_range = fabs(qd) <= qp->code_max;     /* false for NaN and Inf */
  int64_t qi = in_range ? gz_rint_code(shifted) : 0;
  double r = GZ_MUL(in_range ? qd : 0.0, qp->step);
  int ok;
  if (for_stream) {
    GZ_U bits;
    memcpy(&bits, &x, sizeof bits);
    r = (double)(GZ_T)r;
    ok =
        in_range & (fabs(v - r) <= qp->eb) & !((fabs(v) < GZ_T_MIN_NORMAL) & (bits != 0));
  } else {
    ok = in_range & (fabs(v - r) <= qp->eb);
  }
  *q = qi;
  return ok;
}

/* Encode n (1..GZ_BLOCK) values. qp->eb == 0 selects lossless codes.
 * out needs GZ_VALUES_BLOCK_MAX(n, sizeof(T)) bytes. Returns bytes written. */
GZ_HD static inline size_t GZ_FN(gz_block_encode)(const GZ_T *x, int n,
                                                  const gz_quant_t *qp, uint8_t *out) {
  int64_t q[GZ_BLOCK];
  uint64_t u[GZ_BLOCK];
  uint32_t escaped = 0; /* bit i: x[i] stored verbatim (GZ_BLOCK <= 32) */
  int i, w, w0, nesc = 0;
  size_t raw_size = 1 + (size_t)n * sizeof(GZ_T), size;

  q[0] = 0; /* n >= 1 always; this tells the compiler so */
  if (qp->eb > 0) {
    unsigned char ok[GZ_BLOCK];
    int all_ok = 1;
    for (i = 0; i < n; i++) /* no loop-carried state: vectorizes */
      ok[i] = (unsigned char)GZ_FN(gz_quantize_one)(x[i], qp, 1, &q[i]);
    for (i = 0; i < n; i++)
      all_ok &= ok[i];
    if (!all_ok)
      for (i = 0; i < n; i++)
        escaped |= (uint32_t)!ok[i] << i;
  } else {
    for (i = 0; i < n; i++)
      q[i] = GZ_FN(gz_ordered)(x[i]);
  }

  if (escaped == 0) {
    w = gz_bit_width(gz_codes_zigzag(q, n, u));
    w0 = gz_bit_width(u[0]);
    size = 2 + gz_packed_bytes(n, w, w0);
    if (size <= raw_size) {
      out[0] = (uint8_t)w;
      out[1] = (uint8_t)w0;
      return 2 + gz_zigzag_pack(u, n, w, w0, out + 2);
    }
  } else {
    GZ_U first, bits;
    int same = 1;
    memcpy(&first, &x[0], sizeof first);
    for (i = 1; i < n && same; i++) {
      memcpy(&bits, &x[i], sizeof bits);
      same = bits == first;
    }
    if (same) {
      out[0] = GZ_KIND_CONST;
      memcpy(out + 1, &x[0], sizeof(GZ_T));
      return 1 + sizeof(GZ_T);
    }
    for (i = 0; i < n; i++) {
      if (escaped >> i & 1) {
        q[i] = i ? q[i - 1] : 0;
        nesc++;
      }
    }
    gz_codes_widths(q, n, &w, &w0);
    size =
        3 + (size_t)(n + 7) / 8 + (size_t)nesc * sizeof(GZ_T) + gz_packed_bytes(n, w, w0);
    if (size < raw_size) {
      uint8_t *p = out + 3;
      out[0] = GZ_KIND_MIXED;
      out[1] = (uint8_t)w;
      out[2] = (uint8_t)w0;
      for (i = 0; i < (n + 7) / 8; i++)
        *p++ = (uint8_t)(escaped >> (8 * i));
      for (i = 0; i < n; i++) {
        if (escaped >> i & 1) {
          memcpy(p, &x[i], sizeof(GZ_T));
          p += sizeof(GZ_T);
        }
      }
      p += gz_codes_pack(q, n, w, w0, p);
      return (size_t)(p - out);
    }
  }
  out[0] = GZ_KIND_RAW;
  memcpy(out + 1, x, (size_t)n * sizeof(GZ_T));
  return raw_size;
}

/* Decode one block of n values from at most avail bytes. Returns the bytes
 * used, or 0 when the block is malformed or runs past avail. */
GZ_HD static inline size_t GZ_FN(gz_block_decode)(const uint8_t *in, size_t avail, int n,
                                                  const gz_quant_t *qp, GZ_T *out) {
  int64_t q[GZ_BLOCK];
  const uint8_t *p;
  uint32_t escaped = 0;
  size_t need;
  int i, w, w0, nesc = 0;

  if (avail < 1 || n < 1 || n > GZ_BLOCK)
    return 0;
  switch (in[0]) {
  case GZ_KIND_RAW:
    need = 1 + (size_t)n * sizeof(GZ_T);
    if (need > avail)
      return 0;
    memcpy(out, in + 1, (size_t)n * sizeof(GZ_T));
    return need;
  case GZ_KIND_CONST:
    if (1 + sizeof(GZ_T) > avail)
      return 0;
    for (i = 0; i < n; i++)
      memcpy(&out[i], in + 1, sizeof(GZ_T));
    return 1 + sizeof(GZ_T);
  case GZ_KIND_MIXED:
    if (avail < 3 + (size_t)(n + 7) / 8 || in[1] > 64 || in[2] > 64)
      return 0;
    w = in[1];
    w0 = in[2];
    p = in + 3;
    for (i = 0; i < (n + 7) / 8; i++)
      escaped |= (uint32_t)*p++ << (8 * i);
    if (n < 32 && (escaped >> n) != 0)
      return 0;
    for (i = 0; i < n; i++)
      nesc += (int)(escaped >> i & 1);
    need = (size_t)(p - in) + (size_t)nesc * sizeof(GZ_T) + gz_packed_bytes(n, w, w0);
    if (need > avail || qp->eb <= 0)
      return 0;
    gz_codes_unpack(p + (size_t)nesc * sizeof(GZ_T), n, w, w0, q);
    for (i = 0; i < n; i++) {
      if (escaped >> i & 1) {
        memcpy(&out[i], p, sizeof(GZ_T));
        p += sizeof(GZ_T);
      } else {
        out[i] = GZ_FN(gz_dequant)(q[i], qp);
      }
    }
    return need;
  default:
    if (in[0] > 64 || avail < 2 || in[1] > 64)
      return 0;
    w = in[0];
    w0 = in[1];
    need = 2 + gz_packed_bytes(n, w, w0);
    if (need > avail)
      return 0;
    gz_codes_unpack(in + 2, n, w, w0, q);
    if (qp->eb > 0) {
      for (i = 0; i < n; i++)
        out[i] = GZ_FN(gz_dequant)(q[i], qp);
    } else {
      for (i = 0; i < n; i++)
        out[i] = GZ_FN(gz_unordered)(q[i]);
    }
    return need;
  }
}

#undef GZ_FN
#undef GZ_CAT_
#undef GZ_CAT2_
#undef GZ_T
#undef GZ_U
#undef GZ_I
#undef GZ_SFX
#undef GZ_T_MIN_NORMAL
