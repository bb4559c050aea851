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

/* Q6_K: 256 elements: ql[128] (low 4 bits), qh[64] (high 2 bits), int8
 * scales[16], f16 d (210 bytes). Element e = 128 h + 32 g + l (h < 2, g < 4,
 * l < 32): low 4 bits = nibble g / 2 (low nibble for g even) of
 * ql[64 h + 32 (g % 2) + l], high 2 bits = bits 2g..2g+1 of qh[32 h + l],
 * q = that 6-bit value - 32, scale s = scales[e / 16];
 * y = (d * (float)s) * (float)q, two roundings, in this order. */
static void deq_q6_k(const unsigned char *b, int64_t nb, float *y) {
  for (int64_t i = 0; i < nb; i++, b += 210, y += 256) {
    const unsigned char *ql = b, *qh = b + 128;
    const signed char *sc = (const signed char *)(b + 192);
    const float d = hmx_f16_to_f32(rd16(b + 208));
    for (int h = 0; h < 2; h++)
      for (int g = 0; g < 4; g++)
        for (int l = 0; l < 32; l++) {
          const int e = 128 * h + 32 * g + l;
          const unsigned char lb = ql[64 * h + 32 * (g % 2) + l];
          const int low = g < 2 ? (lb & 0x0F) : (lb >> 4);
          const int high = (qh[32 * h + l] >> (2 * g)) & 3;
          const float s = d * (float)sc[e / 16];
          y[e] = s * (float)((low | high << 4) - 32);
        }
  }
}

int hmx_gguf_can_dequantize(uint32_t type) {
  switch (type) {
  case HMX_GGML_F32: case HMX_GGML_F16: case HMX_GGML_BF16: case HMX_GGML_Q8_0:
  case HMX_GGML_Q4_0: case HMX_GGML_Q4_1: case HMX_GGML_Q6_K: return 1;
  default: return 0;
  }
}

hmx_status hmx_gguf_dequantize(uint32_t type, const void *src, int64_t n, float *dst) {
  int64_t block, bytes;
  if (!hmx_gguf_type_block(type, &block, &bytes) || !hmx_gguf_can_dequantize(type))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "gguf: cannot dequantize tensor type %s (%u): hadamix "
                    "reads F32, F16, BF16, Q8_0, Q4_0, Q4_1 and Q6_K",
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
  case HMX_GGML_Q6_K: deq_q6_k(b, nb, dst); break;
  }
  return HMX_OK;
}

hmx_status hmx_gguf_tensor_to_f32(const hmx_gguf_tensor *t, float *dst) {
  if (!t || (!dst && t->numel))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_gguf_tensor_to_f32: NULL argument");
  hmx_status st = hmx_gguf_dequantize(t->type, t->data, t->numel, dst);
  if (st == HMX_ERR_UNSUPPORTED)
    return hmx_fail(st, "tensor '%s' is %s: hadamix dequantizes F32, F16, BF16, Q8_0, Q4_0, "
                    "Q4_1 and Q6_K", t->name, hmx_gguf_type_name(t->type));
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
  case HMX_GGML_Q6_K: {
    const unsigned char *b = base + (i / 256) * 210;
    const int e = (int)(i % 256), h = e / 128, g = (e % 128) / 32, l = e % 32;
    const unsigned char lb = b[64 * h + 32 * (g % 2) + l];
    const int low = g < 2 ? (lb & 0x0F) : (lb >> 4);
    const int high = (b[128 + 32 * h + l] >> (2 * g)) & 3;
    const float s = hmx_f16_to_f32(rd16(b + 208)) * (float)(signed char)b[192 + e / 16];
    return s * (float)((low | high << 4) - 32);
  }
  default: return 0.0f;
  }
}
