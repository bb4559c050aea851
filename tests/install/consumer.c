/* A program that uses hadamix as an installed library would: only the public
 * headers, linked through the CMake package or pkg-config (tests/install/
 * check_install.cmake builds it each way). It checks that what it linked
 * works, not just that it links:
 *   - the headers' version is the library's (hmx_version_string);
 *   - every backend available here gives the bits of ref on an fwht and a
 *     small synthetic model's logits (the library's promise, through the
 *     installed headers and library);
 *   - a bad call returns a status and a message (the error state works
 *     across the library boundary);
 *   - with HMX_EXPECT_SHARED, hmx_fwht comes from libhadamix.so, not from a
 *     static copy linked into this program.
 * Prints one line per check; exits 1 on the first failure. */
#if defined(__linux__)
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#endif
#include <hadamix.h>
#include <hadamix_model.h>
#include <hadamix_tokenizer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  printf("FAIL %s: %s\n", what, hmx_last_error());
  return 1;
}

static int same_fwht(const hmx_backend *b) {
  enum { ROWS = 3, N = 768 };
  static float x[ROWS * N], want[ROWS * N], got[ROWS * N];
  uint64_t s = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < ROWS * N; i++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    x[i] = (float)((int64_t)(s >> 40) - (1 << 23)) / (float)(1 << 20);
  }
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, ROWS, N);
  hmx_tensor ty = hmx_tensor_2d(want, HMX_F32, ROWS, N);
  hmx_context ref = {hmx_backend_find("ref"), 1, 0, HMX_TIER_EXACT};
  hmx_context ctx = {b, 2, 0, HMX_TIER_EXACT};
  if (hmx_fwht(&ref, &tx, &ty, 0.03125f) != HMX_OK) return fail("fwht on ref");
  ty.data = got;
  if (hmx_fwht(&ctx, &tx, &ty, 0.03125f) != HMX_OK) return fail("fwht");
  if (memcmp(want, got, sizeof want) != 0) {
    printf("FAIL fwht on %s: not the bits of ref\n", hmx_backend_name(b));
    return 1;
  }
  return 0;
}

static int same_logits(const hmx_backend *b, const hmx_model *m, int vocab) {
  enum { T = 5 };
  static const int32_t prompt[T] = {1, 17, 42, 3, 200};
  const int32_t *tokens[1] = {prompt};
  int64_t n_tokens[1] = {T};
  float *want = malloc(sizeof(float) * (size_t)vocab), *got = malloc(sizeof(float) * (size_t)vocab);
  int rc = 1;
  hmx_context ctxs[2] = {{hmx_backend_find("ref"), 1, 0, HMX_TIER_EXACT}, {b, 2, 0, HMX_TIER_EXACT}};
  float *out[2] = {want, got};
  for (int i = 0; i < 2 && want && got; i++) {
    hmx_kv_cache *c = NULL;
    if (hmx_kv_cache_new(m, 0, &c) != HMX_OK) goto done;
    hmx_status st = hmx_model_forward(&ctxs[i], m, 1, &c, tokens, n_tokens, NULL, out[i]);
    hmx_kv_cache_free(c);
    if (st != HMX_OK) {
      fail("model forward");
      goto done;
    }
  }
  if (!want || !got) goto done;
  if (memcmp(want, got, sizeof(float) * (size_t)vocab) != 0) {
    printf("FAIL logits on %s: not the bits of ref\n", hmx_backend_name(b));
    goto done;
  }
  rc = 0;
done:
  free(want);
  free(got);
  return rc;
}

int main(void) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", HMX_VERSION_MAJOR, HMX_VERSION_MINOR,
           HMX_VERSION_PATCH);
  if (strcmp(hmx_version_string(), want) != 0) {
    printf("FAIL version: headers %s, library %s\n", want, hmx_version_string());
    return 1;
  }
  printf("ok version %s\n", want);

#if defined(HMX_EXPECT_SHARED) && defined(__linux__)
  Dl_info info;
  if (!dladdr((void *)&hmx_fwht, &info) || !info.dli_fname ||
      !strstr(info.dli_fname, "libhadamix.so")) {
    printf("FAIL hmx_fwht is not from libhadamix.so (%s)\n",
           info.dli_fname ? info.dli_fname : "?");
    return 1;
  }
  printf("ok hmx_fwht from %s\n", info.dli_fname);
#endif

  /* a status and a message, not a crash */
  hmx_tensor bad = hmx_tensor_2d(NULL, HMX_F32, 2, 100);
  if (hmx_fwht(NULL, &bad, &bad, 1.0f) == HMX_OK || hmx_last_error()[0] == '\0') {
    printf("FAIL a NULL tensor was accepted, or gave no message\n");
    return 1;
  }
  printf("ok bad call: %s\n", hmx_last_error());

  hmx_model_config cfg;
  hmx_model *m = NULL;
  if (hmx_model_preset("test", HMX_OUTPROJ_HADAMARD, &cfg) != HMX_OK) return fail("preset");
  if (hmx_model_synthetic(&cfg, 7, HMX_F32, &m) != HMX_OK) return fail("synthetic model");
  int ran = 0;
  for (int i = 0; i < hmx_backend_count(); i++) {
    const hmx_backend *b = hmx_backend_at(i);
    if (!hmx_backend_available(b)) {
      printf("-- %s not available here: %s\n", hmx_backend_name(b),
             hmx_backend_unavailable_reason(b));
      continue;
    }
    if (same_fwht(b) || same_logits(b, m, cfg.vocab)) {
      hmx_model_free(m);
      return 1;
    }
    printf("ok %s: fwht and logits are the bits of ref\n", hmx_backend_name(b));
    ran++;
  }
  hmx_model_free(m);
  if (ran < 1) {
    printf("FAIL no backend ran\n");
    return 1;
  }
  printf("consumer: all checks passed\n");
  return 0;
}
