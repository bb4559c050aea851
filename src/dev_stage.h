/* Staging of 16-bit tensors in device memory, for the ops whose device
 * kernels take f32 (gemm in the exact tier, rmsnorm, layernorm, rope,
 * attention, swiglu): the host staging's rule (ops_stage.h) with device
 * buffers. Each bf16 / f16 input is widened into f32 scratch (exact), the
 * f32 kernel runs, and a bf16 / f16 output is rounded from f32 scratch once
 * (nearest even, as hmx_f32_to_bf16 / _f16), so a call gives the bits of
 * the same call on host tensors. Scratch is allocated, converted and freed
 * in the order of the call's stream (hmx_device_ops: stage_alloc, convert,
 * stage_free): nothing waits. f32 tensors go in place. */
#ifndef HMX_DEV_STAGE_H
#define HMX_DEV_STAGE_H

#include "dispatch.h"

#define HMX_DEV_STAGE_MAX_IN 8

typedef struct hmx_dev_staging {
  const void *in[HMX_DEV_STAGE_MAX_IN]; /* f32 views of the inputs (NULL for NULL) */
  void *out;                            /* f32 view of the output */
  void *scratch[HMX_DEV_STAGE_MAX_IN + 1];
  int nscratch;
} hmx_dev_staging;

/* Widen the 16-bit inputs among ins[0..nin-1] (NULL entries allowed) and
 * make f32 room for a 16-bit output (out NULL: the op writes its output
 * itself, as hadamard_mix, whose alpha and beta alone are staged). On
 * failure whatever was allocated is released by hmx_dev_staging_finish. */
hmx_status hmx_dev_staging_begin(hmx_dev_staging *st, const hmx_exec *ex,
                                 const hmx_tensor *const *ins, int nin, const hmx_tensor *out);
/* After the kernel (status s): round the output into out when s is HMX_OK
 * and out is 16-bit, then release the scratch. Returns the first failure
 * (the caller names the op in its message, as for unstaged device calls). */
hmx_status hmx_dev_staging_finish(hmx_dev_staging *st, const hmx_exec *ex, const hmx_tensor *out,
                                  hmx_status s);

#endif
