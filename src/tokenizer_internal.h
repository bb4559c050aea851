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
  HMX_PRETOK_LLAMA3, /* Llama 3's pattern (llama.cpp's "llama-bpe") */
  HMX_TOK_SPM        /* SentencePiece BPE: no pre-tokenizer, merges by score */
} hmx_pretok_kind;

typedef struct hmx_span {
  size_t start, len; /* bytes */
} hmx_span;

#define TT_NORMAL 1
#define TT_UNKNOWN 2
#define TT_CONTROL 3
#define TT_USER 4
#define TT_UNUSED 5
#define TT_BYTE 6

/* end-of-sequence ids a tokenizer keeps: EOS, end of turn, end of message,
 * or a Hugging Face config's list (Llama 3.1 Instruct has 3) */
#define HMX_TOK_MAX_EOS 8

struct hmx_tokenizer {
  int32_t n_vocab;
  char *bytes;         /* every token's bytes, back to back */
  size_t *off, *len;   /* n_vocab */
  int32_t *type;       /* n_vocab (tokenizer.ggml.token_type, else normal) */
  int32_t byte_id[256];/* the token of each single byte (-1: none) */
  int32_t *vmap;       /* bytes -> id; -1 empty; vcap slots */
  size_t vcap;
  uint64_t *mkey;      /* merges: (left << 32 | right) + 1; 0 empty */
  int32_t *mrank, *mres;
  size_t mcap;
  int32_t *specials;   /* control and user-defined tokens, longest first */
  int32_t n_specials;
  hmx_pretok_kind pretok;
  int32_t bos;
  int32_t eos[HMX_TOK_MAX_EOS]; /* the ids that end a sequence, EOS first */
  int n_eos;
  int add_bos;
  /* SentencePiece (pretok HMX_TOK_SPM, tokenizer_spm.c) */
  float *score;        /* n_vocab */
  int32_t *srank;      /* dense rank of the score, 0 = highest */
  char *dec;           /* decoded pieces: '▁' -> ' ', <0xXX> -> the byte */
  size_t *doff, *dlen;
  int space_prefix;    /* add '▁' before the text */
  int32_t unk;
};

typedef struct hmx_tok_ids {
  int32_t *v;
  int64_t n, cap;
} hmx_tok_ids;
int hmx_tok_push(hmx_tok_ids *o, int32_t id);
int32_t hmx_tok_vocab_find(const hmx_tokenizer *t, const char *s, size_t n);

/* The merge candidates of a piece: a min-heap by (rank, position). */
typedef struct hmx_tok_cand {
  int32_t rank, res;
  uint32_t pos;          /* the left symbol's index */
  int32_t left, right;   /* what the symbols were when pushed (ids, or lengths) */
} hmx_tok_cand;
typedef struct hmx_tok_work {
  int32_t *sym, *next, *prev; /* per byte; next/prev -1 at the ends */
  hmx_tok_cand *heap;
  size_t nheap;
} hmx_tok_work;
void hmx_tok_heap_push(hmx_tok_work *w, hmx_tok_cand c);
hmx_tok_cand hmx_tok_heap_pop(hmx_tok_work *w);

/* SentencePiece BPE (tokenizer_spm.c): set up from the scores, encode. */
hmx_status hmx_spm_setup(hmx_tokenizer *t, const float *scores, int space_prefix, int32_t unk,
                         const char *source);
hmx_status hmx_spm_encode(const hmx_tokenizer *t, const char *text, size_t len, int at_start,
                          hmx_tok_ids *o);

/* A tokenizer from its parts (tokenizer.c): n_vocab tokens in GPT-2's byte
 * alphabet (control / user-defined ones, types 3 / 4, as literal text),
 * their types (NULL: all normal), and the ranked merges "A B". */
hmx_status hmx_tokenizer_build(hmx_pretok_kind kind, uint64_t n_vocab,
                               const hmx_gguf_str *tokens, const int32_t *types,
                               uint64_t n_merges, const hmx_gguf_str *merges, const char *source,
                               hmx_tokenizer **out);
/* Whether v is a token id of t; if not, HMX_ERR_FORMAT naming source and
 * the metadata key it came from. */
hmx_status hmx_tok_check_id(const hmx_tokenizer *t, int64_t v, const char *source,
                            const char *key);
/* The end-of-sequence ids (each checked by hmx_tok_check_id; repeats are
 * kept once; more than HMX_TOK_MAX_EOS distinct ones: HMX_ERR_UNSUPPORTED). */
hmx_status hmx_tok_add_eos(hmx_tokenizer *t, int32_t id, const char *source);
/* The BOS id (-1: none) and whether to prepend it (only with an id). */
void hmx_tokenizer_set_bos(hmx_tokenizer *t, int32_t bos, int add_bos);
/* The tokenizer.ggml.* metadata of a parsed GGUF file (hmx_tokenizer_load
 * without the file; also the entry point of tests/fuzz/fuzz_tokenizer.c). */
hmx_status hmx_tokenizer_from_gguf(const hmx_gguf *f, const char *source, hmx_tokenizer **out);
/* Is `path` a tokenizer.json or a directory with one (tokenizer.c); load it
 * (tokenizer_hf.c; without cJSON json_absent.c refuses it). */
int hmx_tokenizer_is_hf(const char *path);
hmx_status hmx_tokenizer_load_hf(const char *path, hmx_tokenizer **out);
/* A tokenizer.json held in memory (len bytes, not necessarily terminated):
 * hmx_tokenizer_load_hf without the file and without config.json (no BOS /
 * EOS). */
hmx_status hmx_tokenizer_parse_hf(const char *json, size_t len, const char *source,
                                  hmx_tokenizer **out);

/* Split text into pre-tokens. *spans malloc'ed (caller frees). */
hmx_status hmx_pretokenize(hmx_pretok_kind kind, const char *text, size_t len, hmx_span **spans,
                           size_t *n);

#endif
