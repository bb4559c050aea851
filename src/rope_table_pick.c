/* Which code builds a RoPE angle table: the backend's SIMD mirror of
 * hmx_rope_table where it has one (hmx_backend.rope_table), else the scalar
 * definition. Both give the same bits (docs/NUMERICS.md §E, "RoPE angles"). */
#include "backend.h"
#include "canon.h"
#include "rope_tabled.h"

hmx_status hmx_rope_table_on(const hmx_backend *be, int threads, const int32_t *pos, int64_t t,
                             int rot_dim, float base, float *cos_tab, float *sin_tab) {
  if (be && be->rope_table) return be->rope_table(pos, t, rot_dim, base, cos_tab, sin_tab, threads);
  return hmx_rope_table(pos, t, rot_dim, base, cos_tab, sin_tab);
}
