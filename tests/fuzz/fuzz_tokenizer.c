/* libFuzzer target for the tokenizer readers and the encoder
 * (include/hadamix_tokenizer.h, src/tokenizer*.c, docs/GGUF.md "Tokenizer").
 *
 * An input is a GGUF file (its tokenizer.ggml.* metadata, through
 * hmx_tokenizer_from_gguf) or, when its first non-blank byte is '{', a
 * Hugging Face tokenizer.json (hmx_tokenizer_parse_hf). Properties:
 *
 * - a rejection leaves *out NULL, returns FORMAT, UNSUPPORTED or NO_MEMORY and
 *   sets a message;
 * - an accepted tokenizer answers its queries within the vocabulary (pieces,
 *   BOS / EOS, ids outside it refused) and encodes a fixed set of texts, the
 *   input's own text (GGUF string "fuzz.text", JSON string "fuzz_text") and a
 *   text built from its first pieces, with special tokens off and on. Every id
 *   lies in the vocabulary, and the pieces give the text back:
 *   - byte-level BPE: the pieces, back to back, are the text when every byte
 *     has a token, else a subsequence of it (bytes without a token are
 *     dropped);
 *   - SentencePiece: the same after mapping U+2581 to ' ' on both sides, with
 *     the leading space that add_space_prefix adds, when every byte has a
 *     <0xXX> token and the unknown token was not used;
 * - the pre-tokenizers split any text (also invalid UTF-8) into non-empty
 *   spans that tile it, and never inside a character of valid UTF-8.
 *
 * Built like fuzz_gguf.c (tests/t_fuzz.cmake): a libFuzzer binary with
 * HMX_FUZZ=ON under clang, and always inside tests/fuzz/fuzz_replay.c over
 * the seed corpus corpus_tokenizer/ (written by make_tokenizer_seeds.py). */
#include "gguf.h"
#include "tokenizer_internal.h"
#include "fuzz_assert.h"
#ifdef HMX_LIBFUZZER
#include "fuzz_gguf_rewrite.h" /* the mutator's */
#endif

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

/* Texts every accepted tokenizer encodes: ASCII words, contractions in both
 * cases, digits, runs of blanks and line breaks, Latin-1 and CJK letters, an
 * emoji, U+2581 itself, a chat template's control tokens, and invalid UTF-8
 * (a lone continuation byte, 0xFF, cut sequences, an overlong form, a
 * surrogate, a code point past U+10FFFF). */
static const char *const FIXED_TEXTS[] = {
    "Hello world",
    "it's we'll THEY'RE I'M",
    "12345 6789 0",
    "  two  spaces\n\nline\r\nbreak \t\ttabs   ",
    ("h\xc3\xa9llo w\xc3\xb6rld \xc3\xb1 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
     "\xf0\x9f\x98\x80!"),
    "\xe2\x96\x81x \xe2\x96\x81\xe2\x96\x81 y",
    "<|im_start|>user\nhi<|im_end|><s></s>",
    "\x80\xff\xfe\xc3(\xe2\x82 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 end\xe2",
    "a",
    " ",
};

static int is_rejection(hmx_status s) {
  return s == HMX_ERR_FORMAT || s == HMX_ERR_UNSUPPORTED || s == HMX_ERR_NO_MEMORY;
}

static int is_json(const uint8_t *d, size_t n) {
  size_t i = 0;
  while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
  return i < n && d[i] == '{';
}

/* An accepted GGUF tokenizer kept every special id its file gives: BOS is
 * that id, EOS / end of turn / end of message are ids that end a sequence,
 * and BOS is added when add_bos_token says so (an id outside the vocabulary,
 * or of another type, must have been refused, not dropped). */
static void check_special_ids(const hmx_gguf *f, const hmx_tokenizer *t) {
  static const char *const END_KEYS[] = {"tokenizer.ggml.eos_token_id",
                                         "tokenizer.ggml.eot_token_id",
                                         "tokenizer.ggml.eom_token_id"};
  int64_t v;
  int b;
  if (hmx_gguf_get_int(f, "tokenizer.ggml.bos_token_id", &v) == HMX_OK)
    FUZZ_ASSERT(hmx_tokenizer_bos(t) == v);
  else
    FUZZ_ASSERT(hmx_tokenizer_bos(t) == -1);
  for (size_t i = 0; i < sizeof END_KEYS / sizeof *END_KEYS; i++)
    if (hmx_gguf_get_int(f, END_KEYS[i], &v) == HMX_OK)
      FUZZ_ASSERT(v >= 0 && v <= INT32_MAX && hmx_tokenizer_is_eos(t, (int32_t)v));
  if (hmx_gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &b) == HMX_OK)
    FUZZ_ASSERT(hmx_tokenizer_add_bos(t) == b);
}

/* Loads the input's tokenizer; *text / *text_len get the input's own text
 * (NULL when it has none; for JSON a copy the caller frees). */
static hmx_status load(const uint8_t *data, size_t size, hmx_tokenizer **out, char **text,
                       size_t *text_len) {
  *text = NULL;
  *text_len = 0;
  if (is_json(data, size)) {
    hmx_status s = hmx_tokenizer_parse_hf((const char *)data, size, "fuzz", out);
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(j, "fuzz_text");
    if (cJSON_IsString(ft) && (*text = malloc(strlen(ft->valuestring) + 1)) != NULL) {
      *text_len = strlen(ft->valuestring);
      memcpy(*text, ft->valuestring, *text_len + 1);
    }
    cJSON_Delete(j);
    return s;
  }
  hmx_gguf *f = NULL;
  hmx_status s = hmx_gguf_parse(data, size, "fuzz", &f);
  if (s) {
    *out = NULL;
    return s;
  }
  s = hmx_tokenizer_from_gguf(f, "fuzz", out);
  if (!s) check_special_ids(f, *out);
  hmx_gguf_str ft;
  if (!s && !hmx_gguf_get_str(f, "fuzz.text", &ft) && (*text = malloc(ft.len + 1)) != NULL) {
    memcpy(*text, ft.ptr, ft.len);
    *text_len = ft.len;
  }
  hmx_gguf_free(f);
  return s;
}

/* For fuzz_replay.c: does the reader accept this input (ok_* / bad_* seeds)? */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size) {
  hmx_tokenizer *t = NULL;
  char *text;
  size_t n;
  hmx_status s = load(data, size, &t, &text, &n);
  free(text);
  hmx_tokenizer_free(t);
  return s;
}

/* Length of the valid UTF-8 character at s (0: not one). */
static size_t utf8_valid_len(const unsigned char *s, size_t left) {
  uint32_t cp;
  size_t n;
  if (s[0] < 0x80) return 1;
  if ((s[0] & 0xE0) == 0xC0) n = 2, cp = s[0] & 0x1F;
  else if ((s[0] & 0xF0) == 0xE0) n = 3, cp = s[0] & 0x0F;
  else if ((s[0] & 0xF8) == 0xF0) n = 4, cp = s[0] & 0x07;
  else return 0;
  if (n > left) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/* The pre-tokenizer's spans tile the text and keep valid characters whole. */
static void check_pretokenize(hmx_pretok_kind kind, const char *text, size_t len) {
  if (!len) return;
  hmx_span *sp = NULL;
  size_t n = 0;
  FUZZ_ASSERT(hmx_pretokenize(kind, text, len, &sp, &n) == HMX_OK);
  FUZZ_ASSERT(n >= 1 && n <= len);
  unsigned char *inside = calloc(len, 1); /* 1: a continuation byte of a valid character */
  FUZZ_ASSERT(inside != NULL);
  for (size_t i = 0; i < len;) {
    const size_t c = utf8_valid_len((const unsigned char *)text + i, len - i);
    for (size_t k = 1; k < c; k++) inside[i + k] = 1;
    i += c ? c : 1;
  }
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    FUZZ_ASSERT(sp[i].start == at && sp[i].len > 0 && sp[i].len <= len - at);
    FUZZ_ASSERT(!inside[sp[i].start]);
    at += sp[i].len;
  }
  FUZZ_ASSERT(at == len);
  free(inside);
  free(sp);
}

/* s with every U+2581 (E2 96 81) replaced by one ' '; returns the new length. */
static size_t spaces_from_u2581(char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    if (n - i >= 3 && !memcmp(s + i, "\xe2\x96\x81", 3)) {
      s[o++] = ' ';
      i += 3;
    } else
      s[o++] = s[i++];
  }
  return o;
}

/* Is a[0..na) a subsequence of b[0..nb)? */
static int is_subsequence(const char *a, size_t na, const char *b, size_t nb) {
  size_t i = 0;
  for (size_t k = 0; k < nb && i < na; k++)
    if (a[i] == b[k]) i++;
  return i == na;
}

/* Does the text start with a control or user-defined token that encoding
 * with special = 1 matches at position 0? */
static int starts_with_special(const hmx_tokenizer *t, const char *text, size_t len) {
  for (int32_t k = 0; k < t->n_specials; k++) {
    const int32_t id = t->specials[k];
    if (t->len[id] <= len && !memcmp(text, t->bytes + t->off[id], t->len[id])) return 1;
  }
  return 0;
}

static void check_encode(const hmx_tokenizer *t, const char *text, size_t len, int special) {
  int32_t *ids = NULL;
  int64_t n = -1;
  FUZZ_ASSERT(hmx_tokenizer_encode(t, text, len, special, &ids, &n) == HMX_OK);
  FUZZ_ASSERT(ids != NULL && n >= 0 && (uint64_t)n <= 3 * (uint64_t)len + 3);
  int all_bytes = 1, unk_used = 0;
  for (int b = 0; b < 256; b++) all_bytes &= t->byte_id[b] >= 0;
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    FUZZ_ASSERT(ids[i] >= 0 && ids[i] < hmx_tokenizer_vocab_size(t));
    const char *p;
    size_t pl;
    FUZZ_ASSERT(hmx_tokenizer_piece(t, ids[i], &p, &pl) == HMX_OK);
    total += pl;
    unk_used |= ids[i] == t->unk && t->unk >= 0;
    if (!special) FUZZ_ASSERT(!hmx_tokenizer_is_control(t, ids[i]));
  }
  char *got = malloc(total + 1);
  FUZZ_ASSERT(got != NULL);
  size_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    const char *p;
    size_t pl;
    hmx_tokenizer_piece(t, ids[i], &p, &pl);
    memcpy(got + at, p, pl);
    at += pl;
  }
  if (t->pretok != HMX_TOK_SPM) {
    if (all_bytes) FUZZ_ASSERT(total == len && !memcmp(got, text, len));
    else FUZZ_ASSERT(is_subsequence(got, total, text, len));
  } else if (all_bytes && !unk_used) {
    const int prefix =
        t->space_prefix && len > 0 && !(special && starts_with_special(t, text, len));
    char *want = malloc(len + 1);
    FUZZ_ASSERT(want != NULL);
    want[0] = ' ';
    memcpy(want + prefix, text, len);
    const size_t nw = spaces_from_u2581(want, len + (size_t)prefix),
                 ng = spaces_from_u2581(got, total);
    FUZZ_ASSERT(ng == nw && !memcmp(got, want, nw));
    free(want);
  }
  free(got);
  free(ids);
}

static void check_tokenizer(const hmx_tokenizer *t, const char *own, size_t own_len) {
  const int32_t nv = hmx_tokenizer_vocab_size(t);
  FUZZ_ASSERT(nv >= 1 && nv <= (1 << 24));
  const int32_t bos = hmx_tokenizer_bos(t), eos = hmx_tokenizer_eos(t);
  FUZZ_ASSERT(bos >= -1 && bos < nv && eos >= -1 && eos < nv);
  FUZZ_ASSERT(!hmx_tokenizer_add_bos(t) || bos >= 0);
  FUZZ_ASSERT(!hmx_tokenizer_is_eos(t, -1) && !hmx_tokenizer_is_eos(t, nv));
  FUZZ_ASSERT(eos < 0 ? !hmx_tokenizer_is_eos(t, 0) : hmx_tokenizer_is_eos(t, eos));
  const char *p;
  size_t pl;
  FUZZ_ASSERT(hmx_tokenizer_piece(t, -1, &p, &pl) == HMX_ERR_INVALID_ARGUMENT);
  FUZZ_ASSERT(hmx_tokenizer_piece(t, nv, &p, &pl) == HMX_ERR_INVALID_ARGUMENT);
  FUZZ_ASSERT(!hmx_tokenizer_is_control(t, -1) && !hmx_tokenizer_is_control(t, nv));
  /* a text from the first pieces, a space after every third: it meets the merges */
  size_t cap = 0;
  for (int32_t i = 0; i < nv && i < 24; i++) {
    FUZZ_ASSERT(hmx_tokenizer_piece(t, i, &p, &pl) == HMX_OK);
    cap += pl + 1;
  }
  char *joined = malloc(cap + 1);
  FUZZ_ASSERT(joined != NULL);
  size_t jl = 0;
  for (int32_t i = 0; i < nv && i < 24; i++) {
    hmx_tokenizer_piece(t, i, &p, &pl);
    memcpy(joined + jl, p, pl);
    jl += pl;
    if (i % 3 == 2) joined[jl++] = ' ';
  }
  for (int special = 0; special <= 1; special++) {
    for (size_t k = 0; k < sizeof FIXED_TEXTS / sizeof FIXED_TEXTS[0]; k++)
      check_encode(t, FIXED_TEXTS[k], strlen(FIXED_TEXTS[k]), special);
    check_encode(t, "", 0, special);
    check_encode(t, joined, jl, special);
    if (own) check_encode(t, own, own_len, special);
  }
  free(joined);
}

#ifdef HMX_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Half of the mutations of a GGUF input that parses rewrite it well-formed
 * with one structural change (fuzz_gguf_rewrite.h): the vocabulary, scores,
 * token types or merges cut short, a key dropped, a number or type changed,
 * which byte flips, breaking the file's lengths, rarely give the reader to
 * pass on. The rest, and every mutation of a JSON input, are libFuzzer's. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 2) {
    const size_t n = fuzz_gguf_rewrite(data, size, max_size, seed >> 1);
    if (n) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hmx_tokenizer *t = (hmx_tokenizer *)(uintptr_t)1;
  char *text = NULL;
  size_t text_len = 0;
  hmx_status s = load(data, size, &t, &text, &text_len);
  if (s != HMX_OK) {
    FUZZ_ASSERT(t == NULL);
    FUZZ_ASSERT(is_rejection(s));
    FUZZ_ASSERT(hmx_last_error()[0] != '\0');
  } else {
    FUZZ_ASSERT(t != NULL);
    check_tokenizer(t, text, text_len);
    hmx_tokenizer_free(t);
  }
  /* the pre-tokenizers on the raw input and on the input's own text */
  for (int k = HMX_PRETOK_GPT2; k <= HMX_PRETOK_LLAMA3; k++) {
    check_pretokenize((hmx_pretok_kind)k, (const char *)data, size);
    if (text) check_pretokenize((hmx_pretok_kind)k, text, text_len);
  }
  free(text);
  return 0;
}
