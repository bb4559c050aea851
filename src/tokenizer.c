/* Byte-level BPE tokenizer from a GGUF file's tokenizer.ggml.* metadata
 * (include/hadamix_tokenizer.h, docs/GGUF.md "Tokenizer").
 *
 * Tokens are stored in the file in GPT-2's byte-to-unicode alphabet (byte b
 * is a printable character: 'Ġ' for a space); they are turned back into raw
 * bytes once, at load, so that encoding works on bytes: a piece starts as one
 * token per byte, then the adjacent pair with the lowest merge rank (the
 * leftmost on ties) is merged until no pair has a rank. Control and
 * user-defined tokens are kept as their literal text. Lookups use two open
 * addressing hash tables: token bytes -> id, and (left id, right id) ->
 * (rank, merged id). */
#include "tokenizer_internal.h"
#include "gguf.h"
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



/* ------------------------------------------------------------------ GPT-2 byte alphabet */

/* byte -> code point: printable Latin-1 bytes stand for themselves, the other
 * 68 bytes for U+0100 + their order among them */
static void byte_alphabet(uint32_t cp_of[256]) {
  int n = 0;
  for (int b = 0; b < 256; b++) {
    const int keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    cp_of[b] = keep ? (uint32_t)b : 0x100u + (uint32_t)n++;
  }
}

/* Decodes a token written in the byte alphabet into bytes (out has room for
 * len bytes: each character is at least one byte). Returns the byte count, or
 * -1 when a character is not in the alphabet. */
static long unmap_token(const char *s, size_t len, const int16_t *byte_of_cp, char *out) {
  size_t i = 0;
  long n = 0;
  while (i < len) {
    const unsigned char c = (unsigned char)s[i];
    uint32_t cp;
    if (c < 0x80) cp = c, i += 1;
    else if ((c & 0xE0) == 0xC0 && i + 1 < len && ((unsigned char)s[i + 1] & 0xC0) == 0x80)
      cp = (uint32_t)(c & 0x1F) << 6 | ((unsigned char)s[i + 1] & 0x3F), i += 2;
    else return -1;
    if (cp >= 0x144 || byte_of_cp[cp] < 0) return -1;
    out[n++] = (char)byte_of_cp[cp];
  }
  return n;
}

/* ------------------------------------------------------------------ hashing */

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static uint64_t hash_u64(uint64_t x) { /* SplitMix64's finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int32_t hmx_tok_vocab_find(const hmx_tokenizer *t, const char *s, size_t n) {
  for (size_t h = hash_bytes(s, n) & (t->vcap - 1);; h = (h + 1) & (t->vcap - 1)) {
    const int32_t id = t->vmap[h];
    if (id < 0) return -1;
    if (t->len[id] == n && !memcmp(t->bytes + t->off[id], s, n)) return id;
  }
}

/* First id wins for duplicate texts (as the Hugging Face vocabulary does). */
static void vocab_insert(hmx_tokenizer *t, int32_t id) {
  const char *s = t->bytes + t->off[id];
  for (size_t h = hash_bytes(s, t->len[id]) & (t->vcap - 1);; h = (h + 1) & (t->vcap - 1)) {
    const int32_t o = t->vmap[h];
    if (o < 0) {
      t->vmap[h] = id;
      return;
    }
    if (t->len[o] == t->len[id] && !memcmp(t->bytes + t->off[o], s, t->len[id])) return;
  }
}

static size_t merge_slot(const hmx_tokenizer *t, uint64_t key) {
  size_t h = hash_u64(key) & (t->mcap - 1);
  while (t->mkey[h] && t->mkey[h] != key) h = (h + 1) & (t->mcap - 1);
  return h;
}

/* ------------------------------------------------------------------ load */

static size_t pow2_above(size_t n) {
  size_t c = 16;
  while (c < n * 2) c *= 2;
  return c;
}

static hmx_status fail_meta(const char *path, const char *what) {
  return hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: %s", path, what);
}

/* tok: n strings, types: n token types or NULL (all normal). */
typedef struct tok_list {
  uint64_t n;
  const hmx_gguf_str *strs;
} tok_list;

static hmx_status load_vocab(hmx_tokenizer *t, const tok_list *tok, const int32_t *types,
                             const char *path) {
  if (tok->n == 0 || tok->n > (1u << 24))
    return fail_meta(path, "the vocabulary must hold 1 to 2^24 tokens");
  t->n_vocab = (int32_t)tok->n;
  size_t total = 0;
  for (uint64_t i = 0; i < tok->n; i++) total += (size_t)tok->strs[i].len;
  t->bytes = malloc(total ? total : 1);
  t->off = hmx_alloc_array(tok->n, sizeof *t->off);
  t->len = hmx_alloc_array(tok->n, sizeof *t->len);
  t->type = hmx_alloc_array(tok->n, sizeof *t->type);
  t->vcap = pow2_above(tok->n);
  t->vmap = hmx_alloc_array(t->vcap, sizeof *t->vmap);
  t->specials = hmx_alloc_array(tok->n, sizeof *t->specials);
  if (!t->bytes || !t->off || !t->len || !t->type || !t->vmap || !t->specials)
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: tokenizer: out of memory", path);
  uint32_t cp_of[256];
  int16_t byte_of_cp[0x144];
  byte_alphabet(cp_of);
  for (int i = 0; i < 0x144; i++) byte_of_cp[i] = -1;
  for (int b = 0; b < 256; b++) byte_of_cp[cp_of[b]] = (int16_t)b;
  size_t at = 0;
  for (int32_t i = 0; i < t->n_vocab; i++) {
    const hmx_gguf_str *s = &tok->strs[i];
    t->type[i] = types ? types[i] : TT_NORMAL;
    t->off[i] = at;
    long n = -1;
    if (t->type[i] != TT_CONTROL && t->type[i] != TT_USER && t->pretok != HMX_TOK_SPM)
      n = unmap_token(s->ptr, (size_t)s->len, byte_of_cp, t->bytes + at);
    if (n < 0) { /* control, user-defined, or not in the alphabet: literal text */
      memcpy(t->bytes + at, s->ptr, (size_t)s->len);
      n = (long)s->len;
    }
    t->len[i] = (size_t)n;
    at += (size_t)n;
    if ((t->type[i] == TT_CONTROL || t->type[i] == TT_USER) && n > 0)
      t->specials[t->n_specials++] = i;
  }
  for (size_t i = 0; i < t->vcap; i++) t->vmap[i] = -1;
  for (int32_t i = 0; i < t->n_vocab; i++)
    if (t->pretok == HMX_TOK_SPM ? t->type[i] == TT_NORMAL
                                 : t->type[i] != TT_CONTROL && t->type[i] != TT_USER)
      vocab_insert(t, i);
  /* a byte without a token of its own (SmolLM2 lacks 21, e.g. 0x04) is
   * dropped from the text, as Hugging Face's BPE does without an unknown token */
  for (int b = 0; b < 256; b++) {
    const char c = (char)b;
    t->byte_id[b] = hmx_tok_vocab_find(t, &c, 1);
  }
  /* specials longest first, so that the longest match wins */
  for (int32_t i = 1; i < t->n_specials; i++)
    for (int32_t j = i; j > 0 && t->len[t->specials[j]] > t->len[t->specials[j - 1]]; j--) {
      int32_t x = t->specials[j];
      t->specials[j] = t->specials[j - 1];
      t->specials[j - 1] = x;
    }
  return HMX_OK;
}

static hmx_status load_merges(hmx_tokenizer *t, const tok_list *mv, const char *path) {
  if (mv->n > (1u << 24)) return fail_meta(path, "more than 2^24 merges");
  t->mcap = pow2_above(mv->n);
  t->mkey = calloc(t->mcap, sizeof *t->mkey);
  t->mrank = hmx_alloc_array(t->mcap, sizeof *t->mrank);
  t->mres = hmx_alloc_array(t->mcap, sizeof *t->mres);
  char *buf = malloc(2 * 65536);
  if (!t->mkey || !t->mrank || !t->mres || !buf) {
    free(buf);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: tokenizer: out of memory", path);
  }
  uint32_t cp_of[256];
  int16_t byte_of_cp[0x144];
  byte_alphabet(cp_of);
  for (int i = 0; i < 0x144; i++) byte_of_cp[i] = -1;
  for (int b = 0; b < 256; b++) byte_of_cp[cp_of[b]] = (int16_t)b;
  hmx_status st = HMX_OK;
  for (uint64_t r = 0; r < mv->n && !st; r++) {
    const hmx_gguf_str *s = &mv->strs[r];
    const char *sp = s->len ? memchr(s->ptr, ' ', (size_t)s->len) : NULL;
    long a = -1, b = -1;
    if (sp && s->len < 65536) {
      const size_t la = (size_t)(sp - s->ptr), lb = (size_t)s->len - la - 1;
      a = unmap_token(s->ptr, la, byte_of_cp, buf);
      b = a >= 0 ? unmap_token(sp + 1, lb, byte_of_cp, buf + a) : -1;
    }
    if (a <= 0 || b <= 0) {
      st = hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: merge %llu is not two byte-level tokens "
                    "separated by a space", path, (unsigned long long)r);
      break;
    }
    const int32_t ia = hmx_tok_vocab_find(t, buf, (size_t)a), ib = hmx_tok_vocab_find(t, buf + a, (size_t)b),
                  ir = hmx_tok_vocab_find(t, buf, (size_t)(a + b));
    if (ia < 0 || ib < 0 || ir < 0) {
      st = hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: merge %llu ('%.*s') names a token that is "
                    "not in the vocabulary", path, (unsigned long long)r,
                    (int)(s->len > 40 ? 40 : s->len), s->ptr);
      break;
    }
    const uint64_t key = ((uint64_t)(uint32_t)ia << 32 | (uint32_t)ib) + 1;
    const size_t h = merge_slot(t, key);
    if (!t->mkey[h]) { /* the first (lowest) rank of a pair counts */
      t->mkey[h] = key;
      t->mrank[h] = (int32_t)r;
      t->mres[h] = ir;
    }
  }
  free(buf);
  return st;
}

static int str_is(const hmx_gguf_str *s, const char *lit) {
  return s->len == strlen(lit) && !memcmp(s->ptr, lit, (size_t)s->len);
}

/* A token id from metadata `key`: -1 when absent; a value of another type or
 * outside the vocabulary is an error, not "absent" (an out-of-range BOS would
 * otherwise drop BOS without a word; llama.cpp warns and takes a default). */
static hmx_status meta_id(const hmx_gguf *f, const hmx_tokenizer *t, const char *path,
                          const char *key, int32_t *out) {
  int64_t v = -1;
  *out = -1;
  const hmx_status st = hmx_gguf_get_int(f, key, &v);
  if (st == HMX_ERR_NOT_FOUND) return HMX_OK;
  if (st) return st;
  if (hmx_tok_check_id(t, v, path, key)) return HMX_ERR_FORMAT;
  *out = (int32_t)v;
  return HMX_OK;
}

/* A bool from metadata `key`: def when absent, an error when of another type. */
static hmx_status meta_flag(const hmx_gguf *f, const char *key, int def, int *out) {
  const hmx_status st = hmx_gguf_get_bool(f, key, out);
  if (st == HMX_ERR_NOT_FOUND) *out = def;
  return st == HMX_ERR_NOT_FOUND ? HMX_OK : st;
}

hmx_status hmx_tokenizer_build(hmx_pretok_kind kind, uint64_t n_vocab,
                               const hmx_gguf_str *tokens, const int32_t *types,
                               uint64_t n_merges, const hmx_gguf_str *merges, const char *source,
                               hmx_tokenizer **out) {
  *out = NULL;
  hmx_tokenizer *t = calloc(1, sizeof *t);
  if (!t) return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  t->pretok = kind;
  t->bos = -1;
  const tok_list tl = {n_vocab, tokens}, ml = {n_merges, merges};
  hmx_status st = load_vocab(t, &tl, types, source);
  if (!st) st = load_merges(t, &ml, source);
  if (st) {
    hmx_tokenizer_free(t);
    return st;
  }
  *out = t;
  return HMX_OK;
}

hmx_status hmx_tok_check_id(const hmx_tokenizer *t, int64_t v, const char *source,
                            const char *key) {
  if (v >= 0 && v < t->n_vocab) return HMX_OK;
  return hmx_fail(HMX_ERR_FORMAT, "%s: %s = %lld is not a token id (the vocabulary has %d "
                  "tokens)", source, key, (long long)v, (int)t->n_vocab);
}

hmx_status hmx_tok_add_eos(hmx_tokenizer *t, int32_t id, const char *source) {
  for (int i = 0; i < t->n_eos; i++)
    if (t->eos[i] == id) return HMX_OK;
  if (t->n_eos == HMX_TOK_MAX_EOS)
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: more than %d end-of-sequence ids", source,
                    HMX_TOK_MAX_EOS);
  t->eos[t->n_eos++] = id;
  return HMX_OK;
}

void hmx_tokenizer_set_bos(hmx_tokenizer *t, int32_t bos, int add_bos) {
  t->bos = bos >= 0 && bos < t->n_vocab ? bos : -1;
  t->add_bos = add_bos && t->bos >= 0;
}

/* BOS, whether to add it, and the ids that end a sequence: EOS, then llama.cpp's
 * end of turn and end of message (Llama 3 Instruct ends a turn with <|eot_id|>,
 * not its EOS). */
static hmx_status special_ids(const hmx_gguf *f, int spm, const char *path, hmx_tokenizer *t) {
  static const char *const END_KEYS[] = {"tokenizer.ggml.eos_token_id",
                                         "tokenizer.ggml.eot_token_id",
                                         "tokenizer.ggml.eom_token_id"};
  int32_t bos = -1;
  int add = 0, given = 0;
  hmx_status st = meta_id(f, t, path, "tokenizer.ggml.bos_token_id", &bos);
  /* SentencePiece models add BOS unless told not to (llama.cpp's default) */
  if (!st) st = meta_flag(f, "tokenizer.ggml.add_bos_token", spm, &add);
  if (!st) given = hmx_gguf_find_kv(f, "tokenizer.ggml.add_bos_token") != NULL;
  if (!st && add && bos < 0)
    return hmx_fail(HMX_ERR_FORMAT, "%s: BOS is to be added (tokenizer.ggml.add_bos_token %s) "
                    "but tokenizer.ggml.bos_token_id is missing", path,
                    given ? "is true" : "is absent, and SentencePiece adds it by default");
  for (size_t i = 0; !st && i < sizeof END_KEYS / sizeof *END_KEYS; i++) {
    int32_t id = -1;
    st = meta_id(f, t, path, END_KEYS[i], &id);
    if (!st && id >= 0) st = hmx_tok_add_eos(t, id, path);
  }
  if (!st) hmx_tokenizer_set_bos(t, bos, add);
  return st;
}

/* The tokenizer.ggml.* metadata of an open GGUF file. */
hmx_status hmx_tokenizer_from_gguf(const hmx_gguf *f, const char *path, hmx_tokenizer **out) {
  *out = NULL;
  hmx_gguf_str model = {0}, pre = {0};
  const hmx_status mst = hmx_gguf_get_str(f, "tokenizer.ggml.model", &model);
  if (mst && mst != HMX_ERR_NOT_FOUND) return mst; /* not a string: its message */
  if (mst)
    return hmx_fail(HMX_ERR_FORMAT, "%s: no tokenizer (tokenizer.ggml.model is missing)", path);
  const int spm = str_is(&model, "llama");
  if (!spm && !str_is(&model, "gpt2"))
    return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: tokenizer model '%.*s' (hadamix reads 'gpt2', "
                    "byte-level BPE, and 'llama', SentencePiece BPE)", path,
                    (int)(model.len > 32 ? 32 : model.len), model.ptr);
  hmx_pretok_kind kind = spm ? HMX_TOK_SPM : HMX_PRETOK_GPT2;
  const hmx_status pst = spm ? HMX_ERR_NOT_FOUND : hmx_gguf_get_str(f, "tokenizer.ggml.pre", &pre);
  if (pst && pst != HMX_ERR_NOT_FOUND) return pst; /* not a string: its message */
  if (!pst) {
    if (str_is(&pre, "smollm")) kind = HMX_PRETOK_SMOLLM;
    else if (str_is(&pre, "llama-bpe")) kind = HMX_PRETOK_LLAMA3;
    else if (!str_is(&pre, "gpt2") && !str_is(&pre, "default"))
      return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: pre-tokenizer '%.*s' (hadamix knows 'smollm', "
                      "'llama-bpe', 'gpt2' and 'default')", path,
                      (int)(pre.len > 32 ? 32 : pre.len), pre.ptr);
  }
  const hmx_gguf_value *tok = hmx_gguf_find_kv(f, "tokenizer.ggml.tokens");
  if (!tok || tok->type != HMX_GGUF_ARRAY || tok->elem != HMX_GGUF_STRING)
    return fail_meta(path, "tokenizer.ggml.tokens is missing or not an array of strings");
  const hmx_gguf_value *types = hmx_gguf_find_kv(f, "tokenizer.ggml.token_type");
  if (types && (types->type != HMX_GGUF_ARRAY || types->n != tok->n ||
                types->elem == HMX_GGUF_STRING || types->elem == HMX_GGUF_F32 ||
                types->elem == HMX_GGUF_F64 || types->elem == HMX_GGUF_BOOL))
    return fail_meta(path, "tokenizer.ggml.token_type is not an integer array as long as the "
                     "tokens");
  const hmx_gguf_value *mv = hmx_gguf_find_kv(f, "tokenizer.ggml.merges");
  if (!spm && (!mv || mv->type != HMX_GGUF_ARRAY || mv->elem != HMX_GGUF_STRING))
    return fail_meta(path, "tokenizer.ggml.merges is missing or not an array of strings");
  const hmx_gguf_value *sc = hmx_gguf_find_kv(f, "tokenizer.ggml.scores");
  if (spm && sc && (sc->type != HMX_GGUF_ARRAY || sc->elem != HMX_GGUF_F32 || sc->n != tok->n))
    return fail_meta(path, "tokenizer.ggml.scores is not an f32 array as long as the tokens");
  int32_t *ty = NULL;
  if (types) {
    if (!(ty = hmx_alloc_array(tok->n ? (size_t)tok->n : 1, sizeof *ty)))
      return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
    for (uint64_t i = 0; i < tok->n; i++) ty[i] = (int32_t)hmx_gguf_array_int(types, i);
  }
  hmx_status st = hmx_tokenizer_build(kind, tok->n, tok->strs, ty, spm ? 0 : mv->n,
                                      spm ? NULL : mv->strs, path, out);
  free(ty);
  if (!st && spm) {
    float *scores = NULL;
    if (sc && !(scores = hmx_alloc_array((size_t)sc->n, sizeof *scores)))
      st = hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
    for (uint64_t i = 0; !st && sc && i < sc->n; i++) {
      const unsigned char *p = sc->raw + 4 * i;
      const uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24;
      memcpy(&scores[i], &u, 4);
    }
    int sp = 1;
    int32_t unk = -1;
    if (!st) st = meta_flag(f, "tokenizer.ggml.add_space_prefix", 1, &sp);
    if (!st) st = meta_id(f, *out, path, "tokenizer.ggml.unknown_token_id", &unk);
    if (!st) st = hmx_spm_setup(*out, scores, sp, unk, path);
    free(scores);
  }
  if (!st) st = special_ids(f, spm, path, *out);
  if (st) {
    hmx_tokenizer_free(*out);
    *out = NULL;
  }
  return st;
}

/* Here rather than in tokenizer_hf.c, which is built only with cJSON: without
 * it a tokenizer.json is still recognized, and refused as unsupported
 * (json_absent.c) rather than misread as a GGUF file. */
int hmx_tokenizer_is_hf(const char *path) {
  if (!path) return 0;
  size_t n = strlen(path);
  if (n >= 5 && !strcmp(path + n - 5, ".json")) return 1;
  char p[4096];
  FILE *fp = NULL;
  if (snprintf(p, sizeof p, "%s/tokenizer.json", path) >= (int)sizeof p || !(fp = fopen(p, "rb")))
    return 0;
  fclose(fp);
  return 1;
}

hmx_status hmx_tokenizer_load(const char *path, hmx_tokenizer **out) {
  hmx_clear_error();
  if (!out || !path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_tokenizer_load: NULL argument");
  *out = NULL;
  /* a Hugging Face tokenizer.json, or a directory holding one (tokenizer_hf.c) */
  if (hmx_tokenizer_is_hf(path)) return hmx_tokenizer_load_hf(path, out);
  hmx_gguf *f;
  hmx_status st = hmx_gguf_open(path, &f);
  if (st) return st;
  st = hmx_tokenizer_from_gguf(f, path, out);
  hmx_gguf_free(f);
  return st;
}

void hmx_tokenizer_free(hmx_tokenizer *t) {
  if (!t) return;
  free(t->bytes);
  free(t->off);
  free(t->len);
  free(t->type);
  free(t->vmap);
  free(t->mkey);
  free(t->mrank);
  free(t->mres);
  free(t->specials);
  free(t->score);
  free(t->srank);
  free(t->dec);
  free(t->doff);
  free(t->dlen);
  free(t);
}

/* ------------------------------------------------------------------ encode */

int hmx_tok_push(hmx_tok_ids *o, int32_t id) {
  if (o->n == o->cap) {
    int64_t cap = o->cap ? o->cap * 2 : 64;
    int32_t *v = realloc(o->v, (size_t)cap * sizeof *v);
    if (!v) return 0;
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n++] = id;
  return 1;
}

/* BPE over one piece's bytes, O(n log n): the symbols form a linked list and
 * the candidate pairs a binary min-heap ordered by (rank, position); a popped
 * candidate whose symbols have changed since it was pushed is stale and
 * skipped. Popping the least (rank, position) merges, at every step, the
 * lowest-ranked pair and among equals the leftmost: the same result as
 * rescanning the piece after every merge. */
static int cand_less(const hmx_tok_cand *a, const hmx_tok_cand *b) {
  return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

void hmx_tok_heap_push(hmx_tok_work *w, hmx_tok_cand c) {
  size_t i = w->nheap++;
  while (i > 0 && cand_less(&c, &w->heap[(i - 1) / 2])) {
    w->heap[i] = w->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  w->heap[i] = c;
}

hmx_tok_cand hmx_tok_heap_pop(hmx_tok_work *w) {
  hmx_tok_cand top = w->heap[0], last = w->heap[--w->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= w->nheap) break;
    if (c + 1 < w->nheap && cand_less(&w->heap[c + 1], &w->heap[c])) c++;
    if (!cand_less(&w->heap[c], &last)) break;
    w->heap[i] = w->heap[c];
    i = c;
  }
  if (w->nheap) w->heap[i] = last;
  return top;
}

/* Pushes the pair (i, next[i]) when it has a merge. */
static void push_pair(const hmx_tokenizer *t, hmx_tok_work *w, int32_t i) {
  if (i < 0 || w->next[i] < 0) return;
  const int32_t a = w->sym[i], b = w->sym[w->next[i]];
  const uint64_t key = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
  const size_t h = merge_slot(t, key);
  if (!t->mkey[h]) return;
  hmx_tok_cand c = {t->mrank[h], t->mres[h], (uint32_t)i, a, b};
  hmx_tok_heap_push(w, c);
}

static int bpe(const hmx_tokenizer *t, const unsigned char *p, size_t len, hmx_tok_work *w, hmx_tok_ids *o) {
  /* Llama 3 (Hugging Face's ignore_merges): a piece that is a token is that token */
  if (t->pretok == HMX_PRETOK_LLAMA3) {
    const int32_t whole = hmx_tok_vocab_find(t, (const char *)p, len);
    if (whole >= 0) return hmx_tok_push(o, whole);
  }
  int32_t n = 0;
  for (size_t i = 0; i < len; i++)
    if (t->byte_id[p[i]] >= 0) w->sym[n++] = t->byte_id[p[i]];
  for (int32_t i = 0; i < n; i++) {
    w->prev[i] = i - 1;
    w->next[i] = i + 1 < n ? i + 1 : -1;
  }
  w->nheap = 0;
  for (int32_t i = 0; i + 1 < n; i++) push_pair(t, w, i);
  while (w->nheap) {
    const hmx_tok_cand c = hmx_tok_heap_pop(w);
    const int32_t i = (int32_t)c.pos, j = w->next[i];
    if (w->sym[i] != c.left || j < 0 || w->sym[j] != c.right) continue; /* stale */
    w->sym[i] = c.res;
    w->sym[j] = -1;
    w->next[i] = w->next[j];
    if (w->next[j] >= 0) w->prev[w->next[j]] = i;
    push_pair(t, w, w->prev[i]);
    push_pair(t, w, i);
  }
  for (int32_t i = n ? 0 : -1; i >= 0; i = w->next[i])
    if (!hmx_tok_push(o, w->sym[i])) return 0;
  return 1;
}

static hmx_status encode_plain(const hmx_tokenizer *t, const char *text, size_t len, int at_start,
                               hmx_tok_ids *o) {
  if (t->pretok == HMX_TOK_SPM) return hmx_spm_encode(t, text, len, at_start, o);
  if (!len) return HMX_OK;
  hmx_span *sp;
  size_t ns;
  hmx_status st = hmx_pretokenize(t->pretok, text, len, &sp, &ns);
  if (st) return st;
  size_t longest = 1;
  for (size_t i = 0; i < ns; i++)
    if (sp[i].len > longest) longest = sp[i].len;
  /* a piece of n bytes pushes at most n - 1 pairs, then 2 per merge (< n) */
  hmx_tok_work w = {hmx_alloc_array(longest, sizeof(int32_t)), hmx_alloc_array(longest, sizeof(int32_t)),
                hmx_alloc_array(longest, sizeof(int32_t)), hmx_alloc_array(longest, 3 * sizeof(hmx_tok_cand)),
                0};
  int ok = w.sym && w.next && w.prev && w.heap && longest < INT32_MAX / 3;
  for (size_t i = 0; i < ns && ok; i++)
    ok = bpe(t, (const unsigned char *)text + sp[i].start, sp[i].len, &w, o);
  free(w.sym);
  free(w.next);
  free(w.prev);
  free(w.heap);
  free(sp);
  return ok ? HMX_OK : hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
}

hmx_status hmx_tokenizer_encode(const hmx_tokenizer *t, const char *text, size_t len, int special,
                                int32_t **out, int64_t *n) {
  hmx_clear_error();
  if (!t || !out || !n || (!text && len))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_tokenizer_encode: NULL argument");
  *out = NULL;
  *n = 0;
  hmx_tok_ids o = {NULL, 0, 0};
  hmx_status st = HMX_OK;
  size_t a = 0; /* start of the plain text not yet encoded */
  for (size_t i = 0; i < len && !st && special; i++) {
    for (int32_t k = 0; k < t->n_specials; k++) {
      const int32_t id = t->specials[k];
      if (t->len[id] <= len - i && !memcmp(text + i, t->bytes + t->off[id], t->len[id])) {
        st = encode_plain(t, text + a, i - a, a == 0, &o);
        if (!st && !hmx_tok_push(&o, id)) st = hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
        i += t->len[id] - 1;
        a = i + 1;
        break;
      }
    }
  }
  if (!st) st = encode_plain(t, text + a, len - a, a == 0, &o);
  if (st) {
    free(o.v);
    return st;
  }
  *out = o.v ? o.v : malloc(sizeof(int32_t));
  if (!*out) return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  *n = o.n;
  return HMX_OK;
}

/* ------------------------------------------------------------------ queries */

hmx_status hmx_tokenizer_piece(const hmx_tokenizer *t, int32_t id, const char **bytes,
                               size_t *len) {
  if (!t || !bytes || !len)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_tokenizer_piece: NULL argument");
  if (id < 0 || id >= t->n_vocab)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "token id %d is outside the vocabulary (%d)",
                    (int)id, (int)t->n_vocab);
  if (t->dec) { /* SentencePiece: the text with '▁' as a space, byte tokens as bytes */
    *bytes = t->dec + t->doff[id];
    *len = t->dlen[id];
    return HMX_OK;
  }
  *bytes = t->bytes + t->off[id];
  *len = t->len[id];
  return HMX_OK;
}

int32_t hmx_tokenizer_vocab_size(const hmx_tokenizer *t) { return t ? t->n_vocab : 0; }
int32_t hmx_tokenizer_bos(const hmx_tokenizer *t) { return t ? t->bos : -1; }
int32_t hmx_tokenizer_eos(const hmx_tokenizer *t) { return t && t->n_eos ? t->eos[0] : -1; }
int hmx_tokenizer_is_eos(const hmx_tokenizer *t, int32_t id) {
  if (!t) return 0;
  for (int i = 0; i < t->n_eos; i++)
    if (t->eos[i] == id) return 1;
  return 0;
}
int hmx_tokenizer_add_bos(const hmx_tokenizer *t) { return t ? t->add_bos : 0; }
int hmx_tokenizer_is_control(const hmx_tokenizer *t, int32_t id) {
  return t && id >= 0 && id < t->n_vocab && t->type[id] == TT_CONTROL;
}

int32_t hmx_tokenizer_find(const hmx_tokenizer *t, const char *s) {
  if (!t || !s) return -1;
  const size_t n = strlen(s);
  for (int32_t k = 0; k < t->n_specials; k++)
    if (t->len[t->specials[k]] == n && !memcmp(t->bytes + t->off[t->specials[k]], s, n))
      return t->specials[k];
  return hmx_tok_vocab_find(t, s, n);
}
