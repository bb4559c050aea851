/* avx2 kernels: strassen, mhffn, flashmhf and the sketched attentions
 * (simd/avx2/compose_avx2.c, composed by src/compose_*.c). */
#ifndef HMX_AVX2_COMPOSE_H
#define HMX_AVX2_COMPOSE_H

#include "compose.h"

HMX_COMPOSE_DECLARE(hmx_avx2)

#define HMX_AVX2_STRASSEN hmx_avx2_strassen
#define HMX_AVX2_MHFFN hmx_avx2_mhffn
#define HMX_AVX2_FLASHMHF hmx_avx2_flashmhf
#define HMX_AVX2_LINFORMER hmx_avx2_linformer
#define HMX_AVX2_LEVATTENTION hmx_avx2_levattention
#define HMX_AVX2_LEWIS hmx_avx2_lewis
#define HMX_AVX2_PRIORITY hmx_avx2_priority

#endif
