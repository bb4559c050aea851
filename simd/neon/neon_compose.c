/* neon strassen, mhffn, flashmhf, linformer, levattention, lewis, priority:
 * compositions of this backend's gemm, swiglu and attention (src/compose.h,
 * src/compose_*.c) plus flashmhf's gated hidden value on 4-lane vectors. */
#include "neon_compose.h"
#include "neon_attention.h"
#include "neon_gemm.h"
#include "neon_math.h"
#include "neon_swiglu.h"

#include <string.h>

/* §flashmhf, §E: h = (silu(a) * b) * w per lane (hmx_neon_siluf is hmx_siluf
 * lane for lane, then two rounded products in the reference's order). The
 * last 1-3 values go through the same vector code from a zero-padded copy. */
static void gated_silu(const float *a, const float *b, float w, float *h, int64_t n) {
  const float32x4_t wv = vdupq_n_f32(w);
  int64_t u = 0;
  for (; u + 4 <= n; u += 4)
    vst1q_f32(h + u, vmulq_f32(vmulq_f32(hmx_neon_siluf(vld1q_f32(a + u)), vld1q_f32(b + u)), wv));
  if (u < n) {
    float ta[4] = {0}, tb[4] = {0}, th[4];
    memcpy(ta, a + u, (size_t)(n - u) * sizeof(float));
    memcpy(tb, b + u, (size_t)(n - u) * sizeof(float));
    vst1q_f32(th, vmulq_f32(vmulq_f32(hmx_neon_siluf(vld1q_f32(ta)), vld1q_f32(tb)), wv));
    memcpy(h + u, th, (size_t)(n - u) * sizeof(float));
  }
}

/* The sketches' key selection: the reference's source compiled again with
 * SS_FAST (independent chains advance together; each keeps its order, so
 * the bits are the reference's; AArch64 has hardware fma and sqrt anyway). */
#define SS_FAST
#define SS_LINKAGE static
#define SS_LEVERAGE select_leverage
#define SS_LEWIS select_lewis
#define SS_PRIORITY select_priority
#include "sketch_select_body.h"

static const hmx_compose_kernels kernels = {hmx_neon_gemm, hmx_neon_swiglu, hmx_neon_attention,
                                            gated_silu, select_leverage, select_lewis,
                                            select_priority};

HMX_COMPOSE_DEFINE(hmx_neon, kernels)
