/* hmx params: parameter counts by component, dense vs Hadamard output
 * projection, and the memory they take (docs/MODEL.md). */
#include "model_opts.h"

#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx params [--config NAME] [--set KEY=VALUE]...\n\n"
        "Prints the parameters of the config by component with the dense output\n"
        "projection and with the Hadamard one side by side, the weight bytes in f32 and\n"
        "bf16, and the KV cache bytes per token. For the tiny/small/base presets it also\n"
        "prints the counts the Hadamard paper reports.\n\n",
        out);
  hmx_model_opts_help(out);
}

static void row(const char *name, int64_t d, int64_t h) {
  printf("  %-22s %14lld %14lld %+14lld\n", name, (long long)d, (long long)h,
         (long long)(h - d));
}

int hmx_cmd_params(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  hmx_model_opts o;
  hmx_model_opts_init(&o);
  int err = 0;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_model_opts_parse(&a, &o, &err)) {
      if (err) return HMX_EXIT_USAGE;
      continue;
    }
    return hmx_cli_error(HMX_EXIT_USAGE, "params: unknown argument '%s' (see `hmx params --help`)",
                         s);
  }
  if (o.weights || o.dtype >= 0 || o.outproj >= 0)
    return hmx_cli_error(HMX_EXIT_USAGE, "params: takes --config and --set only (it shows both "
                         "output projections)");
  hmx_model_config cd, ch;
  int rc = hmx_model_opts_config("params", &o, HMX_OUTPROJ_DENSE, &cd);
  if (!rc) rc = hmx_model_opts_config("params", &o, HMX_OUTPROJ_DENSE, &ch);
  if (rc) return rc;
  ch.outproj = HMX_OUTPROJ_HADAMARD;
  hmx_param_count pd, ph;
  hmx_status s = hmx_model_param_count(&cd, &pd);
  if (s) return hmx_cli_error(HMX_EXIT_USAGE, "params: %s", hmx_cli_status_message(s));
  s = hmx_model_param_count(&ch, &ph);
  int had_ok = s == HMX_OK;
  if (!had_ok) {
    printf("note: no Hadamard variant: %s\n", hmx_cli_status_message(s));
    ph = pd;
  }
  printf("config %s: %d layers, d_model %d, %d heads x %d (%d KV heads), d_ff %d (SwiGLU), "
         "vocab %d, context %d, %s embeddings\n\n",
         o.config, cd.n_layer, cd.d_model, cd.n_head, cd.head_dim, cd.n_kv_head, cd.d_ff, cd.vocab,
         cd.context, cd.tied ? "tied" : "untied");
  printf("  %-22s %14s %14s %14s\n", "component", "dense W_O", "hadamard", "difference");
  row("token embedding", pd.embedding, ph.embedding);
  row("attention Q, K, V", pd.attn_qkv, ph.attn_qkv);
  row("attention output", pd.attn_out, ph.attn_out);
  row("SwiGLU W1, W3, W2", pd.ffn, ph.ffn);
  row("RMSNorm weights", pd.norms, ph.norms);
  row("LM head (untied)", pd.lm_head, ph.lm_head);
  row("total", pd.total, ph.total);
  printf("  %-22s %13.2fM %13.2fM %13.2f%%\n", "total (millions)", pd.total / 1e6, ph.total / 1e6,
         100.0 * (double)(ph.total - pd.total) / (double)pd.total);
  printf("  %-22s %14.1f %14.1f\n", "weights f32 (MiB)", pd.total * 4.0 / 1048576.0,
         ph.total * 4.0 / 1048576.0);
  printf("  %-22s %14.1f %14.1f\n", "weights bf16 (MiB)", pd.total * 2.0 / 1048576.0,
         ph.total * 2.0 / 1048576.0);
  const double kv = 2.0 * cd.n_layer * cd.n_kv_head * cd.head_dim * 4.0;
  printf("  %-22s %14.0f (f32 K and V, all layers; %.1f MiB at context %d; half with "
         "--kv-dtype bf16|f16)\n",
         "KV cache bytes/token", kv, kv * cd.context / 1048576.0, cd.context);
  static const struct { const char *name; double dense, had; } paper[] = {
      {"tiny", 124, 117}, {"small", 354, 329}, {"base", 757, 701}};
  for (int i = 0; i < 3; i++)
    if (!strcmp(o.config, paper[i].name) && o.nsets == 0 && had_ok)
      printf("\npaper (Hadamard output projection): %gM -> %gM; here %.1fM -> %.1fM "
             "(%+.2f%%, %+.2f%%)\n",
             paper[i].dense, paper[i].had, pd.total / 1e6, ph.total / 1e6,
             100.0 * (pd.total / 1e6 - paper[i].dense) / paper[i].dense,
             100.0 * (ph.total / 1e6 - paper[i].had) / paper[i].had);
  return HMX_EXIT_OK;
}
