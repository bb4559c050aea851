/* hmx_model_diff: run one forward pass under two contexts and find the first
 * intermediate tensor whose bits differ (docs/MODEL.md, `hmx diff --model`). */
#include "model_internal.h"
#include "compare.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tensors of the first run, in execution order. */
typedef struct rec {
  int layer;
  char name[32];
  int64_t n;
  float *data;
} rec;

typedef struct recorder {
  rec *items;
  int count, cap;
  int pos;                       /* second run: next item to compare */
  int failed;                    /* out of memory while recording */
  hmx_model_diff_report *report;
} recorder;

static int record(void *user, int layer, const char *tensor, const float *data, int64_t rows,
                  int64_t cols) {
  recorder *r = user;
  if (r->count == r->cap) {
    int ncap = r->cap ? 2 * r->cap : 64;
    rec *ni = realloc(r->items, (size_t)ncap * sizeof *ni);
    if (!ni) return r->failed = 1;
    r->items = ni;
    r->cap = ncap;
  }
  rec *it = &r->items[r->count];
  it->layer = layer;
  snprintf(it->name, sizeof it->name, "%s", tensor);
  it->n = rows * cols;
  it->data = hmx_alloc_array((size_t)it->n, sizeof(float));
  if (!it->data) return r->failed = 1;
  memcpy(it->data, data, (size_t)it->n * sizeof(float));
  r->count++;
  return 0;
}

static int compare(void *user, int layer, const char *tensor, const float *data, int64_t rows,
                   int64_t cols) {
  recorder *r = user;
  hmx_model_diff_report *rep = r->report;
  const rec *it = r->pos < r->count ? &r->items[r->pos] : NULL;
  r->pos++;
  rep->tensors_compared++;
  if (!it || it->layer != layer || strcmp(it->name, tensor) || it->n != rows * cols) {
    /* the runs took different paths: report it at this tensor */
    rep->differs = 1;
    rep->layer = layer;
    snprintf(rep->tensor, sizeof rep->tensor, "%s", tensor);
    rep->index = -1;
    return 1;
  }
  /* the exact-tier rule of src/compare.c: identical bits, NaN = NaN */
  hmx_tensor ta = hmx_tensor_1d(it->data, HMX_F32, it->n);
  hmx_tensor tb = hmx_tensor_1d((float *)data, HMX_F32, it->n);
  hmx_diff_stats st;
  if (hmx_compare(&tb, &ta, &st) != HMX_OK) return r->failed = 1;
  if (!st.differing) return 0;
  const int64_t first = st.first_index;
  rep->differs = 1;
  rep->layer = layer;
  snprintf(rep->tensor, sizeof rep->tensor, "%s", tensor);
  rep->index = first;
  rep->a = it->data[first];
  rep->b = data[first];
  rep->n_different = st.differing;
  rep->max_abs = st.max_abs;
  return 1; /* stop at the first difference */
}

static void recorder_free(recorder *r) {
  for (int i = 0; i < r->count; i++) free(r->items[i].data);
  free(r->items);
}

hmx_status hmx_model_diff(const hmx_context *a, const hmx_context *b, const hmx_model *m,
                          const int32_t *tokens, int64_t n_tokens, hmx_model_diff_report *report) {
  hmx_clear_error();
  if (!m || !tokens || !report)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_diff: NULL argument");
  memset(report, 0, sizeof *report);
  report->layer = -1;
  if (n_tokens < 1 || n_tokens > m->cfg.context)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_diff: %lld tokens (1 .. context = %d)",
                    (long long)n_tokens, m->cfg.context);
  recorder r = {NULL, 0, 0, 0, 0, report};
  hmx_kv_cache *cache = NULL;
  float *logits = hmx_alloc_array((size_t)n_tokens * (size_t)m->cfg.vocab, sizeof(float));
  hmx_status st = logits ? hmx_kv_cache_new(m, n_tokens, &cache)
                         : hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_diff: out of memory");
  if (!st) {
    hmx_forward_opts o = {1, record, &r};
    st = hmx_model_forward(a, m, 1, &cache, &tokens, &n_tokens, &o, logits);
    if (st && r.failed) st = hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_diff: out of memory");
  }
  if (!st) {
    hmx_kv_cache_truncate(cache, 0);
    hmx_forward_opts o = {1, compare, &r};
    st = hmx_model_forward(b, m, 1, &cache, &tokens, &n_tokens, &o, logits);
    if (st && report->differs) {
      hmx_clear_error();
      st = HMX_OK; /* stopped at the first difference: that is the answer */
    }
  }
  hmx_kv_cache_free(cache);
  free(logits);
  recorder_free(&r);
  return st;
}
