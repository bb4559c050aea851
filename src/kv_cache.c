/* The KV cache (docs/MODEL.md "KV cache"): on the host in the blocked
 * layout of hmx_attention_kb16, and, once a forward pass runs on the GPU
 * (model_forward.c, docs/MODEL.md "The forward pass on the GPU"), also on
 * the GPU as rows. Each side knows how many positions it holds current;
 * a step on one side first brings the other side's newer positions over,
 * so a cache may move between the two paths at any step (a trace callback
 * runs a step on the host, for one). Both sides store the same values:
 * moving them changes no bit. */
#include "model_internal.h"
#include "attention_kb16.h"
#include "dispatch.h"
#include "internal.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

hmx_status hmx_kv_cache_new_typed(const hmx_model *m, int64_t capacity, hmx_dtype dtype,
                                  hmx_kv_cache **out) {
  hmx_clear_error();
  if (!m || !out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_kv_cache_new: NULL argument");
  *out = NULL;
  if (dtype != HMX_F32 && dtype != HMX_BF16 && dtype != HMX_F16)
    return hmx_fail(HMX_ERR_DTYPE, "hmx_kv_cache_new: the cache stores f32, bf16 or f16, not %s",
                    hmx_dtype_name(dtype));
  if (capacity == 0) capacity = m->cfg.context;
  if (capacity < 1 || capacity > m->cfg.context)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_kv_cache_new: capacity %lld is outside [1, "
                    "context = %d]", (long long)capacity, m->cfg.context);
  hmx_kv_cache *c = calloc(1, sizeof *c);
  if (!c) return hmx_fail(HMX_ERR_NO_MEMORY, "KV cache: out of memory");
  c->model = m;
  c->n_layer = m->cfg.n_layer;
  c->capacity = capacity;
  c->row = (int64_t)m->cfg.n_kv_head * m->cfg.head_dim;
  c->dtype = dtype;
  c->kblocks = (capacity + 63) / 64 * 4;
  size_t n; /* elements of K, and of V: n_layer x 16 * kblocks positions x row */
  if (!hmx_mul_size((size_t)m->cfg.n_layer * 16, (size_t)c->kblocks, &n) ||
      !hmx_mul_size(n, (size_t)c->row, &n) ||
      !(c->k = hmx_alloc_array(n, hmx_dtype_size(dtype))) ||
      !(c->v = hmx_alloc_array(n, hmx_dtype_size(dtype)))) {
    const long long row = (long long)c->row;
    hmx_kv_cache_free(c);
    return hmx_fail(HMX_ERR_NO_MEMORY, "KV cache: cannot allocate 2 x %d layers x %lld "
                    "positions x %lld %s values", m->cfg.n_layer, (long long)capacity, row,
                    hmx_dtype_name(dtype));
  }
  *out = c;
  return HMX_OK;
}

hmx_status hmx_kv_cache_new(const hmx_model *m, int64_t capacity, hmx_kv_cache **out) {
  return hmx_kv_cache_new_typed(m, capacity, HMX_F32, out);
}

hmx_dtype hmx_kv_cache_dtype(const hmx_kv_cache *c) { return c ? c->dtype : HMX_F32; }

void hmx_kv_cache_free(hmx_kv_cache *c) {
  if (!c) return;
  if (c->dev) c->dev->resident_free(c->dk);
  free(c->k);
  free(c->v);
  free(c);
}

int64_t hmx_kv_cache_len(const hmx_kv_cache *c) { return c ? c->len : 0; }

hmx_status hmx_kv_cache_truncate(hmx_kv_cache *c, int64_t new_len) {
  hmx_clear_error();
  if (!c) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_kv_cache_truncate: cache is NULL");
  if (new_len < 0 || new_len > c->len)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_kv_cache_truncate: length %lld is outside "
                    "[0, %lld]", (long long)new_len, (long long)c->len);
  c->len = new_len;
  if (c->host_len > new_len) c->host_len = new_len;
  if (c->dev_len > new_len) c->dev_len = new_len;
  return HMX_OK;
}

hmx_tensor hmx_kv_cache_blocks(const hmx_kv_cache *c, int is_k, int layer, int64_t len) {
  const hmx_model_config *cfg = &c->model->cfg;
  char *p = (char *)(is_k ? c->k : c->v) +
            (size_t)layer * (size_t)c->kblocks * 16 * (size_t)c->row * hmx_dtype_size(c->dtype);
  return hmx_tensor_4d(p, c->dtype, 1, len, cfg->n_kv_head, cfg->head_dim);
}

hmx_tensor hmx_kv_cache_rows(const hmx_kv_cache *c, int is_k, int layer, int64_t len) {
  const hmx_model_config *cfg = &c->model->cfg;
  char *p = (char *)(is_k ? c->dk : c->dv) +
            (size_t)layer * (size_t)c->capacity * (size_t)c->row * hmx_dtype_size(c->dtype);
  hmx_tensor t = hmx_tensor_4d(p, c->dtype, 1, len, cfg->n_kv_head, cfg->head_dim);
  t.memory = HMX_MEMORY_CUDA;
  return t;
}

/* One value as the cache stores it: copied, or rounded to nearest even for
 * a 16-bit cache (the conversion every 16-bit output of the library uses). */
static void cache_put(hmx_dtype dt, void *dst, size_t i, float x) {
  if (dt == HMX_F32) ((float *)dst)[i] = x;
  else if (dt == HMX_BF16) ((uint16_t *)dst)[i] = hmx_f32_to_bf16(x);
  else ((uint16_t *)dst)[i] = hmx_f32_to_f16(x);
}

/* Where value e of head g at position t lies in layer 0's blocks of K
 * (is_k) or V, as an element index. */
static int64_t block_index(const hmx_kv_cache *c, int is_k, int64_t g, int64_t t, int64_t e) {
  const int64_t H = c->model->cfg.n_kv_head, D = c->model->cfg.head_dim;
  return is_k ? hmx_kb16_k_index(c->kblocks, H, D, 0, g, t, e)
              : hmx_kb16_v_index(c->kblocks, H, D, 0, g, t, e);
}

void hmx_kv_cache_store(hmx_kv_cache *c, int is_k, int layer, int64_t at, const float *src,
                        int64_t n, int threads) {
  const int64_t D = c->model->cfg.head_dim, H = c->model->cfg.n_kv_head;
  void *dst = hmx_kv_cache_blocks(c, is_k, layer, 0).data;
  const int nt = hmx_thread_count(threads, n * H * D >= 65536 ? H : 1);
  HMX_OMP_FOR(nt)
  for (int64_t g = 0; g < H; g++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t e = 0; e < D; e++)
        cache_put(c->dtype, dst, (size_t)block_index(c, is_k, g, at + i, e),
                  src[i * c->row + g * D + e]);
}

/* Positions [from, to) of one layer's K or V between the blocks and rows of
 * those positions (`rows`, [to - from][row] of the cache's dtype), in the
 * direction to_rows says. Moves bits only. */
static void blocks_rows(hmx_kv_cache *c, int is_k, int layer, int64_t from, int64_t to,
                        char *rows, int to_rows) {
  hmx_kb16_rows(hmx_kv_cache_blocks(c, is_k, layer, 0).data, c->kblocks,
                c->model->cfg.n_kv_head, c->model->cfg.head_dim, hmx_dtype_size(c->dtype), is_k,
                0, from, to, rows, to_rows);
}

/* A buffer of n positions' rows of the cache's dtype; NULL after a failure. */
static char *rows_buffer(const hmx_kv_cache *c, int64_t n) {
  char *p = hmx_alloc_array((size_t)(n * c->row), hmx_dtype_size(c->dtype));
  if (!p) hmx_fail(HMX_ERR_NO_MEMORY, "KV cache: out of memory moving %lld positions",
                   (long long)n);
  return p;
}

/* Positions [from, len) of every layer's K and V from the host's blocks to
 * the GPU's rows (up) or back, through one host buffer of rows. to_device
 * has taken the bytes when it returns, and to_host has waited for them, so
 * the buffer serves every layer in turn. */
static hmx_status move_positions(hmx_kv_cache *c, int64_t from, int up, void *stream) {
  const size_t es = hmx_dtype_size(c->dtype), bytes = (size_t)((c->len - from) * c->row) * es;
  char *rows = rows_buffer(c, c->len - from);
  if (!rows) return HMX_ERR_NO_MEMORY;
  hmx_status st = HMX_OK;
  for (int l = 0; l < c->n_layer && !st; l++)
    for (int is_k = 1; is_k >= 0 && !st; is_k--) {
      char *gpu = (char *)hmx_kv_cache_rows(c, is_k, l, 0).data + (size_t)(from * c->row) * es;
      if (up) {
        blocks_rows(c, is_k, l, from, c->len, rows, 1);
        st = c->dev->to_device(gpu, rows, bytes, stream);
      } else if (!(st = c->dev->to_host(rows, gpu, bytes, stream))) {
        blocks_rows(c, is_k, l, from, c->len, rows, 0);
      }
    }
  free(rows);
  return st;
}

hmx_status hmx_kv_cache_to_gpu(hmx_kv_cache *c, const hmx_device_ops *d, void *stream) {
  const size_t es = hmx_dtype_size(c->dtype);
  if (c->dev && (c->dev != d || !d->on_current_device(c->dk)))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: the KV cache's GPU copy is "
                    "not memory of the current GPU (its first GPU step ran with another device "
                    "current)");
  if (!c->dev) {
    size_t half; /* bytes of K (and of V): n_layer x capacity x row */
    void *p = NULL;
    if (!hmx_mul_size((size_t)c->n_layer * (size_t)c->capacity, (size_t)c->row * es, &half) ||
        half > SIZE_MAX / 2)
      return hmx_fail(HMX_ERR_NO_MEMORY, "KV cache: too large for the GPU");
    hmx_status st = d->resident_alloc(&p, 2 * half);
    if (st) return st;
    c->dev = d;
    c->dk = p;
    c->dv = (char *)p + half;
    c->dev_len = 0;
  }
  /* the host holds the newer positions (one side always holds all) */
  if (c->dev_len == c->len) return HMX_OK;
  const hmx_status st = move_positions(c, c->dev_len, 1, stream);
  if (!st) c->dev_len = c->len;
  return st;
}

hmx_status hmx_kv_cache_to_host(hmx_kv_cache *c, void *stream) {
  if (c->host_len == c->len) return HMX_OK;
  if (!c->dev) return hmx_fail(HMX_ERR_INTERNAL, "KV cache: positions missing on the host");
  /* the GPU holds the newer positions */
  const hmx_status st = move_positions(c, c->host_len, 0, stream);
  if (!st) c->host_len = c->len;
  return st;
}

hmx_status hmx_kv_cache_store_gpu(hmx_kv_cache *c, int is_k, int layer, int64_t at,
                                  const float *src, int64_t n, void *stream) {
  const size_t es = hmx_dtype_size(c->dtype), count = (size_t)(n * c->row);
  char *dst = (char *)hmx_kv_cache_rows(c, is_k, layer, 0).data + (size_t)(at * c->row) * es;
  if (c->dtype == HMX_F32)
    return c->dev->copy2d(dst, count * es, src, count * es, count * es, 1, stream);
  /* rounded to nearest even on the device, as cache_put on the host */
  return c->dev->convert(dst, c->dtype, src, HMX_F32, (int64_t)count, stream);
}
