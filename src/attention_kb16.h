/* Attention over a KV cache whose K is in the blocked layout of
 * HMX_KB16_ATTENTION (src/backend.h): for the model's forward pass
 * (src/model_forward.c), whose cache stores K that way so that a decode
 * step's dots need no transposes. Not public API: hmx_attention is the
 * entry point for users. */
#ifndef HMX_ATTENTION_KB16_H
#define HMX_ATTENTION_KB16_H

#include "hadamix.h"

/* hmx_attention(ctx, q, k, v, p, o) where k's shape and dtype are those of
 * the row-major K but its data (host memory) holds the keys in blocks of
 * 16: key j, element e of kv head g in batch b at element
 * (((b * Hkv + g) * kblocks + j / 16) * D + e) * 16 + j % 16, kblocks a
 * multiple of 4 with 16 * kblocks >= Skv, every element up to
 * B * Hkv * kblocks * 16 * D readable. The same checks and the same bits:
 * a backend that reads the layout (HMX_KB16_ATTENTION, exact tier) gets it
 * in place; any other gets the keys copied back to rows first. */
hmx_status hmx_attention_kb16(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                              const hmx_tensor *v, const hmx_attention_params *p, hmx_tensor *o,
                              int64_t kblocks);

#endif
