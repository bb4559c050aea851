/* Oracle test of attention (docs/ORACLE.md §attention): the reference against
 * a float64 softmax attention written here from the header's definition, with
 * a derived bound, plus the causal / decode properties bit for bit. */
#include "oracle.h"

typedef struct attn_shape {
  int64_t b, sq, skv, hq, hkv, d;
  int causal;
  int64_t q_offset; /* as passed: < 0 means Skv - Sq */
  float scale;      /* as passed: <= 0 means 1/sqrt(D) */
} attn_shape;

static int64_t idx4(int64_t b, int64_t s, int64_t h, int64_t d, int64_t S, int64_t H, int64_t D) {
  return ((b * S + s) * H + h) * D + d;
}

static hmx_status run_attn(const attn_shape *a, const float *q, const float *k, const float *v,
                           float *o) {
  hmx_context ctx = orc_ctx();
  hmx_tensor tq = hmx_tensor_4d((void *)q, HMX_F32, a->b, a->sq, a->hq, a->d);
  hmx_tensor tk = hmx_tensor_4d((void *)k, HMX_F32, a->b, a->skv, a->hkv, a->d);
  hmx_tensor tv = hmx_tensor_4d((void *)v, HMX_F32, a->b, a->skv, a->hkv, a->d);
  hmx_tensor to = hmx_tensor_4d(o, HMX_F32, a->b, a->sq, a->hq, a->d);
  hmx_attention_params p = {a->causal, a->q_offset, a->scale};
  return hmx_attention(&ctx, &tq, &tk, &tv, &p, &to);
}

/* Bound (docs/ORACLE.md): with exact scores s*_j = sigma q.k_j (sigma = the
 * mathematical 1/sqrt(D) or the given scale), weights w_j = exp(s*_j - m*):
 *   Delta_j = gamma_(D+2) sigma sum_d |q_d k_jd|  (D fmas, the scale multiply,
 *             and fl(1/sqrt(D)) itself),
 *   eta_j   = exp(Delta_j + u (|s*_j - m*| + 2 max Delta)) (1 + 2^-23) - 1
 *             (the subtraction s_j - m rounded; hmx_expf within 1 ulp),
 *   EN_d = sum_j w_j |v_jd| ((1 + eta_j)(1 + gamma_n) - 1) + n 2^-149 max|v| (1 + gamma_n),
 *   ES   = sum_j w_j ((1 + eta_j)(1 + gamma_L) - 1) + n 2^-149 (1 + gamma_L),
 *   |o^_d - o*_d| <= (EN_d + |o*_d| ES) / (S* - ES) (1 + u) + u |o*_d|. */
static void oracle_check(orc_stat *st, const attn_shape *a, const float *q, const float *k,
                         const float *v, const float *o) {
  int64_t qoff = a->q_offset < 0 ? a->skv - a->sq : a->q_offset;
  double sigma = a->scale > 0 ? (double)a->scale : 1.0 / sqrt((double)a->d);
  double scale_rounds = a->scale > 0 ? 1 : 2; /* fl(1/sqrt D) is one more rounding */
  int64_t group = a->hq / a->hkv;
  double *s = orc_alloc((size_t)a->skv, sizeof *s), *dl = orc_alloc((size_t)a->skv, sizeof *dl);
  double *w = orc_alloc((size_t)a->skv, sizeof *w), *eta = orc_alloc((size_t)a->skv, sizeof *eta);
  const double u = ORC_U;
  for (int64_t b = 0; b < a->b; b++)
    for (int64_t h = 0; h < a->hq; h++)
      for (int64_t i = 0; i < a->sq; i++) {
        int64_t kh = h / group, n = a->causal ? qoff + i + 1 : a->skv;
        const float *qr = q + idx4(b, i, h, 0, a->sq, a->hq, a->d);
        double m = -INFINITY, dmax = 0;
        for (int64_t j = 0; j < n; j++) {
          const float *kr = k + idx4(b, j, kh, 0, a->skv, a->hkv, a->d);
          double dot = 0, mag = 0;
          for (int64_t d = 0; d < a->d; d++) {
            double t = (double)qr[d] * kr[d];
            dot += t;
            mag += fabs(t);
          }
          s[j] = sigma * dot;
          dl[j] = orc_gamma((double)a->d + scale_rounds) * sigma * mag +
                  orc_gamma_d((double)a->d + 2) * sigma * mag;
          if (s[j] > m) m = s[j];
          if (dl[j] > dmax) dmax = dl[j];
        }
        double S = 0, ES = 0;
        double gn = orc_gamma((double)n), gL = orc_gamma((double)((n + 15) / 16) + 4);
        for (int64_t j = 0; j < n; j++) {
          w[j] = exp(s[j] - m);
          eta[j] = exp(dl[j] + u * (fabs(s[j] - m) + 2 * dmax)) * (1 + 0x1p-23) - 1;
          S += w[j];
          ES += w[j] * ((1 + eta[j]) * (1 + gL) - 1) + ORC_TINY * (1 + gL);
        }
        for (int64_t d = 0; d < a->d; d++) {
          double N = 0, EN = 0, vmax = 0;
          for (int64_t j = 0; j < n; j++) {
            double vv = v[idx4(b, j, kh, d, a->skv, a->hkv, a->d)];
            N += w[j] * vv;
            EN += w[j] * fabs(vv) * ((1 + eta[j]) * (1 + gn) - 1);
            if (fabs(vv) > vmax) vmax = fabs(vv);
          }
          EN += (double)n * ORC_TINY * vmax * (1 + gn);
          double want = N / S;
          double bound = (EN + fabs(want) * ES) / (S - ES) * (1 + u) + u * fabs(want);
          double mag = 0;
          for (int64_t j = 0; j < n; j++)
            mag += w[j] * fabs((double)v[idx4(b, j, kh, d, a->skv, a->hkv, a->d)]);
          bound += 1e-12 * mag / S; /* the double oracle's own rounding */
          orc_stat_add(st, o[idx4(b, i, h, d, a->sq, a->hq, a->d)], want, bound);
        }
      }
  free(s);
  free(dl);
  free(w);
  free(eta);
}

typedef struct attn_buf {
  float *q, *k, *v, *o;
  int64_t nq, nkv;
} attn_buf;

static attn_buf buf_make(const attn_shape *a, double qk_amp, orc_rng *rng) {
  attn_buf t;
  t.nq = a->b * a->sq * a->hq * a->d;
  t.nkv = a->b * a->skv * a->hkv * a->d;
  t.q = orc_alloc((size_t)t.nq, sizeof *t.q);
  t.o = orc_alloc((size_t)t.nq, sizeof *t.o);
  t.k = orc_alloc((size_t)t.nkv, sizeof *t.k);
  t.v = orc_alloc((size_t)t.nkv, sizeof *t.v);
  for (int64_t i = 0; i < t.nq; i++) t.q[i] = orc_sym(rng, qk_amp);
  for (int64_t i = 0; i < t.nkv; i++) {
    t.k[i] = orc_sym(rng, qk_amp);
    t.v[i] = orc_sym(rng, 1.0);
  }
  return t;
}

static void buf_free(attn_buf *t) {
  free(t->q);
  free(t->k);
  free(t->v);
  free(t->o);
}

static void check_case(orc_stat *st, attn_shape a, double amp, orc_rng *rng) {
  attn_buf t = buf_make(&a, amp, rng);
  ORC_OK(run_attn(&a, t.q, t.k, t.v, t.o));
  oracle_check(st, &a, t.q, t.k, t.v, t.o);
  buf_free(&t);
}

/* Causal: perturbing keys/values a query cannot see (with huge values, inf and
 * NaN) leaves its output bit-identical. Query row i (position qoff + i) sees
 * keys 0..qoff+i; keys > cut are perturbed, so rows with qoff + i <= cut must
 * not change. */
static void check_causal_isolation(attn_shape a, orc_rng *rng) {
  attn_buf t = buf_make(&a, 1.5, rng);
  int64_t qoff = a.q_offset < 0 ? a.skv - a.sq : a.q_offset;
  float *o2 = orc_alloc((size_t)t.nq, sizeof *o2);
  ORC_OK(run_attn(&a, t.q, t.k, t.v, t.o));
  static const float poison[] = {1e30f, -1e30f, INFINITY, -INFINITY, NAN};
  for (int64_t cut = qoff; cut < qoff + a.sq - 1; cut += 1 + a.sq / 5) {
    float *k2 = orc_alloc((size_t)t.nkv, sizeof *k2), *v2 = orc_alloc((size_t)t.nkv, sizeof *v2);
    memcpy(k2, t.k, (size_t)t.nkv * sizeof *k2);
    memcpy(v2, t.v, (size_t)t.nkv * sizeof *v2);
    for (int64_t b = 0; b < a.b; b++)
      for (int64_t j = cut + 1; j < a.skv; j++)
        for (int64_t h = 0; h < a.hkv; h++)
          for (int64_t d = 0; d < a.d; d++) {
            int64_t x = idx4(b, j, h, d, a.skv, a.hkv, a.d);
            k2[x] = poison[(j + d) % 5];
            v2[x] = poison[(j + d + 2) % 5];
          }
    ORC_OK(run_attn(&a, t.q, k2, v2, o2));
    int same = 1;
    for (int64_t b = 0; b < a.b; b++)
      for (int64_t i = 0; i < a.sq && qoff + i <= cut; i++) {
        size_t off = (size_t)idx4(b, i, 0, 0, a.sq, a.hq, a.d), len = (size_t)(a.hq * a.d);
        same &= memcmp(t.o + off, o2 + off, len * sizeof(float)) == 0;
      }
    CHECK(same, "causal attention: a row changed when unseen keys > %lld were perturbed",
          (long long)cut);
    free(k2);
    free(v2);
  }
  free(o2);
  buf_free(&t);
}

/* Decode over a cache equals the prefill row, bit for bit:
 *   (1) Sq = 1, full cache, q_offset = -1 (Skv - 1) vs the last prefill row;
 *   (2) Sq = 1, full cache, causal, q_offset = i vs prefill row i;
 *   (3) Sq = 1, cache truncated to i + 1 keys, non-causal vs prefill row i;
 *   (4) a chunk of 4 queries at q_offset = c vs prefill rows c .. c+3. */
static void check_decode(int64_t S, int64_t hq, int64_t hkv, int64_t d, orc_rng *rng) {
  attn_shape pre = {2, S, S, hq, hkv, d, 1, -1, 0.0f};
  attn_buf t = buf_make(&pre, 1.5, rng);
  ORC_OK(run_attn(&pre, t.q, t.k, t.v, t.o));
  int64_t row = hq * d;
  float *q1 = orc_alloc((size_t)(2 * 4 * row), sizeof *q1), *o1 = orc_alloc((size_t)(2 * 4 * row), sizeof *o1);
  float *kc = orc_alloc((size_t)t.nkv, sizeof *kc), *vc = orc_alloc((size_t)t.nkv, sizeof *vc);
  int ok1 = 1, ok2 = 1, ok3 = 1, ok4 = 1;
  for (int64_t i = 0; i < S; i++) {
    for (int64_t b = 0; b < 2; b++) memcpy(q1 + b * row, t.q + idx4(b, i, 0, 0, S, hq, d), (size_t)row * sizeof(float));
    attn_shape dec = {2, 1, S, hq, hkv, d, 1, i == S - 1 ? -1 : i, 0.0f};
    ORC_OK(run_attn(&dec, q1, t.k, t.v, o1));
    for (int64_t b = 0; b < 2; b++) {
      int same = memcmp(o1 + b * row, t.o + idx4(b, i, 0, 0, S, hq, d), (size_t)row * sizeof(float)) == 0;
      if (i == S - 1) ok1 &= same;
      else ok2 &= same;
    }
    /* (3) truncated cache [2, i+1, hkv, d] */
    int64_t kv_row = hkv * d;
    for (int64_t b = 0; b < 2; b++) {
      memcpy(kc + b * (i + 1) * kv_row, t.k + idx4(b, 0, 0, 0, S, hkv, d), (size_t)((i + 1) * kv_row) * sizeof(float));
      memcpy(vc + b * (i + 1) * kv_row, t.v + idx4(b, 0, 0, 0, S, hkv, d), (size_t)((i + 1) * kv_row) * sizeof(float));
    }
    attn_shape tr = {2, 1, i + 1, hq, hkv, d, 0, 0, 0.0f};
    ORC_OK(run_attn(&tr, q1, kc, vc, o1));
    for (int64_t b = 0; b < 2; b++)
      ok3 &= memcmp(o1 + b * row, t.o + idx4(b, i, 0, 0, S, hq, d), (size_t)row * sizeof(float)) == 0;
  }
  for (int64_t c = 0; c + 4 <= S; c += 3) {
    for (int64_t b = 0; b < 2; b++)
      memcpy(q1 + b * 4 * row, t.q + idx4(b, c, 0, 0, S, hq, d), (size_t)(4 * row) * sizeof(float));
    attn_shape ch = {2, 4, S, hq, hkv, d, 1, c, 0.0f};
    ORC_OK(run_attn(&ch, q1, t.k, t.v, o1));
    for (int64_t b = 0; b < 2; b++)
      ok4 &= memcmp(o1 + b * 4 * row, t.o + idx4(b, c, 0, 0, S, hq, d), (size_t)(4 * row) * sizeof(float)) == 0;
  }
  CHECK(ok1, "decode of the last position (q_offset = -1) != last prefill row (S=%lld)", (long long)S);
  CHECK(ok2, "decode at q_offset = i over the full cache != prefill row i (S=%lld)", (long long)S);
  CHECK(ok3, "non-causal decode over the truncated cache != prefill row i (S=%lld)", (long long)S);
  CHECK(ok4, "chunked prefill (4 queries at q_offset = c) != prefill rows (S=%lld)", (long long)S);
  printf("  S=%-3lld Hq=%lld Hkv=%lld D=%lld: decode(last)=%s decode(i)=%s truncated=%s chunk=%s\n",
         (long long)S, (long long)hq, (long long)hkv, (long long)d, ok1 ? "bit-equal" : "DIFF",
         ok2 ? "bit-equal" : "DIFF", ok3 ? "bit-equal" : "DIFF", ok4 ? "bit-equal" : "DIFF");
  free(q1);
  free(o1);
  free(kc);
  free(vc);
  buf_free(&t);
}

/* Non-causal attention is a function of the set of (key, value) pairs: a
 * permuted cache gives a result within the same bound (not bit-exact: the
 * sums run in a different order). */
static void check_permutation(orc_stat *st, orc_rng *rng) {
  attn_shape a = {1, 3, 37, 4, 2, 64, 0, 0, 0.0f};
  attn_buf t = buf_make(&a, 1.5, rng);
  int64_t perm[37];
  for (int64_t j = 0; j < 37; j++) perm[j] = j;
  for (int64_t j = 36; j > 0; j--) {
    int64_t r = orc_below(rng, j + 1), tmp = perm[j];
    perm[j] = perm[r];
    perm[r] = tmp;
  }
  float *k2 = orc_alloc((size_t)t.nkv, sizeof *k2), *v2 = orc_alloc((size_t)t.nkv, sizeof *v2);
  int64_t kv_row = a.hkv * a.d;
  for (int64_t j = 0; j < 37; j++) {
    memcpy(k2 + j * kv_row, t.k + perm[j] * kv_row, (size_t)kv_row * sizeof(float));
    memcpy(v2 + j * kv_row, t.v + perm[j] * kv_row, (size_t)kv_row * sizeof(float));
  }
  ORC_OK(run_attn(&a, t.q, k2, v2, t.o));
  oracle_check(st, &a, t.q, t.k, t.v, t.o); /* compared with the unpermuted oracle */
  free(k2);
  free(v2);
  buf_free(&t);
}

int main(void) {
  orc_rng rng = orc_seed(4);
  printf("attention vs double softmax attention:\n");
  orc_stat causal, full, decode, peaky, perm;
  orc_stat_init(&causal, "attention causal prefill (GQA 1, 3, 4; D 64/96/128)");
  orc_stat_init(&full, "attention non-causal (incl. Sq != Skv)");
  orc_stat_init(&decode, "attention decode Sq = 1, q_offset = Skv - 1");
  orc_stat_init(&peaky, "attention, scores spread ~ +-40 (near one-hot, exp underflow)");
  orc_stat_init(&perm, "attention non-causal with permuted keys");
  static const int64_t heads[][2] = {{4, 4}, {6, 2}, {8, 2}}; /* ratios 1, 3, 4 */
  static const int64_t dims[] = {64, 96, 128};
  for (int hi = 0; hi < 3; hi++)
    for (int di = 0; di < 3; di++) {
      int64_t hq = heads[hi][0], hkv = heads[hi][1], d = dims[di];
      check_case(&causal, (attn_shape){2, 33, 33, hq, hkv, d, 1, -1, 0.0f}, 1.5, &rng);
      check_case(&causal, (attn_shape){1, 5, 40, hq, hkv, d, 1, 20, 0.0f}, 1.5, &rng);
      check_case(&full, (attn_shape){2, 17, 29, hq, hkv, d, 0, 0, 0.0f}, 1.5, &rng);
      check_case(&full, (attn_shape){1, 9, 9, hq, hkv, d, 0, 0, 0.3f}, 1.0, &rng);
      check_case(&decode, (attn_shape){2, 1, 77, hq, hkv, d, 1, 76, 0.0f}, 1.5, &rng);
      check_case(&decode, (attn_shape){1, 1, 200, hq, hkv, d, 1, -1, 0.0f}, 1.5, &rng);
      check_case(&decode, (attn_shape){1, 1, 50, hq, hkv, d, 0, 0, 0.0f}, 1.5, &rng);
      check_case(&peaky, (attn_shape){1, 16, 16, hq, hkv, d, 1, -1, 0.0f}, 4.0 * sqrt(d / 64.0) + 4.0, &rng);
    }
  check_case(&full, (attn_shape){1, 1, 1, 1, 1, 1, 0, 0, 0.0f}, 1.0, &rng);
  check_case(&causal, (attn_shape){1, 3, 3, 1, 1, 1, 1, -1, 0.0f}, 1.0, &rng);
  check_permutation(&perm, &rng);
  orc_stat_report(&causal);
  orc_stat_report(&full);
  orc_stat_report(&decode);
  orc_stat_report(&peaky);
  orc_stat_report(&perm);

  printf("causal isolation (unseen keys/values set to +-1e30, +-inf, NaN):\n");
  check_causal_isolation((attn_shape){2, 24, 24, 6, 2, 64, 1, -1, 0.0f}, &rng);
  check_causal_isolation((attn_shape){1, 8, 30, 4, 1, 96, 1, 12, 0.0f}, &rng);
  check_causal_isolation((attn_shape){1, 10, 10, 4, 4, 128, 1, -1, 0.0f}, &rng);
  printf("  rows that cannot see the perturbed keys are bit-identical: checked\n");

  printf("decode / chunked prefill vs full prefill (bit for bit):\n");
  check_decode(20, 4, 4, 64, &rng);
  check_decode(13, 6, 2, 96, &rng);
  check_decode(9, 8, 2, 128, &rng);
  return check_finish("test_oracle_attention");
}
