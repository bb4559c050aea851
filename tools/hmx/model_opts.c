/* Model options shared by the model subcommands (tools/hmx/model_opts.h). */
#define _POSIX_C_SOURCE 200809L
#include "model_opts.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void hmx_model_opts_init(hmx_model_opts *o) {
  memset(o, 0, sizeof *o);
  o->config = "tiny";
  o->outproj = -1;
  o->dtype = -1;
  o->kv_dtype = -1;
  o->weights_seed = 1;
}

static int parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || errno || s[0] == '-')
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: %s '%s' is not a non-negative integer", cmd, opt, s);
  *out = (uint64_t)v;
  return 0;
}

int hmx_model_opts_parse(hmx_args *a, hmx_model_opts *o, int *err) {
  const char *v = NULL;
  /* --model FILE is the same (the name the GGUF users expect); `diff` reads
   * its own --model flag before these options */
  if (hmx_args_value(a, "--weights", &v, err) || hmx_args_value(a, "--model", &v, err)) {
    if (!*err) o->weights = v;
  } else if (hmx_args_value(a, "--config", &v, err)) {
    if (!*err) {
      o->config = v;
      o->config_given = 1;
    }
  } else if (hmx_args_value(a, "--outproj", &v, err)) {
    if (*err) return 1;
    if (!strcmp(v, "dense")) o->outproj = HMX_OUTPROJ_DENSE;
    else if (!strcmp(v, "hadamard")) o->outproj = HMX_OUTPROJ_HADAMARD;
    else {
      hmx_cli_error(HMX_EXIT_USAGE, "%s: --outproj '%s' is not dense or hadamard", a->cmd, v);
      *err = 1;
    }
  } else if (hmx_args_value(a, "--dtype", &v, err)) {
    if (!*err && hmx_parse_dtype(a->cmd, v, &o->dtype)) *err = 1;
  } else if (hmx_args_value(a, "--kv-dtype", &v, err)) {
    if (!*err && hmx_parse_dtype_opt(a->cmd, "--kv-dtype", v, &o->kv_dtype)) *err = 1;
  } else if (hmx_args_value(a, "--weight-layout", &v, err)) {
    if (*err) return 1;
    if (!strcmp(v, "rows") || !strcmp(v, "auto")) o->rows_layout = !strcmp(v, "rows");
    else {
      hmx_cli_error(HMX_EXIT_USAGE, "%s: --weight-layout '%s' is not auto or rows", a->cmd, v);
      *err = 1;
    }
  } else if (hmx_args_value(a, "--weights-seed", &v, err)) {
    if (!*err && parse_u64(a->cmd, "--weights-seed", v, &o->weights_seed)) *err = 1;
  } else if (hmx_args_value(a, "--set", &v, err)) {
    if (*err) return 1;
    if (o->nsets == HMX_MODEL_MAX_SETS) {
      hmx_cli_error(HMX_EXIT_USAGE, "%s: at most %d --set options", a->cmd, HMX_MODEL_MAX_SETS);
      *err = 1;
    } else
      o->sets[o->nsets++] = v;
  } else
    return 0;
  return 1;
}

hmx_dtype hmx_model_opts_kv_dtype(const hmx_model_opts *o) {
  return o->kv_dtype < 0 ? HMX_F32 : (hmx_dtype)o->kv_dtype;
}

void hmx_model_opts_help(FILE *out) {
  fputs("model (synthetic weights unless --weights is given):\n"
        "  --weights FILE      a weights file (docs/MODEL.md), a Llama GGUF or a Hugging Face\n"
        "                      checkpoint directory (docs/GGUF.md); its config comes from the\n"
        "                      file (--model FILE: the same)\n"
        "  --config NAME       preset: tiny (default), small, base, test\n"
        "  --outproj P         attention output projection: dense (default) or hadamard\n"
        "  --set KEY=VALUE     change a config field: n_layer d_model n_head n_kv_head\n"
        "                      head_dim d_ff vocab context rope_base norm_eps tied\n"
        "  --dtype D           synthetic weights stored as f32 (default), bf16 or f16\n"
        "  --weights-seed N    seed of the synthetic weights (default 1)\n"
        "  --weight-layout L   generate, bench-model: auto (default: the projections and\n"
        "                      the FFN in the layout the backend reads fastest,\n"
        "                      docs/MODEL.md \"Weight layout\"; on cuda also a copy on\n"
        "                      the GPU, and the forward pass runs there; same bits)\n"
        "                      or rows (as stored; on cuda the weights then cross\n"
        "                      PCIe on every call)\n"
        "  --kv-dtype D        generate, bench-model: the KV cache stores K and V as f32\n"
        "                      (default), bf16 or f16 (rounded to nearest even when stored:\n"
        "                      half the bytes per decode step, other logits; docs/MODEL.md\n"
        "                      \"KV cache\")\n",
        out);
}

static int set_field(const char *cmd, hmx_model_config *c, const char *kv) {
  const char *eq = strchr(kv, '=');
  if (!eq || eq == kv)
    return hmx_cli_error(HMX_EXIT_USAGE, "%s: --set '%s' is not KEY=VALUE", cmd, kv);
  size_t n = (size_t)(eq - kv);
  const char *val = eq + 1;
  static const struct { const char *key; size_t off; } ints[] = {
      {"n_layer", offsetof(hmx_model_config, n_layer)},
      {"d_model", offsetof(hmx_model_config, d_model)},
      {"n_head", offsetof(hmx_model_config, n_head)},
      {"n_kv_head", offsetof(hmx_model_config, n_kv_head)},
      {"head_dim", offsetof(hmx_model_config, head_dim)},
      {"d_ff", offsetof(hmx_model_config, d_ff)},
      {"vocab", offsetof(hmx_model_config, vocab)},
      {"context", offsetof(hmx_model_config, context)},
      {"tied", offsetof(hmx_model_config, tied)}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    if (strlen(ints[i].key) != n || strncmp(kv, ints[i].key, n)) continue;
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (!*val || *end || errno || v < 0 || v > (1L << 30))
      return hmx_cli_error(HMX_EXIT_USAGE, "%s: --set %s: '%s' is not an integer in [0, 2^30]",
                           cmd, ints[i].key, val);
    *(int *)((char *)c + ints[i].off) = (int)v;
    return 0;
  }
  float *f = NULL;
  if (n == 9 && !strncmp(kv, "rope_base", n)) f = &c->rope_base;
  else if (n == 8 && !strncmp(kv, "norm_eps", n)) f = &c->norm_eps;
  if (f) {
    char *end;
    errno = 0;
    float v = strtof(val, &end);
    if (!*val || *end || errno)
      return hmx_cli_error(HMX_EXIT_USAGE, "%s: --set: '%s' is not a number", cmd, val);
    *f = v;
    return 0;
  }
  return hmx_cli_error(HMX_EXIT_USAGE, "%s: --set: unknown config key in '%s' (see --help)", cmd,
                       kv);
}

int hmx_model_opts_config(const char *cmd, const hmx_model_opts *o, int outproj,
                          hmx_model_config *cfg) {
  if (outproj < 0) outproj = o->outproj < 0 ? HMX_OUTPROJ_DENSE : o->outproj;
  hmx_status s = hmx_model_preset(o->config, (hmx_outproj)outproj, cfg);
  if (s) return hmx_cli_error(HMX_EXIT_USAGE, "%s: %s", cmd, hmx_cli_status_message(s));
  for (int i = 0; i < o->nsets; i++)
    if (set_field(cmd, cfg, o->sets[i])) return HMX_EXIT_USAGE;
  s = hmx_model_config_check(cfg);
  if (s) return hmx_cli_error(HMX_EXIT_USAGE, "%s: %s", cmd, hmx_cli_status_message(s));
  return 0;
}

int hmx_model_opts_open(const char *cmd, const hmx_model_opts *o, hmx_model **m) {
  hmx_status s;
  if (o->weights) {
    if (o->nsets || o->outproj >= 0 || o->dtype >= 0 || o->config_given)
      return hmx_cli_error(HMX_EXIT_USAGE, "%s: --weights takes its config and dtype from the "
                           "file: drop --config/--outproj/--set/--dtype", cmd);
    s = hmx_model_load(o->weights, m);
    if (s) return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s", cmd, hmx_cli_status_message(s));
    return 0;
  }
  hmx_model_config cfg;
  int rc = hmx_model_opts_config(cmd, o, -1, &cfg);
  if (rc) return rc;
  s = hmx_model_synthetic(&cfg, o->weights_seed, o->dtype < 0 ? HMX_F32 : (hmx_dtype)o->dtype, m);
  if (s) return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s", cmd, hmx_cli_status_message(s));
  return 0;
}

int hmx_model_opts_prepare(const char *cmd, const hmx_model_opts *o, hmx_model *m,
                           const hmx_context *ctx) {
  if (o->rows_layout) return 0;
  hmx_status s = hmx_model_prepare(m, ctx, NULL);
  if (s) return hmx_cli_error(HMX_EXIT_FAIL, "%s: %s", cmd, hmx_cli_status_message(s));
  return 0;
}

static int parse_token_list(const char *cmd, const char *s, int32_t **ids, int64_t *n) {
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  int32_t *v = malloc(cap * sizeof *v);
  if (!v) return hmx_cli_error(HMX_EXIT_FAIL, "%s: out of memory", cmd);
  int64_t k = 0;
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || errno || x < 0 || x > INT32_MAX || (*end != ',' && *end)) {
      free(v);
      return hmx_cli_error(HMX_EXIT_USAGE, "%s: --tokens '%s' is not a comma-separated list of "
                           "token ids", cmd, s);
    }
    v[k++] = (int32_t)x;
    if (!*end) break;
    p = end + 1;
  }
  *ids = v;
  *n = k;
  return 0;
}

int hmx_prompt_tokens(const char *cmd, const char *prompt, const char *toklist,
                      const char *fallback, int32_t **ids, int64_t *n) {
  if (toklist) return parse_token_list(cmd, toklist, ids, n);
  const char *text = prompt ? prompt : fallback;
  *n = (int64_t)strlen(text);
  if (*n == 0) return hmx_cli_error(HMX_EXIT_USAGE, "%s: the prompt is empty", cmd);
  int32_t *v = malloc((size_t)*n * sizeof *v);
  if (!v) return hmx_cli_error(HMX_EXIT_FAIL, "%s: out of memory", cmd);
  for (int64_t i = 0; i < *n; i++) v[i] = (unsigned char)text[i];
  *ids = v;
  return 0;
}
