/* neon fwht and hadamard_mix (docs/NUMERICS.md §fwht, §hadamard_mix).
 *
 * Per row, n = m * p (p = 2^k), inside each block of p elements:
 *   1. butterflies, stages h = 1, 2, 4, ... p/2 in order, (a, b) -> (a + b, a - b).
 *      Every element goes through the stages in order; only pairs of one
 *      stage are reordered (they are independent), so the result is the
 *      reference's:
 *      - p >= 16: 16-element chunks in four registers do h = 1, 2 in-register
 *        (uzp/zip .4s and zip .2d shuffles around one vaddq + one vsubq) and
 *        h = 4, 8 across registers; then the stages h >= 16 go over memory two
 *        at a time (radix-4: h and 2h on four vectors), a last radix-2 pass
 *        when the count is odd;
 *      - p < 16: the scalar butterflies of the reference.
 *   2. m > 1: the m-point transform across blocks, vectorized over j (4 at a
 *      time), acc = +-u[0] then acc = acc + u[c] or acc - u[c], c in order.
 *   3. one multiply by scale (hadamard_mix: then one fma with alpha, beta).
 * Threads split the rows. */
#include "neon_fwht.h"
#include "neon_math.h"
#include "parallel.h"
#include "canon.h"
#include "ref.h" /* hmx_fwht_split */

#include <string.h>

/* 64-bit halves: (lo a, lo b) and (hi a, hi b), one zip1/zip2 .2d each. */
static inline float32x4_t lo2(float32x4_t a, float32x4_t b) {
  return vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
}
static inline float32x4_t hi2(float32x4_t a, float32x4_t b) {
  return vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
}

/* h = 1 and h = 2 on 8 consecutive elements (two registers). */
static inline void bf_h1_h2(float32x4_t *v0, float32x4_t *v1) {
  /* h = 1: pairs (0,1), (2,3), ...: evens e and odds o */
  float32x4_t e = vuzp1q_f32(*v0, *v1), o = vuzp2q_f32(*v0, *v1);
  float32x4_t s = vaddq_f32(e, o), d = vsubq_f32(e, o);
  float32x4_t a0 = vzip1q_f32(s, d), a1 = vzip2q_f32(s, d); /* back to natural order */
  /* h = 2: pairs (0,2), (1,3) inside each group of 4 */
  float32x4_t lo = lo2(a0, a1), hi = hi2(a0, a1);
  float32x4_t s2 = vaddq_f32(lo, hi), d2 = vsubq_f32(lo, hi);
  *v0 = lo2(s2, d2);
  *v1 = hi2(s2, d2);
}

static inline void bf(float32x4_t *a, float32x4_t *b) {
  float32x4_t s = vaddq_f32(*a, *b), d = vsubq_f32(*a, *b);
  *a = s;
  *b = d;
}

static void butterflies_scalar(float *v, int64_t p) {
  for (int64_t h = 1; h < p; h *= 2)
    for (int64_t i = 0; i < p; i += 2 * h)
      for (int64_t j = i; j < i + h; j++) {
        float a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
}

static void butterflies(float *v, int64_t p) {
  if (p < 16) {
    butterflies_scalar(v, p);
    return;
  }
  /* stages 1, 2, 4, 8 on 16-element chunks */
  for (int64_t i = 0; i < p; i += 16) {
    float32x4_t r0 = vld1q_f32(v + i), r1 = vld1q_f32(v + i + 4);
    float32x4_t r2 = vld1q_f32(v + i + 8), r3 = vld1q_f32(v + i + 12);
    bf_h1_h2(&r0, &r1);
    bf_h1_h2(&r2, &r3);
    bf(&r0, &r1); /* h = 4 */
    bf(&r2, &r3);
    bf(&r0, &r2); /* h = 8 */
    bf(&r1, &r3);
    vst1q_f32(v + i, r0);
    vst1q_f32(v + i + 4, r1);
    vst1q_f32(v + i + 8, r2);
    vst1q_f32(v + i + 12, r3);
  }
  int64_t h = 16;
  for (; 4 * h <= p; h *= 4) /* radix-4: stage h then stage 2h on (a, b, c, d) */
    for (int64_t i = 0; i < p; i += 4 * h)
      for (int64_t j = i; j < i + h; j += 4) {
        float32x4_t a = vld1q_f32(v + j), b = vld1q_f32(v + j + h);
        float32x4_t c = vld1q_f32(v + j + 2 * h), d = vld1q_f32(v + j + 3 * h);
        bf(&a, &b);
        bf(&c, &d);
        bf(&a, &c);
        bf(&b, &d);
        vst1q_f32(v + j, a);
        vst1q_f32(v + j + h, b);
        vst1q_f32(v + j + 2 * h, c);
        vst1q_f32(v + j + 3 * h, d);
      }
  if (2 * h <= p) /* one stage left */
    for (int64_t i = 0; i < p; i += 2 * h)
      for (int64_t j = i; j < i + h; j += 4) {
        float32x4_t a = vld1q_f32(v + j), b = vld1q_f32(v + j + h);
        bf(&a, &b);
        vst1q_f32(v + j, a);
        vst1q_f32(v + j + h, b);
      }
}

/* Signs of H_m: sign[r][c] = 1 for +1, 0 for -1. */
typedef struct factor_signs { int m; unsigned char s[40][40]; } factor_signs;

static void load_signs(factor_signs *f, int m) {
  f->m = m;
  for (int r = 0; r < m; r++)
    for (int c = 0; c < m; c++) f->s[r][c] = hmx_hadamard_factor_entry(m, r, c) > 0;
}

/* out[r] = sum_c H_m[r][c] u[c], u[c] = v[c * p + j]; acc = +-u[0], then
 * acc + u[c] / acc - u[c] in order of c. */
static void factor_transform(float *v, const factor_signs *f, int64_t p) {
  const int m = f->m;
  int64_t j = 0;
  for (; j + 4 <= p; j += 4) {
    float32x4_t u[40];
    for (int c = 0; c < m; c++) u[c] = vld1q_f32(v + c * p + j);
    for (int r = 0; r < m; r++) {
      float32x4_t acc = f->s[r][0] ? u[0] : vnegq_f32(u[0]);
      for (int c = 1; c < m; c++) acc = f->s[r][c] ? vaddq_f32(acc, u[c]) : vsubq_f32(acc, u[c]);
      vst1q_f32(v + r * p + j, acc);
    }
  }
  for (; j < p; j++) {
    float u[40];
    for (int c = 0; c < m; c++) u[c] = v[c * p + j];
    for (int r = 0; r < m; r++) {
      float acc = f->s[r][0] ? u[0] : -u[0];
      for (int c = 1; c < m; c++) acc = f->s[r][c] ? acc + u[c] : acc - u[c];
      v[r * p + j] = acc;
    }
  }
}

/* Steps 1 and 2 on one row in y (already holding x). */
static void transform_row(float *y, int m, int64_t p, const factor_signs *f) {
  for (int c = 0; c < m; c++) butterflies(y + c * p, p);
  if (m > 1) factor_transform(y, f, p);
}

hmx_status hmx_neon_fwht(const hmx_fwht_args *a) {
  int m;
  int64_t p;
  if (!hmx_fwht_split(a->n, a->m, &m, &p)) return HMX_ERR_UNSUPPORTED;
  factor_signs f = {1, {{0}}};
  if (m > 1) load_signs(&f, m);
  const int64_t n = a->n;
  int nt = hmx_thread_count(a->threads, a->batch);
  HMX_OMP_FOR(nt)
  for (int64_t b = 0; b < a->batch; b++) {
    const float *x = a->x + b * n;
    float *y = a->y + b * n;
    if (y != x) memcpy(y, x, (size_t)n * sizeof *y);
    transform_row(y, m, p, &f);
    const float32x4_t sc = vdupq_n_f32(a->scale);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(y + i), sc));
    for (; i < n; i++) y[i] = y[i] * a->scale;
  }
  return HMX_OK;
}

/* y = fma(fwht(x) * inv_sqrt_n, alpha, beta): the scaled value is rounded
 * (vmulq), then one fma. */
hmx_status hmx_neon_hadamard_mix(const hmx_hadamard_mix_args *a) {
  int m;
  int64_t p;
  if (!hmx_fwht_split(a->n, a->m, &m, &p)) return HMX_ERR_UNSUPPORTED;
  factor_signs f = {1, {{0}}};
  if (m > 1) load_signs(&f, m);
  const int64_t n = a->n;
  const float scale = hmx_inv_sqrt_n(n);
  int nt = hmx_thread_count(a->threads, a->batch);
  HMX_OMP_FOR(nt)
  for (int64_t b = 0; b < a->batch; b++) {
    const float *x = a->x + b * n;
    float *y = a->y + b * n;
    if (y != x) memcpy(y, x, (size_t)n * sizeof *y);
    transform_row(y, m, p, &f);
    const float32x4_t sc = vdupq_n_f32(scale);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      vst1q_f32(y + i, vfmaq_f32(vld1q_f32(a->beta + i), vmulq_f32(vld1q_f32(y + i), sc),
                                 vld1q_f32(a->alpha + i)));
    for (; i < n; i++) y[i] = fmaf(y[i] * scale, a->alpha[i], a->beta[i]);
  }
  return HMX_OK;
}
