/* Reference FWHT and hadamard_mix (docs/NUMERICS.md §fwht, §hadamard_mix).
 *
 * n = m * p with p = 2^k and m in {1, 12, 20, 28, 40}; element index
 * c * p + j (c < m, j < p). H_n = H_m (x) H_p:
 *   1. butterflies over j inside each of the m blocks, stride h = 1, 2, 4 ..
 *      p/2 in that order: (a, b) -> (a + b, a - b);
 *   2. for each j, the m-point transform across blocks, one output at a time,
 *      summing over c in index order: acc = +-u_0, then acc = acc +- u_c;
 *   3. one multiply by `scale`.
 */
#include "ref.h"
#include "canon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hmx_fwht_split(int64_t n, int m, int *m_out, int64_t *pow2) {
  static const int automatic[] = {1, 12, 20, 28, 40};
  int single[1] = {m};
  const int *factors = m ? single : automatic;
  size_t count = m ? 1 : sizeof automatic / sizeof automatic[0];
  if (m && m != 1 && !hmx_hadamard_factor_supported(m)) return 0;
  for (size_t f = 0; f < count; f++) {
    if (n < 1 || n % factors[f] != 0) continue;
    int64_t p = n / factors[f];
    int64_t limit = factors[f] == 1 ? HMX_FWHT_MAX_POW2 : HMX_FWHT_MAX_POW2_FACTOR;
    if ((p & (p - 1)) == 0 && p <= limit) {
      *m_out = factors[f];
      *pow2 = p;
      return 1;
    }
  }
  return 0;
}

static void butterflies(float *v, int64_t p) {
  for (int64_t h = 1; h < p; h *= 2)
    for (int64_t i = 0; i < p; i += 2 * h)
      for (int64_t j = i; j < i + h; j++) {
        float a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
}

/* out[r] = sum_c H_m[r][c] u[c] for the m values u[c] = v[c * p + j]. */
static void factor_transform(float *v, int m, int64_t p, float *u) {
  for (int64_t j = 0; j < p; j++) {
    for (int c = 0; c < m; c++) u[c] = v[c * p + j];
    for (int r = 0; r < m; r++) {
      float acc = hmx_hadamard_factor_entry(m, r, 0) > 0 ? u[0] : -u[0];
      for (int c = 1; c < m; c++)
        acc = hmx_hadamard_factor_entry(m, r, c) > 0 ? acc + u[c] : acc - u[c];
      v[r * p + j] = acc;
    }
  }
}

hmx_status hmx_ref_fwht(const hmx_fwht_args *a) {
  int m;
  int64_t p;
  if (!hmx_fwht_split(a->n, a->m, &m, &p)) return HMX_ERR_UNSUPPORTED;
  float u[40];
  for (int64_t b = 0; b < a->batch; b++) {
    const float *x = a->x + b * a->n;
    float *y = a->y + b * a->n;
    if (y != x) memcpy(y, x, (size_t)a->n * sizeof *y);
    for (int c = 0; c < m; c++) butterflies(y + c * p, p);
    if (m > 1) factor_transform(y, m, p, u);
    for (int64_t i = 0; i < a->n; i++) y[i] = y[i] * a->scale;
  }
  return HMX_OK;
}

/* y = fmaf(fwht(x, 1/sqrt(n)), alpha, beta): the scaled transform rounded,
 * then one fused multiply-add per element. */
hmx_status hmx_ref_hadamard_mix(const hmx_hadamard_mix_args *a) {
  hmx_fwht_args f = {a->x, a->y, a->batch, a->n, a->m, hmx_inv_sqrt_n(a->n), 1};
  hmx_status s = hmx_ref_fwht(&f);
  if (s != HMX_OK) return s;
  for (int64_t b = 0; b < a->batch; b++) {
    float *y = a->y + b * a->n;
    for (int64_t i = 0; i < a->n; i++) y[i] = fmaf(y[i], a->alpha[i], a->beta[i]);
  }
  return HMX_OK;
}
