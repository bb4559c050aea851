/* neon kernels: rowops (simd/neon/neon_rowops.c). */
#ifndef HMX_NEON_ROWOPS_H
#define HMX_NEON_ROWOPS_H

#include "backend.h"

hmx_status hmx_neon_rmsnorm(const hmx_norm_args *a);
hmx_status hmx_neon_layernorm(const hmx_norm_args *a);
hmx_status hmx_neon_rope(const hmx_rope_args *a);

#define HMX_NEON_RMSNORM hmx_neon_rmsnorm
#define HMX_NEON_LAYERNORM hmx_neon_layernorm
#define HMX_NEON_ROPE hmx_neon_rope

#endif
