/* neon kernels: strassen, mhffn, flashmhf and the sketched attentions
 * (simd/neon/neon_compose.c, composed by src/compose_*.c). */
#ifndef HMX_NEON_COMPOSE_H
#define HMX_NEON_COMPOSE_H

#include "compose.h"

HMX_COMPOSE_DECLARE(hmx_neon)

#define HMX_NEON_STRASSEN hmx_neon_strassen
#define HMX_NEON_MHFFN hmx_neon_mhffn
#define HMX_NEON_FLASHMHF hmx_neon_flashmhf
#define HMX_NEON_LINFORMER hmx_neon_linformer
#define HMX_NEON_LEVATTENTION hmx_neon_levattention
#define HMX_NEON_LEWIS hmx_neon_lewis
#define HMX_NEON_PRIORITY hmx_neon_priority

#endif
