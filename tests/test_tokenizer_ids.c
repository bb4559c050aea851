/* The special ids of a Hugging Face tokenizer directory (src/tokenizer_hf.c,
 * docs/GGUF.md "Tokenizer"): BOS and the end-of-sequence ids come from
 * config.json and generation_config.json beside tokenizer.json, an id or a
 * list of ids; a value that is not an id of the vocabulary, or a file that is
 * not JSON, is refused with a message instead of being taken as "absent"
 * (then BOS would be missing, or generation would never stop). The GGUF side
 * of the same rule is checked by the tokenizer seeds (tests/fuzz/
 * corpus_tokenizer/bad_*_token*, ok_gpt2_eot.gguf) through fuzz_tokenizer's
 * check_special_ids.
 *
 * Usage: test_tokenizer_ids <scratch directory> */
#include "check.h"
#include "hadamix.h"
#include "hadamix_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte-level BPE tokenizer.json with 10 tokens (ids 0..7 letters and one
 * merge's result, 8..9 added control tokens). */
static const char TOKENIZER[] =
    "{\"version\": \"1.0\", \"normalizer\": null,\n"
    " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false,"
    " \"trim_offsets\": true, \"use_regex\": true},\n"
    " \"added_tokens\": [{\"id\": 8, \"content\": \"<s>\", \"special\": true},"
    " {\"id\": 9, \"content\": \"</s>\", \"special\": true}],\n"
    " \"model\": {\"type\": \"BPE\", \"byte_fallback\": false,"
    " \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3, \"e\": 4, \"f\": 5, \"g\": 6,"
    " \"ab\": 7},"
    " \"merges\": [\"a b\"]}}\n";

static char dir[3000];

static int write_file(const char *name, const char *text) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  if (!text) return remove(p) == 0 || 1;
  FILE *fp = fopen(p, "wb");
  if (!fp) return 0;
  const int ok = fwrite(text, 1, strlen(text), fp) == strlen(text);
  return fclose(fp) == 0 && ok;
}

/* Loads the directory with config.json = config and generation_config.json =
 * gen (NULL: no such file). */
static hmx_status load(const char *config, const char *gen, hmx_tokenizer **t) {
  if (!write_file("config.json", config) || !write_file("generation_config.json", gen)) {
    fprintf(stderr, "cannot write into %s\n", dir);
    exit(1);
  }
  return hmx_tokenizer_load(dir, t);
}

/* The load is refused with HMX_ERR_FORMAT (or want) and a message holding what. */
static void refused(const char *config, const char *gen, hmx_status want, const char *what) {
  hmx_tokenizer *t = (hmx_tokenizer *)1;
  const hmx_status st = load(config, gen, &t);
  const char *msg = hmx_last_error();
  CHECK(st == want && t == NULL && msg && strstr(msg, what),
        "config %s / %s: status %s, message '%s' (want %s, '%s')", config,
        gen ? gen : "-", hmx_status_string(st), msg ? msg : "", hmx_status_string(want), what);
}

int main(int argc, char **argv) {
  if (argc != 2 || snprintf(dir, sizeof dir, "%s", argv[1]) >= (int)sizeof dir) {
    fprintf(stderr, "usage: test_tokenizer_ids <scratch directory>\n");
    return 2;
  }
  if (!write_file("tokenizer.json", TOKENIZER)) {
    fprintf(stderr, "cannot write %s/tokenizer.json (does the directory exist?)\n", dir);
    return 2;
  }

  /* no config files: no BOS, nothing ends a sequence */
  hmx_tokenizer *t = NULL;
  hmx_status st = load(NULL, NULL, &t);
  CHECK(st == HMX_OK && t, "plain directory: %s %s", hmx_status_string(st), hmx_last_error());
  if (t) {
    CHECK(hmx_tokenizer_vocab_size(t) == 10, "vocabulary %d", hmx_tokenizer_vocab_size(t));
    CHECK(hmx_tokenizer_bos(t) == -1 && hmx_tokenizer_eos(t) == -1, "ids %d %d",
          hmx_tokenizer_bos(t), hmx_tokenizer_eos(t));
    for (int32_t id = -1; id <= 10; id++) CHECK(!hmx_tokenizer_is_eos(t, id), "is_eos(%d)", id);
  }
  hmx_tokenizer_free(t);

  /* a list of end ids (Llama 3.1 Instruct's form), and generation_config.json's too */
  t = NULL;
  st = load("{\"bos_token_id\": 8, \"eos_token_id\": [9, 3], \"vocab_size\": 10}",
            "{\"bos_token_id\": 5, \"eos_token_id\": [3, 4]}", &t);
  CHECK(st == HMX_OK && t, "lists: %s %s", hmx_status_string(st), hmx_last_error());
  if (t) {
    CHECK(hmx_tokenizer_bos(t) == 8, "bos %d (config.json's comes first)", hmx_tokenizer_bos(t));
    CHECK(hmx_tokenizer_eos(t) == 9, "eos %d", hmx_tokenizer_eos(t));
    CHECK(!hmx_tokenizer_add_bos(t), "a tokenizer.json's BOS is not added");
    for (int32_t id = -1; id <= 10; id++)
      CHECK(hmx_tokenizer_is_eos(t, id) == (id == 3 || id == 4 || id == 9), "is_eos(%d)", id);
  }
  hmx_tokenizer_free(t);

  /* one id; null and absent keys are "none" */
  t = NULL;
  st = load("{\"bos_token_id\": null, \"eos_token_id\": 2}", "{}", &t);
  CHECK(st == HMX_OK && t, "single: %s %s", hmx_status_string(st), hmx_last_error());
  if (t) {
    CHECK(hmx_tokenizer_bos(t) == -1 && hmx_tokenizer_eos(t) == 2, "ids %d %d",
          hmx_tokenizer_bos(t), hmx_tokenizer_eos(t));
    CHECK(hmx_tokenizer_is_eos(t, 2) && !hmx_tokenizer_is_eos(t, 9), "is_eos");
  }
  hmx_tokenizer_free(t);

  /* eight distinct end ids are kept (repeats count once); a ninth is refused */
  t = NULL;
  st = load("{\"eos_token_id\": [0, 1, 2, 3, 4, 5, 6, 7]}", "{\"eos_token_id\": [7, 7, 0]}", &t);
  CHECK(st == HMX_OK && t, "eight end ids: %s %s", hmx_status_string(st), hmx_last_error());
  if (t)
    for (int32_t id = 0; id <= 9; id++)
      CHECK(hmx_tokenizer_is_eos(t, id) == (id < 8), "is_eos(%d) of eight", id);
  hmx_tokenizer_free(t);
  refused("{\"eos_token_id\": [0, 1, 2, 3, 4, 5, 6, 7]}", "{\"eos_token_id\": 8}",
          HMX_ERR_UNSUPPORTED, "more than 8 end-of-sequence ids");

  /* refused: each was taken as "no such id" before */
  refused("{\"eos_token_id\": 10}", NULL, HMX_ERR_FORMAT, "eos_token_id = 10 is not a token id");
  refused("{\"bos_token_id\": -1}", NULL, HMX_ERR_FORMAT, "bos_token_id = -1 is not a token id");
  refused("{\"eos_token_id\": \"9\"}", NULL, HMX_ERR_FORMAT, "eos_token_id is not an integer");
  refused("{\"bos_token_id\": 1.5}", NULL, HMX_ERR_FORMAT, "bos_token_id is not an integer");
  refused("{\"bos_token_id\": 1e300}", NULL, HMX_ERR_FORMAT, "bos_token_id is not an integer");
  refused("{\"eos_token_id\": [9, null]}", NULL, HMX_ERR_FORMAT, "eos_token_id holds a null");
  refused("{\"eos_token_id\": [9, 99]}", NULL, HMX_ERR_FORMAT, "eos_token_id = 99 is not");
  refused("{}", "{\"eos_token_id\": [9, 11]}", HMX_ERR_FORMAT,
          "generation_config.json: an eos_token_id = 11");
  refused("{\"eos_token_id\": 9", NULL, HMX_ERR_FORMAT, "config.json: not a JSON object");
  refused("[9]", NULL, HMX_ERR_FORMAT, "not a JSON object");
  write_file("config.json", NULL);
  write_file("generation_config.json", NULL);
  return check_finish("test_tokenizer_ids");
}
