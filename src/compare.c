/* Tensor comparison (see compare.h). */
#include "compare.h"
#include "internal.h"

#include <math.h>
#include <string.h>

/* Value of a contiguous element as double, and its bits widened to int64 in
 * an order-preserving ("lexicographic") encoding for ulp distances. */
static double value_at(const hmx_tensor *t, int64_t i) {
  const unsigned char *p = (const unsigned char *)t->data + i * (int64_t)hmx_dtype_size(t->dtype);
  uint16_t h;
  float f;
  int32_t i32;
  int64_t i64;
  switch (t->dtype) {
  case HMX_F32: memcpy(&f, p, 4); return f;
  case HMX_BF16: memcpy(&h, p, 2); return hmx_bf16_to_f32(h);
  case HMX_F16: memcpy(&h, p, 2); return hmx_f16_to_f32(h);
  case HMX_I32: memcpy(&i32, p, 4); return i32;
  case HMX_I64: memcpy(&i64, p, 8); return (double)i64;
  default: return 0;
  }
}

static int64_t ordered_bits(const hmx_tensor *t, int64_t i) {
  const unsigned char *p = (const unsigned char *)t->data + i * (int64_t)hmx_dtype_size(t->dtype);
  int64_t v, sign_bit;
  if (t->dtype == HMX_F32) {
    uint32_t u;
    memcpy(&u, p, 4);
    v = u & 0x7fffffff;
    sign_bit = u >> 31;
  } else {
    uint16_t u;
    memcpy(&u, p, 2);
    v = u & 0x7fff;
    sign_bit = u >> 15;
  }
  return sign_bit ? -v : v;
}

static int is_float_dtype(hmx_dtype d) { return d == HMX_F32 || d == HMX_BF16 || d == HMX_F16; }

hmx_status hmx_compare(const hmx_tensor *a, const hmx_tensor *b, hmx_diff_stats *st) {
  memset(st, 0, sizeof *st);
  st->first_index = -1;
  if (!a || !b) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "compare: NULL tensor");
  if (a->dtype != b->dtype)
    return hmx_fail(HMX_ERR_DTYPE, "compare: dtypes differ (%s vs %s)", hmx_dtype_name(a->dtype),
                    hmx_dtype_name(b->dtype));
  if (a->ndim != b->ndim)
    return hmx_fail(HMX_ERR_SHAPE, "compare: ranks differ (%d vs %d)", a->ndim, b->ndim);
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i])
      return hmx_fail(HMX_ERR_SHAPE, "compare: dim %d differs (%lld vs %lld)", i,
                      (long long)a->shape[i], (long long)b->shape[i]);
  int64_t n = hmx_tensor_numel(a);
  size_t es = hmx_dtype_size(a->dtype);
  st->count = n;
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *pa = (const unsigned char *)a->data + i * (int64_t)es;
    const unsigned char *pb = (const unsigned char *)b->data + i * (int64_t)es;
    double va = value_at(a, i), vb = value_at(b, i);
    int float_type = is_float_dtype(a->dtype);
    if (memcmp(pa, pb, es) == 0 || (float_type && isnan(va) && isnan(vb))) continue;
    st->differing++;
    if (st->first_index < 0) st->first_index = i;
    if (!isfinite(va) || !isfinite(vb)) {
      st->nonfinite_mismatch++;
      continue;
    }
    double d = fabs(va - vb);
    if (d > st->max_abs) st->max_abs = d;
    if (vb != 0 && d / fabs(vb) > st->max_rel) st->max_rel = d / fabs(vb);
    if (float_type) {
      double u = fabs((double)(ordered_bits(a, i) - ordered_bits(b, i)));
      if (u > st->max_ulp) st->max_ulp = u;
    }
  }
  return HMX_OK;
}
