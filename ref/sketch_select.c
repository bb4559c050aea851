/* Reference key selection of the sketched attentions (docs/NUMERICS.md
 * §sketch). Leverage scores and Lewis weights are computed in binary64: the
 * selection is a discontinuous function of the scores, and a float32 Gram
 * matrix of nearly dependent keys (small lambda) is too ill-conditioned for
 * the chosen set to mean anything; in binary64 the scores are close to exact,
 * so the selection is the exact-arithmetic one except at near-ties. Every
 * binary64 operation is a correctly rounded +, -, *, /, sqrt or fma in a
 * fixed order, so the bits are the same everywhere. */
#define SS_LINKAGE
#define SS_LEVERAGE hmx_ref_select_leverage
#define SS_LEWIS hmx_ref_select_lewis
#define SS_PRIORITY hmx_ref_select_priority
#include "sketch_select_body.h" /* the code, shared with the SIMD backends */
