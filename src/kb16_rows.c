/* K or V between the KV cache's blocked layout and rows (src/attention_kb16.h):
 * for the attention call whose kernel reads rows (src/ops.c) and for the
 * moves of a cache between the host and its GPU copy (src/kv_cache.c). */
#include "attention_kb16.h"

#include <string.h>

/* A value of V's head run is D contiguous elements (one memcpy); a key's
 * elements lie 16 apart (hmx_kb16_k_index: e -> e + 16), each moved with a
 * memcpy of a constant size: one load and one store, and no aliasing
 * question (the cache holds floats or 16-bit words). Why not element by
 * element through the index functions: that was most of a cuda decode
 * step's attention call (0.65 ms, session 57). */
void hmx_kb16_rows(char *blocks, int64_t kblocks, int64_t hkv, int64_t d, size_t es, int is_k,
                   int64_t b, int64_t from, int64_t to, char *rows, int to_rows) {
  for (int64_t j = from; j < to; j++)
    for (int64_t g = 0; g < hkv; g++) {
      char *r = rows + (size_t)(((j - from) * hkv + g) * d) * es;
      char *blk = blocks + (size_t)(is_k ? hmx_kb16_k_index(kblocks, hkv, d, b, g, j, 0)
                                         : hmx_kb16_v_index(kblocks, hkv, d, b, g, j, 0)) * es;
      if (!is_k) {
        if (to_rows) memcpy(r, blk, (size_t)d * es);
        else memcpy(blk, r, (size_t)d * es);
      } else if (es == 4) {
        for (int64_t e = 0; e < d; e++)
          if (to_rows) memcpy(r + 4 * e, blk + 64 * e, 4);
          else memcpy(blk + 64 * e, r + 4 * e, 4);
      } else {
        for (int64_t e = 0; e < d; e++)
          if (to_rows) memcpy(r + 2 * e, blk + 32 * e, 2);
          else memcpy(blk + 32 * e, r + 2 * e, 2);
      }
    }
}
