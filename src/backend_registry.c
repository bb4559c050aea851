/* The list of compiled-in backends. Adding a backend = one line here (plus
 * its folder). `ref` must stay first: it is the definition and the fallback. */
#include "backend.h"

extern const hmx_backend hmx_backend_ref;

const hmx_backend *const hmx_backends[] = {
    &hmx_backend_ref,
};
const int hmx_backends_count = (int)(sizeof hmx_backends / sizeof hmx_backends[0]);
