/* cuda strassen, mhffn, flashmhf, linformer, levattention, lewis, priority:
 * the compositions of src/compose.h over this backend's gemm, swiglu and
 * attention kernels (cuda/kernels.cu, through their host-pointer entry
 * points). The parts that are not a gemm, swiglu or attention stay on the
 * host in plain C: strassen's block sums and padding, the heads' gathering,
 * flashmhf's gated hidden value (below) and the sketches' key selection
 * (the reference's own hmx_ref_select_*, binary64). Every device call copies
 * its operands in and its result out, so these ops are correct, not fast: a
 * strassen of depth r makes 7^r gemm calls, each with its PCIe round trip.
 * They exist so that every op of the reference runs, and is checked bit for
 * bit, on the cuda backend. */
#include "backend.h"
#include "compose.h"
#include "cuda_kernels.h"
#include "hadamix.h"

/* §flashmhf, §E: h = (silu(a) * b) * w, two rounded products in the
 * reference's order; hmx_siluf is the §E SiLU itself. */
static void gated_silu(const float *a, const float *b, float w, float *h, int64_t n) {
  for (int64_t u = 0; u < n; u++) h[u] = (hmx_siluf(a[u]) * b[u]) * w;
}

static const hmx_compose_kernels kernels = {hmx_cuda_gemm, hmx_cuda_swiglu, hmx_cuda_attention,
                                            gated_silu, NULL, NULL, NULL};

HMX_COMPOSE_DEFINE(hmx_cuda, kernels)
