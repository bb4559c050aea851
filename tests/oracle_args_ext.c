/* Argument validation of strassen, mhffn, flashmhf and the sketched
 * attentions through the public API (docs/ORACLE.md §arguments): each bad call
 * returns the documented status, leaves a non-empty hmx_last_error() and does
 * not write its output (a sentinel-filled buffer). */
#include "oracle_expect.h"
#include "backend.h"

int main(void) {
  hmx_context ctx = orc_ctx();
  static float in[8192];
  static int32_t ibuf[256];
  for (int i = 0; i < 8192; i++) in[i] = (float)(i % 7 - 3) * 0.125f;
  printf("bad calls (status, message):\n");

  /* strassen */
  hmx_tensor a = hmx_tensor_2d(in, HMX_F32, 6, 5), b = hmx_tensor_2d(in, HMX_F32, 5, 7);
  hmx_tensor c = hmx_tensor_2d(out_buf, HMX_F32, 6, 7), cb = hmx_tensor_2d(out_buf, HMX_F32, 7, 6);
  hmx_tensor bb = hmx_tensor_2d(in, HMX_F32, 4, 7);
  EXPECT(HMX_OK, hmx_strassen(&ctx, &a, &b, 2, &c));
  EXPECT(HMX_ERR_SHAPE, hmx_strassen(&ctx, &a, &bb, 2, &c));
  EXPECT(HMX_ERR_SHAPE, hmx_strassen(&ctx, &a, &b, 2, &cb));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_strassen(&ctx, &a, &b, -1, &c));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_strassen(&ctx, &a, &b, (int64_t)1 << 21, &c));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_strassen(&ctx, NULL, &b, 0, &c));

  /* mhffn: d 8, H 2, dh 4, f 3, d_out 5 */
  hmx_tensor x = hmx_tensor_2d(in, HMX_F32, 3, 8), win = hmx_tensor_2d(in, HMX_F32, 8, 8);
  hmx_tensor w1 = hmx_tensor_3d(in, HMX_F32, 2, 4, 3), w2 = hmx_tensor_3d(in, HMX_F32, 2, 3, 4);
  hmx_tensor wout = hmx_tensor_2d(in, HMX_F32, 8, 5), y = hmx_tensor_2d(out_buf, HMX_F32, 3, 5);
  hmx_tensor w1b = hmx_tensor_3d(in, HMX_F32, 2, 4, 2), winb = hmx_tensor_2d(in, HMX_F32, 8, 6);
  hmx_tensor w2b = hmx_tensor_3d(in, HMX_F32, 2, 4, 4), yb = hmx_tensor_2d(out_buf, HMX_F32, 2, 5);
  EXPECT(HMX_OK, hmx_mhffn(&ctx, &x, &win, &w1, &w1, &w2, &wout, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_mhffn(&ctx, &x, &win, &w1, &w1b, &w2, &wout, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_mhffn(&ctx, &x, &winb, &w1, &w1, &w2, &wout, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_mhffn(&ctx, &x, &win, &w1, &w1, &w2b, &wout, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_mhffn(&ctx, &x, &win, &w1, &w1, &w2, &wout, &yb));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_mhffn(&ctx, &x, &win, &w1, NULL, &w2, &wout, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_mhffn(&ctx, &x, &win, &wout, &w1, &w2, &wout, &y)); /* rank */

  /* flashmhf: H 2, dh 4, E 3, de 5 */
  hmx_tensor g = hmx_tensor_3d(in, HMX_F32, 2, 4, 3), g0 = hmx_tensor_3d(in, HMX_F32, 2, 4, 0);
  hmx_tensor wk = hmx_tensor_4d(in, HMX_F32, 2, 3, 4, 5), wv = hmx_tensor_4d(in, HMX_F32, 2, 3, 5, 4);
  hmx_tensor wvb = hmx_tensor_4d(in, HMX_F32, 2, 3, 4, 4);
  EXPECT(HMX_OK, hmx_flashmhf(&ctx, &x, &win, &g, &wk, &wk, &wv, &wout, 0, &y));
  EXPECT(HMX_OK, hmx_flashmhf(&ctx, &x, &win, &g, &wk, &wk, &wv, &wout, 1000, &y));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_flashmhf(&ctx, &x, &win, &g, &wk, &wk, &wv, &wout, -1, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_flashmhf(&ctx, &x, &win, &g, &wk, &wk, &wvb, &wout, 0, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_flashmhf(&ctx, &x, &win, &g0, &wk, &wk, &wv, &wout, 0, &y));
  EXPECT(HMX_ERR_SHAPE, hmx_flashmhf(&ctx, &x, &winb, &g, &wk, &wk, &wv, &wout, 0, &y));

  /* sketched attention: B 1, S 3, Hq 2, Hkv 1, N 10, D 4 */
  hmx_tensor q = hmx_tensor_4d(in, HMX_F32, 1, 3, 2, 4), k = hmx_tensor_4d(in, HMX_F32, 1, 10, 1, 4);
  hmx_tensor o = hmx_tensor_4d(out_buf, HMX_F32, 1, 3, 2, 4);
  hmx_tensor k3 = hmx_tensor_4d(in, HMX_F32, 1, 10, 3, 4), k0 = hmx_tensor_4d(in, HMX_F32, 1, 0, 1, 4);
  hmx_tensor e = hmx_tensor_2d(in, HMX_F32, 4, 10), eb = hmx_tensor_2d(in, HMX_F32, 4, 9);
  hmx_tensor fb = hmx_tensor_2d(in, HMX_F32, 3, 10);
  EXPECT(HMX_OK, hmx_linformer(&ctx, &q, &k, &k, &e, &e, 0.0f, &o));
  EXPECT(HMX_OK, hmx_linformer(&ctx, &q, &k, &k, &e, &e, NAN, &o)); /* NaN: the default */
  EXPECT(HMX_ERR_SHAPE, hmx_linformer(&ctx, &q, &k, &k, &eb, &e, 0.0f, &o));
  EXPECT(HMX_ERR_SHAPE, hmx_linformer(&ctx, &q, &k, &k, &e, &fb, 0.0f, &o));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_linformer(&ctx, &q, &k, &k, NULL, &e, 0.0f, &o));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_linformer(&ctx, &q, &k, &k, &e, &e, INFINITY, &o));

  hmx_sketch_params p = {4, 0.0f, 1e-3f, 2, 9};
  hmx_tensor idx = hmx_tensor_3d(ibuf, HMX_I32, 1, 1, 4), idxb = hmx_tensor_3d(ibuf, HMX_I32, 1, 1, 5);
  hmx_tensor idxf = hmx_tensor_3d(ibuf, HMX_F32, 1, 1, 4);
  EXPECT(HMX_OK, hmx_levattention(&ctx, &q, &k, &k, &p, &o, &idx));
  EXPECT(HMX_OK, hmx_lewis(&ctx, &q, &k, &k, &p, &o, &idx));
  EXPECT(HMX_OK, hmx_priority(&ctx, &q, &k, &k, &p, &o, NULL));
  EXPECT(HMX_ERR_SHAPE, hmx_levattention(&ctx, &q, &k, &k, &p, &o, &idxb));
  EXPECT(HMX_ERR_DTYPE, hmx_levattention(&ctx, &q, &k, &k, &p, &o, &idxf));
  EXPECT(HMX_ERR_SHAPE, hmx_levattention(&ctx, &q, &k3, &k3, &p, &o, NULL)); /* 2 % 3 */
  EXPECT(HMX_ERR_SHAPE, hmx_priority(&ctx, &q, &k0, &k0, &p, &o, NULL));    /* N = 0 */
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_levattention(&ctx, &q, &k, &k, NULL, &o, NULL));
  hmx_sketch_params bad = p;
  bad.k = 0;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_levattention(&ctx, &q, &k, &k, &bad, &o, NULL));
  bad.k = 11;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_priority(&ctx, &q, &k, &k, &bad, &o, NULL));
  bad = p;
  bad.lambda = 0.0f;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_levattention(&ctx, &q, &k, &k, &bad, &o, NULL));
  bad.lambda = NAN;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_lewis(&ctx, &q, &k, &k, &bad, &o, NULL));
  bad = p;
  bad.iters = 0;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_lewis(&ctx, &q, &k, &k, &bad, &o, NULL));
  bad = p;
  bad.scale = INFINITY;
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_priority(&ctx, &q, &k, &k, &bad, &o, NULL));

  /* a backend that lacks the kernel, without fallback: not implemented.
   * Every compiled SIMD backend implements strassen since issue 7, so the
   * backend is ref's table with strassen removed (as test_dispatch does). */
  hmx_backend partial = *hmx_backend_find("ref");
  partial.name = "partial";
  partial.strassen = NULL;
  {
    hmx_context c2 = {&partial, 1, 0, HMX_TIER_DEFAULT};
    EXPECT(HMX_ERR_NOT_IMPLEMENTED, hmx_strassen(&c2, &a, &b, 2, &c));
    hmx_context c3 = {&partial, 1, 1, HMX_TIER_DEFAULT}; /* with fallback it runs (on ref) */
    EXPECT(HMX_OK, hmx_strassen(&c3, &a, &b, 2, &c));
  }
  printf("%d calls\n", n_cases);
  return check_finish("test_oracle_args_ext");
}
