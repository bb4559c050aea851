/* avx2 fwht and hadamard_mix (docs/NUMERICS.md §fwht, §hadamard_mix): the
 * primitives for 8 lanes; the algorithm is simd/x86/fwht_x86.h. */
#include <immintrin.h>

#include "avx2_fwht.h"

#define HX_W 8
#define HX_LOG2W 3
/* Tuning, measured on the AMD EPYC (Zen 4) dev machine; each may be
 * overridden with -D for experiments (none changes a bit of the results). */
#ifndef HX_CHUNK_LOG2
#define HX_CHUNK_LOG2 3 /* 8 ymm = 64 floats: strides 1 .. 32 in registers */
#endif
#ifndef HX_RADIX_LOG2
#define HX_RADIX_LOG2 3 /* 3 stages per pass over memory */
#endif
#ifndef HX_PF_AHEAD_ROWS
#define HX_PF_AHEAD_ROWS 1 /* prefetch ahead before rows of several passes too (fwht_x86.h) */
#endif
#ifndef HX_L1_LOG2
#define HX_L1_LOG2 12 /* 16 KiB blocks: L1 resident */
#endif
#ifndef HX_BLOCK_LOG2
#define HX_BLOCK_LOG2 15 /* 128 KiB blocks: L2 resident */
#endif
#ifndef HX_STREAM_BYTES
#define HX_STREAM_BYTES ((int64_t)32 << 20) /* output >= 32 MiB: streamed */
#endif
#ifndef HX_STREAM_MAX_N
#define HX_STREAM_MAX_N 4096
#endif
#ifndef HX_STREAM_MPOINT
#define HX_STREAM_MPOINT 0
#endif
#ifndef HX_MPOINT_MAXG
#define HX_MPOINT_MAXG 12 /* m-point accumulators in registers (16 ymm) */
#endif
#ifndef HX_MULTI_LOG2
#define HX_MULTI_LOG2 3 /* hx_chunk_multi: at most 8 ymm per iteration */
#endif
/* m > 1 rows whose blocks are two chunks (1536 = 12 x 128): the blocks'
 * last stage in the m-point pass instead of a pass of its own (Xeon, one
 * thread, interleaved A/B: 1536 in L2 16.7 -> 21.8 GB/s, from memory 7.1 ->
 * 11.4 and 10.5 -> 17.9; avx512's 12288 ... 40960, whose blocks are two
 * 32-register chunks, measured 7-25% slower that way than with their
 * 16-register chunks and a two-stage pass, so avx512 keeps those). */
#ifndef HX_FUSE_LAST
#define HX_FUSE_LAST 1
#endif
#ifndef HX_FWHT_FN
#define HX_FWHT_FN hmx_avx2_fwht
#endif
#ifndef HX_MIX_FN
#define HX_MIX_FN hmx_avx2_hadamard_mix
#endif

typedef __m256 hx_v;
static inline hx_v hx_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void hx_store(float *p, hx_v v) { _mm256_storeu_ps(p, v); }
static inline hx_v hx_add(hx_v a, hx_v b) { return _mm256_add_ps(a, b); }
static inline hx_v hx_sub(hx_v a, hx_v b) { return _mm256_sub_ps(a, b); }
static inline hx_v hx_mul(hx_v a, hx_v b) { return _mm256_mul_ps(a, b); }
static inline hx_v hx_fma(hx_v a, hx_v b, hx_v c) { return _mm256_fmadd_ps(a, b, c); }
static inline hx_v hx_set1(float f) { return _mm256_set1_ps(f); }
static inline hx_v hx_fnma(hx_v a, hx_v b, hx_v c) { return _mm256_fnmadd_ps(a, b, c); }
static inline void hx_stream(float *p, hx_v v) { _mm256_stream_ps(p, v); }
static inline void hx_fence(void) { _mm_sfence(); }
static inline hx_v hx_neg(hx_v a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }

/* §fwht step 1, strides 1, 2, 4 inside one register, in that order. For
 * stride h, s = v with lanes i and i^h swapped; lane i with bit h clear holds
 * a (partner b = s[i]) and gets fma(v, +1, s) = a + b; lane i with bit h set
 * holds b (partner a = s[i]) and gets fma(v, -1, s) = a - b (the product is
 * exact, so the fma rounds once exactly like the add or subtract). The
 * stride-1 stage of the 8 floats at p (hx_stride1_at) comes from two
 * duplicating loads instead of a shuffle, as in simd/avx512/fwht_avx512.c:
 * n = 1024 ... 65536 in L2 3-6% faster on the Xeon. */
#ifndef HX_DUP_LOAD
#define HX_DUP_LOAD 1
#endif
#define HX_SIGNS(h) /* +1 in lanes with bit h clear, -1 where set */              \
  _mm256_set_ps((7 & h) ? -1 : 1, (6 & h) ? -1 : 1, (5 & h) ? -1 : 1, (4 & h) ? -1 : 1, \
                (3 & h) ? -1 : 1, (2 & h) ? -1 : 1, (1 & h) ? -1 : 1, 1)
static inline __attribute__((always_inline)) hx_v hx_stride1_at(const float *p) {
#if HX_DUP_LOAD
  const __m256 e = _mm256_moveldup_ps(_mm256_loadu_ps(p));
  const __m256 o = _mm256_movehdup_ps(_mm256_loadu_ps(p));
  return _mm256_fmadd_ps(o, HX_SIGNS(1), e);
#else
  const hx_v v = _mm256_loadu_ps(p);
  return _mm256_fmadd_ps(v, HX_SIGNS(1), _mm256_permute_ps(v, 0xB1));
#endif
}
/* strides 2, 4 after stride 1 */
static inline __attribute__((always_inline)) hx_v hx_intra_rest(hx_v v) {
  v = _mm256_fmadd_ps(v, HX_SIGNS(2), _mm256_permute_ps(v, 0x4E));         /* stride 2 */
  v = _mm256_fmadd_ps(v, HX_SIGNS(4), _mm256_permute2f128_ps(v, v, 0x01)); /* stride 4 */
  return v;
}
static inline __attribute__((always_inline)) hx_v hx_intra_at(const float *p) {
  return hx_intra_rest(hx_stride1_at(p));
}

#include "../x86/fwht_x86.h"
