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

int hmx_qlayout_g16_ok(uint32_t type) {
  return type == HMX_GGML_Q8_0 || type == HMX_GGML_Q4_0 || type == HMX_GGML_Q4_1 ||
         type == HMX_GGML_F32 || type == HMX_GGML_F16 || type == HMX_GGML_BF16 ||
         hmx_qlayout_g16_packed(type);
}

size_t hmx_qlayout_bytes(uint32_t type, int layout, int64_t n, int64_t k) {
  if (layout == HMX_QLAYOUT_G16) return hmx_qlayout_g16_bytes(type, n, k);
  int64_t block = 1, bytes = 0;
  (void)hmx_gguf_type_block(type, &block, &bytes);
  return (size_t)(n * (k / block) * bytes);
}

int hmx_qmatrix_is_plain(const hmx_qmatrix *q) {
  return q->layout == HMX_QLAYOUT_ROWS && hmx_qtype_is_float(q->type);
}

size_t hmx_qlayout_g16_bytes(uint32_t type, int64_t n, int64_t k) {
  const int64_t groups = (n + HMX_QG - 1) / HMX_QG;
  if (hmx_qlayout_g16_packed(type)) return hmx_packed_bytes(type, n, k);
  int64_t B, S, hdr;
  geometry(type, &B, &S, &hdr);
  return (size_t)(groups * HMX_QG) * (size_t)(k / B * S);
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
  if (hmx_qlayout_g16_packed(type)) {
    hmx_packed_to_g16(type, src, n, k, dst);
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
  if (hmx_qlayout_g16_packed(q->type)) {
    hmx_packed_row(q->type, s, q->k, j, dst);
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
  if (hmx_qmatrix_is_plain(b)) {
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
  /* a and c in device memory (a forward pass on the GPU, src/model_forward.c):
   * the backend's device gemm decodes b's GPU copy where it is, with the
   * decoders and the kernel of its host calls (the same bits). f32 only. */
  if (a->memory == HMX_MEMORY_CUDA || c->memory == HMX_MEMORY_CUDA) {
    const hmx_tensor *place[] = {a, c};
    static const char *const names[] = {"a", "c"};
    hmx_status (*fn)(const hmx_gemm_args *, const hmx_device_call *);
    if ((st = hmx_check_alias(op, "c", c, "a", a, 0)) ||
        (st = hmx_exec_place(ctx, op, &ex, place, names, 2, 0)))
      return st;
    HMX_PICK_DEVICE(ex, gemm, fn);
    if (!b->dev)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "gemm: device tensors with %s weights need the "
                      "weights' GPU copy (hmx_model_prepare with a cuda context makes it)",
                      hmx_gguf_type_name(b->type));
    hmx_gemm_args g = {a->data, NULL, NULL, c->data, m, b->n, b->k, 1, ex.threads, HMX_F32,
                       NULL, NULL, b->type, b->layout, b->dev};
    return fn(&g, &ex.call);
  }
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
                       NULL, b->data, b->type, b->layout, NULL};
    return ex.fast->gemm_g16(&g);
  }
  const int in_place = ex.be->gemm && (ex.be->weights16 & need) && plain;
  if (in_place) {
    /* b's GPU copy goes only to a backend that reads such copies (the one
     * that made it: cuda is the only such backend) */
    hmx_gemm_args g = {a->data, NULL, NULL, c->data, m, b->n, b->k, 1, ex.threads, HMX_F32,
                       NULL, b->data, b->type, b->layout,
                       hmx_exec_reads_gpu_copies(&ex) ? b->dev : NULL};
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
