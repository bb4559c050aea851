/* A Hugging Face tokenizer.json as an hmx_tokenizer (docs/GGUF.md
 * "Tokenizer"): byte-level BPE with one of the pre-tokenizers that
 * tok_pretok.c implements, recognized by its exact structure:
 *   ByteLevel (use_regex)                                  -> GPT-2's pattern
 *   Sequence [Digits (individual_digits), ByteLevel]       -> "smollm"
 *   Sequence [Split (Llama 3's regex, Isolated), ByteLevel (no regex)],
 *   with the model's ignore_merges                         -> "llama-bpe"
 * Anything else (a normalizer, byte_fallback, another pre-tokenizer) is
 * refused rather than approximated. BOS / EOS come from config.json and
 * generation_config.json next to it when present. */
#include "tokenizer_internal.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JSON (512u << 20)

static const char LLAMA3_PATTERN[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
    "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static int exists(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (fp) fclose(fp);
  return fp != NULL;
}

/* A JSON object from len bytes of text (source names it in messages). */
static cJSON *parse_object(const char *text, size_t len, const char *source, hmx_status *st) {
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    *st = hmx_fail(HMX_ERR_FORMAT, "%s: not a JSON object", source);
    return NULL;
  }
  *st = HMX_OK;
  return j;
}

/* The whole file at path, at most MAX_JSON bytes (*len of them). */
static char *read_text(const char *path, size_t *len, hmx_status *st) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    *st = hmx_fail(HMX_ERR_IO, "%s: cannot open", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap + 1);
  while (b && cap <= MAX_JSON) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap) break;
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
  if (!b || n > MAX_JSON) {
    free(b);
    *st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: too large or out of memory", path);
    return NULL;
  }
  *len = n;
  *st = HMX_OK;
  return b;
}

static cJSON *read_json(const char *path, hmx_status *st) {
  size_t n = 0;
  char *b = read_text(path, &n, st);
  if (!b) return NULL;
  cJSON *j = parse_object(b, n, path, st);
  free(b);
  return j;
}

static const cJSON *get(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static int type_is(const cJSON *o, const char *type) {
  const cJSON *t = get(o, "type");
  return cJSON_IsString(t) && !strcmp(t->valuestring, type);
}

static int flag(const cJSON *o, const char *key, int def) {
  const cJSON *v = get(o, key);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

/* The pre-tokenizer kind, or -1 when it is not one hadamix implements. */
static int pretok_kind(const cJSON *pt, int ignore_merges) {
  if (!cJSON_IsObject(pt)) return -1;
  if (type_is(pt, "ByteLevel"))
    return flag(pt, "use_regex", 1) && !flag(pt, "add_prefix_space", 0) && !ignore_merges
               ? HMX_PRETOK_GPT2 : -1;
  if (!type_is(pt, "Sequence")) return -1;
  const cJSON *seq = get(pt, "pretokenizers");
  if (!cJSON_IsArray(seq) || cJSON_GetArraySize(seq) != 2) return -1;
  const cJSON *a = cJSON_GetArrayItem(seq, 0), *b = cJSON_GetArrayItem(seq, 1);
  if (!type_is(b, "ByteLevel") || flag(b, "add_prefix_space", 0)) return -1;
  if (type_is(a, "Digits") && flag(a, "individual_digits", 0) && flag(b, "use_regex", 1) &&
      !ignore_merges)
    return HMX_PRETOK_SMOLLM;
  if (type_is(a, "Split") && !flag(b, "use_regex", 1) && ignore_merges) {
    const cJSON *pat = get(get(a, "pattern"), "Regex"), *beh = get(a, "behavior");
    if (cJSON_IsString(pat) && !strcmp(pat->valuestring, LLAMA3_PATTERN) &&
        cJSON_IsString(beh) && !strcmp(beh->valuestring, "Isolated") && !flag(a, "invert", 0))
      return HMX_PRETOK_LLAMA3;
  }
  return -1;
}

/* A token id from a JSON value (key names it in messages); null: none (-1). */
static hmx_status json_id(const hmx_tokenizer *t, const cJSON *v, const char *file,
                          const char *key, int32_t *out) {
  *out = -1;
  if (!v || cJSON_IsNull(v)) return HMX_OK;
  /* in range before the cast, which is undefined for a double beyond int64 */
  const double d = cJSON_IsNumber(v) ? v->valuedouble : 0.5;
  if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != (double)(int64_t)d)
    return hmx_fail(HMX_ERR_FORMAT, "%s: %s is not an integer token id", file, key);
  const int64_t id = (int64_t)d;
  if (hmx_tok_check_id(t, id, file, key)) return HMX_ERR_FORMAT;
  *out = (int32_t)id;
  return HMX_OK;
}

/* BOS and the end-of-sequence ids from config.json and generation_config.json
 * beside the tokenizer, where they are (BOS: the first file's; EOS: both
 * files', each an id or a list of ids, as Llama 3.1 Instruct's three). A file
 * that is there but is not a JSON object, or an id that is not one of the
 * vocabulary, is an error rather than "no BOS" or "never stops". */
static hmx_status config_ids(const char *dir, hmx_tokenizer *t) {
  static const char *const FILES[] = {"config.json", "generation_config.json"};
  int32_t bos = -1;
  for (size_t f = 0; f < sizeof FILES / sizeof *FILES; f++) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s", dir, FILES[f]) >= (int)sizeof p || !exists(p)) continue;
    hmx_status st;
    cJSON *j = read_json(p, &st);
    if (!j) return st;
    int32_t id = -1;
    st = json_id(t, get(j, "bos_token_id"), p, "bos_token_id", &id);
    if (!st && bos < 0) bos = id;
    const cJSON *eos = get(j, "eos_token_id");
    if (!st && cJSON_IsArray(eos)) {
      const cJSON *e;
      cJSON_ArrayForEach(e, eos) {
        if (!st) st = json_id(t, e, p, "an eos_token_id", &id);
        if (!st && id < 0)
          st = hmx_fail(HMX_ERR_FORMAT, "%s: eos_token_id holds a null", p);
        if (!st) st = hmx_tok_add_eos(t, id, p);
      }
    } else if (!st) {
      st = json_id(t, eos, p, "eos_token_id", &id);
      if (!st && id >= 0) st = hmx_tok_add_eos(t, id, p);
    }
    cJSON_Delete(j);
    if (st) return st;
  }
  hmx_tokenizer_set_bos(t, bos, 0);
  return HMX_OK;
}

static hmx_status build(const cJSON *root, const char *path, hmx_tokenizer **out) {
  const cJSON *model = get(root, "model"), *norm = get(root, "normalizer");
  if (!cJSON_IsObject(model) || !type_is(model, "BPE"))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: the model is not BPE", path);
  if (flag(model, "byte_fallback", 0) || (norm && !cJSON_IsNull(norm)))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: byte_fallback or a normalizer (SentencePiece-style "
                    "BPE) is not supported yet", path);
  const int kind = pretok_kind(get(root, "pre_tokenizer"), flag(model, "ignore_merges", 0));
  if (kind < 0)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: a pre-tokenizer hadamix does not implement "
                    "(docs/GGUF.md lists the three it knows)", path);
  const cJSON *vocab = get(model, "vocab"), *merges = get(model, "merges");
  const cJSON *added = get(root, "added_tokens"), *e;
  if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges))
    return hmx_fail(HMX_ERR_FORMAT, "%s: model.vocab or model.merges is missing", path);
  /* the ids: vocab entries and added tokens, dense from 0 */
  double top = -1;
  cJSON_ArrayForEach(e, vocab) if (cJSON_IsNumber(e) && e->valuedouble > top) top = e->valuedouble;
  if (cJSON_IsArray(added))
    cJSON_ArrayForEach(e, added) {
      const cJSON *id = get(e, "id");
      if (cJSON_IsNumber(id) && id->valuedouble > top) top = id->valuedouble;
    }
  if (top < 0 || top >= (1 << 24))
    return hmx_fail(HMX_ERR_FORMAT, "%s: token ids must lie in [0, 2^24)", path);
  const size_t n = (size_t)top + 1;
  hmx_gguf_str *toks = calloc(n, sizeof *toks);
  int32_t *types = hmx_alloc_array(n, sizeof *types);
  const int n_merges = cJSON_GetArraySize(merges);
  hmx_gguf_str *ms = calloc((size_t)n_merges + 1, sizeof *ms);
  char **owned = calloc((size_t)n_merges + 1, sizeof *owned); /* "a b" built from pairs */
  hmx_status st = toks && types && ms && owned ? HMX_OK
                                               : hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", path);
  for (size_t i = 0; !st && i < n; i++) types[i] = -1;
  cJSON_ArrayForEach(e, vocab) {
    if (st) break;
    const double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (v < 0 || v != (double)(size_t)v || types[(size_t)v] != -1)
      st = hmx_fail(HMX_ERR_FORMAT, "%s: vocab entry '%s' has a bad or repeated id", path,
                    e->string);
    else {
      toks[(size_t)v].ptr = e->string;
      toks[(size_t)v].len = strlen(e->string);
      types[(size_t)v] = 1;
    }
  }
  if (cJSON_IsArray(added))
    cJSON_ArrayForEach(e, added) {
      if (st) break;
      const cJSON *id = get(e, "id"), *content = get(e, "content");
      if (!cJSON_IsNumber(id) || id->valuedouble < 0 || !cJSON_IsString(content)) {
        st = hmx_fail(HMX_ERR_FORMAT, "%s: an added token lacks its id or content", path);
        break;
      }
      const size_t k = (size_t)id->valuedouble;
      toks[k].ptr = content->valuestring;
      toks[k].len = strlen(content->valuestring);
      types[k] = flag(e, "special", 0) ? 3 : 4; /* control : user-defined */
    }
  for (size_t i = 0; !st && i < n; i++)
    if (types[i] == -1) st = hmx_fail(HMX_ERR_FORMAT, "%s: no token has id %zu", path, i);
  int k = 0;
  cJSON_ArrayForEach(e, merges) {
    if (st) break;
    if (cJSON_IsString(e)) {
      ms[k].ptr = e->valuestring;
      ms[k].len = strlen(e->valuestring);
    } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
               cJSON_IsString(cJSON_GetArrayItem(e, 0)) &&
               cJSON_IsString(cJSON_GetArrayItem(e, 1))) {
      const char *a = cJSON_GetArrayItem(e, 0)->valuestring,
                 *b = cJSON_GetArrayItem(e, 1)->valuestring;
      const size_t la = strlen(a), lb = strlen(b);
      if (!(owned[k] = malloc(la + lb + 2))) {
        st = hmx_fail(HMX_ERR_NO_MEMORY, "%s: out of memory", path);
        break;
      }
      memcpy(owned[k], a, la);
      owned[k][la] = ' ';
      memcpy(owned[k] + la + 1, b, lb + 1);
      ms[k].ptr = owned[k];
      ms[k].len = la + lb + 1;
    } else
      st = hmx_fail(HMX_ERR_FORMAT, "%s: merge %d is not \"a b\" or [\"a\", \"b\"]", path, k);
    k++;
  }
  if (!st)
    st = hmx_tokenizer_build((hmx_pretok_kind)kind, n, toks, types, (uint64_t)n_merges, ms, path,
                             out);
  for (int i = 0; owned && i < n_merges; i++) free(owned[i]);
  free(owned);
  free(ms);
  free(types);
  free(toks);
  return st;
}

hmx_status hmx_tokenizer_parse_hf(const char *json, size_t len, const char *source,
                                  hmx_tokenizer **out) {
  hmx_clear_error();
  if (!out || !source || (!json && len))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_tokenizer_parse_hf: NULL argument");
  *out = NULL;
  hmx_status st;
  cJSON *root = parse_object(json ? json : "", len, source, &st);
  if (!root) return st;
  st = build(root, source, out);
  cJSON_Delete(root);
  return st;
}

hmx_status hmx_tokenizer_load_hf(const char *path, hmx_tokenizer **out) {
  *out = NULL;
  char file[4096], dir[4096];
  if (ends_with(path, ".json")) {
    snprintf(file, sizeof file, "%s", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
  } else {
    if (snprintf(file, sizeof file, "%s/tokenizer.json", path) >= (int)sizeof file)
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "%s: path too long", path);
    snprintf(dir, sizeof dir, "%s", path);
  }
  hmx_status st;
  size_t n = 0;
  char *text = read_text(file, &n, &st);
  if (!text) return st;
  st = hmx_tokenizer_parse_hf(text, n, file, out);
  free(text);
  if (!st && (st = config_ids(dir, *out))) {
    hmx_tokenizer_free(*out);
    *out = NULL;
  }
  return st;
}
