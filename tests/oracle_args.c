/* Argument validation through the public API (docs/ORACLE.md §arguments):
 * each bad call returns the documented non-OK status, leaves a non-empty
 * hmx_last_error() and does not write its output. */
#include "oracle_expect.h"

int main(void) {
  hmx_context ctx = orc_ctx();
  static float in[4096], w[4096], b[4096];
  for (int i = 0; i < 4096; i++) {
    in[i] = (float)(i % 7) - 3.0f;
    w[i] = 1.0f;
    b[i] = 0.0f;
  }
  printf("bad calls (status, message):\n");

  /* fwht */
  /* 24 = 12 * 2 is a valid size; 60 = 12 * 5 = 20 * 3 is not. */
  hmx_tensor x24 = hmx_tensor_2d(in, HMX_F32, 2, 24), y24 = hmx_tensor_2d(out_buf, HMX_F32, 2, 24);
  EXPECT(HMX_OK, hmx_fwht(&ctx, &x24, &y24, 1.0f));
  hmx_tensor x60 = hmx_tensor_2d(in, HMX_F32, 2, 60), y60 = hmx_tensor_2d(out_buf, HMX_F32, 2, 60);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_fwht(&ctx, &x60, &y60, 1.0f));
  hmx_tensor x3 = hmx_tensor_2d(in, HMX_F32, 1, 3), y3 = hmx_tensor_2d(out_buf, HMX_F32, 1, 3);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_fwht(&ctx, &x3, &y3, 1.0f));
  hmx_tensor x36 = hmx_tensor_2d(in, HMX_F32, 1, 36), y36 = hmx_tensor_2d(out_buf, HMX_F32, 1, 36);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_fwht(&ctx, &x36, &y36, 1.0f));
  hmx_tensor x0 = hmx_tensor_2d(in, HMX_F32, 1, 0), y0 = hmx_tensor_2d(out_buf, HMX_F32, 1, 0);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_fwht(&ctx, &x0, &y0, 1.0f));
  {
    /* 2^21 > 2^20: real buffers, so that a missing check could not overrun. */
    float *big_in = orc_alloc((size_t)1 << 21, sizeof *big_in);
    float *big_out = orc_alloc((size_t)1 << 21, sizeof *big_out);
    hmx_tensor xbig = hmx_tensor_2d(big_in, HMX_F32, 1, (int64_t)1 << 21);
    hmx_tensor ybig = hmx_tensor_2d(big_out, HMX_F32, 1, (int64_t)1 << 21);
    hmx_status s = hmx_fwht(&ctx, &xbig, &ybig, 1.0f);
    CHECK(s == HMX_ERR_UNSUPPORTED && hmx_last_error()[0], "fwht n = 2^21: %s",
          hmx_status_string(s));
    printf("  %-24s %-18s \"%s\"\n", "HMX_ERR_UNSUPPORTED", "", hmx_last_error());
    free(big_in);
    free(big_out);
  }
  hmx_tensor x16 = hmx_tensor_2d(in, HMX_F32, 2, 16), y16 = hmx_tensor_2d(out_buf, HMX_F32, 2, 16);
  hmx_tensor y8 = hmx_tensor_2d(out_buf, HMX_F32, 2, 8);
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&ctx, NULL, &y16, 1.0f));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&ctx, &x16, NULL, 1.0f));
  EXPECT(HMX_ERR_SHAPE, hmx_fwht(&ctx, &x16, &y8, 1.0f));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&ctx, &x16, &y16, NAN));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&ctx, &x16, &y16, INFINITY));
  hmx_tensor x16n = hmx_tensor_2d(NULL, HMX_F32, 2, 16);
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&ctx, &x16n, &y16, 1.0f));
  hmx_tensor x16i = hmx_tensor_2d(in, HMX_I32, 2, 16);
  EXPECT(HMX_ERR_DTYPE, hmx_fwht(&ctx, &x16i, &y16, 1.0f));
  hmx_tensor x1d = hmx_tensor_1d(in, HMX_F32, 16);
  EXPECT(HMX_ERR_SHAPE, hmx_fwht(&ctx, &x1d, &y16, 1.0f));
  {
    hmx_tensor part = hmx_tensor_2d(out_buf + 3, HMX_F32, 2, 16); /* overlaps, not identical */
    hmx_tensor src = hmx_tensor_2d(out_buf, HMX_F32, 2, 16);
    hmx_status s = hmx_fwht(&ctx, &src, &part, 1.0f);
    CHECK(s == HMX_ERR_INVALID_ARGUMENT && hmx_last_error()[0],
          "fwht with a partially overlapping output: %s", hmx_status_string(s));
    printf("  %-24s %-18s \"%s\"\n", "HMX_ERR_INVALID_ARGUMENT", "", hmx_last_error());
  }
  hmx_tensor x80 = hmx_tensor_2d(in, HMX_F32, 1, 80), y80 = hmx_tensor_2d(out_buf, HMX_F32, 1, 80);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_fwht_factor(&ctx, &x80, &y80, 1.0f, 12)); /* 80 != 12 * 2^k */
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht_factor(&ctx, &x80, &y80, 1.0f, 36));
  EXPECT(HMX_OK, hmx_fwht_factor(&ctx, &x80, &y80, 1.0f, 40));

  /* hadamard_mix */
  hmx_tensor a16 = hmx_tensor_1d(w, HMX_F32, 16), a15 = hmx_tensor_1d(w, HMX_F32, 15);
  hmx_tensor b16 = hmx_tensor_1d(b, HMX_F32, 16);
  EXPECT(HMX_ERR_SHAPE, hmx_hadamard_mix(&ctx, &x16, &a15, &b16, &y16));
  EXPECT(HMX_ERR_SHAPE, hmx_hadamard_mix(&ctx, &x16, &a16, &a15, &y16));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_hadamard_mix(&ctx, &x16, NULL, &b16, &y16));
  hmx_tensor a60 = hmx_tensor_1d(w, HMX_F32, 60), b60 = hmx_tensor_1d(b, HMX_F32, 60);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_hadamard_mix(&ctx, &x60, &a60, &b60, &y60));

  /* gemm */
  hmx_tensor ga = hmx_tensor_2d(in, HMX_F32, 3, 5), gb = hmx_tensor_2d(w, HMX_F32, 5, 4);
  hmx_tensor gbt = hmx_tensor_2d(w, HMX_F32, 4, 5), gc = hmx_tensor_2d(out_buf, HMX_F32, 3, 4);
  hmx_tensor gbad = hmx_tensor_2d(w, HMX_F32, 6, 4), gc_bad = hmx_tensor_2d(out_buf, HMX_F32, 4, 4);
  hmx_tensor bias3 = hmx_tensor_1d(b, HMX_F32, 3);
  EXPECT(HMX_OK, hmx_gemm(&ctx, &ga, &gb, 0, NULL, &gc));
  EXPECT(HMX_OK, hmx_gemm(&ctx, &ga, &gbt, 1, NULL, &gc));
  EXPECT(HMX_ERR_SHAPE, hmx_gemm(&ctx, &ga, &gbad, 0, NULL, &gc));
  EXPECT(HMX_ERR_SHAPE, hmx_gemm(&ctx, &ga, &gb, 1, NULL, &gc)); /* [5,4] as [N,K] needs K = 4 */
  EXPECT(HMX_ERR_SHAPE, hmx_gemm(&ctx, &ga, &gb, 0, NULL, &gc_bad));
  EXPECT(HMX_ERR_SHAPE, hmx_gemm(&ctx, &ga, &gb, 0, &bias3, &gc));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_gemm(&ctx, &ga, &gb, 2, NULL, &gc));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_gemm(&ctx, &ga, NULL, 0, NULL, &gc));
  {
    hmx_tensor alias = hmx_tensor_2d(in, HMX_F32, 3, 4); /* c overlaps a */
    hmx_status s = hmx_gemm(&ctx, &ga, &gb, 0, NULL, &alias);
    CHECK(s == HMX_ERR_INVALID_ARGUMENT && hmx_last_error()[0], "gemm with c overlapping a: %s",
          hmx_status_string(s));
    printf("  %-24s %-18s \"%s\"\n", "HMX_ERR_INVALID_ARGUMENT", "", hmx_last_error());
  }

  /* norms */
  hmx_tensor nx = hmx_tensor_2d(in, HMX_F32, 2, 8), ny = hmx_tensor_2d(out_buf, HMX_F32, 2, 8);
  hmx_tensor nw = hmx_tensor_1d(w, HMX_F32, 8), nw7 = hmx_tensor_1d(w, HMX_F32, 7);
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rmsnorm(&ctx, &nx, &nw, -1e-5f, &ny));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rmsnorm(&ctx, &nx, &nw, NAN, &ny));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_layernorm(&ctx, &nx, &nw, NULL, -1.0f, &ny));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_layernorm(&ctx, &nx, &nw, NULL, INFINITY, &ny));
  EXPECT(HMX_ERR_SHAPE, hmx_rmsnorm(&ctx, &nx, &nw7, 1e-5f, &ny));
  EXPECT(HMX_ERR_SHAPE, hmx_layernorm(&ctx, &nx, &nw, &nw7, 1e-5f, &ny));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rmsnorm(&ctx, &nx, NULL, 1e-5f, &ny));
  hmx_tensor nx0 = hmx_tensor_2d(in, HMX_F32, 2, 0), ny0 = hmx_tensor_2d(out_buf, HMX_F32, 2, 0);
  hmx_tensor nw0 = hmx_tensor_1d(w, HMX_F32, 0);
  EXPECT(HMX_ERR_UNSUPPORTED, hmx_rmsnorm(&ctx, &nx0, &nw0, 1e-5f, &ny0));

  /* rope */
  int32_t pos[2] = {0, 5}, badpos[2] = {0, -1}, bigpos[2] = {0, 1 << 24};
  hmx_tensor rx = hmx_tensor_3d(in, HMX_F32, 2, 2, 8), ry = hmx_tensor_3d(out_buf, HMX_F32, 2, 2, 8);
  hmx_tensor rp = hmx_tensor_1d(pos, HMX_I32, 2), rpf = hmx_tensor_1d(w, HMX_F32, 2);
  hmx_tensor rp3 = hmx_tensor_1d(pos, HMX_I32, 1);
  hmx_tensor rneg = hmx_tensor_1d(badpos, HMX_I32, 2), rbig = hmx_tensor_1d(bigpos, HMX_I32, 2);
  EXPECT(HMX_OK, hmx_rope(&ctx, &rx, &rp, 10000.0f, 8, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, 10000.0f, 7, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, 10000.0f, 10, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, 10000.0f, 0, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, 1.0f, 8, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, NAN, 8, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_rope(&ctx, &rx, &rp, 10000.0f, 8, (hmx_rope_style)2, &ry));
  EXPECT(HMX_ERR_DTYPE, hmx_rope(&ctx, &rx, &rpf, 10000.0f, 8, HMX_ROPE_HALF, &ry));
  EXPECT(HMX_ERR_SHAPE, hmx_rope(&ctx, &rx, &rp3, 10000.0f, 8, HMX_ROPE_HALF, &ry));
  {
    /* Positions outside 0 .. 2^24 - 1 (header): some non-OK status with a message. */
    static const char *const what[2] = {"position -1", "position 2^24"};
    hmx_tensor *bad[2] = {&rneg, &rbig};
    for (int i = 0; i < 2; i++) {
      arm();
      hmx_status s = hmx_rope(&ctx, &rx, bad[i], 10000.0f, 8, HMX_ROPE_HALF, &ry);
      CHECK(s != HMX_OK, "rope with %s accepted", what[i]);
      CHECK(s == HMX_OK || hmx_last_error()[0] != '\0', "rope with %s: %s and an empty message",
            what[i], hmx_status_string(s));
      CHECK(s == HMX_OK || untouched(), "rope with %s: output written by a failing call", what[i]);
      printf("  %-24s %-18s \"%s\"\n", hmx_status_string(s), what[i], hmx_last_error());
    }
  }

  /* attention */
  hmx_tensor q = hmx_tensor_4d(in, HMX_F32, 1, 4, 2, 8), o = hmx_tensor_4d(out_buf, HMX_F32, 1, 4, 2, 8);
  hmx_tensor k3 = hmx_tensor_4d(w, HMX_F32, 1, 3, 1, 8), k4 = hmx_tensor_4d(w, HMX_F32, 1, 4, 1, 8);
  hmx_tensor k4d = hmx_tensor_4d(w, HMX_F32, 1, 4, 1, 4), k4h = hmx_tensor_4d(w, HMX_F32, 1, 4, 3, 8);
  hmx_tensor k0 = hmx_tensor_4d(w, HMX_F32, 1, 0, 1, 8);
  hmx_attention_params causal = {1, -1, 0.0f}, full = {0, 0, 0.0f}, off = {1, 2, 0.0f};
  hmx_attention_params bad_causal = {2, 0, 0.0f}, inf_scale = {0, 0, INFINITY};
  EXPECT(HMX_OK, hmx_attention(&ctx, &q, &k4, &k4, &causal, &o));
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k3, &k3, &causal, &o)); /* causal, Skv < Sq */
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k4, &k4, &off, &o));    /* 2 + 4 > Skv */
  EXPECT(HMX_OK, hmx_attention(&ctx, &q, &k3, &k3, &full, &o));          /* fine non-causal */
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k4d, &k4d, &full, &o)); /* head dim */
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k4h, &k4h, &full, &o)); /* 2 % 3 != 0 */
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k4, &k3, &full, &o));   /* v != k */
  EXPECT(HMX_ERR_SHAPE, hmx_attention(&ctx, &q, &k0, &k0, &full, &o));   /* no keys */
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_attention(&ctx, &q, &k4, &k4, NULL, &o));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_attention(&ctx, &q, &k4, &k4, &bad_causal, &o));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_attention(&ctx, &q, &k4, &k4, &inf_scale, &o));

  /* swiglu */
  hmx_tensor sx = hmx_tensor_2d(in, HMX_F32, 2, 4), s1 = hmx_tensor_2d(w, HMX_F32, 4, 6);
  hmx_tensor s1b = hmx_tensor_2d(w, HMX_F32, 5, 6), s3b = hmx_tensor_2d(w, HMX_F32, 4, 5);
  hmx_tensor s2 = hmx_tensor_2d(b, HMX_F32, 6, 3), s2b = hmx_tensor_2d(b, HMX_F32, 5, 3);
  hmx_tensor sy = hmx_tensor_2d(out_buf, HMX_F32, 2, 3), syb = hmx_tensor_2d(out_buf, HMX_F32, 2, 4);
  EXPECT(HMX_OK, hmx_swiglu(&ctx, &sx, &s1, &s1, &s2, 0, &sy));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_swiglu(&ctx, &sx, &s1, &s1, &s2, -1, &sy));
  EXPECT(HMX_ERR_SHAPE, hmx_swiglu(&ctx, &sx, &s1b, &s1, &s2, 0, &sy));
  EXPECT(HMX_ERR_SHAPE, hmx_swiglu(&ctx, &sx, &s1, &s3b, &s2, 0, &sy));
  EXPECT(HMX_ERR_SHAPE, hmx_swiglu(&ctx, &sx, &s1, &s1, &s2b, 0, &sy));
  EXPECT(HMX_ERR_SHAPE, hmx_swiglu(&ctx, &sx, &s1, &s1, &s2, 0, &syb));
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_swiglu(&ctx, &sx, &s1, NULL, &s2, 0, &sy));

  /* context */
  hmx_context bad_threads = {hmx_backend_find("ref"), -1, 0, HMX_TIER_DEFAULT};
  EXPECT(HMX_ERR_INVALID_ARGUMENT, hmx_fwht(&bad_threads, &x16, &y16, 1.0f));
  CHECK(hmx_backend_find("no-such-backend") == NULL, "unknown backend name found");

  /* A successful call after a failure. */
  EXPECT(HMX_OK, hmx_fwht(&ctx, &x16, &y16, 1.0f));
  printf("  %d calls checked\n", n_cases);
  return check_finish("test_oracle_args");
}
