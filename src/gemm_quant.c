/* gemm with GGUF-quantized weights in place (src/gemm_quant.h). The kernels
 * that decode blocks (HMX_WQ_GEMM, src/backend.h) follow docs/NUMERICS.md
 * "GGUF dequantization" then §gemm; this file only validates and routes. */
#include "gemm_quant.h"
#include "backend.h"
#include "dispatch.h"
#include "fast.h"
#include "gguf.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- ggml float types and hadamix dtypes */

int hmx_qtype_is_float(uint32_t type) {
  return type == HMX_GGML_F32 || type == HMX_GGML_F16 || type == HMX_GGML_BF16;
}

hmx_dtype hmx_qtype_dtype(uint32_t type) {
  return type == HMX_GGML_F16 ? HMX_F16 : type == HMX_GGML_BF16 ? HMX_BF16 : HMX_F32;
}

uint32_t hmx_dtype_qtype(hmx_dtype dt) {
  return dt == HMX_F16 ? HMX_GGML_F16 : dt == HMX_BF16 ? HMX_GGML_BF16 : HMX_GGML_F32;
}

/* ---- the G16 layout (gemm_quant.h) */

/* GGUF block geometry: elements B, bytes S, header bytes (the 16-bit scale
 * fields before the quants). F32/F16/BF16: one element of 4 or 2 bytes, no header. */
static void geometry(uint32_t type, int64_t *B, int64_t *S, int64_t *hdr) {
  hmx_gguf_type_block(type, B, S);
  *hdr = type == HMX_GGML_Q4_1 ? 4 : hmx_qtype_is_float(type) ? 0 : 2;
}

/* The types whose G16 form is transcoded (gemm_quant.h "scaled G16"). */
int hmx_qlayout_g16_scaled(uint32_t type) {
  return type == HMX_GGML_Q4_K || type == HMX_GGML_Q5_K || type == HMX_GGML_Q5_0 ||
         type == HMX_GGML_Q5_1 || type == HMX_GGML_Q6_K || type == HMX_GGML_Q3_K;
}

int hmx_scaled_bits(uint32_t type) {
  return type == HMX_GGML_Q4_K ? 4 : type == HMX_GGML_Q6_K ? 6 : type == HMX_GGML_Q3_K ? 3 : 5;
}

int hmx_scaled_off(uint32_t type) {
  return type == HMX_GGML_Q5_0 ? 16 : type == HMX_GGML_Q6_K ? 32 : type == HMX_GGML_Q3_K ? 4 : 0;
}

int hmx_scaled_halves(uint32_t type) { return type == HMX_GGML_Q6_K || type == HMX_GGML_Q3_K; }

void hmx_scaled_pos(int bits, int e, int t, int *word, int *bit) {
  const int f = 32 / bits; /* whole fields a word */
  if (e < f * bits) { /* field e % f of word e / f */
    *word = e / f;
    *bit = bits * (e % f) + t;
    return;
  }
  /* elements 30, 31 (bits 5, 6): bit i = (e - 30) bits + t of the string whose
   * bit pair 2w, 2w+1 is the top two bits of word w */
  const int i = (e - f * bits) * bits + t;
  *word = i / 2;
  *bit = 30 + i % 2;
}

/* Bytes of one scaled G16 chunk (16 rows x 32 elements): two f32 fields a
 * row (d, m; Q6_K d of each half) and the row's 32 values of b bits in b
 * 32-bit words (gemm_quant.h). */
static int64_t scaled_chunk(uint32_t type) {
  return HMX_QG * (8 + 4 * hmx_scaled_bits(type));
}

int hmx_qlayout_g16_ok(uint32_t type) {
  return type == HMX_GGML_Q8_0 || type == HMX_GGML_Q4_0 || type == HMX_GGML_Q4_1 ||
         type == HMX_GGML_F32 || type == HMX_GGML_F16 || type == HMX_GGML_BF16 ||
         type == HMX_GGML_Q2_K || hmx_qlayout_g16_scaled(type);
}

size_t hmx_qlayout_g16_bytes(uint32_t type, int64_t n, int64_t k) {
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  if (hmx_qlayout_g16_scaled(type)) return (size_t)(groups * (k / 32) * scaled_chunk(type));
  if (type == HMX_GGML_Q2_K) return hmx_q2k_g16_bytes(n, k);
  int64_t B, S, hdr;
  geometry(type, &B, &S, &hdr);
  return (size_t)(groups * HMX_QG) * (size_t)(k / B * S);
}

/* One row's 32 elements (block b of 32 of the row, in the GGUF rows at src)
 * as the scaled form: *d, *m and u[32] such that (float)(u - off) * d + m is
 * each element's GGUF rule, bit for bit (docs/NUMERICS.md "Quantized weights
 * in place": every product there is exact, so the one rounding is the add;
 * K types: d = f16(d) * sc, m = -(f16(dmin) * m), the rule's own two
 * products; Q5_1: f16(d), f16(m); Q5_0: f16(d) and m = -0, which adds
 * nothing, not even to a zero's sign). */
static void scaled_block(uint32_t type, const unsigned char *row, int64_t b, float *d, float *m,
                         unsigned char u[32]) {
  int64_t B, S;
  hmx_gguf_type_block(type, &B, &S);
  const unsigned char *blk = row + b * 32 / B * S; /* the GGUF block holding these 32 */
  const int e0 = (int)(b * 32 % B);
  for (int l = 0; l < 32; l++) u[l] = (unsigned char)hmx_gguf_block_u(type, blk, e0 + l);
  uint16_t h, hm;
  memcpy(&h, type == HMX_GGML_Q6_K ? blk + 208 : type == HMX_GGML_Q3_K ? blk + 108 : blk, 2);
  memcpy(&hm, blk + 2, 2);
  if (type == HMX_GGML_Q6_K) { /* *d, *m: d * sc of elements 0..15, 16..31 */
    *d = hmx_f16_to_f32(h) * (float)(signed char)blk[192 + e0 / 16];
    *m = hmx_f16_to_f32(h) * (float)(signed char)blk[192 + e0 / 16 + 1];
  } else if (type == HMX_GGML_Q3_K) { /* the same with Q3_K's scales - 32 */
    *d = hmx_f16_to_f32(h) * (float)(hmx_gguf_q3_k_scale(blk + 96, e0 / 16) - 32);
    *m = hmx_f16_to_f32(h) * (float)(hmx_gguf_q3_k_scale(blk + 96, e0 / 16 + 1) - 32);
  } else if (type == HMX_GGML_Q4_K || type == HMX_GGML_Q5_K) {
    int sc, mn;
    hmx_gguf_k_scale_min(blk + 4, e0 / 32, &sc, &mn);
    *d = hmx_f16_to_f32(h) * (float)sc;
    *m = -(hmx_f16_to_f32(hm) * (float)mn);
  } else { /* Q5_1: its f16 m; Q5_0: -0 */
    *d = hmx_f16_to_f32(h);
    *m = type == HMX_GGML_Q5_1 ? hmx_f16_to_f32(hm) : -0.0f;
  }
}

/* GGUF rows -> the scaled G16 form (gemm_quant.h): chunk (g, b) of a
 * group's 16 rows and the 32 elements b is d[16] (f32), m[16] (f32), then
 * word w < bits of the 16 rows side by side, each value stored as u - off
 * in `bits` bits (two's complement: off > 0 only for Q5_0 and Q6_K, whose
 * u - off fits) at hmx_scaled_pos. Rows past n are zeros. */
static void scaled_to_g16(uint32_t type, const unsigned char *src, int64_t n, int64_t k,
                          unsigned char *dst) {
  int64_t B, S;
  hmx_gguf_type_block(type, &B, &S);
  const int64_t nb = k / 32, groups = (n + HMX_QG - 1) / HMX_QG, cs = scaled_chunk(type);
  const int bits = hmx_scaled_bits(type), off = hmx_scaled_off(type);
  const size_t row_bytes = (size_t)(k / B * S);
  for (int64_t g = 0; g < groups; g++)
    for (int64_t b = 0; b < nb; b++) {
      unsigned char *c = dst + (g * nb + b) * cs;
      memset(c, 0, (size_t)cs);
      for (int r = 0; r < HMX_QG; r++) {
        const int64_t row = g * HMX_QG + r;
        if (row >= n) continue;
        float d, m;
        unsigned char u[32];
        uint32_t words[6] = {0}; /* bits <= 6 words */
        scaled_block(type, src + (size_t)row * row_bytes, b, &d, &m, u);
        memcpy(c + 4 * r, &d, 4);
        memcpy(c + 4 * HMX_QG + 4 * r, &m, 4);
        for (int e = 0; e < 32; e++) {
          const uint32_t v = (uint32_t)(u[e] - off) & ((1u << bits) - 1);
          for (int t = 0; t < bits; t++) { /* bit t of v: word and bit by hmx_scaled_pos */
            int w, at;
            hmx_scaled_pos(bits, e, t, &w, &at);
            words[w] |= ((v >> t) & 1u) << at;
          }
        }
        for (int w = 0; w < bits; w++) memcpy(c + (8 + 4 * w) * HMX_QG + 4 * r, &words[w], 4);
      }
    }
}

/* Row r of a group's scaled chunk at c: 32 elements by the form's rule. */
static void scaled_row(uint32_t type, const unsigned char *c, int r, float *dst) {
  float d, m;
  memcpy(&d, c + 4 * r, 4);
  memcpy(&m, c + 4 * HMX_QG + 4 * r, 4);
  const int bits = hmx_scaled_bits(type), sgn = hmx_scaled_off(type) > 0;
  for (int e = 0; e < 32; e++) {
    int32_t v = 0; /* u - off */
    for (int t = 0; t < bits; t++) {
      int w, at;
      uint32_t word;
      hmx_scaled_pos(bits, e, t, &w, &at);
      memcpy(&word, c + (8 + 4 * w) * HMX_QG + 4 * r, 4);
      v |= (int32_t)((word >> at) & 1u) << t;
    }
    if (sgn && v >= 1 << (bits - 1)) v -= 1 << bits;
    if (hmx_scaled_halves(type)) { /* Q6_K, Q3_K: the product alone, (d * sc) * (u - off), exact */
      dst[e] = (float)v * (e < 16 ? d : m);
      continue;
    }
    const float p = (float)v * d; /* exact */
    dst[e] = p + m;
  }
}

/* Where byte f of row r's block goes inside the group's interleaved block
 * (16 * S bytes): 16-bit header field h of the 16 rows side by side, then
 * for each quant byte j the 16 rows' bytes; F16/BF16 (S = 2, no header): the
 * 16 rows' values of one element side by side. */
static int64_t g16_pos(int64_t f, int64_t r, int64_t S, int64_t hdr) {
  if (hdr == 0) return r * S + f;
  if (f < hdr) return (f / 2) * 2 * HMX_QG + r * 2 + f % 2;
  return hdr * HMX_QG + (f - hdr) * HMX_QG + r;
}

void hmx_qlayout_to_g16(uint32_t type, const void *src, int64_t n, int64_t k, void *dst) {
  if (hmx_qlayout_g16_scaled(type)) {
    scaled_to_g16(type, src, n, k, dst);
    return;
  }
  if (type == HMX_GGML_Q2_K) {
    hmx_q2k_to_g16(src, n, k, dst);
    return;
  }
  int64_t B, S, hdr;
  geometry(type, &B, &S, &hdr);
  const int64_t nb = k / B, groups = (n + HMX_QG - 1) / HMX_QG;
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (int64_t g = 0; g < groups; g++)
    for (int64_t b = 0; b < nb; b++) {
      unsigned char *blk = d + (g * nb + b) * HMX_QG * S;
      for (int64_t r = 0; r < HMX_QG; r++) {
        const int64_t row = g * HMX_QG + r;
        for (int64_t f = 0; f < S; f++)
          blk[g16_pos(f, r, S, hdr)] = row < n ? s[(row * nb + b) * S + f] : 0;
      }
    }
}

void hmx_qlayout_cols_to_g16(uint32_t type, const void *src, int64_t k, int64_t n, void *dst) {
  const size_t es = type == HMX_GGML_F32 ? 4 : 2;
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (int64_t g = 0; g < n / HMX_QG; g++) /* 16 adjacent columns of row r stay adjacent */
    for (int64_t r = 0; r < k; r++)
      memcpy(d + (size_t)((g * k + r) * HMX_QG) * es, s + (size_t)(r * n + g * HMX_QG) * es,
             HMX_QG * es);
}

void hmx_qmatrix_row_f32(const hmx_qmatrix *q, int64_t j, float *dst) {
  int64_t B, S, hdr;
  geometry(q->type, &B, &S, &hdr);
  const int64_t nb = q->k / B;
  const unsigned char *s = q->data;
  if (q->layout != HMX_QLAYOUT_G16) {
    (void)hmx_gguf_dequantize(q->type, s + j * nb * S, q->k, dst);
    return;
  }
  unsigned char tmp[256];
  const int64_t g = j / HMX_QG, r = j % HMX_QG;
  if (q->type == HMX_GGML_Q2_K) {
    hmx_q2k_g16_row(s, q->k, j, dst);
    return;
  }
  if (hmx_qlayout_g16_scaled(q->type)) {
    const int64_t n32 = q->k / 32, cs = scaled_chunk(q->type);
    for (int64_t b = 0; b < n32; b++) scaled_row(q->type, s + (g * n32 + b) * cs, (int)r, dst + b * 32);
    return;
  }
  /* Float types: element p is at ((g k + p) 16 + r), converted exactly. (The
   * block loop below gives the same values one call per element: 1 ms of a
   * 64-token SmolLM2 prefill went to its embedding rows.) */
  if (hmx_qtype_is_float(q->type)) {
    const int64_t base = g * q->k * HMX_QG + r;
    for (int64_t p = 0; p < q->k; p++) {
      const int64_t e = base + p * HMX_QG;
      if (q->type == HMX_GGML_F32) {
        memcpy(dst + p, s + e * 4, sizeof(float));
      } else {
        uint16_t h;
        memcpy(&h, s + e * 2, sizeof h);
        dst[p] = q->type == HMX_GGML_BF16 ? hmx_bf16_to_f32(h) : hmx_f16_to_f32(h);
      }
    }
    return;
  }
  for (int64_t b = 0; b < nb; b++) {
    const unsigned char *blk = s + (g * nb + b) * HMX_QG * S;
    for (int64_t f = 0; f < S; f++) tmp[f] = blk[g16_pos(f, r, S, hdr)];
    (void)hmx_gguf_dequantize(q->type, tmp, B, dst + b * B);
  }
}

hmx_status hmx_gemm_quant(const hmx_context *ctx, const hmx_tensor *a, const hmx_qmatrix *b,
                          hmx_tensor *c) {
  static const char op[] = "gemm";
  if (!a || !b || !c || !b->data)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "gemm (quantized weights): NULL argument");
  int64_t block, bytes;
  if (!hmx_gguf_type_block(b->type, &block, &bytes) || !hmx_gguf_can_dequantize(b->type))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "gemm: weights of ggml type %u are not supported",
                    b->type);
  if (b->n < 1 || b->k < 1 || b->k % block)
    return hmx_fail(HMX_ERR_SHAPE, "gemm: quantized weights [%lld, %lld]: K must be a whole "
                    "number of %s blocks", (long long)b->n, (long long)b->k,
                    hmx_gguf_type_name(b->type));
  if (b->layout != HMX_QLAYOUT_ROWS && (b->layout != HMX_QLAYOUT_G16 || !hmx_qlayout_g16_ok(b->type)))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "gemm: layout %d of %s weights is not supported",
                    b->layout, hmx_gguf_type_name(b->type));
  /* 16-bit and f32 matrices in rows are ordinary tensors */
  if (b->layout == HMX_QLAYOUT_ROWS && hmx_qtype_is_float(b->type)) {
    hmx_tensor w = hmx_tensor_2d((void *)(uintptr_t)b->data, hmx_qtype_dtype(b->type), b->n, b->k);
    return hmx_gemm(ctx, a, &w, 1, NULL, c);
  }
  hmx_exec ex;
  hmx_status st = hmx_exec_resolve(ctx, op, &ex);
  if (st) return st;
  if ((st = hmx_check_float(op, "a", a, 2)) || (st = hmx_check_float(op, "c", c, 2))) return st;
  const int64_t m = a->shape[0];
  if (a->shape[1] != b->k || c->shape[0] != m || c->shape[1] != b->n)
    return hmx_fail(HMX_ERR_SHAPE, "gemm: a [%lld, %lld] times quantized [%lld, %lld]^T does "
                    "not fit c [%lld, %lld]", (long long)m, (long long)a->shape[1],
                    (long long)b->n, (long long)b->k, (long long)c->shape[0],
                    (long long)c->shape[1]);
  const unsigned need = b->layout == HMX_QLAYOUT_G16 ? HMX_WG16_GEMM : HMX_WQ_GEMM;
  const int plain = a->dtype == HMX_F32 && c->dtype == HMX_F32 &&
                    a->memory == HMX_MEMORY_HOST && c->memory == HMX_MEMORY_HOST &&
                    hmx_tensor_is_contiguous(a) && hmx_tensor_is_contiguous(c) &&
                    !hmx_check_alias(op, "c", c, "a", a, 0);
  /* the fast tier: bf16 G16 weights to its kernel on them, where it has one
   * (docs/NUMERICS.md "Fast tier": a rounded to bf16), for more rows than
   * its exact_rows (one row: the exact kernel below, the same bits) */
  if (plain && ex.fast && ex.fast->gemm_g16 && b->type == HMX_GGML_BF16 &&
      b->layout == HMX_QLAYOUT_G16 && m > ex.fast->exact_rows &&
      (hmx_fast_weights16(ex.be) & HMX_FAST_W_BF16_G16)) {
    hmx_gemm_args g = {a->data, NULL, NULL, c->data, m, b->n, b->k, 1, ex.threads, HMX_F32,
                       NULL, b->data, b->type, b->layout};
    return ex.fast->gemm_g16(&g);
  }
  const int in_place = ex.be->gemm && (ex.be->weights16 & need) && plain;
  if (in_place) {
    hmx_gemm_args g = {a->data, NULL, NULL, c->data, m, b->n, b->k, 1, ex.threads, HMX_F32,
                       NULL, b->data, b->type, b->layout};
    return ex.be->gemm(&g);
  }
  /* Any other backend: dequantize (the rule), then the f32 gemm. */
  size_t n;
  float *w = NULL;
  if (!hmx_mul_size((size_t)b->n, (size_t)b->k, &n) || !(w = hmx_alloc_array(n, sizeof *w)))
    return hmx_fail(HMX_ERR_NO_MEMORY, "gemm: cannot dequantize [%lld, %lld] weights",
                    (long long)b->n, (long long)b->k);
  for (int64_t j = 0; j < b->n; j++) hmx_qmatrix_row_f32(b, j, w + j * b->k);
  {
    hmx_tensor wt = hmx_tensor_2d(w, HMX_F32, b->n, b->k);
    st = hmx_gemm(ctx, a, &wt, 1, NULL, c);
  }
  free(w);
  return st;
}
