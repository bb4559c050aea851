/* avx2 kernels: rowops (not implemented yet: NULL). */
#ifndef HMX_AVX2_ROWOPS_H
#define HMX_AVX2_ROWOPS_H

#define HMX_AVX2_RMSNORM NULL
#define HMX_AVX2_LAYERNORM NULL
#define HMX_AVX2_ROPE NULL

#endif
