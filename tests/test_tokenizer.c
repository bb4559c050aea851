/* The byte-level BPE pre-tokenizer (src/tok_pretok.c) on fixed strings whose
 * split was taken from Hugging Face's tokenizers (ByteLevel with use_regex,
 * Digits(individual_digits=True)), so that the pattern logic is checked even
 * where the Python packages of tests/test_smollm2.py are absent. */
#include "check.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

static void expect(hmx_pretok_kind kind, const char *text, const size_t *bounds, size_t nb) {
  hmx_span *sp = NULL;
  size_t n = 0;
  hmx_status st = hmx_pretokenize(kind, text, strlen(text), &sp, &n);
  int ok = st == HMX_OK && n + 1 == nb;
  for (size_t i = 0; ok && i < n; i++)
    ok = sp[i].start == bounds[i] && sp[i].start + sp[i].len == bounds[i + 1];
  CHECK(ok, "pre-tokens of '%s': got %zu pieces", text, n);
  if (!ok)
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, "  [%zu, %zu)\n", sp[i].start, sp[i].start + sp[i].len);
  free(sp);
}

#define EXPECT(kind, text, ...)                                                     \
  do {                                                                              \
    const size_t b_[] = {__VA_ARGS__};                                              \
    expect(kind, text, b_, sizeof b_ / sizeof b_[0]);                               \
  } while (0)

int main(void) {
  const hmx_pretok_kind G = HMX_PRETOK_GPT2, S = HMX_PRETOK_SMOLLM;
  EXPECT(G, "a  \nb", 0, 1, 3, 4, 5);           /* \s+(?!\S) leaves the \n, then \s+ */
  EXPECT(G, "x   ", 0, 1, 4);                    /* trailing spaces: one piece */
  EXPECT(G, "?'s it's", 0, 2, 3, 6, 8);          /* "?'" "s" " it" "'s" */
  EXPECT(G, "\t\tb", 0, 1, 2, 3);                /* "\t" "\t" "b" */
  EXPECT(G, " \xc2\xa0" "b", 0, 1, 3, 4);        /* NBSP is \s but not ' ' */
  EXPECT(G, "Hello world", 0, 5, 11);
  EXPECT(G, "you're we'll I'd", 0, 3, 6, 9, 12, 14, 16);
  EXPECT(G, "a 12 b", 0, 1, 4, 6);               /* " 12" is one piece in GPT-2 */
  EXPECT(S, "a 12 b", 0, 1, 2, 3, 4, 6);         /* smollm: "a" " " "1" "2" " b" */
  EXPECT(S, "x\xd9\xa3\xd9\xa4y", 0, 1, 3, 5, 6); /* Arabic-Indic digits are \p{N} */
  EXPECT(G, "\xff\xfe" "a", 0, 2, 3);            /* invalid bytes: "other" characters */
  EXPECT(G, "", 0);
  /* Llama 3 ("llama-bpe"), split as tokenizers' Split(Regex(Llama 3's pattern)) splits */
  const hmx_pretok_kind L3 = HMX_PRETOK_LLAMA3;
  EXPECT(L3, "Hello world", 0, 5, 11);
  EXPECT(L3, "I'M here, YOU'RE 'hello", 0, 1, 3, 8, 9, 13, 16, 18, 23);
  EXPECT(L3, " \nfoo\n\n  bar", 0, 2, 5, 7, 8, 12);
  EXPECT(L3, "12345 x\t\tword", 0, 3, 5, 7, 8, 13);
  EXPECT(L3, "a?!\r\nb", 0, 1, 5, 6);
  EXPECT(L3, "(word) 3.14159", 0, 5, 6, 7, 8, 9, 12, 14);
  hmx_span *sp = NULL;
  size_t n = 0;
  CHECK(hmx_pretokenize(G, NULL, 3, &sp, &n) == HMX_ERR_INVALID_ARGUMENT, "NULL text");
  hmx_tokenizer *t = NULL;
  CHECK(hmx_tokenizer_load("/nonexistent.gguf", &t) == HMX_ERR_IO && !t, "missing file");
  return check_finish("test_tokenizer");
}
