/* The fast tier's dispatch (docs/NUMERICS.md, "Fast tier").
 *
 * A backend that changes ops in the fast tier has one hmx_fast_ops table
 * (listed in src/fast_registry.c). Its kernels take the same argument
 * structs as the exact ones (f32, contiguous, staged by src/ops.c; 16-bit
 * weights are always staged to f32 for them). A NULL kernel means "the exact
 * kernel runs in the fast tier too", and its *_why_not says why (e.g. the
 * library it needs was absent at build time), so `hmx ops` can say so. */
#ifndef HMX_FAST_H
#define HMX_FAST_H

#include "backend.h"

struct hmx_device_call; /* src/dispatch.h */

typedef struct hmx_fast_ops {
  const char *name;  /* e.g. "cpu-fast" */
  hmx_status (*gemm)(const hmx_gemm_args *a);
  const char *gemm_uses, *gemm_why_not;
  hmx_status (*attention)(const hmx_attention_args *a);
  const char *attention_uses, *attention_why_not;
  hmx_status (*swiglu)(const hmx_swiglu_args *a);
  const char *swiglu_uses, *swiglu_why_not;
  /* Device memory (src/dispatch.h): the fast gemm on the caller's device
   * buffers and stream; NULL: device-memory gemm stays exact. For it a, b
   * and c may also be bf16 or f16 (all three, in c->io_dtype; then no bias). */
  hmx_status (*dev_gemm)(const hmx_gemm_args *a, const struct hmx_device_call *c);
  /* Device memory: the fast attention on f32 device buffers; NULL: exact. */
  hmx_status (*dev_attention)(const hmx_attention_args *a, const struct hmx_device_call *c);
  /* Host gemm with M <= exact_rows and swiglu with T <= exact_rows run the
   * backend's exact kernel in the fast tier too (0: never). There the
   * product is a GEMV bound by reading the weights, and the exact kernel
   * reads them faster than the library does (cpu_fast/fast_table.c says by
   * how much); its result is within every fast bound, being exact. */
  int exact_rows;
} hmx_fast_ops;

/* The fast kernels of backend b, or NULL when b has no fast tier (ref: it is
 * the definition; every op of b then runs exactly in the fast tier too). */
const hmx_fast_ops *hmx_fast_ops_of(const hmx_backend *b);

/* The resolved tier of a context (ctx may be NULL): HMX_TIER_EXACT or
 * HMX_TIER_FAST, or an error for an invalid value (message set). */
hmx_status hmx_tier_resolve(const hmx_context *ctx, hmx_tier *out);

#endif
