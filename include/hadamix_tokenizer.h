/* hadamix_tokenizer.h: the tokenizer stored in a GGUF checkpoint.
 *
 * Byte-level BPE (GPT-2 style: tokenizer.ggml.model = "gpt2"), as used by
 * SmolLM2 (pre-tokenizer "smollm": digits split one by one, then GPT-2's
 * pattern), Llama 3 ("llama-bpe") and GPT-2 itself ("gpt2", "default"): the
 * text is split into
 * pieces by the pre-tokenizer, each piece's bytes are merged by the ranked
 * merges (tokenizer.ggml.merges), and control / user-defined tokens in the
 * text (e.g. "<|im_start|>") are matched first when asked. docs/GGUF.md
 * "Tokenizer" states the rules and what is not supported yet. SentencePiece
 * BPE (tokenizer.ggml.model = "llama": Llama 2, TinyLlama) is read too, and
 * a Hugging Face tokenizer.json (a .json path or a directory holding one). */
#ifndef HADAMIX_TOKENIZER_H
#define HADAMIX_TOKENIZER_H

#include "hadamix.h"

#ifdef __cplusplus
extern "C" {
#endif

HMX_API_BEGIN

typedef struct hmx_tokenizer hmx_tokenizer;

/* Read the tokenizer.ggml.* metadata of a GGUF file, or a Hugging Face
 * tokenizer.json (a path ending in .json, or a directory holding one;
 * docs/GGUF.md "Tokenizer"). HMX_ERR_UNSUPPORTED for a tokenizer model or
 * pre-tokenizer that hadamix does not implement, and for a tokenizer.json
 * when hadamix was built without cJSON. */
hmx_status hmx_tokenizer_load(const char *gguf_path, hmx_tokenizer **out);
void hmx_tokenizer_free(hmx_tokenizer *t);

/* Encode len bytes of text (UTF-8; an invalid byte is a character of its own,
 * neither letter, number nor space). special = 1: control and user-defined
 * tokens written in the text become their ids. *ids is malloc'ed (free it);
 * no BOS is added (see hmx_tokenizer_add_bos). */
hmx_status hmx_tokenizer_encode(const hmx_tokenizer *t, const char *text, size_t len, int special,
                                int32_t **ids, int64_t *n);
/* The bytes a token stands for (a control token: its text). */
hmx_status hmx_tokenizer_piece(const hmx_tokenizer *t, int32_t id, const char **bytes,
                               size_t *len);
int32_t hmx_tokenizer_vocab_size(const hmx_tokenizer *t);
/* Special ids from the metadata, -1 when absent. A file whose BOS, EOS or
 * unknown-token id is present but not an id of its vocabulary is refused at
 * load (HMX_ERR_FORMAT), as is one that asks for BOS without giving its id. */
int32_t hmx_tokenizer_bos(const hmx_tokenizer *t);
int32_t hmx_tokenizer_eos(const hmx_tokenizer *t); /* the first id of hmx_tokenizer_is_eos */
/* 1 when id ends a sequence: EOS, a GGUF file's end-of-turn and end-of-message
 * ids (tokenizer.ggml.eot_token_id, eom_token_id), or any id of a Hugging Face
 * config's eos_token_id list (config.json, generation_config.json). */
int hmx_tokenizer_is_eos(const hmx_tokenizer *t, int32_t id);
int hmx_tokenizer_add_bos(const hmx_tokenizer *t); /* tokenizer.ggml.add_bos_token */
/* 1 for a control token (type 3): generation stops at the end-of-turn ones. */
int hmx_tokenizer_is_control(const hmx_tokenizer *t, int32_t id);
/* The id of a token whose text is exactly s, or -1. */
int32_t hmx_tokenizer_find(const hmx_tokenizer *t, const char *s);

HMX_API_END

#ifdef __cplusplus
}
#endif
#endif /* HADAMIX_TOKENIZER_H */
