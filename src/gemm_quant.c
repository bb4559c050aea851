/* gemm with GGUF-quantized weights in place (src/gemm_quant.h). The kernels
 * that decode blocks (HMX_WQ_GEMM, src/backend.h) follow docs/NUMERICS.md
 * "GGUF dequantization" then §gemm; this file only validates and routes. */
#include "gemm_quant.h"
#include "backend.h"
#include "dispatch.h"
#include "gguf.h"
#include "internal.h"

#include <stdlib.h>

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
  /* 16-bit and f32 matrices are ordinary tensors */
  if (b->type == HMX_GGML_F32 || b->type == HMX_GGML_F16 || b->type == HMX_GGML_BF16) {
    const hmx_dtype dt = b->type == HMX_GGML_F32 ? HMX_F32 : b->type == HMX_GGML_F16 ? HMX_F16
                                                                                       : HMX_BF16;
    hmx_tensor w = hmx_tensor_2d((void *)(uintptr_t)b->data, dt, b->n, b->k);
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
  const int in_place = ex.be->gemm && (ex.be->weights16 & HMX_WQ_GEMM) &&
                       a->dtype == HMX_F32 && c->dtype == HMX_F32 &&
                       a->memory == HMX_MEMORY_HOST && c->memory == HMX_MEMORY_HOST &&
                       hmx_tensor_is_contiguous(a) && hmx_tensor_is_contiguous(c) &&
                       !hmx_check_alias(op, "c", c, "a", a, 0);
  if (in_place) {
    hmx_gemm_args g = {a->data, NULL, NULL, c->data, m, b->n, b->k, 1, ex.threads, HMX_F32,
                       NULL, b->data, b->type};
    return ex.be->gemm(&g);
  }
  /* Any other backend: dequantize (the rule), then the f32 gemm. */
  size_t n;
  float *w = NULL;
  if (!hmx_mul_size((size_t)b->n, (size_t)b->k, &n) || !(w = hmx_alloc_array(n, sizeof *w)))
    return hmx_fail(HMX_ERR_NO_MEMORY, "gemm: cannot dequantize [%lld, %lld] weights",
                    (long long)b->n, (long long)b->k);
  st = hmx_gguf_dequantize(b->type, b->data, b->n * b->k, w);
  if (!st) {
    hmx_tensor wt = hmx_tensor_2d(w, HMX_F32, b->n, b->k);
    st = hmx_gemm(ctx, a, &wt, 1, NULL, c);
  }
  free(w);
  return st;
}
