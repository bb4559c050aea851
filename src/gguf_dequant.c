/* GGUF tensor dequantization to f32 (docs/NUMERICS.md "GGUF dequantization").
 *
 * Each element is a fixed, short sequence of IEEE binary32 operations on
 * exactly converted inputs (f16 and bf16 scales widen exactly, small integers
 * convert exactly), each rounded to nearest even, with no fma: the build's
 * -ffp-contract=off keeps the compiler from fusing d*q + m. Any backend that
 * performs the same operations in the same order gets the same bits. */
#include "gguf.h"
#include "internal.h"

#include <string.h>

static float f32_bits(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Q8_0: 32 elements, f16 d then int8 q[32]: y = (float)q * d. */
static void deq_q8_0(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 34, y += 32) {
    const float d = hmx_f16_to_f32(rd16(b));
    for (int j = 0; j < 32; j++) y[j] = (float)(int8_t)b[2 + j] * d;
  }
}

/* Q4_0: 32 elements, f16 d then 16 bytes: element j < 16 is the low nibble of
 * byte j, element j + 16 its high nibble; y = (float)(q - 8) * d. */
static void deq_q4_0(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 18, y += 32) {
    const float d = hmx_f16_to_f32(rd16(b));
    for (int j = 0; j < 16; j++) {
      y[j] = (float)((b[2 + j] & 0x0F) - 8) * d;
      y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
    }
  }
}

/* Q4_1: 32 elements, f16 d, f16 m, 16 bytes of nibbles as Q4_0;
 * y = ((float)q * d) + m: a multiply rounded to f32, then an add rounded
 * to f32 (not an fma). */
static void deq_q4_1(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 20, y += 32) {
    const float d = hmx_f16_to_f32(rd16(b)), m = hmx_f16_to_f32(rd16(b + 2));
    for (int j = 0; j < 16; j++) {
      const float lo = (float)(b[4 + j] & 0x0F) * d;
      const float hi = (float)(b[4 + j] >> 4) * d;
      y[j] = lo + m;
      y[j + 16] = hi + m;
    }
  }
}

/* The unsigned quant u of element e of one block at b, before the table's
 * offset (Q5_0 - 16, Q6_K - 32) and scales (docs/NUMERICS.md "GGUF
 * dequantization"); the one place that knows where these types keep their
 * bits (deq_*, hmx_gguf_quant_at, the packed G16 form of src/gemm_quant_packed.c).
 * Q5_0 / Q5_1 (32 elements; 22 bytes: f16 d, qh[4], qs[16]; Q5_1 with f16 m
 * after d): the low 4 bits as Q4_0's nibbles, bit 4 of element e is bit e
 * of the little-endian 32-bit qh. Q4_K / Q5_K (256): e = 32 s + l, sub-block
 * s; the low 4 bits are nibble s % 2 (low for even s) of qs[32 (s / 2) + l]
 * (qs at 16, Q5_K at 48), Q5_K's bit 4 is bit s of qh[l] (qh at 16). Q6_K
 * (256; ql[128], qh[64]): e = 128 h + 32 g + l, the low 4 bits nibble g / 2
 * (low for g < 2) of ql[64 h + 32 (g % 2) + l], the top 2 bits bits 2g, 2g+1
 * of qh[32 h + l]. Q2_K (256; scales[16], qs[64]): e = 128 h + 32 g + l,
 * bits 2g, 2g+1 of qs[32 h + l] (qs at 16). Q3_K (256; hmask[32], qs[64]):
 * e = 128 h + 32 g + l, the low 2 bits as Q2_K's (qs at 32), bit 2 is bit
 * 4h + g of hmask[l]. IQ4_NL (32; f16 d, qs[16]): Q4_0's nibbles. IQ4_XS
 * (256; f16 d, scales_h u16, scales_l[4], qs[128]): e = 32 s + l, nibble
 * l / 16 (low first) of qs[16 s + l % 16] (qs at 8). */
static int block_u(uint32_t type, const unsigned char *b, int e) {
  switch (type) {
  case HMX_GGML_IQ4_NL: return e < 16 ? b[2 + e] & 0x0F : b[2 + e - 16] >> 4;
  case HMX_GGML_IQ4_XS: {
    const unsigned char byte = b[8 + 16 * (e / 32) + e % 16];
    return e % 32 < 16 ? byte & 0x0F : byte >> 4;
  }
  case HMX_GGML_Q2_K: case HMX_GGML_Q3_K: {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32, three = type == HMX_GGML_Q3_K;
    const int low = (b[(three ? 32 : 16) + 32 * h + l] >> (2 * g)) & 3;
    return three ? low | ((b[l] >> (4 * h + g)) & 1) << 2 : low;
  }
  case HMX_GGML_Q5_0: case HMX_GGML_Q5_1: {
    const int hdr = type == HMX_GGML_Q5_1 ? 4 : 2;
    const unsigned char *qs = b + hdr + 4;
    const int low = e < 16 ? qs[e] & 0x0F : qs[e - 16] >> 4;
    return low | ((rd32(b + hdr) >> e) & 1) << 4;
  }
  case HMX_GGML_Q4_K: case HMX_GGML_Q5_K: {
    const int five = type == HMX_GGML_Q5_K, s = e / 32, l = e % 32;
    const unsigned char byte = b[(five ? 48 : 16) + 32 * (s / 2) + l];
    const int low = s % 2 ? byte >> 4 : byte & 0x0F;
    return five ? low | ((b[16 + l] >> s) & 1) << 4 : low;
  }
  default: { /* Q6_K */
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const unsigned char lb = b[64 * h + 32 * (g % 2) + l];
    const int low = g < 2 ? (lb & 0x0F) : (lb >> 4);
    return low | ((b[128 + 32 * h + l] >> (2 * g)) & 3) << 4;
  }
  }
}

int hmx_gguf_block_u(uint32_t type, const unsigned char *b, int e) { return block_u(type, b, e); }

/* Q5_0: y = (float)(u - 16) * d; Q5_1: y = ((float)u * d) + m, as Q4_1. */
static void deq_q5(const unsigned char *b, int64_t nb, int one, float *y) {
  const int hdr = one ? 4 : 2;
  for (int64_t i = 0; i < nb; i++, b += hdr + 20, y += 32) {
    const float d = hmx_f16_to_f32(rd16(b));
    const float m = one ? hmx_f16_to_f32(rd16(b + 2)) : 0.0f;
    for (int j = 0; j < 32; j++) {
      const int q = block_u(one ? HMX_GGML_Q5_1 : HMX_GGML_Q5_0, b, j);
      if (one) {
        const float p = (float)q * d;
        y[j] = p + m;
      } else {
        y[j] = (float)(q - 16) * d;
      }
    }
  }
}

/* Q6_K: 256 elements: ql[128] (low 4 bits), qh[64] (high 2 bits), int8
 * scales[16], f16 d (210 bytes); q = u - 32 (block_u), scale s =
 * scales[e / 16]; y = (d * (float)s) * (float)q, two roundings, in this
 * order. */
static void deq_q6_k(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 210, y += 256) {
    const signed char *sc = (const signed char *)(b + 192);
    const float d = hmx_f16_to_f32(rd16(b + 208));
    for (int e = 0; e < 256; e++) {
      const float s = d * (float)sc[e / 16];
      y[e] = s * (float)(block_u(HMX_GGML_Q6_K, b, e) - 32);
    }
  }
}

/* Q4_K and Q5_K: 256 elements in 8 sub-blocks of 32, each with a 6-bit scale
 * sc and a 6-bit min m packed in scales[12] (sub-block s < 4: sc = the low 6
 * bits of scales[s], m = those of scales[s + 4]; s >= 4: sc = the low nibble
 * of scales[s + 4] with the top 2 bits of scales[s - 4] above it, m = the
 * high nibble of scales[s + 4] with the top 2 bits of scales[s] above it). */
void hmx_gguf_k_scale_min(const unsigned char *scales, int s, int *sc, int *m) {
  if (s < 4) {
    *sc = scales[s] & 63;
    *m = scales[s + 4] & 63;
  } else {
    *sc = (scales[s + 4] & 0x0F) | (scales[s - 4] >> 6) << 4;
    *m = (scales[s + 4] >> 4) | (scales[s] >> 6) << 4;
  }
}

/* Q4_K (144 bytes: f16 d, f16 dmin, scales[12], qs[128]) and Q5_K (176:
 * the same, then qh[32] before qs); q = block_u, element 32 s + l in
 * sub-block s. y = ((d * (float)sc) * (float)q) - (dmin * (float)m): four roundings in
 * this order (docs/NUMERICS.md: the three products are exact, so only the
 * subtraction rounds, and an fma of the second product with the
 * subtraction gives the same bits). */
static void deq_k(const unsigned char *b, int64_t nb, int five, float *y) {
  const int bytes = five ? 176 : 144;
  for (int64_t i = 0; i < nb; i++, b += bytes, y += 256) {
    const float d = hmx_f16_to_f32(rd16(b)), dmin = hmx_f16_to_f32(rd16(b + 2));
    const uint32_t type = five ? HMX_GGML_Q5_K : HMX_GGML_Q4_K;
    for (int s = 0; s < 8; s++) {
      int sc, m;
      hmx_gguf_k_scale_min(b + 4, s, &sc, &m);
      const float ds = d * (float)sc, ms = dmin * (float)m;
      for (int l = 0; l < 32; l++) y[32 * s + l] = ds * (float)block_u(type, b, 32 * s + l) - ms;
    }
  }
}

/* Q3_K's 16 6-bit scales in scales[12]: the low 4 bits are nibble s / 8
 * (low first) of scales[s % 8], the top 2 bits are bits 2 (s / 4), +1 of
 * scales[8 + s % 4]. */
int hmx_gguf_q3_k_scale(const unsigned char *scales, int s) {
  const int low = s < 8 ? scales[s] & 0x0F : scales[s - 8] >> 4;
  return low | ((scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
}

/* Q2_K (84 bytes: scales[16], qs[64], f16 d, f16 dmin): sub-block s = e / 16
 * of 16 elements, scale sc = the low nibble of scales[s], min m = its high
 * nibble; q = block_u. y = ((d * (float)sc) * (float)q) - (dmin * (float)m),
 * as Q4_K: three exact products, one rounding. */
static void deq_q2_k(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 84, y += 256) {
    const float d = hmx_f16_to_f32(rd16(b + 80)), dmin = hmx_f16_to_f32(rd16(b + 82));
    for (int e = 0; e < 256; e++) {
      const float ds = d * (float)(b[e / 16] & 0x0F), ms = dmin * (float)(b[e / 16] >> 4);
      y[e] = ds * (float)block_u(HMX_GGML_Q2_K, b, e) - ms;
    }
  }
}

/* Q3_K (110 bytes: hmask[32], qs[64], scales[12], f16 d): q = block_u - 4,
 * scale s = hmx_gguf_q3_k_scale(e / 16) - 32; y = (d * (float)s) * (float)q,
 * as Q6_K: two exact products. */
static void deq_q3_k(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 110, y += 256) {
    const float d = hmx_f16_to_f32(rd16(b + 108));
    for (int e = 0; e < 256; e++) {
      const float s = d * (float)(hmx_gguf_q3_k_scale(b + 96, e / 16) - 32);
      y[e] = s * (float)(block_u(HMX_GGML_Q3_K, b, e) - 4);
    }
  }
}

/* IQ4_NL and IQ4_XS: a 4-bit quant u picks one of 16 non-uniform values
 * (llama.cpp's kvalues_iq4nl, a fixed table, not in the file). */
const int8_t hmx_gguf_iq4_values[16] = {HMX_GGUF_IQ4_VALUES};
const float hmx_gguf_iq4_f32[16] = {HMX_GGUF_IQ4_VALUES};

/* IQ4_XS's 6-bit scale of sub-block s: the low 4 bits are nibble s % 2
 * (low first) of scales_l[s / 2] (at 4), the top 2 bits are bits 2s, 2s+1
 * of the little-endian scales_h (at 2). */
int hmx_gguf_iq4_xs_scale(const unsigned char *b, int s) {
  const int low = (b[4 + s / 2] >> (4 * (s % 2))) & 0x0F;
  return low | ((rd16(b + 2) >> (2 * s)) & 3) << 4;
}

/* IQ4_NL (18 bytes: f16 d, qs[16]): y = d * (float)v, v the table's value
 * of block_u (an exact product: 11 x 7 bits). */
static void deq_iq4_nl(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 18, y += 32) {
    const float d = hmx_f16_to_f32(rd16(b));
    for (int e = 0; e < 32; e++) y[e] = d * (float)hmx_gguf_iq4_values[block_u(HMX_GGML_IQ4_NL, b, e)];
  }
}

/* IQ4_XS (136 bytes): sub-block s = e / 32 with s6 = hmx_gguf_iq4_xs_scale;
 * y = (d * (float)(s6 - 32)) * (float)v, in this order. Both products are
 * exact (11 + 6 + 7 bits), so any order gives these bits. */
static void deq_iq4_xs(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 136, y += 256) {
    const float d = hmx_f16_to_f32(rd16(b));
    for (int e = 0; e < 256; e++) {
      const float dl = d * (float)(hmx_gguf_iq4_xs_scale(b, e / 32) - 32);
      y[e] = dl * (float)hmx_gguf_iq4_values[block_u(HMX_GGML_IQ4_XS, b, e)];
    }
  }
}

int hmx_gguf_can_dequantize(uint32_t type) {
  switch (type) {
  case HMX_GGML_F32: case HMX_GGML_F16: case HMX_GGML_BF16: case HMX_GGML_Q8_0:
  case HMX_GGML_Q4_0: case HMX_GGML_Q4_1: case HMX_GGML_Q5_0: case HMX_GGML_Q5_1:
  case HMX_GGML_Q2_K: case HMX_GGML_Q3_K: case HMX_GGML_Q4_K: case HMX_GGML_Q5_K:
  case HMX_GGML_Q6_K: case HMX_GGML_IQ4_NL: case HMX_GGML_IQ4_XS: return 1;
  default: return 0;
  }
}

hmx_status hmx_gguf_dequantize(uint32_t type, const void *src, int64_t n, float *dst) {
  int64_t block, bytes;
  if (!hmx_gguf_type_block(type, &block, &bytes) || !hmx_gguf_can_dequantize(type))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "gguf: cannot dequantize tensor type %s (%u): hadamix "
                    "reads " HMX_GGUF_DEQUANT_TYPES,
                    hmx_gguf_type_name(type) ? hmx_gguf_type_name(type) : "unknown", type);
  if (n < 0 || n % block)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_dequantize: %lld elements is not a whole "
                    "number of %s blocks (%lld)", (long long)n, hmx_gguf_type_name(type),
                    (long long)block);
  if (n && (!src || !dst))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_dequantize: NULL pointer");
  const unsigned char *b = src;
  const int64_t nb = n / block;
  switch (type) {
  case HMX_GGML_F32: /* the bits as they are (NaN payloads too) */
    for (int64_t i = 0; i < n; i++) dst[i] = f32_bits(rd32(b + 4 * i));
    break;
  case HMX_GGML_F16: /* exact widening, NaN payload kept (hmx_f16_to_f32) */
    for (int64_t i = 0; i < n; i++) dst[i] = hmx_f16_to_f32(rd16(b + 2 * i));
    break;
  case HMX_GGML_BF16: /* the 16 bits are the high half of the f32 */
    for (int64_t i = 0; i < n; i++) dst[i] = f32_bits((uint32_t)rd16(b + 2 * i) << 16);
    break;
  case HMX_GGML_Q8_0: deq_q8_0(b, nb, dst); break;
  case HMX_GGML_Q4_0: deq_q4_0(b, nb, dst); break;
  case HMX_GGML_Q4_1: deq_q4_1(b, nb, dst); break;
  case HMX_GGML_Q5_0: deq_q5(b, nb, 0, dst); break;
  case HMX_GGML_Q5_1: deq_q5(b, nb, 1, dst); break;
  case HMX_GGML_Q4_K: deq_k(b, nb, 0, dst); break;
  case HMX_GGML_Q5_K: deq_k(b, nb, 1, dst); break;
  case HMX_GGML_Q6_K: deq_q6_k(b, nb, dst); break;
  case HMX_GGML_Q2_K: deq_q2_k(b, nb, dst); break;
  case HMX_GGML_Q3_K: deq_q3_k(b, nb, dst); break;
  case HMX_GGML_IQ4_NL: deq_iq4_nl(b, nb, dst); break;
  case HMX_GGML_IQ4_XS: deq_iq4_xs(b, nb, dst); break;
  }
  return HMX_OK;
}

hmx_status hmx_gguf_tensor_to_f32(const hmx_gguf_tensor *t, float *dst) {
  if (!t || (!dst && t->numel))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_tensor_to_f32: NULL argument");
  hmx_status st = hmx_gguf_dequantize(t->type, t->data, t->numel, dst);
  if (st == HMX_ERR_UNSUPPORTED)
    return hmx_fail(st, "tensor '%s' is %s: hadamix dequantizes " HMX_GGUF_DEQUANT_TYPES,
                    t->name, hmx_gguf_type_name(t->type));
  return st;
}

/* One element of the rule above (the same operations in the same order as
 * deq_*: identical bits). F32/F16/BF16 are not block types here. */
float hmx_gguf_quant_at(uint32_t type, const void *src, int64_t i) {
  const unsigned char *base = src;
  switch (type) {
  case HMX_GGML_Q8_0: {
    const unsigned char *b = base + (i / 32) * 34;
    return (float)(int8_t)b[2 + i % 32] * hmx_f16_to_f32(rd16(b));
  }
  case HMX_GGML_Q4_0: {
    const unsigned char *b = base + (i / 32) * 18;
    const int j = (int)(i % 32);
    const int q = j < 16 ? (b[2 + j] & 0x0F) : (b[2 + j - 16] >> 4);
    return (float)(q - 8) * hmx_f16_to_f32(rd16(b));
  }
  case HMX_GGML_Q4_1: {
    const unsigned char *b = base + (i / 32) * 20;
    const int j = (int)(i % 32);
    const int q = j < 16 ? (b[4 + j] & 0x0F) : (b[4 + j - 16] >> 4);
    const float p = (float)q * hmx_f16_to_f32(rd16(b));
    return p + hmx_f16_to_f32(rd16(b + 2));
  }
  case HMX_GGML_Q5_0: case HMX_GGML_Q5_1: {
    const int one = type == HMX_GGML_Q5_1, hdr = one ? 4 : 2;
    const unsigned char *b = base + (i / 32) * (hdr + 20);
    const int q = block_u(type, b, (int)(i % 32));
    if (!one) return (float)(q - 16) * hmx_f16_to_f32(rd16(b));
    const float p = (float)q * hmx_f16_to_f32(rd16(b));
    return p + hmx_f16_to_f32(rd16(b + 2));
  }
  case HMX_GGML_Q4_K: case HMX_GGML_Q5_K: {
    const int five = type == HMX_GGML_Q5_K;
    const unsigned char *b = base + (i / 256) * (five ? 176 : 144);
    const int e = (int)(i % 256);
    int sc, m;
    hmx_gguf_k_scale_min(b + 4, e / 32, &sc, &m);
    const int q = block_u(type, b, e);
    const float ds = hmx_f16_to_f32(rd16(b)) * (float)sc;
    const float ms = hmx_f16_to_f32(rd16(b + 2)) * (float)m;
    return ds * (float)q - ms;
  }
  case HMX_GGML_Q6_K: {
    const unsigned char *b = base + (i / 256) * 210;
    const int e = (int)(i % 256);
    const float s = hmx_f16_to_f32(rd16(b + 208)) * (float)(signed char)b[192 + e / 16];
    return s * (float)(block_u(HMX_GGML_Q6_K, b, e) - 32);
  }
  case HMX_GGML_Q2_K: {
    const unsigned char *b = base + (i / 256) * 84;
    const int e = (int)(i % 256);
    const float ds = hmx_f16_to_f32(rd16(b + 80)) * (float)(b[e / 16] & 0x0F);
    const float ms = hmx_f16_to_f32(rd16(b + 82)) * (float)(b[e / 16] >> 4);
    return ds * (float)block_u(HMX_GGML_Q2_K, b, e) - ms;
  }
  case HMX_GGML_Q3_K: {
    const unsigned char *b = base + (i / 256) * 110;
    const int e = (int)(i % 256);
    const float s = hmx_f16_to_f32(rd16(b + 108)) * (float)(hmx_gguf_q3_k_scale(b + 96, e / 16) - 32);
    return s * (float)(block_u(HMX_GGML_Q3_K, b, e) - 4);
  }
  case HMX_GGML_IQ4_NL: {
    const unsigned char *b = base + (i / 32) * 18;
    return hmx_f16_to_f32(rd16(b)) *
           (float)hmx_gguf_iq4_values[block_u(HMX_GGML_IQ4_NL, b, (int)(i % 32))];
  }
  case HMX_GGML_IQ4_XS: {
    const unsigned char *b = base + (i / 256) * 136;
    const int e = (int)(i % 256);
    const float dl = hmx_f16_to_f32(rd16(b)) * (float)(hmx_gguf_iq4_xs_scale(b, e / 32) - 32);
    return dl * (float)hmx_gguf_iq4_values[block_u(HMX_GGML_IQ4_XS, b, e)];
  }
  default: return 0.0f;
  }
}
