/* A Hugging Face Llama checkpoint (config.json + *.safetensors) as an
 * hmx_model (docs/GGUF.md "Hugging Face checkpoints").
 *
 * The config comes from config.json (model_type "llama"), the weights from
 * model.safetensors or from the shards that model.safetensors.index.json
 * names. Tensors keep their dtype (f32, bf16 or f16: the model computes on
 * them as they are); they are copied into the model's arena, the SwiGLU ones
 * transposed to hmx_swiglu's layout. RoPE is `half` (Hugging Face's
 * rotate_half pairs i and i + D/2). Anything the model would not use (a bias,
 * scaled RoPE, another activation) is an error, not ignored. */
#include "model_internal.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARDS 64
#define MAX_JSON (64u << 20)

static char *read_text(const char *path, hmx_status *st) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    *st = hmx_fail(HMX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap || cap >= MAX_JSON) break;
    char *nb = realloc(b, cap * 2 + 1);
    if (!nb) {
      free(b);
      b = NULL;
    } else {
      b = nb;
      cap *= 2;
    }
  }
  fclose(fp);
  if (!b) {
    *st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", path);
    return NULL;
  }
  if (n >= MAX_JSON) {
    free(b);
    *st = hmx_fail(HMX_ERR_FORMAT, "%s: larger than %u bytes", path, MAX_JSON);
    return NULL;
  }
  b[n] = '\0';
  *st = HMX_OK;
  return b;
}

static cJSON *read_json(const char *path, hmx_status *st) {
  char *text = read_text(path, st);
  if (!text) return NULL;
  cJSON *j = cJSON_Parse(text);
  free(text);
  if (!j || !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    *st = hmx_fail(HMX_ERR_FORMAT, "%s: not a JSON object", path);
    return NULL;
  }
  return j;
}

/* An integer field in [lo, hi]; def < 0: required. */
static hmx_status json_int(const cJSON *o, const char *path, const char *key, long def, long lo,
                           long hi, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  double x = (double)def;
  if (!v || cJSON_IsNull(v)) {
    if (def < 0) return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is missing", path, key);
  } else if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
    return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is not an integer", path, key);
  else
    x = v->valuedouble;
  if (x < lo || x > hi)
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s = %.0f is outside [%ld, %ld]", path, key, x, lo, hi);
  *out = (int)x;
  return HMX_OK;
}

static hmx_status json_float(const cJSON *o, const char *path, const char *key, double def,
                             float *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  double x = def;
  if (v && !cJSON_IsNull(v)) {
    if (!cJSON_IsNumber(v))
      return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is not a number", path, key);
    x = v->valuedouble;
  } else if (def < 0)
    return hmx_fail(HMX_ERR_FORMAT, "%s: '%s' is missing", path, key);
  if (!(x > 0) || !isfinite((float)x))
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s = %g is not a positive finite number", path, key, x);
  *out = (float)x;
  return HMX_OK;
}

/* A field that, when present, must be false / null / the given string. */
static int json_is(const cJSON *o, const char *key, const char *want) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v || cJSON_IsNull(v)) return 1;
  if (!want) return cJSON_IsFalse(v);
  return cJSON_IsString(v) && !strcmp(v->valuestring, want);
}

static hmx_status config_from_json(const cJSON *j, const char *path, hmx_model_config *c) {
  memset(c, 0, sizeof *c);
  const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "model_type");
  if (!cJSON_IsString(mt) || strcmp(mt->valuestring, "llama") != 0)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: model_type '%s' (hadamix reads 'llama' "
                    "checkpoints)", path, cJSON_IsString(mt) ? mt->valuestring : "(missing)");
  if (!json_is(j, "hidden_act", "silu") || !json_is(j, "attention_bias", NULL) ||
      !json_is(j, "mlp_bias", NULL))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: only hidden_act 'silu' without attention or MLP "
                    "biases is supported", path);
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "rope_scaling");
  if (rs && !cJSON_IsNull(rs))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: rope_scaling is set (only plain RoPE is "
                    "supported)", path);
  hmx_status st;
  if ((st = json_int(j, path, "num_hidden_layers", -1, 1, 4096, &c->n_layer)) ||
      (st = json_int(j, path, "hidden_size", -1, 1, 1 << 16, &c->d_model)) ||
      (st = json_int(j, path, "num_attention_heads", -1, 1, 1024, &c->n_head)) ||
      (st = json_int(j, path, "num_key_value_heads", c->n_head, 1, 1024, &c->n_kv_head)) ||
      (st = json_int(j, path, "intermediate_size", -1, 1, 1 << 18, &c->d_ff)) ||
      (st = json_int(j, path, "vocab_size", -1, 1, 1 << 22, &c->vocab)) ||
      (st = json_int(j, path, "max_position_embeddings", 2048, 1, 1 << 24, &c->context)) ||
      (st = json_float(j, path, "rms_norm_eps", 1e-6, &c->norm_eps)) ||
      (st = json_float(j, path, "rope_theta", 10000.0, &c->rope_base)))
    return st;
  if (c->d_model % c->n_head)
    return hmx_fail(HMX_ERR_FORMAT, "%s: hidden_size %d is not a multiple of "
                    "num_attention_heads %d", path, c->d_model, c->n_head);
  if ((st = json_int(j, path, "head_dim", c->d_model / c->n_head, 2, 1024, &c->head_dim)))
    return st;
  const cJSON *tie = cJSON_GetObjectItemCaseSensitive(j, "tie_word_embeddings");
  c->tied = cJSON_IsTrue(tie); /* LlamaConfig's default is false */
  c->outproj = HMX_OUTPROJ_DENSE;
  c->rope_style = HMX_ROPE_HALF;
  return HMX_OK;
}

/* ------------------------------------------------------------------ shards */

typedef struct shards {
  hmx_st_file *f[MAX_SHARDS];
  int n;
} shards;

static void shards_free(shards *s) {
  for (int i = 0; i < s->n; i++) hmx_st_free(s->f[i]);
  s->n = 0;
}

static hmx_status open_shard(shards *s, const char *dir, const char *name) {
  if (strchr(name, '/') || strchr(name, '\\') || !strcmp(name, "..") || !name[0])
    return hmx_fail(HMX_ERR_FORMAT, "%s: shard name '%s' is not a plain file name", dir, name);
  if (s->n == MAX_SHARDS)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: more than %d shards", dir, MAX_SHARDS);
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: path too long", dir);
  hmx_status st = hmx_st_map(path, &s->f[s->n]);
  if (st) return st;
  s->n++;
  return HMX_OK;
}

static hmx_status open_shards(shards *s, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  FILE *fp = fopen(path, "rb");
  if (!fp) return open_shard(s, dir, "model.safetensors");
  fclose(fp);
  hmx_status st;
  cJSON *j = read_json(path, &st);
  if (!j) return st;
  const cJSON *map = cJSON_GetObjectItemCaseSensitive(j, "weight_map"), *e;
  if (!cJSON_IsObject(map)) {
    cJSON_Delete(j);
    return hmx_fail(HMX_ERR_FORMAT, "%s: no 'weight_map' object", path);
  }
  cJSON_ArrayForEach(e, map) {
    if (!cJSON_IsString(e)) {
      st = hmx_fail(HMX_ERR_FORMAT, "%s: weight_map['%s'] is not a file name", path, e->string);
      break;
    }
    int seen = 0; /* each shard once, in the order first named */
    for (const cJSON *p = map->child; p != e && !seen; p = p->next)
      seen = cJSON_IsString(p) && !strcmp(p->valuestring, e->valuestring);
    if (!seen && (st = open_shard(s, dir, e->valuestring))) break;
  }
  cJSON_Delete(j);
  return st;
}

static const hmx_st_tensor *find(const shards *s, const char *name) {
  for (int i = 0; i < s->n; i++) {
    const hmx_st_tensor *t = hmx_st_find(s->f[i], name);
    if (t) return t;
  }
  return NULL;
}

/* ------------------------------------------------------------------ weights */

/* The Hugging Face name of weight spec `spec`, and whether it is stored
 * transposed relative to hadamix (the SwiGLU matrices). */
static int hf_name(const char *spec, char *out, size_t cap, int *transpose) {
  static const struct {
    const char *hmx, *hf;
    int t;
  } map[] = {{"attn_norm", "input_layernorm", 0},     {"attn.wq", "self_attn.q_proj", 0},
             {"attn.wk", "self_attn.k_proj", 0},      {"attn.wv", "self_attn.v_proj", 0},
             {"attn.wo", "self_attn.o_proj", 0},      {"ffn_norm", "post_attention_layernorm", 0},
             {"ffn.w1", "mlp.gate_proj", 1},          {"ffn.w3", "mlp.up_proj", 1},
             {"ffn.w2", "mlp.down_proj", 1}};
  *transpose = 0;
  if (!strcmp(spec, "tok_emb")) return snprintf(out, cap, "model.embed_tokens.weight") > 0;
  if (!strcmp(spec, "norm")) return snprintf(out, cap, "model.norm.weight") > 0;
  if (!strcmp(spec, "lm_head")) return snprintf(out, cap, "lm_head.weight") > 0;
  int layer = 0, used = 0;
  if (sscanf(spec, "layers.%d.%n", &layer, &used) != 1 || used == 0) return 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(spec + used, map[i].hmx)) {
      *transpose = map[i].t;
      return snprintf(out, cap, "model.layers.%d.%s.weight", layer, map[i].hf) > 0;
    }
  return 0;
}

static hmx_status load_weights(hmx_model *m, const shards *s, const char *dir) {
  const hmx_st_tensor **src = hmx_alloc_array((size_t)m->n_weights, sizeof *src);
  int *tr = hmx_alloc_array((size_t)m->n_weights, sizeof *tr);
  hmx_status st = src && tr ? HMX_OK : hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", dir);
  size_t total = 0;
  int n_file = 0;
  for (int i = 0; i < s->n; i++) n_file += hmx_st_count(s->f[i]);
  for (int i = 0; i < m->n_weights && !st; i++) {
    const hmx_weight_spec *sp = &m->specs[i];
    char name[128];
    if (!hf_name(sp->name, name, sizeof name, &tr[i])) {
      st = hmx_fail(HMX_ERR_INTERNAL, "model_hf: no Hugging Face name for '%s'", sp->name);
      break;
    }
    const hmx_st_tensor *t = src[i] = find(s, name);
    const int64_t r = sp->shape[0], c = sp->shape[1];
    if (!t)
      st = hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' is missing", dir, name);
    else if (t->dtype != HMX_F32 && t->dtype != HMX_BF16 && t->dtype != HMX_F16)
      st = hmx_fail(HMX_ERR_DTYPE, "%s: tensor '%s' is %s (f32, bf16 or f16 expected)", dir,
                    name, hmx_dtype_name(t->dtype));
    else if (t->ndim != sp->ndim ||
             (sp->ndim == 1 ? t->shape[0] != r
                            : (tr[i] ? t->shape[0] != c || t->shape[1] != r
                                     : t->shape[0] != r || t->shape[1] != c)))
      st = hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' has the wrong shape for this config", dir,
                    name);
    if (!st) total += hmx_model_arena_round((size_t)t->nbytes);
  }
  if (!st && n_file != m->n_weights) {
    for (int k = 0; k < s->n && !st; k++)
      for (int q = 0; q < hmx_st_count(s->f[k]) && !st; q++) {
        const hmx_st_tensor *t = hmx_st_at(s->f[k], q);
        int used = 0;
        for (int i = 0; i < m->n_weights && !used; i++) used = src[i] == t;
        if (!used && !(m->cfg.tied && !strcmp(t->name, "lm_head.weight")))
          st = hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tensor '%s' is not part of the Llama model "
                        "that hadamix runs", dir, t->name);
      }
  }
  if (!st && !(m->arena = hmx_model_arena_alloc(m->arena_bytes = total ? total : 1)))
    st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: cannot allocate %zu bytes of weights", dir, total);
  size_t off = 0;
  for (int i = 0; i < m->n_weights && !st; i++) {
    const hmx_st_tensor *t = src[i];
    char *dst = (char *)m->arena + off;
    const size_t es = hmx_dtype_size(t->dtype);
    if (!tr[i]) memcpy(dst, t->data, (size_t)t->nbytes);
    else { /* [rows][cols] -> [cols][rows], element by element (any dtype) */
      const int64_t rows = t->shape[0], cols = t->shape[1];
      const char *from = t->data;
      for (int64_t rr = 0; rr < rows; rr++)
        for (int64_t cc = 0; cc < cols; cc++)
          memcpy(dst + ((size_t)cc * (size_t)rows + (size_t)rr) * es,
                 from + ((size_t)rr * (size_t)cols + (size_t)cc) * es, es);
    }
    m->weights[i] = hmx_tensor_make(dst, t->dtype, m->specs[i].ndim, m->specs[i].shape);
    off += hmx_model_arena_round((size_t)t->nbytes);
    m->weight_bytes += (int64_t)t->nbytes;
  }
  free(src);
  free(tr);
  return st;
}

hmx_status hmx_model_load_hf(const char *dir, hmx_model **out) {
  hmx_clear_error();
  if (!dir || !out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_load_hf: NULL argument");
  *out = NULL;
  char path[4096];
  if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: path too long", dir);
  hmx_status st;
  cJSON *j = read_json(path, &st);
  if (!j) return st;
  hmx_model_config cfg;
  st = config_from_json(j, path, &cfg);
  cJSON_Delete(j);
  if (!st) st = hmx_model_config_check_file(&cfg, path);
  if (st) return st;
  shards s = {{0}, 0};
  hmx_model *m = NULL;
  if (!(st = open_shards(&s, dir)) && !(st = hmx_model_alloc(&cfg, &m)))
    st = load_weights(m, &s, dir);
  shards_free(&s); /* the weights are copies */
  if (st) {
    hmx_model_free(m);
    return st;
  }
  hmx_model_link(m);
  *out = m;
  return HMX_OK;
}
