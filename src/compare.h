/* Comparing two float tensors: the exact-tier bit rule and error statistics. */
#ifndef HMX_COMPARE_H
#define HMX_COMPARE_H

#include "hadamix.h"

typedef struct hmx_diff_stats {
  int64_t count;        /* elements compared */
  int64_t differing;    /* elements whose bits differ (NaN vs NaN counts as equal) */
  int64_t first_index;  /* first differing element (row-major), -1 if none */
  double max_abs;       /* over elements where both are finite */
  double max_rel;       /* |a - b| / |b|, b the reference; finite, b != 0 */
  double max_ulp;       /* distance in units in the last place of the reference dtype */
  int64_t nonfinite_mismatch; /* one NaN/inf and the other not, or infs of different sign */
} hmx_diff_stats;

/* The exact-tier rule (docs/NUMERICS.md §C): identical bits, except that any
 * NaN equals any NaN (IEEE 754 leaves NaN payloads and signs unspecified).
 * a and b must have the same dtype and shape (else HMX_ERR_SHAPE/DTYPE). */
hmx_status hmx_compare(const hmx_tensor *a, const hmx_tensor *ref, hmx_diff_stats *st);

#endif
