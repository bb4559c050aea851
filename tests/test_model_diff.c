/* hmx_model_diff names the first layer and tensor where two backends differ:
 * a copy of the best backend with a one-ulp change planted in one kernel
 * (on its Nth call) must be caught exactly there, and two honest backends
 * must agree everywhere. */
#include "backend.h"
#include "hadamix_model.h"
#include "check.h"

#include <math.h>
#include <string.h>

static const hmx_backend *honest;
static int plant_call;  /* which call (0-based) of the kernel is changed */
static int calls;

static void nudge(float *y) { y[3] = nextafterf(y[3], INFINITY); }

static hmx_status planted_swiglu(const hmx_swiglu_args *a) {
  hmx_status s = honest->swiglu(a);
  if (!s && calls++ == plant_call) nudge(a->y);
  return s;
}
static hmx_status planted_rmsnorm(const hmx_norm_args *a) {
  hmx_status s = honest->rmsnorm(a);
  if (!s && calls++ == plant_call) nudge(a->y);
  return s;
}
static hmx_status planted_hadamard_mix(const hmx_hadamard_mix_args *a) {
  hmx_status s = honest->hadamard_mix(a);
  if (!s && calls++ == plant_call) nudge(a->y);
  return s;
}

static void expect(const hmx_model *m, const hmx_backend *planted, int layer, const char *tensor) {
  static const int32_t toks[6] = {1, 2, 3, 200, 100, 7};
  hmx_context a = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT}, b = {planted, 1, 1, HMX_TIER_DEFAULT};
  hmx_model_diff_report r;
  calls = 0;
  CHECK(!hmx_model_diff(&a, &b, m, toks, 6, &r), "diff: %s", hmx_last_error());
  CHECK(r.differs && r.layer == layer && !strcmp(r.tensor, tensor),
        "planted change in %s of layer %d reported as differs=%d layer %d tensor '%s'", tensor,
        layer, r.differs, r.layer, r.tensor);
  CHECK(r.index == 3 && r.n_different == 1, "first index %lld, %lld different", (long long)r.index,
        (long long)r.n_different);
  printf("planted %s/layer %d: reported layer %d tensor %s index %lld (%.9g vs %.9g)\n", tensor,
         layer, r.layer, r.tensor, (long long)r.index, r.a, r.b);
}

int main(void) {
  honest = hmx_backend_best();
  hmx_model_config c;
  hmx_model *dense = NULL, *had = NULL;
  hmx_model_preset("test", HMX_OUTPROJ_DENSE, &c);
  CHECK(!hmx_model_synthetic(&c, 5, HMX_BF16, &dense), "%s", hmx_last_error());
  hmx_model_preset("test", HMX_OUTPROJ_HADAMARD, &c);
  CHECK(!hmx_model_synthetic(&c, 6, HMX_F32, &had), "%s", hmx_last_error());
  if (!dense || !had) return check_finish("test_model_diff");

  /* two honest backends agree on every tensor */
  static const int32_t toks[4] = {9, 8, 7, 6};
  hmx_context a = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT}, b = {honest, 2, 0, HMX_TIER_DEFAULT};
  hmx_model_diff_report r;
  CHECK(!hmx_model_diff(&a, &b, dense, toks, 4, &r) && !r.differs && r.tensors_compared > 20,
        "ref vs %s: differs=%d at %s (%d tensors)", hmx_backend_name(honest), r.differs, r.tensor,
        r.tensors_compared);

  hmx_backend planted = *honest;
  planted.name = "planted";
  planted.swiglu = planted_swiglu;
  plant_call = 0;
  expect(dense, &planted, 0, "ffn");
  plant_call = 1;
  expect(dense, &planted, 1, "ffn");

  planted = *honest;
  planted.rmsnorm = planted_rmsnorm;
  plant_call = 2; /* calls: attn_norm 0, ffn_norm 0, attn_norm 1, ... */
  expect(dense, &planted, 1, "attn_norm");
  plant_call = 4; /* the final norm */
  expect(dense, &planted, -1, "final_norm");

  planted = *honest;
  planted.hadamard_mix = planted_hadamard_mix;
  plant_call = 1;
  expect(had, &planted, 1, "attn_out");

  hmx_model_free(dense);
  hmx_model_free(had);
  return check_finish("test_model_diff");
}
