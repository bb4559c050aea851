/* The list of compiled-in backends. Adding a backend = one line here and its
 * declaration in src/backend_tables.h (plus its folder). `ref` must stay first: it is the definition and the fallback. */
#include "backend_tables.h"

const hmx_backend *const hmx_backends[] = {
    &hmx_backend_ref,
#if defined(HMX_WITH_AVX2)
    &hmx_backend_avx2,
#endif
#if defined(HMX_WITH_AVX512)
    &hmx_backend_avx512,
#endif
#if defined(HMX_WITH_NEON)
    &hmx_backend_neon,
#endif
#if defined(HMX_WITH_CUDA)
    &hmx_backend_cuda,
#endif
};
const int hmx_backends_count = (int)(sizeof hmx_backends / sizeof hmx_backends[0]);
