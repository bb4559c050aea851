/* GEMM driver shared by the avx512 and avx2 backends (docs/NUMERICS.md §gemm).
 *
 * This header is a template: the including .c file (simd/avx512/gemm.c,
 * simd/avx2/gemm.c) first defines the vector width and the few vector
 * primitives below, then includes it once and gets the static function
 * gx_gemm(). Nothing here is a separate translation unit.
 *
 * Contract (§gemm): c[i][j] = acc, acc = bias[j] (or +0), then for
 * p = 0 .. K-1: acc = fma(a[i][p], b[p][j], acc). Every loop below either
 * runs over independent outputs (i, j: any order, any thread) or over p in
 * increasing order while carrying acc. K is tiled (GX_KC) but never split:
 * acc leaves the registers after one K block only to be stored to C and
 * reloaded, unchanged, for the next block (a float store/load is exact).
 *
 * Design (GotoBLAS/BLIS loop nest, row-major C):
 *   - microkernel: GX_MR rows x GX_NR = GX_NV*GX_VL columns of C in registers;
 *     per p one broadcast of a[i+r][p] per row and GX_NV vector loads of the
 *     packed B row, GX_MR*GX_NV independent fma chains;
 *   - B packed per (KC x NC) block into NR-wide panels, p-major
 *     (bp[p*NR + jj]); trans_b ([N, K], PyTorch Linear) is transposed while
 *     packing (VL x VL register transposes), zero padded past N;
 *   - A packed per (MC x KC) block into MR-row panels, p-major (ap[p*MR + r]);
 *   - M = 1 (decode, GEMV): no packing, B read once in place: [K, N] in
 *     column chunks of 8 vectors (8 fma chains) and K blocks of 256 rows;
 *     [N, K] in groups of 16 outputs (16 rows of B streamed at once), each
 *     VL x VL block transposed through a small L1 buffer so that one vector
 *     holds VL outputs' b[j][p], then one fma per p in order;
 *   - edge tiles: fewer rows use a kernel specialized for that row count,
 *     fewer columns use partial (masked) loads/stores of C;
 *   - threads, M large, and column tiles too few or too uneven to give each
 *     thread its own range (prefill; gx_team): per (N block, K block) the
 *     team packs B once into a shared buffer, then takes blocks of GX_MU
 *     rows one at a time (dynamic schedule), a barrier between K blocks;
 *     otherwise the output is cut into one rectangle per thread (whole NR
 *     columns where they split evenly or N is the longer side, else whole
 *     MR rows), each thread running the loop nest on its own rectangle with
 *     its own pack buffers. Either way one owner per output per K block and
 *     K blocks in order, never split: no bit depends on the thread count or
 *     the schedule.
 *
 * The includer defines:
 *   GX_VL            lanes per vector (16 or 8)
 *   GX_NV            vectors per microkernel row (NR = NV * VL)
 *   GX_MR            microkernel rows
 *   gx_v             the vector type
 *   gx_loadu(p), gx_storeu(p, v), gx_bcast(p), gx_zero(), gx_fma(a, b, c)
 *   gx_loadu_n(p, n), gx_storeu_n(p, v, n)   first n lanes only (0 <= n <= VL)
 *   gx_transpose_cols(r)                     r[t] <- lane t of the old r[i],
 *                                            0 <= i, t < VL (r: gx_v[VL])
 * and has included its ISA's xv_ primitives (avx512_vec.h, avx2_vec.h) for
 * the weight loads of weights16_x86.h: B may be f32, bf16 or f16
 * (args.wdt), or GGUF Q8_0/Q4_0/Q4_1/Q5_0/Q5_1/Q4_K/Q5_K/Q6_K blocks [N, K] (args.bq); every
 * element of B is converted exactly to f32 (decoded by the GGUF rule) as it
 * is loaded or packed, so the arithmetic, and the bits, are those of f32 B
 * (for blocks: of the dequantized f32 B, docs/NUMERICS.md).
 */
#ifndef HMX_GEMM_X86_H
#define HMX_GEMM_X86_H

#include "unroll.h"
#include "backend.h"
#include "parallel.h"
#include "scratch_cache.h"
#include "weights16_x86.h"
#include "gemm_quant.h" /* HMX_QG, the G16 layout */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GX_NR (GX_NV * GX_VL)

#ifndef GX_KC
#define GX_KC 256 /* K block: A micro-panel MR x KC stays in L1 */
#endif
#ifndef GX_MC
#define GX_MC (GX_MR * 24) /* M block */
#endif
#ifndef GX_NC
#define GX_NC (GX_NR * 16) /* N block: packed B block KC x NC stays in L2 */
#endif

#ifndef GX_PF_B
#define GX_PF_B 8 /* software prefetch distance for packed B, in p steps (0: off) */
#endif
#ifndef GX_PF_C
#define GX_PF_C 1 /* prefetch the next C tile */
#endif
#ifndef GX_PF_A
#define GX_PF_A 1 /* prefetch the next A micro-panel during this one's tiles */
#endif
#ifndef GX_IR_INNER
#define GX_IR_INNER 0 /* 1: B micro-panel in L1, A micro-panels stream */
#endif

#define GX_INLINE static inline __attribute__((always_inline))
/* The row and vector loops of the microkernel are written out (r, v are
 * constants in each copy, rows r >= mr fold away), so that every accumulator
 * is a register on gcc and clang alike. Rows and vectors are independent
 * outputs: their order does not matter. */
#if GX_NV != 2 /* 8 x 48 (NV 3) measured no faster than 8 x 32 on the Xeon */
#error "the microkernel is written for GX_NV == 2"
#endif
#define GX_ROWS_MAX 12
_Static_assert(GX_MR <= GX_VL, "gx_pack_a transposes whole VL x VL blocks");
#if GX_MR > GX_ROWS_MAX
#error "GX_MR > 12"
#endif
#define GX_ROW(R, S) if ((R) < mr) { const int r = (R); S }
#define GX_EACH_ROW(S) GX_ROW(0, S) GX_ROW(1, S) GX_ROW(2, S) GX_ROW(3, S) GX_ROW(4, S) GX_ROW(5, S) \
  GX_ROW(6, S) GX_ROW(7, S) GX_ROW(8, S) GX_ROW(9, S) GX_ROW(10, S) GX_ROW(11, S)
#define GX_EACH_V(S) { const int v = 0; S } { const int v = 1; S }

/* How the accumulators start: from +0, from bias[j], or from C (the value a
 * previous K block stored there, continuing the same fma chain). */
enum { GX_INIT_ZERO = 0, GX_INIT_BIAS = 1, GX_INIT_C = 2 };

/* Lanes of vector v that hold real columns, for gx_loadu_n/gx_storeu_n. */
GX_INLINE int gx_clamp_lanes(int n) { return n < 0 ? 0 : (n > GX_VL ? GX_VL : n); }

/* The microkernel, mr rows (a compile-time constant after inlining) x NR
 * columns, of which nc (1..NR) are real: acc starts per `init`, then for
 * p = 0 .. kc-1 in order (§gemm: sequential over K, one fma per term):
 *   acc[r][v] = fma(a[r][p], b[p][v*VL ..], acc[r][v]),
 * then acc is stored to C. ap: packed A panel, ap[p*MR + r]; bp: packed B
 * panel, bp[p*NR + jj]. */
GX_INLINE void gx_kernel(const int mr, int64_t kc, const float *restrict ap,
                         const float *restrict bp, float *restrict c, int64_t ldc,
                         int init, const float *restrict bias, int nc) {
  gx_v acc[GX_ROWS_MAX][GX_NV];
  /* Initial value per output (§gemm: bias[j] or +0, or the acc carried from
   * the previous K block through C). Rows and columns are independent. */
  if (init == GX_INIT_ZERO) {
    GX_EACH_ROW(GX_EACH_V(acc[r][v] = gx_zero();))
  } else if (init == GX_INIT_BIAS) { /* bias is padded to whole panels */
    GX_EACH_ROW(GX_EACH_V(acc[r][v] = gx_loadu(bias + v * GX_VL);))
  } else if (nc == GX_NR) {
    GX_EACH_ROW(GX_EACH_V(acc[r][v] = gx_loadu(c + r * ldc + v * GX_VL);))
  } else {
    GX_EACH_ROW(GX_EACH_V(acc[r][v] = gx_loadu_n(c + r * ldc + v * GX_VL, gx_clamp_lanes(nc - v * GX_VL));))
  }
  /* §gemm: p = 0 .. kc-1 in increasing order, one fma per term per output;
   * the rows r and vectors v are independent outputs. Unrolled by 4 and
   * one prefetch per line (avx2's row of B is one line, avx512's two):
   * +1-14% on one Zen 3 core, most at M = 64, against no unrolling and a
   * prefetch per vector (interleaved in one process, session 53). */
  HMX_UNROLL_BY(4)
  for (int64_t p = 0; p < kc; p++) {
#if GX_PF_B
    /* Prefetch the packed B row GX_PF_B steps ahead, each of its 64-byte
     * lines (no arithmetic). */
    GX_EACH_V(if (v * GX_VL * (int)sizeof(float) % 64 == 0)
                __builtin_prefetch(bp + (p + GX_PF_B) * GX_NR + v * GX_VL, 0, 3);)
#endif
    gx_v bv[GX_NV];
    GX_EACH_V(bv[v] = gx_loadu(bp + p * GX_NR + v * GX_VL);)
    GX_EACH_ROW({
      const gx_v a = gx_bcast(ap + p * GX_MR + r);
      GX_EACH_V(acc[r][v] = gx_fma(a, bv[v], acc[r][v]);)
    })
  }
  /* Store (independent outputs); partial column tiles store nc lanes only. */
  if (nc == GX_NR) {
    GX_EACH_ROW(GX_EACH_V(gx_storeu(c + r * ldc + v * GX_VL, acc[r][v]);))
  } else {
    GX_EACH_ROW(GX_EACH_V(gx_storeu_n(c + r * ldc + v * GX_VL, acc[r][v], gx_clamp_lanes(nc - v * GX_VL));))
  }
}

/* One specialization per row count, so that every accumulator lives in a
 * register (the row loops above unroll completely). */
#define GX_KERNEL_ROWS(R)                                                                   \
  static void gx_kernel_##R(int64_t kc, const float *ap, const float *bp, float *c,          \
                            int64_t ldc, int init, const float *bias, int nc) {              \
    gx_kernel(R, kc, ap, bp, c, ldc, init, bias, nc);                                        \
  }
typedef void (*gx_kernel_fn)(int64_t, const float *, const float *, float *, int64_t, int,
                             const float *, int);

/* dst[t*ldd + i] = lane t of r[i] for a VL x VL block. Copies only. */
GX_INLINE void gx_transpose_regs(gx_v r[GX_VL], float *dst, int64_t ldd) {
  gx_transpose_cols(r);
  HMX_UNROLL(16)
  for (int t = 0; t < GX_VL; t++) gx_storeu(dst + t * ldd, r[t]);
}

/* r[i] = w[idx + i*lds .. + VL) as f32 for the first `rows` rows i, +0 for
 * the rows past them. Copies only. */
GX_INLINE void gx_load_rows_w(const void *w, int64_t idx, int64_t lds, int rows, gx_v r[GX_VL],
                              const int wt) {
  if (rows == GX_VL) { /* whole blocks: plain loads, unrolled (r stays in registers) */
    HMX_UNROLL(16)
    for (int i = 0; i < GX_VL; i++) r[i] = xw_load(w, idx + i * lds, wt);
  } else {
    HMX_UNROLL(16)
    for (int i = 0; i < GX_VL; i++) r[i] = i < rows ? xw_load(w, idx + i * lds, wt) : gx_zero();
  }
}

/* dst[t*ldd + i] = w[idx + i*lds + t] as f32 for 0 <= t < VL and the first
 * `rows` rows i (rows past them read as +0). Copies only. */
GX_INLINE void gx_transpose_w(const void *w, int64_t idx, int64_t lds, int rows, float *dst,
                              int64_t ldd, const int wt) {
  gx_v r[GX_VL];
  gx_load_rows_w(w, idx, lds, rows, r, wt);
  gx_transpose_regs(r, dst, ldd);
}

/* Pack B[p0 .. p0+kc, j0 .. j0+nb) (B is [K, N], row stride n) into NR-wide
 * panels: dst[panel][p][jj], zero past nb. Copies only: no arithmetic. */
GX_INLINE void gx_pack_b_nn(const void *b, int64_t n, int64_t p0, int64_t kc, int64_t j0,
                            int64_t nb, float *dst, const int wt) {
  const int64_t whole = nb - nb % GX_NR; /* columns in whole panels */
  /* Row by row, so that B is read contiguously (rows of B are far apart). */
  for (int64_t p = 0; p < kc; p++) {
    const int64_t s = (p0 + p) * n + j0; /* element index of b[p0+p][j0] */
    for (int64_t jp = 0; jp < whole; jp += GX_NR) {
      float *d = dst + jp * kc + p * GX_NR;
      for (int v = 0; v < GX_NV; v++) gx_storeu(d + v * GX_VL, xw_load(b, s + jp + v * GX_VL, wt));
    }
    if (whole < nb) {
      float *d = dst + whole * kc + p * GX_NR;
      for (int64_t jj = 0; jj < nb - whole; jj++) d[jj] = xw_at(b, s + whole + jj, wt);
      for (int64_t jj = nb - whole; jj < GX_NR; jj++) d[jj] = 0.0f;
    }
  }
}

/* Pack the same block when B is stored [N, K] (trans_b): dst[panel][p][jj] =
 * b[(j0+jp+jj)*k + p0+p], VL x VL register transposes where a whole block
 * fits, element copies at the edges, zero past nb. Copies only. */
GX_INLINE void gx_pack_b_nt(const void *b, int64_t k, int64_t p0, int64_t kc, int64_t j0,
                            int64_t nb, float *dst, const int wt) {
  for (int64_t jp = 0; jp < nb; jp += GX_NR) {
    int64_t w = nb - jp < GX_NR ? nb - jp : GX_NR;
    float *d = dst + jp * kc;
    int64_t pv = kc - kc % GX_VL; /* p range covered by whole transposes */
    for (int64_t g = 0; g < GX_NV; g++) {
      int64_t jg = g * GX_VL;
      const int64_t s = (j0 + jp + jg) * k + p0; /* element index of b[j0+jp+jg][p0] */
      if (jg + GX_VL <= w) {
        for (int64_t p = 0; p < pv; p += GX_VL)
          gx_transpose_w(b, s + p, k, GX_VL, d + p * GX_NR + jg, GX_NR, wt);
        for (int64_t p = pv; p < kc; p++)
          for (int64_t i = 0; i < GX_VL; i++) d[p * GX_NR + jg + i] = xw_at(b, s + i * k + p, wt);
      } else {
        int64_t wi = w - jg < 0 ? 0 : w - jg;
        for (int64_t p = 0; p < kc; p++) {
          for (int64_t i = 0; i < wi; i++) d[p * GX_NR + jg + i] = xw_at(b, s + i * k + p, wt);
          for (int64_t i = wi; i < GX_VL; i++) d[p * GX_NR + jg + i] = 0.0f;
        }
      }
    }
  }
}

/* Floats past a packed A block that gx_pack_a may write. */
#define GX_A_SLACK 16 /* >= GX_VL, and keeps each thread's block on a 64-byte line */
_Static_assert(GX_A_SLACK >= GX_VL, "gx_pack_a writes up to VL - MR floats past a block");

/* Floats of a buffer for one gx_pack_a block of at most `rows` rows and kc
 * values of p: whole MR panels, then GX_A_SLACK (so that, one block per
 * thread, no pack reaches the next thread's block). */
static inline int64_t gx_a_floats(int64_t rows, int64_t kc) {
  return kc * ((rows + GX_MR - 1) / GX_MR) * GX_MR + GX_A_SLACK;
}

/* Pack A[i0 .. i0+mb, p0 .. p0+kc) into MR-row panels dst[panel][p][r]
 * (in the last panel, rows past mb are +0 or left unset: the kernel for it
 * reads only its real rows). VL values of p at a time, the panel's rows
 * loaded as vectors and transposed in registers (VL x VL, rows past the
 * panel +0), then each stored whole: one element at a time this was 8% of a
 * 512 x 768 x 768 gemm (the loads of A's rows stalled). A whole vector is
 * VL - MR floats longer than a row of the panel; the stores go up in
 * address, so each one's extra lanes are overwritten by the next (the next
 * t, the next p block, the tail's elements, the next panel), and the last
 * one's land in GX_A_SLACK. With masked stores of MR lanes instead, avx2's
 * vmaskmovps, this pack took 12% of a 512 x 768 x 2048 gemm on Zen 3
 * (perf, session 53). Copies only. */
static void gx_pack_a(const float *a, int64_t k, int64_t i0, int64_t mb, int64_t p0, int64_t kc,
                      float *dst) {
  const int64_t pv = kc - kc % GX_VL; /* p range covered by whole transposes */
  for (int64_t ip = 0; ip < mb; ip += GX_MR) {
    const int h = (int)(mb - ip < GX_MR ? mb - ip : GX_MR);
    float *d = dst + ip * kc;
    const float *s = a + (i0 + ip) * k + p0; /* a[i0+ip][p0] */
    for (int64_t p = 0; p < pv; p += GX_VL) {
      gx_v r[GX_VL];
      HMX_UNROLL(16)
      for (int i = 0; i < GX_VL; i++) r[i] = i < h ? gx_loadu(s + i * k + p) : gx_zero();
      gx_transpose_cols(r); /* r[t] = a[i0+ip+0 .. +VL][p0+p+t] */
      HMX_UNROLL(16)
      for (int t = 0; t < GX_VL; t++) gx_storeu(d + (p + t) * GX_MR, r[t]); /* in this order */
    }
    for (int64_t p = pv; p < kc; p++) /* the last kc % VL values */
      for (int r = 0; r < h; r++) d[p * GX_MR + r] = s[r * k + p];
  }
}

static void *gx_alloc(size_t floats) {
  size_t bytes = (floats * sizeof(float) + 63) & ~(size_t)63;
  return aligned_alloc(64, bytes ? bytes : 64);
}

/* ---- M = 1 (decode: a GEMV), vectorized over N, K sequential per output. */

#define GX_GEMV_NV 8   /* B [K, N]: vectors of outputs per chunk (8 independent chains) */
#define GX_GEMV_KC 256 /* B [K, N]: rows of B per pass over the columns */
#ifndef GX_GEMV_INREG
#define GX_GEMV_INREG (GX_VL == 16) /* B [N, K]: blocks transposed in registers, rows 8+
                                      * loaded a step ahead (gx_gemv_nt_groups); avx2's
                                      * 16 ymm spill there (measured 35 -> 21 GB/s), so
                                      * it transposes through a buffer */
#endif
#ifndef GX_GEMV_G
#define GX_GEMV_G (16 / GX_VL) /* B [N, K]: groups of VL outputs in flight: 16 rows of B
                                  * (32 or 64 rows measured 2-4x slower: rows K apart
                                  * share cache sets and the prefetchers lose them) */
#endif

/* y[j0 .. j0+nt) for B [K, N]: columns in chunks of GX_GEMV_NV vectors; K in
 * blocks of GX_GEMV_KC rows (so that a pass touches few pages of B), the acc
 * of each output carried from block to block through C, in order (§gemm). */
GX_INLINE void gx_gemv_nn(const hmx_gemm_args *g, const void *b, const float *bias_pad,
                          int64_t j0, int64_t nt, const int wt) {
  const int64_t n = g->n, k = g->k;
  const float *a = g->a;
  float *y = g->c;
  /* pc: K blocks in increasing order (§gemm: sequential over K). */
  for (int64_t pc = 0; pc < k; pc += GX_GEMV_KC) {
    const int64_t kc = k - pc < GX_GEMV_KC ? k - pc : GX_GEMV_KC;
    /* jc: chunks of outputs (independent). */
    for (int64_t jc = j0; jc < j0 + nt; jc += GX_GEMV_NV * GX_VL) {
      const int w = (int)(j0 + nt - jc < GX_GEMV_NV * GX_VL ? j0 + nt - jc : GX_GEMV_NV * GX_VL);
      gx_v acc[GX_GEMV_NV];
      /* Initial value (§gemm: bias[j] or +0; or the acc stored by the
       * previous K block). */
      for (int v = 0; v < GX_GEMV_NV; v++)
        acc[v] = gx_loadu_n((pc > 0 ? y : bias_pad) + jc + v * GX_VL, gx_clamp_lanes(w - v * GX_VL));
      if (w == GX_GEMV_NV * GX_VL) {
        /* §gemm: p in increasing order, one fma per term per output. */
        for (int64_t p = pc; p < pc + kc; p++) {
          const gx_v av = gx_bcast(a + p);
          const int64_t bp = p * n + jc; /* element index of b[p][jc] */
          for (int v = 0; v < GX_GEMV_NV; v++) acc[v] = gx_fma(av, xw_load(b, bp + v * GX_VL, wt), acc[v]);
        }
      } else {
        /* Same, edge chunk: only the w real columns are read. */
        for (int64_t p = pc; p < pc + kc; p++) {
          const gx_v av = gx_bcast(a + p);
          const int64_t bp = p * n + jc;
          for (int v = 0; v < GX_GEMV_NV; v++)
            acc[v] = gx_fma(av, xw_loadn(b, bp + v * GX_VL, gx_clamp_lanes(w - v * GX_VL), wt), acc[v]);
        }
      }
      for (int v = 0; v < GX_GEMV_NV; v++) gx_storeu_n(y + jc + v * GX_VL, acc[v], gx_clamp_lanes(w - v * GX_VL));
    }
  }
}

/* ng (1 or GX_GEMV_G, a constant after inlining) groups of VL outputs from
 * column j of a trans_b GEMV: see gx_gemv_nt. */
GX_INLINE void gx_gemv_nt_groups(const hmx_gemm_args *g, const void *b, const float *bias_pad,
                                 int64_t j, const int ng, const int rows, const int wt) {
  const int64_t k = g->k;
  const int64_t kv = k - k % GX_VL;
  const float *a = g->a;
  float tmp[GX_GEMV_G][GX_VL * GX_VL] __attribute__((aligned(64)));
  gx_v acc[GX_GEMV_G];
  for (int q = 0; q < ng; q++) acc[q] = gx_loadu(bias_pad + j + q * GX_VL); /* bias or +0 */
  gx_v ahead[GX_GEMV_G][GX_VL]; /* rows h >= 8 at the next step (see below) */
  for (int q = 0; q < ng; q++)
    HMX_UNROLL(16)
    for (int i = 0; i < GX_VL; i++)
      ahead[q][i] = GX_GEMV_INREG && rows == GX_VL && kv > 0 && q * GX_VL + i >= 8
                        ? xw_load(b, (j + q * GX_VL + i) * k, wt) : gx_zero();
  /* The next group's rows are one contiguous block: prefetch it at the pace
   * this group is read (ng*VL*VL elements per step), so that it is in L2
   * when its turn comes. The hardware prefetchers follow the 16 short rows
   * of a group poorly (measured: 62 -> 85% of the read bandwidth, K = 768). */
  const char *pf = (const char *)b + xw_bytes((j + ng * GX_VL) * k, wt);
  const char *pf_end = (const char *)b + xw_bytes(g->n * k, wt);
  const size_t pf_step = xw_bytes(ng * GX_VL * GX_VL, wt); /* 256 elements: whole blocks */
  /* §gemm: p = 0 .. K-1 in increasing order for every output. */
  for (int64_t p = 0; p < kv; p += GX_VL, pf += pf_step) {
    for (size_t o = 0; o < pf_step; o += 64) /* no arithmetic */
      if (pf + o < pf_end) __builtin_prefetch(pf + o, 0, 2);
    if (!GX_GEMV_INREG) { /* through tmp: dst[t*VL + i] = b[j+q*VL+i][p+t] */
      for (int q = 0; q < ng; q++)
        gx_transpose_w(b, (j + q * GX_VL) * k + p, k, rows, tmp[q], GX_VL, wt);
      for (int t = 0; t < GX_VL; t++) {
        const gx_v av = gx_bcast(a + p + t);
        for (int q = 0; q < ng; q++) acc[q] = gx_fma(av, gx_loadu(tmp[q] + t * GX_VL), acc[q]);
      }
      continue;
    }
    /* In registers: each VL x VL block is transposed, then
     * r[t] = b[j+q*VL .. +VL][p+t] gets its fma. The rows h >= 8 of the
     * ng*VL in flight were loaded one step earlier (ahead): where the row
     * stride is a multiple of 4 KiB, the same column of every row falls in
     * one L1 set, and 16 lines in flight in its 8 ways ran at 20 GB/s where
     * 8 + 8 in two sets run at 27 (Zen 4, K = 2048, B in L3; 51 GB/s at
     * K = 2064, 43 through a buffer). */
    for (int q = 0; q < ng; q++) {
      gx_v r[GX_VL];
      if (rows == GX_VL) {
        HMX_UNROLL(16)
        for (int i = 0; i < GX_VL; i++) {
          const int64_t row = (j + q * GX_VL + i) * k;
          if (q * GX_VL + i < 8) {
            r[i] = xw_load(b, row + p, wt);
          } else {
            r[i] = ahead[q][i];
            if (p + GX_VL < kv) ahead[q][i] = xw_load(b, row + p + GX_VL, wt);
          }
        }
      } else {
        gx_load_rows_w(b, (j + q * GX_VL) * k + p, k, rows, r, wt);
      }
      gx_transpose_cols(r);
      HMX_UNROLL(16)
      for (int t = 0; t < GX_VL; t++) acc[q] = gx_fma(gx_bcast(a + p + t), r[t], acc[q]);
    }
  }
  for (int64_t p = kv; p < k; p++) { /* K tail, still in order */
    const gx_v av = gx_bcast(a + p);
    for (int q = 0; q < ng; q++) {
      for (int i = 0; i < GX_VL; i++)
        tmp[q][i] = i < rows ? xw_at(b, (j + q * GX_VL + i) * k + p, wt) : 0.0f;
      acc[q] = gx_fma(av, gx_loadu(tmp[q]), acc[q]);
    }
  }
  if (rows < GX_VL)
    gx_storeu_n(g->c + j, acc[0], rows);
  else
    for (int q = 0; q < ng; q++) gx_storeu(g->c + j + q * GX_VL, acc[q]);
}

/* y[j0 .. j0+nt) for B [N, K] (trans_b): GX_GEMV_G groups of VL outputs at a
 * time (then single groups); every VL x VL block of B (VL outputs x VL
 * values of p) is transposed through a small buffer, so that one vector
 * holds b[j .. j+VL][p] and each output gets its fmas for p, p+1, ... in
 * order (§gemm: never split K). The last partial group reads only its real
 * rows of B (padded with zero rows) and stores only its real outputs. */
GX_INLINE void gx_gemv_nt(const hmx_gemm_args *g, const void *b, const float *bias_pad,
                          int64_t j0, int64_t nt, const int wt) {
  int64_t j = j0;
  /* Groups of outputs (independent). */
  for (; j + GX_GEMV_G * GX_VL <= j0 + nt; j += GX_GEMV_G * GX_VL)
    gx_gemv_nt_groups(g, b, bias_pad, j, GX_GEMV_G, GX_VL, wt);
  for (; j + GX_VL <= j0 + nt; j += GX_VL) gx_gemv_nt_groups(g, b, bias_pad, j, 1, GX_VL, wt);
  /* Last outputs (fewer than VL): rows past N read as 0, never stored. */
  if (j < j0 + nt) gx_gemv_nt_groups(g, b, bias_pad, j, 1, (int)(j0 + nt - j), wt);
}

#include "gemm_g16_x86.h"

/* Where B's data is for storage type wt. GGUF blocks come as [N, K] only
 * (src/backend.h): for them the [K, N] paths fold away. */
GX_INLINE const void *gx_b_data(const hmx_gemm_args *g, const int wt) {
  return wt == XW_F32 ? (const void *)g->b : xw_is_quant(wt) ? g->bq : (const void *)g->b16;
}
GX_INLINE int gx_trans_b(const hmx_gemm_args *g, const int wt) {
  return xw_is_quant(wt) || g->trans_b;
}

/* Pack the block B[pc .. pc+kc, j .. j+nb) (j a multiple of NR) into
 * NR-wide panels at dst, from B's storage (wt). Copies only. */
GX_INLINE void gx_pack_b_w(const hmx_gemm_args *g, int64_t pc, int64_t kc, int64_t j, int64_t nb,
                           float *dst, const int wt) {
  const void *b = gx_b_data(g, wt);
  if (xw_is_g16(wt))
    gx_pack_b_g16(b, g->k, g->n, pc, kc, j, nb, dst, wt);
  else if (gx_trans_b(g, wt))
    gx_pack_b_nt(b, g->k, pc, kc, j, nb, dst, wt);
  else
    gx_pack_b_nn(b, g->n, pc, kc, j, nb, dst, wt);
}

/* The tiles of C rows [i, i+mb) x columns [j, j+nb) for one K block of kc
 * (A packed at apack, B at bpack): each NR x MR tile runs the kernel's
 * in-order p loop over this K block, starting per `init` (§gemm). Tiles are
 * independent outputs: any order, any thread. */
static void gx_tiles(const hmx_gemm_args *g, gx_kernel_fn const *kernels, const float *apack,
                     const float *bpack, int64_t i, int64_t mb, int64_t j, int64_t nb, int64_t kc,
                     int init, const float *bias_pad, int a_cold) {
  const int64_t n = g->n;
  /* jr, ir: NR x MR tiles (independent outputs, any order). The A
   * micro-panel (MR x KC) stays in L1 while B's panels stream from L2. */
#if GX_IR_INNER
  for (int64_t jr = 0; jr < nb; jr += GX_NR) {
    const int nc = (int)(nb - jr < GX_NR ? nb - jr : GX_NR);
    for (int64_t ir = 0; ir < mb; ir += GX_MR) {
      const int mr = (int)(mb - ir < GX_MR ? mb - ir : GX_MR);
#else
  for (int64_t ir = 0; ir < mb; ir += GX_MR) {
    const int mr = (int)(mb - ir < GX_MR ? mb - ir : GX_MR);
    for (int64_t jr = 0; jr < nb; jr += GX_NR) {
      const int nc = (int)(nb - jr < GX_NR ? nb - jr : GX_NR);
#endif
      float *c = g->c + (i + ir) * n + j + jr;
#if GX_PF_C
      /* Prefetch the C tile of the next call (the acc it continues
       * from, or where it stores): the kernel's first fma waits on C. */
      {
        const int64_t ni = GX_IR_INNER ? (ir + GX_MR < mb ? ir + GX_MR : ir) : ir;
        const int64_t nj = GX_IR_INNER ? jr : (jr + GX_NR < nb ? jr + GX_NR : jr);
        const int nm = (int)(mb - ni < GX_MR ? mb - ni : GX_MR);
        const float *cn = g->c + (i + ni) * n + j + nj;
        for (int r = 0; r < nm; r++) {
          __builtin_prefetch(cn + r * n, 1, 3);
          __builtin_prefetch(cn + r * n + (nb - nj < GX_NR ? nb - nj : GX_NR) - 1, 1, 3);
        }
      }
#endif
#if GX_PF_A && !GX_IR_INNER
      /* The next A micro-panel (MR x kc floats), a share of its lines per
       * tile of this one's jr loop, where A's block was not packed just now
       * (kept across N blocks or packed by other threads, gx_a_cache_floats:
       * it may come from L3). Where it was, the prefetch measured 0-1.6%
       * slower on the Xeon host (session 54). */
      if (a_cold && ir + GX_MR < mb) {
        const char *na = (const char *)(apack + (ir + GX_MR) * kc);
        const int64_t lines = (GX_MR * kc * (int64_t)sizeof(float) + 63) / 64;
        const int64_t tiles = (nb + GX_NR - 1) / GX_NR, per = (lines + tiles - 1) / tiles;
        const int64_t l0 = jr / GX_NR * per;
        for (int64_t l = l0; l < l0 + per && l < lines; l++) __builtin_prefetch(na + l * 64, 0, 2);
      }
#endif
      kernels[mr - 1](kc, apack + ir * kc, bpack + jr * kc, c, n, init, bias_pad + j + jr, nc);
    }
  }
}

/* How the accumulators of K block pc start (§gemm): bias or +0 for the
 * first block, the acc stored in C by the previous one after it. */
GX_INLINE int gx_init_for(const hmx_gemm_args *g, int64_t pc) {
  return pc > 0 ? GX_INIT_C : (g->bias ? GX_INIT_BIAS : GX_INIT_ZERO);
}

#ifndef GX_A_CACHE_MIB
#define GX_A_CACHE_MIB 32 /* 0: A packed again for every N block, as before session 54 */
#endif

/* How the rows [i0, i0+rows) of A are cut into packed blocks: nk K blocks
 * of kc_max values of p, mblocks row blocks of mc_max rows, each block at
 * its own place of `block` floats (gx_a_floats: its own slack, so blocks
 * may be packed by different threads at once). Block u = pi * mblocks + bi
 * holds rows i0 + bi * mc_max ... and p from pi * kc_max. */
typedef struct gx_a_layout {
  int64_t i0, rows, kc_max, mc_max, nk, mblocks, block;
} gx_a_layout;

static inline gx_a_layout gx_a_layout_of(int64_t i0, int64_t rows, int64_t k, int64_t mc) {
  gx_a_layout l;
  l.i0 = i0, l.rows = rows;
  l.kc_max = k < GX_KC ? k : GX_KC;
  l.mc_max = rows < mc ? rows : mc;
  l.nk = (k + l.kc_max - 1) / l.kc_max;
  l.mblocks = (rows + l.mc_max - 1) / l.mc_max;
  l.block = gx_a_floats(l.mc_max, l.kc_max);
  return l;
}

/* Floats of a buffer that keeps every packed block of A, or 0 where A is
 * better packed again for each N block, one block at a time: with one row
 * block, or above GX_A_CACHE_MIB. Packed once, A's blocks are read from L2 /
 * L3 by every later N block instead of packed again from A: the pack copies
 * as many floats as it reads, so this never moves more bytes. Before
 * session 54 the pack ran once per N block: N / 256 times on avx2 (5.8% of
 * a 512 x 768 x 2048 gemm on Zen 3, perf). Measured in session 54 (four
 * variants in one process, docs/results/session54/): M = 512 +1-5% on the
 * Xeon host (avx512; one thread and two) and +2-8% on Zen 3 (avx2); but M
 * = 64, one row block, 0.87-0.94x on the Xeon at K = 1536 and 2048: there
 * the one block packed again is still hot in L1 / L2 when the tiles read
 * it, while a kept block comes back from the Xeon's slow L3. Copies only;
 * the tiles read the same floats. */
static inline int64_t gx_a_cache_floats(const gx_a_layout *l) {
  const int64_t floats = l->nk * l->mblocks * l->block;
  if (l->mblocks < 2 || floats > (int64_t)GX_A_CACHE_MIB * (1 << 20) / (int64_t)sizeof(float))
    return 0;
  return floats;
}

/* Pack block u of layout l into dst. */
static inline void gx_pack_a_block(const hmx_gemm_args *g, const gx_a_layout *l, int64_t u,
                                   float *dst) {
  const int64_t pc = u / l->mblocks * l->kc_max, ic = u % l->mblocks * l->mc_max;
  const int64_t kc = g->k - pc < l->kc_max ? g->k - pc : l->kc_max;
  const int64_t mb = l->rows - ic < l->mc_max ? l->rows - ic : l->mc_max;
  gx_pack_a(g->a, g->k, l->i0 + ic, mb, pc, kc, dst);
}

/* Floats of a packed B block: kc rows of p, nc columns in whole panels. */
static inline int64_t gx_bpack_floats(int64_t kc, int64_t nc) {
  return kc * ((nc + GX_NR - 1) / GX_NR) * GX_NR;
}

/* A thread's pack buffers for gx_rect, carved by gx_gemm from one block of
 * the kept scratch (src/scratch_cache.h), whose pages stay mapped between
 * calls. Before, each thread allocated and freed its own on every call: an
 * OpenMP worker's came from its own malloc arena as fresh pages every time,
 * 96 page faults a call for its 384 KiB B pack at M = 64, 768 x 768 on two
 * threads, about 0.3 ms on the session-60 VM (2.6-3.3 us a fault) against
 * 0.5 ms for the whole gemm. apack: room for the thread's blocks of A, all
 * of them where it keeps them for its N blocks (gx_a_cache_floats), else
 * one (NULL where A comes packed). */
typedef struct gx_packs {
  float *bpack, *apack;
  int64_t apack_floats; /* apack's size: one block of A, or all of them (a cache) */
} gx_packs;

/* One thread's rectangle of C: rows [i0, i0+mt), columns [j0, j0+nt).
 * a_shared: every block of A's rows [i0, i0+mt) already packed in
 * gx_a_layout_of(i0, mt, k, GX_MC)'s layout (gx_gemm's threads pack them
 * together), or NULL: then this thread packs them, into a cache for all its
 * N blocks where one fits (gx_a_cache_floats), else one block at a time.
 * Returns 0, or -1 when a buffer could not be allocated. */
GX_INLINE int gx_rect_w(const hmx_gemm_args *g, const float *bias_pad,
                        gx_kernel_fn const *kernels, const float *a_shared,
                        const gx_packs *given, int64_t i0, int64_t mt, int64_t j0,
                        int64_t nt, const int wt) {
  const int64_t m = g->m, k = g->k;
  const void *b = gx_b_data(g, wt);
  if (mt <= 0 || nt <= 0) return 0;
  if (m == 1) { /* decode: no packing, B is read once in place */
    if (xw_is_g16(wt))
      gx_gemv_g16(g, b, bias_pad, j0, nt, wt);
    else if (gx_trans_b(g, wt))
      gx_gemv_nt(g, b, bias_pad, j0, nt, wt);
    else
      gx_gemv_nn(g, b, bias_pad, j0, nt, wt);
    return 0;
  }
  const gx_a_layout al = gx_a_layout_of(i0, mt, k, GX_MC);
  const int64_t kc_max = al.kc_max, mc_max = al.mc_max;
  const int64_t nc_max = nt < GX_NC ? nt : GX_NC;
  /* with one N block a cache would be packed once and read once: no gain */
  int64_t a_cached = a_shared || nt <= nc_max ? 0 : gx_a_cache_floats(&al);
  /* The caller's buffers (given) where they are large enough, else this
   * thread's own, freed at the end (own_b, own_a). */
  float *own_b = NULL, *own_a = NULL;
  float *bpack = given ? given->bpack : NULL;
  if (!bpack) bpack = own_b = gx_alloc((size_t)gx_bpack_floats(kc_max, nc_max));
  const int64_t a_given = given && given->apack ? given->apack_floats : 0;
  float *apack = NULL;
  if (a_cached) apack = a_given >= a_cached ? given->apack : (own_a = gx_alloc((size_t)a_cached));
  if (!a_shared && !apack) { /* no cache (or none to be had): one block, packed again */
    a_cached = 0;
    apack = a_given >= al.block ? given->apack : (own_a = gx_alloc((size_t)al.block));
  }
  if (!bpack || (!a_shared && !apack)) {
    free(own_b);
    free(own_a);
    return -1;
  }
  /* jc: N blocks (independent outputs). */
  for (int64_t jc = 0; jc < nt; jc += nc_max) {
    const int64_t nb = nt - jc < nc_max ? nt - jc : nc_max;
    /* pc: K blocks in increasing order (§gemm: the acc of each output is
     * carried from block to block through C, in order; never split). */
    for (int64_t pc = 0, pi = 0; pc < k; pc += kc_max, pi++) {
      const int64_t kc = k - pc < kc_max ? k - pc : kc_max;
      gx_pack_b_w(g, pc, kc, j0 + jc, nb, bpack, wt);
      /* ic: M blocks (independent outputs). */
      for (int64_t ic = 0, bi = 0; ic < mt; ic += mc_max, bi++) {
        const int64_t mb = mt - ic < mc_max ? mt - ic : mc_max, u = pi * al.mblocks + bi;
        const float *ablock;
        if (a_shared) {
          ablock = a_shared + u * al.block;
        } else {
          float *dst = a_cached ? apack + u * al.block : apack;
          if (!a_cached || jc == 0) gx_pack_a_block(g, &al, u, dst);
          ablock = dst;
        }
        gx_tiles(g, kernels, ablock, bpack, i0 + ic, mb, j0 + jc, nb, kc, gx_init_for(g, pc),
                 bias_pad, a_shared || (a_cached && jc > 0));
      }
    }
  }
  free(own_b);
  free(own_a);
  return 0;
}

/* Every storage type of B but f32 (each switch's default case): the
 * switches below instantiate their body once per type, so that the type is
 * a constant inside. */
#define GX_B_TYPES(X) X(XW_BF16) X(XW_F16) X(XW_Q8_0) X(XW_Q4_0) X(XW_Q4_1) X(XW_Q6_K) \
  X(XW_Q4_K) X(XW_Q5_K) X(XW_Q5_0) X(XW_Q5_1) X(XW_Q2_K) X(XW_Q3_K) X(XW_IQ4_NL) X(XW_IQ4_XS) \
  X(XW_G16_Q8_0) X(XW_G16_Q4_0) X(XW_G16_Q4_1) X(XW_G16_F16) X(XW_G16_BF16) X(XW_G16_F32) \
  X(XW_G16_K2) X(XW_G16_K3) X(XW_G16_K4) X(XW_G16_K5) X(XW_G16_K6) X(XW_G16_P5_0) X(XW_G16_P5_1) \
  X(XW_G16_I4NL) X(XW_G16_I4XS)

/* gx_rect_w for B's storage type. */
static int gx_rect(const hmx_gemm_args *g, const float *bias_pad, gx_kernel_fn const *kernels,
                   const float *a_shared, const gx_packs *given, int64_t i0, int64_t mt,
                   int64_t j0, int64_t nt) {
  switch (xw_gemm_type(g->bq, g->qtype, g->blayout, g->wdt)) {
#define GX_CASE(T) \
  case T: return gx_rect_w(g, bias_pad, kernels, a_shared, given, i0, mt, j0, nt, T);
  GX_B_TYPES(GX_CASE)
#undef GX_CASE
  default: return gx_rect_w(g, bias_pad, kernels, a_shared, given, i0, mt, j0, nt, XW_F32);
  }
}

/* gx_pack_b_w for B's storage type. */
static void gx_pack_b(const hmx_gemm_args *g, int64_t pc, int64_t kc, int64_t j, int64_t nb,
                      float *dst) {
  switch (xw_gemm_type(g->bq, g->qtype, g->blayout, g->wdt)) {
#define GX_CASE(T) case T: gx_pack_b_w(g, pc, kc, j, nb, dst, T); break;
  GX_B_TYPES(GX_CASE)
#undef GX_CASE
  default: gx_pack_b_w(g, pc, kc, j, nb, dst, XW_F32); break;
  }
}

#ifndef GX_MU
#define GX_MU (GX_MR * 8) /* rows of A per work unit of the team path */
#endif
#ifndef GX_EVEN_N_SPLIT
#define GX_EVEN_N_SPLIT 1 /* 0: large M always takes the team path (before session 22) */
#endif

/* The team path (threads > 1, M at least 2 * threads units of GX_MU rows:
 * prefill; and column tiles that gx_gemm does not split by thread). The
 * (N block, K block) steps run in order, K blocks in increasing order within
 * an N block. Each step's B block is packed once,
 * into one of two shared buffers, during the step before it: one loop per
 * step hands out, to whichever thread is free (dynamic schedule), first the
 * pieces of the next step's B pack, then this step's blocks of GX_MU rows
 * of C (each thread packing its rows of A, into its own buffer or, since
 * session 54, once into a cache shared by all, and running the tiles). The
 * barrier at the end of each step's loop keeps the K blocks
 * of every output in order (§gemm: the acc goes through C from one block to
 * the next, exactly as on one thread) and a B buffer unchanged until every
 * thread is done with it. Each output has one owner per K block and K is
 * never split: no bit depends on the threads or the schedule. Before, each
 * thread had a fixed rectangle of C with its own B pack (twice the packing
 * where the split was along M), and the rectangles ended apart whenever one
 * vCPU ran slower; with the pack in a loop of its own, its barrier cost
 * 5-7% of two threads. */
typedef struct gx_step {
  int64_t jc, nb, pc, kc;
} gx_step;

static gx_step gx_step_at(const hmx_gemm_args *g, int64_t s, int64_t kc_max, int64_t nc_max) {
  const int64_t nk = (g->k + kc_max - 1) / kc_max;
  gx_step st;
  st.jc = s / nk * nc_max;
  st.pc = s % nk * kc_max;
  st.nb = g->n - st.jc < nc_max ? g->n - st.jc : nc_max;
  st.kc = g->k - st.pc < kc_max ? g->k - st.pc : kc_max;
  return st;
}

/* Piece q of `pieces` of step s's B pack (whole panels) into dst. */
static void gx_pack_b_piece(const hmx_gemm_args *g, int64_t s, int64_t kc_max, int64_t nc_max,
                            int64_t q, int64_t pieces, float *dst) {
  const gx_step st = gx_step_at(g, s, kc_max, nc_max);
  const int64_t npan = (st.nb + GX_NR - 1) / GX_NR;
  const int64_t p0 = npan * q / pieces, p1 = npan * (q + 1) / pieces;
  const int64_t w = (p1 * GX_NR < st.nb ? p1 * GX_NR : st.nb) - p0 * GX_NR;
  if (w > 0) gx_pack_b(g, st.pc, st.kc, st.jc + p0 * GX_NR, w, dst + p0 * GX_NR * st.kc);
}

static hmx_status gx_team(const hmx_gemm_args *g, const float *bias_pad,
                          gx_kernel_fn const *kernels, int threads) {
  const int64_t m = g->m, n = g->n, k = g->k;
  const gx_a_layout al = gx_a_layout_of(0, m, k, GX_MU); /* row blocks: the work units */
  const int64_t kc_max = al.kc_max, mblocks = al.mblocks, a_floats = al.block;
  const int64_t nc_max = n < GX_NC ? n : GX_NC;
  const int64_t npan_max = (nc_max + GX_NR - 1) / GX_NR;
  const int64_t steps = (n + nc_max - 1) / nc_max * al.nk;
  const int64_t b_floats = kc_max * npan_max * GX_NR;
  /* A's blocks packed in the first N block's steps and kept, shared by the
   * threads (gx_a_cache_floats): step s's barrier orders each block's pack
   * before its reads in later N blocks, whichever thread does them. */
  int64_t a_cached = n > nc_max ? gx_a_cache_floats(&al) : 0;
  /* pieces of a B pack per step: a few per thread, whole panels each */
  const int64_t pieces = npan_max < 2 * threads ? npan_max : 2 * threads;
  float *bpacks = gx_alloc((size_t)(2 * b_floats));
  float *apacks = a_cached ? gx_alloc((size_t)a_cached) : NULL;
  if (!apacks) { /* no cache (or none to be had): a block a thread, packed again */
    a_cached = 0;
    apacks = gx_alloc((size_t)(a_floats * threads));
  }
  if (!bpacks || !apacks) {
    free(bpacks);
    free(apacks);
    return HMX_ERR_NO_MEMORY;
  }
  HMX_OMP_PARALLEL(threads) {
    float *apack = a_cached ? NULL : apacks + a_floats * hmx_thread_num(); /* its own block */
    /* s = -1 only packs step 0's B. Every thread runs every s, so every
     * thread reaches each barrier. Step s reads buffer s % 2 and packs step
     * s + 1 into the other one. */
    for (int64_t s = -1; s < steps; s++) {
      const int64_t npieces = s + 1 < steps ? pieces : 0, nblocks = s >= 0 ? mblocks : 0;
      HMX_OMP_FOR_DYNAMIC
      for (int64_t u = 0; u < npieces + nblocks; u++) {
        if (u < npieces) { /* the next step's B */
          gx_pack_b_piece(g, s + 1, kc_max, nc_max, u, npieces, bpacks + (s + 1) % 2 * b_floats);
          continue;
        }
        /* rows [i, i+mb) of step s (independent outputs) */
        const gx_step st = gx_step_at(g, s, kc_max, nc_max);
        const int64_t blk = u - npieces, i = blk * GX_MU, mb = m - i < GX_MU ? m - i : GX_MU;
        const int64_t ablk = st.pc / kc_max * mblocks + blk; /* its block of al */
        float *ablock = a_cached ? apacks + ablk * a_floats : apack;
        if (!a_cached || st.jc == 0) gx_pack_a_block(g, &al, ablk, ablock);
        gx_tiles(g, kernels, ablock, bpacks + s % 2 * b_floats, i, mb, st.jc, st.nb, st.kc,
                 gx_init_for(g, st.pc), bias_pad, a_cached && st.jc > 0);
      }
      /* (barrier) */
    }
  }
  free(bpacks);
  free(apacks);
  return HMX_OK;
}

/* The backend entry point: bias padded to whole panels, then the team path
 * (gx_team) for large M on several threads, else one rectangle of C per
 * thread (whole MR-row or NR-column tiles; each output has one owner). */
static hmx_status gx_gemm(const hmx_gemm_args *g, gx_kernel_fn const *kernels) {
  const int64_t m = g->m, n = g->n, k = g->k;
  if (m <= 0 || n <= 0) return HMX_OK;
  const int64_t npad = (n + GX_NR - 1) / GX_NR * GX_NR;
  float *bias_pad = gx_alloc((size_t)npad);
  if (!bias_pad) return HMX_ERR_NO_MEMORY;
  /* +0 past N (and everywhere without a bias), the bias's bits below N.
   * Not one loop with a condition: gcc 12 vectorized that into masked loads
   * from g->bias, which is NULL in the GEMVs of a model's decode, and on
   * Zen 3 each all-masked load of an unmapped page took a microcode assist:
   * 6% of a SmolLM2 decode step (session 52, perf), 6144 of them for the
   * LM head alone. */
  memset(bias_pad, 0, (size_t)npad * sizeof(float));
  if (g->bias) memcpy(bias_pad, g->bias, (size_t)n * sizeof(float));
  if (k <= 0) {
    /* §gemm with K = 0: every output is its initial value. */
    for (int64_t i = 0; i < m; i++) memcpy(g->c + i * n, bias_pad, (size_t)n * sizeof(float));
    free(bias_pad);
    return HMX_OK;
  }
  const int64_t mtiles = (m + GX_MR - 1) / GX_MR, ntiles = npad / GX_NR;
  /* Split the longer side (in tiles) among threads; about 2^18 flops per
   * thread at least, so small products stay on one thread. */
  int split_n = ntiles >= mtiles || mtiles < 2;
  int64_t work = split_n ? ntiles : mtiles;
  int64_t flops_units = (2 * m * n * k) >> 18;
  if (work > flops_units + 1) work = flops_units + 1;
  const int threads = hmx_thread_count(g->threads, work);
  /* At least 4 column tiles per thread that split evenly (a multiple of the
   * threads, or 8+ per thread: within 1/8): one column range per thread,
   * each with its own B pack and no barrier, even where M is the longer
   * side. With 2 threads at issue 3's M = 512 shapes this measured 6-11%
   * faster than the team path below on the Xeon host and 2-12% on the VM
   * (avx512 and avx2), interleaved in one process (session 22): the team's
   * shared B pack costs a barrier per K block and an uneven last round of
   * row blocks. Every thread reads all of A, packed by all of them together
   * (below). Fewer or uneven tiles
   * (N = 768 over 16 threads; tall, narrow products) keep the team path. */
  const int even_n = GX_EVEN_N_SPLIT && threads > 1 && ntiles >= 4 * threads &&
                     (ntiles % threads == 0 || ntiles >= 8 * threads);
  if (even_n) split_n = 1;
  if (threads > 1 && !even_n && m >= 2 * threads * GX_MU) {
    const hmx_status st = gx_team(g, bias_pad, kernels, threads);
    free(bias_pad);
    return st;
  }
  /* Split along N, every thread's rectangle has every row of A: the threads
   * pack A's blocks together, once, into one buffer that all of them read
   * (before session 54 each thread packed all of A itself). Where no such
   * buffer fits (gx_a_cache_floats) or can be had, each packs its own. */
  const gx_a_layout al = gx_a_layout_of(0, m, k, GX_MC);
  const int64_t shared_floats = split_n && threads > 1 && m > 1 ? gx_a_cache_floats(&al) : 0;
  /* Every thread's pack buffers (gx_packs), each at a 64-byte line, sized
   * for the largest rectangle, after A's shared blocks, all in one block of
   * the kept scratch; none for M = 1 (no packing). Where it cannot be had,
   * A's shared blocks are allocated alone and each thread allocates its own
   * (gx_rect_w). */
  const int64_t tiles = split_n ? ntiles : mtiles;
  const int64_t mt_max = split_n ? m : (tiles + threads - 1) / threads * GX_MR;
  const int64_t nt_max = split_n ? (tiles + threads - 1) / threads * GX_NR : npad;
  const int64_t kc_max = k < GX_KC ? k : GX_KC;
  const int64_t b_floats = (gx_bpack_floats(kc_max, nt_max < GX_NC ? nt_max : GX_NC) + 15) & ~15;
  const gx_a_layout al_max = gx_a_layout_of(0, mt_max < m ? mt_max : m, k, GX_MC);
  const int64_t a_cache = nt_max > GX_NC ? gx_a_cache_floats(&al_max) : 0;
  const int64_t a_need = a_cache > al_max.block ? a_cache : al_max.block;
  const int64_t a_floats = shared_floats ? 0 : (a_need + 15) & ~15;
  const int64_t shared_pad = (shared_floats + 15) & ~15;
  const int64_t block_floats = shared_pad + (b_floats + a_floats) * threads;
  float *block = m > 1 ? hmx_scratch_take((size_t)block_floats * sizeof(float)) : NULL;
  float *a_shared = block ? (shared_floats ? block : NULL)
                          : (shared_floats ? gx_alloc((size_t)shared_floats) : NULL);
  float *packs = block ? block + shared_pad : NULL;
  int failed = 0;
  HMX_OMP_PARALLEL(threads) {
    if (a_shared) {
      HMX_OMP_FOR_DYNAMIC /* (ends in a barrier: every block packed before any is read) */
      for (int64_t u = 0; u < al.nk * al.mblocks; u++)
        gx_pack_a_block(g, &al, u, a_shared + u * al.block);
    }
    HMX_OMP_FOR_STATIC_NOWAIT /* (the last loop: one barrier, the region's end) */
    for (int t = 0; t < threads; t++) {
      /* Thread t owns tiles [t*T/threads, (t+1)*T/threads) of the split side. */
      int64_t lo = tiles * t / threads, hi = tiles * (t + 1) / threads;
      float *mine = packs ? packs + (b_floats + a_floats) * t : NULL;
      const gx_packs given = {mine, mine && a_floats ? mine + b_floats : NULL, a_floats};
      int rc;
      if (split_n) {
        int64_t j0 = lo * GX_NR, j1 = hi * GX_NR < n ? hi * GX_NR : n;
        rc = gx_rect(g, bias_pad, kernels, a_shared, &given, 0, m, j0, j1 - j0);
      } else {
        int64_t i0 = lo * GX_MR, i1 = hi * GX_MR < m ? hi * GX_MR : m;
        rc = gx_rect(g, bias_pad, kernels, NULL, &given, i0, i1 - i0, 0, n);
      }
      if (rc) {
#if defined(_OPENMP)
#pragma omp atomic write
#endif
        failed = 1;
      }
    }
  }
  if (block) hmx_scratch_give(block);
  else free(a_shared);
  free(bias_pad);
  return failed ? HMX_ERR_NO_MEMORY : HMX_OK;
}

#endif
