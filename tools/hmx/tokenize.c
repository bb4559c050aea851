/* hmx tokenize: encode text with the tokenizer of a GGUF file, or decode ids
 * (docs/GGUF.md "Tokenizer"). */
#include "hmx.h"
#include "hadamix_tokenizer.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *out) {
  fputs("usage: hmx tokenize --model FILE.gguf (--text TEXT | --file F | --decode IDS)\n"
        "                    [--no-special]\n\n"
        "Encodes TEXT (or the whole of file F, bytes as they are) with the byte-level BPE\n"
        "tokenizer stored in the GGUF file and prints the ids, comma-separated; control\n"
        "tokens written in the text (e.g. <|im_start|>) are recognized unless --no-special.\n"
        "--decode 1,2,3 prints the bytes those ids stand for.\n",
        out);
}

static char *read_all(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap) break;
    char *nb = realloc(b, cap * 2);
    if (!nb) {
      free(b);
      b = NULL;
    } else {
      b = nb;
      cap *= 2;
    }
  }
  fclose(fp);
  *len = n;
  return b;
}

int hmx_cmd_tokenize(int argc, char **argv) {
  hmx_args a;
  hmx_args_init(&a, argc, argv);
  const char *model = NULL, *text = NULL, *file = NULL, *decode = NULL, *v = NULL;
  int special = 1, err = 0;
  while (a.i < a.argc) {
    const char *s = a.argv[a.i];
    if (hmx_is_help(s)) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    if (hmx_args_value(&a, "--model", &v, &err)) {
      if (!err) model = v;
    } else if (hmx_args_value(&a, "--text", &v, &err)) {
      if (!err) text = v;
    } else if (hmx_args_value(&a, "--file", &v, &err)) {
      if (!err) file = v;
    } else if (hmx_args_value(&a, "--decode", &v, &err)) {
      if (!err) decode = v;
    } else if (hmx_args_flag(&a, "--no-special")) {
      special = 0;
    } else {
      return hmx_cli_error(HMX_EXIT_USAGE, "tokenize: unknown argument '%s' (see `hmx tokenize "
                           "--help`)", s);
    }
    if (err) return HMX_EXIT_USAGE;
  }
  if (!model || (!!text + !!file + !!decode) != 1)
    return hmx_cli_error(HMX_EXIT_USAGE, "tokenize: give --model and one of --text, --file, "
                         "--decode");
  hmx_tokenizer *t;
  hmx_status st = hmx_tokenizer_load(model, &t);
  if (st) return hmx_cli_error(HMX_EXIT_FAIL, "tokenize: %s", hmx_cli_status_message(st));
  int rc = HMX_EXIT_OK;
  if (decode) {
    for (const char *p = decode; *p && !rc;) {
      char *end;
      long id = strtol(p, &end, 10);
      const char *bytes;
      size_t len;
      if (end == p || hmx_tokenizer_piece(t, (int32_t)id, &bytes, &len)) {
        rc = hmx_cli_error(HMX_EXIT_USAGE, "tokenize: --decode: bad id list at '%s'", p);
        break;
      }
      fwrite(bytes, 1, len, stdout);
      p = *end == ',' ? end + 1 : end;
      if (*end && *end != ',') rc = hmx_cli_error(HMX_EXIT_USAGE, "tokenize: --decode: bad id "
                                                  "list at '%s'", end);
    }
  } else {
    size_t len = 0;
    char *buf = NULL;
    if (file && !(buf = read_all(file, &len)))
      rc = hmx_cli_error(HMX_EXIT_FAIL, "tokenize: cannot read %s", file);
    int32_t *ids = NULL;
    int64_t n = 0;
    if (!rc && (st = hmx_tokenizer_encode(t, file ? buf : text, file ? len : strlen(text),
                                          special, &ids, &n)))
      rc = hmx_cli_error(HMX_EXIT_FAIL, "tokenize: %s", hmx_cli_status_message(st));
    for (int64_t i = 0; !rc && i < n; i++) printf(i ? ",%d" : "%d", (int)ids[i]);
    if (!rc) printf("\n");
    free(ids);
    free(buf);
  }
  hmx_tokenizer_free(t);
  return rc;
}
