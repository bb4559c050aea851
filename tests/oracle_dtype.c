/* Oracle test of the bf16 / f16 conversions and of 16-bit I/O in every op
 * (docs/ORACLE.md §dtypes).
 *
 * The conversions are checked against a value-based double implementation
 * written here: round x to p significant bits with a minimum exponent (IEEE
 * round-to-nearest-even via rint in the default rounding mode), overflow to
 * infinity past the largest finite value, NaN stays NaN (sign kept, quieted).
 * Ops: the op with 16-bit tensors equals the f32 op on the widened inputs,
 * with the f32 result narrowed by that same independent rounding. */
#include "oracle.h"

#include <fenv.h>

/* ------------------------------------------------------------------ formats */

typedef struct fmt16 {
  const char *name;
  hmx_dtype dtype;
  int mant_bits; /* stored mantissa bits: bf16 7, f16 10 */
  int exp_bits;  /* bf16 8, f16 5 */
} fmt16;

static const fmt16 BF16 = {"bf16", HMX_BF16, 7, 8};
static const fmt16 F16 = {"f16", HMX_F16, 10, 5};

static int bias_of(const fmt16 *f) { return (1 << (f->exp_bits - 1)) - 1; }

/* Value of a 16-bit code (NaN for NaN codes), by the format's definition. */
static double decode16(const fmt16 *f, uint16_t h) {
  int sign = h >> 15;
  int e = (h >> f->mant_bits) & ((1 << f->exp_bits) - 1);
  int m = h & ((1 << f->mant_bits) - 1);
  double v;
  if (e == (1 << f->exp_bits) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - bias_of(f) - f->mant_bits);
  else v = ldexp(1.0 + ldexp((double)m, -f->mant_bits), e - bias_of(f));
  return sign ? -v : v;
}

/* Code of a value exactly representable in the format (or +-inf, +-0). */
static uint16_t encode16(const fmt16 *f, double v) {
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  double a = fabs(v);
  int emax_field = (1 << f->exp_bits) - 1;
  if (isinf(a)) return (uint16_t)(sign | (emax_field << f->mant_bits));
  if (a == 0) return sign;
  int emin = 1 - bias_of(f);
  int e;
  frexp(a, &e); /* a = fr * 2^e, fr in [0.5, 1) => exponent e - 1 */
  e -= 1;
  if (e < emin) /* subnormal: a = m * 2^(emin - mant_bits) */
    return (uint16_t)(sign | (uint16_t)ldexp(a, f->mant_bits - emin));
  uint16_t m = (uint16_t)(ldexp(a, f->mant_bits - e) - ldexp(1.0, f->mant_bits));
  return (uint16_t)(sign | ((e + bias_of(f)) << f->mant_bits) | m);
}

/* Round a finite double to the format, nearest-even (rint in FE_TONEAREST). */
static double round16(const fmt16 *f, double v) {
  if (v == 0 || isnan(v) || isinf(v)) return v;
  int emin = 1 - bias_of(f), e;
  frexp(fabs(v), &e);
  e -= 1;
  if (e < emin) e = emin;
  double q = ldexp(1.0, e - f->mant_bits); /* spacing at v */
  double r = rint(v / q) * q;              /* v / q exact: a power-of-two scaling */
  double maxf = ldexp(2.0 - ldexp(1.0, -f->mant_bits), bias_of(f));
  if (fabs(r) > maxf) r = copysign(INFINITY, v);
  return r;
}

/* Expected code of float x: NaN handled by the caller. */
static uint16_t expect16(const fmt16 *f, float x) { return encode16(f, round16(f, (double)x)); }

static uint16_t to16(const fmt16 *f, float x) {
  return f->dtype == HMX_BF16 ? hmx_f32_to_bf16(x) : hmx_f32_to_f16(x);
}
static float from16(const fmt16 *f, uint16_t h) {
  return f->dtype == HMX_BF16 ? hmx_bf16_to_f32(h) : hmx_f16_to_f32(h);
}

/* ------------------------------------------------------------------ conversions */

typedef struct conv_count {
  long tested, wrong;
} conv_count;

static void conv_one(const fmt16 *f, float x, conv_count *c) {
  uint16_t got = to16(f, x);
  c->tested++;
  int emax_field = (1 << f->exp_bits) - 1;
  uint16_t quiet = (uint16_t)(1u << (f->mant_bits - 1));
  int ok;
  if (isnan(x)) {
    int is_nan = ((got >> f->mant_bits) & emax_field) == emax_field && (got & ((1u << f->mant_bits) - 1));
    ok = is_nan && ((got >> 15) == (orc_f32_bits(x) >> 31)) && (got & quiet);
  } else {
    ok = got == expect16(f, x);
  }
  if (!ok) {
    c->wrong++;
    if (c->wrong <= 5)
      fprintf(stderr, "  f32 -> %s: %a (0x%08x) gave 0x%04x, expected 0x%04x\n", f->name, (double)x,
              (unsigned)orc_f32_bits(x), got, isnan(x) ? 0xffff : expect16(f, x));
  }
}

static void check_conversions(const fmt16 *f, orc_rng *rng) {
  /* Widening: every code against the format's definition. */
  long dec_wrong = 0, roundtrip_wrong = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double want = decode16(f, (uint16_t)h);
    float got = from16(f, (uint16_t)h);
    int ok = isnan(want) ? (isnan(got) && !!signbit(got) == !!signbit(want))
                         : (orc_f32_bits(got) == orc_f32_bits((float)want));
    if (!ok && ++dec_wrong <= 5)
      fprintf(stderr, "  %s -> f32: 0x%04x gave %a, expected %a\n", f->name, h, (double)got, want);
    if (!isnan(want) && to16(f, got) != h && ++roundtrip_wrong <= 5)
      fprintf(stderr, "  %s round trip: 0x%04x -> %a -> 0x%04x\n", f->name, h, (double)got, to16(f, got));
  }
  CHECK(dec_wrong == 0, "%s -> f32: %ld of 65536 codes wrong", f->name, dec_wrong);
  CHECK(roundtrip_wrong == 0, "%s: %ld codes do not round-trip through f32", f->name, roundtrip_wrong);

  conv_count c = {0, 0};
  /* Every code's value, the midpoint to the next code (a tie), and the floats
   * just either side of the midpoint; the largest finite value's midpoint
   * with the next power of two ties to infinity (its mantissa is odd). */
  for (uint32_t h = 0; h < 65536; h++) {
    double v = decode16(f, (uint16_t)h);
    if (isnan(v) || isinf(v)) continue;
    conv_one(f, (float)v, &c);
    double next = decode16(f, (uint16_t)(h + 1));
    if ((h & 0x7fffu) == 0x7fffu) continue; /* wraps to the other sign */
    if (isnan(next)) continue;
    if (isinf(next)) next = copysign(ldexp(1.0, bias_of(f) + 1), v); /* the overflow threshold's twin */
    double mid = 0.5 * (v + next); /* exact in float: one bit more than the format */
    float fm = (float)mid;
    CHECK((double)fm == mid, "%s: midpoint %a not a float", f->name, mid);
    conv_one(f, fm, &c);
    conv_one(f, nextafterf(fm, INFINITY), &c);
    conv_one(f, nextafterf(fm, -INFINITY), &c);
  }
  /* Float subnormals and the smallest normals, every bit pattern below 2^-119
   * with a stride, plus random patterns over the whole range. */
  for (uint32_t b = 0; b < 0x04000000u; b += 61) {
    conv_one(f, orc_bits_f32(b), &c);
    conv_one(f, orc_bits_f32(b | 0x80000000u), &c);
  }
  for (int i = 0; i < 3000000; i++) conv_one(f, orc_bits_f32((uint32_t)orc_next(rng)), &c);
  /* Specials. */
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, 3.4028235e38f, -3.4028235e38f,
                            65504.0f, 65519.996f, 65520.0f, -65520.0f, 0x1p-24f, 0x1p-25f,
                            0x1.000002p-25f, 0x1.8p-24f, 0x1p-14f, 0x1.ffcp-15f, 0x1p-126f, 0x1p-149f,
                            0x1p-133f, 0x1.8p-133f, 0x1.4p-133f, 0x1p-134f};
  for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) conv_one(f, specials[i], &c);
  const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu,
                           0x7fffffffu, 0xffffffffu, 0x7f812345u, 0x7fc0ffffu, 0x7f80ffffu};
  for (size_t i = 0; i < sizeof nans / sizeof *nans; i++) conv_one(f, orc_bits_f32(nans[i]), &c);
  CHECK(c.wrong == 0, "f32 -> %s: %ld of %ld values differ from the double RNE oracle", f->name,
        c.wrong, c.tested);
  printf("  f32 -> %-4s: %ld values (all codes, all ties, subnormals, overflow, NaN): %ld wrong;"
         " %s -> f32: all 65536 codes, %ld wrong\n", f->name, c.tested, c.wrong, f->name, dec_wrong);
}

/* ------------------------------------------------------------------ ops with 16-bit I/O
 * Each op runs twice: once with every float tensor in the 16-bit format, once
 * in f32 on the widened inputs; the f32 result narrowed by round16 must equal
 * the 16-bit result bit for bit. */

typedef struct io_tensor {
  int64_t n;
  float *wide;   /* widened values, f32 */
  uint16_t *raw; /* 16-bit codes */
} io_tensor;

static io_tensor io_make(const fmt16 *f, int64_t n, double amp, orc_rng *rng) {
  io_tensor t;
  t.n = n;
  t.wide = orc_alloc((size_t)n, sizeof *t.wide);
  t.raw = orc_alloc((size_t)n, sizeof *t.raw);
  for (int64_t i = 0; i < n; i++) {
    t.raw[i] = encode16(f, round16(f, (double)orc_sym(rng, amp)));
    t.wide[i] = (float)decode16(f, t.raw[i]);
  }
  return t;
}

static io_tensor io_out(int64_t n) {
  io_tensor t;
  t.n = n;
  t.wide = orc_alloc((size_t)n, sizeof *t.wide);
  t.raw = orc_alloc((size_t)n, sizeof *t.raw);
  return t;
}

static void io_free(io_tensor *t) {
  free(t->wide);
  free(t->raw);
}

static hmx_tensor view(const fmt16 *f, io_tensor *t, int wide, int ndim, const int64_t *shape) {
  return hmx_tensor_make(wide ? (void *)t->wide : (void *)t->raw, wide ? HMX_F32 : f->dtype, ndim,
                         shape);
}

static int same_narrowed(const fmt16 *f, const io_tensor *out, const char *op) {
  long wrong = 0;
  for (int64_t i = 0; i < out->n; i++) {
    float w = out->wide[i];
    uint16_t g = out->raw[i];
    int ok = isnan(w) ? isnan(decode16(f, g)) : g == encode16(f, round16(f, (double)w));
    if (!ok && ++wrong <= 3)
      fprintf(stderr, "  %s %s: element %lld: 0x%04x, f32 result %a\n", op, f->name, (long long)i,
              g, (double)w);
  }
  CHECK(wrong == 0, "%s with %s I/O: %ld of %lld outputs differ from the narrowed f32 op", op,
        f->name, wrong, (long long)out->n);
  return wrong == 0;
}

static void check_ops_io(const fmt16 *f, orc_rng *rng) {
  hmx_context ctx = orc_ctx();
  int all = 1;
  /* fwht and hadamard_mix */
  {
    int64_t sh[2] = {3, 96}, s1[1] = {96};
    io_tensor x = io_make(f, 288, 2.0, rng), al = io_make(f, 96, 1.5, rng), be = io_make(f, 96, 0.5, rng);
    io_tensor y = io_out(288);
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tx = view(f, &x, wide, 2, sh), ty = view(f, &y, wide, 2, sh);
      ORC_OK(hmx_fwht(&ctx, &tx, &ty, 0.25f));
    }
    all &= same_narrowed(f, &y, "fwht");
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tx = view(f, &x, wide, 2, sh), ty = view(f, &y, wide, 2, sh);
      hmx_tensor ta = view(f, &al, wide, 1, s1), tb = view(f, &be, wide, 1, s1);
      ORC_OK(hmx_hadamard_mix(&ctx, &tx, &ta, &tb, &ty));
    }
    all &= same_narrowed(f, &y, "hadamard_mix");
    io_free(&x);
    io_free(&al);
    io_free(&be);
    io_free(&y);
  }
  /* gemm, both layouts, with bias */
  for (int tb_ = 0; tb_ < 2; tb_++) {
    int64_t M = 5, K = 33, N = 7;
    int64_t sa[2] = {M, K}, sb[2] = {tb_ ? N : K, tb_ ? K : N}, sc[2] = {M, N}, sbias[1] = {N};
    io_tensor a = io_make(f, M * K, 1.0, rng), b = io_make(f, K * N, 1.0, rng);
    io_tensor bias = io_make(f, N, 1.0, rng), c = io_out(M * N);
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor ta = view(f, &a, wide, 2, sa), tb = view(f, &b, wide, 2, sb);
      hmx_tensor tbias = view(f, &bias, wide, 1, sbias), tc = view(f, &c, wide, 2, sc);
      ORC_OK(hmx_gemm(&ctx, &ta, &tb, tb_, &tbias, &tc));
    }
    all &= same_narrowed(f, &c, tb_ ? "gemm trans_b" : "gemm");
    io_free(&a);
    io_free(&b);
    io_free(&bias);
    io_free(&c);
  }
  /* rmsnorm, layernorm */
  {
    int64_t sh[2] = {4, 50}, s1[1] = {50};
    io_tensor x = io_make(f, 200, 3.0, rng), w = io_make(f, 50, 2.0, rng), b = io_make(f, 50, 1.0, rng);
    io_tensor y = io_out(200);
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tx = view(f, &x, wide, 2, sh), ty = view(f, &y, wide, 2, sh), tw = view(f, &w, wide, 1, s1);
      ORC_OK(hmx_rmsnorm(&ctx, &tx, &tw, 1e-5f, &ty));
    }
    all &= same_narrowed(f, &y, "rmsnorm");
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tx = view(f, &x, wide, 2, sh), ty = view(f, &y, wide, 2, sh);
      hmx_tensor tw = view(f, &w, wide, 1, s1), tb = view(f, &b, wide, 1, s1);
      ORC_OK(hmx_layernorm(&ctx, &tx, &tw, &tb, 1e-5f, &ty));
    }
    all &= same_narrowed(f, &y, "layernorm");
    io_free(&x);
    io_free(&w);
    io_free(&b);
    io_free(&y);
  }
  /* rope */
  {
    int64_t sh[3] = {6, 2, 16};
    int32_t pos[6] = {0, 1, 17, 999, 4096, 77777};
    hmx_tensor tp = hmx_tensor_1d(pos, HMX_I32, 6);
    io_tensor x = io_make(f, 192, 2.0, rng), y = io_out(192);
    for (int style = 0; style < 2; style++) {
      for (int wide = 1; wide >= 0; wide--) {
        hmx_tensor tx = view(f, &x, wide, 3, sh), ty = view(f, &y, wide, 3, sh);
        ORC_OK(hmx_rope(&ctx, &tx, &tp, 10000.0f, 12, (hmx_rope_style)style, &ty));
      }
      all &= same_narrowed(f, &y, "rope");
    }
    io_free(&x);
    io_free(&y);
  }
  /* attention, causal GQA */
  {
    int64_t sq[4] = {2, 7, 4, 32}, skv[4] = {2, 7, 2, 32};
    io_tensor q = io_make(f, 2 * 7 * 4 * 32, 1.5, rng), k = io_make(f, 2 * 7 * 2 * 32, 1.5, rng);
    io_tensor v = io_make(f, 2 * 7 * 2 * 32, 1.0, rng), o = io_out(2 * 7 * 4 * 32);
    hmx_attention_params p = {1, -1, 0.0f};
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tq = view(f, &q, wide, 4, sq), tk = view(f, &k, wide, 4, skv);
      hmx_tensor tv = view(f, &v, wide, 4, skv), to = view(f, &o, wide, 4, sq);
      ORC_OK(hmx_attention(&ctx, &tq, &tk, &tv, &p, &to));
    }
    all &= same_narrowed(f, &o, "attention");
    io_free(&q);
    io_free(&k);
    io_free(&v);
    io_free(&o);
  }
  /* swiglu */
  {
    int64_t sx[2] = {3, 16}, s1[2] = {16, 40}, s2[2] = {40, 9}, sy[2] = {3, 9};
    io_tensor x = io_make(f, 48, 1.0, rng), w1 = io_make(f, 640, 0.5, rng), w3 = io_make(f, 640, 0.5, rng);
    io_tensor w2 = io_make(f, 360, 0.3, rng), y = io_out(27);
    for (int wide = 1; wide >= 0; wide--) {
      hmx_tensor tx = view(f, &x, wide, 2, sx), t1 = view(f, &w1, wide, 2, s1);
      hmx_tensor t3 = view(f, &w3, wide, 2, s1), t2 = view(f, &w2, wide, 2, s2), ty = view(f, &y, wide, 2, sy);
      ORC_OK(hmx_swiglu(&ctx, &tx, &t1, &t3, &t2, 7, &ty));
    }
    all &= same_narrowed(f, &y, "swiglu");
    io_free(&x);
    io_free(&w1);
    io_free(&w3);
    io_free(&w2);
    io_free(&y);
  }
  printf("  ops with %s tensors == f32 op on widened inputs, narrowed (fwht, hadamard_mix, gemm x2,"
         " rmsnorm, layernorm, rope x2, attention, swiglu): %s\n", f->name, all ? "bit-equal" : "DIFF");
}

/* Mixed dtypes in one call: bf16 activations, f32 weights, f16 output. */
static void check_mixed(orc_rng *rng) {
  hmx_context ctx = orc_ctx();
  int64_t M = 4, K = 20, N = 6;
  io_tensor a = io_make(&BF16, M * K, 1.0, rng);
  float *b = orc_alloc((size_t)(K * N), sizeof *b), *c32 = orc_alloc((size_t)(M * N), sizeof *c32);
  uint16_t *c16 = orc_alloc((size_t)(M * N), sizeof *c16);
  for (int64_t i = 0; i < K * N; i++) b[i] = orc_sym(rng, 1.0);
  hmx_tensor ta16 = hmx_tensor_2d(a.raw, HMX_BF16, M, K), ta32 = hmx_tensor_2d(a.wide, HMX_F32, M, K);
  hmx_tensor tb = hmx_tensor_2d(b, HMX_F32, K, N);
  hmx_tensor tc16 = hmx_tensor_2d(c16, HMX_F16, M, N), tc32 = hmx_tensor_2d(c32, HMX_F32, M, N);
  ORC_OK(hmx_gemm(&ctx, &ta16, &tb, 0, NULL, &tc16));
  ORC_OK(hmx_gemm(&ctx, &ta32, &tb, 0, NULL, &tc32));
  int ok = 1;
  for (int64_t i = 0; i < M * N; i++) ok &= c16[i] == encode16(&F16, round16(&F16, c32[i]));
  CHECK(ok, "gemm bf16 x f32 -> f16 differs from the f32 op narrowed");
  printf("  mixed gemm (bf16 a, f32 b, f16 c) == f32 op narrowed: %s\n", ok ? "bit-equal" : "DIFF");
  io_free(&a);
  free(b);
  free(c32);
  free(c16);
}

int main(void) {
  orc_rng rng = orc_seed(5);
  CHECK(fegetround() == FE_TONEAREST, "the oracle's rint needs round-to-nearest");
  printf("conversions vs an independent double round-to-nearest-even:\n");
  check_conversions(&BF16, &rng);
  check_conversions(&F16, &rng);
  printf("16-bit I/O:\n");
  check_ops_io(&BF16, &rng);
  check_ops_io(&F16, &rng);
  check_mixed(&rng);
  return check_finish("test_oracle_dtype");
}
