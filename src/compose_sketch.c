/* The sketched attentions on a backend's gemm and attention (docs/NUMERICS.md
 * §sketch, ref/sketch_attention.c).
 *
 * linformer: per (batch, kv head), K' = E K and V' = F V are each one gemm
 * (fma chain over the N keys from +0, §gemm) on a contiguous copy of the kv
 * head's keys; K', V' are laid out as [B, kp, Hkv, D] and one call of the
 * backend's attention (no mask) does every query: its per-query arithmetic
 * (fma dot from +0, * scale, max, §E exp, §R lane sum, fma chain over the
 * keys, one division) is that of hmx_ref_attend, bit for bit.
 * levattention, lewis, priority: the key selection is the reference's own
 * scalar code (ref/sketch_select_body.h: binary64 Gram matrix and Cholesky,
 * Lewis iterations, the counter RNG), shared rather than copied; a backend
 * compiles that same source with its flags (hardware fma and sqrt, same
 * correctly rounded results). It stays scalar: every score is a chain of
 * dependent binary64 fmas in the order NUMERICS fixes. It runs in parallel
 * over the (batch, kv head) pairs, which are independent. The kept keys and values
 * are then gathered, in increasing index order, into [B, kk, Hkv, D] and one
 * call of the backend's attention attends to them: attention over the
 * gathered list in order is the reference's attention over idx, bit for bit. */
#include "compose.h"
#include "internal.h"
#include "parallel.h"
#include "ref.h"
#include "sketch.h"

#include <stdlib.h>
#include <string.h>

/* The backend attention of every query over keys/values kb, vb
 * [B, nk, Hkv, D] (bidirectional). */
static hmx_status attend(const hmx_sketch_args *a, const hmx_compose_kernels *k, const float *kb,
                         const float *vb, int64_t nk) {
  hmx_attention_args at = {a->q, kb, vb, a->o, a->b, a->s, nk, a->hq, a->hkv, a->d,
                           0, 0, a->scale, a->threads, HMX_F32, NULL, NULL, 0};
  return k->attention(&at);
}

hmx_status hmx_compose_linformer(const hmx_sketch_args *a, const hmx_compose_kernels *k) {
  const int64_t kp = a->kk, d = a->d, n = a->n, ld = a->hkv * d;
  if (a->b <= 0 || a->s <= 0 || n <= 0 || kp <= 0 || d <= 0 || a->hkv <= 0)
    return hmx_ref_linformer(a);
  float *kq = hmx_alloc_array((size_t)(a->b * kp * ld), sizeof *kq);
  float *vq = hmx_alloc_array((size_t)(a->b * kp * ld), sizeof *vq);
  float *kg = hmx_alloc_array((size_t)(n * d), sizeof *kg); /* one kv head's keys */
  float *pg = hmx_alloc_array((size_t)(kp * d), sizeof *pg); /* its projection */
  hmx_status st = kq && vq && kg && pg ? HMX_OK : HMX_ERR_NO_MEMORY;
  for (int64_t b = 0; b < a->b && st == HMX_OK; b++)
    for (int64_t g = 0; g < a->hkv && st == HMX_OK; g++)
      for (int side = 0; side < 2 && st == HMX_OK; side++) {
        const float *src = (side ? a->v : a->k) + b * n * ld + g * d;
        float *dst = (side ? vq : kq) + b * kp * ld + g * d;
        const float *kv = src;
        if (a->hkv > 1) {
          for (int64_t j = 0; j < n; j++) memcpy(kg + j * d, src + j * ld, (size_t)d * sizeof(float));
          kv = kg;
        }
        hmx_gemm_args gm = {side ? a->f : a->e, kv, NULL, pg, kp, d, n, 0, a->threads, HMX_F32,
                            NULL, NULL, 0, 0, NULL};
        st = k->gemm(&gm);
        for (int64_t r = 0; r < kp; r++) memcpy(dst + r * ld, pg + r * d, (size_t)d * sizeof(float));
      }
  if (st == HMX_OK) st = attend(a, k, kq, vq, kp);
  free(kq); free(vq); free(kg); free(pg);
  return st;
}

typedef enum { SEL_LEVERAGE, SEL_LEWIS, SEL_PRIORITY } sel_kind;

static hmx_status selecting(const hmx_sketch_args *a, const hmx_compose_kernels *k,
                            sel_kind kind) {
  const int64_t d = a->d, n = a->n, kk = a->kk, ld = a->hkv * d, pairs = a->b * a->hkv;
  if (a->b <= 0 || a->s <= 0 || n <= 0 || kk <= 0 || d <= 0 || a->hkv <= 0) {
    if (kind == SEL_LEVERAGE) return hmx_ref_levattention(a);
    return kind == SEL_LEWIS ? hmx_ref_lewis(a) : hmx_ref_priority(a);
  }
  float *ks = hmx_alloc_array((size_t)(a->b * kk * ld), sizeof *ks);
  float *vs = hmx_alloc_array((size_t)(a->b * kk * ld), sizeof *vs);
  if (!ks || !vs) {
    free(ks); free(vs);
    return HMX_ERR_NO_MEMORY;
  }
  hmx_status (*lev)(const float *, int64_t, int64_t, int64_t, double, int64_t, int32_t *) =
      k->select_leverage ? k->select_leverage : hmx_ref_select_leverage;
  hmx_status (*lew)(const float *, int64_t, int64_t, int64_t, double, int, int64_t, int32_t *) =
      k->select_lewis ? k->select_lewis : hmx_ref_select_lewis;
  hmx_status (*pri)(const float *, int64_t, int64_t, int64_t, uint64_t, uint64_t, int64_t,
                    int32_t *) = k->select_priority ? k->select_priority : hmx_ref_select_priority;
  int failed = 0; /* any pair's selection status != HMX_OK (only: no memory) */
  const int nt = hmx_thread_count(a->threads, pairs);
  HMX_OMP_FOR(nt)
  for (int64_t pr = 0; pr < pairs; pr++) { /* pairs independent: any split */
    const int64_t b = pr / a->hkv, g = pr % a->hkv;
    const float *kb = a->k + b * n * ld + g * d, *vb = a->v + b * n * ld + g * d;
    int32_t *idx = a->idx + pr * kk;
    hmx_status s;
    if (kind == SEL_LEVERAGE)
      s = lev(kb, ld, n, d, a->lambda, kk, idx);
    else if (kind == SEL_LEWIS)
      s = lew(kb, ld, n, d, a->lambda, a->iters, kk, idx);
    else /* one RNG stream per (batch, kv head), as the reference */
      s = pri(kb, ld, n, d, a->seed, (uint64_t)pr, kk, idx);
    if (s != HMX_OK) {
#if defined(_OPENMP)
#pragma omp atomic write
#endif
      failed = 1;
      continue;
    }
    for (int64_t j = 0; j < kk; j++) {
      memcpy(ks + (b * kk + j) * ld + g * d, kb + idx[j] * ld, (size_t)d * sizeof(float));
      memcpy(vs + (b * kk + j) * ld + g * d, vb + idx[j] * ld, (size_t)d * sizeof(float));
    }
  }
  hmx_status st = failed ? HMX_ERR_NO_MEMORY : attend(a, k, ks, vs, kk);
  free(ks); free(vs);
  return st;
}

hmx_status hmx_compose_levattention(const hmx_sketch_args *a, const hmx_compose_kernels *k) {
  return selecting(a, k, SEL_LEVERAGE);
}
hmx_status hmx_compose_lewis(const hmx_sketch_args *a, const hmx_compose_kernels *k) {
  return selecting(a, k, SEL_LEWIS);
}
hmx_status hmx_compose_priority(const hmx_sketch_args *a, const hmx_compose_kernels *k) {
  return selecting(a, k, SEL_PRIORITY);
}
