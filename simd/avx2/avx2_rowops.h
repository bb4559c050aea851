/* avx2 kernels: rowops (rmsnorm, layernorm, rope and its angle table; simd/avx2/rowops.c).
 * Also the FMA-peak probe of `hmx bench` (a plain C entry point). */
#ifndef HMX_AVX2_ROWOPS_H
#define HMX_AVX2_ROWOPS_H

#include "backend.h"

hmx_status hmx_avx2_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_avx2_layernorm(const hmx_norm_args *a);
hmx_status hmx_avx2_rope(const hmx_rope_args *a);
/* hmx_rope_table (canon.h), the same checks and bits, on `threads` threads
 * (simd/avx2/rope_table_avx2.c) */
hmx_status hmx_avx2_rope_table(const int32_t *pos, int64_t t, int rot_dim, float base,
                                float *cos_tab, float *sin_tab, int threads);

/* Single-thread peak of independent 8-lane fma chains, GFLOP/s, measured
 * for about `seconds` (hmx bench's compute ceiling without AVX-512). */
double hmx_avx2_fma_peak_gflops(double seconds);

#define HMX_AVX2_RMSNORM hmx_avx2_rmsnorm
#define HMX_AVX2_LAYERNORM hmx_avx2_layernorm
#define HMX_AVX2_ROPE hmx_avx2_rope
#define HMX_AVX2_ROPE_TABLE hmx_avx2_rope_table

#endif
