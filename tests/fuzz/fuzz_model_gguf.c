/* libFuzzer target for the Llama GGUF model loader (src/model_gguf.c,
 * docs/GGUF.md "Llama models") and the forward pass on what it accepts.
 *
 * Every input goes through hmx_gguf_parse, then hmx_model_from_gguf. A
 * rejection must leave *out NULL, return FORMAT, UNSUPPORTED, SHAPE or
 * NO_MEMORY and set a message. An accepted model is used after the parsed
 * file is freed (AddressSanitizer catches a weight left pointing into it):
 * - its config passes hmx_model_config_check;
 * - a token id outside the vocabulary is refused;
 * - on `ref`, a prefill of three tokens (fewer if the model's context is
 *   shorter; logits of every position) gives the same bits as one-token
 *   decode steps (NaN equal to NaN);
 * - on the best backend of this machine (or HMX_FUZZ_BACKEND: fuzz_backend.h),
 *   after hmx_model_prepare, the same prefill gives the same bits as on `ref`
 *   (the exact tier's promise, docs/NUMERICS.md: same bits on every backend),
 *   whatever the weights hold (NaN, infinities, subnormals, huge block scales).
 * Most of libFuzzer's mutations go to the weights only or rewrite the file
 * with one structural change (LLVMFuzzerCustomMutator below), so that most
 * inputs stay loadable models or reach the loader's checks.
 *
 * Built like the other fuzz targets (tests/t_fuzz.cmake): the loader and the
 * GGUF reader are compiled into the libFuzzer binary with ASan and UBSan, the
 * rest (model runtime, backends) comes from the hadamix library; and always
 * inside tests/fuzz/fuzz_replay.c over corpus_model_gguf/ (written by
 * make_model_seeds.py). */
#include "gguf.h"
#include "model_internal.h"
#include "fuzz_backend.h"
#include "fuzz_mutate_values.h"
#ifdef HMX_LIBFUZZER
#include "fuzz_gguf_rewrite.h" /* the mutator's */
#endif
#include "fuzz_assert.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

#define N_TOK 3

/* How many inputs loaded and ran (printed at exit: a run whose inputs never
 * load checks only the refusals). */
static long n_ran;
static const char *other_name = "?";
static void report(void) {
  fprintf(stderr, "fuzz_model_gguf: %ld models loaded and ran on ref and %s with the same "
          "bits\n", n_ran, other_name);
}

/* The input as a model; the parsed file is freed before the model is used
 * (the model must hold copies). *out is the loader's to set once the input
 * parses as GGUF; *parsed (may be NULL) says whether it did. */
static hmx_status load(const uint8_t *data, size_t size, hmx_model **out, int *parsed) {
  hmx_gguf *f = NULL;
  hmx_status s = hmx_gguf_parse(data, size, "fuzz", &f);
  if (parsed) *parsed = s == HMX_OK;
  if (s) {
    *out = NULL;
    return s;
  }
  s = hmx_model_from_gguf(f, "fuzz", out);
  hmx_gguf_free(f);
  return s;
}

/* For fuzz_replay.c: does the loader accept this input (ok_* / bad_* seeds)? */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size) {
  hmx_model *m;
  hmx_status s = load(data, size, &m, NULL);
  hmx_model_free(m);
  return s;
}

/* Logits of the n_tok tokens: one prefill step (all_logits), or n_tok decode steps. */
static void run(const hmx_context *ctx, const hmx_model *m, const int32_t *tok, int n_tok,
                int decode, float *logits, int64_t vocab) {
  hmx_kv_cache *c = NULL;
  FUZZ_ASSERT(hmx_kv_cache_new(m, n_tok, &c) == HMX_OK);
  const hmx_forward_opts all = {1, NULL, NULL};
  if (!decode) {
    const int32_t *toks = tok;
    const int64_t n = n_tok;
    FUZZ_ASSERT(hmx_model_forward(ctx, m, 1, &c, &toks, &n, &all, logits) == HMX_OK);
  } else {
    for (int i = 0; i < n_tok; i++) {
      const int32_t *toks = tok + i;
      const int64_t n = 1;
      FUZZ_ASSERT(hmx_model_forward(ctx, m, 1, &c, &toks, &n, &all, logits + i * vocab) ==
                  HMX_OK);
    }
  }
  FUZZ_ASSERT(hmx_kv_cache_len(c) == n_tok);
  hmx_kv_cache_free(c);
}

static void check_model(hmx_model *m, const uint8_t *data, size_t size) {
  const hmx_model_config *cfg = hmx_model_get_config(m);
  FUZZ_ASSERT(cfg && hmx_model_config_check(cfg) == HMX_OK);
  const int64_t vocab = cfg->vocab;
  /* N_TOK tokens, or as many as the model's context holds (the loader takes
   * any context from 1) */
  const int n_tok = cfg->context < N_TOK ? cfg->context : N_TOK;
  int32_t tok[N_TOK];
  for (int i = 0; i < N_TOK; i++) /* tokens from the input's bytes */
    tok[i] = (int32_t)(((size > (size_t)i ? data[size - 1 - (size_t)i] : 0) * 7919u + (unsigned)i) %
                       (uint64_t)vocab);
  const hmx_backend *ref = hmx_backend_find("ref");
  FUZZ_ASSERT(ref != NULL);
  const hmx_context rctx = {ref, 1, 0, HMX_TIER_EXACT};
  float *pre = malloc((size_t)(N_TOK * vocab) * sizeof *pre),
        *dec = malloc((size_t)(N_TOK * vocab) * sizeof *dec);
  FUZZ_ASSERT(pre && dec);
  /* a token outside the vocabulary is refused, and the cache is left as it was */
  hmx_kv_cache *c = NULL;
  FUZZ_ASSERT(hmx_kv_cache_new(m, n_tok, &c) == HMX_OK);
  const int32_t bad = (int32_t)vocab, *bp = &bad;
  const int64_t one = 1;
  FUZZ_ASSERT(hmx_model_forward(&rctx, m, 1, &c, &bp, &one, NULL, pre) ==
              HMX_ERR_INVALID_ARGUMENT);
  FUZZ_ASSERT(hmx_kv_cache_len(c) == 0);
  hmx_kv_cache_free(c);

  run(&rctx, m, tok, n_tok, 0, pre, vocab);
  run(&rctx, m, tok, n_tok, 1, dec, vocab);
  const int64_t shape[2] = {n_tok, vocab};
  const hmx_tensor tpre = hmx_tensor_make(pre, HMX_F32, 2, shape),
                   tdec = hmx_tensor_make(dec, HMX_F32, 2, shape);
  FUZZ_ASSERT(fuzz_same_bits(&tpre, &tdec, "fuzz_model_gguf: decode's logits vs prefill's"));

  const hmx_backend *best = fuzz_backend();
  if (best && best != ref) {
    const hmx_context bctx = {best, 1, 0, HMX_TIER_EXACT};
    FUZZ_ASSERT(hmx_model_prepare(m, &bctx, NULL) == HMX_OK);
    run(&bctx, m, tok, n_tok, 0, dec, vocab);
    char what[96];
    snprintf(what, sizeof what, "fuzz_model_gguf: the logits on %s vs ref",
             hmx_backend_name(best));
    FUZZ_ASSERT(fuzz_same_bits(&tpre, &tdec, what));
  }
  other_name = best && best != ref ? hmx_backend_name(best) : "no other backend";
  free(pre);
  free(dec);
}

#ifdef HMX_LIBFUZZER
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Where the data section of a GGUF file starts in data[0..size), or 0 when the
 * file does not parse or has no tensor of 16 bytes or more. The parsed copy
 * hides its position, so the largest tensor's bytes are looked for at the
 * aligned positions where its data could begin. */
static size_t data_start(const uint8_t *data, size_t size) {
  hmx_gguf *f = NULL;
  if (hmx_gguf_parse(data, size, "mutator", &f) != HMX_OK) return 0;
  const hmx_gguf_tensor *big = NULL;
  for (int64_t i = 0; i < hmx_gguf_tensor_count(f); i++) {
    const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, i);
    if (!big || t->nbytes > big->nbytes) big = t;
  }
  size_t start = 0;
  const size_t a = hmx_gguf_alignment(f);
  for (size_t p = a; big && big->nbytes >= 16 && p + big->nbytes <= size; p += a)
    if (p >= big->offset && !memcmp(data + p, big->data, big->nbytes)) {
      start = p - big->offset;
      break;
    }
  hmx_gguf_free(f);
  return start;
}

/* A quarter of the mutations are libFuzzer's own, over the whole file (and
 * every mutation of a file that does not parse). Of a file that parses, the
 * rest change either only the tensor bytes, so that the model stays loadable
 * and the forward passes see new weights, or one thing of its structure with
 * the file rewritten well-formed (fuzz_gguf_rewrite.h), so that the loader's
 * checks of shapes, types and metadata see what byte flips rarely make. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 8 >= 5) {
    const size_t n = fuzz_gguf_rewrite(data, size, max_size, seed >> 3);
    if (n) return n;
  }
  const size_t start = (seed % 8 >= 2) ? data_start(data, size) : 0;
  if (!start || start >= size) return LLVMFuzzerMutate(data, size, max_size);
  fuzz_mutate_values(data, size, start, seed >> 3);
  return size;
}
#endif

/* libFuzzer's coverage comes from the loader (model_gguf.c, model_config.c:
 * tests/t_fuzz.cmake); the GGUF reader is fuzz_gguf's, and instrumenting it
 * here filled the corpus with files that do not parse. These counters
 * (libFuzzer's extra counters, an ELF section) add one feature per loader
 * status x size class (log2 of the file's bytes), so that the corpus keeps
 * models that load, at every size. */
#if defined(HMX_LIBFUZZER) && defined(__linux__)
__attribute__((used, section("__libfuzzer_extra_counters")))
static uint8_t fuzz_features[16][32];
static void fuzz_feature(hmx_status s, size_t size) {
  int c = 0;
  while (c < 31 && (size >> c) > 1) c++;
  fuzz_features[(unsigned)s % 16][c]++;
}
#else
static void fuzz_feature(hmx_status s, size_t size) { (void)s, (void)size; }
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int once;
  if (!once) {
    once = 1;
    atexit(report);
  }
  hmx_model *m = (hmx_model *)(uintptr_t)1; /* the loader must set it */
  int parsed;
  const hmx_status s = load(data, size, &m, &parsed);
  if (!parsed) return 0; /* fuzz_gguf's ground */
  fuzz_feature(s, size);
  if (s != HMX_OK) {
    FUZZ_ASSERT(m == NULL);
    FUZZ_ASSERT(s == HMX_ERR_FORMAT || s == HMX_ERR_UNSUPPORTED || s == HMX_ERR_SHAPE ||
                s == HMX_ERR_NO_MEMORY);
    FUZZ_ASSERT(hmx_last_error()[0] != '\0');
    return 0;
  }
  FUZZ_ASSERT(m != NULL);
  check_model(m, data, size);
  hmx_model_free(m);
  n_ran++;
  return 0;
}
