/* The forward pass and the KV cache (docs/MODEL.md).
 *
 * Every arithmetic step is a public op on the context's backend, except the
 * embedding lookup (an exact conversion) and the residual additions (one f32
 * add per element), so the logits inherit the ops' guarantees: the same bits
 * on every backend, and rows that do not depend on what else is in the step
 * (gemm, norms and swiglu are row-wise with a fixed order per row; attention
 * computes each query row alone). That is why prefill, decode and batching
 * agree bit for bit. */
#include "model_internal.h"
#include "dispatch.h" /* hmx_tensor_is_contiguous */
#include "internal.h"
#include "gguf.h"
#include "swiglu_quant.h"
#include "canon.h"       /* hmx_rope_table */
#include "rope_tabled.h"
#include "attention_kb16.h"
#include "parallel.h"        /* the copies and adds below, split over threads */

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ KV cache */

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
  return HMX_OK;
}

/* Layer `layer`'s K blocks (or V runs), as a tensor of `len` positions
 * whose data is in the cache layout (read by hmx_attention_kb16 only). */
static hmx_tensor cache_tensor(const hmx_kv_cache *c, void *base, int layer, int64_t len) {
  const hmx_model_config *cfg = &c->model->cfg;
  char *p = (char *)base + (size_t)layer * (size_t)c->kblocks * 16 * (size_t)c->row *
                               hmx_dtype_size(c->dtype);
  return hmx_tensor_4d(p, c->dtype, 1, len, cfg->n_kv_head, cfg->head_dim);
}

/* One value as the cache stores it: copied, or rounded to nearest even for
 * a 16-bit cache (the conversion every 16-bit output of the library uses). */
static void cache_put(hmx_dtype dt, void *dst, size_t i, float x) {
  if (dt == HMX_F32) ((float *)dst)[i] = x;
  else if (dt == HMX_BF16) ((uint16_t *)dst)[i] = hmx_f32_to_bf16(x);
  else ((uint16_t *)dst)[i] = hmx_f32_to_f16(x);
}

/* Append n rows of k (is_k) or v at position `at`, each value to its place
 * in the layer's blocks (K) or head runs (V): hmx_kb16_k_index /
 * hmx_kb16_v_index with batch 0. Heads are independent (each writes its own
 * part of the cache), so they are split over `threads` (a prefill stores
 * 2 x 512 x 768 values per layer of tiny; on one thread the other waited).
 * Moves values only. */
static void cache_store(const hmx_kv_cache *c, void *base, int is_k, int layer, int64_t at,
                        const float *src, int64_t n, int threads) {
  const hmx_model_config *cfg = &c->model->cfg;
  const int64_t D = cfg->head_dim, H = cfg->n_kv_head;
  void *dst = cache_tensor(c, base, layer, 0).data;
  const int nt = hmx_thread_count(threads, n * H * D >= 65536 ? H : 1);
  HMX_OMP_FOR(nt)
  for (int64_t g = 0; g < H; g++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t e = 0; e < D; e++) {
        const int64_t t = at + i;
        const int64_t to = is_k ? hmx_kb16_k_index(c->kblocks, H, D, 0, g, t, e)
                                : hmx_kb16_v_index(c->kblocks, H, D, 0, g, t, e);
        cache_put(c->dtype, dst, (size_t)to, src[i * c->row + g * D + e]);
      }
}

/* ------------------------------------------------------------------ forward */

typedef struct fwd {
  const hmx_context *ctx;
  const hmx_model *m;
  const hmx_forward_opts *opts;
  int64_t t; /* tokens in the step */
  float *x, *h, *q, *k, *v, *att, *o, *qkv;
  float *ga, *gb; /* [T, d_ff] each: the kept-format FFN's hidden units (ffn_kept) */
  int32_t *pos;
  float *rope_cos, *rope_sin; /* [T, head_dim/2]: the step's angle table, made once */
} fwd;

static hmx_status trace(const fwd *f, int layer, const char *name, const float *data,
                        int64_t rows, int64_t cols) {
  if (!f->opts || !f->opts->trace) return HMX_OK;
  if (f->opts->trace(f->opts->trace_user, layer, name, data, rows, cols))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model forward: stopped by the trace callback");
  return HMX_OK;
}

/* Row `tok` of the embedding as f32 (an exact conversion for bf16/f16; the
 * GGUF rule for an embedding kept in its block format). */
static void embed_row(const hmx_model *m, const hmx_tensor *e, int32_t tok, float *dst) {
  const int64_t d = e->shape[1];
  const hmx_qmatrix *q = hmx_model_qweight(m, e);
  if (q) {
    hmx_qmatrix_row_f32(q, tok, dst); /* the GGUF rule, either layout */
    return;
  }
  if (e->dtype == HMX_F32) {
    memcpy(dst, (const float *)e->data + (int64_t)tok * d, (size_t)d * sizeof(float));
    return;
  }
  const uint16_t *src = (const uint16_t *)e->data + (int64_t)tok * d;
  for (int64_t j = 0; j < d; j++)
    dst[j] = e->dtype == HMX_BF16 ? hmx_bf16_to_f32(src[j]) : hmx_f16_to_f32(src[j]);
}

/* Threads for a copy or an add over `rows` rows of `cols` values: several
 * only when there are enough values (elementwise: any split of the rows
 * gives the same bits). */
static int rows_threads(int threads, int64_t rows, int64_t cols) {
  return hmx_thread_count(threads, rows * cols >= 65536 ? rows : 1);
}

/* x += y elementwise, [rows, cols]: one f32 addition each (the residual
 * stream). */
static void add_inplace(float *restrict x, const float *restrict y, int64_t rows, int64_t cols,
                        int threads) {
  const int nt = rows_threads(threads, rows, cols);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < rows; r++) {
    float *restrict xr = x + r * cols;
    const float *restrict yr = y + r * cols;
    /* elementwise, so vectors give the same bits; gcc 12 deemed this loop
     * cold and left it scalar (1.8% of a 64-token SmolLM2 prefill) */
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t i = 0; i < cols; i++) xr[i] += yr[i];
  }
}

/* Where weight w's values start and how many bytes they take: its tensor
 * (contiguous host memory), or q, its kept matrix when the model keeps one
 * (GGUF blocks, or G16 from hmx_model_prepare; G16 only with whole groups of
 * 16 rows, whose bytes are then exactly the rows'). Returns 0 when w has no
 * such span. */
static int weight_span(const hmx_qmatrix *q, const hmx_tensor *w, const char **data,
                       size_t *bytes) {
  if (q) {
    int64_t block, bsize;
    if (!hmx_gguf_type_block(q->type, &block, &bsize) || q->k % block ||
        (q->layout == HMX_QLAYOUT_G16 && q->n % HMX_QG))
      return 0;
    *data = q->data;
    *bytes = (size_t)(q->n * (q->k / block) * bsize);
    return 1;
  }
  if (!w->data || !hmx_tensor_is_contiguous(w) || w->memory != HMX_MEMORY_HOST) return 0;
  *data = w->data;
  *bytes = (size_t)(w->shape[0] * w->shape[1]) * hmx_dtype_size(w->dtype);
  return 1;
}

/* Q, K, V = h Wq^T, h Wk^T, h Wv^T as one gemm when the three weights lie back
 * to back in memory (in some order, one dtype and layout: the synthetic arena,
 * GGUF loads and files written by hmx_model_save are laid out so, and
 * hmx_model_prepare keeps them so): one call reads one [hd + 2 kvd, d] matrix
 * instead of three, and each output column is the same fma chain as in its
 * own gemm (§gemm: c[i][j] depends on row i of a and row j of b only), so the
 * bits do not change. Returns 0 when the weights are not adjacent (then three
 * gemms). */
static int qkv_adjacent(const hmx_model *m, const hmx_layer_weights *L,
                        const hmx_tensor *order[3], int *dev_adjacent) {
  const hmx_tensor *w[3] = {L->wq, L->wk, L->wv};
  const hmx_qmatrix *q0 = hmx_model_qweight(m, w[0]);
  const char *at[3], *dev[3];
  size_t bytes[3];
  for (int i = 0; i < 3; i++) {
    const hmx_qmatrix *q = hmx_model_qweight(m, w[i]);
    if (!weight_span(q, w[i], &at[i], &bytes[i]) || !q != !q0 ||
        (q ? q->type != q0->type || q->layout != q0->layout || q->k != q0->k
           : w[i]->dtype != w[0]->dtype || w[i]->shape[1] != w[0]->shape[1]))
      return 0;
    order[i] = w[i];
    dev[i] = q ? (const char *)q->dev : NULL;
  }
  /* sort by address (three elements) */
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if ((uintptr_t)at[j] < (uintptr_t)at[i]) {
        const hmx_tensor *t = order[i];
        const char *a = at[i], *dv = dev[i];
        const size_t b = bytes[i];
        order[i] = order[j], at[i] = at[j], bytes[i] = bytes[j], dev[i] = dev[j];
        order[j] = t, at[j] = a, bytes[j] = b, dev[j] = dv;
      }
  /* the GPU copies (hmx_model_prepare) lie so too, or the fused matrix has none */
  *dev_adjacent = dev[0] != NULL;
  for (int i = 0; i + 1 < 3; i++) {
    if (at[i] + bytes[i] != at[i + 1]) return 0;
    if (!dev[i] || !dev[i + 1] || (uintptr_t)dev[i] + bytes[i] != (uintptr_t)dev[i + 1])
      *dev_adjacent = 0;
  }
  return 1;
}

/* Y = X W^T for a projection weight W ([out, in]): in place from its GGUF
 * blocks when the model keeps them (hmx_gemm_quant: the bits of the
 * dequantized f32 weight), else hmx_gemm. */
static hmx_status project(const fwd *f, const hmx_tensor *X, const hmx_tensor *W, hmx_tensor *Y) {
  const hmx_qmatrix *q = hmx_model_qweight(f->m, W);
  if (q) return hmx_gemm_quant(f->ctx, X, q, Y);
  return hmx_gemm(f->ctx, X, W, 1, NULL, Y);
}

/* The SwiGLU block with its three matrices kept as hmx_qmatrix ([out, in]:
 * a GGUF file's, or laid out by hmx_model_prepare): hmx_swiglu_quant, whose
 * bits are those of hmx_swiglu on the same weights in its layout. */
static hmx_status ffn_kept(const fwd *f, const hmx_layer_weights *L, const hmx_tensor *H,
                           hmx_tensor *O) {
  const hmx_model *m = f->m;
  return hmx_swiglu_quant(f->ctx, H, hmx_model_qweight(m, L->w1), hmx_model_qweight(m, L->w3),
                          hmx_model_qweight(m, L->w2), O, f->ga, f->gb);
}

static hmx_status qkv_project(fwd *f, const hmx_layer_weights *L, const hmx_tensor *H) {
  const hmx_model_config *c = &f->m->cfg;
  const int64_t T = f->t, d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim, n3 = hd + 2 * kvd;
  const hmx_tensor *order[3];
  int dev_adjacent;
  if (!qkv_adjacent(f->m, L, order, &dev_adjacent)) {
    hmx_tensor Q = hmx_tensor_2d(f->q, HMX_F32, T, hd), K = hmx_tensor_2d(f->k, HMX_F32, T, kvd),
               V = hmx_tensor_2d(f->v, HMX_F32, T, kvd);
    hmx_status st = project(f, H, L->wq, &Q);
    if (!st) st = project(f, H, L->wk, &K);
    if (!st) st = project(f, H, L->wv, &V);
    return st;
  }
  hmx_tensor QKV = hmx_tensor_2d(f->qkv, HMX_F32, T, n3);
  const hmx_qmatrix *q0 = hmx_model_qweight(f->m, order[0]);
  hmx_status st;
  if (q0) { /* the three kept matrices as one of n3 rows */
    hmx_qmatrix qkv = *q0;
    qkv.n = n3;
    if (!dev_adjacent) qkv.dev = NULL;
    st = hmx_gemm_quant(f->ctx, H, &qkv, &QKV);
  } else {
    hmx_tensor W = hmx_tensor_2d((void *)(uintptr_t)order[0]->data, order[0]->dtype, n3, d);
    st = hmx_gemm(f->ctx, H, &W, 1, NULL, &QKV);
  }
  if (st) return st;
  /* the columns of each part, in the fused (address) order, to q, k, v */
  int64_t col = 0;
  for (int i = 0; i < 3; i++) {
    const int64_t w = order[i]->shape[0];
    float *dst = order[i] == L->wq ? f->q : order[i] == L->wk ? f->k : f->v;
    const int nt = rows_threads(f->ctx ? f->ctx->threads : 0, T, w);
    HMX_OMP_FOR(nt)
    for (int64_t t = 0; t < T; t++)
      memcpy(dst + t * w, f->qkv + t * n3 + col, (size_t)w * sizeof(float));
    col += w;
  }
  return HMX_OK;
}

#define TRY(expr)                                                                              \
  do {                                                                                         \
    hmx_status st_ = (expr);                                                                   \
    if (st_) return st_;                                                                       \
  } while (0)

static hmx_status layer_forward(fwd *f, int l, int n_seq, hmx_kv_cache *const *caches,
                                const int64_t *n_tokens) {
  const hmx_model_config *c = &f->m->cfg;
  const hmx_layer_weights *L = &f->m->layers[l];
  const int64_t T = f->t, d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim;
  hmx_tensor X = hmx_tensor_2d(f->x, HMX_F32, T, d), H = hmx_tensor_2d(f->h, HMX_F32, T, d);
  hmx_tensor O = hmx_tensor_2d(f->o, HMX_F32, T, d), A = hmx_tensor_2d(f->att, HMX_F32, T, hd);

  /* attention block: h = rmsnorm(x); q, k, v = h W^T; rope; attend; project */
  TRY(hmx_rmsnorm(f->ctx, &X, L->attn_norm, c->norm_eps, &H));
  TRY(trace(f, l, "attn_norm", f->h, T, d));
  TRY(qkv_project(f, L, &H));
  TRY(trace(f, l, "q", f->q, T, hd));
  TRY(trace(f, l, "k", f->k, T, kvd));
  TRY(trace(f, l, "v", f->v, T, kvd));
  hmx_tensor Q3 = hmx_tensor_3d(f->q, HMX_F32, T, c->n_head, c->head_dim);
  hmx_tensor K3 = hmx_tensor_3d(f->k, HMX_F32, T, c->n_kv_head, c->head_dim);
  TRY(hmx_rope_tabled(f->ctx, &Q3, f->rope_cos, f->rope_sin, c->head_dim, c->rope_style, &Q3));
  TRY(hmx_rope_tabled(f->ctx, &K3, f->rope_cos, f->rope_sin, c->head_dim, c->rope_style, &K3));
  TRY(trace(f, l, "q_rope", f->q, T, hd));
  TRY(trace(f, l, "k_rope", f->k, T, kvd));

  /* each sequence: append its k, v to its cache, attend over the cache */
  int64_t off = 0;
  for (int s = 0; s < n_seq; s++) {
    hmx_kv_cache *kc = caches[s];
    const int64_t n = n_tokens[s], len = kc->len;
    cache_store(kc, kc->k, 1, l, len, f->k + off * kvd, n, f->ctx ? f->ctx->threads : 0);
    cache_store(kc, kc->v, 0, l, len, f->v + off * kvd, n, f->ctx ? f->ctx->threads : 0);
    hmx_tensor q4 = hmx_tensor_4d(f->q + off * hd, HMX_F32, 1, n, c->n_head, c->head_dim);
    hmx_tensor o4 = hmx_tensor_4d(f->att + off * hd, HMX_F32, 1, n, c->n_head, c->head_dim);
    hmx_tensor k4 = cache_tensor(kc, kc->k, l, len + n);
    hmx_tensor v4 = cache_tensor(kc, kc->v, l, len + n);
    hmx_attention_params ap = {1, len, 0.0f}; /* causal, queries at len.., scale 1/sqrt(D) */
    TRY(hmx_attention_kb16(f->ctx, &q4, &k4, &v4, &ap, &o4, kc->kblocks));
    off += n;
  }
  TRY(trace(f, l, "attn", f->att, T, hd));
  if (c->outproj == HMX_OUTPROJ_DENSE) TRY(project(f, &A, L->wo, &O));
  else TRY(hmx_hadamard_mix(f->ctx, &A, L->alpha, L->beta, &O));
  TRY(trace(f, l, "attn_out", f->o, T, d));
  add_inplace(f->x, f->o, T, d, f->ctx ? f->ctx->threads : 0);
  TRY(trace(f, l, "resid_attn", f->x, T, d));

  /* feed-forward block: x += swiglu(rmsnorm(x)) */
  TRY(hmx_rmsnorm(f->ctx, &X, L->ffn_norm, c->norm_eps, &H));
  TRY(trace(f, l, "ffn_norm", f->h, T, d));
  if (hmx_model_qweight(f->m, L->w1)) TRY(ffn_kept(f, L, &H, &O));
  else TRY(hmx_swiglu(f->ctx, &H, L->w1, L->w3, L->w2, 0, &O));
  TRY(trace(f, l, "ffn", f->o, T, d));
  add_inplace(f->x, f->o, T, d, f->ctx ? f->ctx->threads : 0);
  TRY(trace(f, l, "resid_ffn", f->x, T, d));
  return HMX_OK;
}

static hmx_status check_step(const hmx_model *m, int n_seq, hmx_kv_cache *const *caches,
                             const int32_t *const *tokens, const int64_t *n_tokens, float *logits,
                             int64_t *total) {
  if (!m || !caches || !tokens || !n_tokens || !logits)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: NULL argument");
  if (n_seq < 1) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: n_seq = %d < 1", n_seq);
  int64_t t = 0;
  for (int s = 0; s < n_seq; s++) {
    const hmx_kv_cache *c = caches[s];
    if (!c || !tokens[s]) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: sequence "
                                          "%d: NULL cache or tokens", s);
    if (c->n_layer != m->cfg.n_layer || c->row != (int64_t)m->cfg.n_kv_head * m->cfg.head_dim)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: sequence %d: the cache was "
                      "made for another model shape", s);
    for (int r = 0; r < s; r++)
      if (caches[r] == c)
        return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: sequences %d and %d share "
                        "a cache", r, s);
    if (n_tokens[s] < 1 || n_tokens[s] > c->capacity - c->len)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: sequence %d: %lld tokens do "
                      "not fit (cache holds %lld of %lld positions)", s, (long long)n_tokens[s],
                      (long long)c->len, (long long)c->capacity);
    for (int64_t i = 0; i < n_tokens[s]; i++)
      if (tokens[s][i] < 0 || tokens[s][i] >= m->cfg.vocab)
        return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_forward: sequence %d, token %lld: "
                        "id %d is outside the vocabulary [0, %d)", s, (long long)i,
                        (int)tokens[s][i], m->cfg.vocab);
    t += n_tokens[s];
  }
  *total = t;
  return HMX_OK;
}

static hmx_status forward_body(fwd *f, int n_seq, hmx_kv_cache *const *caches,
                               const int32_t *const *tokens, const int64_t *n_tokens,
                               float *logits) {
  const hmx_model *m = f->m;
  const hmx_model_config *c = &m->cfg;
  const int64_t d = c->d_model;
  int64_t row = 0;
  for (int s = 0; s < n_seq; s++)
    for (int64_t i = 0; i < n_tokens[s]; i++, row++) {
      embed_row(m, m->tok_emb, tokens[s][i], f->x + row * d);
      f->pos[row] = (int32_t)(caches[s]->len + i);
    }
  /* the angle table of the step's positions: hmx_rope would make it anew
   * for Q and K in every layer (in double: 60 tables of 143 us each for a
   * 64-token SmolLM2 step) */
  TRY(hmx_rope_table(f->pos, f->t, c->head_dim, c->rope_base, f->rope_cos, f->rope_sin));
  TRY(trace(f, -1, "embed", f->x, f->t, d));
  for (int l = 0; l < c->n_layer; l++) TRY(layer_forward(f, l, n_seq, caches, n_tokens));

  /* final norm over the rows that get logits, then the LM head */
  const int all = f->opts && f->opts->all_logits;
  int64_t rows = f->t;
  if (!all) {
    /* each sequence's last row, gathered in order (row-wise ops: same bits) */
    int64_t end = 0;
    for (int s = 0; s < n_seq; s++) {
      end += n_tokens[s];
      memmove(f->x + (int64_t)s * d, f->x + (end - 1) * d, (size_t)d * sizeof(float));
    }
    rows = n_seq;
  }
  hmx_tensor X = hmx_tensor_2d(f->x, HMX_F32, rows, d), H = hmx_tensor_2d(f->h, HMX_F32, rows, d);
  hmx_tensor Y = hmx_tensor_2d(logits, HMX_F32, rows, c->vocab);
  TRY(hmx_rmsnorm(f->ctx, &X, m->norm, c->norm_eps, &H));
  TRY(trace(f, -1, "final_norm", f->h, rows, d));
  TRY(project(f, &H, m->lm_head, &Y));
  TRY(trace(f, -1, "logits", logits, rows, c->vocab));
  return HMX_OK;
}

hmx_status hmx_model_forward(const hmx_context *ctx, const hmx_model *m, int n_seq,
                             hmx_kv_cache *const *caches, const int32_t *const *tokens,
                             const int64_t *n_tokens, const hmx_forward_opts *opts,
                             float *logits) {
  hmx_clear_error();
  int64_t T = 0;
  hmx_status st = check_step(m, n_seq, caches, tokens, n_tokens, logits, &T);
  if (st) return st;
  const hmx_model_config *c = &m->cfg;
  const int64_t d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim;
  fwd f = {.ctx = ctx, .m = m, .opts = opts, .t = T}; /* the buffers: below */
  /* one scratch block: x, h, o [T, d]; q, att [T, hd]; k, v [T, kvd]; qkv [T, hd + 2 kvd];
   * the RoPE table [T, head_dim] */
  const int64_t ffs = m->q ? 2 * (int64_t)c->d_ff : 0; /* ga, gb: kept FFNs only (ffn_kept) */
  size_t per_tok = (size_t)(3 * d + 3 * hd + 4 * kvd + ffs + c->head_dim), n;
  if (!hmx_mul_size(per_tok, (size_t)T, &n) || !(f.x = hmx_alloc_array(n, sizeof(float))) ||
      !(f.pos = hmx_alloc_array((size_t)T, sizeof(int32_t)))) {
    free(f.x);
    return hmx_fail(HMX_ERR_NO_MEMORY, "model forward: cannot allocate scratch for %lld tokens",
                    (long long)T);
  }
  f.h = f.x + T * d;
  f.o = f.h + T * d;
  f.q = f.o + T * d;
  f.att = f.q + T * hd;
  f.k = f.att + T * hd;
  f.v = f.k + T * kvd;
  f.qkv = f.v + T * kvd;
  f.ga = ffs ? f.qkv + T * (hd + 2 * kvd) : NULL;
  f.gb = ffs ? f.ga + T * c->d_ff : NULL;
  f.rope_cos = f.qkv + T * (hd + 2 * kvd + ffs);
  f.rope_sin = f.rope_cos + T * (c->head_dim / 2);
  st = forward_body(&f, n_seq, caches, tokens, n_tokens, logits);
  free(f.x);
  free(f.pos);
  if (st) return st;
  /* only now do the new positions become part of the caches */
  for (int s = 0; s < n_seq; s++) caches[s]->len += n_tokens[s];
  return HMX_OK;
}
