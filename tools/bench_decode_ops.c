/* hmx-bench-decode-ops: where a decode step's time goes, op by op. Builds a
 * synthetic model (prepared as hmx generate prepares it), prefills PROMPT
 * tokens, then times STEPS decode steps with the forward pass's trace
 * callback: the time since the previous callback is charged to the tensor
 * just produced (so "q" is the fused Q/K/V product, "attn" the attention
 * over the KV cache). Each op's bytes (its weights, or for attention the
 * cache it reads) over its time give its GB/s, printed next to the machine's
 * read bandwidth measured in the same process just before and after (this
 * VM's bandwidth moves by up to 2x within minutes, so only a same-moment
 * probe says how close an op is to it).
 *
 *   hmx-bench-decode-ops [f32|bf16|f16] [threads] [config] [steps] [prompt] [kv]
 *   (defaults: bf16 2 tiny 64 512 f32; dense output projection; kv: the KV
 *   cache's dtype, f32, bf16 or f16; config: a preset, or a model file
 *   (hmx_model_load: a GGUF, a weights file, a checkpoint directory), whose
 *   weights are then the file's and the first argument is ignored; then
 *   only the times are printed, as the weights' bytes by op depend on their
 *   GGUF types) */
#define _POSIX_C_SOURCE 200809L
#include "hadamix.h"
#include "hadamix_model.h"
#include "read_bandwidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_clock.h"
#include "op_times.h"

/* Bytes one decode step's op reads (weights; the KV cache for attention at
 * an average depth `depth`), or 0 when it is not a streaming op. */
static double op_bytes(const char *op, const hmx_model_config *c, size_t es, size_t kves,
                       double depth) {
  const double d = c->d_model, hd = c->head_dim, L = c->n_layer;
  if (!strcmp(op, "q")) return L * d * (c->n_head + 2.0 * c->n_kv_head) * hd * (double)es;
  if (!strcmp(op, "attn_out") && c->outproj == HMX_OUTPROJ_DENSE)
    return L * c->n_head * hd * d * (double)es;
  if (!strcmp(op, "ffn")) return L * 3.0 * d * c->d_ff * (double)es;
  if (!strcmp(op, "logits")) return (double)c->vocab * d * (double)es;
  if (!strcmp(op, "attn")) return L * 2.0 * c->n_kv_head * hd * depth * (double)kves;
  return 0;
}

/* The float dtype named s (hmx_dtype_name: "f32", "bf16", "f16") into *dt;
 * 0 when it is none of them. */
static int parse_dtype(const char *s, hmx_dtype *dt) {
  static const hmx_dtype floats[] = {HMX_F32, HMX_BF16, HMX_F16};
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, hmx_dtype_name(floats[i]))) {
      *dt = floats[i];
      return 1;
    }
  return 0;
}

static int fail(const char *what) {
  fprintf(stderr, "hmx-bench-decode-ops: %s: %s\n", what, hmx_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *dts = argc > 1 ? argv[1] : "bf16";
  const int threads = argc > 2 ? atoi(argv[2]) : 2;
  const char *config = argc > 3 ? argv[3] : "tiny";
  const int steps = argc > 4 ? atoi(argv[4]) : 64;
  const int prompt = argc > 5 ? atoi(argv[5]) : 512;
  const char *kvs = argc > 6 ? argv[6] : "f32";
  hmx_dtype dt, kvdt;
  if (!parse_dtype(dts, &dt) || !parse_dtype(kvs, &kvdt)) {
    fprintf(stderr, "usage: hmx-bench-decode-ops [f32|bf16|f16] [threads] [config] [steps] "
                    "[prompt] [kv cache: f32|bf16|f16]\n");
    return 2;
  }
  hmx_model_config cfg;
  hmx_model *m = NULL;
  const int from_file = hmx_model_preset(config, HMX_OUTPROJ_DENSE, &cfg) != HMX_OK;
  if (from_file) {
    if (hmx_model_load(config, &m) != HMX_OK) return fail(config);
    cfg = *hmx_model_get_config(m);
  }
  if (threads < 1 || steps < 1 || prompt < 1 || (int64_t)prompt + steps > cfg.context) {
    hmx_model_free(m);
    fprintf(stderr, "hmx-bench-decode-ops: need threads >= 1, steps >= 1, prompt >= 1 and "
                    "prompt + steps <= context (%d)\n", cfg.context);
    return 2;
  }
  hmx_kv_cache *kv = NULL;
  if (!from_file && hmx_model_synthetic(&cfg, 1, dt, &m) != HMX_OK)
    return fail("synthetic weights");
  hmx_context ctx = {NULL, threads, 0, HMX_TIER_DEFAULT};
  int changed = 0;
  if (hmx_model_prepare(m, &ctx, &changed) != HMX_OK) return fail("prepare");
  if (hmx_kv_cache_new_typed(m, prompt + steps, kvdt, &kv) != HMX_OK) return fail("kv cache");
  int32_t *tok = malloc(sizeof(int32_t) * (size_t)prompt);
  float *logits = malloc(sizeof(float) * (size_t)cfg.vocab);
  if (!tok || !logits) {
    fprintf(stderr, "hmx-bench-decode-ops: out of memory\n");
    return 1;
  }
  for (int i = 0; i < prompt; i++) tok[i] = (int32_t)((i * 7919) % cfg.vocab);
  hmx_op_times t;
  memset(&t, 0, sizeof t);
  hmx_forward_opts opts = {0, hmx_op_times_trace, &t};
  const int32_t *tp = tok;
  int64_t nt = prompt;
  if (hmx_model_forward(&ctx, m, 1, &kv, &tp, &nt, &opts, logits) != HMX_OK)
    return fail("prefill");
  const double bw0 = hmx_read_bandwidth(threads);
  double total = 0;
  for (int s = 0; s < steps; s++) {
    const int32_t one_tok = (int32_t)((s * 31) % cfg.vocab), *p1 = &one_tok;
    int64_t one = 1;
    t.on = 1;
    t.last = hmx_tool_seconds();
    const double t0 = t.last;
    if (hmx_model_forward(&ctx, m, 1, &kv, &p1, &one, &opts, logits) != HMX_OK)
      return fail("decode");
    total += hmx_tool_seconds() - t0;
    t.on = 0;
  }
  const double bw1 = hmx_read_bandwidth(threads);
  const double depth = prompt + (steps - 1) / 2.0;
  printf("hmx-bench-decode-ops: %s %s, %s KV cache, %d threads, prompt %d, %d decode steps: "
         "%.3f ms/step (%.1f tokens/s)\nread bandwidth (%d threads, same process): %.1f GB/s "
         "before, %.1f after\n\n%-12s %9s %6s %9s %8s\n", config, dts, kvs, threads, prompt, steps,
         total / steps * 1e3, steps / total, threads, bw0, bw1, "op", "ms/step", "share",
         "MB/step", "GB/s");
  for (int i = 0; i < t.n; i++) {
    const double ms = t.sec[0][i] / steps * 1e3,
                 mb = from_file ? 0
                                : op_bytes(t.name[i], &cfg, hmx_dtype_size(dt),
                                           hmx_dtype_size(kvdt), depth) / 1e6;
    if (mb > 0)
      printf("%-12s %9.3f %5.1f%% %9.1f %8.1f\n", t.name[i], ms, 100 * t.sec[0][i] / total, mb,
             mb / ms);
    else
      printf("%-12s %9.3f %5.1f%%\n", t.name[i], ms, 100 * t.sec[0][i] / total);
  }
  free(tok);
  free(logits);
  hmx_kv_cache_free(kv);
  hmx_model_free(m);
  return 0;
}
