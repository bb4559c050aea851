/* Attention over a KV cache in the layout of HMX_KB16_ATTENTION
 * (src/backend.h): for the model's forward pass (src/model_forward.c),
 * whose cache stores K in blocks of 16 keys (a decode step's dots need no
 * transposes) and V head by head (each head's values one contiguous run).
 * Not public API: hmx_attention is the entry point for users. */
#ifndef HMX_ATTENTION_KB16_H
#define HMX_ATTENTION_KB16_H

#include "hadamix.h"

#include <stdint.h>

/* hmx_attention(ctx, q, k, v, p, o) where k's and v's shapes and dtypes
 * are those of row-major K and V but their data (host memory) is the
 * cache's: the keys in blocks of 16, key j, element e of kv head g in batch
 * b at element (((b * Hkv + g) * kblocks + j / 16) * D + e) * 16 + j % 16;
 * the values head by head, value j at element ((b * Hkv + g) * 16 *
 * kblocks + j) * D + e; kblocks a multiple of 4 with 16 * kblocks >= Skv,
 * every element up to B * Hkv * kblocks * 16 * D of both readable. The same
 * checks and the same bits: a backend that reads the layout
 * (HMX_KB16_ATTENTION, exact tier) gets it in place; any other gets K and V
 * copied back to rows first. */
/* Where the cache layout keeps element e of key (value) j of kv head g in
 * batch b: the one definition of the layout for the C code that writes or
 * reads it element by element (the kernels address it in vectors). */
static inline int64_t hmx_kb16_k_index(int64_t kblocks, int64_t hkv, int64_t d, int64_t b,
                                       int64_t g, int64_t j, int64_t e) {
  return (((b * hkv + g) * kblocks + j / 16) * d + e) * 16 + j % 16;
}
static inline int64_t hmx_kb16_v_index(int64_t kblocks, int64_t hkv, int64_t d, int64_t b,
                                       int64_t g, int64_t j, int64_t e) {
  return ((b * hkv + g) * 16 * kblocks + j) * d + e;
}

/* Positions [from, to) of K (is_k) or V of batch b between the layout at
 * `blocks` and rows at `rows` ([to - from][hkv][d]), elements of es bytes
 * (2 or 4), toward the rows (to_rows) or back into the blocks. Moves bits
 * only (src/kb16_rows.c). */
void hmx_kb16_rows(char *blocks, int64_t kblocks, int64_t hkv, int64_t d, size_t es, int is_k,
                   int64_t b, int64_t from, int64_t to, char *rows, int to_rows);

hmx_status hmx_attention_kb16(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                              const hmx_tensor *v, const hmx_attention_params *p, hmx_tensor *o,
                              int64_t kblocks);

#endif
