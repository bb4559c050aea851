/* hmx diff --model: run the model on two backends and name the first layer
 * and intermediate tensor where their bits differ (hmx_model_diff). */
#include "model_opts.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx diff --model --backend A --vs B [--prompt TEXT | --tokens IDS]\n"
        "                [--threads N] [--threads-vs N] [model options]\n\n"
        "Runs one forward pass of the prompt (default: 16 bytes of text) on backend A and\n"
        "on backend B and compares every intermediate tensor in execution order (embed;\n"
        "per layer attn_norm q k v q_rope k_rope attn attn_out resid_attn ffn_norm ffn\n"
        "resid_ffn; final_norm logits). Prints the first tensor whose bits differ (NaN\n"
        "equals NaN), its layer, first index, both values, and how many elements differ.\n\n"
        "exit status: 0 identical, 1 different (or a failure), 2 usage error\n\n",
        out);
  hmx_model_opts_help(out);
}

int hmx_cmd_diff_model(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  hmx_model_opts mo;
  hmx_model_opts_init(&mo);
  mo.config = "test";
  const char *prompt = NULL, *toklist = NULL, *v = NULL;
  const hmx_backend *ba = NULL, *bb = NULL;
  int ta = 0, tb = 0, err = 0;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_args_flag(&a, "--model")) {
    } else if (hmx_model_opts_parse(&a, &mo, &err)) {
    } else if (hmx_args_value(&a, "--backend", &v, &err)) {
      if (!err && hmx_parse_backend("diff", v, &ba)) err = 1;
    } else if (hmx_args_value(&a, "--vs", &v, &err)) {
      if (!err && hmx_parse_backend("diff", v, &bb)) err = 1;
    } else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("diff", v, &ta)) err = 1;
    } else if (hmx_args_value(&a, "--threads-vs", &v, &err)) {
      if (!err && hmx_parse_threads("diff", v, &tb)) err = 1;
    } else if (hmx_args_value(&a, "--prompt", &v, &err)) {
      if (!err) prompt = v;
    } else if (hmx_args_value(&a, "--tokens", &v, &err)) {
      if (!err) toklist = v;
    } else
      return hmx_cli_error(HMX_EXIT_USAGE, "diff: unknown argument '%s' with --model (see `hmx "
                           "diff --model --help`)", s);
    if (err) return HMX_EXIT_USAGE;
  }
  if (!ba || !bb)
    return hmx_cli_error(HMX_EXIT_USAGE, "diff: --model needs --backend A and --vs B");
  for (int i = 0; i < 2; i++) {
    const hmx_backend *b = i ? bb : ba;
    if (!hmx_backend_available(b))
      return hmx_cli_unavailable("diff", b);
  }
  int32_t *toks = NULL;
  int64_t n = 0;
  int rc = hmx_prompt_tokens("diff", prompt, toklist, "hadamix: bits!\n", &toks, &n);
  if (rc) return rc;
  hmx_model *m = NULL;
  rc = hmx_model_opts_open("diff", &mo, &m);
  if (!rc) {
    hmx_context ca = {ba, ta, 0, HMX_TIER_DEFAULT}, cb = {bb, tb, 0, HMX_TIER_DEFAULT};
    hmx_model_diff_report r;
    hmx_status st = hmx_model_diff(&ca, &cb, m, toks, n, &r);
    if (st) rc = hmx_cli_error(HMX_EXIT_FAIL, "diff: %s", hmx_cli_status_message(st));
    else {
      const hmx_model_config *c = hmx_model_get_config(m);
      printf("diff --model: %d layers, d %d, %s, %s weights, %lld tokens; A = %s (%d threads), "
             "B = %s (%d threads)\n", c->n_layer, c->d_model,
             c->outproj == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
             hmx_dtype_name(hmx_model_dtype(m)), (long long)n, hmx_backend_name(ba), ta,
             hmx_backend_name(bb), tb);
      if (!r.differs) {
        printf("tensors compared: %d\nresult: identical\n", r.tensors_compared);
      } else {
        char where[48];
        if (r.layer >= 0) snprintf(where, sizeof where, "layer %d", r.layer);
        else snprintf(where, sizeof where, "outside the layers");
        if (r.index < 0)
          printf("first difference: %s, tensor %s: the runs produced different tensors\n", where,
                 r.tensor);
        else
          printf("first difference: %s, tensor %s, index %lld: A = %.9g, B = %.9g "
                 "(%lld elements differ, max abs %.3g)\n", where, r.tensor, (long long)r.index,
                 r.a, r.b, (long long)r.n_different, r.max_abs);
        printf("tensors compared: %d\nresult: DIFFERENT\n", r.tensors_compared);
        rc = HMX_EXIT_FAIL;
      }
    }
  }
  hmx_model_free(m);
  free(toks);
  return rc;
}
