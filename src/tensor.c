/* Tensor descriptors and the exact dtype conversions (docs/NUMERICS.md §dtypes). */
#include "internal.h"

#include <string.h>

hmx_tensor hmx_tensor_make(void *data, hmx_dtype dtype, int ndim, const int64_t *shape) {
  hmx_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.ndim = ndim;
  if (ndim >= 0 && ndim <= HMX_MAX_DIMS && shape)
    for (int i = 0; i < ndim; i++) t.shape[i] = shape[i];
  return t;
}

hmx_tensor hmx_tensor_1d(void *data, hmx_dtype dtype, int64_t n0) {
  int64_t s[1] = {n0};
  return hmx_tensor_make(data, dtype, 1, s);
}
hmx_tensor hmx_tensor_2d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1) {
  int64_t s[2] = {n0, n1};
  return hmx_tensor_make(data, dtype, 2, s);
}
hmx_tensor hmx_tensor_3d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1, int64_t n2) {
  int64_t s[3] = {n0, n1, n2};
  return hmx_tensor_make(data, dtype, 3, s);
}
hmx_tensor hmx_tensor_4d(void *data, hmx_dtype dtype, int64_t n0, int64_t n1, int64_t n2,
                         int64_t n3) {
  int64_t s[4] = {n0, n1, n2, n3};
  return hmx_tensor_make(data, dtype, 4, s);
}

int64_t hmx_tensor_numel(const hmx_tensor *t) {
  if (!t || t->ndim < 0 || t->ndim > HMX_MAX_DIMS) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) {
    int64_t d = t->shape[i];
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

const char *hmx_dtype_name(hmx_dtype d) {
  switch (d) {
  case HMX_F32: return "f32";
  case HMX_BF16: return "bf16";
  case HMX_F16: return "f16";
  case HMX_I32: return "i32";
  case HMX_I64: return "i64";
  default: return "?";
  }
}

size_t hmx_dtype_size(hmx_dtype d) {
  switch (d) {
  case HMX_F32: case HMX_I32: return 4;
  case HMX_BF16: case HMX_F16: return 2;
  case HMX_I64: return 8;
  default: return 0;
  }
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float hmx_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* Round to nearest even on the 16 dropped bits; NaN stays NaN (quieted). */
uint16_t hmx_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  uint32_t round = 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)((u + round) >> 16);
}

float hmx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return bits_f32(sign | 0x7f800000u | (man << 13)); /* inf, NaN */
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    /* subnormal: man * 2^-24, exact in f32 */
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* Round to nearest even; overflow to infinity; subnormals kept; NaN quieted. */
uint16_t hmx_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x1ffu));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: rounds to inf */
  if (a < 0x38800000u) {
    /* result is subnormal or zero in f16: value / 2^-24, rounded to an integer */
    if (a < 0x33000000u) return sign; /* < 2^-25: rounds to 0 (2^-25 ties to even 0) */
    uint32_t e = a >> 23;                  /* biased f32 exponent, 102..112 */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;             /* bits to drop so that 1 unit = 2^-24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = a + 0x0fffu + ((a >> 13) & 1u); /* round the 13 dropped bits */
  r -= 0x38000000u;                           /* rebias exponent 127 -> 15 */
  return (uint16_t)(sign | (r >> 13));
}
