/* SentencePiece BPE (Llama 2, TinyLlama: tokenizer.ggml.model = "llama"),
 * docs/GGUF.md "Tokenizer".
 *
 * Spaces become '▁' (U+2581) and, at the start of the text, one '▁' is
 * prepended (add_space_prefix). The text starts as one symbol per UTF-8
 * character; repeatedly, of all adjacent pairs whose concatenation is a
 * normal token, the one whose token has the highest score (leftmost on ties)
 * is merged. A final symbol that is not a token becomes its bytes' <0xXX>
 * tokens (byte fallback), or the unknown token. This is SentencePiece's BPE
 * encoding; the candidates live in the same min-heap as the byte-level BPE
 * (tokenizer.c), ranked by the dense rank of the scores. */
#include "tokenizer_internal.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char SPACE[] = "\xe2\x96\x81"; /* U+2581 */

typedef struct score_id {
  float score;
  int32_t id;
} score_id;

static int by_score_desc(const void *a, const void *b) {
  const score_id *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

hmx_status hmx_spm_setup(hmx_tokenizer *t, const float *scores, int space_prefix, int32_t unk,
                         const char *source) {
  const size_t n = (size_t)t->n_vocab;
  t->score = hmx_alloc_array(n, sizeof *t->score);
  t->srank = hmx_alloc_array(n, sizeof *t->srank);
  t->doff = hmx_alloc_array(n, sizeof *t->doff);
  t->dlen = hmx_alloc_array(n, sizeof *t->dlen);
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += t->len[i];
  t->dec = malloc(total + 1);
  score_id *order = hmx_alloc_array(n, sizeof *order);
  if (!t->score || !t->srank || !t->doff || !t->dlen || !t->dec || !order) {
    free(order);
    return hmx_fail(HMX_ERR_NO_MEMORY, "%s: tokenizer: out of memory", source);
  }
  for (size_t i = 0; i < n; i++) {
    t->score[i] = scores ? scores[i] : 0.0f;
    if (t->score[i] != t->score[i]) {
      free(order);
      return hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: the score of token %zu is NaN", source, i);
    }
    order[i].score = t->score[i];
    order[i].id = (int32_t)i;
  }
  qsort(order, n, sizeof *order, by_score_desc);
  int32_t r = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && order[i].score != order[i - 1].score) r++;
    t->srank[order[i].id] = r;
  }
  free(order);
  for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = t->bytes + t->off[i];
    const size_t len = t->len[i];
    t->doff[i] = at;
    if (t->type[i] == TT_BYTE) {
      int hi, lo;
      if (len != 6 || memcmp(s, "<0x", 3) || s[5] != '>' || (hi = hexval(s[3])) < 0 ||
          (lo = hexval(s[4])) < 0)
        return hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: byte token %zu is not <0xXX>", source, i);
      const int byte = hi * 16 + lo;
      if (t->byte_id[byte] < 0) t->byte_id[byte] = (int32_t)i;
      t->dec[at++] = (char)byte;
    } else {
      for (size_t k = 0; k < len;) {
        if (len - k >= 3 && !memcmp(s + k, SPACE, 3)) {
          t->dec[at++] = ' ';
          k += 3;
        } else
          t->dec[at++] = s[k++];
      }
    }
    t->dlen[i] = at - t->doff[i];
  }
  t->space_prefix = space_prefix;
  t->unk = unk >= 0 && unk < t->n_vocab ? unk : -1;
  /* a control token (BOS, say) as the unknown token would come out of plain
   * text with special tokens off: a wrong answer, so the file is refused */
  if (t->unk >= 0 && t->type[t->unk] == TT_CONTROL)
    return hmx_fail(HMX_ERR_FORMAT, "%s: tokenizer: the unknown token (%d) is a control token",
                    source, (int)t->unk);
  return HMX_OK;
}

/* Bytes of the UTF-8 character at s (1 for an invalid lead byte or a cut one). */
static size_t char_len(const unsigned char *s, size_t left) {
  size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
                                : (s[0] & 0xF8) == 0xF0 ? 4 : 1;
  if (n > left) return 1;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 1;
  return n;
}

/* Pushes the candidate (i, next[i]) when their concatenation is a token. */
static void push_pair(const hmx_tokenizer *t, hmx_tok_work *w, const int32_t *start,
                      const char *text, int32_t i) {
  if (i < 0 || w->next[i] < 0) return;
  const int32_t j = w->next[i];
  const int32_t id = hmx_tok_vocab_find(t, text + start[i], (size_t)(w->sym[i] + w->sym[j]));
  if (id < 0) return;
  hmx_tok_cand c = {t->srank[id], id, (uint32_t)i, w->sym[i], w->sym[j]};
  hmx_tok_heap_push(w, c);
}

hmx_status hmx_spm_encode(const hmx_tokenizer *t, const char *text, size_t len, int at_start,
                          hmx_tok_ids *o) {
  if (!len) return HMX_OK;
  if (len > (INT32_MAX - 3) / 3) return hmx_fail(HMX_ERR_UNSUPPORTED, "tokenizer: text too long");
  /* the normalized text: '▁' for ' ', one '▁' in front */
  char *norm = malloc(3 * len + 3);
  size_t m = 0;
  if (!norm) return hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  if (at_start && t->space_prefix) memcpy(norm, SPACE, 3), m = 3;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == ' ') memcpy(norm + m, SPACE, 3), m += 3;
    else norm[m++] = text[i];
  }
  int32_t *start = hmx_alloc_array(m, sizeof *start);
  hmx_tok_work w = {hmx_alloc_array(m, sizeof(int32_t)), hmx_alloc_array(m, sizeof(int32_t)),
                    hmx_alloc_array(m, sizeof(int32_t)), hmx_alloc_array(m, 3 * sizeof(hmx_tok_cand)),
                    0};
  hmx_status st = HMX_OK;
  if (!start || !w.sym || !w.next || !w.prev || !w.heap)
    st = hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  int32_t n = 0;
  for (size_t p = 0; !st && p < m; n++) {
    const size_t l = char_len((const unsigned char *)norm + p, m - p);
    start[n] = (int32_t)p;
    w.sym[n] = (int32_t)l; /* sym holds each symbol's length in bytes */
    p += l;
  }
  for (int32_t i = 0; !st && i < n; i++) {
    w.prev[i] = i - 1;
    w.next[i] = i + 1 < n ? i + 1 : -1;
  }
  for (int32_t i = 0; !st && i + 1 < n; i++) push_pair(t, &w, start, norm, i);
  while (!st && w.nheap) {
    const hmx_tok_cand c = hmx_tok_heap_pop(&w);
    const int32_t i = (int32_t)c.pos, j = w.next[i];
    if (w.sym[i] != c.left || j < 0 || w.sym[j] != c.right) continue; /* stale */
    w.sym[i] += w.sym[j];
    w.sym[j] = 0;
    w.next[i] = w.next[j];
    if (w.next[j] >= 0) w.prev[w.next[j]] = i;
    push_pair(t, &w, start, norm, w.prev[i]);
    push_pair(t, &w, start, norm, i);
  }
  for (int32_t i = n ? 0 : -1; !st && i >= 0; i = w.next[i]) {
    const int32_t id = hmx_tok_vocab_find(t, norm + start[i], (size_t)w.sym[i]);
    int ok = 1;
    if (id >= 0) ok = hmx_tok_push(o, id);
    else /* byte fallback, else the unknown token */
      for (int32_t k = 0; k < w.sym[i] && ok; k++) {
        const int32_t b = t->byte_id[(unsigned char)norm[start[i] + k]];
        if (b >= 0) ok = hmx_tok_push(o, b);
        else if (t->unk >= 0 && (k == 0 || t->unk != o->v[o->n - 1])) ok = hmx_tok_push(o, t->unk);
      }
    if (!ok) st = hmx_fail(HMX_ERR_NO_MEMORY, "tokenizer: out of memory");
  }
  free(norm);
  free(start);
  free(w.sym);
  free(w.next);
  free(w.prev);
  free(w.heap);
  return st;
}
