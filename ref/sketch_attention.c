/* Reference sketched bidirectional attention (docs/NUMERICS.md §sketch).
 *
 * linformer: per (batch, kv head), K' = E K and V' = F V (fmaf over the N
 * keys from +0), then every query head of the group attends to the kp rows
 * of K', V' as the attention op does.
 * levattention, lewis, priority: per (batch, kv head) a set of kk keys is
 * chosen (ref/sketch_select.c) and every query head of the group attends to
 * exactly those keys, in increasing index order: the attention op with every
 * other key masked out, bit for bit. */
#include "ref.h"
#include "sketch.h"
#include "canon.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

void hmx_ref_attend(const float *q, const float *k, const float *v, int64_t ld,
                    const int32_t *idx, int64_t n, int64_t d, float scale, float *e, float *o) {
  float m = -INFINITY;
  for (int64_t j = 0; j < n; j++) {
    const float *kj = k + (idx ? idx[j] : j) * ld;
    float dot = 0.0f;
    for (int64_t c = 0; c < d; c++) dot = fmaf(q[c], kj[c], dot);
    e[j] = dot * scale;
    if (e[j] > m) m = e[j];
  }
  for (int64_t j = 0; j < n; j++) e[j] = hmx_expf(e[j] - m);
  float sum = hmx_lane_sum(e, n);
  for (int64_t c = 0; c < d; c++) {
    float acc = 0.0f;
    for (int64_t j = 0; j < n; j++) acc = fmaf(e[j], v[(idx ? idx[j] : j) * ld + c], acc);
    o[c] = acc / sum;
  }
}

/* Every query head of kv head g in batch b attends to the key list. */
static void attend_group(const hmx_sketch_args *a, int64_t b, int64_t g, const float *k,
                         const float *v, int64_t ld, const int32_t *idx, int64_t n, float *e) {
  int64_t group = a->hq / a->hkv;
  for (int64_t h = g * group; h < (g + 1) * group; h++)
    for (int64_t i = 0; i < a->s; i++) {
      const float *q = a->q + ((b * a->s + i) * a->hq + h) * a->d;
      float *o = a->o + ((b * a->s + i) * a->hq + h) * a->d;
      hmx_ref_attend(q, k, v, ld, idx, n, a->d, a->scale, e, o);
    }
}

hmx_status hmx_ref_linformer(const hmx_sketch_args *a) {
  int64_t kp = a->kk, d = a->d, ld = a->hkv * d;
  float *kq = hmx_alloc_array((size_t)(kp * d), sizeof *kq);
  float *vq = hmx_alloc_array((size_t)(kp * d), sizeof *vq);
  float *e = hmx_alloc_array((size_t)kp, sizeof *e);
  if (!kq || !vq || !e) {
    free(kq); free(vq); free(e);
    return HMX_ERR_NO_MEMORY;
  }
  for (int64_t b = 0; b < a->b; b++)
    for (int64_t g = 0; g < a->hkv; g++) {
      const float *k = a->k + b * a->n * ld + g * d, *v = a->v + b * a->n * ld + g * d;
      for (int64_t r = 0; r < kp; r++)
        for (int64_t c = 0; c < d; c++) {
          float sk = 0.0f, sv = 0.0f;
          for (int64_t j = 0; j < a->n; j++) {
            sk = fmaf(a->e[r * a->n + j], k[j * ld + c], sk);
            sv = fmaf(a->f[r * a->n + j], v[j * ld + c], sv);
          }
          kq[r * d + c] = sk;
          vq[r * d + c] = sv;
        }
      attend_group(a, b, g, kq, vq, d, NULL, kp, e);
    }
  free(kq); free(vq); free(e);
  return HMX_OK;
}

typedef enum { SEL_LEVERAGE, SEL_LEWIS, SEL_PRIORITY } sel_kind;

static hmx_status selecting(const hmx_sketch_args *a, sel_kind kind) {
  int64_t d = a->d, ld = a->hkv * d;
  float *e = hmx_alloc_array((size_t)a->kk, sizeof *e);
  if (!e) return HMX_ERR_NO_MEMORY;
  hmx_status s = HMX_OK;
  for (int64_t b = 0; b < a->b && s == HMX_OK; b++)
    for (int64_t g = 0; g < a->hkv && s == HMX_OK; g++) {
      const float *k = a->k + b * a->n * ld + g * d, *v = a->v + b * a->n * ld + g * d;
      int32_t *idx = a->idx + (b * a->hkv + g) * a->kk;
      if (kind == SEL_LEVERAGE)
        s = hmx_ref_select_leverage(k, ld, a->n, d, a->lambda, a->kk, idx);
      else if (kind == SEL_LEWIS)
        s = hmx_ref_select_lewis(k, ld, a->n, d, a->lambda, a->iters, a->kk, idx);
      else /* one RNG stream per (batch, kv head) */
        s = hmx_ref_select_priority(k, ld, a->n, d, a->seed, (uint64_t)(b * a->hkv + g), a->kk,
                                    idx);
      if (s == HMX_OK) attend_group(a, b, g, k, v, ld, idx, a->kk, e);
    }
  free(e);
  return s;
}

hmx_status hmx_ref_levattention(const hmx_sketch_args *a) { return selecting(a, SEL_LEVERAGE); }
hmx_status hmx_ref_lewis(const hmx_sketch_args *a) { return selecting(a, SEL_LEWIS); }
hmx_status hmx_ref_priority(const hmx_sketch_args *a) { return selecting(a, SEL_PRIORITY); }
