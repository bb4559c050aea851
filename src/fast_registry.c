/* The fast tier: which backends change which ops (src/fast.h), and the tier
 * switch (hmx_context.tier, else the HMX_TIER environment variable). */
#include "fast.h"
#include "backend_tables.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* One line per backend that has a fast tier, like src/backend_registry.c.
 * The CPU SIMD backends share the CPU table (cpu_fast/): its kernels choose
 * their ISA at run time, and a backend's probe has already said the machine
 * runs it. */
#if defined(HMX_WITH_CPU_FAST)
extern const hmx_fast_ops hmx_cpu_fast_ops;
#endif
#if defined(HMX_WITH_CUDA_FAST)
extern const hmx_fast_ops hmx_cuda_fast_ops; /* cuda/fast_gemm.cu: cuBLASLt */
#endif

typedef struct fast_entry {
  const hmx_backend *backend;
  const hmx_fast_ops *ops;
  unsigned weights16_mask; /* the HMX_FAST_W_* forms this backend may use */
} fast_entry;

/* bf16 G16 weights run AVX-512 code (cpu_fast/fast_bf16_g16.c): avx512 only */
#define W16_ROWS HMX_FAST_W_BF16_ROWS
#define W16_ALL (HMX_FAST_W_BF16_ROWS | HMX_FAST_W_BF16_G16)

static const fast_entry fast_tables[] = {
#if defined(HMX_WITH_CPU_FAST) && defined(HMX_WITH_AVX2)
    {&hmx_backend_avx2, &hmx_cpu_fast_ops, W16_ROWS},
#endif
#if defined(HMX_WITH_CPU_FAST) && defined(HMX_WITH_AVX512)
    {&hmx_backend_avx512, &hmx_cpu_fast_ops, W16_ALL},
#endif
#if defined(HMX_WITH_CPU_FAST) && defined(HMX_WITH_NEON)
    {&hmx_backend_neon, &hmx_cpu_fast_ops, W16_ROWS},
#endif
#if defined(HMX_WITH_CUDA_FAST)
    {&hmx_backend_cuda, &hmx_cuda_fast_ops, 0},
#endif
    {NULL, NULL, 0}};

const hmx_fast_ops *hmx_fast_ops_of(const hmx_backend *b) {
  for (int i = 0; fast_tables[i].backend; i++)
    if (fast_tables[i].backend == b) return fast_tables[i].ops;
  return NULL;
}

unsigned hmx_fast_weights16(const hmx_backend *b) {
  for (int i = 0; fast_tables[i].backend; i++)
    if (fast_tables[i].backend == b) {
      const hmx_fast_ops *f = fast_tables[i].ops;
      return f->weights16 ? f->weights16() & fast_tables[i].weights16_mask : 0u;
    }
  return 0u;
}

hmx_status hmx_tier_parse(const char *s, hmx_tier *out) {
  if (!s || !out) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "tier: NULL argument");
  if (strcmp(s, "exact") == 0) *out = HMX_TIER_EXACT;
  else if (strcmp(s, "fast") == 0) *out = HMX_TIER_FAST;
  else return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "unknown tier '%s' (exact or fast)", s);
  return HMX_OK;
}

static hmx_status env_tier(hmx_tier *out) {
  const char *env = getenv("HMX_TIER");
  *out = HMX_TIER_EXACT;
  if (!env || !*env) return HMX_OK;
  hmx_status s = hmx_tier_parse(env, out);
  if (s != HMX_OK) {
    *out = HMX_TIER_EXACT;
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "HMX_TIER='%s' is not a tier (exact or fast)", env);
  }
  return HMX_OK;
}

hmx_tier hmx_tier_default(void) {
  hmx_tier t;
  (void)env_tier(&t);
  return t;
}

hmx_status hmx_tier_resolve(const hmx_context *ctx, hmx_tier *out) {
  hmx_tier t = ctx ? ctx->tier : HMX_TIER_DEFAULT;
  if (t == HMX_TIER_DEFAULT) return env_tier(out);
  if (t != HMX_TIER_EXACT && t != HMX_TIER_FAST)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "context tier %d is not a tier", (int)t);
  *out = t;
  return HMX_OK;
}

const char *hmx_tier_name(hmx_tier t) {
  switch (t) {
    case HMX_TIER_DEFAULT: return "default";
    case HMX_TIER_EXACT: return "exact";
    case HMX_TIER_FAST: return "fast";
  }
  return "?";
}

const char *hmx_fast_op_kernel(const hmx_backend *b, const char *op, const char **why_not) {
  if (why_not) *why_not = NULL;
  if (!b || !op) return NULL;
  const hmx_fast_ops *f = hmx_fast_ops_of(b);
  if (!f) return NULL;
  int has = 0;
  const char *uses = NULL, *why = NULL;
  if (strcmp(op, "gemm") == 0) {
    has = f->gemm != NULL;
    uses = f->gemm_uses;
    why = f->gemm_why_not;
  } else if (strcmp(op, "attention") == 0) {
    has = f->attention != NULL;
    uses = f->attention_uses;
    why = f->attention_why_not;
  } else if (strcmp(op, "swiglu") == 0) {
    has = f->swiglu != NULL;
    uses = f->swiglu_uses;
    why = f->swiglu_why_not;
  }
  if (has) return uses;
  if (why_not) *why_not = why;
  return NULL;
}
