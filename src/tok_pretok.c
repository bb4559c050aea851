/* The byte-level BPE pre-tokenizer (docs/GGUF.md "Tokenizer").
 *
 * GPT-2's pattern, written out as code rather than run by a regex engine:
 *   's|'t|'re|'ve|'m|'ll|'d | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
 * tried in this order at each position (leftmost alternative wins, each
 * quantifier greedy). "smollm" first isolates every \p{N} character (Hugging
 * Face's Digits(individual_digits=true)), then applies the pattern to each
 * remaining run on its own. Classes come from unicode_class.c; a byte that is
 * not valid UTF-8 is one character of class "other". */
#include "tokenizer_internal.h"
#include "internal.h"

#include <stdlib.h>

typedef struct uchar {
  uint32_t cp;
  uint32_t off;   /* byte offset in the text */
  hmx_uclass cls;
} uchar;

/* Decodes one UTF-8 character at s (n bytes left); returns its length, and
 * *cp = 0xFFFFFFFF for an invalid byte (length 1). Overlong forms,
 * surrogates and values past U+10FFFF are invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
  const unsigned char c = s[0];
  *cp = 0xFFFFFFFFu;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) len = 2, v = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) len = 3, v = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0) len = 4, v = c & 0x07, min = 0x10000;
  else return 1;
  if (len > n) return 1;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 1;
    v = v << 6 | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 1;
  *cp = v;
  return len;
}

typedef struct out {
  hmx_span *s;
  size_t n, cap;
} out;

static int emit(out *o, const uchar *u, size_t a, size_t b, size_t text_len, size_t total) {
  if (a >= b) return 1;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 16;
    hmx_span *s = realloc(o->s, cap * sizeof *s);
    if (!s) return 0;
    o->s = s;
    o->cap = cap;
  }
  const size_t end = b < total ? u[b].off : text_len;
  o->s[o->n].start = u[a].off;
  o->s[o->n].len = end - u[a].off;
  o->n++;
  return 1;
}

static size_t run(const uchar *u, size_t i, size_t e, hmx_uclass c) {
  while (i < e && u[i].cls == c) i++;
  return i;
}

static size_t run_other(const uchar *u, size_t i, size_t e) {
  while (i < e && u[i].cls == HMX_UC_OTHER) i++;
  return i;
}

/* The contraction at i ('s 't 're 've 'm 'll 'd), its length in chars or 0. */
static size_t contraction(const uchar *u, size_t i, size_t e) {
  if (u[i].cp != '\'' || i + 1 >= e) return 0;
  const uint32_t a = u[i + 1].cp, b = i + 2 < e ? u[i + 2].cp : 0;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

/* GPT-2's pattern over chars [i, e). */
static int gpt2(out *o, const uchar *u, size_t i, size_t e, size_t text_len, size_t total) {
  while (i < e) {
    size_t j, k = contraction(u, i, e);
    if (k) j = i + k;
    else if (u[i].cp == ' ' && i + 1 < e && u[i + 1].cls != HMX_UC_SPACE)
      j = u[i + 1].cls == HMX_UC_OTHER ? run_other(u, i + 1, e) : run(u, i + 1, e, u[i + 1].cls);
    else if (u[i].cls == HMX_UC_SPACE) {
      j = run(u, i, e, HMX_UC_SPACE);
      /* \s+(?!\S): leave the last space to the word that follows; a single
       * space before a non-space falls through to \s+ */
      if (j < e && j - i >= 2) j--;
    } else if (u[i].cls == HMX_UC_OTHER)
      j = run_other(u, i, e);
    else
      j = run(u, i, e, u[i].cls);
    if (!emit(o, u, i, j, text_len, total)) return 0;
    i = j;
  }
  return 1;
}

static int is_crlf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

/* The case-insensitive contraction at i for Llama 3, its length or 0. */
static size_t contraction_ci(const uchar *u, size_t i, size_t e) {
  if (u[i].cp != '\'' || i + 1 >= e) return 0;
  const uint32_t a = u[i + 1].cp | 0x20, b = i + 2 < e ? u[i + 2].cp | 0x20 : 0;
  if (u[i + 1].cp >= 0x80) return 0;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 < e && u[i + 2].cp < 0x80 &&
      ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')))
    return 3;
  return 0;
}

/* Llama 3's pattern over chars [i, e):
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} |
 *    ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+ */
static int llama3(out *o, const uchar *u, size_t i, size_t e, size_t text_len, size_t total) {
  while (i < e) {
    const hmx_uclass c = u[i].cls;
    const hmx_uclass c1 = i + 1 < e ? u[i + 1].cls : HMX_UC_OTHER;
    size_t j = 0, k = contraction_ci(u, i, e);
    if (k) j = i + k;
    else if (c == HMX_UC_LETTER)
      j = run(u, i, e, HMX_UC_LETTER);
    else if (c != HMX_UC_NUMBER && !is_crlf(u[i].cp) && i + 1 < e && c1 == HMX_UC_LETTER)
      j = run(u, i + 1, e, HMX_UC_LETTER); /* one non-letter, non-digit, non-newline prefix */
    else if (c == HMX_UC_NUMBER) {
      j = i + 1;
      while (j < e && j < i + 3 && u[j].cls == HMX_UC_NUMBER) j++;
    } else if (c == HMX_UC_OTHER || (u[i].cp == ' ' && i + 1 < e && c1 == HMX_UC_OTHER)) {
      j = run_other(u, c == HMX_UC_OTHER ? i : i + 1, e);
      while (j < e && is_crlf(u[j].cp)) j++;
    } else { /* whitespace */
      const size_t end = run(u, i, e, HMX_UC_SPACE);
      size_t last_nl = end;
      for (size_t q = i; q < end; q++)
        if (is_crlf(u[q].cp)) last_nl = q;
      if (last_nl < end) j = last_nl + 1;          /* \s*[\r\n]+ */
      else if (end < e && end - i >= 2) j = end - 1; /* \s+(?!\S) */
      else j = end;                                /* \s+ */
    }
    if (!emit(o, u, i, j, text_len, total)) return 0;
    i = j;
  }
  return 1;
}

hmx_status hmx_pretokenize(hmx_pretok_kind kind, const char *text, size_t len, hmx_span **spans,
                           size_t *n) {
  if (!spans || !n || (!text && len))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_pretokenize: NULL argument");
  *spans = NULL;
  *n = 0;
  if (len > UINT32_MAX) return hmx_fail(HMX_ERR_UNSUPPORTED, "tokenizer: text over 4 GiB");
  uchar *u = hmx_alloc_array(len ? len : 1, sizeof *u);
  if (!u) return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  size_t m = 0;
  for (size_t p = 0; p < len;) {
    uint32_t cp;
    size_t l = utf8_next((const unsigned char *)text + p, len - p, &cp);
    u[m].cp = cp;
    u[m].off = (uint32_t)p;
    u[m].cls = cp == 0xFFFFFFFFu ? HMX_UC_OTHER : hmx_uni_class(cp);
    m++;
    p += l;
  }
  out o = {NULL, 0, 0};
  int ok = 1;
  if (kind == HMX_PRETOK_SMOLLM) {
    size_t a = 0;
    for (size_t i = 0; i < m && ok; i++)
      if (u[i].cls == HMX_UC_NUMBER) {
        ok = gpt2(&o, u, a, i, len, m) && emit(&o, u, i, i + 1, len, m);
        a = i + 1;
      }
    if (ok) ok = gpt2(&o, u, a, m, len, m);
  } else if (kind == HMX_PRETOK_LLAMA3)
    ok = llama3(&o, u, 0, m, len, m);
  else
    ok = gpt2(&o, u, 0, m, len, m);
  free(u);
  if (!ok) {
    free(o.s);
    return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  }
  *spans = o.s;
  *n = o.n;
  return HMX_OK;
}
