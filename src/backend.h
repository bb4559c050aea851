/* The backend dispatch table.
 *
 * A backend is one static hmx_backend: a name, a probe that says whether this
 * machine can run it, and one kernel per operation. Kernels see validated,
 * contiguous, f32 buffers (the dispatcher in src/ops_*.c converts dtypes and
 * strides), so a backend only implements the arithmetic of docs/NUMERICS.md.
 * A NULL kernel means "not implemented": conformance lists it as missing.
 *
 * Adding a backend: a new folder with one file that defines its table, plus
 * one line in src/backend_registry.c.
 */
#ifndef HMX_BACKEND_H
#define HMX_BACKEND_H

#include "hadamix.h"
#include "gemm_quant.h" /* HMX_QLAYOUT_*: the weight layouts of gemm and swiglu */

typedef struct hmx_fwht_args {
  const float *x; float *y;   /* [batch, n]; y may equal x */
  int64_t batch, n;
  int m;                      /* resolved factor: n = m * 2^k, m in {1, 12, 20, 28, 40} */
  float scale;
  int threads;
} hmx_fwht_args;

typedef struct hmx_hadamard_mix_args {
  const float *x; const float *alpha; const float *beta; float *y; /* y may equal x */
  int64_t batch, n;
  int m;                      /* resolved factor, as for fwht */
  int threads;
} hmx_hadamard_mix_args;

/* 16-bit weights. A backend whose table sets HMX_W16_<OP> in `weights16`
 * also takes gemm's b, or swiglu's w1, w3, w2, as bf16 or f16 in place: the
 * args then have wdt = HMX_BF16 or HMX_F16, the f32 pointers NULL and the
 * *16 pointers set (contiguous, 2-byte aligned). The kernel converts each
 * element to f32 as it loads it (exact: every bf16 and f16 value is an f32)
 * and computes as for f32, so the bits are those of the staged f32 call.
 * Otherwise (wdt = HMX_F32) the dispatcher has converted them to f32. */
enum { HMX_W16_GEMM = 1u, HMX_W16_SWIGLU = 2u, HMX_WQ_GEMM = 4u, HMX_WG16_GEMM = 8u,
       HMX_WG16_SWIGLU = 16u, HMX_W16_ATTENTION = 32u, HMX_KB16_ATTENTION = 64u };
/* HMX_W16_ATTENTION: attention's k and v (a 16-bit KV cache) the same way:
 * kvdt = HMX_BF16 or HMX_F16, k and v NULL, k16 and v16 set. Same values,
 * so the same bits as the staged f32 call.
 * HMX_KB16_ATTENTION: attention's k (f32, or 16-bit with HMX_W16_ATTENTION)
 * in the KV cache's blocked layout (kblocks > 0; src/ops.c's
 * hmx_attention_kb16 is the only caller that sets it): key j, element e of
 * kv head g in batch b is element (((b * hkv + g) * kblocks + j / 16) * d +
 * e) * 16 + j % 16, so 16 consecutive keys of one element are adjacent (a
 * key tile's dots need no transpose). kblocks >= ceil(skv / 16) and a
 * multiple of 4: keys skv .. 16 * kblocks - 1 are readable memory of any
 * value, which the kernel may compute scores of but never uses. v is then
 * head-major: value j, element e of kv head g in batch b is element
 * ((b * hkv + g) * 16 * kblocks + j) * d + e of v (or v16), so a head's
 * values are one contiguous run. Same values, so the same bits as the
 * row-major call. */

/* Block-quantized weights, the same design one step further. A backend whose
 * table sets HMX_WQ_GEMM in `weights16` also takes gemm's b as GGUF blocks
 * in place (src/gemm_quant.c is the only caller that sets them): bq set,
 * qtype its ggml type (a block type hmx_gguf_can_dequantize takes),
 * trans_b = 1 ([N, K], blocks along K, the layout of every GGUF matrix), K a
 * whole number of blocks, b and b16 NULL, wdt = HMX_F32. The kernel decodes
 * each element to f32 in registers by exactly the rule of docs/NUMERICS.md
 * "GGUF dequantization" (hmx_gguf_quant_at is its scalar form) and computes
 * as for f32, so the bits are those of "dequantize, then the f32 gemm".
 * HMX_WG16_GEMM: the same for bq in the G16 layout (blayout =
 * HMX_QLAYOUT_G16, src/gemm_quant.h: rows in groups of 16, each element's 16
 * values adjacent) of Q8_0, Q4_0, Q4_1, F32, F16 and BF16, and the packed
 * form of the others (hmx_qlayout_g16_packed). The cuda backend decodes
 * either on the device into f32 scratch before its f32 kernel
 * (cuda/weights_in.cu), with the same rule and so the same bits.
 * HMX_WG16_SWIGLU: swiglu's w1, w3, w2 (f32, bf16 or f16, in the pointers
 * above) in the G16 layout of their transposes (wlayout = HMX_QLAYOUT_G16;
 * src/swiglu_quant.c is the only caller that sets it): w1 and w3 as the
 * [h, d] matrices W1^T, W3^T, so W1[p][u] is element
 * ((u / 16) * d + p) * 16 + u % 16; w2 as [d_out, h], W2[u][j] at
 * ((j / 16) * h + u) * 16 + j % 16; h and d_out multiples of 16. Same
 * values, so the same bits as the row-major call. */

typedef struct hmx_gemm_args {
  const float *a;    /* [M, K] */
  const float *b;    /* [K, N], or [N, K] when trans_b; NULL when wdt != HMX_F32 */
  const float *bias; /* [N] or NULL */
  float *c;          /* [M, N] */
  int64_t m, n, k;
  int trans_b;
  int threads;
  hmx_dtype wdt;       /* b's dtype: HMX_F32, or HMX_BF16 / HMX_F16 in b16 */
  const uint16_t *b16; /* b as 16-bit floats (HMX_W16_GEMM backends only) */
  const void *bq;      /* b as GGUF blocks (HMX_WQ_GEMM backends only), else NULL */
  uint32_t qtype;      /* bq's ggml type */
  int blayout;         /* bq's layout: HMX_QLAYOUT_ROWS (0) or HMX_QLAYOUT_G16 (1) */
  const void *bq_dev;  /* bq's bytes in GPU memory (hmx_qmatrix.dev), or NULL; set
                          only for a backend with device kernels (src/dispatch.h) */
} hmx_gemm_args;

typedef struct hmx_norm_args {
  const float *x; const float *weight; const float *bias; /* bias: layernorm only, may be NULL */
  float *y;        /* [rows, n]; y may equal x */
  int64_t rows, n;
  float eps;
  int threads;
} hmx_norm_args;

typedef struct hmx_rope_args {
  const float *x; float *y;    /* [T, H, D]; y may equal x */
  const float *cos_tab, *sin_tab; /* [T, rot_dim/2], from hmx_rope_table() */
  int64_t t, h, d;
  int rot_dim;
  hmx_rope_style style;
  int threads;
  /* device calls only: 1 when cos_tab and sin_tab are device memory too (a
   * forward pass on the GPU uploads its step's table once: a copy from
   * pageable host memory in every call would wait for the stream each
   * time); 0: host memory, which the backend copies */
  int tab_on_device;
} hmx_rope_args;

typedef struct hmx_attention_args {
  const float *q;  /* [B, Sq, Hq, D] */
  const float *k;  /* [B, Skv, Hkv, D] */
  const float *v;  /* [B, Skv, Hkv, D] */
  float *o;        /* [B, Sq, Hq, D] */
  int64_t b, sq, skv, hq, hkv, d;
  int causal;
  int64_t q_offset; /* resolved: >= 0, q_offset + sq <= skv when causal */
  float scale;      /* resolved */
  int threads;
  hmx_dtype kvdt;   /* HMX_F32, or HMX_BF16 / HMX_F16 with k16, v16 (HMX_W16_ATTENTION) */
  const uint16_t *k16, *v16;
  int64_t kblocks;  /* 0: k, v row-major [B, Skv, Hkv, D]; > 0: k blocked, v head-major
                       (HMX_KB16_ATTENTION) */
} hmx_attention_args;

typedef struct hmx_swiglu_args {
  const float *x;  /* [T, d] */
  const float *w1, *w3; /* [d, h]; NULL when wdt != HMX_F32 */
  const float *w2; /* [h, d_out]; NULL when wdt != HMX_F32 */
  float *y;        /* [T, d_out] */
  int64_t t, d, h, d_out;
  int64_t block;   /* resolved: 1 <= block <= h */
  int threads;
  hmx_dtype wdt;   /* the weights' dtype: HMX_F32, or HMX_BF16 / HMX_F16 in the *16 */
  const uint16_t *w1_16, *w3_16, *w2_16; /* HMX_W16_SWIGLU backends only */
  int wlayout;     /* HMX_QLAYOUT_ROWS (0): w1, w3 [d, h], w2 [h, d_out] row-major;
                      HMX_QLAYOUT_G16 (1): see HMX_WG16_SWIGLU */
  /* Set only for a backend with device kernels (src/dispatch.h), when all
   * three matrices are kept ones with GPU copies (hmx_qmatrix.dev, from
   * hmx_model_prepare): W1^T, W3^T [h, d] and W2^T [d_out, h], each of its
   * own ggml type and layout; the other weight fields are then NULL. */
  const hmx_qmatrix *wq1, *wq3, *wq2;
} hmx_swiglu_args;

typedef struct hmx_strassen_args {
  const float *a;  /* [M, K] */
  const float *b;  /* [K, N] */
  float *c;        /* [M, N] */
  int64_t m, n, k;
  int64_t cutoff;  /* resolved: >= 1; canonical gemm once min(M, K, N) <= cutoff */
  int threads;
} hmx_strassen_args;

/* mhffn: per-head SwiGLU. */
typedef struct hmx_mhffn_args {
  const float *x;      /* [T, d] */
  const float *w_in;   /* [d, H*dh] */
  const float *w1, *w3; /* [H, dh, f] */
  const float *w2;     /* [H, f, dh] */
  const float *w_out;  /* [H*dh, d_out] */
  float *y;            /* [T, d_out] */
  int64_t t, d, heads, dh, f, d_out;
  int threads;
} hmx_mhffn_args;

/* flashmhf: per head, E gated SwiGLU sub-networks of width de. */
typedef struct hmx_flashmhf_args {
  const float *x;      /* [T, d] */
  const float *w_in;   /* [d, H*dh] */
  const float *gate;   /* [H, dh, E] */
  const float *wk, *wu; /* [H, E, dh, de] */
  const float *wv;     /* [H, E, de, dh] */
  const float *w_out;  /* [H*dh, d_out] */
  float *y;            /* [T, d_out] */
  int64_t t, d, heads, dh, e, de, d_out;
  int64_t block;       /* resolved: 1 <= block <= de */
  int threads;
} hmx_flashmhf_args;

/* Sketched bidirectional attention (linformer, levattention, lewis, priority):
 * one struct for the four kernels; each reads the fields it needs. */
typedef struct hmx_sketch_args {
  const float *q;      /* [B, S, Hq, D] */
  const float *k, *v;  /* [B, N, Hkv, D] */
  const float *e, *f;  /* linformer: [kp, N] projections of keys and values; else NULL */
  float *o;            /* [B, S, Hq, D] */
  int32_t *idx;        /* selecting methods: [B, Hkv, kk] kept keys, increasing; else NULL */
  int64_t b, s, n, hq, hkv, d;
  int64_t kk;          /* keys kept (selecting) or projected length kp (linformer), 1..N */
  float scale;         /* resolved */
  double lambda;       /* levattention, lewis: damping, > 0 */
  int iters;           /* lewis: fixed-point iterations, >= 1 */
  uint64_t seed;       /* priority: seed of the counter RNG */
  int threads;
} hmx_sketch_args;

struct hmx_backend {
  const char *name;
  const char *description;
  int (*probe)(void); /* 1 if this machine can run it */
  /* optional: why probe says 0 (one line, "" when it says 1) */
  const char *(*unavailable_reason)(void);
  /* optional: what the backend found on this machine, for `hmx info` (lines
   * of "key: value"; returns the length written, snprintf-style, at most cap-1) */
  int (*describe)(char *buf, size_t cap);
  int priority;       /* higher wins for "best" */
  unsigned weights16; /* HMX_W16_* bits: ops that read 16-bit weights in place */
  hmx_status (*fwht)(const hmx_fwht_args *a);
  hmx_status (*hadamard_mix)(const hmx_hadamard_mix_args *a);
  hmx_status (*gemm)(const hmx_gemm_args *a);
  hmx_status (*rmsnorm)(const hmx_norm_args *a);
  hmx_status (*layernorm)(const hmx_norm_args *a);
  hmx_status (*rope)(const hmx_rope_args *a);
  hmx_status (*attention)(const hmx_attention_args *a);
  hmx_status (*swiglu)(const hmx_swiglu_args *a);
  /* issue 7: NULL in a backend that does not implement them yet */
  hmx_status (*strassen)(const hmx_strassen_args *a);
  hmx_status (*mhffn)(const hmx_mhffn_args *a);
  hmx_status (*flashmhf)(const hmx_flashmhf_args *a);
  hmx_status (*linformer)(const hmx_sketch_args *a);
  hmx_status (*levattention)(const hmx_sketch_args *a);
  hmx_status (*lewis)(const hmx_sketch_args *a);
  hmx_status (*priority_attn)(const hmx_sketch_args *a); /* op "priority" */
  /* optional: h[u] = (silu(a[u]) * b[u]) * w for u < n (§E SiLU, one lane =
   * hmx_siluf, then two rounded products in that order; h may be a), the
   * compositions' elementwise piece (src/compose.h). One thread a call:
   * src/swiglu_quant.c splits its g = silu(a) * b (w = 1, an exact product)
   * over threads; NULL: its scalar loop. */
  void (*gated_silu)(const float *a, const float *b, float w, float *h, int64_t n);
  /* optional: hmx_rope_table (canon.h) with the same checks, messages and
   * bits, on `threads` threads (0: the default): the SIMD mirror of the
   * angle table that hmx_rope builds on every call (in double, ~45 ns an
   * entry in scalar code, several times the rotation itself). NULL: the
   * scalar table (src/rope_table_pick.c). */
  hmx_status (*rope_table)(const int32_t *pos, int64_t t, int rot_dim, float base, float *cos_tab,
                           float *sin_tab, int threads);
};

/* The compiled-in backends, `ref` first (src/backend_registry.c). */
extern const hmx_backend *const hmx_backends[];
extern const int hmx_backends_count;

#endif
