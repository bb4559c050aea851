/* Shared by src/tokenizer.c, src/tok_pretok.c and src/unicode_class.c. */
#ifndef HMX_TOKENIZER_INTERNAL_H
#define HMX_TOKENIZER_INTERNAL_H

#include "hadamix_tokenizer.h"
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

/* Split text into pre-tokens. *spans malloc'ed (caller frees). */
hmx_status hmx_pretokenize(hmx_pretok_kind kind, const char *text, size_t len, hmx_span **spans,
                           size_t *n);

#endif
