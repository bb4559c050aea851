/* Reference rotary embedding (docs/NUMERICS.md §rope). The angle table comes
 * from hmx_rope_table (canonical, libm-free); each pair (x0, x1) becomes
 *   y0 = fmaf(x0, c, -(x1 * s)),   y1 = fmaf(x0, s, x1 * c). */
#include "ref.h"

#include <math.h>
#include <string.h>

hmx_status hmx_ref_rope(const hmx_rope_args *a) {
  int64_t half = a->rot_dim / 2;
  for (int64_t t = 0; t < a->t; t++)
    for (int64_t h = 0; h < a->h; h++) {
      const float *x = a->x + (t * a->h + h) * a->d;
      float *y = a->y + (t * a->h + h) * a->d;
      for (int64_t i = 0; i < half; i++) {
        int64_t i0 = a->style == HMX_ROPE_HALF ? i : 2 * i;
        int64_t i1 = a->style == HMX_ROPE_HALF ? i + half : 2 * i + 1;
        float c = a->cos_tab[t * half + i], s = a->sin_tab[t * half + i];
        float x0 = x[i0], x1 = x[i1];
        float y0 = fmaf(x0, c, -(x1 * s));
        float y1 = fmaf(x0, s, x1 * c);
        y[i0] = y0;
        y[i1] = y1;
      }
      for (int64_t i = a->rot_dim; i < a->d; i++) y[i] = x[i];
    }
  return HMX_OK;
}
