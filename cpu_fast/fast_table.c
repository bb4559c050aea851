/* The CPU fast-tier table (src/fast.h), shared by the avx2, avx512 and neon
 * backends: what each op runs in the fast tier, or why it stays exact. */
#include "cpu_fast.h"
#include "cpu.h"
#include "fast.h"
#include "gemm_quant.h"
#include "gguf.h"
#include "internal.h"

hmx_status hmx_fast_swiglu(const hmx_swiglu_args *a);

const hmx_fast_kernels *hmx_fast_kernels_pick(void) {
#if defined(HMX_WITH_CPU_FAST_AVX512)
  if (hmx_cpu_detect().avx512) return &hmx_fast_kernels_avx512;
#endif
#if defined(HMX_WITH_CPU_FAST_AVX2)
  if (hmx_cpu_detect().avx2_fma) return &hmx_fast_kernels_avx2;
#endif
  return &hmx_fast_kernels_base;
}

static hmx_status fast_attention(const hmx_attention_args *a) {
#if defined(HMX_HAVE_DNNL)
  /* prefill through dnnl_sgemm (at S = 1024 on Zen 4: 5.7x the portable
   * kernel, 1.4x the exact avx512 one); a few queries (decode) take the ISA
   * set's own kernel (avx512: fast_kernels_avx512.c): one sgemm call per
   * head and block costs more than the work there (measured 0.27 -> 1.2 ms
   * at Skv = 1024) */
  if (a->sq > 4) return hmx_fast_attention_dnnl(a);
#endif
  return hmx_fast_kernels_pick()->attention(a);
}

#if defined(HMX_HAVE_SLEEF)
#define EXP_USES "SLEEF expf u10"
#else
#define EXP_USES "hmx_expf (built without SLEEF)"
#endif

/* The 16-bit weights taken as stored (src/fast.h, weights16): bf16 rows by
 * oneDNN's bf16 matmul where it runs AVX512_BF16 code (oneDNN picks its own
 * ISA whatever the backend, as for f32); bf16 G16 matrices by
 * fast_bf16_g16.c where the CPU has AVX512_BF16 (src/fast_registry.c lets
 * only the avx512 backend use that kernel: our own code for the avx2
 * backend stays within AVX2). */
static unsigned weights16(void) {
  unsigned w = 0;
#if defined(HMX_HAVE_DNNL)
  if (hmx_fast_gemm_bf16_ok()) w |= HMX_FAST_W_BF16_ROWS;
#endif
#if defined(HMX_WITH_FAST_BF16)
  if (hmx_cpu_detect().avx512_bf16) w |= HMX_FAST_W_BF16_G16;
#endif
  return w;
}

#if defined(HMX_WITH_FAST_BF16)
static hmx_status gemm_g16(const hmx_gemm_args *g) {
  if (g->qtype != HMX_GGML_BF16 || g->blayout != HMX_QLAYOUT_G16 || !g->bq || !g->trans_b ||
      g->bias)
    return hmx_fail(HMX_ERR_INTERNAL, "gemm (fast): G16 weights must be bf16, without bias");
  return hmx_fast_gemm_g16_bf16(g->a, g->bq, g->c, g->m, g->n, g->k, g->threads);
}
#endif

const hmx_fast_ops hmx_cpu_fast_ops = {
    "cpu-fast",
#if defined(HMX_HAVE_DNNL)
    hmx_fast_gemm_dnnl, "oneDNN matmul f32 (primitive cached per shape); bf16 weights: "
    "activations rounded to bf16, oneDNN's bf16 matmul (where it has AVX512_BF16), G16 ones "
    "(GGUF, avx512) our AVX512_BF16 kernel; M = 1: the exact kernel", NULL,
#else
    NULL, NULL, "built without oneDNN (libdnnl-dev)",
#endif
#if defined(HMX_HAVE_DNNL)
    fast_attention, "online softmax, " EXP_USES "; Sq > 4: 256-key blocks, Q K^T and P V by dnnl_sgemm; Sq <= 4: avx512 one block per row, else 64-key blocks, portable", NULL,
#else
    fast_attention, "online softmax in 64-key blocks, " EXP_USES, NULL,
#endif
#if defined(HMX_HAVE_DNNL)
    hmx_fast_swiglu, "oneDNN matmul x3 (bf16 weights: as gemm) + " EXP_USES " silu; T = 1: "
    "the exact kernel", NULL,
#else
    NULL, NULL, "built without oneDNN (libdnnl-dev)",
#endif
    NULL, /* dev_gemm: the CPU backends take no device memory */
    NULL, /* dev_attention: likewise */
    /* exact_rows: one row (decode) is a GEMV bound by reading the weights,
     * which the exact avx2/avx512 kernels do faster than oneDNN 2.6's
     * dnnl_sgemm (its matmul primitive is slower still at M = 1): Zen 4, 2
     * threads, weights cycled through 56-75 MiB or the 147 MiB LM head, so
     * from memory, fast/exact speed 0.76-0.86x (avx2 backend, dnnl held to
     * AVX2) and 0.79-0.80x (avx512), 1 thread 0.58-0.67x; only the
     * 2048 x 768 product was faster in oneDNN (1.02-1.33x). In `hmx
     * bench-model` the swap took the tiny model's fast/exact decode from
     * 0.80x to 0.98x. */
    1,
    weights16,
#if defined(HMX_WITH_FAST_BF16)
    gemm_g16,
    hmx_fast_swiglu_g16_bf16,
#else
    NULL,
    NULL,
#endif
};
