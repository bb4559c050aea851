/* hmx generate: prefill a prompt and decode tokens with the model
 * (docs/MODEL.md, docs/CLI.md). */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno */
#include "model_opts.h"
#include "safetensors.h"
#include "hadamix_tokenizer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *out) {
  fputs("usage: hmx generate [--prompt TEXT | --tokens ID,ID,...] [-n N] [--chat]\n"
        "                    [--temperature T] [--top-k K] [--top-p P] [--seed S]\n"
        "                    [--backend B] [--threads N] [--print-ids] [--logits-out FILE]\n"
        "                    [model options]\n\n"
        "Prefills the prompt (TEXT as bytes: the default byte-level vocabulary maps byte b\n"
        "to token b) in one step, then decodes N tokens (default 32) one at a time, greedy\n"
        "unless --temperature > 0 (then seeded top-k / top-p sampling: the same seed and\n"
        "logits give the same tokens on any machine). Prints the generated tokens as\n"
        "text (bytes; ids >= 256 as <id>; --print-ids: the ids), and on stderr a live\n"
        "progress line and the prefill and decode tokens/s.\n\n"
        "With a GGUF model that stores a tokenizer (docs/GGUF.md), TEXT is encoded with\n"
        "it and the output decoded with it; generation stops at the end-of-text token.\n"
        "  --chat           wrap TEXT as one user turn of the model's chat format (ChatML:\n"
        "                   <|im_start|>user ... <|im_end|>, then the assistant turn) and\n"
        "                   stop at the end of the assistant's turn\n"
        "  --backend B      backend (default: HMX_BACKEND or the best available)\n"
        "  --threads N      threads (0 = default)\n"
        "  --logits-out F   also write the prompt's logits, every position, as tensor\n"
        "                   \"logits\" [T, vocab] f32 (and \"tokens\" [T] i32) to safetensors F\n\n",
        out);
  hmx_model_opts_help(out);
}

static void print_token(int32_t t, int ids, const hmx_tokenizer *tk) {
  const char *bytes;
  size_t len;
  if (ids) printf("%d ", (int)t);
  else if (tk && !hmx_tokenizer_piece(tk, t, &bytes, &len)) fwrite(bytes, 1, len, stdout);
  else if (t >= 32 && t < 127) putchar((int)t);
  else if (t == '\n' || t == '\t') putchar((int)t);
  else if (t < 256) printf("\\x%02x", (unsigned)t);
  else printf("<%d>", (int)t);
  fflush(stdout);
}

static int parse_float(const char *opt, const char *s, float *out) {
  char *end;
  float v = strtof(s, &end);
  if (!*s || *end || v != v)
    return hmx_cli_error(HMX_EXIT_USAGE, "generate: %s '%s' is not a number", opt, s);
  *out = v;
  return 0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi)
    return hmx_cli_error(HMX_EXIT_USAGE, "generate: %s '%s' is not an integer in [%ld, %ld]", opt,
                         s, lo, hi);
  *out = v;
  return 0;
}

static int is_gguf(const char *path) {
  FILE *fp = path ? fopen(path, "rb") : NULL;
  char magic[4] = {0};
  size_t got = fp ? fread(magic, 1, 4, fp) : 0;
  if (fp) fclose(fp);
  return got == 4 && !memcmp(magic, "GGUF", 4);
}

/* A Hugging Face checkpoint directory with its tokenizer.json. */
static int has_tokenizer_json(const char *dir) {
  char p[4096];
  FILE *fp = NULL;
  if (snprintf(p, sizeof p, "%s/tokenizer.json", dir) < (int)sizeof p) fp = fopen(p, "rb");
  if (fp) fclose(fp);
  return fp != NULL;
}

/* The prompt's ids: with a GGUF file that stores a tokenizer (or a Hugging
 * Face directory with tokenizer.json), TEXT encoded
 * by it (as a ChatML user turn with --chat; *stop = the end-of-turn id);
 * otherwise hmx_prompt_tokens (bytes, or --tokens). */
static int prompt_tokens(const hmx_model_opts *mo, const char *prompt, const char *toklist,
                         int chat, hmx_tokenizer **tk, int32_t *stop, int32_t **toks,
                         int64_t *n) {
  if (mo->weights && (is_gguf(mo->weights) || has_tokenizer_json(mo->weights))) {
    hmx_status st = hmx_tokenizer_load(mo->weights, tk);
    /* no tokenizer in the file (FORMAT): byte tokens, as for other files */
    if (st && (chat || (prompt && !toklist && st != HMX_ERR_FORMAT)))
      return hmx_cli_error(HMX_EXIT_FAIL, "generate: %s", hmx_cli_status_message(st));
  }
  if (chat && !*tk)
    return hmx_cli_error(HMX_EXIT_USAGE, "generate: --chat needs a GGUF model with a tokenizer");
  if (!*tk || toklist || !prompt)
    return hmx_prompt_tokens("generate", prompt, toklist, "\n", toks, n);
  const char *text = prompt;
  char *wrapped = NULL;
  if (chat) {
    const int32_t start = hmx_tokenizer_find(*tk, "<|im_start|>");
    *stop = hmx_tokenizer_find(*tk, "<|im_end|>");
    if (start < 0 || *stop < 0)
      return hmx_cli_error(HMX_EXIT_USAGE, "generate: --chat: the vocabulary has no ChatML "
                           "tokens (<|im_start|>, <|im_end|>), the only chat format known");
    const size_t len = strlen(prompt) + 64;
    if (!(wrapped = malloc(len)))
      return hmx_cli_error(HMX_EXIT_FAIL, "generate: out of memory");
    snprintf(wrapped, len, "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n", prompt);
    text = wrapped;
  }
  int32_t *ids = NULL;
  int64_t k = 0;
  hmx_status st = hmx_tokenizer_encode(*tk, text, strlen(text), chat, &ids, &k);
  free(wrapped);
  if (st) return hmx_cli_error(HMX_EXIT_FAIL, "generate: %s", hmx_cli_status_message(st));
  const int bos = hmx_tokenizer_add_bos(*tk);
  *toks = malloc((size_t)(k + bos + 1) * sizeof **toks);
  if (!*toks) {
    free(ids);
    return hmx_cli_error(HMX_EXIT_FAIL, "generate: out of memory");
  }
  if (bos) (*toks)[0] = hmx_tokenizer_bos(*tk);
  memcpy(*toks + bos, ids, (size_t)k * sizeof *ids);
  *n = k + bos;
  free(ids);
  if (*n == 0) return hmx_cli_error(HMX_EXIT_USAGE, "generate: the prompt has no tokens");
  return 0;
}

int hmx_cmd_generate(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  hmx_model_opts mo;
  hmx_model_opts_init(&mo);
  const char *prompt = NULL, *toklist = NULL, *v = NULL, *logits_out = NULL;
  const hmx_backend *be = NULL;
  hmx_sampler smp = {0.0f, 0, 1.0f, 0};
  long n_new = 32, tmp = 0;
  int threads = 0, err = 0, ids = 0, chat = 0;
  while (a.i < argc) {
    const char *s = argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_model_opts_parse(&a, &mo, &err)) {
    } else if (hmx_args_value(&a, "--prompt", &v, &err)) {
      if (!err) prompt = v;
    } else if (hmx_args_value(&a, "--tokens", &v, &err)) {
      if (!err) toklist = v;
    } else if (hmx_args_value(&a, "-n", &v, &err)) {
      if (!err && parse_int("-n", v, 0, 1 << 24, &n_new)) err = 1;
    } else if (hmx_args_value(&a, "--temperature", &v, &err)) {
      if (!err && parse_float("--temperature", v, &smp.temperature)) err = 1;
    } else if (hmx_args_value(&a, "--top-k", &v, &err)) {
      if (!err && !parse_int("--top-k", v, 0, 1 << 30, &tmp)) smp.top_k = (int)tmp;
      else err = 1;
    } else if (hmx_args_value(&a, "--top-p", &v, &err)) {
      if (!err && parse_float("--top-p", v, &smp.top_p)) err = 1;
      else if (!err && !(smp.top_p > 0.0f)) {
        hmx_cli_error(HMX_EXIT_USAGE, "generate: --top-p must be > 0");
        err = 1;
      }
    } else if (hmx_args_value(&a, "--seed", &v, &err)) {
      if (!err && !parse_int("--seed", v, 0, 0x7fffffffL, &tmp)) smp.seed = (uint64_t)tmp;
      else err = 1;
    } else if (hmx_args_value(&a, "--backend", &v, &err)) {
      if (!err && hmx_parse_backend("generate", v, &be)) err = 1;
    } else if (hmx_args_value(&a, "--threads", &v, &err)) {
      if (!err && hmx_parse_threads("generate", v, &threads)) err = 1;
    } else if (hmx_args_value(&a, "--logits-out", &v, &err)) {
      if (!err) logits_out = v;
    } else if (hmx_args_flag(&a, "--chat")) {
      chat = 1;
    } else if (hmx_args_flag(&a, "--print-ids")) {
      ids = 1;
    } else {
      return hmx_cli_error(HMX_EXIT_USAGE, "generate: unknown argument '%s' (see `hmx generate "
                           "--help`)", s);
    }
    if (err) return HMX_EXIT_USAGE;
  }
  if (prompt && toklist)
    return hmx_cli_error(HMX_EXIT_USAGE, "generate: give --prompt or --tokens, not both");
  if (!be) {
    be = hmx_backend_default();
    if (!be) return hmx_cli_error(HMX_EXIT_USAGE, "generate: %s", hmx_last_error());
  }
  if (!hmx_backend_available(be))
    return hmx_cli_unavailable("generate", be);

  int32_t *toks = NULL;
  int64_t n_prompt = 0;
  hmx_tokenizer *tk = NULL;
  int32_t stop = -1;
  int rc = prompt_tokens(&mo, prompt, toklist, chat, &tk, &stop, &toks, &n_prompt);
  if (rc) {
    hmx_tokenizer_free(tk);
    return rc;
  }
  hmx_model *m = NULL;
  rc = hmx_model_opts_open("generate", &mo, &m);
  if (rc) {
    hmx_tokenizer_free(tk);
    free(toks);
    return rc;
  }
  const hmx_model_config *c = hmx_model_get_config(m);
  hmx_kv_cache *cache = NULL;
  /* all prompt positions when --logits-out asks for them */
  const int64_t rows = logits_out ? n_prompt : 1;
  float *logits = malloc((size_t)rows * (size_t)c->vocab * sizeof(float));
  hmx_status st = HMX_OK;
  if (n_prompt + n_new > c->context) {
    rc = hmx_cli_error(HMX_EXIT_USAGE, "generate: %lld prompt + %ld new tokens exceed the "
                       "context (%d)", (long long)n_prompt, n_new, c->context);
  } else if (!logits || (st = hmx_kv_cache_new_typed(m, n_prompt + n_new,
                                                             hmx_model_opts_kv_dtype(&mo), &cache))) {
    rc = hmx_cli_error(HMX_EXIT_FAIL, "generate: %s", st ? hmx_cli_status_message(st) :
                       "out of memory");
  }
  const int tty = isatty(fileno(stderr));
  hmx_context ctx = {be, threads, 0, HMX_TIER_DEFAULT};
  if (!rc) rc = hmx_model_opts_prepare("generate", &mo, m, &ctx);
  double t_prefill = 0, t_decode = 0;
  int64_t decoded = 0;
  if (!rc) {
    double t0 = hmx_now();
    const int32_t *tp = toks;
    hmx_forward_opts fo = {logits_out != NULL, NULL, NULL};
    st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &n_prompt, &fo, logits);
    t_prefill = hmx_now() - t0;
    if (st) rc = hmx_cli_error(HMX_EXIT_FAIL, "generate: prefill: %s", hmx_cli_status_message(st));
    if (!rc && logits_out) {
      hmx_st_writer *w = hmx_st_writer_new();
      hmx_tensor lt = hmx_tensor_2d(logits, HMX_F32, n_prompt, c->vocab);
      hmx_tensor tt = hmx_tensor_1d(toks, HMX_I32, n_prompt);
      st = w ? hmx_st_writer_add(w, "logits", &lt) : HMX_ERR_NO_MEMORY;
      if (!st) st = hmx_st_writer_add(w, "tokens", &tt);
      if (!st) st = hmx_st_writer_save(w, logits_out);
      hmx_st_writer_free(w);
      if (st) rc = hmx_cli_error(HMX_EXIT_FAIL, "generate: --logits-out: %s",
                                 hmx_cli_status_message(st));
      /* sampling continues from the last position's row */
      else memmove(logits, logits + (n_prompt - 1) * c->vocab, (size_t)c->vocab * sizeof(float));
    }
    if (!rc)
      fprintf(stderr, "model: %d layers, d %d, %s output projection, %s weights (%.1f MiB), "
              "%s KV cache; backend %s, %d threads\n", c->n_layer, c->d_model,
              c->outproj == HMX_OUTPROJ_DENSE ? "dense" : "hadamard",
              hmx_dtype_name(hmx_model_dtype(m)), hmx_model_weight_bytes(m) / 1048576.0,
              hmx_dtype_name(hmx_kv_cache_dtype(cache)), hmx_backend_name(be), threads);
  }
  double t1 = hmx_now();
  for (long i = 0; !rc && i < n_new; i++) {
    int32_t next;
    st = hmx_sample(&smp, logits, c->vocab, (uint64_t)i, &next);
    if (st) {
      rc = hmx_cli_error(HMX_EXIT_FAIL, "generate: sampling: %s", hmx_cli_status_message(st));
      break;
    }
    if (tk && (hmx_tokenizer_is_eos(tk, next) || next == stop)) break; /* end of text / turn */
    print_token(next, ids, tk);
    if (i + 1 == n_new) break; /* the last token needs no logits */
    const int32_t *tp = &next;
    int64_t one = 1;
    st = hmx_model_forward(&ctx, m, 1, &cache, &tp, &one, NULL, logits);
    if (st) {
      rc = hmx_cli_error(HMX_EXIT_FAIL, "generate: decode: %s", hmx_cli_status_message(st));
      break;
    }
    decoded++;
    t_decode = hmx_now() - t1;
    if (tty)
      fprintf(stderr, "\r\033[K[decode %ld/%ld  %.1f tokens/s]", i + 1, n_new,
              decoded / t_decode);
  }
  if (!rc) {
    printf("\n");
    fflush(stdout); /* before the rates on stderr, when both go to one pipe */
    if (tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, "prefill: %lld tokens in %.3f s (%.1f tokens/s); decode: %lld tokens in "
            "%.3f s (%.1f tokens/s)\n", (long long)n_prompt, t_prefill, n_prompt / t_prefill,
            (long long)decoded, t_decode, decoded ? decoded / t_decode : 0.0);
  }
  hmx_kv_cache_free(cache);
  hmx_model_free(m);
  hmx_tokenizer_free(tk);
  free(logits);
  free(toks);
  return rc;
}
