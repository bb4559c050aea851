/* hmx_swiglu_quant (src/swiglu_quant.h): validates, then routes to one
 * fused backend call or to the gemm_quant composition. */
#include "swiglu_quant.h"
#include "backend.h"
#include "dispatch.h"
#include "fast.h"
#include "gguf.h"
#include "internal.h"
#include "parallel.h"

/* Whether the backend takes the three matrices in one call: G16 floats of
 * one type, whole groups, host f32 x and y (exact tier). */
static int fused_ok(const hmx_exec *ex, const hmx_tensor *x, const hmx_qmatrix *w1,
                    const hmx_qmatrix *w3, const hmx_qmatrix *w2, const hmx_tensor *y) {
  const hmx_qmatrix *w[] = {w1, w3, w2};
  if (ex->dev || ex->tier != HMX_TIER_EXACT || !ex->be->swiglu ||
      !(ex->be->weights16 & HMX_WG16_SWIGLU))
    return 0;
  for (int i = 0; i < 3; i++)
    if (w[i]->layout != HMX_QLAYOUT_G16 || w[i]->type != w1->type) return 0;
  return hmx_qtype_is_float(w1->type) && w1->n % HMX_QG == 0 && w2->n % HMX_QG == 0 &&
         x->dtype == HMX_F32 && y->dtype == HMX_F32 && x->memory == HMX_MEMORY_HOST &&
         y->memory == HMX_MEMORY_HOST && hmx_tensor_is_contiguous(x) &&
         hmx_tensor_is_contiguous(y);
}

/* Whether the fast tier takes the three matrices as they are: bf16 in the
 * G16 layout (a GGUF file's BF16 matrices are kept so) where its kernel on
 * them runs here (src/fast.h, weights16), more tokens than its exact_rows,
 * the fused call's shapes and host f32 x and y (fused_ok's rules). */
static int fast_g16_ok(const hmx_exec *ex, const hmx_tensor *x, const hmx_qmatrix *w1,
                       const hmx_qmatrix *w3, const hmx_qmatrix *w2, const hmx_tensor *y) {
  const hmx_qmatrix *w[] = {w1, w3, w2};
  if (ex->dev || !ex->fast || !ex->fast->swiglu_g16 || x->shape[0] <= ex->fast->exact_rows ||
      !(hmx_fast_weights16(ex->be) & HMX_FAST_W_BF16_G16))
    return 0;
  for (int i = 0; i < 3; i++)
    if (w[i]->layout != HMX_QLAYOUT_G16 || w[i]->type != HMX_GGML_BF16) return 0;
  return w1->n % HMX_QG == 0 && w2->n % HMX_QG == 0 && x->dtype == HMX_F32 &&
         y->dtype == HMX_F32 && x->memory == HMX_MEMORY_HOST && y->memory == HMX_MEMORY_HOST &&
         hmx_tensor_is_contiguous(x) && hmx_tensor_is_contiguous(y);
}

/* Whether all three matrices have GPU copies that the backend's swiglu reads
 * (plain tensors are read from host memory: hmx_gemm_quant). */
static int all_copied(const hmx_qmatrix *w1, const hmx_qmatrix *w3, const hmx_qmatrix *w2) {
  const hmx_qmatrix *w[] = {w1, w3, w2};
  for (int i = 0; i < 3; i++)
    if (!w[i]->dev || hmx_qmatrix_is_plain(w[i])) return 0;
  return 1;
}

/* Whether the backend's swiglu takes the GPU copies of the three matrices
 * (hmx_qmatrix.dev: hmx_model_prepare for cuda): one host call decodes them
 * where they are, runs both gemms, the gate and the last gemm on the GPU,
 * and copies y back: the composition below in one call instead of three,
 * without two T x h round trips through host memory; the same operations
 * in the same order (each gemm from +0 in increasing k; the gate's silu the
 * canonical one, on the device). Host f32 x and y, either tier (GGUF
 * matrices run the exact kernels in both, as in hmx_gemm_quant). */
static int resident_ok(const hmx_exec *ex, const hmx_tensor *x, const hmx_qmatrix *w1,
                       const hmx_qmatrix *w3, const hmx_qmatrix *w2, const hmx_tensor *y) {
  return all_copied(w1, w3, w2) && ex->be->swiglu && hmx_exec_reads_gpu_copies(ex) &&
         x->dtype == HMX_F32 && y->dtype == HMX_F32 && x->memory == HMX_MEMORY_HOST &&
         y->memory == HMX_MEMORY_HOST && hmx_tensor_is_contiguous(x) &&
         hmx_tensor_is_contiguous(y);
}

/* The backend's swiglu call on the three GPU copies (resident_ok, or device
 * tensors: swiglu_quant_device). */
static hmx_swiglu_args copies_args(const hmx_exec *ex, const hmx_tensor *x, const hmx_qmatrix *w1,
                                   const hmx_qmatrix *w3, const hmx_qmatrix *w2, hmx_tensor *y) {
  const int64_t h = w1->n;
  hmx_swiglu_args a = {x->data, NULL, NULL, NULL, y->data, x->shape[0], x->shape[1], h, w2->n,
                       h < 256 ? h : 256, ex->threads, HMX_F32, NULL, NULL, NULL,
                       HMX_QLAYOUT_ROWS, w1, w3, w2};
  return a;
}

/* x and y in device memory (a forward pass on the GPU, src/model_forward.c):
 * the backend's device swiglu on the three GPU copies, resident_ok's call
 * with no copy of x or y. f32 only. */
static hmx_status swiglu_quant_device(const hmx_context *ctx, hmx_exec *ex, const hmx_tensor *x,
                                      const hmx_qmatrix *w1, const hmx_qmatrix *w3,
                                      const hmx_qmatrix *w2, hmx_tensor *y) {
  static const char op[] = "swiglu";
  const hmx_tensor *place[] = {x, y};
  static const char *const names[] = {"x", "y"};
  hmx_status (*fn)(const hmx_swiglu_args *, const hmx_device_call *);
  hmx_status st = hmx_exec_place(ctx, op, ex, place, names, 2, 0);
  if (st) return st;
  HMX_PICK_DEVICE(*ex, swiglu, fn);
  if (!all_copied(w1, w3, w2))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "swiglu: device tensors need the GPU copies of "
                    "the three matrices (hmx_model_prepare with a cuda context makes them)");
  const hmx_swiglu_args a = copies_args(ex, x, w1, w3, w2, y);
  return fn(&a, &ex->call);
}

/* a[i] = silu(a[i]) * b[i] for i < n (§swiglu, §E): the backend's vector
 * gated_silu with w = 1 (times 1 is exact: the same bits), in chunks over
 * its threads (independent elements); else, and on ref, one scalar loop.
 * Why: a 512-token prefill of SmolLM2 evaluates 24M of them, one scalar exp
 * each on one thread. */
static void silu_mul(const hmx_exec *ex, float *a, const float *b, int64_t n) {
  if (!ex->be->gated_silu) {
    for (int64_t i = 0; i < n; i++) a[i] = hmx_siluf(a[i]) * b[i];
    return;
  }
  const int64_t chunk = 4096, chunks = (n + chunk - 1) / chunk;
  const int nt = hmx_thread_count(ex->threads, chunks);
  HMX_OMP_FOR(nt)
  for (int64_t c = 0; c < chunks; c++) {
    const int64_t i = c * chunk;
    ex->be->gated_silu(a + i, b + i, 1.0f, a + i, n - i < chunk ? n - i : chunk);
  }
}

hmx_status hmx_swiglu_quant(const hmx_context *ctx, const hmx_tensor *x, const hmx_qmatrix *w1,
                            const hmx_qmatrix *w3, const hmx_qmatrix *w2, hmx_tensor *y,
                            float *ga, float *gb) {
  static const char op[] = "swiglu";
  if (!x || !w1 || !w3 || !w2 || !y || !w1->data || !w3->data || !w2->data)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "swiglu (kept weights): NULL argument");
  hmx_status st;
  if ((st = hmx_check_float(op, "x", x, 2)) || (st = hmx_check_float(op, "y", y, 2))) return st;
  const int64_t T = x->shape[0], d = x->shape[1], h = w1->n;
  if (w1->k != d || w3->n != h || w3->k != d || w2->k != h || y->shape[0] != T ||
      y->shape[1] != w2->n)
    return hmx_fail(HMX_ERR_SHAPE, "swiglu: x [%lld, %lld] with w1 [%lld, %lld], w3 [%lld, "
                    "%lld] and w2 [%lld, %lld] (as [out, in]) does not fit y [%lld, %lld]",
                    (long long)T, (long long)d, (long long)w1->n, (long long)w1->k,
                    (long long)w3->n, (long long)w3->k, (long long)w2->n, (long long)w2->k,
                    (long long)y->shape[0], (long long)y->shape[1]);
  if ((st = hmx_check_alias(op, "y", y, "x", x, 0))) return st;
  hmx_exec ex;
  if ((st = hmx_exec_resolve(ctx, op, &ex))) return st;
  if (x->memory == HMX_MEMORY_CUDA || y->memory == HMX_MEMORY_CUDA)
    return swiglu_quant_device(ctx, &ex, x, w1, w3, w2, y);
  if (!ga || !gb) /* host tensors: whichever path runs, as documented */
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "swiglu (kept weights): NULL scratch");
  if (fused_ok(&ex, x, w1, w3, w2, y)) {
    const hmx_dtype dt = hmx_qtype_dtype(w1->type);
    const int f32 = dt == HMX_F32;
    hmx_swiglu_args a = {x->data, f32 ? w1->data : NULL, f32 ? w3->data : NULL,
                         f32 ? w2->data : NULL, y->data, T, d, h, w2->n, h < 256 ? h : 256,
                         ex.threads, dt, f32 ? NULL : w1->data, f32 ? NULL : w3->data,
                         f32 ? NULL : w2->data, HMX_QLAYOUT_G16, NULL, NULL, NULL};
    if ((st = ex.be->swiglu(&a)))
      return hmx_fail(st, "%s: backend '%s' failed: %s", op, ex.be->name, hmx_status_string(st));
    return HMX_OK;
  }
  if (fast_g16_ok(&ex, x, w1, w3, w2, y)) {
    hmx_swiglu_args a = {x->data, NULL, NULL, NULL, y->data, T, d, h, w2->n, h < 256 ? h : 256,
                         ex.threads, HMX_BF16, w1->data, w3->data, w2->data, HMX_QLAYOUT_G16,
                         NULL, NULL, NULL};
    st = ex.fast->swiglu_g16(&a);
    if (st && hmx_last_error()[0] == '\0')
      hmx_fail(st, "%s (fast): backend '%s' failed: %s", op, ex.be->name, hmx_status_string(st));
    return st;
  }
  if (resident_ok(&ex, x, w1, w3, w2, y)) {
    const hmx_swiglu_args a = copies_args(&ex, x, w1, w3, w2, y);
    if ((st = ex.be->swiglu(&a)) && hmx_last_error()[0] == '\0')
      hmx_fail(st, "%s: backend '%s' failed: %s", op, ex.be->name, hmx_status_string(st));
    return st;
  }
  /* a = x W1^T, b = x W3^T (gemms from +0), g = silu(a) * b, y = g W2^T */
  hmx_tensor A = hmx_tensor_2d(ga, HMX_F32, T, h), B = hmx_tensor_2d(gb, HMX_F32, T, h);
  if ((st = hmx_gemm_quant(ctx, x, w1, &A)) || (st = hmx_gemm_quant(ctx, x, w3, &B))) return st;
  silu_mul(&ex, ga, gb, T * h);
  return hmx_gemm_quant(ctx, &A, w2, y);
}
