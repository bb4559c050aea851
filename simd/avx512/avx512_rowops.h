/* avx512 kernels: rowops (not implemented yet: NULL). */
#ifndef HMX_AVX512_ROWOPS_H
#define HMX_AVX512_ROWOPS_H

#define HMX_AVX512_RMSNORM NULL
#define HMX_AVX512_LAYERNORM NULL
#define HMX_AVX512_ROPE NULL

#endif
