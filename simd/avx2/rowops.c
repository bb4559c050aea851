/* avx2 row operations: rmsnorm, layernorm, rope (docs/NUMERICS.md §R,
 * §rmsnorm, §layernorm, §rope), and the FMA-peak probe used by `hmx bench`.
 *
 * Reductions: §R's 16 lanes are two ymm registers, lo = lanes 0-7 and
 * hi = lanes 8-15 (lane = i mod 16); each lane is carried sequentially
 * through the row; the tail updates only the first n mod 16 lanes (masked
 * load + blend), then the fixed tree 8, 4, 2, 1 of hmx_lane_tree. Scalars are
 * computed as in ref/norms.c (IEEE division, sqrtf). Elementwise tails are
 * scalar code with the same roundings (fmaf where NUMERICS writes fma).
 * Threads split rows only: no bit depends on them. Buffers are only 4-byte
 * aligned: every vector load/store is unaligned. */
#include "avx2_rowops.h"
#include "parallel.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* Integer mask (all ones) of the first k lanes of 8, 0 <= k <= 8. */
static inline __m256i first_lanes(int64_t k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* §R tree: l[j] += l[j+8] (lo + hi), then +4, +2, +1 (hmx_lane_tree). */
static inline float lane_tree16(__m256 lo, __m256 hi) {
  __m256 h8 = _mm256_add_ps(lo, hi);                                               /* j < 8 */
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)); /* j < 4 */
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));                                /* j < 2 */
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));                            /* j = 0 */
  return _mm_cvtss_f32(h1);
}

/* The three §R accumulations, one per kind: l = l + v, l = fma(v, v, l),
 * l = fma(v - c, v - c, l). `upd` applies one to a register. */
enum { SUM, SUMSQ, SUMSQ_C };

static inline __m256 upd(int kind, __m256 l, __m256 v, __m256 c) {
  if (kind == SUM) return _mm256_add_ps(l, v);
  if (kind == SUMSQ) return _mm256_fmadd_ps(v, v, l);
  __m256 d = _mm256_sub_ps(v, c);
  return _mm256_fmadd_ps(d, d, l);
}

static inline float lane_reduce(int kind, const float *x, int64_t n, float cs) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps(), c = _mm256_set1_ps(cs);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { /* §R: 16 consecutive elements, one per lane, in order */
    lo = upd(kind, lo, _mm256_loadu_ps(x + i), c);
    hi = upd(kind, hi, _mm256_loadu_ps(x + i + 8), c);
  }
  int64_t r = n - i;
  if (r > 0) { /* §R tail: only lanes 0 .. r-1 change (masked load, blend) */
    __m256i mlo = first_lanes(r < 8 ? r : 8), mhi = first_lanes(r > 8 ? r - 8 : 0);
    __m256 nlo = upd(kind, lo, _mm256_maskload_ps(x + i, mlo), c);
    lo = _mm256_blendv_ps(lo, nlo, _mm256_castsi256_ps(mlo));
    if (r > 8) {
      __m256 nhi = upd(kind, hi, _mm256_maskload_ps(x + i + 8, mhi), c);
      hi = _mm256_blendv_ps(hi, nhi, _mm256_castsi256_ps(mhi));
    }
  }
  return lane_tree16(lo, hi);
}

static void rmsnorm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
  /* §rmsnorm scalars, as ref: IEEE division and sqrtf, never rsqrt. */
  float ms = lane_reduce(SUMSQ, x, n, 0.0f) / (float)n;
  float inv = 1.0f / sqrtf(ms + eps);
  __m256 vinv = _mm256_set1_ps(inv);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) { /* §rmsnorm: y = (x * inv) * w, two roundings */
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, _mm256_loadu_ps(w + i)));
  }
  for (; i < n; i++) y[i] = (x[i] * inv) * w[i]; /* §rmsnorm, scalar tail */
}

static void layernorm_row(const float *x, const float *w, const float *b, float *y, int64_t n,
                          float eps) {
  /* §layernorm scalars, as ref: mean, centred variance, IEEE division and sqrtf. */
  float mean = lane_reduce(SUM, x, n, 0.0f) / (float)n;
  float var = lane_reduce(SUMSQ_C, x, n, mean) / (float)n;
  float inv = 1.0f / sqrtf(var + eps);
  __m256 vmean = _mm256_set1_ps(mean), vinv = _mm256_set1_ps(inv);
  int64_t i = 0;
  if (b) {
    for (; i + 8 <= n; i += 8) { /* §layernorm: z = (x - mean) * inv; y = fma(z, w, b) */
      __m256 z = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmean), vinv);
      _mm256_storeu_ps(y + i, _mm256_fmadd_ps(z, _mm256_loadu_ps(w + i), _mm256_loadu_ps(b + i)));
    }
    for (; i < n; i++) y[i] = fmaf((x[i] - mean) * inv, w[i], b[i]); /* same, scalar tail */
  } else {
    for (; i + 8 <= n; i += 8) { /* §layernorm without bias: y = z * w (no fma) */
      __m256 z = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmean), vinv);
      _mm256_storeu_ps(y + i, _mm256_mul_ps(z, _mm256_loadu_ps(w + i)));
    }
    for (; i < n; i++) y[i] = ((x[i] - mean) * inv) * w[i]; /* same, scalar tail */
  }
}

hmx_status hmx_avx2_rmsnorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) /* rows are independent (§rmsnorm per row) */
    rmsnorm_row(a->x + r * a->n, a->weight, a->y + r * a->n, a->n, a->eps);
  return HMX_OK;
}

hmx_status hmx_avx2_layernorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) /* rows are independent (§layernorm per row) */
    layernorm_row(a->x + r * a->n, a->weight, a->bias, a->y + r * a->n, a->n, a->eps);
  return HMX_OK;
}

/* §rope on 8 pairs: y0 = fma(x0, c, -(x1 * s)), y1 = fma(x0, s, x1 * c).
 * fmsub(a, b, p) = fma(a, b, -p) exactly (negation is exact). */
static inline void rot8(__m256 x0, __m256 x1, __m256 c, __m256 s, __m256 *y0, __m256 *y1) {
  *y0 = _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s));
  *y1 = _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c));
}

/* §rope, one scalar pair (tails): exactly ref/rope.c. */
static inline void rot1(const float *x, float *y, int64_t i0, int64_t i1, float c, float s) {
  float x0 = x[i0], x1 = x[i1];
  float y0 = fmaf(x0, c, -(x1 * s));
  float y1 = fmaf(x0, s, x1 * c);
  y[i0] = y0;
  y[i1] = y1;
}

static void rope_half(const float *x, float *y, const float *ct, const float *st, int64_t half) {
  int64_t i = 0;
  for (; i + 8 <= half; i += 8) { /* §rope half style: pairs (i, i + half), independent */
    __m256 y0, y1;
    rot8(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + half), _mm256_loadu_ps(ct + i),
         _mm256_loadu_ps(st + i), &y0, &y1);
    _mm256_storeu_ps(y + i, y0);
    _mm256_storeu_ps(y + i + half, y1);
  }
  for (; i < half; i++) rot1(x, y, i, i + half, ct[i], st[i]); /* §rope, scalar tail */
}

static void rope_interleaved(const float *x, float *y, const float *ct, const float *st,
                             int64_t half) {
  int64_t i = 0;
  for (; i + 8 <= half; i += 8) { /* §rope interleaved: pairs (2i, 2i+1), independent */
    __m256 a = _mm256_loadu_ps(x + 2 * i), b = _mm256_loadu_ps(x + 2 * i + 8);
    /* deinterleave: [a0 a2 b0 b2 | a4 a6 b4 b6] -> [a0 a2 a4 a6 b0 b2 b4 b6] */
    __m256 x0 = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
    __m256 x1 = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), _MM_SHUFFLE(3, 1, 2, 0)));
    __m256 y0, y1;
    rot8(x0, x1, _mm256_loadu_ps(ct + i), _mm256_loadu_ps(st + i), &y0, &y1);
    /* reinterleave: [e0 e1 e4 e5 | e2 e3 e6 e7] with the same for odd, then unpack */
    __m256 p0 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(y0), _MM_SHUFFLE(3, 1, 2, 0)));
    __m256 p1 = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(y1), _MM_SHUFFLE(3, 1, 2, 0)));
    _mm256_storeu_ps(y + 2 * i, _mm256_unpacklo_ps(p0, p1));
    _mm256_storeu_ps(y + 2 * i + 8, _mm256_unpackhi_ps(p0, p1));
  }
  for (; i < half; i++) rot1(x, y, 2 * i, 2 * i + 1, ct[i], st[i]); /* §rope, scalar tail */
}

hmx_status hmx_avx2_rope(const hmx_rope_args *a) {
  int64_t half = a->rot_dim / 2, rows = a->t * a->h;
  int nt = hmx_thread_count(a->threads, rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < rows; r++) { /* (token, head) rows are independent (§rope) */
    int64_t t = r / a->h;
    const float *x = a->x + r * a->d;
    float *y = a->y + r * a->d;
    const float *ct = a->cos_tab + t * half, *st = a->sin_tab + t * half;
    if (a->style == HMX_ROPE_HALF) rope_half(x, y, ct, st, half);
    else rope_interleaved(x, y, ct, st, half);
    if (y != x && a->d > a->rot_dim) /* §rope: channels rot_dim .. D-1 copied unchanged */
      memcpy(y + a->rot_dim, x + a->rot_dim, (size_t)(a->d - a->rot_dim) * sizeof(float));
  }
  return HMX_OK;
}

/* ---------------------------------------------------------------- FMA peak
 * 12 independent chains of 8-lane fmas; flops = 2 * 8 * 12 per iteration.
 * Runs for about `seconds`; returns single-thread GFLOP/s. */
static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float fma_chains(int64_t iters) {
  __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(1.0f), a1 = _mm256_set1_ps(1.1f), a2 = _mm256_set1_ps(1.2f),
         a3 = _mm256_set1_ps(1.3f), a4 = _mm256_set1_ps(1.4f), a5 = _mm256_set1_ps(1.5f),
         a6 = _mm256_set1_ps(1.6f), a7 = _mm256_set1_ps(1.7f), a8 = _mm256_set1_ps(1.8f),
         a9 = _mm256_set1_ps(1.9f), a10 = _mm256_set1_ps(2.0f), a11 = _mm256_set1_ps(2.1f);
  for (int64_t i = 0; i < iters; i++) {
    a0 = _mm256_fmadd_ps(a0, m, c); a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c); a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c); a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c); a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c); a9 = _mm256_fmadd_ps(a9, m, c);
    a10 = _mm256_fmadd_ps(a10, m, c); a11 = _mm256_fmadd_ps(a11, m, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  return lane_tree16(s, _mm256_setzero_ps());
}

double hmx_avx2_fma_peak_gflops(double seconds) {
  volatile float sink = 0.0f;
  int64_t iters = 1 << 16;
  double best = 0.0, t_end = now_s() + (seconds > 0 ? seconds : 0.1);
  for (;;) {
    double t0 = now_s();
    sink = sink + fma_chains(iters);
    double dt = now_s() - t0;
    if (dt > 0) {
      double g = 2.0 * 8 * 12 * (double)iters / dt * 1e-9;
      if (g > best) best = g;
    }
    if (dt < 0.02) iters *= 2;
    if (now_s() >= t_end) break;
  }
  (void)sink;
  return best;
}
