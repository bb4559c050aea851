/* The device-memory rules of the public API (include/hadamix.h, "device
 * memory"), checked by the dispatcher before anything runs, so this test
 * needs no GPU: the "device" pointers below are never dereferenced. Each
 * rule must fail with its status and a message naming the tensor. The GPU
 * side (results identical to ref) is tests/test_cuda_device.c. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "hadamix.h"

#include <stdlib.h>
#include <string.h>

/* A fake device address: aligned, never read (every call below fails in
 * the dispatcher's checks first). */
static _Alignas(64) float fake_dev[4096];

static hmx_tensor dev2(void *p, hmx_dtype dt, int64_t r, int64_t c) {
  hmx_tensor t = hmx_tensor_2d(p, dt, r, c);
  t.memory = HMX_MEMORY_CUDA;
  return t;
}

static void expect(hmx_status got, hmx_status want, const char *needle, const char *what) {
  CHECK(got == want, "%s: got %s, want %s (%s)", what, hmx_status_string(got),
        hmx_status_string(want), hmx_last_error());
  if (needle)
    CHECK(strstr(hmx_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what,
          hmx_last_error(), needle);
}

int main(void) {
  unsetenv("HMX_BACKEND");
  float host[64];
  memset(host, 0, sizeof host);
  hmx_context ref = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};

  /* zero-initialised tensors are host memory */
  hmx_tensor h = hmx_tensor_2d(host, HMX_F32, 2, 32);
  CHECK(h.memory == HMX_MEMORY_HOST && HMX_MEMORY_HOST == 0, "default memory is not host");
  hmx_tensor hz;
  memset(&hz, 0, sizeof hz);
  CHECK(hz.memory == HMX_MEMORY_HOST, "memset tensor is not host");
  hmx_tensor hy = hmx_tensor_2d(host + 0, HMX_F32, 2, 32);
  CHECK(hmx_fwht(&ref, &h, &hy, 1.0f) == HMX_OK, "host in place: %s", hmx_last_error());

  /* mixing host and device tensors */
  hmx_tensor dx = dev2(fake_dev, HMX_F32, 2, 32);
  float hout[64];
  hmx_tensor hyo = hmx_tensor_2d(hout, HMX_F32, 2, 32);
  expect(hmx_fwht(NULL, &dx, &hyo, 1.0f), HMX_ERR_INVALID_ARGUMENT, "device memory", "mixed x/y");
  float w[32] = {0};
  hmx_tensor hw = hmx_tensor_1d(w, HMX_F32, 32);
  hmx_tensor dy = dev2(fake_dev + 256, HMX_F32, 2, 32);
  expect(hmx_rmsnorm(NULL, &dx, &hw, 1e-5f, &dy), HMX_ERR_INVALID_ARGUMENT, "'weight'",
         "host weight with device x");

  /* an invalid memory kind */
  hmx_tensor bad = hmx_tensor_2d(host, HMX_F32, 2, 32);
  bad.memory = (hmx_memory)7;
  expect(hmx_fwht(&ref, &bad, &hyo, 1.0f), HMX_ERR_INVALID_ARGUMENT, "memory kind",
         "memory = 7");

  /* device tensors must be contiguous */
  hmx_tensor ds = dev2(fake_dev, HMX_F32, 2, 32);
  ds.stride[0] = 64;
  ds.stride[1] = 1;
  expect(hmx_fwht(NULL, &ds, &dy, 1.0f), HMX_ERR_INVALID_ARGUMENT, "contiguous", "strided");

  /* and aligned to their element size */
  hmx_tensor du = dev2((char *)fake_dev + 2, HMX_F32, 2, 32);
  expect(hmx_fwht(NULL, &du, &dy, 1.0f), HMX_ERR_INVALID_ARGUMENT, "aligned", "misaligned");

  /* 16-bit device tensors: fwht / hadamard_mix read them in their kernels,
   * x and y of one dtype; hadamard_mix's alpha and beta, and every float
   * tensor of the other ops, may be 16-bit each of its own dtype, staged
   * through f32 device scratch (test_cuda_device and test_cuda_vectors run
   * them); ops without device kernels refuse 16-bit device tensors */
  hmx_tensor a16 = dev2(fake_dev, HMX_BF16, 2, 32), b16 = dev2(fake_dev + 64, HMX_F16, 2, 32);
  expect(hmx_fwht(NULL, &a16, &b16, 1.0f), HMX_ERR_DTYPE, "one dtype", "bf16 x, f16 y");
  hmx_tensor s16a = dev2(fake_dev, HMX_BF16, 8, 8), s32b = dev2(fake_dev + 256, HMX_F32, 8, 8),
             s32c = dev2(fake_dev + 512, HMX_F32, 8, 8);
  expect(hmx_strassen(NULL, &s16a, &s32b, 0, &s32c), HMX_ERR_DTYPE, "does not take",
         "bf16 device tensor of strassen");
  hmx_tensor al16 = hmx_tensor_1d(fake_dev + 2048, HMX_BF16, 32);
  al16.memory = HMX_MEMORY_CUDA;
  hmx_tensor be32 = hmx_tensor_1d(fake_dev + 2112, HMX_F32, 32);
  be32.memory = HMX_MEMORY_CUDA;

  /* a chosen host-only backend is refused, never silently replaced */
  expect(hmx_fwht(&ref, &dx, &dy, 1.0f), HMX_ERR_UNSUPPORTED, "host memory only",
         "device tensors on ref");
  setenv("HMX_BACKEND", "ref", 1);
  expect(hmx_fwht(NULL, &dx, &dy, 1.0f), HMX_ERR_UNSUPPORTED, "host memory only",
         "device tensors with HMX_BACKEND=ref");
  unsetenv("HMX_BACKEND");

  /* with no backend chosen and no usable device backend: unavailable; a
   * bf16 alpha of hadamard_mix is placed (no dtype error) and stops there too
   * (with a GPU the fake addresses would reach the kernels: test_cuda_vectors
   * runs 16-bit alpha / beta on real device memory) */
  const hmx_backend *cuda = hmx_backend_find("cuda");
  if (!cuda || !hmx_backend_available(cuda)) {
    expect(hmx_fwht(NULL, &dx, &dy, 1.0f), HMX_ERR_BACKEND_UNAVAILABLE, "device memory",
           "device tensors without a GPU");
    expect(hmx_hadamard_mix(NULL, &dx, &al16, &be32, &dy), HMX_ERR_BACKEND_UNAVAILABLE,
           "device memory", "bf16 alpha, no GPU");
  }

  /* why the cuda backend cannot run, and what its probe found (hmx info) */
  if (cuda) {
    char text[4096];
    const int n = hmx_backend_describe(cuda, text, sizeof text);
    CHECK(n > 0 && (size_t)n == strlen(text), "describe: length %d for '%s'", n, text);
    CHECK(strstr(text, "compiled for:  sm_") == text, "describe: no build line in '%s'", text);
    const int avail = hmx_backend_available(cuda);
    const char *why = hmx_backend_unavailable_reason(cuda);
    CHECK(avail == (why[0] == '\0'), "available %d with reason '%s'", avail, why);
    if (avail) {
      CHECK(strstr(text, "(current: hadamix runs here)\n") && strstr(text, "available:     yes\n"),
            "describe on a usable GPU: '%s'", text);
    } else {
      char line[512];
      snprintf(line, sizeof line, "available:     no: %s\n", why);
      CHECK(strstr(text, line) != NULL, "describe lacks '%s': '%s'", line, text);
      hmx_context cc = {cuda, 1, 0, HMX_TIER_DEFAULT};
      expect(hmx_fwht(&cc, &h, &hy, 1.0f), HMX_ERR_BACKEND_UNAVAILABLE, why,
             "host fwht on an unavailable cuda backend");
      expect(hmx_fwht(NULL, &dx, &dy, 1.0f), HMX_ERR_BACKEND_UNAVAILABLE, why,
             "device tensors: the reason");
    }
    /* truncation keeps a terminated prefix */
    char small[16];
    memset(small, 'x', sizeof small);
    CHECK(hmx_backend_describe(cuda, small, sizeof small) == 15 && small[15] == '\0' &&
              strncmp(small, text, 15) == 0,
          "describe into 16 bytes: '%.16s'", small);
  }
  char none[8] = "zz";
  CHECK(hmx_backend_describe(ref.backend, none, sizeof none) == 0 && none[0] == '\0',
        "ref describes '%s'", none);
  CHECK(strcmp(hmx_backend_unavailable_reason(ref.backend), "") == 0, "ref has a reason");
  CHECK(strcmp(hmx_backend_unavailable_reason(NULL), "") == 0 &&
            hmx_backend_describe(NULL, none, sizeof none) == 0,
        "NULL backend");

  /* the stream setting is per thread and starts NULL */
  CHECK(hmx_get_cuda_stream() == NULL, "initial stream");
  hmx_set_cuda_stream(fake_dev);
  CHECK(hmx_get_cuda_stream() == (void *)fake_dev, "stream not kept");
  hmx_set_cuda_stream(NULL);
  return check_finish("test_cuda_api");
}
