/* Oracle test of the sketched attentions (docs/ORACLE.md §sketch): each
 * method's key set is recomputed here independently (leverage scores and
 * Lewis weights by Gauss-Jordan inversion in long double, priority ranks from
 * SplitMix64 written from docs/VECTORS.md), the reference's set must equal it
 * (differences only at near-ties, which are counted), and its output must
 * match exact float64 attention with an explicit mask over that set, under
 * the attention bound of docs/ORACLE.md §attention. Also bit for bit: the
 * output equals hmx_attention on the gathered keys, k = N equals full
 * attention, and a few dominant keys are always kept. linformer is checked
 * against exact float64 attention over E K, F V. A wrong key set must fail. */
#include "oracle.h"

typedef enum { M_LEV, M_LEWIS, M_PRIO } method;
static const char *const mname[] = {"levattention", "lewis", "priority"};

/* ------------------------------------------------------------------ exact attention + bound
 * One query against n keys (rows kr[j], vr[j] of D doubles, exact values) with
 * optional absolute errors ek, ev of the key/value entries the reference
 * used (linformer's projections). Adds the D outputs to st. */
static void attn_check(orc_stat *st, const float *qv, double **kr, double **vr, double **ek,
                       double **evv, int64_t n, int64_t D, const float *got) {
  double sigma = 1.0 / sqrt((double)D);
  double *s = orc_alloc((size_t)n, sizeof *s), *w = orc_alloc((size_t)n, sizeof *w);
  double *dl = orc_alloc((size_t)n, sizeof *dl);
  double m = -INFINITY, maxd = 0, vmax = 0;
  for (int64_t j = 0; j < n; j++) {
    double dot = 0, mag = 0, ex = 0;
    for (int64_t c = 0; c < D; c++) {
      dot += qv[c] * kr[j][c];
      mag += fabs(qv[c] * kr[j][c]);
      if (ek) ex += fabs((double)qv[c]) * ek[j][c];
      if (fabs(vr[j][c]) > vmax) vmax = fabs(vr[j][c]);
    }
    s[j] = sigma * dot;
    dl[j] = orc_gamma((double)D + 2) * sigma * (mag + ex) + sigma * ex + orc_gamma_d(D + 2) * sigma * mag;
    if (s[j] > m) m = s[j];
    if (dl[j] > maxd) maxd = dl[j];
  }
  double S = 0, ES = 0;
  double L = ceil((double)n / 16) + 4;
  for (int64_t j = 0; j < n; j++) {
    w[j] = exp(s[j] - m);
    S += w[j];
  }
  double *eta = orc_alloc((size_t)n, sizeof *eta);
  for (int64_t j = 0; j < n; j++) {
    eta[j] = exp(dl[j] + ORC_U * (fabs(s[j] - m) + 2 * maxd)) * (1 + 0x1p-23) - 1;
    ES += w[j] * ((1 + eta[j]) * (1 + orc_gamma(L)) - 1);
  }
  ES += (double)n * ORC_TINY;
  for (int64_t c = 0; c < D; c++) {
    double N = 0, EN = 0;
    for (int64_t j = 0; j < n; j++) {
      N += w[j] * vr[j][c];
      EN += w[j] * fabs(vr[j][c]) * ((1 + eta[j]) * (1 + orc_gamma((double)n)) - 1);
      if (evv) EN += w[j] * evv[j][c] * (1 + eta[j]) * (1 + orc_gamma((double)n));
    }
    EN += (double)n * ORC_TINY * vmax;
    double o = N / S;
    double bound = (EN + fabs(o) * ES) / (S - ES) * (1 + ORC_U) + ORC_U * fabs(o);
    orc_stat_add(st, got[c], o, bound);
  }
  free(s); free(w); free(dl); free(eta);
}

/* ------------------------------------------------------------------ independent scores */

/* inverse of the d x d matrix a by Gauss-Jordan with partial pivoting */
static void invert(long double *a, long double *inv, int64_t d) {
  for (int64_t i = 0; i < d; i++)
    for (int64_t j = 0; j < d; j++) inv[i * d + j] = i == j;
  for (int64_t c = 0; c < d; c++) {
    int64_t p = c;
    for (int64_t r = c + 1; r < d; r++)
      if (fabsl(a[r * d + c]) > fabsl(a[p * d + c])) p = r;
    for (int64_t j = 0; j < d; j++) {
      long double t = a[c * d + j]; a[c * d + j] = a[p * d + j]; a[p * d + j] = t;
      t = inv[c * d + j]; inv[c * d + j] = inv[p * d + j]; inv[p * d + j] = t;
    }
    long double piv = a[c * d + c];
    for (int64_t j = 0; j < d; j++) { a[c * d + j] /= piv; inv[c * d + j] /= piv; }
    for (int64_t r = 0; r < d; r++) {
      if (r == c) continue;
      long double f = a[r * d + c];
      for (int64_t j = 0; j < d; j++) { a[r * d + j] -= f * a[c * d + j]; inv[r * d + j] -= f * inv[c * d + j]; }
    }
  }
}

/* tau_j = y_j (Y^T Y + lambda I)^-1 y_j^T for the n rows y of d entries */
static void leverage_ld(const long double *y, int64_t n, int64_t d, double lambda, long double *tau) {
  long double *g = orc_alloc((size_t)(d * d), sizeof *g), *gi = orc_alloc((size_t)(d * d), sizeof *gi);
  for (int64_t a = 0; a < d; a++)
    for (int64_t c = 0; c < d; c++) {
      long double s = a == c ? (long double)lambda : 0;
      for (int64_t j = 0; j < n; j++) s += y[j * d + a] * y[j * d + c];
      g[a * d + c] = s;
    }
  invert(g, gi, d);
  for (int64_t j = 0; j < n; j++) {
    long double t = 0;
    for (int64_t a = 0; a < d; a++)
      for (int64_t c = 0; c < d; c++) t += y[j * d + a] * gi[a * d + c] * y[j * d + c];
    tau[j] = t;
  }
  free(g); free(gi);
}

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint64_t draw(uint64_t seed, uint64_t stream, uint64_t i) {
  const uint64_t G = 0x9E3779B97F4A7C15ull;
  return mix64(mix64(seed + (stream + 1) * G) + (i + 1) * G);
}

/* score (larger is kept) of every key of one (batch, kv head) */
static void scores(method mt, const float *k, int64_t ld, int64_t n, int64_t d, double lambda,
                   int iters, uint64_t seed, uint64_t stream, long double *sc) {
  long double *y = orc_alloc((size_t)(n * d), sizeof *y);
  if (mt == M_PRIO) {
    for (int64_t j = 0; j < n; j++) {
      long double ss = 0;
      for (int64_t a = 0; a < d; a++) ss += (long double)k[j * ld + a] * k[j * ld + a];
      long double h = (long double)((draw(seed, stream, (uint64_t)j) >> 40) + 1) / 16777216.0L;
      sc[j] = -(h / ss);
    }
  } else if (mt == M_LEV) {
    for (int64_t j = 0; j < n; j++)
      for (int64_t a = 0; a < d; a++) y[j * d + a] = k[j * ld + a];
    leverage_ld(y, n, d, lambda, sc);
  } else {
    long double *w = orc_alloc((size_t)n, sizeof *w), *t = orc_alloc((size_t)n, sizeof *t);
    for (int64_t j = 0; j < n; j++) w[j] = 1;
    for (int it = 0; it < iters; it++) {
      for (int64_t j = 0; j < n; j++)
        for (int64_t a = 0; a < d; a++) y[j * d + a] = w[j] > 0 ? k[j * ld + a] / sqrtl(w[j]) : 0;
      leverage_ld(y, n, d, lambda, t);
      for (int64_t j = 0; j < n; j++) w[j] = sqrtl(w[j] * t[j]);
    }
    for (int64_t j = 0; j < n; j++) sc[j] = w[j];
    free(w); free(t);
  }
  free(y);
}

/* ------------------------------------------------------------------ one case */

typedef struct sk_case {
  int64_t b, s, n, hq, hkv, d, k;
  int dominant; /* plant this many keys with 30x the norm */
} sk_case;

static long near_ties;

static void check_case(orc_stat *st, method mt, sk_case c, orc_rng *rng, int plant) {
  int64_t ld = c.hkv * c.d, nq = c.b * c.s * c.hq * c.d, nk = c.b * c.n * ld;
  float *q = orc_alloc((size_t)nq, sizeof *q), *k = orc_alloc((size_t)nk, sizeof *k);
  float *v = orc_alloc((size_t)nk, sizeof *v), *o = orc_alloc((size_t)nq, sizeof *o);
  float *o2 = orc_alloc((size_t)nq, sizeof *o2);
  int32_t *idx = orc_alloc((size_t)(c.b * c.hkv * c.k), sizeof *idx);
  orc_fill(rng, q, nq, 0);
  orc_fill(rng, k, nk, 0);
  orc_fill(rng, v, nk, 0);
  int64_t *dom = orc_alloc((size_t)(c.dominant ? c.dominant : 1), sizeof *dom);
  for (int i = 0; i < c.dominant; i++) {
    dom[i] = (int64_t)(i * 7 + 3) % c.n;
    for (int64_t b = 0; b < c.b; b++)
      for (int64_t g = 0; g < c.hkv; g++)
        for (int64_t a = 0; a < c.d; a++) k[(b * c.n + dom[i]) * ld + g * c.d + a] *= 30.0f;
  }
  hmx_sketch_params p = {c.k, 0.0f, 1e-3f, 4, 12345};
  hmx_context ctx = orc_ctx();
  hmx_tensor tq = hmx_tensor_4d(q, HMX_F32, c.b, c.s, c.hq, c.d);
  hmx_tensor tk = hmx_tensor_4d(k, HMX_F32, c.b, c.n, c.hkv, c.d);
  hmx_tensor tv = hmx_tensor_4d(v, HMX_F32, c.b, c.n, c.hkv, c.d);
  hmx_tensor to = hmx_tensor_4d(o, HMX_F32, c.b, c.s, c.hq, c.d);
  hmx_tensor ti = hmx_tensor_3d(idx, HMX_I32, c.b, c.hkv, c.k);
  if (mt == M_LEV) ORC_OK(hmx_levattention(&ctx, &tq, &tk, &tv, &p, &to, &ti));
  else if (mt == M_LEWIS) ORC_OK(hmx_lewis(&ctx, &tq, &tk, &tv, &p, &to, &ti));
  else ORC_OK(hmx_priority(&ctx, &tq, &tk, &tv, &p, &to, &ti));
  if (plant) idx[0] = idx[0] == 0 ? (int32_t)c.n - 1 : 0; /* a wrong key set */

  long double *sc = orc_alloc((size_t)c.n, sizeof *sc);
  int64_t *order = orc_alloc((size_t)c.n, sizeof *order);
  double **kr = orc_alloc((size_t)c.k, sizeof *kr), **vr = orc_alloc((size_t)c.k, sizeof *vr);
  for (int64_t j = 0; j < c.k; j++) {
    kr[j] = orc_alloc((size_t)c.d, sizeof **kr);
    vr[j] = orc_alloc((size_t)c.d, sizeof **vr);
  }
  float *gk = orc_alloc((size_t)(c.k * c.d), sizeof *gk), *gv = orc_alloc((size_t)(c.k * c.d), sizeof *gv);
  int group = (int)(c.hq / c.hkv);
  for (int64_t b = 0; b < c.b; b++)
    for (int64_t g = 0; g < c.hkv; g++) {
      const float *kb = k + b * c.n * ld + g * c.d, *vb = v + b * c.n * ld + g * c.d;
      const int32_t *ix = idx + (b * c.hkv + g) * c.k;
      /* the independent selection: sort by score, ties to the lower index */
      scores(mt, kb, ld, c.n, c.d, 1e-3, 4, 12345, (uint64_t)(b * c.hkv + g), sc);
      for (int64_t j = 0; j < c.n; j++) order[j] = j;
      for (int64_t i = 1; i < c.n; i++) /* insertion sort: stable, so ties keep index order */
        for (int64_t j = i; j > 0 && sc[order[j]] > sc[order[j - 1]]; j--) {
          int64_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
      long double boundary = sc[order[c.k - 1]], top = fabsl(sc[order[0]]);
      int strictly_increasing = 1;
      for (int64_t j = 0; j < c.k; j++) {
        if (j && ix[j] <= ix[j - 1]) strictly_increasing = 0;
        int in_exact = 0;
        for (int64_t r = 0; r < c.k; r++) in_exact |= order[r] == ix[j];
        if (!in_exact) { /* allowed only at a near-tie with the boundary */
          long double gap = fabsl(sc[ix[j]] - boundary);
          if (!plant) CHECK(gap <= 1e-9L * top, "%s: key %d kept but its score is %.3Le below the "
                            "boundary (not a near-tie)", mname[mt], ix[j], (long double)gap);
          near_ties += gap <= 1e-9L * top;
        }
      }
      CHECK(strictly_increasing, "%s: idx not strictly increasing", mname[mt]);
      for (int i = 0; i < c.dominant && c.k >= c.dominant && !plant; i++) {
        int kept = 0;
        for (int64_t j = 0; j < c.k; j++) kept |= ix[j] == dom[i];
        CHECK(kept, "%s: dominant key %lld not kept", mname[mt], (long long)dom[i]);
      }
      /* exact attention with the explicit mask = the reference's set */
      for (int64_t j = 0; j < c.k; j++)
        for (int64_t a = 0; a < c.d; a++) {
          kr[j][a] = kb[ix[j] * ld + a];
          vr[j][a] = vb[ix[j] * ld + a];
          gk[j * c.d + a] = kb[ix[j] * ld + a];
          gv[j * c.d + a] = vb[ix[j] * ld + a];
        }
      for (int64_t h = g * group; h < (g + 1) * group; h++)
        for (int64_t i = 0; i < c.s; i++) {
          int64_t off = ((b * c.s + i) * c.hq + h) * c.d;
          attn_check(st, q + off, kr, vr, NULL, NULL, c.k, c.d, o + off);
          /* bit for bit: the attention op on the gathered keys */
          if (!plant) {
            hmx_tensor q1 = hmx_tensor_4d(q + off, HMX_F32, 1, 1, 1, c.d);
            hmx_tensor k1 = hmx_tensor_4d(gk, HMX_F32, 1, c.k, 1, c.d);
            hmx_tensor v1 = hmx_tensor_4d(gv, HMX_F32, 1, c.k, 1, c.d);
            hmx_tensor o1 = hmx_tensor_4d(o2 + off, HMX_F32, 1, 1, 1, c.d);
            hmx_attention_params ap = {0, -1, 0.0f};
            ORC_OK(hmx_attention(&ctx, &q1, &k1, &v1, &ap, &o1));
            CHECK(memcmp(o + off, o2 + off, (size_t)c.d * sizeof *o) == 0,
                  "%s: output differs from attention over the gathered keys", mname[mt]);
          }
        }
    }
  /* keeping every key is full attention, bit for bit */
  if (!plant && c.k == c.n) {
    hmx_attention_params ap = {0, -1, 0.0f};
    hmx_tensor to2 = hmx_tensor_4d(o2, HMX_F32, c.b, c.s, c.hq, c.d);
    ORC_OK(hmx_attention(&ctx, &tq, &tk, &tv, &ap, &to2));
    CHECK(memcmp(o, o2, (size_t)nq * sizeof *o) == 0, "%s with k = N differs from attention",
          mname[mt]);
  }
  for (int64_t j = 0; j < c.k; j++) { free(kr[j]); free(vr[j]); }
  free(kr); free(vr); free(gk); free(gv); free(sc); free(order); free(dom);
  free(q); free(k); free(v); free(o); free(o2); free(idx);
}

/* linformer: exact attention over K' = E K, V' = F V (double), with the
 * reference's projection errors gamma_N sum_j |E_rj k_jc| as input errors */
static void check_linformer(orc_stat *st, sk_case c, int64_t kp, orc_rng *rng) {
  int64_t ld = c.hkv * c.d, nq = c.b * c.s * c.hq * c.d, nk = c.b * c.n * ld;
  float *q = orc_alloc((size_t)nq, sizeof *q), *k = orc_alloc((size_t)nk, sizeof *k);
  float *v = orc_alloc((size_t)nk, sizeof *v), *o = orc_alloc((size_t)nq, sizeof *o);
  float *e = orc_alloc((size_t)(kp * c.n), sizeof *e), *f = orc_alloc((size_t)(kp * c.n), sizeof *f);
  orc_fill(rng, q, nq, 0);
  orc_fill(rng, k, nk, 0);
  orc_fill(rng, v, nk, 0);
  for (int64_t i = 0; i < kp * c.n; i++) {
    e[i] = orc_sym(rng, 1.0 / sqrt((double)c.n));
    f[i] = orc_sym(rng, 1.0 / sqrt((double)c.n));
  }
  hmx_context ctx = orc_ctx();
  hmx_tensor tq = hmx_tensor_4d(q, HMX_F32, c.b, c.s, c.hq, c.d);
  hmx_tensor tk = hmx_tensor_4d(k, HMX_F32, c.b, c.n, c.hkv, c.d);
  hmx_tensor tv = hmx_tensor_4d(v, HMX_F32, c.b, c.n, c.hkv, c.d);
  hmx_tensor to = hmx_tensor_4d(o, HMX_F32, c.b, c.s, c.hq, c.d);
  hmx_tensor te = hmx_tensor_2d(e, HMX_F32, kp, c.n), tf = hmx_tensor_2d(f, HMX_F32, kp, c.n);
  ORC_OK(hmx_linformer(&ctx, &tq, &tk, &tv, &te, &tf, 0.0f, &to));
  double **kr = orc_alloc((size_t)kp, sizeof *kr), **vr = orc_alloc((size_t)kp, sizeof *vr);
  double **ek = orc_alloc((size_t)kp, sizeof *ek), **evv = orc_alloc((size_t)kp, sizeof *evv);
  for (int64_t r = 0; r < kp; r++) {
    kr[r] = orc_alloc((size_t)c.d, sizeof **kr); vr[r] = orc_alloc((size_t)c.d, sizeof **vr);
    ek[r] = orc_alloc((size_t)c.d, sizeof **ek); evv[r] = orc_alloc((size_t)c.d, sizeof **evv);
  }
  int group = (int)(c.hq / c.hkv);
  for (int64_t b = 0; b < c.b; b++)
    for (int64_t g = 0; g < c.hkv; g++) {
      for (int64_t r = 0; r < kp; r++)
        for (int64_t a = 0; a < c.d; a++) {
          double sk = 0, sv = 0, mk = 0, mv = 0;
          for (int64_t j = 0; j < c.n; j++) {
            double tk_ = (double)e[r * c.n + j] * k[(b * c.n + j) * ld + g * c.d + a];
            double tv_ = (double)f[r * c.n + j] * v[(b * c.n + j) * ld + g * c.d + a];
            sk += tk_; sv += tv_; mk += fabs(tk_); mv += fabs(tv_);
          }
          kr[r][a] = sk; vr[r][a] = sv;
          ek[r][a] = (orc_gamma((double)c.n) + orc_gamma_d((double)c.n)) * mk;
          evv[r][a] = (orc_gamma((double)c.n) + orc_gamma_d((double)c.n)) * mv;
        }
      for (int64_t h = g * group; h < (g + 1) * group; h++)
        for (int64_t i = 0; i < c.s; i++) {
          int64_t off = ((b * c.s + i) * c.hq + h) * c.d;
          attn_check(st, q + off, kr, vr, ek, evv, kp, c.d, o + off);
        }
    }
  for (int64_t r = 0; r < kp; r++) { free(kr[r]); free(vr[r]); free(ek[r]); free(evv[r]); }
  free(kr); free(vr); free(ek); free(evv); free(q); free(k); free(v); free(o); free(e); free(f);
}

int main(void) {
  orc_rng rng = orc_seed(5);
  static const sk_case cases[] = {
      {1, 5, 40, 2, 1, 8, 10, 0},   {2, 4, 64, 4, 2, 16, 16, 3}, {1, 3, 24, 1, 1, 32, 5, 0},
      {1, 6, 128, 2, 1, 16, 32, 3}, {1, 2, 17, 3, 3, 8, 17, 0},  {1, 3, 200, 4, 1, 64, 64, 4},
      {1, 2, 9, 1, 1, 4, 1, 0}};
  printf("sketched attention vs exact float64 attention with an explicit mask:\n");
  for (int mt = 0; mt < 3; mt++) {
    orc_stat st;
    char name[96];
    snprintf(name, sizeof name, "%s (set recomputed independently)", mname[mt]);
    orc_stat_init(&st, name);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&st, (method)mt, cases[i], &rng, 0);
    orc_stat_report(&st);
  }
  printf("  near-ties at the selection boundary (allowed differences): %ld\n", near_ties);
  printf("  outputs equal attention over the gathered keys, k = N equals attention, dominant "
         "keys kept: checked\n");
  orc_stat sl;
  orc_stat_init(&sl, "linformer vs exact attention over E K, F V");
  check_linformer(&sl, cases[0], 8, &rng);
  check_linformer(&sl, cases[1], 16, &rng);
  check_linformer(&sl, cases[5], 32, &rng);
  check_linformer(&sl, cases[6], 9, &rng);
  orc_stat_report(&sl);
  /* a wrong key set must fail the masked comparison */
  orc_stat bad;
  orc_stat_init(&bad, "levattention with one wrong key (must be caught)");
  fprintf(stderr, "  (the next lines are the planted wrong key set being caught, as intended)\n");
  check_case(&bad, M_LEV, cases[1], &rng, 1);
  printf("  planted wrong key: %ld of %ld outputs over the bound (expected > 0)\n", bad.over,
         bad.count);
  CHECK(bad.over > 0, "a wrong key set was not caught");
  return check_finish("test_oracle_sketch");
}
