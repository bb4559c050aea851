/* RoPE with its angle table given: for the library's own callers that
 * rotate several tensors at the same positions (the model forward: Q and K
 * of every layer at one step's positions), so that the table, computed in
 * double by hmx_rope_table (canon.h), is made once per step instead of once
 * per call. Not public API: hmx_rope is the entry point for users. */
#ifndef HMX_ROPE_TABLED_H
#define HMX_ROPE_TABLED_H

#include "hadamix.h"

/* hmx_rope_table (canon.h) by `be`'s SIMD mirror of it on `threads` threads
 * (hmx_backend.rope_table; be must be able to run here, e.g. an hmx_exec's
 * backend), or by the scalar definition where be has none (ref, cuda: its
 * table is made on the host) or is NULL. The same checks and bits either way. */
hmx_status hmx_rope_table_on(const hmx_backend *be, int threads, const int32_t *pos, int64_t t,
                             int rot_dim, float base, float *cos_tab, float *sin_tab);

/* hmx_rope(ctx, x, positions, base, rot_dim, style, y) where cos_tab and
 * sin_tab ([T, rot_dim/2]) are hmx_rope_table(positions, T, rot_dim, base):
 * the same checks of x, y, rot_dim and style, the same kernels, the same
 * bits. The tables are in the memory of x and y: host memory for host
 * tensors, device memory for device tensors (the forward pass on the GPU
 * uploads its step's table once). */
hmx_status hmx_rope_tabled(const hmx_context *ctx, const hmx_tensor *x, const float *cos_tab,
                           const float *sin_tab, int rot_dim, hmx_rope_style style,
                           hmx_tensor *y);

#endif
