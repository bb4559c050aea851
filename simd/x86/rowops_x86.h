/* Row operations for the x86 SIMD backends: rmsnorm, layernorm, rope
 * (docs/NUMERICS.md §R, §rmsnorm, §layernorm, §rope), and the FMA-peak probe
 * used by `hmx bench`; shared by simd/avx512/rowops.c (16 lanes) and
 * simd/avx2/rowops.c (8 lanes). Header only: the includer first includes its
 * ISA's xv_ primitives (avx512_vec.h, avx2_vec.h), then defines
 *
 *   xr_deinterleave(a, b, &e, &o)   e = even, o = odd elements of the 2*XV_W
 *                                   floats a, b (in order)
 *   xr_interleave(e, o, &a, &b)     the inverse
 *   XR_RMSNORM_FN, XR_LAYERNORM_FN, XR_ROPE_FN, XR_FMA_PEAK_FN   the names
 *
 * Reductions: §R's 16 lanes are XV_R registers (one zmm, or two ymm: lanes
 * 0-7 and 8-15), lane = i mod 16; each lane is carried sequentially through
 * the row, the tail updates only the first n mod 16 lanes (masked), then the
 * fixed tree 8, 4, 2, 1 of hmx_lane_tree (xv_tree16). Scalars (mean, inv) are
 * computed as in ref/norms.c with IEEE division and sqrtf. Elementwise passes
 * round as written in NUMERICS; their tails are the same vector operations on
 * masked loads and stores. Threads split rows (tokens x heads for rope) only:
 * no bit depends on them. Buffers are only 4-byte aligned: every load/store
 * is unaligned or masked, but for the non-temporal stores of large norm
 * outputs, which start at the output's first cache line (xr_head). */
#ifndef HMX_ROWOPS_X86_H
#define HMX_ROWOPS_X86_H

#include "backend.h"
#include "parallel.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

_Static_assert(XV_W * XV_R == 16, "§R: 16 lanes in XV_R registers");

/* The three §R accumulations, one per kind: l = l + v, l = fma(v, v, l),
 * l = fma(v - c, v - c, l). `xr_upd` applies one to a register. */
enum { XR_SUM, XR_SUMSQ, XR_SUMSQ_C };

XV_INLINE xv_v xr_upd(const int kind, xv_v l, xv_v v, xv_v c) {
  if (kind == XR_SUM) return xv_add(l, v);
  if (kind == XR_SUMSQ) return xv_fma(v, v, l);
  const xv_v d = xv_sub(v, c);
  return xv_fma(d, d, l);
}

/* §R lane reduction of x[0..n-1] of the given kind (c: the centre). */
XV_INLINE float xr_lane_reduce(const int kind, const float *x, int64_t n, float cs) {
  xv_v l[XV_R];
  const xv_v c = xv_set1(cs);
  for (int q = 0; q < XV_R; q++) l[q] = xv_zero();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) /* §R: 16 consecutive elements, one per lane, in order */
    for (int q = 0; q < XV_R; q++) l[q] = xr_upd(kind, l[q], xv_load(x + i + q * XV_W), c);
  const int64_t r = n - i;
  for (int q = 0; q < XV_R; q++) /* §R tail: only lanes 0 .. r-1 change (masked) */
    if (r > q * XV_W) {
      const xv_m m = xv_lanes(r - q * XV_W < XV_W ? r - q * XV_W : XV_W);
      l[q] = xv_blend(m, l[q], xr_upd(kind, l[q], xv_loadn(x + i + q * XV_W, m), c));
    }
  return xv_tree16(l);
}

/* Outputs of at least this many bytes, written to a buffer apart from the
 * input, take non-temporal stores (xr_put): such an output will not be read
 * back from the caches, and a plain store first reads each line it writes
 * (write-allocate), a third stream of traffic besides the input and the
 * output. Intel Xeon VM, avx512, one thread, 600 MiB in and out, 16 bytes
 * past a line, the old and new code alternating in one process (7 rounds,
 * two runs): time new / old rmsnorm n = 768 / 2048 / 4096 0.77 / 0.63-0.67 /
 * 0.62, layernorm 0.88-0.91 / 0.65-0.69 / 0.64-0.67
 * (docs/results/session24/vm-norm-ab.txt). Which store writes a value does
 * not change it. */
#ifndef XR_STREAM_BYTES
#define XR_STREAM_BYTES ((int64_t)32 << 20) /* as the fwht's HX_STREAM_BYTES */
#endif

/* The elements [0, n) of a row whose output starts at y, in two spans: a
 * head up to y's first 64-byte line (none when y is on one or the output is
 * not streamed) and the rest, whose full vectors a streamed output writes
 * with non-temporal stores (aligned there). */
XV_INLINE int64_t xr_head(const float *y, int64_t n, int stream) {
  if (!stream) return 0;
  const int64_t h = (int64_t)(((64 - ((uintptr_t)y & 63)) & 63) / sizeof(float));
  return h < n ? h : n;
}
XV_INLINE void xr_put(float *p, xv_v v, int stream) {
  if (stream) xv_stream(p, v);
  else xv_store(p, v);
}

/* §rmsnorm's y = (x * inv) * w, two roundings, on [i, e): each element on its
 * own, so how the span is cut into vectors changes no bit. */
XV_INLINE void xr_rmsnorm_span(const float *x, const float *w, float *y, int64_t i, int64_t e,
                               xv_v vinv, int stream) {
  for (; i + XV_W <= e; i += XV_W) {
    xv_v v = xv_mul(xv_load(x + i), vinv);
    xr_put(y + i, xv_mul(v, xv_load(w + i)), stream);
  }
  if (i < e) { /* the last (e - i) mod XV_W elements (masked) */
    const xv_m m = xv_lanes(e - i);
    xv_v v = xv_mul(xv_loadn(x + i, m), vinv);
    xv_storen(y + i, m, xv_mul(v, xv_loadn(w + i, m)));
  }
}

static void xr_rmsnorm_row(const float *x, const float *w, float *y, int64_t n, float eps,
                           int stream) {
  /* §rmsnorm scalars, as ref: IEEE division and sqrtf, never rsqrt. */
  float ms = xr_lane_reduce(XR_SUMSQ, x, n, 0.0f) / (float)n;
  float inv = 1.0f / sqrtf(ms + eps);
  const xv_v vinv = xv_set1(inv);
  const int64_t h = xr_head(y, n, stream);
  xr_rmsnorm_span(x, w, y, 0, h, vinv, 0);
  /* the store kind a constant in each inlined copy, not a test per store */
  if (stream) xr_rmsnorm_span(x, w, y, h, n, vinv, 1);
  else xr_rmsnorm_span(x, w, y, h, n, vinv, 0);
}

/* §layernorm's z = (x - mean) * inv; y = fma(z, w, b), or y = z * w without
 * a bias (no fma), on [i, e): elementwise, as xr_rmsnorm_span. */
XV_INLINE void xr_layernorm_span(const float *x, const float *w, const float *b, float *y,
                                 int64_t i, int64_t e, xv_v vmean, xv_v vinv, int stream) {
  if (b) {
    for (; i + XV_W <= e; i += XV_W) {
      xv_v z = xv_mul(xv_sub(xv_load(x + i), vmean), vinv);
      xr_put(y + i, xv_fma(z, xv_load(w + i), xv_load(b + i)), stream);
    }
    if (i < e) { /* with bias, the last (e - i) mod XV_W elements (masked) */
      const xv_m m = xv_lanes(e - i);
      xv_v z = xv_mul(xv_sub(xv_loadn(x + i, m), vmean), vinv);
      xv_storen(y + i, m, xv_fma(z, xv_loadn(w + i, m), xv_loadn(b + i, m)));
    }
  } else {
    for (; i + XV_W <= e; i += XV_W) {
      xv_v z = xv_mul(xv_sub(xv_load(x + i), vmean), vinv);
      xr_put(y + i, xv_mul(z, xv_load(w + i)), stream);
    }
    if (i < e) { /* without bias, the last (e - i) mod XV_W elements (masked) */
      const xv_m m = xv_lanes(e - i);
      xv_v z = xv_mul(xv_sub(xv_loadn(x + i, m), vmean), vinv);
      xv_storen(y + i, m, xv_mul(z, xv_loadn(w + i, m)));
    }
  }
}

static void xr_layernorm_row(const float *x, const float *w, const float *b, float *y, int64_t n,
                             float eps, int stream) {
  /* §layernorm scalars, as ref: mean, centred variance, IEEE division and sqrtf. */
  float mean = xr_lane_reduce(XR_SUM, x, n, 0.0f) / (float)n;
  float var = xr_lane_reduce(XR_SUMSQ_C, x, n, mean) / (float)n;
  float inv = 1.0f / sqrtf(var + eps);
  const xv_v vmean = xv_set1(mean), vinv = xv_set1(inv);
  const int64_t h = xr_head(y, n, stream);
  xr_layernorm_span(x, w, b, y, 0, h, vmean, vinv, 0);
  /* as in xr_rmsnorm_row */
  if (stream) xr_layernorm_span(x, w, b, y, h, n, vmean, vinv, 1);
  else xr_layernorm_span(x, w, b, y, h, n, vmean, vinv, 0);
}

/* Whether a norm's output is streamed: large, and apart from its input (in
 * place, the lines are in the cache already). */
static int xr_stream_out(const hmx_norm_args *a) {
  const int64_t bytes = a->rows * a->n * (int64_t)sizeof(float);
  const uintptr_t x = (uintptr_t)a->x, y = (uintptr_t)a->y; /* apart: compared as numbers */
  return bytes >= XR_STREAM_BYTES && (y + (uintptr_t)bytes <= x || x + (uintptr_t)bytes <= y);
}

hmx_status XR_RMSNORM_FN(const hmx_norm_args *a) {
  const int nt = hmx_thread_count(a->threads, a->rows);
  const int stream = xr_stream_out(a);
  /* rows are independent (§rmsnorm per row): contiguous ranges per thread,
   * each thread fencing its own non-temporal stores */
  HMX_FOR_THREADS(nt, t, {
    const int64_t r1 = a->rows * (t + 1) / nt;
    for (int64_t r = a->rows * t / nt; r < r1; r++)
      xr_rmsnorm_row(a->x + r * a->n, a->weight, a->y + r * a->n, a->n, a->eps, stream);
    if (stream) xv_fence();
  });
  return HMX_OK;
}

hmx_status XR_LAYERNORM_FN(const hmx_norm_args *a) {
  const int nt = hmx_thread_count(a->threads, a->rows);
  const int stream = xr_stream_out(a);
  /* rows are independent (§layernorm per row), as in XR_RMSNORM_FN */
  HMX_FOR_THREADS(nt, t, {
    const int64_t r1 = a->rows * (t + 1) / nt;
    for (int64_t r = a->rows * t / nt; r < r1; r++)
      xr_layernorm_row(a->x + r * a->n, a->weight, a->bias, a->y + r * a->n, a->n, a->eps,
                       stream);
    if (stream) xv_fence();
  });
  return HMX_OK;
}

/* §rope on XV_W pairs: y0 = fma(x0, c, -(x1 * s)), y1 = fma(x0, s, x1 * c).
 * fms(a, b, p) = fma(a, b, -p) exactly (negation is exact). */
XV_INLINE void xr_rot(xv_v x0, xv_v x1, xv_v c, xv_v s, xv_v *y0, xv_v *y1) {
  *y0 = xv_fms(x0, c, xv_mul(x1, s));
  *y1 = xv_fma(x0, s, xv_mul(x1, c));
}

static void xr_rope_half(const float *x, float *y, const float *ct, const float *st,
                         int64_t half) {
  int64_t i = 0;
  for (; i + XV_W <= half; i += XV_W) { /* §rope half style: pairs (i, i + half), independent */
    xv_v y0, y1;
    xr_rot(xv_load(x + i), xv_load(x + i + half), xv_load(ct + i), xv_load(st + i), &y0, &y1);
    xv_store(y + i, y0);
    xv_store(y + i + half, y1);
  }
  if (i < half) { /* §rope half style, the last half mod XV_W pairs (masked) */
    const xv_m m = xv_lanes(half - i);
    xv_v y0, y1;
    xr_rot(xv_loadn(x + i, m), xv_loadn(x + i + half, m), xv_loadn(ct + i, m),
           xv_loadn(st + i, m), &y0, &y1);
    xv_storen(y + i, m, y0);
    xv_storen(y + i + half, m, y1);
  }
}

static void xr_rope_interleaved(const float *x, float *y, const float *ct, const float *st,
                                int64_t half) {
  int64_t i = 0;
  for (; i + XV_W <= half; i += XV_W) { /* §rope interleaved: pairs (2i, 2i+1), independent */
    xv_v x0, x1, y0, y1, o0, o1;
    xr_deinterleave(xv_load(x + 2 * i), xv_load(x + 2 * i + XV_W), &x0, &x1);
    xr_rot(x0, x1, xv_load(ct + i), xv_load(st + i), &y0, &y1);
    xr_interleave(y0, y1, &o0, &o1);
    xv_store(y + 2 * i, o0);
    xv_store(y + 2 * i + XV_W, o1);
  }
  if (i < half) { /* §rope interleaved, the last half mod XV_W pairs (masked) */
    const int64_t r = half - i; /* 1 .. XV_W-1 pairs = 2 .. 2*XV_W-2 floats */
    const xv_m ma = xv_lanes_clamped(2 * r), mb = xv_lanes_clamped(2 * r - XV_W);
    const xv_m m = xv_lanes(r);
    xv_v x0, x1, y0, y1, o0, o1;
    xr_deinterleave(xv_loadn(x + 2 * i, ma), xv_loadn(x + 2 * i + XV_W, mb), &x0, &x1);
    xr_rot(x0, x1, xv_loadn(ct + i, m), xv_loadn(st + i, m), &y0, &y1);
    xr_interleave(y0, y1, &o0, &o1);
    xv_storen(y + 2 * i, ma, o0);
    xv_storen(y + 2 * i + XV_W, mb, o1);
  }
}

hmx_status XR_ROPE_FN(const hmx_rope_args *a) {
  int64_t half = a->rot_dim / 2, rows = a->t * a->h;
  int nt = hmx_thread_count(a->threads, rows);
  HMX_OMP_FOR(nt)
  for (int64_t r = 0; r < rows; r++) { /* (token, head) rows are independent (§rope) */
    int64_t t = r / a->h;
    const float *x = a->x + r * a->d;
    float *y = a->y + r * a->d;
    const float *ct = a->cos_tab + t * half, *st = a->sin_tab + t * half;
    if (a->style == HMX_ROPE_HALF) xr_rope_half(x, y, ct, st, half);
    else xr_rope_interleaved(x, y, ct, st, half);
    if (y != x && a->d > a->rot_dim) /* §rope: channels rot_dim .. D-1 copied unchanged */
      memcpy(y + a->rot_dim, x + a->rot_dim, (size_t)(a->d - a->rot_dim) * sizeof(float));
  }
  return HMX_OK;
}

/* ---------------------------------------------------------------- FMA peak
 * 12 independent chains of XV_W-lane fmas (enough to cover latency x pipes on
 * current cores); flops = 2 * XV_W * 12 per iteration. Runs for about
 * `seconds` of wall time; returns single-thread GFLOP/s. Not a kernel: its
 * sums only keep the chains alive. */
static double xr_now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float xr_fma_chains(int64_t iters) {
  const xv_v m = xv_set1(0.999999f), c = xv_set1(1e-7f);
  xv_v a0 = xv_set1(1.0f), a1 = xv_set1(1.1f), a2 = xv_set1(1.2f), a3 = xv_set1(1.3f),
       a4 = xv_set1(1.4f), a5 = xv_set1(1.5f), a6 = xv_set1(1.6f), a7 = xv_set1(1.7f),
       a8 = xv_set1(1.8f), a9 = xv_set1(1.9f), a10 = xv_set1(2.0f), a11 = xv_set1(2.1f);
  for (int64_t i = 0; i < iters; i++) {
    a0 = xv_fma(a0, m, c); a1 = xv_fma(a1, m, c);
    a2 = xv_fma(a2, m, c); a3 = xv_fma(a3, m, c);
    a4 = xv_fma(a4, m, c); a5 = xv_fma(a5, m, c);
    a6 = xv_fma(a6, m, c); a7 = xv_fma(a7, m, c);
    a8 = xv_fma(a8, m, c); a9 = xv_fma(a9, m, c);
    a10 = xv_fma(a10, m, c); a11 = xv_fma(a11, m, c);
  }
  xv_v s = xv_add(xv_add(xv_add(a0, a1), xv_add(a2, a3)), xv_add(xv_add(a4, a5), xv_add(a6, a7)));
  s = xv_add(s, xv_add(xv_add(a8, a9), xv_add(a10, a11)));
  float lanes[XV_W], sum = 0.0f;
  xv_store(lanes, s);
  for (int k = 0; k < XV_W; k++) sum += lanes[k];
  return sum;
}

double XR_FMA_PEAK_FN(double seconds) {
  volatile float sink = 0.0f;
  int64_t iters = 1 << 16;
  double best = 0.0, t_end = xr_now_s() + (seconds > 0 ? seconds : 0.1);
  for (;;) {
    double t0 = xr_now_s();
    sink = sink + xr_fma_chains(iters);
    double dt = xr_now_s() - t0;
    if (dt > 0) {
      double g = 2.0 * XV_W * 12 * (double)iters / dt * 1e-9;
      if (g > best) best = g;
    }
    if (dt < 0.02) iters *= 2;
    if (xr_now_s() >= t_end) break;
  }
  (void)sink;
  return best;
}

#endif
