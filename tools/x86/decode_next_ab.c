/* hmx-decode-next-ab: a model's decode with the one-token G16 GEMV's
 * next-pass prefetch (gemv_next_kib, src/tuning.h) varied step by step in
 * one process. Each variant is the current tuning profile with that field
 * replaced, and has its own KV cache, filled by the same prompt; the decode
 * steps then take turns, each round of steps starting with a different
 * variant, so that every variant meets the same moments of a shared machine
 * (this VM's bandwidth moves by up to 2x within minutes). Each step's time
 * is charged op by op as hmx-bench-decode-ops does (the forward pass's trace
 * callback: the time since the previous callback goes to the tensor just
 * produced). A prefetch changes no value: every variant's logits are the
 * same bits, which the tool checks step by step.
 *
 *   hmx-decode-next-ab MODEL [--threads N] [--steps S] [--prompt P]
 *                      [--next 0,64,256] [--kv-dtype f32|bf16|f16]
 *
 * MODEL is a preset (tiny, small, ...: synthetic f32 weights) or a model
 * file (a GGUF, say). Session 52 chose the zen3 and intel profiles' 64 KiB
 * with it and with hmx-gemv-prefetch-ab --next (docs/results/session52/). */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"
#include "hadamix_model.h"
#include "tuning.h" /* src/: the x86 tuning profiles */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool_clock.h"
#include "../op_times.h"

#define MAX_VARIANTS HMX_OP_VARIANTS

static int usage(void) {
  fprintf(stderr, "usage: hmx-decode-next-ab MODEL [--threads N] [--steps S] [--prompt P] "
                  "[--next KIB,KIB,... (up to %d)] [--kv-dtype f32|bf16|f16]\n", MAX_VARIANTS);
  return 2;
}

static int fail(const char *what) {
  fprintf(stderr, "hmx-decode-next-ab: %s: %s\n", what, hmx_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') return usage();
  const char *model = argv[1], *kvs = "f32";
  int threads = 2, steps = 100, prompt = 512, nv = 2, kib[MAX_VARIANTS] = {0, 64};
  for (int i = 2; i < argc; i++) {
    const int more = i + 1 < argc;
    if (!strcmp(argv[i], "--threads") && more) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--steps") && more) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--prompt") && more) prompt = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--kv-dtype") && more) kvs = argv[++i];
    else if (!strcmp(argv[i], "--next") && more) {
      nv = 0;
      for (char *s = argv[++i], *end; *s; s = *end == ',' ? end + 1 : end) {
        const long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1 << 20 || nv == MAX_VARIANTS || (*end && *end != ','))
          return usage();
        kib[nv++] = (int)v;
      }
    } else {
      return usage();
    }
  }
  const hmx_dtype kvdt = !strcmp(kvs, "bf16") ? HMX_BF16 : !strcmp(kvs, "f16") ? HMX_F16 : HMX_F32;
  if (nv < 1 || threads < 1 || steps < 1 || prompt < 1 ||
      (kvdt == HMX_F32 && strcmp(kvs, "f32") != 0))
    return usage();
  hmx_model_config cfg;
  hmx_model *m = NULL;
  if (hmx_model_preset(model, HMX_OUTPROJ_DENSE, &cfg) == HMX_OK) {
    if (hmx_model_synthetic(&cfg, 1, HMX_F32, &m) != HMX_OK) return fail("synthetic weights");
  } else if (hmx_model_load(model, &m) != HMX_OK) {
    return fail(model);
  }
  cfg = *hmx_model_get_config(m);
  if ((int64_t)prompt + steps > cfg.context) {
    fprintf(stderr, "hmx-decode-next-ab: prompt + steps > context (%d)\n", cfg.context);
    return 2;
  }
  hmx_context ctx = {NULL, threads, 0, HMX_TIER_EXACT};
  int changed = 0;
  if (hmx_model_prepare(m, &ctx, &changed) != HMX_OK) return fail("prepare");
  hmx_x86_tuning prof[MAX_VARIANTS];
  hmx_kv_cache *kv[MAX_VARIANTS] = {NULL};
  int32_t *tok = malloc(sizeof(int32_t) * (size_t)prompt);
  float *logits = malloc(sizeof(float) * (size_t)cfg.vocab * 2);
  if (!tok || !logits) {
    fprintf(stderr, "hmx-decode-next-ab: out of memory\n");
    return 1;
  }
  for (int i = 0; i < prompt; i++) tok[i] = (int32_t)((i * 7919) % cfg.vocab);
  hmx_op_times t;
  memset(&t, 0, sizeof t);
  hmx_forward_opts opts = {0, hmx_op_times_trace, &t};
  for (int v = 0; v < nv; v++) {
    prof[v] = *hmx_x86_tuning_current();
    prof[v].gemv_next_kib = kib[v];
    const int32_t *tp = tok;
    int64_t n = prompt;
    if (hmx_kv_cache_new_typed(m, prompt + steps, kvdt, &kv[v]) != HMX_OK) return fail("kv cache");
    if (hmx_model_forward(&ctx, m, 1, &kv[v], &tp, &n, &opts, logits) != HMX_OK)
      return fail("prefill");
  }
  double total[MAX_VARIANTS] = {0};
  int differ = 0;
  for (int s = 0; s < steps; s++)
    for (int r = 0; r < nv; r++) {
      const int v = (r + s) % nv;
      const int32_t one_tok = (int32_t)((s * 31) % cfg.vocab), *p1 = &one_tok;
      int64_t one = 1;
      float *out = logits + (r > 0 ? cfg.vocab : 0);
      hmx_x86_tuning_force(&prof[v]);
      t.variant = v;
      t.on = 1;
      t.last = hmx_tool_seconds();
      const double t0 = t.last;
      if (hmx_model_forward(&ctx, m, 1, &kv[v], &p1, &one, &opts, out) != HMX_OK)
        return fail("decode");
      total[v] += hmx_tool_seconds() - t0;
      t.on = 0;
      if (r > 0) differ |= memcmp(out, logits, sizeof(float) * (size_t)cfg.vocab) != 0;
    }
  hmx_x86_tuning_force(NULL);
  printf("hmx-decode-next-ab: %s, %s KV cache, %d threads, prompt %d, %d decode steps a "
         "variant, profile %s; ms a step by op (the variants' steps interleaved)\n%-12s", model,
         kvs, threads, prompt, steps, hmx_x86_tuning_current()->name, "next KiB");
  for (int v = 0; v < nv; v++) printf(" %9d", kib[v]);
  printf("\n%-12s", "step");
  for (int v = 0; v < nv; v++) printf(" %9.3f", total[v] / steps * 1e3);
  printf("\n%-12s", "tokens/s");
  for (int v = 0; v < nv; v++) printf(" %9.1f", steps / total[v]);
  printf("\n");
  for (int i = 0; i < t.n; i++) {
    printf("%-12s", t.name[i]);
    for (int v = 0; v < nv; v++) printf(" %9.3f", t.sec[v][i] / steps * 1e3);
    printf("\n");
  }
  printf("logits: %s\n", differ ? "DIFFER between the variants" : "the same bits in every step");
  for (int v = 0; v < nv; v++) hmx_kv_cache_free(kv[v]);
  free(tok);
  free(logits);
  hmx_model_free(m);
  return differ;
}
