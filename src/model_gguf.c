/* A Llama-family GGUF file as an hmx_model (docs/GGUF.md "Llama models").
 *
 * The config comes from the llama.* metadata, the weights from the tensors
 * token_embd, blk.N.{attn_norm,attn_q,attn_k,attn_v,attn_output,ffn_norm,
 * ffn_gate,ffn_up,ffn_down}, output_norm and output (absent: tied). Every
 * quantized or F32 tensor is dequantized to f32 (docs/NUMERICS.md "GGUF
 * dequantization") into the model's arena, F16 and BF16 ones are kept as they
 * are (the ops widen them exactly: the same values as dequantized), so the
 * forward pass is the model runtime's as it is: the same bits on every
 * backend. RoPE is `interleaved`: llama.cpp's
 * converter permutes the rows of Q and K so that the pairs that Hugging Face's
 * rotate_half rotates together (i, i + D/2) become adjacent (2i, 2i + 1), and
 * llama.cpp rotates adjacent pairs for this architecture. A tensor the model
 * would not use (biases, rope_freqs, ...) is an error, not ignored. */
#include "model_internal.h"
#include "gguf.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Metadata integer `key` in [lo, hi]; `def` < 0: required. */
static hmx_status meta_int(const hmx_gguf *f, const char *path, const char *key, int64_t def,
                           int64_t lo, int64_t hi, int *out) {
  int64_t v = 0;
  hmx_status st = hmx_gguf_get_int(f, key, &v);
  if (st == HMX_ERR_NOT_FOUND) {
    if (def < 0)
      return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is missing (a Llama GGUF has it)", path,
                      key);
    v = def;
  } else if (st)
    return st;
  if (v < lo || v > hi)
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata %s = %lld is outside [%lld, %lld]", path, key,
                    (long long)v, (long long)lo, (long long)hi);
  *out = (int)v;
  return HMX_OK;
}

static hmx_status meta_float(const hmx_gguf *f, const char *path, const char *key, float def,
                             int required, float *out) {
  float v = def;
  hmx_status st = hmx_gguf_get_f32(f, key, &v);
  if (st == HMX_ERR_NOT_FOUND) {
    if (required)
      return hmx_fail(HMX_ERR_FORMAT, "%s: metadata '%s' is missing (a Llama GGUF has it)", path,
                      key);
    v = def;
  } else if (st)
    return st;
  if (!isfinite(v) || !(v > 0))
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata %s = %g is not a positive finite number", path,
                    key, (double)v);
  *out = v;
  return HMX_OK;
}

static hmx_status config_from_gguf(const hmx_gguf *f, const char *path, hmx_model_config *c) {
  memset(c, 0, sizeof *c);
  hmx_gguf_str arch = {0};
  hmx_status st = hmx_gguf_get_str(f, "general.architecture", &arch);
  if (st == HMX_ERR_NOT_FOUND)
    return hmx_fail(HMX_ERR_FORMAT, "%s: metadata 'general.architecture' is missing", path);
  if (st) return st;
  if (arch.len != 5 || memcmp(arch.ptr, "llama", 5) != 0)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: architecture '%.*s' (hadamix reads 'llama' GGUF "
                    "models)", path, (int)(arch.len > 64 ? 64 : arch.len), arch.ptr);
  int rot = 0, vlen = 0;
  if ((st = meta_int(f, path, "llama.block_count", -1, 1, 4096, &c->n_layer)) ||
      (st = meta_int(f, path, "llama.embedding_length", -1, 1, 1 << 16, &c->d_model)) ||
      (st = meta_int(f, path, "llama.attention.head_count", -1, 1, 1024, &c->n_head)) ||
      (st = meta_int(f, path, "llama.attention.head_count_kv", c->n_head, 1, 1024,
                     &c->n_kv_head)) ||
      (st = meta_int(f, path, "llama.feed_forward_length", -1, 1, 1 << 18, &c->d_ff)) ||
      (st = meta_int(f, path, "llama.context_length", -1, 1, 1 << 24, &c->context)) ||
      (st = meta_float(f, path, "llama.attention.layer_norm_rms_epsilon", 0, 1, &c->norm_eps)) ||
      (st = meta_float(f, path, "llama.rope.freq_base", 10000.0f, 0, &c->rope_base)))
    return st;
  if (c->d_model % c->n_head)
    return hmx_fail(HMX_ERR_FORMAT, "%s: embedding_length %d is not a multiple of head_count %d",
                    path, c->d_model, c->n_head);
  if ((st = meta_int(f, path, "llama.attention.key_length", c->d_model / c->n_head, 2, 1024,
                     &c->head_dim)) ||
      (st = meta_int(f, path, "llama.attention.value_length", c->head_dim, 2, 1024, &vlen)) ||
      (st = meta_int(f, path, "llama.rope.dimension_count", c->head_dim, 2, 1024, &rot)))
    return st;
  if (vlen != c->head_dim || rot != c->head_dim)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: value_length %d / rope.dimension_count %d differ "
                    "from the head size %d (not supported)", path, vlen, rot, c->head_dim);
  hmx_gguf_str scaling = {0};
  if (!hmx_gguf_get_str(f, "llama.rope.scaling.type", &scaling) &&
      !(scaling.len == 4 && !memcmp(scaling.ptr, "none", 4)))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: llama.rope.scaling.type '%.*s' (only plain RoPE "
                    "is supported)", path, (int)(scaling.len > 32 ? 32 : scaling.len),
                    scaling.ptr);
  /* the vocabulary: llama.vocab_size, else the rows of token_embd */
  const hmx_gguf_tensor *emb = hmx_gguf_find_tensor(f, "token_embd.weight");
  if (!emb) return hmx_fail(HMX_ERR_FORMAT, "%s: tensor 'token_embd.weight' is missing", path);
  if ((st = meta_int(f, path, "llama.vocab_size", emb->ne[1], 1, 1 << 22, &c->vocab))) return st;
  c->tied = hmx_gguf_find_tensor(f, "output.weight") == NULL;
  c->outproj = HMX_OUTPROJ_DENSE;
  c->rope_style = HMX_ROPE_INTERLEAVED;
  return HMX_OK;
}

/* The GGUF name of weight spec `s` and whether its layout is the transpose
 * of GGUF's (hmx_swiglu takes W1, W3 as [in, out] and W2 as [ff, d]; GGUF
 * stores every matrix as [out rows, in columns], ne[0] = in). */
static int gguf_name(const char *spec, char *out, size_t cap, int *transpose) {
  static const struct {
    const char *hmx, *gguf;
    int t;
  } map[] = {{"attn_norm", "attn_norm", 0}, {"attn.wq", "attn_q", 0},  {"attn.wk", "attn_k", 0},
             {"attn.wv", "attn_v", 0},      {"attn.wo", "attn_output", 0},
             {"ffn_norm", "ffn_norm", 0},   {"ffn.w1", "ffn_gate", 1}, {"ffn.w3", "ffn_up", 1},
             {"ffn.w2", "ffn_down", 1}};
  *transpose = 0;
  if (!strcmp(spec, "tok_emb")) return snprintf(out, cap, "token_embd.weight") > 0;
  if (!strcmp(spec, "norm")) return snprintf(out, cap, "output_norm.weight") > 0;
  if (!strcmp(spec, "lm_head")) return snprintf(out, cap, "output.weight") > 0;
  int layer = 0, used = 0;
  if (sscanf(spec, "layers.%d.%n", &layer, &used) != 1 || used == 0) return 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(spec + used, map[i].hmx)) {
      *transpose = map[i].t;
      return snprintf(out, cap, "blk.%d.%s.weight", layer, map[i].gguf) > 0;
    }
  return 0;
}

/* Checks t against spec s: 1-D [n] is ne = {n}; 2-D [r, c] is ne = {c, r},
 * or {r, c} when the weight is stored transposed. */
static hmx_status check_shape(const char *path, const hmx_weight_spec *s,
                              const hmx_gguf_tensor *t, int transpose) {
  const int64_t r = s->shape[0], c = s->shape[1];
  int ok = t->ndim == s->ndim &&
           (s->ndim == 1 ? t->ne[0] == r
                         : (transpose ? t->ne[0] == r && t->ne[1] == c
                                      : t->ne[0] == c && t->ne[1] == r));
  if (ok) return HMX_OK;
  if (s->ndim == 1)
    return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' must have ne = [%lld] for this config", path,
                    t->name, (long long)r);
  return hmx_fail(HMX_ERR_SHAPE, "%s: tensor '%s' must have ne = [%lld, %lld] for this config",
                  path, t->name, (long long)(transpose ? r : c), (long long)(transpose ? c : r));
}

/* Whether a ggml type is one of the block types (Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K). */
static int is_block_type(uint32_t type) {
  return type != HMX_GGML_F32 && type != HMX_GGML_F16 && type != HMX_GGML_BF16;
}

/* Which weights stay in their GGUF format (m->q, read in place by
 * hmx_gemm_quant): every matrix of a block type or F16/BF16 whose rows are
 * whole blocks, and the other two FFN matrices of a layer with one such (the FFN then runs
 * as three gemms on [out, in] rows, so all three keep GGUF's layout). The
 * environment variable HMX_GGUF_DEQUANTIZE=1 turns this off (every block
 * tensor dequantized to f32 at load, the behaviour before; kept for
 * measuring the difference). Sets keep[i]. */
static void choose_kept(const hmx_model *m, const hmx_gguf_tensor *const *src, int *keep) {
  const char *env = getenv("HMX_GGUF_DEQUANTIZE");
  const int off = env && env[0] == '1';
  for (int i = 0; i < m->n_weights; i++) {
    int64_t block = 1, bytes = 0;
    hmx_gguf_type_block(src[i]->type, &block, &bytes);
    /* F16/BF16 matrices too: in the G16 layout they need no transposes */
    keep[i] = !off && m->specs[i].ndim == 2 && src[i]->ne[0] % block == 0 &&
              (is_block_type(src[i]->type) || hmx_qlayout_g16_ok(src[i]->type));
  }
  for (int i = 0; i + 2 < m->n_weights; i++) {
    const char *nm = m->specs[i].name;
    const size_t len = strlen(nm);
    if (len < 6 || strcmp(nm + len - 6, "ffn.w1") != 0) continue;
    if (keep[i] || keep[i + 1] || keep[i + 2]) keep[i] = keep[i + 1] = keep[i + 2] = 1;
  }
}

/* Bytes of weight i in the model: kept tensors as in the file; f16 and bf16
 * are kept as they are; the rest become f32. */
static size_t elem_bytes(const hmx_gguf_tensor *t, int kept, int *ok) {
  size_t b;
  *ok = 1;
  if (kept && hmx_qlayout_g16_ok(t->type))
    return hmx_qlayout_g16_bytes(t->type, t->ne[1], t->ne[0]); /* + padding rows */
  if (kept) return (size_t)t->nbytes;
  if (!hmx_mul_size((size_t)t->numel,
                    t->type == HMX_GGML_F16 || t->type == HMX_GGML_BF16 ? 2 : 4, &b)) *ok = 0;
  return b;
}

static hmx_status load_weights(hmx_model *m, const hmx_gguf *f, const char *path) {
  const hmx_gguf_tensor **src = hmx_alloc_array((size_t)m->n_weights, sizeof *src);
  int *tr = hmx_alloc_array((size_t)m->n_weights, sizeof *tr);
  int *keep = hmx_alloc_array((size_t)m->n_weights, sizeof *keep);
  hmx_status st = HMX_OK;
  if (!src || !tr || !keep) st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", path);
  size_t total = 0, largest = 0;
  for (int i = 0; i < m->n_weights && !st; i++) {
    char name[HMX_GGUF_MAX_NAME + 16];
    if (!gguf_name(m->specs[i].name, name, sizeof name, &tr[i])) {
      st = hmx_fail(HMX_ERR_INTERNAL, "model_gguf: no GGUF name for '%s'", m->specs[i].name);
      break;
    }
    src[i] = hmx_gguf_find_tensor(f, name);
    if (!src[i]) {
      st = hmx_fail(HMX_ERR_FORMAT, "%s: tensor '%s' is missing", path, name);
      break;
    }
    if ((st = check_shape(path, &m->specs[i], src[i], tr[i]))) break;
    if (!hmx_gguf_can_dequantize(src[i]->type)) {
      st = hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tensor '%s' is %s: hadamix reads "
                    HMX_GGUF_DEQUANT_TYPES, path, name, hmx_gguf_type_name(src[i]->type));
      break;
    }
  }
  /* every tensor of the file must be one of the model's */
  if (!st && hmx_gguf_tensor_count(f) != m->n_weights) {
    for (int64_t k = 0; k < hmx_gguf_tensor_count(f) && !st; k++) {
      const hmx_gguf_tensor *t = hmx_gguf_tensor_at(f, k);
      int used = 0;
      for (int i = 0; i < m->n_weights && !used; i++) used = src[i] == t;
      if (!used)
        st = hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tensor '%s' is not part of the Llama model that "
                      "hadamix runs (docs/GGUF.md lists the tensors)", path, t->name);
    }
  }
  if (!st) choose_kept(m, src, keep);
  for (int i = 0; i < m->n_weights && !st; i++) {
    int ok;
    const size_t b = elem_bytes(src[i], keep[i], &ok);
    if (!ok || total + b + HMX_MODEL_ARENA_ALIGN < total) {
      st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: the weights do not fit in memory", path);
      break;
    }
    if (!keep[i] && b > largest) largest = b;
    total += hmx_model_arena_round(b);
  }
  float *tmp = NULL;
  if (!st && (!(m->arena = hmx_model_arena_alloc(m->arena_bytes = total)) ||
              !(tmp = malloc(largest ? largest : 1)) ||
              !(m->q = calloc((size_t)m->n_weights, sizeof *m->q))))
    st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: cannot allocate %zu bytes for the weights", path, total);
  size_t off = 0;
  for (int i = 0; i < m->n_weights && !st; i++) {
    const hmx_gguf_tensor *t = src[i];
    void *dst = (char *)m->arena + off;
    const hmx_dtype dt = hmx_qtype_dtype(t->type);
    int ok;
    const size_t b = elem_bytes(t, keep[i], &ok);
    if (keep[i]) {
      /* the file's blocks, [ne[1] rows of ne[0]]: in the G16 layout where the
       * type has one (the same bytes, regrouped: gemm_quant.h), else as they
       * are in the file; read in place */
      const int g16 = hmx_qlayout_g16_ok(t->type);
      if (g16) hmx_qlayout_to_g16(t->type, t->data, t->ne[1], t->ne[0], dst);
      else memcpy(dst, t->data, b);
      m->q[i] = (hmx_qmatrix){t->type, dst, t->ne[1], t->ne[0],
                              g16 ? HMX_QLAYOUT_G16 : HMX_QLAYOUT_ROWS, NULL};
      m->weights[i] = hmx_tensor_make(NULL, dt, m->specs[i].ndim, m->specs[i].shape); /* no data: m->q */
    } else {
      if (dt != HMX_F32) {
        /* f16 / bf16 stay as they are: the ops widen them exactly, so the
         * results are the bits of the dequantized f32, with half the memory */
        const unsigned char *p = t->data;
        uint16_t *d16 = dst;
        const int64_t rows = tr[i] ? t->ne[1] : 1, cols = tr[i] ? t->ne[0] : t->numel;
        for (int64_t r = 0; r < rows; r++)
          for (int64_t c = 0; c < cols; c++) {
            const int64_t k = r * cols + c;
            d16[tr[i] ? c * rows + r : k] = (uint16_t)(p[2 * k] | p[2 * k + 1] << 8);
          }
      } else if (!tr[i])
        st = hmx_gguf_tensor_to_f32(t, dst);
      else if (!(st = hmx_gguf_tensor_to_f32(t, tmp))) {
        const int64_t rows = t->ne[1], cols = t->ne[0]; /* GGUF [rows][cols] -> [cols][rows] */
        float *df = dst;
        for (int64_t r = 0; r < rows; r++)
          for (int64_t c = 0; c < cols; c++) df[c * rows + r] = tmp[r * cols + c];
      }
      m->weights[i] = hmx_tensor_make(dst, dt, m->specs[i].ndim, m->specs[i].shape);
    }
    off += hmx_model_arena_round(b);
    m->weight_bytes += (int64_t)b;
  }
  free(tmp);
  free(src);
  free(tr);
  free(keep);
  return st;
}

hmx_status hmx_model_from_gguf(const hmx_gguf *f, const char *path, hmx_model **out) {
  *out = NULL;
  hmx_model_config cfg;
  hmx_model *m = NULL;
  hmx_status st = config_from_gguf(f, path, &cfg);
  if (!st) st = hmx_model_config_check_file(&cfg, path);
  if (!st) st = hmx_model_alloc(&cfg, &m);
  if (!st) st = load_weights(m, f, path);
  if (st) {
    hmx_model_free(m);
    return st;
  }
  hmx_model_link(m);
  *out = m;
  return HMX_OK;
}

hmx_status hmx_model_load_gguf(const char *path, hmx_model **out) {
  hmx_clear_error();
  if (!out || !path)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_load_gguf: NULL argument");
  *out = NULL;
  hmx_gguf *f;
  hmx_status st = hmx_gguf_open(path, &f);
  if (st) return st;
  st = hmx_model_from_gguf(f, path, out);
  hmx_gguf_free(f); /* the weights are copies: the file is not kept */
  return st;
}
