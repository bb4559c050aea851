/* hmx-bench-layout: decode speed of a model with its matrices as stored
 * (rows) and after hmx_model_prepare (G16, docs/MODEL.md "Weight layout"),
 * in one process, alternating: round k runs STEPS decode steps on each model
 * (which goes first alternates), and the ratio of the two times is one
 * sample. Separate processes (hmx bench-model --weight-layout rows|auto)
 * see this VM's bandwidth drift by 10-20% between runs; neighbours in one
 * process see the same drift.
 *
 *   hmx-bench-layout [f32|bf16|f16] [rounds] [threads] [config]
 *   (defaults: f32 20 2 tiny; dense output projection, prompt 64)
 *
 * Prints tokens/s of each over all rounds and the median (and range) of the
 * per-round speed ratios G16 / rows. */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"
#include "hadamix_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool_clock.h"

#define STEPS 16
#define PROMPT 64
#define MAX_ROUNDS 200

static int fail(const char *what) {
  fprintf(stderr, "hmx-bench-layout: %s: %s\n", what, hmx_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *dtn = argc > 1 ? argv[1] : "f32";
  const int rounds = argc > 2 ? atoi(argv[2]) : 20, threads = argc > 3 ? atoi(argv[3]) : 2;
  const char *config = argc > 4 ? argv[4] : "tiny";
  const hmx_dtype dt = !strcmp(dtn, "bf16") ? HMX_BF16 : !strcmp(dtn, "f16") ? HMX_F16 : HMX_F32;
  if ((strcmp(dtn, "f32") && dt == HMX_F32) || rounds < 1 || rounds > MAX_ROUNDS || threads < 0) {
    fprintf(stderr, "usage: hmx-bench-layout [f32|bf16|f16] [rounds 1..%d] [threads] [config]\n",
            MAX_ROUNDS);
    return 2;
  }
  hmx_model_config cfg;
  if (hmx_model_preset(config, HMX_OUTPROJ_DENSE, &cfg)) return fail("config");
  hmx_model *m[2] = {NULL, NULL};
  hmx_kv_cache *kc[2] = {NULL, NULL};
  hmx_context ctx = {NULL, threads, 0, HMX_TIER_EXACT};
  int changed = 0;
  if (hmx_model_synthetic(&cfg, 1, dt, &m[0]) || hmx_model_synthetic(&cfg, 1, dt, &m[1]))
    return fail("model");
  if (hmx_model_prepare(m[1], &ctx, &changed)) return fail("prepare");
  float *logits = malloc((size_t)cfg.vocab * sizeof *logits);
  if (!logits) return fail("out of memory");
  const int64_t capacity = PROMPT + (int64_t)rounds * STEPS + 1;
  if (capacity > cfg.context) {
    fprintf(stderr, "hmx-bench-layout: %d rounds exceed the context (%d)\n", rounds, cfg.context);
    return 2;
  }
  for (int i = 0; i < 2; i++) {
    int32_t toks[PROMPT];
    for (int j = 0; j < PROMPT; j++) toks[j] = (int32_t)((7 * j + 3) % cfg.vocab);
    const int32_t *tp = toks;
    int64_t n = PROMPT;
    if (hmx_kv_cache_new(m[i], capacity, &kc[i]) ||
        hmx_model_forward(&ctx, m[i], 1, &kc[i], &tp, &n, NULL, logits))
      return fail("prefill");
  }
  double ratio[MAX_ROUNDS], total[2] = {0, 0};
  for (int k = 0; k < rounds; k++) {
    double t[2];
    for (int v = 0; v < 2; v++) {
      const int i = (v + k) & 1; /* alternate which goes first */
      const int32_t tok = 5, *tp = &tok;
      int64_t one = 1;
      const double t0 = hmx_tool_seconds();
      for (int s = 0; s < STEPS; s++)
        if (hmx_model_forward(&ctx, m[i], 1, &kc[i], &tp, &one, NULL, logits))
          return fail("decode");
      t[i] = hmx_tool_seconds() - t0;
      total[i] += t[i];
    }
    ratio[k] = t[0] / t[1];
  }
  qsort(ratio, (size_t)rounds, sizeof *ratio, hmx_tool_cmp_double);
  printf("config %s, %s weights, backend %s, %d threads: %d matrices in G16\n", config, dtn,
         hmx_backend_name(hmx_backend_default()), threads, changed);
  printf("decode: rows %.2f tokens/s, G16 %.2f tokens/s; G16 / rows per round: median %.3fx "
         "(%.3f .. %.3f, %d rounds of %d steps)\n",
         rounds * STEPS / total[0], rounds * STEPS / total[1], ratio[rounds / 2], ratio[0],
         ratio[rounds - 1], rounds, STEPS);
  for (int i = 0; i < 2; i++) {
    hmx_kv_cache_free(kc[i]);
    hmx_model_free(m[i]);
  }
  free(logits);
  return 0;
}
