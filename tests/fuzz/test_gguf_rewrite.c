/* The structure-aware GGUF mutation of the fuzz targets (fuzz_gguf_rewrite.h)
 * writes what it means to:
 *   - unedited, a parsed file is written back to the same metadata, tensor
 *     infos and tensor bytes, and a model the loader accepted still loads;
 *   - each of 4000 edits per input gives a file that parses (but a renamed
 *     tensor that now has another tensor's name, and an edited
 *     general.alignment, which the reader must refuse or may), with one
 *     metadata pair or tensor fewer where one was dropped, and the edit in it:
 *     the new value, type, extent, name or array length;
 *   - every kind of edit was made at least once;
 *   - the mutator's entry, fuzz_gguf_rewrite, rewrites in place within
 *     max_size, or returns 0 with the input as it was.
 *
 *   test_gguf_rewrite FILE.gguf...   (the model fuzz target's seeds) */
#include "gguf.h"
#include "model_internal.h"
#include "fuzz_gguf_rewrite.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAP = 1 << 20, EDITS = 4000 };

static unsigned char *read_all(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  unsigned char *b = malloc(CAP);
  *len = b ? fread(b, 1, CAP, fp) : 0;
  fclose(fp);
  return b;
}

static int same_value(const hmx_gguf_value *a, const hmx_gguf_value *b) {
  if (a->type != b->type || a->elem != b->elem || a->n != b->n) return 0;
  if (a->elem == HMX_GGUF_STRING) {
    for (uint64_t i = 0; i < a->n; i++)
      if (a->strs[i].len != b->strs[i].len ||
          memcmp(a->strs[i].ptr, b->strs[i].ptr, (size_t)a->strs[i].len) != 0)
        return 0;
    return 1;
  }
  return memcmp(a->raw, b->raw, (size_t)a->n * hmx_gguf_vtype_size(a->elem)) == 0;
}

static int same_tensor(const hmx_gguf_tensor *a, const hmx_gguf_tensor *b) {
  return strcmp(a->name, b->name) == 0 && a->type == b->type && a->ndim == b->ndim &&
         memcmp(a->ne, b->ne, sizeof a->ne) == 0 && a->nbytes == b->nbytes &&
         memcmp(a->data, b->data, (size_t)a->nbytes) == 0;
}

/* Unedited: the same file, item for item. */
static void check_identity(const char *path, const hmx_gguf *f, int model_ok) {
  static uint8_t out[CAP];
  rw_edit none;
  memset(&none, 0, sizeof none);
  none.kind = RW_KINDS;
  none.index = -1;
  const size_t n = rw_write(f, &none, out, sizeof out);
  CHECK(n > 0, "%s: not written back", path);
  hmx_gguf *g = NULL;
  CHECK(n > 0 && hmx_gguf_parse(out, n, "rewritten", &g) == HMX_OK, "%s: written back, it does "
        "not parse: %s", path, hmx_last_error());
  if (!g) return;
  CHECK(hmx_gguf_kv_count(g) == hmx_gguf_kv_count(f) &&
        hmx_gguf_tensor_count(g) == hmx_gguf_tensor_count(f) &&
        hmx_gguf_alignment(g) == hmx_gguf_alignment(f), "%s: counts differ", path);
  for (int64_t i = 0; i < hmx_gguf_kv_count(f) && i < hmx_gguf_kv_count(g); i++) {
    const hmx_gguf_kv *a = hmx_gguf_kv_at(f, i), *b = hmx_gguf_kv_at(g, i);
    CHECK(strcmp(a->key, b->key) == 0 && same_value(&a->value, &b->value),
          "%s: metadata %s differs written back", path, a->key);
  }
  for (int64_t i = 0; i < hmx_gguf_tensor_count(f) && i < hmx_gguf_tensor_count(g); i++)
    CHECK(same_tensor(hmx_gguf_tensor_at(f, i), hmx_gguf_tensor_at(g, i)),
          "%s: tensor %s differs written back", path, hmx_gguf_tensor_at(f, i)->name);
  hmx_model *m = NULL;
  const hmx_status s = hmx_model_from_gguf(g, "rewritten", &m);
  CHECK((s == HMX_OK) == model_ok, "%s: the loader %s it, written back (%s)", path,
        s == HMX_OK ? "accepts" : "refuses", hmx_last_error());
  hmx_model_free(m);
  hmx_gguf_free(g);
}

/* One edit: g (the result, parsed) holds it. */
static void check_edit(const char *path, const hmx_gguf *f, const hmx_gguf *g, const rw_edit *e) {
  const int64_t nkv = hmx_gguf_kv_count(f), nt = hmx_gguf_tensor_count(f);
  CHECK(hmx_gguf_kv_count(g) == nkv - (e->kind == RW_KV_DROP) &&
        hmx_gguf_tensor_count(g) == nt - (e->kind == RW_T_DROP),
        "%s: edit %d: counts %lld/%lld", path, e->kind, (long long)hmx_gguf_kv_count(g),
        (long long)hmx_gguf_tensor_count(g));
  if (e->kind <= RW_KV_DROP) {
    const hmx_gguf_kv *was = hmx_gguf_kv_at(f, e->index);
    const hmx_gguf_value *now = hmx_gguf_find_kv(g, was->key);
    if (e->kind == RW_KV_DROP) {
      CHECK(now == NULL, "%s: %s not dropped", path, was->key);
      return;
    }
    CHECK(now != NULL, "%s: %s lost", path, was->key);
    if (!now) return;
    if (e->kind == RW_KV_ARRAY_CUT)
      CHECK(now->n == e->n, "%s: %s has %llu elements, not %llu", path, was->key,
            (unsigned long long)now->n, (unsigned long long)e->n);
    else if (e->vtype == HMX_GGUF_STRING)
      CHECK(now->type == HMX_GGUF_STRING && now->strs[0].len == strlen(e->text) &&
            memcmp(now->strs[0].ptr, e->text, strlen(e->text)) == 0, "%s: %s not \"%s\"", path,
            was->key, e->text);
    else
      CHECK(now->type == e->vtype && memcmp(now->raw, e->raw, hmx_gguf_vtype_size(e->vtype)) == 0,
            "%s: %s not the new %s value", path, was->key, hmx_gguf_vtype_name(e->vtype));
    return;
  }
  const hmx_gguf_tensor *was = hmx_gguf_tensor_at(f, e->index);
  const hmx_gguf_tensor *now = hmx_gguf_find_tensor(g, e->kind == RW_T_RENAME ? e->name
                                                                            : was->name);
  if (e->kind == RW_T_DROP) {
    CHECK(now == NULL, "%s: %s not dropped", path, was->name);
    return;
  }
  CHECK(now != NULL, "%s: %s lost", path, was->name);
  if (!now) return;
  if (e->kind == RW_T_DIM)
    CHECK(now->ne[e->dim] == e->ne && now->nbytes == rw_tensor_bytes(now->type, now->ndim,
                                                                       now->ne),
          "%s: %s ne[%d] = %lld, not %lld", path, was->name, e->dim, (long long)now->ne[e->dim],
          (long long)e->ne);
  else if (e->kind == RW_T_TYPE)
    CHECK(now->type == e->ttype, "%s: %s is %s, not %s", path, was->name,
          hmx_gguf_type_name(now->type), hmx_gguf_type_name(e->ttype));
  else /* RW_T_RENAME: the data went with the name */
    CHECK(now->nbytes == was->nbytes && memcmp(now->data, was->data, (size_t)was->nbytes) == 0,
          "%s: %s renamed %s, with other bytes", path, was->name, e->name);
}

int main(int argc, char **argv) {
  static uint8_t out[CAP];
  int parsed = 0, made[RW_KINDS] = {0}, rewritten = 0, rewritten_parse = 0;
  for (int a = 1; a < argc; a++) {
    size_t len = 0;
    unsigned char *buf = read_all(argv[a], &len);
    CHECK(buf != NULL, "cannot read %s", argv[a]);
    hmx_gguf *f = NULL;
    if (!buf || hmx_gguf_parse(buf, len, argv[a], &f) != HMX_OK) {
      free(buf);
      continue; /* a seed the reader refuses: nothing to rewrite */
    }
    parsed++;
    hmx_model *m = NULL;
    const int model_ok = hmx_model_from_gguf(f, argv[a], &m) == HMX_OK;
    hmx_model_free(m);
    check_identity(argv[a], f, model_ok);
    for (unsigned seed = 0; seed < EDITS; seed++) {
      rw_edit e;
      if (!rw_pick(f, seed * 2654435761u, &e)) continue;
      const size_t n = rw_write(f, &e, out, sizeof out);
      if (!n) continue; /* too large to write */
      made[e.kind]++;
      hmx_gguf *g = NULL;
      const hmx_status s = hmx_gguf_parse(out, n, "edited", &g);
      const int alignment = e.kind <= RW_KV_DROP &&
                            !strcmp(hmx_gguf_kv_at(f, e.index)->key, "general.alignment");
      const int clash = e.kind == RW_T_RENAME && hmx_gguf_find_tensor(f, e.name) != NULL;
      if (clash) CHECK(s == HMX_ERR_FORMAT, "%s: two tensors named %s accepted", argv[a], e.name);
      else if (!alignment)
        CHECK(s == HMX_OK, "%s: edit %d of item %lld does not parse: %s", argv[a], e.kind,
              (long long)e.index, hmx_last_error());
      if (s == HMX_OK && !alignment) check_edit(argv[a], f, g, &e);
      hmx_gguf_free(g);
    }
    /* the mutator's entry, in place: a result within max_size, or 0 and the
     * input untouched (here max_size is the input's size: edits that grow it
     * cannot be made) */
    for (unsigned seed = 0; seed < 64; seed++) {
      uint8_t *copy = malloc(len);
      memcpy(copy, buf, len);
      const size_t n = fuzz_gguf_rewrite(copy, len, len, seed * 40503u);
      hmx_gguf *g = NULL;
      if (n) {
        rewritten++;
        if (hmx_gguf_parse(copy, n, "in place", &g) == HMX_OK) rewritten_parse++;
      } else {
        CHECK(memcmp(copy, buf, len) == 0, "%s: seed %u: returned 0 but changed the input",
              argv[a], seed);
      }
      hmx_gguf_free(g);
      free(copy);
    }
    hmx_gguf_free(f);
    free(buf);
  }
  CHECK(rewritten > 0 && rewritten_parse > 0, "fuzz_gguf_rewrite rewrote %d inputs, %d parse",
        rewritten, rewritten_parse);
  CHECK(parsed >= 2, "only %d of %d inputs parse", parsed, argc - 1);
  for (int k = 0; k < RW_KINDS; k++)
    CHECK(made[k] > 0, "no edit of kind %d was made", k);
  printf("test_gguf_rewrite: %d files; edits made by kind:", parsed);
  for (int k = 0; k < RW_KINDS; k++) printf(" %d", made[k]);
  printf("; in place: %d rewritten, %d of them parse\n", rewritten, rewritten_parse);
  return check_finish("test_gguf_rewrite");
}
