/* Model configurations: presets, validation, parameter accounting
 * (docs/MODEL.md). */
#include "hadamix_model.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* SwiGLU width of the presets: 8d/3 (the parameter count of a 4d GELU MLP)
 * rounded up to a multiple of 64: 2048 (d 768), 2752 (d 1024), 4096 (d 1536). */
static int swiglu_width(int d) { return ((8 * d + 3 * 64 - 1) / (3 * 64)) * 64; }

static void preset_fill(hmx_model_config *c, int layers, int d, int heads, int head_dim) {
  memset(c, 0, sizeof *c);
  c->n_layer = layers;
  c->d_model = d;
  c->n_head = heads;
  c->n_kv_head = heads;
  c->head_dim = head_dim;
  c->d_ff = swiglu_width(d);
  c->vocab = 50304; /* GPT-2's 50257 padded to a multiple of 64, as in nanoGPT */
  c->context = 1024;
  c->rope_base = 10000.0f;
  c->norm_eps = 1e-5f;
  c->tied = 1;
  c->rope_style = HMX_ROPE_HALF;
}

static const char *const preset_names[] = {"tiny", "small", "base", "test", NULL};

const char *const *hmx_model_preset_names(void) { return preset_names; }

hmx_status hmx_model_preset(const char *name, hmx_outproj outproj, hmx_model_config *cfg) {
  hmx_clear_error();
  if (!name || !cfg) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_preset: NULL argument");
  if (outproj != HMX_OUTPROJ_DENSE && outproj != HMX_OUTPROJ_HADAMARD)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_preset: outproj %d is not dense (0) or "
                    "hadamard (1)", (int)outproj);
  if (strcmp(name, "tiny") == 0) preset_fill(cfg, 12, 768, 12, 64);
  else if (strcmp(name, "small") == 0) preset_fill(cfg, 24, 1024, 16, 64);
  else if (strcmp(name, "base") == 0) preset_fill(cfg, 24, 1536, 16, 96);
  else if (strcmp(name, "test") == 0) {
    /* small enough for exhaustive tests; grouped KV heads, untied head */
    preset_fill(cfg, 2, 64, 4, 16);
    cfg->n_kv_head = 2;
    cfg->d_ff = 96;
    cfg->vocab = 256;
    cfg->context = 64;
    cfg->tied = 0;
  } else
    return hmx_fail(HMX_ERR_NOT_FOUND, "unknown model preset '%s' (tiny, small, base, test)", name);
  cfg->outproj = outproj;
  return HMX_OK;
}

/* n = 2^k <= 2^20 or m * 2^k with m in {12, 20, 28, 40}, k <= 15: the sizes
 * hmx_hadamard_mix accepts. */
static int fwht_size_ok(int64_t n) {
  static const int ms[] = {1, 12, 20, 28, 40};
  for (int i = 0; i < 5; i++) {
    if (n % ms[i]) continue;
    int64_t p = n / ms[i];
    if (p < 1 || (p & (p - 1))) continue;
    if (ms[i] == 1 ? p <= ((int64_t)1 << 20) : p <= ((int64_t)1 << 15)) return 1;
  }
  return 0;
}

#define CHECK_RANGE(field, lo, hi)                                                            \
  do {                                                                                        \
    if (c->field < (lo) || c->field > (hi))                                                   \
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: " #field " = %d is outside "   \
                      "[%d, %d]", (int)c->field, (int)(lo), (int)(hi));                       \
  } while (0)

hmx_status hmx_model_config_check(const hmx_model_config *c) {
  if (!c) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: NULL");
  /* generous limits that keep every product below 2^62 */
  CHECK_RANGE(n_layer, 1, 4096);
  CHECK_RANGE(d_model, 1, 1 << 16);
  CHECK_RANGE(n_head, 1, 1024);
  CHECK_RANGE(n_kv_head, 1, 1024);
  CHECK_RANGE(head_dim, 2, 1024);
  CHECK_RANGE(d_ff, 1, 1 << 18);
  CHECK_RANGE(vocab, 1, 1 << 22);
  CHECK_RANGE(context, 1, 1 << 24); /* rope positions are < 2^24 */
  if (c->n_head % c->n_kv_head)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: n_head = %d is not a multiple of "
                    "n_kv_head = %d", c->n_head, c->n_kv_head);
  if (c->head_dim % 2)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: head_dim = %d is odd (RoPE rotates "
                    "pairs)", c->head_dim);
  if (!(c->rope_base > 1.0f) || !isfinite(c->rope_base))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: rope_base must be finite and > 1");
  if (!(c->norm_eps >= 0.0f) || !isfinite(c->norm_eps))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: norm_eps must be finite and >= 0");
  if (c->tied != 0 && c->tied != 1)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: tied must be 0 or 1");
  if (c->rope_style != HMX_ROPE_HALF && c->rope_style != HMX_ROPE_INTERLEAVED)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: unknown rope style %d",
                    (int)c->rope_style);
  if (c->outproj == HMX_OUTPROJ_HADAMARD) {
    if ((int64_t)c->n_head * c->head_dim != c->d_model)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: the Hadamard output projection "
                      "needs n_head * head_dim (%lld) == d_model (%d)",
                      (long long)c->n_head * c->head_dim, c->d_model);
    if (!fwht_size_ok(c->d_model))
      return hmx_fail(HMX_ERR_UNSUPPORTED, "model config: d_model = %d is not a Hadamard size "
                      "(2^k, or 12/20/28/40 * 2^k)", c->d_model);
  } else if (c->outproj != HMX_OUTPROJ_DENSE)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "model config: unknown outproj %d",
                    (int)c->outproj);
  return HMX_OK;
}

hmx_status hmx_model_config_check_file(const hmx_model_config *c, const char *path) {
  hmx_status st = hmx_model_config_check(c);
  if (!st) return HMX_OK;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", hmx_last_error());
  /* a config read from a file is the file's data, not the caller's argument */
  return hmx_fail(st == HMX_ERR_INVALID_ARGUMENT ? HMX_ERR_FORMAT : st, "%s: %s", path, msg);
}

hmx_status hmx_model_param_count(const hmx_model_config *c, hmx_param_count *o) {
  hmx_clear_error();
  if (!o) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_param_count: out is NULL");
  memset(o, 0, sizeof *o);
  hmx_status st = hmx_model_config_check(c);
  if (st) return st;
  const int64_t L = c->n_layer, d = c->d_model, hd = (int64_t)c->n_head * c->head_dim,
                kvd = (int64_t)c->n_kv_head * c->head_dim;
  o->embedding = (int64_t)c->vocab * d;
  o->attn_qkv = L * (hd * d + 2 * kvd * d);
  o->attn_out = L * (c->outproj == HMX_OUTPROJ_DENSE ? d * hd : 2 * d);
  o->ffn = L * 3 * d * (int64_t)c->d_ff;
  o->norms = (2 * L + 1) * d;
  o->lm_head = c->tied ? 0 : (int64_t)c->vocab * d;
  o->total = o->embedding + o->attn_qkv + o->attn_out + o->ffn + o->norms + o->lm_head;
  return HMX_OK;
}
