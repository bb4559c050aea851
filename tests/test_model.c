/* The model runtime: parameter counts, weights files, and the invariances of
 * docs/MODEL.md checked bit for bit (memcmp) on the `test` preset:
 * prefill = decode = any chunking, alone = batched, 1 = 2 threads, every
 * backend this machine runs = ref, f32/bf16/f16 weights, f32/bf16/f16 KV
 * caches, save = load; plus an independent float64 forward pass that checks
 * the wiring (and that a 16-bit cache holds K and V rounded, nothing else). */
#include "hadamix_model.h"
#include "check.h"
#include "threads.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NTOK 13
static const int32_t prompt[NTOK] = {3, 141, 59, 26, 5, 35, 89, 79, 32, 38, 46, 26, 43};
static const int32_t other[7] = {255, 0, 17, 17, 200, 1, 99};

/* The dtype of every KV cache the tests below make. */
static hmx_dtype kv_dtype = HMX_F32;

static hmx_status new_cache(const hmx_model *m, hmx_kv_cache **c) {
  return hmx_kv_cache_new_typed(m, 0, kv_dtype, c);
}

static hmx_context ctx_of(const char *backend, int threads) {
  hmx_context c = {hmx_backend_find(backend), threads, 0, HMX_TIER_DEFAULT};
  return c;
}

static float *alloc_logits(const hmx_model *m, int64_t rows) {
  return calloc((size_t)rows * (size_t)hmx_model_get_config(m)->vocab, sizeof(float));
}

/* All-position logits of `toks` fed in chunks of the given sizes (summing to n). */
static int run_chunks(const hmx_context *ctx, const hmx_model *m, const int32_t *toks, int64_t n,
                      const int64_t *chunks, int nchunks, float *out) {
  hmx_kv_cache *c;
  if (new_cache(m, &c)) return 1;
  const int V = hmx_model_get_config(m)->vocab;
  int64_t done = 0;
  hmx_forward_opts o = {1, NULL, NULL};
  for (int i = 0; i < nchunks; i++) {
    const int32_t *t = toks + done;
    if (hmx_model_forward(ctx, m, 1, &c, &t, &chunks[i], &o, out + done * V)) {
      fprintf(stderr, "forward: %s\n", hmx_last_error());
      hmx_kv_cache_free(c);
      return 1;
    }
    done += chunks[i];
  }
  hmx_kv_cache_free(c);
  return done != n;
}

static int run_prefill(const hmx_context *ctx, const hmx_model *m, const int32_t *toks, int64_t n,
                       float *out) {
  return run_chunks(ctx, m, toks, n, &n, 1, out);
}

static void test_params(void) {
  /* the Hadamard paper's counts (millions): dense -> hadamard */
  static const struct { const char *name; double dense, had; } paper[] = {
      {"tiny", 124, 117}, {"small", 354, 329}, {"base", 757, 701}};
  for (int i = 0; i < 3; i++) {
    hmx_model_config cd, ch;
    hmx_param_count pd, ph;
    CHECK(!hmx_model_preset(paper[i].name, HMX_OUTPROJ_DENSE, &cd), "%s", hmx_last_error());
    CHECK(!hmx_model_preset(paper[i].name, HMX_OUTPROJ_HADAMARD, &ch), "%s", hmx_last_error());
    CHECK(!hmx_model_param_count(&cd, &pd) && !hmx_model_param_count(&ch, &ph), "%s",
          hmx_last_error());
    CHECK(fabs(pd.total / 1e6 - paper[i].dense) <= 0.01 * paper[i].dense, "%s dense %.2fM vs %g",
          paper[i].name, pd.total / 1e6, paper[i].dense);
    CHECK(fabs(ph.total / 1e6 - paper[i].had) <= 0.01 * paper[i].had, "%s hadamard %.2fM vs %g",
          paper[i].name, ph.total / 1e6, paper[i].had);
    /* the difference is exactly W_O minus alpha and beta */
    const int64_t d = cd.d_model;
    CHECK(pd.total - ph.total == (int64_t)cd.n_layer * (d * d - 2 * d), "%s difference",
          paper[i].name);
  }
  hmx_model_config c;
  CHECK(hmx_model_preset("nope", HMX_OUTPROJ_DENSE, &c) == HMX_ERR_NOT_FOUND, "unknown preset");
  hmx_model_preset("test", HMX_OUTPROJ_HADAMARD, &c);
  c.d_model = 80; /* hadamard needs n_head * head_dim == d_model */
  CHECK(hmx_model_config_check(&c) != HMX_OK, "hadamard with d != heads*dim accepted");
  hmx_model_preset("test", HMX_OUTPROJ_DENSE, &c);
  c.n_kv_head = 3;
  CHECK(hmx_model_config_check(&c) != HMX_OK, "n_head %% n_kv_head != 0 accepted");
}

/* prefill = decode = chunked; alone = batched; threads; backends */
static void test_invariance(const hmx_model *m, const char *what) {
  const int V = hmx_model_get_config(m)->vocab;
  const size_t bytes = (size_t)NTOK * V * sizeof(float);
  float *ref = alloc_logits(m, NTOK), *got = alloc_logits(m, NTOK + 7);
  hmx_context cref = ctx_of("ref", 1);
  CHECK(!run_prefill(&cref, m, prompt, NTOK, ref), "%s: ref prefill", what);

  for (int bi = 0; bi < hmx_backend_count(); bi++) {
    const hmx_backend *b = hmx_backend_at(bi);
    if (!hmx_backend_available(b)) {
      printf("%s: backend %s not available here: not compared\n", what, hmx_backend_name(b));
      continue;
    }
    for (int threads = 1; threads <= test_thread_max(2); threads++) {
      hmx_context cx = {b, threads, 0, HMX_TIER_DEFAULT};
      const char *bn = hmx_backend_name(b);
      /* one prefill */
      memset(got, 0xff, bytes);
      CHECK(!run_prefill(&cx, m, prompt, NTOK, got) && !memcmp(got, ref, bytes),
            "%s: %s/%d prefill differs from ref", what, bn, threads);
      /* token by token (decode) */
      int64_t ones[NTOK];
      for (int i = 0; i < NTOK; i++) ones[i] = 1;
      memset(got, 0xff, bytes);
      CHECK(!run_chunks(&cx, m, prompt, NTOK, ones, NTOK, got) && !memcmp(got, ref, bytes),
            "%s: %s/%d decode differs from prefill", what, bn, threads);
      /* uneven chunks */
      const int64_t ch[3] = {5, 1, 7};
      memset(got, 0xff, bytes);
      CHECK(!run_chunks(&cx, m, prompt, NTOK, ch, 3, got) && !memcmp(got, ref, bytes),
            "%s: %s/%d chunked differs", what, bn, threads);
      /* batched with a sequence of another length, then a batched decode step */
      float *alone_other = alloc_logits(m, 8);
      hmx_context c1 = ctx_of("ref", 1);
      CHECK(!run_prefill(&c1, m, other, 7, alone_other), "other alone");
      hmx_kv_cache *ca, *cb;
      new_cache(m, &ca);
      new_cache(m, &cb);
      hmx_kv_cache *caches[2] = {cb, ca};
      const int32_t *toks[2] = {other, prompt};
      int64_t lens[2] = {6, NTOK - 1};
      hmx_forward_opts o = {1, NULL, NULL};
      memset(got, 0xff, (size_t)(NTOK + 7) * V * sizeof(float));
      hmx_status st = hmx_model_forward(&cx, m, 2, caches, toks, lens, &o, got);
      CHECK(!st, "%s: batched prefill: %s", what, hmx_last_error());
      CHECK(!memcmp(got, alone_other, (size_t)6 * V * sizeof(float)),
            "%s: %s/%d batched row differs (seq B)", what, bn, threads);
      CHECK(!memcmp(got + 6 * V, ref, (size_t)(NTOK - 1) * V * sizeof(float)),
            "%s: %s/%d batched row differs (seq A)", what, bn, threads);
      /* one decode step for both: last-token logits */
      const int32_t *next[2] = {other + 6, prompt + NTOK - 1};
      int64_t one2[2] = {1, 1};
      st = hmx_model_forward(&cx, m, 2, caches, next, one2, NULL, got);
      CHECK(!st, "%s: batched decode: %s", what, hmx_last_error());
      CHECK(!memcmp(got, alone_other + 6 * V, (size_t)V * sizeof(float)) &&
                !memcmp(got + V, ref + (NTOK - 1) * V, (size_t)V * sizeof(float)),
            "%s: %s/%d batched decode differs", what, bn, threads);
      CHECK(hmx_kv_cache_len(ca) == NTOK && hmx_kv_cache_len(cb) == 7, "cache lengths");
      hmx_kv_cache_free(ca);
      hmx_kv_cache_free(cb);
      free(alone_other);
    }
  }
  free(ref);
  free(got);
}

/* ------------------------------------------------------------------ float64 oracle */

static double wget(const hmx_tensor *t, int64_t i) {
  const uint16_t *h = t->data;
  if (t->dtype == HMX_F32) return ((const float *)t->data)[i];
  return t->dtype == HMX_BF16 ? hmx_bf16_to_f32(h[i]) : hmx_f16_to_f32(h[i]);
}

static void rmsnorm64(const double *x, const hmx_tensor *w, int64_t d, double eps, double *y) {
  double ss = 0;
  for (int64_t i = 0; i < d; i++) ss += x[i] * x[i];
  const double r = 1.0 / sqrt(ss / d + eps);
  for (int64_t i = 0; i < d; i++) y[i] = x[i] * r * wget(w, i);
}

/* y[o] = sum_i x[i] W[o, i] (Linear layout) */
static void linear64(const double *x, const hmx_tensor *w, int64_t in, int64_t out, double *y) {
  for (int64_t o = 0; o < out; o++) {
    double s = 0;
    for (int64_t i = 0; i < in; i++) s += x[i] * wget(w, o * in + i);
    y[o] = s;
  }
}

/* half-style RoPE on one head at position p */
static void rope64(double *v, int dim, double base, int64_t p) {
  const int half = dim / 2;
  for (int i = 0; i < half; i++) {
    const double ang = (double)p * pow(base, -2.0 * i / dim);
    const double a = v[i], b = v[i + half];
    v[i] = a * cos(ang) - b * sin(ang);
    v[i + half] = a * sin(ang) + b * cos(ang);
  }
}

/* Sylvester H_n x / sqrt(n) (n a power of two: the test preset's d) */
static void hadamard64(double *x, int64_t n) {
  for (int64_t h = 1; h < n; h *= 2)
    for (int64_t i = 0; i < n; i += 2 * h)
      for (int64_t j = i; j < i + h; j++) {
        const double a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
  for (int64_t i = 0; i < n; i++) x[i] /= sqrt((double)n);
}

/* logits [n, V] of the prompt, everything in double */
/* v as stored by a cache of dtype dt: rounded to nearest even (via f32). */
static double kv_round(double v, hmx_dtype dt) {
  if (dt == HMX_BF16) return hmx_bf16_to_f32(hmx_f32_to_bf16((float)v));
  if (dt == HMX_F16) return hmx_f16_to_f32(hmx_f32_to_f16((float)v));
  return v;
}

/* kvdt: K (after RoPE) and V rounded as a cache of that dtype stores them. */
static void oracle_forward(const hmx_model *m, const int32_t *toks, int n, int pos_shift,
                           hmx_dtype kvdt, double *logits) {
  const hmx_model_config *c = hmx_model_get_config(m);
  const int d = c->d_model, H = c->n_head, KH = c->n_kv_head, D = c->head_dim, F = c->d_ff;
  double *x = calloc((size_t)n * d, 8), *h = calloc(d, 8), *q = calloc((size_t)n * H * D, 8),
         *k = calloc((size_t)n * KH * D, 8), *v = calloc((size_t)n * KH * D, 8),
         *att = calloc((size_t)H * D, 8), *o = calloc(d, 8), *a = calloc(F, 8), *b = calloc(F, 8),
         *sc = calloc(n, 8);
  char nm[64];
  const hmx_tensor *emb = hmx_model_weight(m, "tok_emb");
  for (int t = 0; t < n; t++)
    for (int i = 0; i < d; i++) x[t * d + i] = wget(emb, (int64_t)toks[t] * d + i);
  for (int l = 0; l < c->n_layer; l++) {
#define W(s) (snprintf(nm, sizeof nm, "layers.%d.%s", l, s), hmx_model_weight(m, nm))
    for (int t = 0; t < n; t++) {
      rmsnorm64(x + t * d, W("attn_norm"), d, c->norm_eps, h);
      linear64(h, W("attn.wq"), d, H * D, q + t * H * D);
      linear64(h, W("attn.wk"), d, KH * D, k + t * KH * D);
      linear64(h, W("attn.wv"), d, KH * D, v + t * KH * D);
      for (int hh = 0; hh < H; hh++) rope64(q + (t * H + hh) * D, D, c->rope_base, t + pos_shift);
      for (int hh = 0; hh < KH; hh++) rope64(k + (t * KH + hh) * D, D, c->rope_base, t * (1 + pos_shift));
      for (int e = 0; e < KH * D; e++) {
        k[t * KH * D + e] = kv_round(k[t * KH * D + e], kvdt);
        v[t * KH * D + e] = kv_round(v[t * KH * D + e], kvdt);
      }
    }
    for (int t = 0; t < n; t++) {
      for (int hh = 0; hh < H; hh++) {
        const int kh = hh / (H / KH);
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j <= t; j++) {
          double s = 0;
          for (int e = 0; e < D; e++) s += q[(t * H + hh) * D + e] * k[(j * KH + kh) * D + e];
          sc[j] = s / sqrt((double)D);
          if (sc[j] > mx) mx = sc[j];
        }
        for (int j = 0; j <= t; j++) sum += (sc[j] = exp(sc[j] - mx));
        for (int e = 0; e < D; e++) {
          double acc = 0;
          for (int j = 0; j <= t; j++) acc += sc[j] / sum * v[(j * KH + kh) * D + e];
          att[hh * D + e] = acc;
        }
      }
      if (c->outproj == HMX_OUTPROJ_DENSE) linear64(att, W("attn.wo"), H * D, d, o);
      else {
        memcpy(o, att, (size_t)d * 8);
        hadamard64(o, d);
        for (int i = 0; i < d; i++) o[i] = o[i] * wget(W("attn.alpha"), i) + wget(W("attn.beta"), i);
      }
      for (int i = 0; i < d; i++) x[t * d + i] += o[i];
    }
    for (int t = 0; t < n; t++) {
      rmsnorm64(x + t * d, W("ffn_norm"), d, c->norm_eps, h);
      const hmx_tensor *w1 = W("ffn.w1"), *w3 = W("ffn.w3"), *w2 = W("ffn.w2");
      for (int u = 0; u < F; u++) {
        double s1 = 0, s3 = 0;
        for (int i = 0; i < d; i++) {
          s1 += h[i] * wget(w1, (int64_t)i * F + u);
          s3 += h[i] * wget(w3, (int64_t)i * F + u);
        }
        a[u] = s1 / (1 + exp(-s1)) * s3;
      }
      for (int i = 0; i < d; i++) {
        double s = 0;
        for (int u = 0; u < F; u++) s += a[u] * wget(w2, (int64_t)u * d + i);
        x[t * d + i] += s;
      }
    }
#undef W
  }
  const hmx_tensor *head = c->tied ? emb : hmx_model_weight(m, "lm_head");
  for (int t = 0; t < n; t++) {
    rmsnorm64(x + t * d, hmx_model_weight(m, "norm"), d, c->norm_eps, h);
    linear64(h, head, d, c->vocab, logits + (int64_t)t * c->vocab);
  }
  free(x); free(h); free(q); free(k); free(v); free(att); free(o); free(a); free(b); free(sc);
}

/* Worst row relative error of logits vs the float64 pass (with RoPE
 * positions distorted when pos_shift != 0: the negative control). */
static double oracle_error(const hmx_model *m, const float *got, int pos_shift, hmx_dtype kvdt) {
  const int V = hmx_model_get_config(m)->vocab;
  double *want = calloc((size_t)NTOK * V, sizeof(double));
  oracle_forward(m, prompt, NTOK, pos_shift, kvdt, want);
  /* f32 vs f64 through 2 layers of d = 64: the relative error of a logit row
   * (max abs error / max |logit|) stays near 1e-6; 1e-4 leaves room and
   * still catches any wiring error (a wrong position, head or mask moves
   * logits by O(1) of their scale). */
  double worst = 0;
  for (int t = 0; t < NTOK; t++) {
    double scale = 0, err = 0;
    for (int j = 0; j < V; j++) {
      scale = fmax(scale, fabs(want[t * V + j]));
      err = fmax(err, fabs(want[t * V + j] - got[t * V + j]));
    }
    worst = fmax(worst, err / scale);
  }
  free(want);
  return worst;
}

/* Synthetic weights are small (std 0.02), so attention is nearly uniform; the
 * oracle runs on a copy whose W_Q, W_K are scaled by 16 (exact in f32) so
 * that positions and the mask matter. */
static void test_oracle(const hmx_model *m, const char *what) {
  const hmx_model_config *c = hmx_model_get_config(m);
  char nm[64];
  for (int l = 0; l < c->n_layer; l++)
    for (int w = 0; w < 2; w++) {
      snprintf(nm, sizeof nm, "layers.%d.attn.%s", l, w ? "wk" : "wq");
      const hmx_tensor *t = hmx_model_weight(m, nm);
      for (int64_t i = 0; i < hmx_tensor_numel(t); i++) ((float *)t->data)[i] *= 16.0f;
    }
  float *got = alloc_logits(m, NTOK);
  const hmx_dtype kvs[3] = {HMX_F32, HMX_BF16, HMX_F16};
  for (int i = 0; i < 3; i++) {
    kv_dtype = kvs[i];
    hmx_context cx = ctx_of("ref", 1);
    CHECK(!run_prefill(&cx, m, prompt, NTOK, got), "%s: prefill", what);
    const double worst = oracle_error(m, got, 0, kv_dtype),
                 control = oracle_error(m, got, 1, kv_dtype);
    printf("%s, %s KV cache: float64 oracle, worst row relative error %.3g (wrong positions: "
           "%.3g)\n", what, hmx_dtype_name(kv_dtype), worst, control);
    CHECK(worst < 1e-4, "%s, %s cache: relative error %.3g vs the float64 forward pass", what,
          hmx_dtype_name(kv_dtype), worst);
    CHECK(control > 100 * worst && control > 1e-3, "%s: the oracle does not see wrong positions",
          what);
    if (kv_dtype != HMX_F32) {
      /* the cache really rounds: the oracle without the rounding is farther
       * (by the 8 or 11 significant bits of K and V) */
      const double unrounded = oracle_error(m, got, 0, HMX_F32);
      printf("%s, %s KV cache: vs the oracle with f32 K, V: %.3g\n", what,
             hmx_dtype_name(kv_dtype), unrounded);
      CHECK(unrounded > 10 * worst, "%s: a %s cache does not round K and V (%.3g vs %.3g)", what,
            hmx_dtype_name(kv_dtype), unrounded, worst);
    }
  }
  kv_dtype = HMX_F32;
  free(got);
}

#if HMX_HAVE_CJSON
static void test_save_load(const hmx_model *m, const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/test_model_roundtrip.safetensors", dir);
  CHECK(!hmx_model_save(m, path), "save: %s", hmx_last_error());
  hmx_model *l = NULL;
  CHECK(!hmx_model_load(path, &l), "load: %s", hmx_last_error());
  if (!l) return;
  CHECK(!memcmp(hmx_model_get_config(l), hmx_model_get_config(m), sizeof(hmx_model_config)),
        "config round trip");
  CHECK(hmx_model_weight_bytes(l) == hmx_model_weight_bytes(m), "weight bytes");
  const int V = hmx_model_get_config(m)->vocab;
  float *a = alloc_logits(m, NTOK), *b = alloc_logits(m, NTOK);
  hmx_context c = ctx_of("ref", 1);
  CHECK(!run_prefill(&c, m, prompt, NTOK, a) && !run_prefill(&c, l, prompt, NTOK, b) &&
            !memcmp(a, b, (size_t)NTOK * V * sizeof(float)),
        "loaded model gives other logits");
  free(a);
  free(b);
  hmx_model_free(l);
}

/* Truncated and altered weights files fail with a clear status, never crash. */
static void test_bad_files(const hmx_model *m, const char *dir) {
  char path[512], bad[512];
  snprintf(path, sizeof path, "%s/test_model_good.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/test_model_bad.safetensors", dir);
  CHECK(!hmx_model_save(m, path), "save: %s", hmx_last_error());
  FILE *f = fopen(path, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)len);
  CHECK(buf && fread(buf, 1, (size_t)len, f) == (size_t)len, "read back");
  fclose(f);
  const long cuts[] = {0, 7, 8, 100, len / 2, len - 1};
  for (int i = 0; i < 6; i++) {
    FILE *o = fopen(bad, "wb");
    fwrite(buf, 1, (size_t)cuts[i], o);
    fclose(o);
    hmx_model *l = NULL;
    hmx_status st = hmx_model_load(bad, &l);
    CHECK(st != HMX_OK && !l && *hmx_last_error(), "truncated to %ld bytes: status %d", cuts[i],
          (int)st);
  }
  /* same-length edits of the header: a config that disagrees with the tensors */
  static const struct { const char *from, *to, *msg; } edits[] = {
      {"\"n_layer\":\"2\"", "\"n_layer\":\"3\"", "tensor 'layers.2.attn_norm' is missing"},
      {"\"d_ff\":\"96\"", "\"d_ff\":\"95\"", "must have shape"},
      {"\"vocab\":\"256\"", "\"vocab\":\"-56\"", "not an integer"},
      {"\"format\":\"hadamix", "\"format\":\"HADAMIX", "not a hadamix model"},
      {"\"outproj\":\"dense\"", "\"outproj\":\"dune \"", "is not 'dense' or 'hadamard'"}};
  for (int e = 0; e < 5; e++) {
    char *copy = malloc((size_t)len);
    memcpy(copy, buf, (size_t)len);
    char *hit = NULL;
    for (long i = 0; i + (long)strlen(edits[e].from) <= len && !hit; i++)
      if (!memcmp(copy + i, edits[e].from, strlen(edits[e].from))) hit = copy + i;
    CHECK(hit != NULL, "edit %d: pattern %s not in the header", e, edits[e].from);
    if (hit) {
      memcpy(hit, edits[e].to, strlen(edits[e].to));
      FILE *o = fopen(bad, "wb");
      fwrite(copy, 1, (size_t)len, o);
      fclose(o);
      hmx_model *l = NULL;
      hmx_status st = hmx_model_load(bad, &l);
      CHECK(st != HMX_OK && !l && strstr(hmx_last_error(), edits[e].msg), "edit %d: status %d, "
            "message '%s'", e, (int)st, hmx_last_error());
    }
    free(copy);
  }
  free(buf);
}
#endif

static void test_errors(const hmx_model *m) {
  hmx_kv_cache *c = (hmx_kv_cache *)&c;
  CHECK(hmx_kv_cache_new_typed(m, 4, HMX_I32, &c) == HMX_ERR_DTYPE && c == NULL &&
            strstr(hmx_last_error(), "f32, bf16 or f16"),
        "an i32 KV cache accepted (or no clear error: %s)", hmx_last_error());
  CHECK(!hmx_kv_cache_new_typed(m, 4, HMX_BF16, &c) && hmx_kv_cache_dtype(c) == HMX_BF16,
        "bf16 cache");
  hmx_kv_cache_free(c);
  CHECK(!hmx_kv_cache_new(m, 4, &c) && hmx_kv_cache_dtype(c) == HMX_F32, "cache");
  float *lg = alloc_logits(m, 8);
  const int32_t bad[2] = {1, 256};
  const int32_t *tp = bad;
  int64_t n = 2;
  hmx_context cx = ctx_of("ref", 1);
  CHECK(hmx_model_forward(&cx, m, 1, &c, &tp, &n, NULL, lg) == HMX_ERR_INVALID_ARGUMENT,
        "token outside the vocabulary accepted");
  CHECK(hmx_kv_cache_len(c) == 0, "failed step changed the cache");
  n = 5;
  tp = prompt;
  CHECK(hmx_model_forward(&cx, m, 1, &c, &tp, &n, NULL, lg) == HMX_ERR_INVALID_ARGUMENT,
        "overflowing the cache accepted");
  hmx_kv_cache *two[2] = {c, c};
  const int32_t *tt[2] = {prompt, prompt};
  int64_t nn[2] = {1, 1};
  CHECK(hmx_model_forward(&cx, m, 2, two, tt, nn, NULL, lg) == HMX_ERR_INVALID_ARGUMENT,
        "shared cache accepted");
  CHECK(hmx_model_load("/nonexistent/model.safetensors", &(hmx_model *){NULL}) == HMX_ERR_IO,
        "missing file");
  free(lg);
  hmx_kv_cache_free(c);
}

static void test_sampling(void) {
  float lg[6] = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f, -INFINITY};
  int32_t t;
  hmx_sampler greedy = {0.0f, 0, 1.0f, 1};
  CHECK(!hmx_sample(&greedy, lg, 6, 0, &t) && t == 1, "greedy takes the first maximum (%d)", t);
  hmx_sampler top2 = {1.0f, 2, 1.0f, 7};
  int seen[6] = {0};
  for (uint64_t s = 0; s < 400; s++) {
    CHECK(!hmx_sample(&top2, lg, 6, s, &t), "sample");
    seen[t]++;
  }
  CHECK(seen[1] > 100 && seen[3] > 100 && seen[1] + seen[3] == 400, "top-k 2 draws %d/%d",
        seen[1], seen[3]);
  int32_t t1, t2;
  hmx_sampler any = {0.8f, 0, 0.9f, 42};
  CHECK(!hmx_sample(&any, lg, 6, 5, &t1) && !hmx_sample(&any, lg, 6, 5, &t2) && t1 == t2,
        "same seed and step, same token");
  float nan_lg[2] = {0.0f, NAN};
  CHECK(hmx_sample(&greedy, nan_lg, 2, 0, &t) == HMX_ERR_INVALID_ARGUMENT, "NaN logits accepted");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  test_params();
  test_sampling();
  static const hmx_dtype dts[3] = {HMX_F32, HMX_BF16, HMX_F16};
  for (int op = 0; op < 2; op++)
    for (int di = 0; di < 3; di++) {
      hmx_model_config c;
      hmx_model_preset("test", op ? HMX_OUTPROJ_HADAMARD : HMX_OUTPROJ_DENSE, &c);
      hmx_model *m = NULL;
      CHECK(!hmx_model_synthetic(&c, 1234 + op, dts[di], &m), "%s", hmx_last_error());
      if (!m) continue;
      char what[64];
      snprintf(what, sizeof what, "%s/%s", op ? "hadamard" : "dense", hmx_dtype_name(dts[di]));
      test_invariance(m, what);
      /* 16-bit KV caches: the same invariances (each weight dtype meets one) */
      kv_dtype = di == 1 ? HMX_F16 : HMX_BF16;
      snprintf(what, sizeof what, "%s/%s/kv %s", op ? "hadamard" : "dense",
               hmx_dtype_name(dts[di]), hmx_dtype_name(kv_dtype));
      test_invariance(m, what);
      kv_dtype = HMX_F32;
      snprintf(what, sizeof what, "%s/%s", op ? "hadamard" : "dense", hmx_dtype_name(dts[di]));
      if (op == 0 && di == 0) test_errors(m);
#if HMX_HAVE_CJSON /* hadamix model files are safetensors (test_no_cjson covers the other case) */
      if (di < 2) test_save_load(m, dir);
      if (op == 0 && di == 0) test_bad_files(m, dir);
#else
      (void)dir;
#endif
      if (di == 0) test_oracle(m, what); /* last: it scales the weights */
      hmx_model_free(m);
    }
  return check_finish("test_model");
}
