/* The fast tier's dispatch (docs/NUMERICS.md, "Fast tier").
 *
 * A backend that changes ops in the fast tier has one hmx_fast_ops table
 * (listed in src/fast_registry.c). Its kernels take the same argument
 * structs as the exact ones (f32, contiguous, staged by src/ops.c; 16-bit
 * weights are staged to f32 for them, except bf16 where weights16 says). A
 * NULL kernel means "the exact kernel runs in the fast tier too", and its
 * *_why_not says why (e.g. the library it needs was absent at build time),
 * so `hmx ops` can say so. */
#ifndef HMX_FAST_H
#define HMX_FAST_H

#include "backend.h"

struct hmx_device_call; /* src/dispatch.h */

typedef struct hmx_fast_ops {
  const char *name;  /* e.g. "cpu-fast" */
  hmx_status (*gemm)(const hmx_gemm_args *a);
  const char *gemm_uses, *gemm_why_not;
  hmx_status (*attention)(const hmx_attention_args *a);
  const char *attention_uses, *attention_why_not;
  hmx_status (*swiglu)(const hmx_swiglu_args *a);
  const char *swiglu_uses, *swiglu_why_not;
  /* Device memory (src/dispatch.h): the fast gemm on the caller's device
   * buffers and stream; NULL: device-memory gemm stays exact. For it a, b
   * and c may also be bf16 or f16 (all three, in c->io_dtype; then no bias). */
  hmx_status (*dev_gemm)(const hmx_gemm_args *a, const struct hmx_device_call *c);
  /* Device memory: the fast attention on f32 device buffers; NULL: exact. */
  hmx_status (*dev_attention)(const hmx_attention_args *a, const struct hmx_device_call *c);
  /* Host gemm with M <= exact_rows and swiglu with T <= exact_rows run the
   * backend's exact kernel in the fast tier too (0: never). There the
   * product is a GEMV bound by reading the weights, and the exact kernel
   * reads them faster than the library does (cpu_fast/fast_table.c says by
   * how much); its result is within every fast bound, being exact. */
  int exact_rows;
  /* The 16-bit weight forms this machine's fast kernels take unconverted
   * (HMX_FAST_W_* bits; NULL: none), to kernels that round the activations
   * to bf16 ("gemm with bf16 weights" in docs/NUMERICS.md):
   * HMX_FAST_W_BF16_ROWS: host gemm and swiglu pass bf16 tensors
   *   (contiguous) as they are (hmx_gemm_args.b16, hmx_swiglu_args.w*_16)
   *   instead of staging them to f32;
   * HMX_FAST_W_BF16_G16: gemm_g16 and swiglu_g16 below take bf16 matrices
   *   in the G16 layout (src/gemm_quant.c, src/swiglu_quant.c), for more
   *   rows than exact_rows. */
  unsigned (*weights16)(void);
  /* c = a B^T with B the bf16 G16 matrix in bq (hmx_gemm_args: qtype BF16,
   * blayout HMX_QLAYOUT_G16, trans_b 1); swiglu on w1_16, w3_16, w2_16 in
   * HMX_WG16_SWIGLU's layout (wdt HMX_BF16, wlayout HMX_QLAYOUT_G16). */
  hmx_status (*gemm_g16)(const hmx_gemm_args *a);
  hmx_status (*swiglu_g16)(const hmx_swiglu_args *a);
} hmx_fast_ops;

enum { HMX_FAST_W_BF16_ROWS = 1u, HMX_FAST_W_BF16_G16 = 2u };

/* The weights16() bits backend b's fast tier may use (0 for none): the
 * kernels' own, less HMX_FAST_W_BF16_G16 on a backend whose ISA is not
 * AVX-512 (its table says which: src/fast_registry.c). */
unsigned hmx_fast_weights16(const hmx_backend *b);

/* The fast kernels of backend b, or NULL when b has no fast tier (ref: it is
 * the definition; every op of b then runs exactly in the fast tier too). */
const hmx_fast_ops *hmx_fast_ops_of(const hmx_backend *b);

/* The resolved tier of a context (ctx may be NULL): HMX_TIER_EXACT or
 * HMX_TIER_FAST, or an error for an invalid value (message set). */
hmx_status hmx_tier_resolve(const hmx_context *ctx, hmx_tier *out);

#endif
