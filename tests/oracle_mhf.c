/* Oracle test of mhffn and flashmhf (docs/ORACLE.md §mhffn, §flashmhf): the
 * reference against the unblocked float64 formula
 *   q = x W_in;  o_i = sum_e w_e (silu(q_i K_ie) * (q_i U_ie)) V_ie,
 *   w = sigmoid(q_i G_i) / sum sigmoid(q_i G_i);  y = concat(o) W_out
 * (mhffn: o_i = (silu(q_i W1_i) * (q_i W3_i)) W2_i), under a running error
 * bound that follows the reference's order step by step (struct ev: the exact
 * value and a bound on how far the reference's float can be from it). Then:
 * bit identity of flashmhf across block sizes, flashmhf with E = 1 equal to
 * mhffn bit for bit, the FlashMHF paper's two head configurations, and a
 * planted wrong output that the bound must catch. */
#include "oracle.h"

/* exact value v and bound e on |reference - v| */
typedef struct ev {
  double v, e;
} ev;

/* hmx_expf within 1 ulp (its own contract, tests/test_exp.c), then one add
 * and one division: relative error of sigmoid and silu at an exact argument */
static double e_fn(void) { return (1 + ORC_U) / ((1 - 0x1p-23) * (1 - ORC_U)) - 1; }

static double sig(double z) { return 1.0 / (1.0 + exp(-z)); }

/* silu of an argument known within a.e: |silu'| <= 1.0998 */
static ev ev_silu(ev a) {
  double s = a.v * sig(a.v), d = 1.1 * a.e;
  ev r = {s, d + e_fn() * (fabs(s) + d) + ORC_TINY};
  return r;
}
/* sigmoid: |sigmoid'| <= 1/4 */
static ev ev_sigmoid(ev a) {
  double s = sig(a.v), d = 0.25 * a.e;
  ev r = {s, d + e_fn() * (fabs(s) + d) + ORC_TINY};
  return r;
}
/* one rounded product */
static ev ev_mul(ev a, ev b) {
  double e = a.e * fabs(b.v) + fabs(a.v) * b.e + a.e * b.e;
  ev r = {a.v * b.v, e + ORC_U * (fabs(a.v) + a.e) * (fabs(b.v) + b.e) + ORC_TINY};
  return r;
}
/* one rounded division, den.v - den.e > 0 */
static ev ev_div(ev a, ev den) {
  double w = a.v / den.v, d = (a.e + fabs(w) * den.e) / (den.v - den.e);
  ev r = {w, d + ORC_U * (fabs(w) + d)};
  return r;
}

/* fmaf chain from +0: out[j] = sum_p x[p] W[p*ld + j*cs] over p < n, with
 * x known within x.e; W exact floats. */
static ev ev_dot(const ev *x, const float *w, int64_t n, int64_t stride) {
  double v = 0, ex = 0, mag = 0;
  for (int64_t p = 0; p < n; p++) {
    double wp = w[p * stride];
    v += x[p].v * wp;
    ex += x[p].e * fabs(wp);
    mag += (fabs(x[p].v) + x[p].e) * fabs(wp);
  }
  ev r = {v, ex + orc_gamma((double)n) * mag + orc_gamma_d((double)n) * mag + n * ORC_TINY};
  return r;
}

typedef struct cfg {
  int64_t t, d, heads, dh, e, de, d_out; /* mhffn: f = de, e unused */
} cfg;

static float *rnd(orc_rng *r, int64_t n, double a) {
  float *p = orc_alloc((size_t)n, sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = orc_sym(r, a);
  return p;
}

/* q = x W_in as evs (x exact) */
static void ev_proj(const float *x, const float *w_in, int64_t d, int64_t hd, ev *q, ev *tmp) {
  for (int64_t p = 0; p < d; p++) tmp[p] = (ev){x[p], 0};
  for (int64_t c = 0; c < hd; c++) q[c] = ev_dot(tmp, w_in + c, d, hd);
}

/* flashmhf (flash = 1) or mhffn (flash = 0, E = 1 and no gate) */
static void check_case(orc_stat *st, cfg c, int flash, int family, orc_rng *rng, int plant) {
  int64_t hd = c.heads * c.dh, E = flash ? c.e : 1;
  float *x = orc_alloc((size_t)(c.t * c.d), sizeof *x);
  orc_fill(rng, x, c.t * c.d, family);
  /* wide range and small integers, scaled so that not every gate of a head
   * underflows (sigmoid(z) = +0 for z < -88.7: then S = 0 and the weights are
   * NaN by definition, NUMERICS §flashmhf, outside this bound's domain) */
  if (family == 1 || family == 2)
    for (int64_t i = 0; i < c.t * c.d; i++) x[i] = (float)(x[i] * (family == 1 ? 0x1p-20 : 0x1p-6));
  float *w_in = rnd(rng, c.d * hd, 1.0 / sqrt((double)c.d));
  float *gate = rnd(rng, c.heads * c.dh * E, 2.0 / sqrt((double)c.dh));
  float *wk = rnd(rng, c.heads * E * c.dh * c.de, 1.0 / sqrt((double)c.dh));
  float *wu = rnd(rng, c.heads * E * c.dh * c.de, 1.0 / sqrt((double)c.dh));
  float *wv = rnd(rng, c.heads * E * c.de * c.dh, 1.0 / sqrt((double)c.de));
  float *w_out = rnd(rng, hd * c.d_out, 1.0 / sqrt((double)hd));
  float *y = orc_alloc((size_t)(c.t * c.d_out), sizeof *y);
  hmx_context ctx = orc_ctx();
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, c.t, c.d), tin = hmx_tensor_2d(w_in, HMX_F32, c.d, hd);
  hmx_tensor tout = hmx_tensor_2d(w_out, HMX_F32, hd, c.d_out);
  hmx_tensor ty = hmx_tensor_2d(y, HMX_F32, c.t, c.d_out);
  if (flash) {
    hmx_tensor tg = hmx_tensor_3d(gate, HMX_F32, c.heads, c.dh, E);
    hmx_tensor tk = hmx_tensor_4d(wk, HMX_F32, c.heads, E, c.dh, c.de);
    hmx_tensor tu = hmx_tensor_4d(wu, HMX_F32, c.heads, E, c.dh, c.de);
    hmx_tensor tv = hmx_tensor_4d(wv, HMX_F32, c.heads, E, c.de, c.dh);
    ORC_OK(hmx_flashmhf(&ctx, &tx, &tin, &tg, &tk, &tu, &tv, &tout, c.de, &ty));
    /* block invariance, bit for bit */
    float *yb = orc_alloc((size_t)(c.t * c.d_out), sizeof *yb);
    hmx_tensor tyb = hmx_tensor_2d(yb, HMX_F32, c.t, c.d_out);
    const int64_t blocks[] = {1, 3, 0, c.de + 5, (c.de + 1) / 2};
    for (int b = 0; b < 5; b++) {
      ORC_OK(hmx_flashmhf(&ctx, &tx, &tin, &tg, &tk, &tu, &tv, &tout, blocks[b], &tyb));
      CHECK(memcmp(y, yb, (size_t)(c.t * c.d_out) * sizeof *y) == 0,
            "flashmhf H=%lld E=%lld de=%lld: block %lld differs from block de", (long long)c.heads,
            (long long)E, (long long)c.de, (long long)blocks[b]);
    }
    if (E == 1) { /* w = g / g = 1: mhffn with the same weights, bit for bit */
      hmx_tensor t1 = hmx_tensor_3d(wk, HMX_F32, c.heads, c.dh, c.de);
      hmx_tensor t3 = hmx_tensor_3d(wu, HMX_F32, c.heads, c.dh, c.de);
      hmx_tensor t2 = hmx_tensor_3d(wv, HMX_F32, c.heads, c.de, c.dh);
      ORC_OK(hmx_mhffn(&ctx, &tx, &tin, &t1, &t3, &t2, &tout, &tyb));
      CHECK(memcmp(y, yb, (size_t)(c.t * c.d_out) * sizeof *y) == 0,
            "flashmhf with E = 1 differs from mhffn");
    }
    free(yb);
  } else {
    hmx_tensor t1 = hmx_tensor_3d(wk, HMX_F32, c.heads, c.dh, c.de);
    hmx_tensor t3 = hmx_tensor_3d(wu, HMX_F32, c.heads, c.dh, c.de);
    hmx_tensor t2 = hmx_tensor_3d(wv, HMX_F32, c.heads, c.de, c.dh);
    ORC_OK(hmx_mhffn(&ctx, &tx, &tin, &t1, &t3, &t2, &tout, &ty));
  }
  ev *tmp = orc_alloc((size_t)(c.d > hd ? c.d : hd), sizeof *tmp);
  ev *q = orc_alloc((size_t)hd, sizeof *q), *o = orc_alloc((size_t)hd, sizeof *o);
  ev *h = orc_alloc((size_t)(E * c.de), sizeof *h), *w = orc_alloc((size_t)E, sizeof *w);
  for (int64_t t = 0; t < c.t; t++) {
    ev_proj(x + t * c.d, w_in, c.d, hd, q, tmp);
    for (int64_t i = 0; i < c.heads; i++) {
      const ev *qi = q + i * c.dh;
      if (flash) { /* gate: sigmoid, sequential sum, one division each */
        double sv = 0, se = 0, smag = 0;
        for (int64_t e = 0; e < E; e++) {
          w[e] = ev_sigmoid(ev_dot(qi, gate + i * c.dh * E + e, c.dh, E));
          sv += w[e].v;
          se += w[e].e;
          smag += fabs(w[e].v) + w[e].e;
        }
        ev S = {sv, se + orc_gamma((double)E) * smag};
        for (int64_t e = 0; e < E; e++) w[e] = ev_div(w[e], S);
      } else {
        w[0] = (ev){1.0, 0.0};
      }
      for (int64_t e = 0; e < E; e++)
        for (int64_t u = 0; u < c.de; u++) {
          const float *k = wk + (i * E + e) * c.dh * c.de + u, *uu = wu + (i * E + e) * c.dh * c.de + u;
          ev g = ev_mul(ev_silu(ev_dot(qi, k, c.dh, c.de)), ev_dot(qi, uu, c.dh, c.de));
          h[e * c.de + u] = flash ? ev_mul(g, w[e]) : g;
        }
      /* one fmaf chain over (e, u) into each output of the head */
      for (int64_t j = 0; j < c.dh; j++) {
        double v = 0, ex = 0, mag = 0;
        for (int64_t e = 0; e < E; e++)
          for (int64_t u = 0; u < c.de; u++) {
            double wvj = wv[((i * E + e) * c.de + u) * c.dh + j];
            const ev *hh = &h[e * c.de + u];
            v += hh->v * wvj;
            ex += hh->e * fabs(wvj);
            mag += (fabs(hh->v) + hh->e) * fabs(wvj);
          }
        double n = (double)(E * c.de);
        o[i * c.dh + j] = (ev){v, ex + (orc_gamma(n) + orc_gamma_d(n)) * mag + n * ORC_TINY};
      }
    }
    for (int64_t j = 0; j < c.d_out; j++) {
      ev r = ev_dot(o, w_out + j, hd, c.d_out);
      float got = y[t * c.d_out + j];
      if (plant && t == 0 && j == 0) got = (float)(got + 2 * r.e + 1e-30);
      orc_stat_add(st, got, r.v, r.e);
    }
  }
  free(tmp); free(q); free(o); free(h); free(w);
  free(x); free(w_in); free(gate); free(wk); free(wu); free(wv); free(w_out); free(y);
}

int main(void) {
  orc_rng rng = orc_seed(11);
  printf("mhffn and flashmhf vs the unblocked float64 formula (running error bound):\n");
  static const cfg shapes[] = {{3, 24, 2, 8, 3, 10, 17},  {2, 48, 3, 16, 4, 24, 40},
                               {1, 1, 1, 1, 1, 1, 1},      {2, 32, 2, 16, 7, 12, 32},
                               {4, 20, 4, 5, 1, 9, 11},    {2, 64, 1, 128, 8, 32, 64}};
  orc_stat sm, sf;
  orc_stat_init(&sm, "mhffn, 6 shapes x 3 input families");
  orc_stat_init(&sf, "flashmhf, 6 shapes x 3 input families");
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int fam = 0; fam < 3; fam++) {
      check_case(&sm, shapes[s], 0, fam, &rng, 0);
      check_case(&sf, shapes[s], 1, fam, &rng, 0);
    }
  orc_stat_report(&sm);
  orc_stat_report(&sf);
  printf("  flashmhf bit-identical across blocks 1, 3, 0, de+5, de/2, and equal to mhffn when "
         "E = 1: checked\n");

  /* the FlashMHF paper's head configurations (2 tokens) */
  orc_stat sp;
  orc_stat_init(&sp, "flashmhf, paper configs d=768 h=6 E=8 de=256; d=1024 h=8 E=7 de=384");
  check_case(&sp, (cfg){2, 768, 6, 128, 8, 256, 768}, 1, 0, &rng, 0);
  check_case(&sp, (cfg){2, 1024, 8, 128, 7, 384, 1024}, 1, 0, &rng, 0);
  orc_stat_report(&sp);

  orc_stat bad;
  orc_stat_init(&bad, "planted wrong output (must be caught)");
  fprintf(stderr, "  (the next line is the planted error being caught, as intended)\n");
  check_case(&bad, shapes[1], 1, 0, &rng, 1);
  printf("  planted wrong output: %ld of %ld values over the bound (expected 1)\n", bad.over,
         bad.count);
  CHECK(bad.over == 1, "the planted wrong result was not caught");
  return check_finish("test_oracle_mhf");
}
