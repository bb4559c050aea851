/* neon gemm with B in the G16 layout (simd/neon/neon_gemm_g16.c), and the
 * tile of neon_gemm.c it shares. */
#ifndef HMX_NEON_GEMM_G16_H
#define HMX_NEON_GEMM_G16_H

#include "backend.h"

#define HMX_NEON_GEMM_MR 4 /* rows of a tile */

/* g->bq in the G16 layout (g->blayout == HMX_QLAYOUT_G16, HMX_WG16_GEMM). */
hmx_status hmx_neon_gemm_g16(const hmx_gemm_args *g);

/* C[0 .. mr) x [0 .. 16) = bias (16 floats) or +0, then the fmas over
 * p = 0 .. k-1 in order; B as [K][ldb], mr <= HMX_NEON_GEMM_MR. */
void hmx_neon_gemm_tile(const float *a, const float *b, const float *bias, float *c, int64_t lda,
                        int64_t ldb, int64_t ldc, int64_t k, int mr);

#endif
