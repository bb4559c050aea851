/* The CPU fast-tier table (src/fast.h), shared by the avx2, avx512 and neon
 * backends: what each op runs in the fast tier, or why it stays exact. */
#include "cpu_fast.h"
#include "cpu.h"
#include "fast.h"

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

const hmx_fast_ops hmx_cpu_fast_ops = {
    "cpu-fast",
#if defined(HMX_HAVE_DNNL)
    hmx_fast_gemm_dnnl, "oneDNN matmul f32 (primitive cached per shape); M = 1: the exact kernel", NULL,
#else
    NULL, NULL, "built without oneDNN (libdnnl-dev)",
#endif
#if defined(HMX_HAVE_DNNL)
    fast_attention, "online softmax, " EXP_USES "; Sq > 4: 256-key blocks, Q K^T and P V by dnnl_sgemm; Sq <= 4: avx512 one block per row, else 64-key blocks, portable", NULL,
#else
    fast_attention, "online softmax in 64-key blocks, " EXP_USES, NULL,
#endif
#if defined(HMX_HAVE_DNNL)
    hmx_fast_swiglu, "oneDNN matmul x3 + " EXP_USES " silu; T = 1: the exact kernel", NULL,
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
};
