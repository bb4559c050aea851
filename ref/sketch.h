/* The pieces of the reference sketched attentions (docs/NUMERICS.md §sketch):
 * key selection for one (batch, kv head) and attention over a key list.
 * Keys are rows k + j*ld, j < n, of d floats. */
#ifndef HMX_REF_SKETCH_H
#define HMX_REF_SKETCH_H

#include "backend.h"

/* The kk keys with the largest leverage scores
 * tau_j = k_j (K^T K + lambda I)^-1 k_j^T, in binary64 (Cholesky solve).
 * idx receives them in increasing index order. */
hmx_status hmx_ref_select_leverage(const float *k, int64_t ld, int64_t n, int64_t d,
                                   double lambda, int64_t kk, int32_t *idx);
/* The kk keys with the largest l1 Lewis weights after `iters` fixed-point
 * iterations w <- sqrt(w * tau(W^-1/2 K)) from w = 1 (binary64). */
hmx_status hmx_ref_select_lewis(const float *k, int64_t ld, int64_t n, int64_t d, double lambda,
                                int iters, int64_t kk, int32_t *idx);
/* Priority sampling: the kk keys with the smallest rank h_j / |k_j|^2,
 * h_j in (0, 1] from the counter RNG (seed, stream, j). */
hmx_status hmx_ref_select_priority(const float *k, int64_t ld, int64_t n, int64_t d,
                                   uint64_t seed, uint64_t stream, int64_t kk, int32_t *idx);

/* o[0..d) = attention of q over the keys idx[0..n) (or 0..n-1 when idx is
 * NULL), in list order, exactly as the attention op (NUMERICS §attention).
 * e is scratch for n floats. */
void hmx_ref_attend(const float *q, const float *k, const float *v, int64_t ld,
                    const int32_t *idx, int64_t n, int64_t d, float scale, float *e, float *o);

#endif
