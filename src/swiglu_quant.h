/* SwiGLU with its matrices as hmx_qmatrix (internal: the model runtime's
 * feed-forward block for GGUF files and for weights laid out by
 * hmx_model_prepare; docs/MODEL.md "Weight layout"). */
#ifndef HMX_SWIGLU_QUANT_H
#define HMX_SWIGLU_QUANT_H

#include "gemm_quant.h"

/* y = swiglu(x) with the matrices in the [out, in] orientation of GGUF: w1
 * and w3 [h, d], w2 [d_out, h] (any type and layout hmx_gemm_quant takes).
 * x [T, d] and y [T, d_out] are f32 host tensors, or f32 device tensors
 * when all three matrices have GPU copies (hmx_qmatrix.dev: one device call
 * of the backend that made them); ga and gb are host scratch of T * h
 * floats each (unused, and may be NULL, for device tensors). The bits are those of hmx_swiglu on the dequantized,
 * transposed weights (docs/NUMERICS.md §swiglu): a = x W1^T and b = x W3^T
 * as sequential chains from +0, g = silu(a) * b, y = g W2^T one chain per
 * output over u in order.
 *
 * A backend that reads G16 swiglu weights (HMX_WG16_SWIGLU) gets the three
 * in one fused call when they are F32, F16 or BF16 of one type in G16 with
 * h and d_out multiples of 16, in the exact tier; any other case runs as
 * hmx_gemm_quant, the gate, hmx_gemm_quant. */
hmx_status hmx_swiglu_quant(const hmx_context *ctx, const hmx_tensor *x, const hmx_qmatrix *w1,
                            const hmx_qmatrix *w3, const hmx_qmatrix *w2, hmx_tensor *y,
                            float *ga, float *gb);

#endif
