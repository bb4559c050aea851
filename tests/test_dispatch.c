/* The dispatch layer: backend selection (HMX_BACKEND, availability, missing
 * kernels and ref fallback), staging of strided/unaligned/bf16 tensors, and
 * the aliasing rules. Results are compared with memcmp against plain f32 calls. */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"
#include "check.h"
#include "opspec.h"

#include <stdlib.h>
#include <string.h>

static hmx_context ref_ctx(void) {
  hmx_context c = {hmx_backend_find("ref"), 1, 0, HMX_TIER_DEFAULT};
  return c;
}

static void fill(float *x, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) * 0x1p-23f - 1.0f;
  }
}

static int probe_no(void) { return 0; }
static int probe_yes(void) { return 1; }

static void test_backend_selection(void) {
  CHECK(hmx_backend_count() >= 1, "no backends");
  CHECK(strcmp(hmx_backend_name(hmx_backend_at(0)), "ref") == 0, "ref must be first");
  CHECK(hmx_backend_find("no-such") == NULL, "unknown name found");
  CHECK(hmx_backend_find("best") == hmx_backend_best(), "best");
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, 1, 8), ty = hmx_tensor_2d(y, HMX_F32, 1, 8);

  setenv("HMX_BACKEND", "bogus", 1);
  CHECK(hmx_backend_default() == NULL, "bogus HMX_BACKEND accepted");
  hmx_status s = hmx_fwht(NULL, &tx, &ty, 1.0f);
  CHECK(s == HMX_ERR_NOT_FOUND, "NULL ctx with bogus HMX_BACKEND: %s", hmx_status_string(s));
  CHECK(strstr(hmx_last_error(), "bogus") != NULL, "message: %s", hmx_last_error());
  setenv("HMX_BACKEND", "ref", 1);
  CHECK(hmx_backend_default() == hmx_backend_find("ref"), "HMX_BACKEND=ref");
  CHECK(hmx_fwht(NULL, &tx, &ty, 1.0f) == HMX_OK, "HMX_BACKEND=ref run: %s", hmx_last_error());
  unsetenv("HMX_BACKEND");
  CHECK(hmx_backend_default() == hmx_backend_best(), "default is best");

  /* every backend that cannot run here says why (hmx info, HMX_BACKEND errors) */
  for (int i = 0; i < hmx_backend_count(); i++) {
    const hmx_backend *b = hmx_backend_at(i);
    CHECK(hmx_backend_available(b) || hmx_backend_unavailable_reason(b)[0] != '\0',
          "backend %s is unavailable and gives no reason", hmx_backend_name(b));
    CHECK(!hmx_backend_available(b) || hmx_backend_unavailable_reason(b)[0] == '\0',
          "backend %s is available but gives a reason", hmx_backend_name(b));
  }

  /* a backend this machine cannot run */
  hmx_backend off = *hmx_backend_find("ref");
  off.name = "off";
  off.probe = probe_no;
  hmx_context c = {&off, 1, 1, HMX_TIER_DEFAULT};
  s = hmx_fwht(&c, &tx, &ty, 1.0f);
  CHECK(s == HMX_ERR_BACKEND_UNAVAILABLE, "unavailable backend ran: %s", hmx_status_string(s));

  /* a backend without an fwht kernel: missing, or ref when fallback is allowed */
  hmx_backend partial = *hmx_backend_find("ref");
  partial.name = "partial";
  partial.probe = probe_yes;
  partial.fwht = NULL;
  CHECK(!hmx_op_implemented(hmx_op_find("fwht"), &partial), "fwht reported implemented");
  CHECK(hmx_op_implemented(hmx_op_find("gemm"), &partial), "gemm reported missing");
  hmx_context strict = {&partial, 1, 0, HMX_TIER_DEFAULT}, lenient = {&partial, 1, 1, HMX_TIER_DEFAULT};
  s = hmx_fwht(&strict, &tx, &ty, 1.0f);
  CHECK(s == HMX_ERR_NOT_IMPLEMENTED, "missing kernel ran: %s", hmx_status_string(s));
  float y_ref[8];
  hmx_tensor tr = hmx_tensor_2d(y_ref, HMX_F32, 1, 8);
  hmx_context rc = ref_ctx();
  CHECK(hmx_fwht(&rc, &tx, &tr, 0.5f) == HMX_OK, "ref");
  CHECK(hmx_fwht(&lenient, &tx, &ty, 0.5f) == HMX_OK, "fallback: %s", hmx_last_error());
  CHECK(memcmp(y, y_ref, sizeof y) == 0, "fallback differs from ref");

  hmx_context neg = {hmx_backend_find("ref"), -1, 0, HMX_TIER_DEFAULT};
  CHECK(hmx_fwht(&neg, &tx, &ty, 1.0f) == HMX_ERR_INVALID_ARGUMENT, "threads < 0 accepted");
}

/* Strided, unaligned and bf16 views must give the bits of the plain call. */
static void test_staging(void) {
  enum { R = 5, N = 64 };
  hmx_context c = ref_ctx();
  float x[R * N], y[R * N], w[N], y2[R * N];
  fill(x, R * N, 1);
  fill(w, N, 2);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, R, N), ty = hmx_tensor_2d(y, HMX_F32, R, N);
  hmx_tensor tw = hmx_tensor_1d(w, HMX_F32, N);
  CHECK(hmx_rmsnorm(&c, &tx, &tw, 1e-6f, &ty) == HMX_OK, "rmsnorm: %s", hmx_last_error());

  /* transposed storage: xt[j][i] = x[i][j], viewed with strides {1, R} */
  float xt[N * R];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < N; j++) xt[j * R + i] = x[i * N + j];
  hmx_tensor sx = hmx_tensor_2d(xt, HMX_F32, R, N);
  sx.stride[0] = 1;
  sx.stride[1] = R;
  hmx_tensor ty2 = hmx_tensor_2d(y2, HMX_F32, R, N);
  CHECK(hmx_rmsnorm(&c, &sx, &tw, 1e-6f, &ty2) == HMX_OK, "strided: %s", hmx_last_error());
  CHECK(memcmp(y, y2, sizeof y) == 0, "strided input changed the result");

  /* strided output: write every other element of a wider buffer */
  float wide[R * N * 2];
  memset(wide, 0, sizeof wide);
  hmx_tensor sy = hmx_tensor_2d(wide, HMX_F32, R, N);
  sy.stride[0] = 2 * N;
  sy.stride[1] = 2;
  CHECK(hmx_rmsnorm(&c, &tx, &tw, 1e-6f, &sy) == HMX_OK, "strided out: %s", hmx_last_error());
  int ok = 1;
  for (int i = 0; i < R * N; i++) ok &= memcmp(&wide[2 * i], &y[i], 4) == 0 && wide[2 * i + 1] == 0;
  CHECK(ok, "strided output wrong or wrote between elements");

  /* unaligned f32 data */
  unsigned char *raw = malloc(sizeof x + 1);
  memcpy(raw + 1, x, sizeof x);
  hmx_tensor ux = hmx_tensor_2d(raw + 1, HMX_F32, R, N);
  CHECK(hmx_rmsnorm(&c, &ux, &tw, 1e-6f, &ty2) == HMX_OK, "unaligned: %s", hmx_last_error());
  CHECK(memcmp(y, y2, sizeof y) == 0, "unaligned input changed the result");
  free(raw);

  /* bf16 output = the f32 result rounded once */
  uint16_t yb[R * N];
  hmx_tensor tyb = hmx_tensor_2d(yb, HMX_BF16, R, N);
  CHECK(hmx_rmsnorm(&c, &tx, &tw, 1e-6f, &tyb) == HMX_OK, "bf16 out: %s", hmx_last_error());
  ok = 1;
  for (int i = 0; i < R * N; i++) ok &= yb[i] == hmx_f32_to_bf16(y[i]);
  CHECK(ok, "bf16 output is not the rounded f32 result");

  /* f16 input = the widened values */
  uint16_t xh[R * N];
  float xw[R * N];
  for (int i = 0; i < R * N; i++) {
    xh[i] = hmx_f32_to_f16(x[i]);
    xw[i] = hmx_f16_to_f32(xh[i]);
  }
  hmx_tensor txh = hmx_tensor_2d(xh, HMX_F16, R, N), txw = hmx_tensor_2d(xw, HMX_F32, R, N);
  CHECK(hmx_rmsnorm(&c, &txw, &tw, 1e-6f, &ty) == HMX_OK, "f32 of f16");
  CHECK(hmx_rmsnorm(&c, &txh, &tw, 1e-6f, &ty2) == HMX_OK, "f16 in: %s", hmx_last_error());
  CHECK(memcmp(y, y2, sizeof y) == 0, "f16 input differs from its widened f32");
}

static void test_aliasing(void) {
  enum { N = 256 };
  hmx_context c = ref_ctx();
  float x[2 * N], y[2 * N], buf[2 * N + 1];
  fill(x, 2 * N, 3);
  hmx_tensor tx = hmx_tensor_2d(x, HMX_F32, 2, N), ty = hmx_tensor_2d(y, HMX_F32, 2, N);
  CHECK(hmx_fwht(&c, &tx, &ty, 0.0625f) == HMX_OK, "fwht");
  /* in place: the identical view is allowed and gives the same bits */
  memcpy(buf, x, sizeof x);
  hmx_tensor tb = hmx_tensor_2d(buf, HMX_F32, 2, N);
  CHECK(hmx_fwht(&c, &tb, &tb, 0.0625f) == HMX_OK, "in place: %s", hmx_last_error());
  CHECK(memcmp(buf, y, sizeof y) == 0, "in-place fwht differs");
  /* a shifted overlap is rejected */
  hmx_tensor shifted = hmx_tensor_2d(buf + 1, HMX_F32, 2, N);
  CHECK(hmx_fwht(&c, &tb, &shifted, 1.0f) == HMX_ERR_INVALID_ARGUMENT, "partial overlap accepted");
  /* gemm output may not overlap its inputs at all */
  float a[4 * 4], out[4 * 4];
  fill(a, 16, 4);
  hmx_tensor ta = hmx_tensor_2d(a, HMX_F32, 4, 4), to = hmx_tensor_2d(out, HMX_F32, 4, 4);
  CHECK(hmx_gemm(&c, &ta, &ta, 0, NULL, &to) == HMX_OK, "gemm a*a");
  CHECK(hmx_gemm(&c, &ta, &ta, 0, NULL, &ta) == HMX_ERR_INVALID_ARGUMENT, "gemm c == a accepted");
  CHECK(hmx_last_error()[0] != '\0', "no message");
}

int main(void) {
  test_backend_selection();
  test_staging();
  test_aliasing();
  return check_finish("test_dispatch");
}
