/* The compiled-in backends' tables, declared once for the two registries
 * that list them (src/backend_registry.c: every backend; src/fast_registry.c:
 * the fast tier's). Each is defined in its backend's folder. */
#ifndef HMX_BACKEND_TABLES_H
#define HMX_BACKEND_TABLES_H

#include "backend.h"

extern const hmx_backend hmx_backend_ref;
#if defined(HMX_WITH_AVX2)
extern const hmx_backend hmx_backend_avx2;
#endif
#if defined(HMX_WITH_AVX512)
extern const hmx_backend hmx_backend_avx512;
#endif
#if defined(HMX_WITH_NEON)
extern const hmx_backend hmx_backend_neon;
#endif
#if defined(HMX_WITH_CUDA)
extern const hmx_backend hmx_backend_cuda;
#endif

#endif
