/* The issue-7 ops as compositions of a backend's own bit-exact kernels.
 *
 * strassen, mhffn, flashmhf and the four sketched attentions are, in the
 * reference (ref/strassen.c, ref/mhffn.c, ref/flashmhf.c,
 * ref/sketch_attention.c), built from loops whose evaluation order is
 * exactly that of gemm (one fma chain over the inner index from the bias or
 * +0), swiglu and attention (docs/NUMERICS.md §gemm, §swiglu, §attention).
 * So a backend that has bit-exact gemm, swiglu and attention kernels gets
 * bit-exact versions of the seven ops by calling them on the right operands:
 * this file's functions do the ISA-independent part (splitting, padding,
 * gathering heads and kept keys, elementwise block sums) and call the
 * backend's kernels through `hmx_compose_kernels` for everything else.
 * Each backend (simd/<isa>/) fills the table with its own kernels and the
 * one elementwise function below written with its vectors.
 *
 * Which rule each step follows is said where it happens (src/compose_*.c).
 * Threads split independent work only: the heads of mhffn/flashmhf, the
 * seven top-level products of strassen, the (batch, kv head) pairs of the
 * key selection, or else the rows/tiles inside each backend kernel call;
 * none of it changes a bit (docs/NUMERICS.md, "What a backend may do"). */
#ifndef HMX_COMPOSE_H
#define HMX_COMPOSE_H

#include "backend.h"

typedef struct hmx_compose_kernels {
  hmx_status (*gemm)(const hmx_gemm_args *a);
  hmx_status (*swiglu)(const hmx_swiglu_args *a);
  hmx_status (*attention)(const hmx_attention_args *a);
  /* h[u] = (silu(a[u]) * b[u]) * w for u < n: §E SiLU (one lane = hmx_siluf),
   * then two rounded products in that order (§flashmhf). */
  void (*gated_silu)(const float *a, const float *b, float w, float *h, int64_t n);
  /* The key selection of the sketches: ref/sketch_select_body.h compiled
   * with the backend's flags (same source, same bits), or NULL for the
   * reference's own hmx_ref_select_* (ref/sketch.h). */
  hmx_status (*select_leverage)(const float *k, int64_t ld, int64_t n, int64_t d, double lambda,
                                int64_t kk, int32_t *idx);
  hmx_status (*select_lewis)(const float *k, int64_t ld, int64_t n, int64_t d, double lambda,
                             int iters, int64_t kk, int32_t *idx);
  hmx_status (*select_priority)(const float *k, int64_t ld, int64_t n, int64_t d, uint64_t seed,
                                uint64_t stream, int64_t kk, int32_t *idx);
} hmx_compose_kernels;

hmx_status hmx_compose_strassen(const hmx_strassen_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_mhffn(const hmx_mhffn_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_flashmhf(const hmx_flashmhf_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_linformer(const hmx_sketch_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_levattention(const hmx_sketch_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_lewis(const hmx_sketch_args *a, const hmx_compose_kernels *k);
hmx_status hmx_compose_priority(const hmx_sketch_args *a, const hmx_compose_kernels *k);

/* Define the seven backend kernels `prefix_strassen` .. `prefix_priority`
 * and `prefix_gated_silu` (the backend table's gated_silu, src/backend.h)
 * (external linkage) on the kernel table `table`, in a backend's file. */
#define HMX_COMPOSE_DEFINE(prefix, table)                                                      \
  hmx_status prefix##_strassen(const hmx_strassen_args *a) { return hmx_compose_strassen(a, &table); } \
  hmx_status prefix##_mhffn(const hmx_mhffn_args *a) { return hmx_compose_mhffn(a, &table); }          \
  hmx_status prefix##_flashmhf(const hmx_flashmhf_args *a) { return hmx_compose_flashmhf(a, &table); } \
  hmx_status prefix##_linformer(const hmx_sketch_args *a) { return hmx_compose_linformer(a, &table); } \
  hmx_status prefix##_levattention(const hmx_sketch_args *a) {                                 \
    return hmx_compose_levattention(a, &table);                                                \
  }                                                                                            \
  hmx_status prefix##_lewis(const hmx_sketch_args *a) { return hmx_compose_lewis(a, &table); }          \
  hmx_status prefix##_priority(const hmx_sketch_args *a) { return hmx_compose_priority(a, &table); } \
  void prefix##_gated_silu(const float *a, const float *b, float w, float *h, int64_t n) {    \
    table.gated_silu(a, b, w, h, n);                                                           \
  }

#define HMX_COMPOSE_DECLARE(prefix)                                  \
  hmx_status prefix##_strassen(const hmx_strassen_args *a);          \
  hmx_status prefix##_mhffn(const hmx_mhffn_args *a);                \
  hmx_status prefix##_flashmhf(const hmx_flashmhf_args *a);          \
  hmx_status prefix##_linformer(const hmx_sketch_args *a);           \
  hmx_status prefix##_levattention(const hmx_sketch_args *a);        \
  hmx_status prefix##_lewis(const hmx_sketch_args *a);               \
  hmx_status prefix##_priority(const hmx_sketch_args *a);           \
  void prefix##_gated_silu(const float *a, const float *b, float w, float *h, int64_t n);

#endif
