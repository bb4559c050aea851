/* gemm with GGUF-quantized weights kept in their file format (internal: the
 * model runtime's path for GGUF matrices; docs/NUMERICS.md "GGUF
 * dequantization", "Quantized weights in place"). */
#ifndef HMX_GEMM_QUANT_H
#define HMX_GEMM_QUANT_H

#include "hadamix.h"

/* A [N, K] matrix as GGUF stores it: N rows of K elements (ne[0] = K), of
 * ggml type `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_1 or Q6_K), K a whole
 * number of blocks. data may be unaligned for the block types. */
typedef struct hmx_qmatrix {
  uint32_t type;
  const void *data;
  int64_t n, k;
} hmx_qmatrix;

/* c = a B^T (gemm with trans_b = 1, no bias): a [M, K] f32, c [M, N] f32,
 * both host memory. The bits are those of dequantizing B to f32 (the GGUF
 * rule) and calling hmx_gemm: a backend with HMX_WQ_GEMM decodes the blocks
 * in registers; for any other this function dequantizes B to a temporary
 * f32 copy and calls hmx_gemm. F16/BF16 go to hmx_gemm as 16-bit tensors. */
hmx_status hmx_gemm_quant(const hmx_context *ctx, const hmx_tensor *a, const hmx_qmatrix *b,
                          hmx_tensor *c);

#endif
