/* avx512 kernels: rowops (rmsnorm, layernorm, rope and its angle table; simd/avx512/rowops.c).
 * Also the FMA-peak probe of `hmx bench` (a plain C entry point). */
#ifndef HMX_AVX512_ROWOPS_H
#define HMX_AVX512_ROWOPS_H

#include "backend.h"

hmx_status hmx_avx512_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_avx512_layernorm(const hmx_norm_args *a);
hmx_status hmx_avx512_rope(const hmx_rope_args *a);
/* hmx_rope_table (canon.h), the same checks and bits, on `threads` threads
 * (simd/avx512/rope_table_avx512.c) */
hmx_status hmx_avx512_rope_table(const int32_t *pos, int64_t t, int rot_dim, float base,
                                float *cos_tab, float *sin_tab, int threads);

/* Single-thread peak of independent 16-lane fma chains, GFLOP/s, measured
 * for about `seconds` (hmx bench's compute ceiling). */
double hmx_avx512_fma_peak_gflops(double seconds);

#define HMX_AVX512_RMSNORM hmx_avx512_rmsnorm
#define HMX_AVX512_LAYERNORM hmx_avx512_layernorm
#define HMX_AVX512_ROPE hmx_avx512_rope
#define HMX_AVX512_ROPE_TABLE hmx_avx512_rope_table

#endif
