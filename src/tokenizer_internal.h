/* Shared by src/tokenizer.c, src/tok_pretok.c and src/unicode_class.c. */
#ifndef HMX_TOKENIZER_INTERNAL_H
#define HMX_TOKENIZER_INTERNAL_H

#include "hadamix_tokenizer.h"
#include "gguf.h"
#include <stddef.h>

typedef enum hmx_uclass { HMX_UC_OTHER, HMX_UC_LETTER, HMX_UC_NUMBER, HMX_UC_SPACE } hmx_uclass;

/* The class of a Unicode code point (tools/gen_unicode.py). */
hmx_uclass hmx_uni_class(uint32_t cp);

typedef enum hmx_pretok_kind {
  HMX_PRETOK_GPT2,   /* GPT-2's pattern */
  HMX_PRETOK_SMOLLM, /* every \p{N} character alone, then GPT-2's pattern on the rest */
  HMX_PRETOK_LLAMA3  /* Llama 3's pattern (llama.cpp's "llama-bpe") */
} hmx_pretok_kind;

typedef struct hmx_span {
  size_t start, len; /* bytes */
} hmx_span;

/* A tokenizer from its parts (tokenizer.c): n_vocab tokens in GPT-2's byte
 * alphabet (control / user-defined ones, types 3 / 4, as literal text),
 * their types (NULL: all normal), and the ranked merges "A B". */
hmx_status hmx_tokenizer_build(hmx_pretok_kind kind, uint64_t n_vocab,
                               const hmx_gguf_str *tokens, const int32_t *types,
                               uint64_t n_merges, const hmx_gguf_str *merges, const char *source,
                               hmx_tokenizer **out);
/* BOS / EOS ids (-1: none) and whether to prepend BOS. */
void hmx_tokenizer_set_ids(hmx_tokenizer *t, int32_t bos, int32_t eos, int add_bos);
/* tokenizer_hf.c: is `path` a tokenizer.json or a directory with one; load it. */
int hmx_tokenizer_is_hf(const char *path);
hmx_status hmx_tokenizer_load_hf(const char *path, hmx_tokenizer **out);

/* Split text into pre-tokens. *spans malloc'ed (caller frees). */
hmx_status hmx_pretokenize(hmx_pretok_kind kind, const char *text, size_t len, hmx_span **spans,
                           size_t *n);

#endif
