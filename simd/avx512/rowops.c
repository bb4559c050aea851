/* avx512 row operations: rmsnorm, layernorm, rope (docs/NUMERICS.md §R,
 * §rmsnorm, §layernorm, §rope), and the FMA-peak probe used by `hmx bench`.
 *
 * Reductions: §R's 16 lanes are exactly one zmm register (lane = i mod 16);
 * each lane is carried sequentially through the row, the tail updates only
 * the first n mod 16 lanes (masked), then the fixed tree 8, 4, 2, 1 of
 * hmx_lane_tree. Scalars (mean, inv) are computed as in ref/norms.c with
 * IEEE division and sqrtf. Elementwise passes round as written in NUMERICS.
 * Threads split rows (tokens x heads for rope) only: no bit depends on them.
 * Buffers are only 4-byte aligned: every load/store is unaligned or masked. */
#include "avx512_rowops.h"
#include "parallel.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* Mask of the first r lanes, 0 <= r < 16. */
static inline __mmask16 first_lanes(int64_t r) { return (__mmask16)((1u << r) - 1u); }

/* §R tree on one register: l[j] += l[j+8], then +4, +2, +1 (hmx_lane_tree). */
static inline float lane_tree16(__m512 l) {
  __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(l),                /* j < 8: l[j] + l[j+8] */
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(l), 1)));
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)); /* +4 */
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));                  /* j < 2: l[j] + l[j+2] */
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));              /* l[0] + l[1] */
  return _mm_cvtss_f32(h1);
}

/* §R lane sum of x[0..n-1]: l[i mod 16] = l[i mod 16] + x[i]. */
static float lane_sum(const float *x, int64_t n) {
  __m512 l = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) l = _mm512_add_ps(l, _mm512_loadu_ps(x + i)); /* §R, in order */
  if (i < n) { /* §R tail: only the first n mod 16 lanes */
    __mmask16 m = first_lanes(n - i);
    l = _mm512_mask_add_ps(l, m, l, _mm512_maskz_loadu_ps(m, x + i));
  }
  return lane_tree16(l);
}

/* §R sum of squares: l[i mod 16] = fma(x[i], x[i], l[i mod 16]). */
static float lane_sumsq(const float *x, int64_t n) {
  __m512 l = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { /* §R, §rmsnorm: one fma per element, lanes in order */
    __m512 v = _mm512_loadu_ps(x + i);
    l = _mm512_fmadd_ps(v, v, l);
  }
  if (i < n) { /* §R tail: only the first n mod 16 lanes */
    __mmask16 m = first_lanes(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    l = _mm512_mask3_fmadd_ps(v, v, l, m);
  }
  return lane_tree16(l);
}

/* §R centred sum of squares: d = x[i] - c; l[i mod 16] = fma(d, d, l[i mod 16]). */
static float lane_sumsq_centered(const float *x, int64_t n, float c) {
  __m512 l = _mm512_setzero_ps(), vc = _mm512_set1_ps(c);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { /* §R, §layernorm: subtract, then one fma */
    __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), vc);
    l = _mm512_fmadd_ps(d, d, l);
  }
  if (i < n) { /* §R tail: only the first n mod 16 lanes */
    __mmask16 m = first_lanes(n - i);
    __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vc);
    l = _mm512_mask3_fmadd_ps(d, d, l, m);
  }
  return lane_tree16(l);
}

static void rmsnorm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
  /* §rmsnorm scalars, as ref: IEEE division and sqrtf, never rsqrt. */
  float ms = lane_sumsq(x, n) / (float)n;
  float inv = 1.0f / sqrtf(ms + eps);
  __m512 vinv = _mm512_set1_ps(inv);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { /* §rmsnorm: y = (x * inv) * w, two roundings */
    __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), vinv);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(v, _mm512_loadu_ps(w + i)));
  }
  if (i < n) { /* §rmsnorm, the same on the last n mod 16 elements (masked) */
    __mmask16 m = first_lanes(n - i);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vinv);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i)));
  }
}

static void layernorm_row(const float *x, const float *w, const float *b, float *y, int64_t n,
                          float eps) {
  /* §layernorm scalars, as ref: mean, centred variance, IEEE division and sqrtf. */
  float mean = lane_sum(x, n) / (float)n;
  float var = lane_sumsq_centered(x, n, mean) / (float)n;
  float inv = 1.0f / sqrtf(var + eps);
  __m512 vmean = _mm512_set1_ps(mean), vinv = _mm512_set1_ps(inv);
  int64_t i = 0;
  if (b) {
    for (; i + 16 <= n; i += 16) { /* §layernorm: z = (x - mean) * inv; y = fma(z, w, b) */
      __m512 z = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmean), vinv);
      _mm512_storeu_ps(y + i, _mm512_fmadd_ps(z, _mm512_loadu_ps(w + i), _mm512_loadu_ps(b + i)));
    }
    if (i < n) { /* §layernorm with bias, last n mod 16 elements (masked) */
      __mmask16 m = first_lanes(n - i);
      __m512 z = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmean), vinv);
      _mm512_mask_storeu_ps(y + i, m,
                            _mm512_fmadd_ps(z, _mm512_maskz_loadu_ps(m, w + i),
                                            _mm512_maskz_loadu_ps(m, b + i)));
    }
  } else {
    for (; i + 16 <= n; i += 16) { /* §layernorm without bias: y = z * w (no fma) */
      __m512 z = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmean), vinv);
      _mm512_storeu_ps(y + i, _mm512_mul_ps(z, _mm512_loadu_ps(w + i)));
    }
    if (i < n) { /* §layernorm without bias, last n mod 16 elements (masked) */
      __mmask16 m = first_lanes(n - i);
      __m512 z = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmean), vinv);
      _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(z, _mm512_maskz_loadu_ps(m, w + i)));
    }
  }
}

hmx_status hmx_avx512_rmsnorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) /* rows are independent (§rmsnorm per row) */
    rmsnorm_row(a->x + r * a->n, a->weight, a->y + r * a->n, a->n, a->eps);
  return HMX_OK;
}

hmx_status hmx_avx512_layernorm(const hmx_norm_args *a) {
  int nt = hmx_thread_count(a->threads, a->rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < a->rows; r++) /* rows are independent (§layernorm per row) */
    layernorm_row(a->x + r * a->n, a->weight, a->bias, a->y + r * a->n, a->n, a->eps);
  return HMX_OK;
}

/* §rope on 16 pairs: y0 = fma(x0, c, -(x1 * s)), y1 = fma(x0, s, x1 * c).
 * fmsub(a, b, p) = fma(a, b, -p) exactly (negation is exact). */
static inline void rot16(__m512 x0, __m512 x1, __m512 c, __m512 s, __m512 *y0, __m512 *y1) {
  *y0 = _mm512_fmsub_ps(x0, c, _mm512_mul_ps(x1, s));
  *y1 = _mm512_fmadd_ps(x0, s, _mm512_mul_ps(x1, c));
}

static void rope_half(const float *x, float *y, const float *ct, const float *st, int64_t half) {
  int64_t i = 0;
  for (; i + 16 <= half; i += 16) { /* §rope half style: pairs (i, i + half), independent */
    __m512 y0, y1;
    rot16(_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + half), _mm512_loadu_ps(ct + i),
          _mm512_loadu_ps(st + i), &y0, &y1);
    _mm512_storeu_ps(y + i, y0);
    _mm512_storeu_ps(y + i + half, y1);
  }
  if (i < half) { /* §rope half style, the last half mod 16 pairs (masked) */
    __mmask16 m = first_lanes(half - i);
    __m512 y0, y1;
    rot16(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, x + i + half),
          _mm512_maskz_loadu_ps(m, ct + i), _mm512_maskz_loadu_ps(m, st + i), &y0, &y1);
    _mm512_mask_storeu_ps(y + i, m, y0);
    _mm512_mask_storeu_ps(y + i + half, m, y1);
  }
}

static void rope_interleaved(const float *x, float *y, const float *ct, const float *st,
                             int64_t half) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  int64_t i = 0;
  for (; i + 16 <= half; i += 16) { /* §rope interleaved: pairs (2i, 2i+1), independent */
    __m512 a = _mm512_loadu_ps(x + 2 * i), b = _mm512_loadu_ps(x + 2 * i + 16);
    __m512 y0, y1;
    rot16(_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b),
          _mm512_loadu_ps(ct + i), _mm512_loadu_ps(st + i), &y0, &y1);
    _mm512_storeu_ps(y + 2 * i, _mm512_permutex2var_ps(y0, lo, y1));
    _mm512_storeu_ps(y + 2 * i + 16, _mm512_permutex2var_ps(y0, hi, y1));
  }
  if (i < half) { /* §rope interleaved, the last half mod 16 pairs (masked) */
    int64_t r = half - i; /* 1..15 pairs = 2..30 floats */
    __mmask16 ma = r >= 8 ? (__mmask16)0xFFFF : first_lanes(2 * r);
    __mmask16 mb = r > 8 ? first_lanes(2 * r - 16) : (__mmask16)0;
    __mmask16 m = first_lanes(r);
    __m512 a = _mm512_maskz_loadu_ps(ma, x + 2 * i), b = _mm512_maskz_loadu_ps(mb, x + 2 * i + 16);
    __m512 y0, y1;
    rot16(_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b),
          _mm512_maskz_loadu_ps(m, ct + i), _mm512_maskz_loadu_ps(m, st + i), &y0, &y1);
    _mm512_mask_storeu_ps(y + 2 * i, ma, _mm512_permutex2var_ps(y0, lo, y1));
    _mm512_mask_storeu_ps(y + 2 * i + 16, mb, _mm512_permutex2var_ps(y0, hi, y1));
  }
}

hmx_status hmx_avx512_rope(const hmx_rope_args *a) {
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
 * 12 independent chains of 16-lane fmas (enough to cover latency x pipes on
 * current cores); flops = 2 * 16 * 12 per iteration. Runs for about
 * `seconds` of wall time; returns single-thread GFLOP/s. */
static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float fma_chains(int64_t iters) {
  __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(1.0f), a1 = _mm512_set1_ps(1.1f), a2 = _mm512_set1_ps(1.2f),
         a3 = _mm512_set1_ps(1.3f), a4 = _mm512_set1_ps(1.4f), a5 = _mm512_set1_ps(1.5f),
         a6 = _mm512_set1_ps(1.6f), a7 = _mm512_set1_ps(1.7f), a8 = _mm512_set1_ps(1.8f),
         a9 = _mm512_set1_ps(1.9f), a10 = _mm512_set1_ps(2.0f), a11 = _mm512_set1_ps(2.1f);
  for (int64_t i = 0; i < iters; i++) {
    a0 = _mm512_fmadd_ps(a0, m, c); a1 = _mm512_fmadd_ps(a1, m, c);
    a2 = _mm512_fmadd_ps(a2, m, c); a3 = _mm512_fmadd_ps(a3, m, c);
    a4 = _mm512_fmadd_ps(a4, m, c); a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c); a7 = _mm512_fmadd_ps(a7, m, c);
    a8 = _mm512_fmadd_ps(a8, m, c); a9 = _mm512_fmadd_ps(a9, m, c);
    a10 = _mm512_fmadd_ps(a10, m, c); a11 = _mm512_fmadd_ps(a11, m, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  return _mm512_reduce_add_ps(s);
}

double hmx_avx512_fma_peak_gflops(double seconds) {
  volatile float sink = 0.0f;
  int64_t iters = 1 << 16;
  double best = 0.0, t_end = now_s() + (seconds > 0 ? seconds : 0.1);
  for (;;) {
    double t0 = now_s();
    sink = sink + fma_chains(iters);
    double dt = now_s() - t0;
    if (dt > 0) {
      double g = 2.0 * 16 * 12 * (double)iters / dt * 1e-9;
      if (g > best) best = g;
    }
    if (dt < 0.02) iters *= 2;
    if (now_s() >= t_end) break;
  }
  (void)sink;
  return best;
}
