/* The forward pass (docs/MODEL.md; the KV cache: src/kv_cache.c).
 *
 * Every arithmetic step is a public op on the context's backend, except the
 * embedding lookup (an exact conversion) and the residual additions (one f32
 * add per element), so the logits inherit the ops' guarantees: the same bits
 * on every backend, and rows that do not depend on what else is in the step
 * (gemm, norms and swiglu are row-wise with a fixed order per row; attention
 * computes each query row alone). That is why prefill, decode and batching
 * agree bit for bit.
 *
 * On the GPU (docs/MODEL.md "The forward pass on the GPU"): when every
 * weight the pass reads has a GPU copy (hmx_model_prepare for cuda) and the
 * context runs cuda, the activations and the KV cache stay on the GPU too.
 * The same ops run on device tensors (the same kernels, so the same bits);
 * the step's embedding rows go up and its logits come down, and nothing
 * waits in between. Only the data movement differs (fwd.dev: resid_add,
 * copy_cols, the cache's store and views). */
#include "model_internal.h"
#include "dispatch.h" /* hmx_tensor_is_contiguous */
#include "internal.h"
#include "gguf.h"
#include "swiglu_quant.h"
#include "rope_tabled.h"
#include "attention_kb16.h"
#include "parallel.h"        /* the copies and adds below, split over threads */

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ forward */

typedef struct fwd {
  const hmx_context *ctx;
  const hmx_model *m;
  const hmx_forward_opts *opts;
  int64_t t; /* tokens in the step */
  /* non-NULL: the pass runs on this backend's GPU, on `stream` (the calling
   * thread's, hmx_get_cuda_stream): x .. qkv and logits_dev are device
   * memory there */
  const hmx_device_ops *dev;
  void *stream;
  float *x, *h, *q, *k, *v, *att, *o, *qkv;
  float *ga, *gb; /* [T, d_ff] each: the kept-format FFN's hidden units (ffn_kept; host) */
  float *xh;      /* dev: [T, d], the step's embedding rows on the host */
  float *logits_dev; /* dev: [rows, vocab] */
  int32_t *pos;
  /* [T, head_dim/2] each: the step's angle table, made once on the host
   * (tab_*), and where rope reads it (rope_*: the same, or its copy on the
   * GPU; rope reads the table in the memory of x: src/rope_tabled.h) */
  float *tab_cos, *tab_sin, *rope_cos, *rope_sin;
} fwd;

/* An activation of the pass as a tensor: device memory when it runs on the GPU. */
static hmx_tensor act(const fwd *f, hmx_tensor t) {
  if (f->dev) t.memory = HMX_MEMORY_CUDA;
  return t;
}
static hmx_tensor act2(const fwd *f, float *p, int64_t rows, int64_t cols) {
  return act(f, hmx_tensor_2d(p, HMX_F32, rows, cols));
}

/* Vector weight w (a norm's weight, alpha, beta) where the pass reads it:
 * its GPU copy when it runs on the GPU. */
static hmx_tensor vec(const fwd *f, const hmx_tensor *w) {
  hmx_tensor t = *w;
  if (f->dev) {
    t.data = (void *)(uintptr_t)f->m->vdev[w - f->m->weights];
    t.memory = HMX_MEMORY_CUDA;
  }
  return t;
}

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
 * stream); on the GPU its add. */
static hmx_status resid_add(const fwd *f, float *restrict x, const float *restrict y,
                            int64_t rows, int64_t cols) {
  if (f->dev) return f->dev->add(x, y, rows * cols, f->stream);
  const int nt = rows_threads(f->ctx ? f->ctx->threads : 0, rows, cols);
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
  return HMX_OK;
}

/* dst [rows, w] = columns [col, col + w) of src [rows, n] (moves values). */
static hmx_status copy_cols(const fwd *f, float *dst, const float *src, int64_t rows, int64_t w,
                            int64_t n, int64_t col) {
  if (f->dev)
    return f->dev->copy2d(dst, (size_t)w * sizeof(float), src + col, (size_t)n * sizeof(float),
                          (size_t)w * sizeof(float), (size_t)rows, f->stream);
  const int nt = rows_threads(f->ctx ? f->ctx->threads : 0, rows, w);
  HMX_OMP_FOR(nt)
  for (int64_t t = 0; t < rows; t++)
    memcpy(dst + t * w, src + t * n + col, (size_t)w * sizeof(float));
  return HMX_OK;
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
  if (!qkv_adjacent(f->m, L, order, &dev_adjacent) || (f->dev && !dev_adjacent)) {
    hmx_tensor Q = act2(f, f->q, T, hd), K = act2(f, f->k, T, kvd), V = act2(f, f->v, T, kvd);
    hmx_status st = project(f, H, L->wq, &Q);
    if (!st) st = project(f, H, L->wk, &K);
    if (!st) st = project(f, H, L->wv, &V);
    return st;
  }
  hmx_tensor QKV = act2(f, f->qkv, T, n3);
  const hmx_qmatrix *q0 = hmx_model_qweight(f->m, order[0]);
  hmx_status st;
  if (q0) { /* the three kept matrices as one of n3 rows */
    hmx_qmatrix qkv = *q0;
    qkv.n = n3;
    if (!dev_adjacent) qkv.dev = NULL;
    st = hmx_gemm_quant(f->ctx, H, &qkv, &QKV);
  } else { /* plain tensors: host passes only (the GPU pass has kept matrices) */
    hmx_tensor W = hmx_tensor_2d((void *)(uintptr_t)order[0]->data, order[0]->dtype, n3, d);
    st = hmx_gemm(f->ctx, H, &W, 1, NULL, &QKV);
  }
  if (st) return st;
  /* the columns of each part, in the fused (address) order, to q, k, v */
  int64_t col = 0;
  for (int i = 0; i < 3; i++) {
    const int64_t w = order[i]->shape[0];
    float *dst = order[i] == L->wq ? f->q : order[i] == L->wk ? f->k : f->v;
    if ((st = copy_cols(f, dst, f->qkv, T, w, n3, col))) return st;
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
  hmx_tensor X = act2(f, f->x, T, d), H = act2(f, f->h, T, d);
  hmx_tensor O = act2(f, f->o, T, d), A = act2(f, f->att, T, hd);
  const hmx_tensor attn_norm = vec(f, L->attn_norm), ffn_norm = vec(f, L->ffn_norm);

  /* attention block: h = rmsnorm(x); q, k, v = h W^T; rope; attend; project */
  TRY(hmx_rmsnorm(f->ctx, &X, &attn_norm, c->norm_eps, &H));
  TRY(trace(f, l, "attn_norm", f->h, T, d));
  TRY(qkv_project(f, L, &H));
  TRY(trace(f, l, "q", f->q, T, hd));
  TRY(trace(f, l, "k", f->k, T, kvd));
  TRY(trace(f, l, "v", f->v, T, kvd));
  hmx_tensor Q3 = act(f, hmx_tensor_3d(f->q, HMX_F32, T, c->n_head, c->head_dim));
  hmx_tensor K3 = act(f, hmx_tensor_3d(f->k, HMX_F32, T, c->n_kv_head, c->head_dim));
  TRY(hmx_rope_tabled(f->ctx, &Q3, f->rope_cos, f->rope_sin, c->head_dim, c->rope_style, &Q3));
  TRY(hmx_rope_tabled(f->ctx, &K3, f->rope_cos, f->rope_sin, c->head_dim, c->rope_style, &K3));
  TRY(trace(f, l, "q_rope", f->q, T, hd));
  TRY(trace(f, l, "k_rope", f->k, T, kvd));

  /* each sequence: append its k, v to its cache, attend over the cache */
  int64_t off = 0;
  for (int s = 0; s < n_seq; s++) {
    hmx_kv_cache *kc = caches[s];
    const int64_t n = n_tokens[s], len = kc->len;
    hmx_tensor q4 = act(f, hmx_tensor_4d(f->q + off * hd, HMX_F32, 1, n, c->n_head, c->head_dim));
    hmx_tensor o4 = act(f, hmx_tensor_4d(f->att + off * hd, HMX_F32, 1, n, c->n_head, c->head_dim));
    hmx_attention_params ap = {1, len, 0.0f}; /* causal, queries at len.., scale 1/sqrt(D) */
    if (f->dev) { /* the cache's rows on the GPU: the kernel of hmx_attention_kb16's rows */
      TRY(hmx_kv_cache_store_gpu(kc, 1, l, len, f->k + off * kvd, n, f->stream));
      TRY(hmx_kv_cache_store_gpu(kc, 0, l, len, f->v + off * kvd, n, f->stream));
      hmx_tensor k4 = hmx_kv_cache_rows(kc, 1, l, len + n), v4 = hmx_kv_cache_rows(kc, 0, l, len + n);
      TRY(hmx_attention(f->ctx, &q4, &k4, &v4, &ap, &o4));
    } else {
      hmx_kv_cache_store(kc, 1, l, len, f->k + off * kvd, n, f->ctx ? f->ctx->threads : 0);
      hmx_kv_cache_store(kc, 0, l, len, f->v + off * kvd, n, f->ctx ? f->ctx->threads : 0);
      hmx_tensor k4 = hmx_kv_cache_blocks(kc, 1, l, len + n);
      hmx_tensor v4 = hmx_kv_cache_blocks(kc, 0, l, len + n);
      TRY(hmx_attention_kb16(f->ctx, &q4, &k4, &v4, &ap, &o4, kc->kblocks));
    }
    off += n;
  }
  TRY(trace(f, l, "attn", f->att, T, hd));
  if (c->outproj == HMX_OUTPROJ_DENSE) TRY(project(f, &A, L->wo, &O));
  else {
    const hmx_tensor alpha = vec(f, L->alpha), beta = vec(f, L->beta);
    TRY(hmx_hadamard_mix(f->ctx, &A, &alpha, &beta, &O));
  }
  TRY(trace(f, l, "attn_out", f->o, T, d));
  TRY(resid_add(f, f->x, f->o, T, d));
  TRY(trace(f, l, "resid_attn", f->x, T, d));

  /* feed-forward block: x += swiglu(rmsnorm(x)) */
  TRY(hmx_rmsnorm(f->ctx, &X, &ffn_norm, c->norm_eps, &H));
  TRY(trace(f, l, "ffn_norm", f->h, T, d));
  if (hmx_model_qweight(f->m, L->w1)) TRY(ffn_kept(f, L, &H, &O));
  else TRY(hmx_swiglu(f->ctx, &H, L->w1, L->w3, L->w2, 0, &O));
  TRY(trace(f, l, "ffn", f->o, T, d));
  TRY(resid_add(f, f->x, f->o, T, d));
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

/* Rows `from` to `to` of x ([., d]): the last row of a sequence gathered
 * into its place among the rows that get logits. */
static hmx_status move_row(const fwd *f, int64_t to, int64_t from) {
  const int64_t d = f->m->cfg.d_model;
  if (to == from) return HMX_OK;
  if (f->dev)
    return f->dev->copy2d(f->x + to * d, (size_t)d * sizeof(float), f->x + from * d,
                          (size_t)d * sizeof(float), (size_t)d * sizeof(float), 1, f->stream);
  memcpy(f->x + to * d, f->x + from * d, (size_t)d * sizeof(float)); /* to < from: distinct rows */
  return HMX_OK;
}

static hmx_status forward_body(fwd *f, int n_seq, hmx_kv_cache *const *caches,
                               const int32_t *const *tokens, const int64_t *n_tokens,
                               float *logits) {
  const hmx_model *m = f->m;
  const hmx_model_config *c = &m->cfg;
  const int64_t d = c->d_model;
  float *emb = f->dev ? f->xh : f->x; /* the embedding rows are made on the host */
  int64_t row = 0;
  for (int s = 0; s < n_seq; s++)
    for (int64_t i = 0; i < n_tokens[s]; i++, row++) {
      embed_row(m, m->tok_emb, tokens[s][i], emb + row * d);
      f->pos[row] = (int32_t)(caches[s]->len + i);
    }
  /* the angle table of the step's positions: hmx_rope would make it anew
   * for Q and K in every layer (in double: 60 tables of 143 us each for a
   * 64-token SmolLM2 step) */
  {
    hmx_exec ex; /* the backend the layers' rope calls resolve to: its table code */
    TRY(hmx_exec_resolve(f->ctx, "rope", &ex));
    TRY(hmx_rope_table_on(ex.be, ex.threads, f->pos, f->t, c->head_dim, c->rope_base, f->tab_cos,
                          f->tab_sin));
  }
  if (f->dev) { /* both up once, before any work is queued (no wait for the stream) */
    TRY(f->dev->to_device(f->x, f->xh, (size_t)(f->t * d) * sizeof(float), f->stream));
    /* the table in one copy: sin follows cos on both sides (lay_out) */
    TRY(f->dev->to_device(f->rope_cos, f->tab_cos,
                          (size_t)(2 * f->t * (c->head_dim / 2)) * sizeof(float), f->stream));
  }
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
      TRY(move_row(f, s, end - 1));
    }
    rows = n_seq;
  }
  hmx_tensor X = act2(f, f->x, rows, d), H = act2(f, f->h, rows, d);
  hmx_tensor Y = act2(f, f->dev ? f->logits_dev : logits, rows, c->vocab);
  const hmx_tensor norm = vec(f, m->norm);
  TRY(hmx_rmsnorm(f->ctx, &X, &norm, c->norm_eps, &H));
  TRY(trace(f, -1, "final_norm", f->h, rows, d));
  TRY(project(f, &H, m->lm_head, &Y));
  if (f->dev) /* waits for the step */
    TRY(f->dev->to_host(logits, f->logits_dev, (size_t)(rows * c->vocab) * sizeof(float),
                        f->stream));
  TRY(trace(f, -1, "logits", logits, rows, c->vocab));
  return HMX_OK;
}

/* The device kernels that run the whole pass on the GPU, or NULL for a pass
 * on the host (any backend, cuda's host calls included): every weight the
 * pass reads has a GPU copy (hmx_model_prepare for cuda: m->dev_forward) on
 * the thread's current GPU, gemm resolves to the backend that made them, no
 * trace callback (it reads host memory), and HMX_GPU_FORWARD is not "0"
 * (the host pass on cuda, for A/B runs: docs/MODEL.md). With another GPU
 * current, the host pass's first gemm refuses the copies with
 * HMX_ERR_INVALID_ARGUMENT (cuda/weights_in.cu). */
static const hmx_device_ops *gpu_pass(const hmx_context *ctx, const hmx_model *m,
                                      const hmx_forward_opts *opts) {
  if (!m->dev_forward || (opts && opts->trace)) return NULL;
  const char *env = getenv("HMX_GPU_FORWARD");
  if (env && strcmp(env, "0") == 0) return NULL;
  hmx_exec ex;
  if (hmx_exec_resolve(ctx, "gemm", &ex) || !hmx_exec_reads_gpu_copies(&ex)) {
    hmx_clear_error(); /* the host pass reports it, op by op */
    return NULL;
  }
  const hmx_device_ops *d = hmx_device_ops_of(ex.be);
  return d && d->on_current_device(m->dev_weights) ? d : NULL;
}

/* Every cache current where the pass runs: on the GPU (its copy made at the
 * first such pass; *dev set to NULL when it does not fit, for a pass on the
 * host), or on the host. */
static hmx_status caches_where(const hmx_device_ops **dev, void *stream, int n_seq,
                               hmx_kv_cache *const *caches) {
  for (int s = 0; s < n_seq && *dev; s++) {
    const hmx_status st = hmx_kv_cache_to_gpu(caches[s], *dev, stream);
    if (st == HMX_ERR_NO_MEMORY) {
      hmx_clear_error(); /* not an error: the host pass serves */
      *dev = NULL;
    } else if (st) {
      return st;
    }
  }
  if (!*dev)
    for (int s = 0; s < n_seq; s++) TRY(hmx_kv_cache_to_host(caches[s], stream));
  return HMX_OK;
}

/* n floats from base at *at (NULL while only counting: base NULL). */
static float *take(float *base, int64_t *at, int64_t n) {
  float *p = base ? base + *at : NULL;
  *at += n;
  return p;
}

/* The step's activations laid out from base: x, h, o [T, d]; q, att
 * [T, hd]; k, v [T, kvd]; qkv [T, hd + 2 kvd]; then on the host ga, gb
 * [T, d_ff] (kept FFNs: ffn_kept), on the GPU the RoPE table [T, head_dim]
 * and the logits [rows, vocab]. Returns the floats they take (base NULL:
 * counts only), -1 when that does not fit the address space. */
static int64_t lay_out(fwd *f, float *base, int64_t rows) {
  const hmx_model_config *c = &f->m->cfg;
  const int64_t T = f->t, d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim, ff = c->d_ff;
  /* the config's dimensions are bounded (hmx_model_config_check), T by the
   * caches' capacity: these products fit in int64 */
  int64_t at = 0;
  f->x = take(base, &at, T * d);
  f->h = take(base, &at, T * d);
  f->o = take(base, &at, T * d);
  f->q = take(base, &at, T * hd);
  f->att = take(base, &at, T * hd);
  f->k = take(base, &at, T * kvd);
  f->v = take(base, &at, T * kvd);
  f->qkv = take(base, &at, T * (hd + 2 * kvd));
  if (f->dev) {
    f->rope_cos = take(base, &at, T * (c->head_dim / 2));
    f->rope_sin = take(base, &at, T * (c->head_dim / 2));
    f->logits_dev = take(base, &at, rows * c->vocab);
  } else if (f->m->q) {
    f->ga = take(base, &at, T * ff);
    f->gb = take(base, &at, T * ff);
  }
  return (uint64_t)at > SIZE_MAX / sizeof(float) ? -1 : at;
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
  const int64_t d = c->d_model;
  fwd f = {.ctx = ctx, .m = m, .opts = opts, .t = T}; /* the buffers: below */
  f.dev = gpu_pass(ctx, m, opts);
  f.stream = hmx_get_cuda_stream();
  if ((st = caches_where(&f.dev, f.stream, n_seq, caches))) return st;
  const int64_t rows = opts && opts->all_logits ? T : n_seq;
  /* the activations (device memory on the GPU: dblock) and, on the host,
   * the RoPE table, then the embedding rows (GPU) or the activations (host) */
  const int64_t n_act = lay_out(&f, NULL, rows), half = T * (c->head_dim / 2);
  void *dblock = NULL;
  float *hblock = NULL;
  st = HMX_OK;
  if (n_act < 0 || !(hblock = hmx_alloc_array((size_t)(2 * half + (f.dev ? T * d : n_act)),
                                              sizeof(float))) ||
      !(f.pos = hmx_alloc_array((size_t)T, sizeof(int32_t))))
    st = hmx_fail(HMX_ERR_NO_MEMORY, "model forward: cannot allocate scratch for %lld tokens",
                  (long long)T);
  if (!st && f.dev) st = f.dev->stage_alloc(&dblock, (size_t)n_act * sizeof(float), f.stream);
  if (!st) {
    f.tab_cos = hblock;
    f.tab_sin = hblock + half;
    f.xh = f.dev ? hblock + 2 * half : NULL;
    lay_out(&f, f.dev ? (float *)dblock : hblock + 2 * half, rows);
    if (!f.dev) f.rope_cos = f.tab_cos, f.rope_sin = f.tab_sin;
    st = forward_body(&f, n_seq, caches, tokens, n_tokens, logits);
  }
  if (dblock) {
    const hmx_status fs = f.dev->stage_free(dblock, f.stream);
    if (!st) st = fs;
  }
  free(hblock);
  free(f.pos);
  if (st) return st;
  /* only now do the new positions become part of the caches, on the side
   * that holds them */
  for (int s = 0; s < n_seq; s++) {
    hmx_kv_cache *kc = caches[s];
    kc->len += n_tokens[s];
    if (f.dev) kc->dev_len = kc->len;
    else kc->host_len = kc->len;
  }
  return HMX_OK;
}
