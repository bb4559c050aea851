/* The issue-7 ops (strassen, mhffn, flashmhf, the four sketched attentions)
 * for the avx512 and avx2 backends: src/compose_*.c composes them from this
 * backend's own bit-exact gemm, swiglu and attention (src/compose.h says why
 * that is exact); this template adds the one elementwise piece written with
 * the ISA's vectors, flashmhf's gated hidden value. Header only: the includer
 * has included its ISA's xv_ primitives and vector exp (vexp_<isa>.h) and
 * defines XC_GEMM, XC_SWIGLU, XC_ATTENTION as its kernels; it then writes
 * HMX_COMPOSE_DEFINE(hmx_<isa>, xc_kernels). */
#ifndef HMX_COMPOSE_X86_H
#define HMX_COMPOSE_X86_H

#include "compose.h"

/* §flashmhf, §E: h = (silu(a) * b) * w per lane: xv_siluf is hmx_siluf lane
 * for lane, then two rounded products in the reference's order. The tail
 * (n mod XV_W) goes through the same vector code with masked loads and
 * stores (the +0 lanes are computed and dropped). */
static void xc_gated_silu(const float *a, const float *b, float w, float *h, int64_t n) {
  const xv_v wv = xv_set1(w);
  int64_t u = 0;
  for (; u + XV_W <= n; u += XV_W)
    xv_store(h + u, xv_mul(xv_mul(xv_siluf(xv_load(a + u)), xv_load(b + u)), wv));
  if (u < n) {
    const xv_m m = xv_lanes(n - u);
    xv_storen(h + u, m, xv_mul(xv_mul(xv_siluf(xv_loadn(a + u, m)), xv_loadn(b + u, m)), wv));
  }
}

/* The sketches' key selection: the reference's source compiled here with
 * -mfma (fma() and sqrt() one instruction each, same bits) and SS_FAST
 * (independent chains advance together; each keeps its order). */
#define SS_FAST /* interleaved chains, same bits */
#define SS_LINKAGE static
#define SS_LEVERAGE xc_select_leverage
#define SS_LEWIS xc_select_lewis
#define SS_PRIORITY xc_select_priority
#include "sketch_select_body.h"

static const hmx_compose_kernels xc_kernels = {XC_GEMM, XC_SWIGLU, XC_ATTENTION, xc_gated_silu,
                                               xc_select_leverage, xc_select_lewis,
                                               xc_select_priority};

#endif
