/* neon attention, prefill and decode (docs/NUMERICS.md §attention).
 *
 * K is first packed transposed per (batch, kv head): kt[d][j] (or, in the KV
 * cache's layout, HMX_KB16_ATTENTION, read where it is: 16 keys of one
 * element adjacent; V head by head), so that the
 * scores of 16 keys (four registers, one key per lane) are computed together:
 * dot_j = fma(q[d], k_j[d], dot_j) for d = 0 .. D-1 in order (vfmaq_n_f32 =
 * fmla by element), then s_j = dot_j * scale. The maximum is exact (compare +
 * select per lane, NaN never wins, as the reference's `if (s > m) m = s`),
 * e_j = exp(s_j - m) with the vector canonical exp, sum = §R lane sum (four
 * registers), and P.V is vectorized over d (16 then 4 columns at a time),
 * acc = fma(e_j, v_j[d], acc) sequentially over j = 0 .. n-1, o = acc / sum
 * (vdivq_f32). Threads split the (batch, head, query) rows; each thread has
 * its own e buffer. */
#include "neon_attention.h"
#include "neon_math.h"
#include "parallel.h"
#include "internal.h"
#include "ref.h" /* hmx_ref_attention for degenerate shapes */

#include <math.h>
#include <stdlib.h>

/* Key j's element d of one kv head is kt[(j / 16) * bs + d * ds + j % 16]:
 * packed (bs = 16, ds = skv) or blocked (bs = 16 * D, ds = 16). Four
 * consecutive keys from a multiple of 4 are adjacent either way. */
static void row(const hmx_attention_args *a, const float *kt, int64_t bs, int64_t ds,
                const float *q, float *o, int64_t b, int64_t kvh, int64_t n, float *e) {
  const int64_t D = a->d, skv = a->skv;
#define KAT(j, d) (kt + ((j) / 16) * bs + (d) * ds + (j) % 16)
  /* scores */
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t d = 0; d < D; d++) {
      const float *kd = KAT(j, d);
      float qd = q[d];
      s0 = vfmaq_n_f32(s0, vld1q_f32(kd), qd);
      s1 = vfmaq_n_f32(s1, vld1q_f32(kd + 4), qd);
      s2 = vfmaq_n_f32(s2, vld1q_f32(kd + 8), qd);
      s3 = vfmaq_n_f32(s3, vld1q_f32(kd + 12), qd);
    }
    vst1q_f32(e + j, vmulq_n_f32(s0, a->scale));
    vst1q_f32(e + j + 4, vmulq_n_f32(s1, a->scale));
    vst1q_f32(e + j + 8, vmulq_n_f32(s2, a->scale));
    vst1q_f32(e + j + 12, vmulq_n_f32(s3, a->scale));
  }
  for (; j + 4 <= n; j += 4) {
    float32x4_t s0 = vdupq_n_f32(0.0f);
    for (int64_t d = 0; d < D; d++) s0 = vfmaq_n_f32(s0, vld1q_f32(KAT(j, d)), q[d]);
    vst1q_f32(e + j, vmulq_n_f32(s0, a->scale));
  }
  for (; j < n; j++) {
    float dot = 0.0f;
    for (int64_t d = 0; d < D; d++) dot = fmaf(q[d], *KAT(j, d), dot);
    e[j] = dot * a->scale;
  }
#undef KAT
  /* exact max: per lane "if (s > m) m = s", then the lanes the same way */
  float32x4_t mv = vdupq_n_f32(-INFINITY);
  for (j = 0; j + 4 <= n; j += 4) {
    float32x4_t s = vld1q_f32(e + j);
    mv = vbslq_f32(vcgtq_f32(s, mv), s, mv);
  }
  float m = -INFINITY, ml[4];
  vst1q_f32(ml, mv);
  for (int l = 0; l < 4; l++)
    if (ml[l] > m) m = ml[l];
  for (; j < n; j++)
    if (e[j] > m) m = e[j];
  /* e_j = exp(s_j - m): the buffer has room for a whole last vector */
  const float32x4_t vm = vdupq_n_f32(m);
  for (j = 0; j < n; j += 4) vst1q_f32(e + j, hmx_neon_expf(vsubq_f32(vld1q_f32(e + j), vm)));
  const float32x4_t sum = vdupq_n_f32(hmx_neon_lane_sum(e, n));
  /* P.V, sequential over j, vectorized over d (the cache layout: V head by head) */
  const float *v0 = a->kblocks > 0 ? a->v + (b * a->hkv + kvh) * a->kblocks * 16 * D
                                   : a->v + (b * skv * a->hkv + kvh) * D;
  const int64_t vstride = a->kblocks > 0 ? D : a->hkv * D;
  int64_t d = 0;
  for (; d + 16 <= D; d += 16) {
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    const float *vj = v0 + d;
    for (j = 0; j < n; j++, vj += vstride) {
      float ej = e[j];
      c0 = vfmaq_n_f32(c0, vld1q_f32(vj), ej);
      c1 = vfmaq_n_f32(c1, vld1q_f32(vj + 4), ej);
      c2 = vfmaq_n_f32(c2, vld1q_f32(vj + 8), ej);
      c3 = vfmaq_n_f32(c3, vld1q_f32(vj + 12), ej);
    }
    vst1q_f32(o + d, vdivq_f32(c0, sum));
    vst1q_f32(o + d + 4, vdivq_f32(c1, sum));
    vst1q_f32(o + d + 8, vdivq_f32(c2, sum));
    vst1q_f32(o + d + 12, vdivq_f32(c3, sum));
  }
  for (; d + 4 <= D; d += 4) {
    float32x4_t c0 = vdupq_n_f32(0.0f);
    const float *vj = v0 + d;
    for (j = 0; j < n; j++, vj += vstride) c0 = vfmaq_n_f32(c0, vld1q_f32(vj), e[j]);
    vst1q_f32(o + d, vdivq_f32(c0, sum));
  }
  const float fsum = vgetq_lane_f32(sum, 0);
  for (; d < D; d++) {
    float acc = 0.0f;
    const float *vj = v0 + d;
    for (j = 0; j < n; j++, vj += vstride) acc = fmaf(e[j], *vj, acc);
    o[d] = acc / fsum;
  }
}

/* Row-major K packed transposed per (batch, kv head): kt[bh][d][j] =
 * k[b][j][kvh][d], threads over heads. */
static void pack_kt(const hmx_attention_args *a, float *kt) {
  const int64_t D = a->d, skv = a->skv, heads = a->b * a->hkv;
  int ntk = hmx_thread_count(a->threads, heads);
  HMX_OMP_FOR(ntk)
  for (int64_t bh = 0; bh < heads; bh++) {
    const int64_t b = bh / a->hkv, kvh = bh % a->hkv;
    float *dst = kt + bh * D * skv;
    for (int64_t j = 0; j < skv; j++) {
      const float *src = a->k + ((b * skv + j) * a->hkv + kvh) * D;
      for (int64_t d = 0; d < D; d++) dst[d * skv + j] = src[d];
    }
  }
}

hmx_status hmx_neon_attention(const hmx_attention_args *a) {
  const int64_t D = a->d, skv = a->skv, heads = a->b * a->hkv;
  const int64_t rows = a->b * a->hq * a->sq;
  const int64_t group = a->hq / a->hkv;
  if (rows == 0 || D == 0 || skv == 0) {
    /* degenerate shapes: the reference's loops, nothing to vectorize */
    return hmx_ref_attention(a);
  }
  const int blocked = a->kblocks > 0;
  float *kt = blocked ? NULL : hmx_alloc_array((size_t)(heads * D * skv), sizeof *kt);
  int nt = hmx_thread_count(a->threads, rows);
  const int64_t elen = (skv + 3) / 4 * 4;
  float *ebuf = hmx_alloc_array((size_t)(nt * elen), sizeof *ebuf);
  if ((!blocked && !kt) || !ebuf) {
    free(kt);
    free(ebuf);
    return HMX_ERR_NO_MEMORY;
  }
  /* per kv head: the first element of its keys, and their strides (row()) */
  const float *kh = blocked ? a->k : kt;
  const int64_t kh_len = blocked ? a->kblocks * 16 * D : D * skv;
  const int64_t bs = blocked ? 16 * D : 16, ds = blocked ? 16 : skv;
  if (!blocked) pack_kt(a, kt);
  HMX_OMP_FOR(nt)
  for (int c = 0; c < nt; c++) {
    int64_t lo, hi;
    hmx_neon_chunk(rows, nt, c, &lo, &hi);
    float *e = ebuf + c * elen;
    for (int64_t i = elen - 4; i < elen; i++) e[i] = 0.0f; /* padding: exp of it is unused */
    for (int64_t r = lo; r < hi; r++) { /* r = (b * hq + h) * sq + i */
      const int64_t i = r % a->sq, h = (r / a->sq) % a->hq, b = r / (a->sq * a->hq);
      const int64_t kvh = h / group;
      const float *q = a->q + ((b * a->sq + i) * a->hq + h) * D;
      float *o = a->o + ((b * a->sq + i) * a->hq + h) * D;
      const int64_t n = a->causal ? a->q_offset + i + 1 : skv;
      row(a, kh + (b * a->hkv + kvh) * kh_len, bs, ds, q, o, b, kvh, n, e);
    }
  }
  free(kt);
  free(ebuf);
  return HMX_OK;
}
