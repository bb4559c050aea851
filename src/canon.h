/* Canonical scalar math shared by the reference and every backend.
 * Each function is a fixed sequence of IEEE operations documented in
 * docs/NUMERICS.md; backends mirror them op-for-op (or call them). */
#ifndef HMX_CANON_H
#define HMX_CANON_H

#include "hadamix.h"

/* Lane-strided sum of docs/NUMERICS.md §R: 16 partial sums (element i into
 * lane i mod 16, added in index order), then the fixed pairwise tree
 * l[j] += l[j+8], l[j] += l[j+4], l[j] += l[j+2], l[0] + l[1]. */
#define HMX_REDUCE_LANES 16
float hmx_lane_sum(const float *x, int64_t n);
/* The same tree over x[i]*x[i] accumulated with fmaf (sum of squares). */
float hmx_lane_sumsq(const float *x, int64_t n);
/* The same tree over (x[i]-c)^2 accumulated with fmaf: d = x[i]-c, fmaf(d,d,l). */
float hmx_lane_sumsq_centered(const float *x, int64_t n, float c);
/* Finish a 16-lane accumulator with the fixed tree. */
float hmx_lane_tree(float lanes[HMX_REDUCE_LANES]);

/* 1/sqrt(n) rounded once from double, the FWHT normalizer. */
float hmx_inv_sqrt_n(int64_t n);

/* RoPE angle table: for t < T, i < rot_dim/2,
 *   cos_tab[t*half + i] = cos(pos[t] * base^(-2i/rot_dim)), likewise sin,
 * computed in double with hadamix's own exp/log/sin/cos (no libm), then
 * rounded once to float. Identical on every platform (docs/NUMERICS.md §rope). */
hmx_status hmx_rope_table(const int32_t *pos, int64_t t, int rot_dim, float base,
                          float *cos_tab, float *sin_tab);
/* Its argument checks alone (the messages above; nothing written), for the
 * SIMD mirrors of the table (hmx_backend.rope_table), which must refuse
 * exactly what it refuses. */
hmx_status hmx_rope_table_check(const int32_t *pos, int64_t t, int rot_dim, float base,
                                const float *cos_tab, const float *sin_tab);
/* The table's inverse frequency of pair i: canon_exp(-(2i / rot_dim) * log_base),
 * log_base = hmx_canon_log_f64(base) (docs/NUMERICS.md §E, RoPE angles). */
double hmx_rope_inv_freq(int i, int rot_dim, double log_base);
/* The scalar pieces, exposed for tests. */
double hmx_canon_exp_f64(double x);
double hmx_canon_log_f64(double x);
void hmx_canon_sincos_f64(double x, double *s, double *c);

/* The m x m Hadamard factors of the m * 2^k sizes (m in 12, 20, 28, 40). */
int hmx_hadamard_factor_supported(int m);
/* Entry (i, j): +1 or -1; 0 for an unsupported m or out-of-range index. */
int hmx_hadamard_factor_entry(int m, int i, int j);

#endif
