/* Public entry points of the sketched attentions: linformer, levattention,
 * lewis, priority (include/hadamix.h, docs/NUMERICS.md §sketch). */
#include "ops_stage.h"

#include <math.h>
#include <stdlib.h>

#define TRY(expr) do { hmx_status s_ = (expr); if (s_ != HMX_OK) return s_; } while (0)

typedef enum { SK_LINFORMER, SK_LEVERAGE, SK_LEWIS, SK_PRIORITY } sk_kind;

/* q, k, v, o as in hmx_attention without causality; fills the shape fields
 * and the resolved scale of a. */
static hmx_status check_qkvo(const char *op, const hmx_tensor *q, const hmx_tensor *k,
                             const hmx_tensor *v, const hmx_tensor *o, float scale,
                             hmx_sketch_args *a) {
  TRY(hmx_check_float(op, "q", q, 4));
  TRY(hmx_check_float(op, "k", k, 4));
  TRY(hmx_check_float(op, "v", v, 4));
  TRY(hmx_check_float(op, "o", o, 4));
  a->b = q->shape[0];
  a->s = q->shape[1];
  a->hq = q->shape[2];
  a->d = q->shape[3];
  a->n = k->shape[1];
  a->hkv = k->shape[2];
  TRY(hmx_check_dim(op, "k", k, 0, a->b, "batch of q"));
  TRY(hmx_check_dim(op, "k", k, 3, a->d, "head dim of q"));
  for (int i = 0; i < 4; i++) TRY(hmx_check_dim(op, "v", v, i, k->shape[i], "same as k"));
  for (int i = 0; i < 4; i++) TRY(hmx_check_dim(op, "o", o, i, q->shape[i], "same as q"));
  if (a->hkv < 1 || a->hq % a->hkv != 0)
    return hmx_fail(HMX_ERR_SHAPE, "%s: query heads (%lld) must be a multiple of kv heads (%lld)",
                    op, (long long)a->hq, (long long)a->hkv);
  if (a->d < 1) return hmx_fail(HMX_ERR_SHAPE, "%s: head dim must be >= 1", op);
  if (a->n < 1) return hmx_fail(HMX_ERR_SHAPE, "%s: no keys (N = 0)", op);
  if (a->n > INT32_MAX)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: N = %lld keys do not fit i32 indices", op,
                    (long long)a->n);
  if (isnan(scale) || scale <= 0.0f) scale = (float)(1.0 / sqrt((double)a->d));
  if (!isfinite(scale)) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: scale must be finite", op);
  a->scale = scale;
  TRY(hmx_check_alias(op, "o", o, "q", q, 0));
  TRY(hmx_check_alias(op, "o", o, "k", k, 0));
  TRY(hmx_check_alias(op, "o", o, "v", v, 0));
  return HMX_OK;
}

/* Copy the kernel's contiguous indices into idx (any strides). */
static void store_idx(const int32_t *src, hmx_tensor *idx) {
  int64_t n0 = idx->shape[0], n1 = idx->shape[1], n2 = idx->shape[2];
  int contig = hmx_tensor_is_contiguous(idx);
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t l = 0; l < n2; l++) {
        int64_t off = contig ? (i * n1 + j) * n2 + l
                             : i * idx->stride[0] + j * idx->stride[1] + l * idx->stride[2];
        ((int32_t *)idx->data)[off] = src[(i * n1 + j) * n2 + l];
      }
}

static hmx_status run_sketch(const hmx_context *ctx, const char *op, sk_kind kind,
                             const hmx_tensor *q, const hmx_tensor *k, const hmx_tensor *v,
                             const hmx_tensor *e, const hmx_tensor *f,
                             const hmx_sketch_params *p, float scale, hmx_tensor *o,
                             hmx_tensor *idx) {
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  hmx_sketch_args a = {0};
  if (kind != SK_LINFORMER) {
    if (!p) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: params is NULL", op);
    scale = p->scale;
  }
  TRY(check_qkvo(op, q, k, v, o, scale, &a));
  if (kind == SK_LINFORMER) {
    TRY(hmx_check_float(op, "e", e, 2));
    TRY(hmx_check_float(op, "f", f, 2));
    a.kk = e->shape[0];
    if (a.kk < 1) return hmx_fail(HMX_ERR_SHAPE, "%s: e must have >= 1 rows (projected length)", op);
    TRY(hmx_check_dim(op, "e", e, 1, a.n, "N, the keys of k"));
    TRY(hmx_check_dim(op, "f", f, 0, a.kk, "rows of e"));
    TRY(hmx_check_dim(op, "f", f, 1, a.n, "N, the keys of k"));
    TRY(hmx_check_alias(op, "o", o, "e", e, 0));
    TRY(hmx_check_alias(op, "o", o, "f", f, 0));
  } else {
    a.kk = p->k;
    if (a.kk < 1 || a.kk > a.n)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: k = %lld keys to keep must be in 1..N = %lld",
                      op, (long long)a.kk, (long long)a.n);
    if (kind != SK_PRIORITY && (!isfinite(p->lambda) || !(p->lambda > 0.0f)))
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: lambda must be finite and > 0 (got %g)", op,
                      (double)p->lambda);
    if (kind == SK_LEWIS && (p->iters < 1 || p->iters > 1000))
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: iters must be in 1..1000 (got %d)", op,
                      p->iters);
    a.lambda = (double)p->lambda;
    a.iters = p->iters;
    a.seed = p->seed;
    if (idx) {
      TRY(hmx_check_int32(op, "idx", idx, 3));
      TRY(hmx_check_dim(op, "idx", idx, 0, a.b, "batch of q"));
      TRY(hmx_check_dim(op, "idx", idx, 1, a.hkv, "kv heads of k"));
      TRY(hmx_check_dim(op, "idx", idx, 2, a.kk, "k, the keys kept"));
      const hmx_tensor *ts[] = {q, k, v, o};
      static const char *const nm[] = {"q", "k", "v", "o"};
      for (int i = 0; i < 4; i++) TRY(hmx_check_alias(op, "idx", idx, nm[i], ts[i], 0));
    }
  }
  const hmx_tensor *place[] = {q, k, v, e, f, o, idx};
  static const char *const place_names[] = {"q", "k", "v", "e", "f", "o", "idx"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 7, 0));
  if (ex.dev) return hmx_no_device(op, &ex);
  hmx_status (*fn)(const hmx_sketch_args *) = NULL;
  switch (kind) {
  case SK_LINFORMER: HMX_PICK(ex, linformer, fn); break;
  case SK_LEVERAGE: HMX_PICK(ex, levattention, fn); break;
  case SK_LEWIS: HMX_PICK(ex, lewis, fn); break;
  case SK_PRIORITY: HMX_PICK(ex, priority_attn, fn); break;
  }
  int32_t *ibuf = NULL;
  if (kind != SK_LINFORMER) {
    ibuf = hmx_alloc_array((size_t)(a.b * a.hkv * a.kk), sizeof *ibuf);
    if (!ibuf) return hmx_fail(HMX_ERR_NO_MEMORY, "%s: cannot allocate the key indices", op);
  }
  hmx_staging st;
  const hmx_tensor *ins[] = {q, k, v, e, f};
  hmx_status s = hmx_staging_begin(&st, ins, 5, o);
  if (s == HMX_OK) {
    a.q = st.in[0].p;
    a.k = st.in[1].p;
    a.v = st.in[2].p;
    a.e = st.in[3].p;
    a.f = st.in[4].p;
    a.o = st.out.p;
    a.idx = ibuf;
    a.threads = ex.threads;
    s = fn(&a);
  }
  if (s == HMX_OK && idx) store_idx(ibuf, idx);
  free(ibuf);
  return hmx_staging_finish(&st, o, s, op, &ex);
}

hmx_status hmx_linformer(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                         const hmx_tensor *v, const hmx_tensor *e, const hmx_tensor *f,
                         float scale, hmx_tensor *o) {
  return run_sketch(ctx, "linformer", SK_LINFORMER, q, k, v, e, f, NULL, scale, o, NULL);
}

hmx_status hmx_levattention(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                            const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                            hmx_tensor *idx) {
  return run_sketch(ctx, "levattention", SK_LEVERAGE, q, k, v, NULL, NULL, p, 0.0f, o, idx);
}

hmx_status hmx_lewis(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                     const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                     hmx_tensor *idx) {
  return run_sketch(ctx, "lewis", SK_LEWIS, q, k, v, NULL, NULL, p, 0.0f, o, idx);
}

hmx_status hmx_priority(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                        const hmx_tensor *v, const hmx_sketch_params *p, hmx_tensor *o,
                        hmx_tensor *idx) {
  return run_sketch(ctx, "priority", SK_PRIORITY, q, k, v, NULL, NULL, p, 0.0f, o, idx);
}
