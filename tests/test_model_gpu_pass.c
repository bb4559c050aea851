/* The forward pass on the GPU (src/model_forward.c, docs/MODEL.md "The
 * forward pass on the GPU"): a model prepared for cuda keeps its
 * activations and KV caches on the GPU, and its logits equal those of the
 * same model unprepared on ref, bit for bit (NaN = NaN, NUMERICS §C).
 *
 * One script of steps per model and KV cache dtype (f32, bf16, f16), run on
 * ref with the plain model and on cuda with the prepared one: a prefill
 * with every position's logits, decode steps, a step with a trace callback
 * (which runs on the host: the cache comes back from the GPU), a GPU step
 * after it (the host's new positions go up), truncation followed by more
 * tokens, and batched steps of two sequences of different lengths, with
 * every logit and with the last ones. On cuda the test also checks where
 * each cache's current positions are after each kind of step, so a pass
 * that quietly ran on the host would fail it.
 *
 * Also: the kept-matrix entries refuse device tensors without GPU copies.
 * Models: the "test" config (dense f32 with an untied head, Hadamard bf16
 * tied, dense f16) and each GGUF file given after the output directory
 * (the fuzz corpus's small models: block types in both layouts).
 * Exits 77 (skipped) where the cuda backend cannot run. */
#include "check.h"
#include "backend.h"
#include "dispatch.h"
#include "gguf.h" /* HMX_GGML_Q8_0 */
#include "hadamix_model.h"
#include "model_internal.h"
#include "swiglu_quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOGIT_ROWS 24

static int traced;
static int count_trace(void *user, int layer, const char *name, const float *data, int64_t rows,
                       int64_t cols) {
  (void)user, (void)layer, (void)name, (void)data, (void)rows, (void)cols;
  traced++;
  return 0;
}

typedef struct run {
  const hmx_model *m;
  hmx_context ctx;
  int on_gpu; /* check where the caches' positions are */
  const char *what;
  float *out; /* MAX_LOGIT_ROWS x vocab */
  int64_t rows;
  hmx_status st;
} run;

/* One step of n_seq sequences (tokens from a fixed rule), its logits
 * appended to r->out. host: with a trace callback (the pass on the host). */
static void step(run *r, int n_seq, hmx_kv_cache **caches, const int64_t *n, int all, int host) {
  if (r->st) return;
  const int64_t V = hmx_model_get_config(r->m)->vocab;
  int32_t toks[2][8];
  const int32_t *tp[2];
  int64_t rows = 0;
  for (int s = 0; s < n_seq; s++) {
    for (int64_t i = 0; i < n[s]; i++)
      toks[s][i] = (int32_t)((37 * (hmx_kv_cache_len(caches[s]) + i) + 11 + 5 * s) % V);
    tp[s] = toks[s];
    rows += all ? n[s] : 1;
  }
  if (r->rows + rows > MAX_LOGIT_ROWS) {
    r->st = HMX_ERR_INTERNAL;
    CHECK(0, "%s: the script outgrew its logits buffer", r->what);
    return;
  }
  hmx_forward_opts opts = {all, host ? count_trace : NULL, NULL};
  const int before = traced;
  r->st = hmx_model_forward(&r->ctx, r->m, n_seq, caches, tp, n, &opts, r->out + r->rows * V);
  CHECK(r->st == HMX_OK, "%s: forward: %s", r->what, hmx_last_error());
  CHECK(!host || traced > before, "%s: the trace callback was not called", r->what);
  r->rows += rows;
  if (!r->on_gpu || r->st) return;
  for (int s = 0; s < n_seq; s++) {
    const hmx_kv_cache *c = caches[s];
    if (host)
      CHECK(c->host_len == c->len, "%s: after a host step the host holds %lld of %lld positions",
            r->what, (long long)c->host_len, (long long)c->len);
    else
      CHECK(c->dk && c->dev_len == c->len && c->host_len < c->len,
            "%s: after a GPU step: GPU copy %s, %lld (GPU) and %lld (host) of %lld positions "
            "current: the pass did not run on the GPU", r->what, c->dk ? "made" : "missing",
            (long long)c->dev_len, (long long)c->host_len, (long long)c->len);
  }
}

/* The script; returns the logit rows written (0 on failure). */
static int64_t script(run *r, hmx_dtype kvdt) {
  hmx_kv_cache *a = NULL, *b = NULL;
  r->rows = 0;
  r->st = hmx_kv_cache_new_typed(r->m, 0, kvdt, &a);
  if (!r->st) r->st = hmx_kv_cache_new_typed(r->m, 0, kvdt, &b);
  CHECK(r->st == HMX_OK, "%s: cache: %s", r->what, hmx_last_error());
  hmx_kv_cache *ab[2] = {a, b};
  const int64_t five = 5, one = 1, two = 2, batch[2] = {1, 3}, ones[2] = {1, 1};
  step(r, 1, &a, &five, 1, 0);  /* prefill, every position */
  step(r, 1, &a, &one, 0, 0);   /* decode */
  step(r, 1, &a, &one, 0, 0);
  step(r, 1, &a, &one, 0, 1);   /* on the host: the cache comes down */
  step(r, 1, &a, &one, 0, 0);   /* and goes up again */
  if (!r->st) r->st = hmx_kv_cache_truncate(a, hmx_kv_cache_len(a) - 2);
  step(r, 1, &a, &two, 1, 0);   /* over the truncated positions */
  step(r, 2, ab, batch, 1, 0);  /* two sequences, every position */
  step(r, 2, ab, ones, 0, 0);   /* their last positions */
  if (!r->st) r->st = hmx_kv_cache_truncate(b, 1);
  step(r, 1, &b, &two, 0, 1);   /* host: position 0 comes down, 1 and 2 computed */
  step(r, 1, &b, &one, 0, 0);   /* GPU: 1 and 2 go up */
  hmx_kv_cache_free(a);
  hmx_kv_cache_free(b);
  return r->st ? 0 : r->rows;
}

/* Two copies of one model: plain runs on ref, prep is prepared for cuda. */
static void check_model(hmx_model *plain, hmx_model *prep, const hmx_backend *cuda,
                        const char *name) {
  hmx_context cctx = {cuda, 1, 0, HMX_TIER_EXACT};
  CHECK(hmx_model_prepare(prep, &cctx, NULL) == HMX_OK, "%s: prepare: %s", name,
        hmx_last_error());
  CHECK(prep->dev_forward == 1, "%s: prepared for cuda, but not every weight has a GPU copy",
        name);
  const int64_t V = hmx_model_get_config(plain)->vocab;
  static const hmx_dtype kvdts[] = {HMX_F32, HMX_BF16, HMX_F16};
  for (int k = 0; k < 3; k++) {
    char what[2][160];
    snprintf(what[0], sizeof what[0], "%s, %s cache, ref", name, hmx_dtype_name(kvdts[k]));
    snprintf(what[1], sizeof what[1], "%s, %s cache, cuda", name, hmx_dtype_name(kvdts[k]));
    run r = {plain, {hmx_backend_find("ref"), 1, 0, HMX_TIER_EXACT}, 0, what[0], NULL, 0, 0};
    run g = {prep, cctx, 1, what[1], NULL, 0, 0};
    r.out = malloc((size_t)(MAX_LOGIT_ROWS * V) * sizeof(float));
    g.out = malloc((size_t)(MAX_LOGIT_ROWS * V) * sizeof(float));
    if (!r.out || !g.out) {
      CHECK(0, "out of memory");
    } else {
      const int64_t nr = script(&r, kvdts[k]), ng = script(&g, kvdts[k]);
      CHECK(nr > 0 && ng == nr, "%s: %lld and %lld logit rows", what[1], (long long)nr,
            (long long)ng);
      if (nr > 0 && ng == nr) {
        int64_t first = -1;
        for (int64_t i = 0; i < nr * V && first < 0; i++)
          if (memcmp(&r.out[i], &g.out[i], sizeof(float)) != 0 &&
              !(isnan(r.out[i]) && isnan(g.out[i]))) /* NaN = NaN (NUMERICS §C) */
            first = i;
        CHECK(first < 0, "%s: logits differ from ref's: row %lld, token %lld: %.9g vs %.9g",
              what[1], (long long)(first / V), (long long)(first % V),
              first < 0 ? 0.0 : (double)g.out[first], first < 0 ? 0.0 : (double)r.out[first]);
      }
    }
    free(r.out);
    free(g.out);
  }
}

static void check_synthetic(const hmx_backend *cuda, hmx_outproj op, int tied, hmx_dtype dt) {
  hmx_model_config cfg;
  hmx_model_preset("test", op, &cfg);
  cfg.tied = tied;
  hmx_model *plain = NULL, *prep = NULL;
  if (hmx_model_synthetic(&cfg, 7, dt, &plain) || hmx_model_synthetic(&cfg, 7, dt, &prep)) {
    CHECK(0, "synthetic model: %s", hmx_last_error());
  } else {
    char name[96];
    snprintf(name, sizeof name, "test config, %s, %s, %s head", hmx_dtype_name(dt),
             op == HMX_OUTPROJ_DENSE ? "dense" : "hadamard", tied ? "tied" : "untied");
    check_model(plain, prep, cuda, name);
  }
  hmx_model_free(plain);
  hmx_model_free(prep);
}

static void check_gguf(const hmx_backend *cuda, const char *path) {
  hmx_model *plain = NULL, *prep = NULL;
  if (hmx_model_load(path, &plain) || hmx_model_load(path, &prep)) {
    CHECK(0, "%s: %s", path, hmx_last_error());
  } else {
    const char *base = strrchr(path, '/');
    check_model(plain, prep, cuda, base ? base + 1 : path);
  }
  hmx_model_free(plain);
  hmx_model_free(prep);
}

/* The kept-matrix entries' device-tensor checks: a matrix without a GPU
 * copy, and tensors split between host and device memory, are refused with
 * HMX_ERR_INVALID_ARGUMENT and a message that says why. */
static void check_refusals(const hmx_backend *cuda) {
  const hmx_device_ops *d = hmx_device_ops_of(cuda);
  void *buf = NULL;
  if (!d || d->resident_alloc(&buf, 4096 * sizeof(float)) != HMX_OK) {
    CHECK(0, "device buffer: %s", hmx_last_error());
    return;
  }
  static unsigned char q8[96 * 3 * 34]; /* Q8_0 blocks (zeros): 32 values in 34 bytes */
  static float host_y[64];
  hmx_context ctx = {cuda, 1, 0, HMX_TIER_EXACT};
  float *dev = buf;
  hmx_tensor X = hmx_tensor_2d(dev, HMX_F32, 1, 64), Y = hmx_tensor_2d(dev + 1024, HMX_F32, 1, 64);
  hmx_tensor Yh = hmx_tensor_2d(host_y, HMX_F32, 1, 64);
  X.memory = Y.memory = HMX_MEMORY_CUDA;
  const hmx_qmatrix B = {HMX_GGML_Q8_0, q8, 64, 64, HMX_QLAYOUT_ROWS, NULL};
  CHECK(hmx_gemm_quant(&ctx, &X, &B, &Y) == HMX_ERR_INVALID_ARGUMENT &&
            strstr(hmx_last_error(), "GPU copy"),
        "gemm_quant: device tensors with a matrix without a GPU copy: %s", hmx_last_error());
  CHECK(hmx_gemm_quant(&ctx, &X, &B, &Yh) == HMX_ERR_INVALID_ARGUMENT &&
            strstr(hmx_last_error(), "one place"),
        "gemm_quant: a on the device, c on the host: %s", hmx_last_error());
  const hmx_qmatrix W1 = {HMX_GGML_Q8_0, q8, 96, 64, HMX_QLAYOUT_ROWS, NULL};
  const hmx_qmatrix W2 = {HMX_GGML_Q8_0, q8, 64, 96, HMX_QLAYOUT_ROWS, NULL};
  CHECK(hmx_swiglu_quant(&ctx, &X, &W1, &W1, &W2, &Y, NULL, NULL) == HMX_ERR_INVALID_ARGUMENT &&
            strstr(hmx_last_error(), "GPU copies"),
        "swiglu_quant: device tensors with matrices without GPU copies: %s", hmx_last_error());
  CHECK(hmx_swiglu_quant(&ctx, &X, &W1, &W1, &W2, &Yh, NULL, NULL) == HMX_ERR_INVALID_ARGUMENT,
        "swiglu_quant: x on the device, y on the host: %s", hmx_last_error());
  d->resident_free(buf);
}

int main(int argc, char **argv) {
  const hmx_backend *cuda = hmx_backend_find("cuda");
  if (!cuda || !hmx_backend_available(cuda)) {
    printf("backend cuda not available here: skipped\n");
    return 77;
  }
  check_synthetic(cuda, HMX_OUTPROJ_DENSE, 0, HMX_F32);
  check_synthetic(cuda, HMX_OUTPROJ_HADAMARD, 1, HMX_BF16);
  check_synthetic(cuda, HMX_OUTPROJ_DENSE, 1, HMX_F16);
  for (int i = 1; i < argc; i++) check_gguf(cuda, argv[i]);
  check_refusals(cuda);
  return check_finish("test_model_gpu_pass");
}
