/* The public entry points: validate, resolve the backend, stage to
 * contiguous f32, call the kernel, write back. One function per operation. */
#include "dispatch.h"
#include "dev_stage.h"
#include "ops_stage.h" /* hmx_staging_begin / _finish */
#include "canon.h"
#include "rope_tabled.h"
#include "attention_kb16.h"
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Inputs staged to f32 and one output; released together. */

/* Whether weight tensors w0 (and w1, w2 when not NULL) can be passed as
 * 16-bit floats: all bf16, or all f16, contiguous and aligned to 2 bytes. */
static int weights16_plain(const hmx_tensor *w0, const hmx_tensor *w1, const hmx_tensor *w2) {
  if (w0->dtype != HMX_BF16 && w0->dtype != HMX_F16) return 0;
  const hmx_tensor *ws[] = {w0, w1, w2};
  for (int i = 0; i < 3; i++) {
    if (!ws[i]) continue;
    if (ws[i]->dtype != w0->dtype || !hmx_tensor_is_contiguous(ws[i]) ||
        (uintptr_t)ws[i]->data % 2u)
      return 0;
  }
  return 1;
}

/* Whether 16-bit weights go to the kernel unconverted (else they are staged
 * to f32 like any input): the exact kernel of a backend with op_bit
 * (backend.h, HMX_W16_*) in its weights16, or (fast) a fast kernel that
 * takes bf16 tensors (src/fast.h, HMX_FAST_W_BF16_ROWS). */
static int weights16_in_place(const hmx_exec *ex, int fast, unsigned op_bit,
                              const hmx_tensor *w0, const hmx_tensor *w1, const hmx_tensor *w2) {
  if (!weights16_plain(w0, w1, w2)) return 0;
  if (fast)
    return w0->dtype == HMX_BF16 && (hmx_fast_weights16(ex->be) & HMX_FAST_W_BF16_ROWS);
  return (ex->be->weights16 & op_bit) != 0;
}

#define TRY(expr) do { hmx_status s_ = (expr); if (s_ != HMX_OK) return s_; } while (0)

/* The end of a device-memory call: nothing was staged, so only the message. */
static hmx_status device_finish(hmx_status s, const char *op, const hmx_exec *ex) {
  if (s != HMX_OK && hmx_last_error()[0] == '\0')
    hmx_fail(s, "%s: backend '%s' failed on device memory: %s", op, ex->be->name,
             hmx_status_string(s));
  return s;
}

static hmx_status check_finite(const char *op, const char *name, float v) {
  if (!isfinite(v))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: parameter %s must be finite (got %g)", op,
                    name, (double)v);
  return HMX_OK;
}

/* Resolve the factor m of n = m * 2^k (see hmx_fwht_factor) and check limits. */
static hmx_status check_fwht_size(const char *op, int64_t n, int m_req, int *m) {
  int64_t p;
  if (m_req != 0 && m_req != 1 && m_req != 12 && m_req != 20 && m_req != 28 && m_req != 40)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: factor m = %d is not 0 (auto), 1, 12, 20, 28 "
                    "or 40", op, m_req);
  if (n < 1 || !hmx_fwht_split(n, m_req, m, &p)) {
    if (m_req > 1)
      return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: n = %lld is not %d * 2^k with k <= 15", op,
                      (long long)n, m_req);
    return hmx_fail(HMX_ERR_UNSUPPORTED,
                    "%s: n = %lld is not a supported size (2^k with k <= 20, or m * 2^k with m "
                    "in {12, 20, 28, 40} and k <= 15)", op, (long long)n);
  }
  return HMX_OK;
}

hmx_status hmx_fwht(const hmx_context *ctx, const hmx_tensor *x, hmx_tensor *y, float scale) {
  return hmx_fwht_factor(ctx, x, y, scale, 0);
}

hmx_status hmx_fwht_factor(const hmx_context *ctx, const hmx_tensor *x, hmx_tensor *y,
                           float scale, int m_req) {
  static const char op[] = "fwht";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "x", x, 2));
  TRY(hmx_check_float(op, "y", y, 2));
  TRY(hmx_check_dim(op, "y", y, 0, x->shape[0], "batch of x"));
  TRY(hmx_check_dim(op, "y", y, 1, x->shape[1], "n of x"));
  int m;
  TRY(check_fwht_size(op, x->shape[1], m_req, &m));
  TRY(check_finite(op, "scale", scale));
  TRY(hmx_check_alias(op, "y", y, "x", x, 1));
  const hmx_tensor *place[] = {x, y};
  static const char *const place_names[] = {"x", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 2, 0x3u));
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_fwht_args *, const hmx_device_call *);
    HMX_PICK_DEVICE(ex, fwht, dfn);
    hmx_fwht_args a = {x->data, y->data, x->shape[0], x->shape[1], m, scale, ex.threads};
    return device_finish(dfn(&a, &ex.call), op, &ex);
  }
  hmx_status (*fn)(const hmx_fwht_args *);
  HMX_PICK(ex, fwht, fn);
  hmx_staging st;
  const hmx_tensor *ins[] = {x};
  hmx_status s = hmx_staging_begin(&st, ins, 1, y);
  if (s == HMX_OK) {
    hmx_fwht_args a = {st.in[0].p, st.out.p, x->shape[0], x->shape[1], m, scale, ex.threads};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}

hmx_status hmx_hadamard_mix(const hmx_context *ctx, const hmx_tensor *x,
                            const hmx_tensor *alpha, const hmx_tensor *beta, hmx_tensor *y) {
  static const char op[] = "hadamard_mix";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "x", x, 2));
  TRY(hmx_check_float(op, "alpha", alpha, 1));
  TRY(hmx_check_float(op, "beta", beta, 1));
  TRY(hmx_check_float(op, "y", y, 2));
  int64_t n = x->shape[1];
  int m;
  TRY(check_fwht_size(op, n, 0, &m));
  TRY(hmx_check_dim(op, "alpha", alpha, 0, n, "n of x"));
  TRY(hmx_check_dim(op, "beta", beta, 0, n, "n of x"));
  TRY(hmx_check_dim(op, "y", y, 0, x->shape[0], "batch of x"));
  TRY(hmx_check_dim(op, "y", y, 1, n, "n of x"));
  TRY(hmx_check_alias(op, "y", y, "x", x, 1));
  TRY(hmx_check_alias(op, "y", y, "alpha", alpha, 0));
  TRY(hmx_check_alias(op, "y", y, "beta", beta, 0));
  const hmx_tensor *place[] = {x, y, alpha, beta};
  static const char *const place_names[] = {"x", "y", "alpha", "beta"};
  /* in device memory x and y (one dtype) are read and written by the kernel
   * itself; 16-bit alpha / beta are widened into f32 device scratch first,
   * exactly, as the host path widens them, so the bits are the same */
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 4, 0x3u | HMX_PLACE_STAGE_REST));
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_hadamard_mix_args *, const hmx_device_call *);
    HMX_PICK_DEVICE(ex, hadamard_mix, dfn);
    hmx_dev_staging ds;
    const hmx_tensor *dins[] = {alpha, beta};
    hmx_status s = hmx_dev_staging_begin(&ds, &ex, dins, 2, NULL);
    if (s == HMX_OK) {
      hmx_hadamard_mix_args a = {x->data, ds.in[0], ds.in[1], y->data,
                                 x->shape[0], n, m, ex.threads};
      s = dfn(&a, &ex.call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, &ex, NULL, s), op, &ex);
  }
  hmx_status (*fn)(const hmx_hadamard_mix_args *);
  HMX_PICK(ex, hadamard_mix, fn);
  hmx_staging st;
  const hmx_tensor *ins[] = {x, alpha, beta};
  hmx_status s = hmx_staging_begin(&st, ins, 3, y);
  if (s == HMX_OK) {
    hmx_hadamard_mix_args a = {st.in[0].p, st.in[1].p, st.in[2].p, st.out.p,
                               x->shape[0], n, m, ex.threads};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}

hmx_status hmx_gemm(const hmx_context *ctx, const hmx_tensor *a, const hmx_tensor *b,
                    int trans_b, const hmx_tensor *bias, hmx_tensor *c) {
  static const char op[] = "gemm";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "a", a, 2));
  TRY(hmx_check_float(op, "b", b, 2));
  TRY(hmx_check_float(op, "c", c, 2));
  if (trans_b != 0 && trans_b != 1)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "gemm: trans_b must be 0 or 1 (got %d)", trans_b);
  int64_t m = a->shape[0], k = a->shape[1], n = trans_b ? b->shape[0] : b->shape[1];
  TRY(hmx_check_dim(op, "b", b, trans_b ? 1 : 0, k, "K, the columns of a"));
  TRY(hmx_check_dim(op, "c", c, 0, m, "M, the rows of a"));
  TRY(hmx_check_dim(op, "c", c, 1, n, "N of b"));
  if (bias) {
    TRY(hmx_check_float(op, "bias", bias, 1));
    TRY(hmx_check_dim(op, "bias", bias, 0, n, "N of b"));
  }
  TRY(hmx_check_alias(op, "c", c, "a", a, 0));
  TRY(hmx_check_alias(op, "c", c, "b", b, 0));
  TRY(hmx_check_alias(op, "c", c, "bias", bias, 0));
  const hmx_tensor *place[] = {a, b, bias, c};
  static const char *const place_names[] = {"a", "b", "bias", "c"};
  /* in the fast tier, device a, b and c may be bf16 or f16 (one dtype, read
   * by the fast kernels); in the exact tier any of them (dev_stage.h) */
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 4,
                     ex.tier == HMX_TIER_FAST ? 0xBu : HMX_PLACE_STAGED));
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_gemm_args *, const hmx_device_call *);
    if (ex.fast && ex.fast->dev_gemm) {
      hmx_gemm_args g = {a->data, b->data, bias ? bias->data : NULL, c->data, m, n, k, trans_b,
                         ex.threads, HMX_F32, NULL, NULL, 0, 0, NULL};
      return device_finish(ex.fast->dev_gemm(&g, &ex.call), op, &ex);
    }
    if (ex.call.io_dtype != HMX_F32)
      return hmx_fail(HMX_ERR_DTYPE, "gemm: device tensors are %s; backend '%s' has no fast "
                      "device gemm for them", hmx_dtype_name(ex.call.io_dtype), ex.be->name);
    HMX_PICK_DEVICE(ex, gemm, dfn);
    hmx_dev_staging ds;
    const hmx_tensor *dins[] = {a, b, bias};
    hmx_status s = hmx_dev_staging_begin(&ds, &ex, dins, 3, c);
    if (s == HMX_OK) {
      hmx_gemm_args g = {ds.in[0], ds.in[1], ds.in[2], ds.out, m, n, k, trans_b,
                         ex.threads, HMX_F32, NULL, NULL, 0, 0, NULL};
      s = dfn(&g, &ex.call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, &ex, c, s), op, &ex);
  }
  hmx_status (*fn)(const hmx_gemm_args *);
  HMX_PICK(ex, gemm, fn);
  int fast;
  HMX_PICK_FAST(ex, gemm, fn, fast, m);
  hmx_staging st;
  const int w16 = weights16_in_place(&ex, fast, HMX_W16_GEMM, b, NULL, NULL);
  const hmx_tensor *ins[] = {a, w16 ? NULL : b, bias};
  hmx_status s = hmx_staging_begin(&st, ins, 3, c);
  if (s == HMX_OK) {
    hmx_gemm_args g = {st.in[0].p, st.in[1].p, st.in[2].p, st.out.p, m, n, k, trans_b,
                       ex.threads, w16 ? b->dtype : HMX_F32, w16 ? b->data : NULL, NULL, 0, 0,
                       NULL};
    s = fn(&g);
  }
  return hmx_staging_finish(&st, c, s, op, &ex);
}

static hmx_status norm_common(const hmx_context *ctx, const char *op, int layer,
                              const hmx_tensor *x, const hmx_tensor *w, const hmx_tensor *bias,
                              float eps, hmx_tensor *y) {
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "x", x, 2));
  TRY(hmx_check_float(op, "weight", w, 1));
  TRY(hmx_check_float(op, "y", y, 2));
  int64_t n = x->shape[1];
  if (n < 1 || n > (1 << 24))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: row length %lld outside 1..2^24", op,
                    (long long)n);
  TRY(hmx_check_dim(op, "weight", w, 0, n, "row length of x"));
  if (bias) {
    TRY(hmx_check_float(op, "bias", bias, 1));
    TRY(hmx_check_dim(op, "bias", bias, 0, n, "row length of x"));
  }
  TRY(hmx_check_dim(op, "y", y, 0, x->shape[0], "rows of x"));
  TRY(hmx_check_dim(op, "y", y, 1, n, "row length of x"));
  if (!isfinite(eps) || eps < 0.0f)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0 (got %g)", op,
                    (double)eps);
  TRY(hmx_check_alias(op, "y", y, "x", x, 1));
  TRY(hmx_check_alias(op, "y", y, "weight", w, 0));
  TRY(hmx_check_alias(op, "y", y, "bias", bias, 0));
  const hmx_tensor *place[] = {x, w, bias, y};
  static const char *const place_names[] = {"x", "weight", "bias", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 4, HMX_PLACE_STAGED));
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_norm_args *, const hmx_device_call *);
    if (layer) HMX_PICK_DEVICE(ex, layernorm, dfn);
    else HMX_PICK_DEVICE(ex, rmsnorm, dfn);
    hmx_dev_staging ds;
    const hmx_tensor *dins[] = {x, w, bias};
    hmx_status s = hmx_dev_staging_begin(&ds, &ex, dins, 3, y);
    if (s == HMX_OK) {
      hmx_norm_args a = {ds.in[0], ds.in[1], ds.in[2], ds.out, x->shape[0], n, eps, ex.threads};
      s = dfn(&a, &ex.call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, &ex, y, s), op, &ex);
  }
  hmx_status (*fn)(const hmx_norm_args *);
  if (layer) HMX_PICK(ex, layernorm, fn);
  else HMX_PICK(ex, rmsnorm, fn);
  hmx_staging st;
  const hmx_tensor *ins[] = {x, w, bias};
  hmx_status s = hmx_staging_begin(&st, ins, 3, y);
  if (s == HMX_OK) {
    hmx_norm_args a = {st.in[0].p, st.in[1].p, st.in[2].p, st.out.p, x->shape[0], n, eps,
                       ex.threads};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}

hmx_status hmx_rmsnorm(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *weight,
                       float eps, hmx_tensor *y) {
  return norm_common(ctx, "rmsnorm", 0, x, weight, NULL, eps, y);
}

hmx_status hmx_layernorm(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *weight,
                         const hmx_tensor *bias, float eps, hmx_tensor *y) {
  return norm_common(ctx, "layernorm", 1, x, weight, bias, eps, y);
}

/* The checks of x, y, rot_dim and style that every rope entry makes. */
static hmx_status rope_check(const char *op, const hmx_tensor *x, int rot_dim,
                             hmx_rope_style style, const hmx_tensor *y) {
  TRY(hmx_check_float(op, "x", x, 3));
  TRY(hmx_check_float(op, "y", y, 3));
  for (int i = 0; i < 3; i++) TRY(hmx_check_dim(op, "y", y, i, x->shape[i], "same as x"));
  if (style != HMX_ROPE_HALF && style != HMX_ROPE_INTERLEAVED)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: unknown style %d", op, (int)style);
  if (rot_dim < 2 || rot_dim % 2 || rot_dim > x->shape[2])
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "%s: rot_dim must be even, >= 2 and <= head dim %lld (got %d)", op,
                    (long long)x->shape[2], rot_dim);
  return hmx_check_alias(op, "y", y, "x", x, 1);
}

/* Rotate x into y with the angle table cs, sn ([T, rot_dim/2],
 * hmx_rope_table: host memory, or device memory with tab_on_device, device
 * calls only) on ex's backend (x and y already placed). */
static hmx_status rope_run(const char *op, hmx_exec *ex, const hmx_tensor *x, const float *cs,
                           const float *sn, int tab_on_device, int rot_dim,
                           hmx_rope_style style, hmx_tensor *y) {
  hmx_status (*fn)(const hmx_rope_args *) = NULL;
  hmx_status (*dfn)(const hmx_rope_args *, const hmx_device_call *) = NULL;
  if (ex->dev) HMX_PICK_DEVICE(*ex, rope, dfn);
  else HMX_PICK(*ex, rope, fn);
  if (ex->dev) { /* a host table is copied by the backend before it returns */
    hmx_dev_staging ds;
    const hmx_tensor *dins[] = {x};
    hmx_status s = hmx_dev_staging_begin(&ds, ex, dins, 1, y);
    if (s == HMX_OK) {
      hmx_rope_args a = {ds.in[0], ds.out, cs, sn, x->shape[0], x->shape[1], x->shape[2],
                         rot_dim, style, ex->threads, tab_on_device};
      s = dfn(&a, &ex->call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, ex, y, s), op, ex);
  }
  hmx_staging st;
  const hmx_tensor *ins[] = {x};
  hmx_status s = hmx_staging_begin(&st, ins, 1, y);
  if (s == HMX_OK) {
    hmx_rope_args a = {st.in[0].p, st.out.p, cs, sn, x->shape[0], x->shape[1], x->shape[2],
                       rot_dim, style, ex->threads, 0};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, ex);
}

hmx_status hmx_rope(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *positions,
                    float base, int rot_dim, hmx_rope_style style, hmx_tensor *y) {
  static const char op[] = "rope";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "x", x, 3));
  TRY(hmx_check_int32(op, "positions", positions, 1));
  TRY(hmx_check_dim(op, "positions", positions, 0, x->shape[0], "tokens of x"));
  TRY(rope_check(op, x, rot_dim, style, y));
  if (!(base > 1.0f) || !isfinite(base))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope: base must be finite and > 1 (got %g)",
                    (double)base);
  const hmx_tensor *place[] = {x, positions, y};
  static const char *const place_names[] = {"x", "positions", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 3, HMX_PLACE_STAGED));
  /* positions: staged by hand (i32); the angle table is always computed on
   * the host (NUMERICS §E), so device positions come over first */
  const int64_t t = x->shape[0], half = rot_dim / 2;
  int32_t *pos = hmx_alloc_array((size_t)t, sizeof *pos);
  float *cs = hmx_alloc_array((size_t)(t * half * 2), sizeof *cs);
  if (t > 0 && (!pos || !cs)) {
    free(pos);
    free(cs);
    return hmx_fail(HMX_ERR_NO_MEMORY, "rope: cannot allocate the angle table");
  }
  hmx_status s = HMX_OK;
  if (ex.dev) {
    if (t > 0) s = ex.dev->to_host(pos, positions->data, (size_t)t * sizeof *pos, ex.call.stream);
  } else {
    for (int64_t i = 0; i < t; i++) {
      const int32_t *p = (const int32_t *)positions->data +
                         (hmx_tensor_is_contiguous(positions) ? i : i * positions->stride[0]);
      pos[i] = *p;
    }
  }
  if (s == HMX_OK)
    s = hmx_rope_table_on(ex.be, ex.threads, pos, t, rot_dim, base, cs, cs + t * half);
  free(pos);
  if (s == HMX_OK) s = rope_run(op, &ex, x, cs, cs + t * half, 0, rot_dim, style, y);
  free(cs);
  return s;
}

hmx_status hmx_rope_tabled(const hmx_context *ctx, const hmx_tensor *x, const float *cos_tab,
                           const float *sin_tab, int rot_dim, hmx_rope_style style,
                           hmx_tensor *y) {
  static const char op[] = "rope";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(rope_check(op, x, rot_dim, style, y));
  if (x->shape[0] > 0 && (!cos_tab || !sin_tab))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "rope: NULL angle table");
  const hmx_tensor *place[] = {x, y};
  static const char *const place_names[] = {"x", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 2, HMX_PLACE_STAGED));
  /* the table is in the memory of x (src/rope_tabled.h) */
  return rope_run(op, &ex, x, cos_tab, sin_tab, ex.dev != NULL, rot_dim, style, y);
}

/* K (is_k) or V in the cache layout of hmx_attention_kb16 copied back to
 * rows [B, Skv, Hkv, D] of its dtype (moves bits only); NULL when out of
 * memory. */
static void *kb16_to_rows(const hmx_tensor *t, int64_t kblocks, int is_k) {
  const int64_t B = t->shape[0], S = t->shape[1], H = t->shape[2], D = t->shape[3];
  const size_t es = hmx_dtype_size(t->dtype);
  char *rows = hmx_alloc_array((size_t)(B * S * H * D), es);
  if (!rows) return NULL;
  for (int64_t b = 0; b < B; b++)
    hmx_kb16_rows(t->data, kblocks, H, D, es, is_k, b, 0, S, rows + (size_t)(b * S * H * D) * es,
                  1);
  return rows;
}

static hmx_status attention_run(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                                const hmx_tensor *v, const hmx_attention_params *p,
                                hmx_tensor *o, int64_t kblocks);

hmx_status hmx_attention(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                         const hmx_tensor *v, const hmx_attention_params *p, hmx_tensor *o) {
  return attention_run(ctx, q, k, v, p, o, 0);
}

hmx_status hmx_attention_kb16(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                              const hmx_tensor *v, const hmx_attention_params *p, hmx_tensor *o,
                              int64_t kblocks) {
  if (k && (kblocks < 1 || kblocks % 4 != 0 || k->ndim != 4 || k->shape[1] > 16 * kblocks))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "attention: %lld key blocks (a multiple of 4 covering the keys) expected",
                    (long long)kblocks);
  return attention_run(ctx, q, k, v, p, o, kblocks);
}

/* kblocks: 0, or k in the blocked layout (hmx_attention_kb16). */
static hmx_status attention_run(const hmx_context *ctx, const hmx_tensor *q, const hmx_tensor *k,
                                const hmx_tensor *v, const hmx_attention_params *p,
                                hmx_tensor *o, int64_t kblocks) {
  static const char op[] = "attention";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  if (!p) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "attention: params is NULL");
  TRY(hmx_check_float(op, "q", q, 4));
  TRY(hmx_check_float(op, "k", k, 4));
  TRY(hmx_check_float(op, "v", v, 4));
  TRY(hmx_check_float(op, "o", o, 4));
  int64_t b = q->shape[0], sq = q->shape[1], hq = q->shape[2], d = q->shape[3];
  int64_t skv = k->shape[1], hkv = k->shape[2];
  TRY(hmx_check_dim(op, "k", k, 0, b, "batch of q"));
  TRY(hmx_check_dim(op, "k", k, 3, d, "head dim of q"));
  for (int i = 0; i < 4; i++) TRY(hmx_check_dim(op, "v", v, i, k->shape[i], "same as k"));
  for (int i = 0; i < 4; i++) TRY(hmx_check_dim(op, "o", o, i, q->shape[i], "same as q"));
  if (hkv < 1 || hq % hkv != 0)
    return hmx_fail(HMX_ERR_SHAPE, "attention: query heads (%lld) must be a multiple of kv heads (%lld)",
                    (long long)hq, (long long)hkv);
  if (d < 1) return hmx_fail(HMX_ERR_SHAPE, "attention: head dim must be >= 1");
  if (p->causal != 0 && p->causal != 1)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "attention: causal must be 0 or 1");
  int64_t q_offset = p->q_offset < 0 ? skv - sq : p->q_offset;
  if (sq > 0 && skv < 1)
    return hmx_fail(HMX_ERR_SHAPE, "attention: no keys (Skv = 0) for %lld queries", (long long)sq);
  if (p->causal && (q_offset < 0 || q_offset + sq > skv))
    return hmx_fail(HMX_ERR_SHAPE,
                    "attention: causal queries at positions %lld..%lld need keys up to there, "
                    "but Skv = %lld", (long long)q_offset, (long long)(q_offset + sq - 1),
                    (long long)skv);
  float scale = p->scale;
  if (isnan(scale) || scale <= 0.0f) scale = (float)(1.0 / sqrt((double)d));
  if (!isfinite(scale))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "attention: scale must be finite");
  TRY(hmx_check_alias(op, "o", o, "q", q, 0));
  TRY(hmx_check_alias(op, "o", o, "k", k, 0));
  TRY(hmx_check_alias(op, "o", o, "v", v, 0));
  const hmx_tensor *place[] = {q, k, v, o};
  static const char *const place_names[] = {"q", "k", "v", "o"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 4, HMX_PLACE_STAGED));
  hmx_status (*fn)(const hmx_attention_args *) = NULL;
  int fast = 0;
  if (!ex.dev) {
    HMX_PICK(ex, attention, fn);
    HMX_PICK_FAST(ex, attention, fn, fast, INT64_MAX);
  }
  /* A 16-bit K/V (a KV cache) read in place by the exact kernels that take it;
   * the fast tier's kernels get it staged. */
  const int kv16 = !ex.dev && !fast && weights16_in_place(&ex, 0, HMX_W16_ATTENTION, k, v, NULL);
  if (kblocks > 0 && ex.dev)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "attention: blocked keys must be in host memory");
  if (kblocks > 0 && (fast || fn != ex.be->attention || !(ex.be->weights16 & HMX_KB16_ATTENTION) ||
                      (k->dtype != HMX_F32 && !kv16))) {
    /* a kernel that reads rows: K and V copied back to rows, the same values */
    void *krows = kb16_to_rows(k, kblocks, 1), *vrows = kb16_to_rows(v, kblocks, 0);
    if (!krows || !vrows) {
      free(krows);
      free(vrows);
      return hmx_fail(HMX_ERR_NO_MEMORY, "attention: out of memory");
    }
    hmx_tensor kr = hmx_tensor_4d(krows, k->dtype, k->shape[0], skv, hkv, d);
    hmx_tensor vr = hmx_tensor_4d(vrows, v->dtype, v->shape[0], skv, hkv, d);
    hmx_status s = attention_run(ctx, q, &kr, &vr, p, o, 0);
    free(krows);
    free(vrows);
    return s;
  }
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_attention_args *, const hmx_device_call *);
    if (ex.fast && ex.fast->dev_attention) dfn = ex.fast->dev_attention;
    else HMX_PICK_DEVICE(ex, attention, dfn);
    hmx_dev_staging ds;
    const hmx_tensor *dins[] = {q, k, v};
    hmx_status s = hmx_dev_staging_begin(&ds, &ex, dins, 3, o);
    if (s == HMX_OK) {
      hmx_attention_args a = {ds.in[0], ds.in[1], ds.in[2], ds.out, b, sq, skv, hq, hkv, d,
                              p->causal, q_offset, scale, ex.threads, HMX_F32, NULL, NULL, 0};
      s = dfn(&a, &ex.call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, &ex, o, s), op, &ex);
  }
  hmx_staging st;
  /* f32 K and V in the cache layout go in place as well (staging would read
   * them as rows) */
  const int kv_in_place = kv16 || kblocks > 0;
  const hmx_tensor *ins[] = {q, kv_in_place ? NULL : k, kv_in_place ? NULL : v};
  hmx_status s = hmx_staging_begin(&st, ins, 3, o);
  if (s == HMX_OK) {
    /* f32 K and V in the cache layout: their own pointers (16-bit ones go in k16, v16) */
    const int f32_in_place = kv_in_place && !kv16;
    hmx_attention_args a = {st.in[0].p, f32_in_place ? k->data : st.in[1].p,
                            f32_in_place ? v->data : st.in[2].p, st.out.p, b, sq, skv, hq, hkv,
                            d, p->causal, q_offset, scale, ex.threads,
                            kv16 ? k->dtype : HMX_F32, kv16 ? k->data : NULL,
                            kv16 ? v->data : NULL, kblocks};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, o, s, op, &ex);
}

hmx_status hmx_swiglu(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w1,
                      const hmx_tensor *w3, const hmx_tensor *w2, int64_t block, hmx_tensor *y) {
  static const char op[] = "swiglu";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "x", x, 2));
  TRY(hmx_check_float(op, "w1", w1, 2));
  TRY(hmx_check_float(op, "w3", w3, 2));
  TRY(hmx_check_float(op, "w2", w2, 2));
  TRY(hmx_check_float(op, "y", y, 2));
  int64_t t = x->shape[0], d = x->shape[1], h = w1->shape[1], d_out = w2->shape[1];
  TRY(hmx_check_dim(op, "w1", w1, 0, d, "d, the columns of x"));
  TRY(hmx_check_dim(op, "w3", w3, 0, d, "d, the columns of x"));
  TRY(hmx_check_dim(op, "w3", w3, 1, h, "hidden width of w1"));
  TRY(hmx_check_dim(op, "w2", w2, 0, h, "hidden width of w1"));
  TRY(hmx_check_dim(op, "y", y, 0, t, "tokens of x"));
  TRY(hmx_check_dim(op, "y", y, 1, d_out, "columns of w2"));
  if (block < 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "swiglu: block must be >= 0 (got %lld)",
                    (long long)block);
  if (block == 0 || block > h) block = h < 256 ? h : 256;
  if (block < 1) block = 1;
  const hmx_tensor *ins[] = {x, w1, w3, w2};
  static const char *const names[] = {"x", "w1", "w3", "w2"};
  for (int i = 0; i < 4; i++) TRY(hmx_check_alias(op, "y", y, names[i], ins[i], 0));
  const hmx_tensor *place[] = {x, w1, w3, w2, y};
  static const char *const place_names[] = {"x", "w1", "w3", "w2", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 5, HMX_PLACE_STAGED));
  if (ex.dev) {
    hmx_status (*dfn)(const hmx_swiglu_args *, const hmx_device_call *);
    HMX_PICK_DEVICE(ex, swiglu, dfn);
    hmx_dev_staging ds;
    hmx_status s = hmx_dev_staging_begin(&ds, &ex, ins, 4, y);
    if (s == HMX_OK) {
      hmx_swiglu_args a = {ds.in[0], ds.in[1], ds.in[2], ds.in[3], ds.out, t, d, h, d_out, block,
                           ex.threads, HMX_F32, NULL, NULL, NULL, HMX_QLAYOUT_ROWS, NULL, NULL,
                           NULL};
      s = dfn(&a, &ex.call);
    }
    return device_finish(hmx_dev_staging_finish(&ds, &ex, y, s), op, &ex);
  }
  hmx_status (*fn)(const hmx_swiglu_args *);
  HMX_PICK(ex, swiglu, fn);
  int fast;
  HMX_PICK_FAST(ex, swiglu, fn, fast, t);
  hmx_staging st;
  const int w16 = weights16_in_place(&ex, fast, HMX_W16_SWIGLU, w1, w3, w2);
  const hmx_tensor *staged[] = {x, w16 ? NULL : w1, w16 ? NULL : w3, w16 ? NULL : w2};
  hmx_status s = hmx_staging_begin(&st, staged, 4, y);
  if (s == HMX_OK) {
    hmx_swiglu_args a = {st.in[0].p, st.in[1].p, st.in[2].p, st.in[3].p, st.out.p, t, d, h,
                         d_out, block, ex.threads, w16 ? w1->dtype : HMX_F32,
                         w16 ? w1->data : NULL, w16 ? w3->data : NULL, w16 ? w2->data : NULL,
                         HMX_QLAYOUT_ROWS, NULL, NULL, NULL};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}
