/* Built instead of the JSON readers when hadamix is configured without cJSON
 * (CMakeLists.txt: no libcjson-dev, or -DHMX_WITH_CJSON=OFF). The formats
 * whose headers are JSON are then refused with HMX_ERR_UNSUPPORTED and a
 * message that says how to get them: safetensors (the hadamix model file,
 * model_safetensors.c), a Hugging Face checkpoint's config.json (model_hf.c)
 * and its tokenizer.json (tokenizer_hf.c). Everything else (every op, GGUF
 * models and tokenizers, synthetic models) does not need JSON and works. */
#include "internal.h"
#include "model_internal.h"
#include "tokenizer_internal.h"

#include <stddef.h>

#define NO_CJSON "needs cJSON, and this hadamix was built without it (install libcjson-dev, or " \
                 "set -DHMX_CJSON_INCLUDE and -DHMX_CJSON_LIBRARY, then reconfigure and rebuild)"

hmx_status hmx_model_load_safetensors(const char *path, hmx_model **out) {
  (void)out;
  return hmx_fail(HMX_ERR_UNSUPPORTED,
                  "%s: reading a hadamix model file (safetensors: a JSON header) " NO_CJSON, path);
}

hmx_status hmx_model_save(const hmx_model *m, const char *path) {
  hmx_clear_error();
  if (!m || !path) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_save: NULL argument");
  return hmx_fail(HMX_ERR_UNSUPPORTED,
                  "%s: writing a hadamix model file (safetensors: a JSON header) " NO_CJSON, path);
}

hmx_status hmx_model_load_hf(const char *dir, hmx_model **out) {
  (void)out;
  return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: reading a Hugging Face checkpoint (config.json, "
                  "safetensors) " NO_CJSON, dir);
}

hmx_status hmx_tokenizer_load_hf(const char *path, hmx_tokenizer **out) {
  (void)out;
  return hmx_fail(HMX_ERR_UNSUPPORTED, "%s: reading a tokenizer.json " NO_CJSON, path);
}

/* hmx_model_free releases the mapped file of a hadamix model file, which
 * cannot have been loaded here: m->file is always NULL. */
void hmx_st_free(hmx_st_file *f) { (void)f; }
