/* The table of operations by name (see opspec.h). */
#include "opspec.h"
#include "internal.h"

#include <stddef.h>
#include <string.h>

/* ---------------------------------------------------------------- invokers */

static hmx_status inv_fwht(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_fwht_factor(c, t[0], t[1], (float)p[0], (int)p[1]);
}
static hmx_status inv_mix(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  (void)p;
  return hmx_hadamard_mix(c, t[0], t[1], t[2], t[3]);
}
static hmx_status inv_gemm(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_gemm(c, t[0], t[1], (int)p[0], t[2], t[3]);
}
static hmx_status inv_rmsnorm(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_rmsnorm(c, t[0], t[1], (float)p[0], t[2]);
}
static hmx_status inv_layernorm(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_layernorm(c, t[0], t[1], t[2], (float)p[0], t[3]);
}
static hmx_status inv_rope(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  int rot_dim = (int)p[1];
  if (rot_dim == 0 && t[0] && t[0]->ndim == 3) rot_dim = (int)t[0]->shape[2];
  return hmx_rope(c, t[0], t[1], (float)p[0], rot_dim, (hmx_rope_style)(int)p[2], t[2]);
}
static hmx_status inv_attention(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  hmx_attention_params ap = {(int)p[0], (int64_t)p[1], (float)p[2]};
  return hmx_attention(c, t[0], t[1], t[2], &ap, t[3]);
}
static hmx_status inv_swiglu(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_swiglu(c, t[0], t[1], t[2], t[3], (int64_t)p[0], t[4]);
}

/* issue 7 ops */
static hmx_status inv_strassen(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_strassen(c, t[0], t[1], (int64_t)p[0], t[2]);
}
static hmx_status inv_mhffn(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  (void)p;
  return hmx_mhffn(c, t[0], t[1], t[2], t[3], t[4], t[5], t[6]);
}
static hmx_status inv_flashmhf(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_flashmhf(c, t[0], t[1], t[2], t[3], t[4], t[5], t[6], (int64_t)p[0], t[7]);
}
static hmx_status inv_linformer(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  return hmx_linformer(c, t[0], t[1], t[2], t[3], t[4], (float)p[0], t[5]);
}
/* params of the selecting sketches: k, scale, then lambda/iters/seed by op */
static hmx_sketch_params sketch_params(const double *p, int has_lambda, int has_iters,
                                       int has_seed) {
  hmx_sketch_params sp = {(int64_t)p[0], (float)p[1], 0.0f, 0, 0};
  int i = 2;
  if (has_lambda) sp.lambda = (float)p[i++];
  if (has_iters) sp.iters = (int)p[i++];
  if (has_seed) sp.seed = (uint64_t)p[i++];
  return sp;
}
static hmx_status inv_levattention(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  hmx_sketch_params sp = sketch_params(p, 1, 0, 0);
  return hmx_levattention(c, t[0], t[1], t[2], &sp, t[3], t[4]);
}
static hmx_status inv_lewis(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  hmx_sketch_params sp = sketch_params(p, 1, 1, 0);
  return hmx_lewis(c, t[0], t[1], t[2], &sp, t[3], t[4]);
}
static hmx_status inv_priority(const hmx_context *c, hmx_tensor *const *t, const double *p) {
  hmx_sketch_params sp = sketch_params(p, 0, 0, 1);
  return hmx_priority(c, t[0], t[1], t[2], &sp, t[3], t[4]);
}

/* ---------------------------------------------------------------- output shapes */

static hmx_status shape_like(const hmx_tensor *src, hmx_tensor *out) {
  if (!src) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "missing input tensor");
  out->ndim = src->ndim;
  for (int i = 0; i < src->ndim; i++) out->shape[i] = src->shape[i];
  return HMX_OK;
}
static hmx_status shape_first(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)p; (void)arg;
  return shape_like(t[0], out);
}
static hmx_status shape_gemm(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)arg;
  if (!t[0] || !t[1] || t[0]->ndim != 2 || t[1]->ndim != 2)
    return hmx_fail(HMX_ERR_SHAPE, "gemm: a and b must be 2-d");
  out->ndim = 2;
  out->shape[0] = t[0]->shape[0];
  out->shape[1] = (int)p[0] ? t[1]->shape[0] : t[1]->shape[1];
  return HMX_OK;
}
static hmx_status shape_swiglu(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)p; (void)arg;
  if (!t[0] || !t[3] || t[0]->ndim != 2 || t[3]->ndim != 2)
    return hmx_fail(HMX_ERR_SHAPE, "swiglu: x and w2 must be 2-d");
  out->ndim = 2;
  out->shape[0] = t[0]->shape[0];
  out->shape[1] = t[3]->shape[1];
  return HMX_OK;
}

static hmx_status shape_strassen(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)p; (void)arg;
  if (!t[0] || !t[1] || t[0]->ndim != 2 || t[1]->ndim != 2)
    return hmx_fail(HMX_ERR_SHAPE, "strassen: a and b must be 2-d");
  out->ndim = 2;
  out->shape[0] = t[0]->shape[0];
  out->shape[1] = t[1]->shape[1];
  return HMX_OK;
}
/* mhffn and flashmhf: y [T, d_out], T from x, d_out from w_out (t[nin - 1]). */
static hmx_status shape_ffn(hmx_tensor *const *t, int w_out, const char *op, hmx_tensor *out) {
  if (!t[0] || !t[w_out] || t[0]->ndim != 2 || t[w_out]->ndim != 2)
    return hmx_fail(HMX_ERR_SHAPE, "%s: x and w_out must be 2-d", op);
  out->ndim = 2;
  out->shape[0] = t[0]->shape[0];
  out->shape[1] = t[w_out]->shape[1];
  return HMX_OK;
}
static hmx_status shape_mhffn(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)p; (void)arg;
  return shape_ffn(t, 5, "mhffn", out);
}
static hmx_status shape_flashmhf(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  (void)p; (void)arg;
  return shape_ffn(t, 6, "flashmhf", out);
}
/* selecting sketches: o like q (arg 3), idx [B, Hkv, k] (arg 4, k = p[0]) */
static hmx_status shape_select(hmx_tensor *const *t, const double *p, int arg, hmx_tensor *out) {
  if (arg == 3) return shape_like(t[0], out);
  if (!t[0] || !t[1] || t[0]->ndim != 4 || t[1]->ndim != 4)
    return hmx_fail(HMX_ERR_SHAPE, "sketched attention: q and k must be 4-d");
  out->ndim = 3;
  out->shape[0] = t[0]->shape[0];
  out->shape[1] = t[1]->shape[2];
  out->shape[2] = p[0] > 0 ? (int64_t)p[0] : 0;
  return HMX_OK;
}

/* ---------------------------------------------------------------- the table */

#define IN(n, r, d) {n, 0, r, 0, 0, d}
#define IN_OPT(n, r, d) {n, 0, r, 1, 0, d}
#define IN_INT(n, r, d) {n, 0, r, 0, 1, d}
#define OUT(n, r, d) {n, 1, r, 0, 0, d}
#define OUT_INT(n, r, d) {n, 1, r, 0, 1, d}
#define SKETCH_QKV IN("q", 4, "[B, S, Hq, D] queries"), IN("k", 4, "[B, N, Hkv, D] keys"), \
                   IN("v", 4, "[B, N, Hkv, D] values")
#define SKETCH_K {"k", 64, 1, "keys kept per (batch, kv head), 1..N"}
#define SKETCH_SCALE {"scale", 0, 0, "score multiplier; 0 = 1/sqrt(D)"}
#define SKETCH_LAMBDA {"lambda", 1e-3, 0, "damping: tau uses (K^T K + lambda I)^-1, > 0"}

static const hmx_opspec ops[] = {
    {"fwht", "y = scale * H_n x, row by row (n = 2^k <= 2^20, or m*2^k, m in 12,20,28,40)",
     2, {IN("x", 2, "[batch, n] input rows"), OUT("y", 2, "[batch, n]")},
     2, {{"scale", 1.0, 0, "multiplier applied once at the end"},
         {"m", 0, 1, "factor of n = m * 2^k: 0 = auto (1, else 12, 20, 28), or 1, 12, 20, 28, 40"}},
     offsetof(hmx_backend, fwht), shape_first, inv_fwht},
    {"hadamard_mix", "y = (H_n x / sqrt(n)) * alpha + beta: the attention output projection as a "
     "fixed orthogonal mix", 4,
     {IN("x", 2, "[batch, n]"), IN("alpha", 1, "[n] learnable scale"),
      IN("beta", 1, "[n] learnable bias"), OUT("y", 2, "[batch, n]")},
     0, {{0}}, offsetof(hmx_backend, hadamard_mix), shape_first, inv_mix},
    {"gemm", "c = a b + bias (b is [K, N], or [N, K] with trans_b)", 4,
     {IN("a", 2, "[M, K]"), IN("b", 2, "[K, N] or [N, K]"), IN_OPT("bias", 1, "[N], optional"),
      OUT("c", 2, "[M, N]")},
     1, {{"trans_b", 0, 1, "1: b is stored [N, K] (PyTorch Linear layout)"}},
     offsetof(hmx_backend, gemm), shape_gemm, inv_gemm},
    {"rmsnorm", "y = x / sqrt(mean(x^2) + eps) * weight, per row", 3,
     {IN("x", 2, "[rows, n]"), IN("weight", 1, "[n]"), OUT("y", 2, "[rows, n]")},
     1, {{"eps", 1e-6, 0, "added to the mean square"}},
     offsetof(hmx_backend, rmsnorm), shape_first, inv_rmsnorm},
    {"layernorm", "y = (x - mean) / sqrt(var + eps) * weight + bias, per row", 4,
     {IN("x", 2, "[rows, n]"), IN("weight", 1, "[n]"), IN_OPT("bias", 1, "[n], optional"),
      OUT("y", 2, "[rows, n]")},
     1, {{"eps", 1e-5, 0, "added to the variance"}},
     offsetof(hmx_backend, layernorm), shape_first, inv_layernorm},
    {"rope", "rotary position embedding of the first rot_dim channels of each head", 3,
     {IN("x", 3, "[T, H, D]"), IN_INT("positions", 1, "[T] i32 token positions"),
      OUT("y", 3, "[T, H, D]")},
     3, {{"base", 10000.0, 0, "theta: angle = pos * base^(-2i/rot_dim)"},
         {"rot_dim", 0, 1, "rotated channels (even); 0 = D"},
         {"style", 0, 1, "0 = half (NeoX/HF), 1 = interleaved (GPT-J/GGUF)"}},
     offsetof(hmx_backend, rope), shape_first, inv_rope},
    {"attention", "softmax(q k^T * scale) v per head, grouped KV heads, causal or not", 4,
     {IN("q", 4, "[B, Sq, Hq, D]"), IN("k", 4, "[B, Skv, Hkv, D]"), IN("v", 4, "[B, Skv, Hkv, D]"),
      OUT("o", 4, "[B, Sq, Hq, D]")},
     3, {{"causal", 0, 1, "1: query i sees keys <= q_offset + i"},
         {"q_offset", -1, 1, "position of the first query; -1 = Skv - Sq"},
         {"scale", 0, 0, "score multiplier; 0 = 1/sqrt(D)"}},
     offsetof(hmx_backend, attention), shape_first, inv_attention},
    {"swiglu", "y = (silu(x W1) * (x W3)) W2, in hidden-dimension blocks", 5,
     {IN("x", 2, "[T, d]"), IN("w1", 2, "[d, h]"), IN("w3", 2, "[d, h]"), IN("w2", 2, "[h, d_out]"),
      OUT("y", 2, "[T, d_out]")},
     1, {{"block", 0, 1, "hidden units per block; 0 = backend's choice (bits do not change)"}},
     offsetof(hmx_backend, swiglu), shape_swiglu, inv_swiglu},
    {"strassen", "c = a b by Strassen's recursion (own rounding; canonical gemm at the cutoff)", 3,
     {IN("a", 2, "[M, K]"), IN("b", 2, "[K, N]"), OUT("c", 2, "[M, N]")},
     1, {{"cutoff", 0, 1, "recurse while min(M, K, N) > cutoff; 0 = 64"}},
     offsetof(hmx_backend, strassen), shape_strassen, inv_strassen},
    {"mhffn", "naive multi-head FFN: per-head SwiGLU on q = x W_in, concat, W_out", 7,
     {IN("x", 2, "[T, d]"), IN("w_in", 2, "[d, H*dh]"), IN("w1", 3, "[H, dh, f]"),
      IN("w3", 3, "[H, dh, f]"), IN("w2", 3, "[H, f, dh]"), IN("w_out", 2, "[H*dh, d_out]"),
      OUT("y", 2, "[T, d_out]")},
     0, {{0}}, offsetof(hmx_backend, mhffn), shape_mhffn, inv_mhffn},
    {"flashmhf", "FlashMHF: per head, E gated SwiGLU sub-networks, blockwise over their width",
     8,
     {IN("x", 2, "[T, d]"), IN("w_in", 2, "[d, H*dh]"), IN("gate", 3, "[H, dh, E] gate G"),
      IN("wk", 4, "[H, E, dh, de] K (silu branch)"), IN("wu", 4, "[H, E, dh, de] U (linear branch)"),
      IN("wv", 4, "[H, E, de, dh] V (down projection)"), IN("w_out", 2, "[H*dh, d_out]"),
      OUT("y", 2, "[T, d_out]")},
     1, {{"block", 0, 1, "hidden units per block; 0 = backend's choice (bits do not change)"}},
     offsetof(hmx_backend, flashmhf), shape_flashmhf, inv_flashmhf},
    {"linformer", "bidirectional attention over K' = E K, V' = F V (projected length kp)", 6,
     {SKETCH_QKV, IN("e", 2, "[kp, N] key projection E"), IN("f", 2, "[kp, N] value projection F"),
      OUT("o", 4, "[B, S, Hq, D]")},
     1, {SKETCH_SCALE}, offsetof(hmx_backend, linformer), shape_first, inv_linformer},
    {"levattention", "bidirectional attention over the k keys of largest leverage score", 5,
     {SKETCH_QKV, OUT("o", 4, "[B, S, Hq, D]"),
      OUT_INT("idx", 3, "[B, Hkv, k] i32 kept keys, increasing")},
     3, {SKETCH_K, SKETCH_SCALE, SKETCH_LAMBDA},
     offsetof(hmx_backend, levattention), shape_select, inv_levattention},
    {"lewis", "bidirectional attention over the k keys of largest l1 Lewis weight", 5,
     {SKETCH_QKV, OUT("o", 4, "[B, S, Hq, D]"),
      OUT_INT("idx", 3, "[B, Hkv, k] i32 kept keys, increasing")},
     4, {SKETCH_K, SKETCH_SCALE, SKETCH_LAMBDA,
         {"iters", 4, 1, "fixed-point iterations w <- sqrt(w tau(W^-1/2 K)), >= 1"}},
     offsetof(hmx_backend, lewis), shape_select, inv_lewis},
    {"priority", "bidirectional attention over k keys by priority sampling (weights |k_j|^2)", 5,
     {SKETCH_QKV, OUT("o", 4, "[B, S, Hq, D]"),
      OUT_INT("idx", 3, "[B, Hkv, k] i32 kept keys, increasing")},
     3, {SKETCH_K, SKETCH_SCALE, {"seed", 0, 1, "seed of the counter RNG (0..2^31-1 here)"}},
     offsetof(hmx_backend, priority_attn), shape_select, inv_priority},
};

int hmx_op_count(void) { return (int)(sizeof ops / sizeof ops[0]); }
const hmx_opspec *hmx_op_at(int i) { return i >= 0 && i < hmx_op_count() ? &ops[i] : NULL; }

const hmx_opspec *hmx_op_find(const char *name) {
  for (int i = 0; name && i < hmx_op_count(); i++)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  return NULL;
}

int hmx_op_implemented(const hmx_opspec *op, const hmx_backend *b) {
  /* Every kernel slot is a function pointer; read it as one (all function
   * pointer types have the same representation on supported platforms). */
  void (*fn)(void);
  memcpy(&fn, (const char *)b + op->kernel_offset, sizeof fn);
  return fn != NULL;
}

const hmx_backend *hmx_op_backend(const hmx_opspec *op, const hmx_backend *b, int fallback) {
  if (hmx_op_implemented(op, b)) return b;
  if (!fallback) return NULL;
  const hmx_backend *best = NULL;
  for (int i = 0; i < hmx_backends_count; i++) {
    const hmx_backend *c = hmx_backends[i];
    if (hmx_op_implemented(op, c) && hmx_backend_available(c) &&
        (!best || c->priority > best->priority))
      best = c;
  }
  return best;
}

int hmx_op_param_index(const hmx_opspec *op, const char *name) {
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i].name, name) == 0) return i;
  return -1;
}

int hmx_op_arg_index(const hmx_opspec *op, const char *name) {
  for (int i = 0; i < op->nargs; i++)
    if (strcmp(op->args[i].name, name) == 0) return i;
  return -1;
}
