/* hmx_model_prepare (src/model_prepare.c): laying the projections and the
 * FFN's matrices out in the G16 layout changes no logit by a bit. For every backend this machine runs,
 * the "test" config (dense and Hadamard, tied and untied head, f32, bf16 and
 * f16 weights): the logits of a 7-token prefill (every position) and of 3
 * decode steps equal, by memcmp, those of the same model unprepared on the
 * same backend, and those of the prepared model run on ref (which reads G16
 * by converting back). Also: which backends rewrite how many matrices, that a
 * second call rewrites none, that a rewritten matrix has no tensor view and
 * hmx_model_save refuses the model, and that the memory-mapped tensors of a
 * loaded weights file are left alone.
 *
 * `--backend NAME` checks that backend only, and exits 77 (skipped) when it
 * is not available here: the cuda backend (test_model_prepare_cuda), whose
 * prepare also copies the kept matrices to the GPU, where its host calls
 * read them (docs/MODEL.md "Weights on the GPU"). For it, the test also
 * overwrites a prepared matrix's host bytes: cuda's logits must not change
 * (it reads the GPU copy), ref's must (the planted change is seen at all). */
#include "check.h"
#include "threads.h"
#include "backend.h"
#include "dispatch.h"
#include "hadamix_model.h"
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROMPT 7
#define STEPS 3

/* Logits of a prefill of PROMPT tokens (every position), then STEPS greedy
 * decode steps (their logits appended): [(PROMPT + STEPS) * vocab]. */
static float *run(const hmx_model *m, const hmx_backend *be, int threads) {
  const hmx_model_config *c = hmx_model_get_config(m);
  const int64_t V = c->vocab;
  float *out = malloc((size_t)((PROMPT + STEPS) * V) * sizeof *out);
  hmx_kv_cache *kc = NULL;
  if (!out || hmx_kv_cache_new(m, PROMPT + STEPS, &kc)) {
    free(out);
    return NULL;
  }
  hmx_context ctx = {be, threads, 0, HMX_TIER_EXACT};
  int32_t toks[PROMPT];
  for (int i = 0; i < PROMPT; i++) toks[i] = (int32_t)((37 * i + 11) % V);
  const int32_t *tp = toks;
  int64_t n = PROMPT;
  hmx_forward_opts all = {1, NULL, NULL};
  hmx_status st = hmx_model_forward(&ctx, m, 1, &kc, &tp, &n, &all, out);
  for (int s = 0; !st && s < STEPS; s++) {
    const float *prev = out + (PROMPT - 1 + s) * V;
    int32_t next = 0;
    for (int64_t j = 1; j < V; j++)
      if (prev[j] > prev[next]) next = (int32_t)j;
    const int32_t *np = &next;
    int64_t one = 1;
    st = hmx_model_forward(&ctx, m, 1, &kc, &np, &one, NULL, out + (PROMPT + s) * V);
  }
  hmx_kv_cache_free(kc);
  if (st) {
    fprintf(stderr, "forward on %s: %s\n", hmx_backend_name(be), hmx_last_error());
    free(out);
    return NULL;
  }
  return out;
}

/* Projection matrices of a config: Q, K, V, (O) per layer, the embedding,
 * and the LM head when untied. */
static int projections(const hmx_model_config *c) {
  return c->n_layer * (c->outproj == HMX_OUTPROJ_DENSE ? 4 : 3) + 1 + (c->tied ? 0 : 1);
}

/* Whether backend be's FFN of dtype dt goes to G16: when its swiglu reads
 * G16, or (16-bit weights) when its gemm reads G16 and its swiglu reads
 * neither G16 nor 16-bit weights (neon: hmx_swiglu_quant's composition), or
 * (any dtype) when it reads G16 from GPU copies (cuda: hmx_swiglu_quant
 * hands the three copies to its swiglu in one call). */
static int ffn_rewritten(const hmx_backend *be, hmx_dtype dt) {
  const unsigned w = be->weights16;
  if ((w & HMX_WG16_GEMM) && hmx_device_ops_of(be)) return 1;
  return (w & HMX_WG16_SWIGLU) ||
         (dt != HMX_F32 && (w & HMX_WG16_GEMM) && !(w & HMX_W16_SWIGLU));
}

/* The matrices backend be rewrites for config c in dtype dt: the
 * projections when its gemm reads G16, and W1, W3, W2 of every layer when
 * ffn_rewritten. */
static int rewritten(const hmx_backend *be, const hmx_model_config *c, hmx_dtype dt) {
  return ((be->weights16 & HMX_WG16_GEMM) ? projections(c) : 0) +
         (ffn_rewritten(be, dt) ? 3 * c->n_layer : 0);
}

/* hmx_model_prepare for backend be (2 threads, exact tier), checked to
 * succeed; returns the number of matrices rewritten. */
static int prepare(hmx_model *m, const hmx_backend *be) {
  hmx_context ctx = {be, 2, 0, HMX_TIER_EXACT};
  int changed = -1;
  CHECK(hmx_model_prepare(m, &ctx, &changed) == HMX_OK, "prepare: %s", hmx_last_error());
  return changed;
}

/* A backend with device kernels (cuda): every kept matrix that a gemm reads
 * has a GPU copy, and the forward reads the copies: with layer 0's Q (and
 * layer 1's W2) overwritten on the host, be's logits stay those of the plain
 * model while ref's (which reads the host bytes) change; restored after. */
static void check_gpu_copies(const hmx_model *plain, hmx_model *prep, const hmx_backend *be,
                             const char *dn) {
  int copies = 0, kept = 0;
  for (int i = 0; i < prep->n_weights; i++)
    if (prep->q[i].data && (&prep->weights[i] != prep->tok_emb || prep->lm_head == prep->tok_emb)) {
      kept++;
      copies += prep->q[i].dev != NULL;
    }
  CHECK(kept > 0 && copies == kept, "%s %s: %d of %d kept matrices have a GPU copy",
        hmx_backend_name(be), dn, copies, kept);
  const hmx_qmatrix *q[2] = {hmx_model_qweight(prep, prep->layers[0].wq),
                             hmx_model_qweight(prep, prep->layers[1].w2)};
  size_t bytes[2];
  unsigned char *saved[2] = {NULL, NULL};
  for (int j = 0; j < 2; j++) {
    CHECK(q[j] && q[j]->dev, "%s %s: matrix %d has no GPU copy", hmx_backend_name(be), dn, j);
    if (!q[j] || !q[j]->dev) return;
    bytes[j] = (size_t)(q[j]->n * q[j]->k) * hmx_dtype_size(hmx_qtype_dtype(q[j]->type));
    saved[j] = malloc(bytes[j]);
    if (saved[j]) {
      memcpy(saved[j], q[j]->data, bytes[j]);
      memset((void *)(uintptr_t)q[j]->data, 0x3c, bytes[j]); /* 0x3c3c..: 0.0115 or 1.06 */
    }
  }
  const int64_t n = (int64_t)(PROMPT + STEPS) * hmx_model_get_config(plain)->vocab;
  float *a = run(plain, be, 1), *b = run(prep, be, 1), *r = run(prep, hmx_backend_find("ref"), 1);
  CHECK(a && b && r, "forward failed");
  if (a && b && r) {
    CHECK(memcmp(a, b, (size_t)n * sizeof *a) == 0, "%s %s: the logits changed with the host "
          "bytes: the GPU copies are not what the forward reads", hmx_backend_name(be), dn);
    CHECK(memcmp(a, r, (size_t)n * sizeof *a) != 0, "%s %s: overwriting the host bytes changed "
          "no logit on ref either (the check cannot fail)", hmx_backend_name(be), dn);
  }
  for (int j = 0; j < 2; j++)
    if (saved[j]) memcpy((void *)(uintptr_t)q[j]->data, saved[j], bytes[j]), free(saved[j]);
  free(a);
  free(b);
  free(r);
}

static void check_variant(const hmx_backend *be, hmx_outproj op, int tied, hmx_dtype dt) {
  hmx_model_config cfg;
  hmx_model_preset("test", op, &cfg);
  cfg.tied = tied;
  const char *dn = hmx_dtype_name(dt);
  hmx_model *plain = NULL, *prep = NULL;
  if (hmx_model_synthetic(&cfg, 5, dt, &plain) || hmx_model_synthetic(&cfg, 5, dt, &prep)) {
    CHECK(0, "synthetic model: %s", hmx_last_error());
    hmx_model_free(plain);
    return;
  }
  const int changed = prepare(prep, be);
  const int reads_g16 = (be->weights16 & HMX_WG16_GEMM) != 0;
  const int ffn_g16 = ffn_rewritten(be, dt);
  CHECK(changed == rewritten(be, &cfg, dt), "%s %s: %d matrices rewritten, %d expected",
        hmx_backend_name(be), dn, changed, rewritten(be, &cfg, dt));
  const int again = prepare(prep, be);
  CHECK(again == 0, "second prepare rewrote %d", again);
  if (reads_g16) {
    CHECK(hmx_model_weight(prep, "layers.0.attn.wq") == NULL, "a rewritten matrix has a view");
    CHECK((hmx_model_weight(prep, "layers.1.ffn.w2") == NULL) == ffn_g16,
          "the FFN %s rewritten", ffn_g16 ? "was not" : "was");
    CHECK(hmx_model_save(prep, "/nonexistent-dir/x.safetensors") == HMX_ERR_UNSUPPORTED,
          "save of a prepared model not refused");
  }
  const int64_t n = (int64_t)(PROMPT + STEPS) * cfg.vocab;
  const hmx_backend *ref = hmx_backend_find("ref");
  for (int threads = 1; threads <= test_thread_max(2); threads++) {
    float *a = run(plain, be, threads), *b = run(prep, be, threads);
    float *r = threads == 1 ? run(prep, ref, 1) : NULL;
    CHECK(a && b, "forward failed");
    if (a && b)
      CHECK(memcmp(a, b, (size_t)n * sizeof *a) == 0, "%s %s %s tied %d, %d threads: prepared "
            "logits differ", hmx_backend_name(be), dn, op == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
            tied, threads);
    if (r) { /* ref on the prepared model = ref on the plain one */
      float *rp = run(plain, ref, 1);
      CHECK(rp && memcmp(rp, r, (size_t)n * sizeof *r) == 0, "%s %s: ref on the model prepared "
            "for it differs", hmx_backend_name(be), dn);
      free(rp);
    }
    free(a);
    free(b);
    free(r);
  }
  if (hmx_device_ops_of(be)) check_gpu_copies(plain, prep, be, dn);
  hmx_model_free(plain);
  hmx_model_free(prep);
}

/* A loaded weights file: its memory-mapped tensors stay; logits unchanged.
 * Weights files are safetensors: without cJSON there is none to load. */
#if HMX_HAVE_CJSON
static void check_loaded(const hmx_backend *be, const char *dir) {
  hmx_model_config cfg;
  hmx_model_preset("test", HMX_OUTPROJ_DENSE, &cfg);
  hmx_model *m = NULL, *l = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/test_model_prepare.safetensors", dir);
  if (hmx_model_synthetic(&cfg, 9, HMX_F32, &m) || hmx_model_save(m, path) ||
      hmx_model_load(path, &l)) {
    CHECK(0, "save/load: %s", hmx_last_error());
    hmx_model_free(m);
    return;
  }
  const int changed = prepare(l, be);
  CHECK(changed >= 0 && changed <= rewritten(be, &cfg, HMX_F32), "loaded: %d rewritten", changed);
  float *a = run(m, be, 2), *b = run(l, be, 2);
  CHECK(a && b && memcmp(a, b, (size_t)((PROMPT + STEPS) * cfg.vocab) * sizeof *a) == 0,
        "%s: loaded + prepared logits differ", hmx_backend_name(be));
  free(a);
  free(b);
  hmx_model_free(m);
  hmx_model_free(l);
  remove(path);
}
#endif

int main(int argc, char **argv) {
  const char *only = NULL;
  if (argc > 2 && !strcmp(argv[1], "--backend")) {
    only = argv[2];
    argv += 2, argc -= 2;
    const hmx_backend *b = hmx_backend_find(only);
    if (!b || !hmx_backend_available(b)) {
      printf("backend %s not available here: skipped\n", only);
      return 77;
    }
  }
  const char *dir = argc > 1 ? argv[1] : ".";
  int g16 = 0;
  CHECK(hmx_model_prepare(NULL, NULL, NULL) == HMX_ERR_INVALID_ARGUMENT, "NULL model accepted");
  for (int bi = 0; bi < hmx_backend_count(); bi++) {
    const hmx_backend *be = hmx_backend_at(bi);
    /* cuda only when asked for (test_model_prepare_cuda, labelled cuda) */
    if (!hmx_backend_available(be) || !be->gemm ||
        (only ? strcmp(hmx_backend_name(be), only) != 0 : !strcmp(hmx_backend_name(be), "cuda")))
      continue;
    printf("%s: %s%s\n", hmx_backend_name(be),
           (be->weights16 & HMX_WG16_GEMM) ? "reads G16: projections rewritten" : "unchanged",
           (be->weights16 & HMX_WG16_SWIGLU) ? ", FFN rewritten" : "");
    g16 += (be->weights16 & HMX_WG16_GEMM) != 0;
    static const hmx_dtype dts[] = {HMX_F32, HMX_BF16, HMX_F16};
    for (int op = 0; op < 2; op++)
      for (int tied = 0; tied <= 1; tied++)
        for (int d = 0; d < 3; d++)
          check_variant(be, op ? HMX_OUTPROJ_HADAMARD : HMX_OUTPROJ_DENSE, tied, dts[d]);
#if HMX_HAVE_CJSON
    check_loaded(be, dir);
#else
    (void)dir;
#endif
  }
  if (!g16) printf("note: no backend here reads G16 (the x86 ones do); only the no-op was checked\n");
  return check_finish("test_model_prepare");
}
