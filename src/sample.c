/* Token sampling (hmx_sample): greedy, or temperature / top-k / top-p with a
 * SplitMix64 draw, so a seed reproduces a generation on any machine that
 * produces the same logits (docs/MODEL.md). */
#include "hadamix_model.h"
#include "internal.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

typedef struct cand {
  int32_t id;
  double p;
} cand;

/* Larger probability first; ties to the lower id (a total order: qsort's
 * instability cannot change the result). */
static int by_prob(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->p != y->p) return x->p > y->p ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

hmx_status hmx_sample(const hmx_sampler *s, const float *logits, int vocab, uint64_t step,
                      int32_t *token) {
  hmx_clear_error();
  if (!s || !logits || !token) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_sample: NULL argument");
  if (vocab < 1) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_sample: vocab = %d < 1", vocab);
  for (int i = 0; i < vocab; i++)
    if (logits[i] != logits[i])
      return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_sample: logit %d is NaN", i);
  /* greedy: the first maximum */
  int best = 0;
  for (int i = 1; i < vocab; i++)
    if (logits[i] > logits[best]) best = i;
  if (!(s->temperature > 0.0f) || s->top_k == 1) {
    *token = best;
    return HMX_OK;
  }
  if (!isfinite(s->temperature) || s->top_k < 0 || !(s->top_p > 0.0f))
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_sample: temperature must be finite, top_k >= 0 "
                    "and top_p > 0");
  cand *c = hmx_alloc_array((size_t)vocab, sizeof *c);
  if (!c) return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_sample: out of memory");
  /* softmax(logits / T) in double, from the maximum */
  const double mx = logits[best], t = s->temperature;
  double sum = 0.0;
  for (int i = 0; i < vocab; i++) {
    c[i].id = i;
    c[i].p = exp(((double)logits[i] - mx) / t);
    sum += c[i].p;
  }
  qsort(c, (size_t)vocab, sizeof *c, by_prob);
  int keep = s->top_k > 0 && s->top_k < vocab ? s->top_k : vocab;
  double kept = 0.0;
  for (int i = 0; i < keep; i++) {
    kept += c[i].p;
    if (s->top_p < 1.0f && kept >= (double)s->top_p * sum) {
      keep = i + 1;
      break;
    }
  }
  kept = 0.0;
  for (int i = 0; i < keep; i++) kept += c[i].p;
  /* u in [0, 1) from 53 bits of the draw */
  const double u = (double)(hmx_rng_u64(s->seed, 0, step) >> 11) * 0x1.0p-53 * kept;
  double acc = 0.0;
  int32_t pick = c[keep - 1].id;
  for (int i = 0; i < keep; i++) {
    acc += c[i].p;
    if (u < acc) {
      pick = c[i].id;
      break;
    }
  }
  free(c);
  *token = pick;
  return HMX_OK;
}
