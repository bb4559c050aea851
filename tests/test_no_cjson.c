/* A hadamix built without cJSON (tests/t_model.cmake builds this only then:
 * tools/test.sh --minimal in CI). The formats with a JSON header must be
 * refused with HMX_ERR_UNSUPPORTED and a message naming cJSON, never misread
 * as another format; what needs no JSON must still work:
 * - hmx_model_save and hmx_model_load of a hadamix weights file (safetensors);
 * - hmx_model_load of a Hugging Face checkpoint directory (config.json);
 * - hmx_tokenizer_load of a tokenizer.json, and of a directory holding one;
 * - a missing path is HMX_ERR_IO, as with cJSON;
 * - GGUF models (argv[2]: a committed fuzz seed) load and run, on ref and on
 *   the best backend with the same bits, and GGUF tokenizers (argv[3]) encode.
 *
 *   test_no_cjson SCRATCH_DIR MODEL.gguf TOKENIZER.gguf */
#include "check.h"
#include "hadamix.h"
#include "hadamix_model.h"
#include "hadamix_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if HMX_HAVE_CJSON
#error "test_no_cjson is for builds without cJSON (tests/t_model.cmake)"
#endif

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL, "cannot write %s", path);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static int exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* st is HMX_ERR_UNSUPPORTED, the message names cJSON and `what` */
static void check_refused(hmx_status st, const char *what, const char *call) {
  const char *msg = hmx_last_error();
  CHECK(st == HMX_ERR_UNSUPPORTED && strstr(msg, "cJSON") && strstr(msg, what),
        "%s: status %d, message '%s' (want HMX_ERR_UNSUPPORTED naming cJSON and '%s')", call,
        (int)st, msg, what);
}

static void check_json_formats(const char *dir) {
  char path[1024], sub[512];
  hmx_model_config cfg;
  hmx_model_preset("test", HMX_OUTPROJ_DENSE, &cfg);
  hmx_model *m = NULL, *l = (hmx_model *)&l;
  CHECK(!hmx_model_synthetic(&cfg, 7, HMX_F32, &m), "synthetic: %s", hmx_last_error());

  snprintf(path, sizeof path, "%s/no_cjson_model.safetensors", dir);
  remove(path);
  check_refused(hmx_model_save(m, path), "hadamix model file", "hmx_model_save");
  CHECK(!exists(path), "hmx_model_save left a file behind");

  /* a well-formed safetensors file (an empty header) is still not readable */
  static const char st_file[] = "\x02\0\0\0\0\0\0\0{}";
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(st_file, 1, sizeof st_file - 1, f) == sizeof st_file - 1, "write %s", path);
  if (f) fclose(f);
  check_refused(hmx_model_load(path, &l), "hadamix model file", "hmx_model_load(safetensors)");
  CHECK(l == NULL, "hmx_model_load: *out not cleared on failure");

  snprintf(sub, sizeof sub, "%s/no_cjson_hf", dir);
  mkdir(sub, 0755);
  snprintf(path, sizeof path, "%s/config.json", sub);
  write_file(path, "{\"model_type\": \"llama\"}");
  l = (hmx_model *)&l;
  check_refused(hmx_model_load(sub, &l), "Hugging Face checkpoint", "hmx_model_load(dir)");
  CHECK(l == NULL, "hmx_model_load(dir): *out not cleared on failure");

  snprintf(path, sizeof path, "%s/tokenizer.json", sub);
  write_file(path, "{\"model\": {\"type\": \"BPE\"}}");
  hmx_tokenizer *t = (hmx_tokenizer *)&t;
  check_refused(hmx_tokenizer_load(path, &t), "tokenizer.json", "hmx_tokenizer_load(file)");
  CHECK(t == NULL, "hmx_tokenizer_load: *out not cleared on failure");
  check_refused(hmx_tokenizer_load(sub, &t), "tokenizer.json", "hmx_tokenizer_load(dir)");

  snprintf(path, sizeof path, "%s/no_such_model.safetensors", dir);
  remove(path);
  CHECK(hmx_model_load(path, &l) == HMX_ERR_IO && strstr(hmx_last_error(), "cannot open"),
        "missing file: %s", hmx_last_error());
  hmx_model_free(m);
}

/* Last-position logits of a three-token prompt on `backend`; NULL on failure. */
static float *logits_on(const hmx_model *m, const char *backend) {
  const hmx_backend *be = hmx_backend_find(backend);
  hmx_context ctx = {be, 1, 0, HMX_TIER_DEFAULT};
  const int32_t toks[3] = {1, 2, 3};
  const int32_t *tp = toks;
  const int64_t n = 3;
  float *out = calloc((size_t)hmx_model_get_config(m)->vocab, sizeof *out);
  hmx_kv_cache *c = NULL;
  if (!out || hmx_kv_cache_new(m, 0, &c) || hmx_model_forward(&ctx, m, 1, &c, &tp, &n, NULL, out)) {
    CHECK(0, "forward on %s: %s", backend, hmx_last_error());
    free(out);
    out = NULL;
  }
  hmx_kv_cache_free(c);
  return out;
}

static void check_gguf(const char *model_path, const char *tok_path) {
  hmx_model *m = NULL;
  CHECK(!hmx_model_load(model_path, &m), "GGUF model %s: %s", model_path, hmx_last_error());
  if (m) {
    const int V = hmx_model_get_config(m)->vocab;
    float *r = logits_on(m, "ref");
    const hmx_backend *best = hmx_backend_best();
    float *b = logits_on(m, hmx_backend_name(best));
    int finite = 0;
    for (int i = 0; r && i < V; i++) finite += r[i] == r[i] && r[i] - r[i] == 0;
    CHECK(r && finite == V, "GGUF model: %d of %d logits finite", finite, V);
    CHECK(r && b && !memcmp(r, b, (size_t)V * sizeof *r), "GGUF model: ref and %s differ",
          hmx_backend_name(best));
    printf("GGUF model %s: %d logits, same bits on ref and %s\n", model_path, V,
           hmx_backend_name(best));
    free(r);
    free(b);
    hmx_model_free(m);
  }
  hmx_tokenizer *t = NULL;
  CHECK(!hmx_tokenizer_load(tok_path, &t), "GGUF tokenizer %s: %s", tok_path, hmx_last_error());
  if (t) {
    int32_t *ids = NULL;
    int64_t n = 0;
    CHECK(!hmx_tokenizer_encode(t, "hello", 5, 0, &ids, &n) && n > 0,
          "GGUF tokenizer: encode: %s", hmx_last_error());
    /* the pieces give the text back */
    char back[64] = {0};
    size_t used = 0;
    for (int64_t i = 0; i < n; i++) {
      const char *p;
      size_t len;
      if (!hmx_tokenizer_piece(t, ids[i], &p, &len) && used + len < sizeof back) {
        memcpy(back + used, p, len);
        used += len;
      }
    }
    CHECK(used == 5 && !memcmp(back, "hello", 5), "GGUF tokenizer: 'hello' came back as '%s'",
          back);
    free(ids);
    hmx_tokenizer_free(t);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_no_cjson SCRATCH_DIR MODEL.gguf TOKENIZER.gguf\n");
    return 2;
  }
  check_json_formats(argv[1]);
  check_gguf(argv[2], argv[3]);
  return check_finish("test_no_cjson");
}
