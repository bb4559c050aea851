/* avx512 fwht and hadamard_mix (docs/NUMERICS.md §fwht, §hadamard_mix): the
 * primitives for 16 lanes; the algorithm is simd/x86/fwht_x86.h. */
#include <immintrin.h>

#include "avx512_fwht.h"

#define HX_W 16
#define HX_LOG2W 4
/* Tuning, measured on the AMD EPYC (Zen 5) dev machine; each may be
 * overridden with -D for experiments (none changes a bit of the results). */
#ifndef HX_CHUNK_LOG2
#define HX_CHUNK_LOG2 5 /* 32 zmm = 512 floats: strides 1 .. 256 in registers */
#endif
#ifndef HX_SPLIT_LR
#define HX_SPLIT_LR 3 /* rows needing passes: 8-register chunks, two at a time */
#endif
#ifndef HX_RADIX_LOG2
#define HX_RADIX_LOG2 4 /* 4 stages per pass over memory */
#endif
#ifndef HX_L1_LOG2
#define HX_L1_LOG2 13 /* 16 or 32 KiB blocks: L1 resident */
#endif
#ifndef HX_L1_MIN_LOG2
#define HX_L1_MIN_LOG2 12
#endif
#ifndef HX_BLOCK_LOG2
#define HX_BLOCK_LOG2 16 /* 256 KiB blocks: L2 resident */
#endif
#ifndef HX_STREAM_BYTES
#define HX_STREAM_BYTES ((int64_t)32 << 20) /* output >= 32 MiB: streamed */
#endif
#ifndef HX_STREAM_MAX_N
#define HX_STREAM_MAX_N 4096
#endif
#ifndef HX_STREAM_MPOINT
#define HX_STREAM_MPOINT 1
#endif
#ifndef HX_MPOINT_MAXG
#define HX_MPOINT_MAXG 28 /* m-point accumulators in registers (32 zmm) */
#endif
#ifndef HX_MP_MIX_GROUP
/* groups of 24 or more m-point outputs (m = 28) split each column's terms
 * between the FMA and adder pipes (fwht_x86.h): Zen 5, one thread, batch in
 * L2, 28 * 2^k rows 1.2-1.5x faster (1792, 3584) in three runs. The same
 * split in the groups of 12 and 20 (m = 12, 20, 40) was within 4%, and from
 * memory up to 11% slower (docs/results/session66) */
#define HX_MP_MIX_GROUP 24
#endif
#ifndef HX_FWHT_FN
#define HX_FWHT_FN hmx_avx512_fwht
#endif
#ifndef HX_MIX_FN
#define HX_MIX_FN hmx_avx512_hadamard_mix
#endif

typedef __m512 hx_v;
static inline hx_v hx_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void hx_store(float *p, hx_v v) { _mm512_storeu_ps(p, v); }
static inline hx_v hx_add(hx_v a, hx_v b) { return _mm512_add_ps(a, b); }
static inline hx_v hx_sub(hx_v a, hx_v b) { return _mm512_sub_ps(a, b); }
static inline hx_v hx_mul(hx_v a, hx_v b) { return _mm512_mul_ps(a, b); }
static inline hx_v hx_fma(hx_v a, hx_v b, hx_v c) { return _mm512_fmadd_ps(a, b, c); }
static inline hx_v hx_set1(float f) { return _mm512_set1_ps(f); }
static inline hx_v hx_fnma(hx_v a, hx_v b, hx_v c) { return _mm512_fnmadd_ps(a, b, c); }
static inline void hx_stream(float *p, hx_v v) { _mm512_stream_ps(p, v); }
static inline void hx_fence(void) { _mm_sfence(); }
static inline hx_v hx_neg(hx_v a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }

/* §fwht step 1, strides 1, 2, 4, 8 inside one register, in that order. For
 * stride h, s = v with lanes i and i^h swapped; lane i with bit h clear holds
 * a (partner b = s[i]) and gets fma(v, +1, s) = a + b; lane i with bit h set
 * holds b (partner a = s[i]) and gets fma(v, -1, s) = a - b (the product is
 * exact, so the fma rounds once exactly like the add or subtract). The
 * stride-1 stage of the 16 floats at p (hx_stride1_at) comes from two
 * duplicating loads instead of a shuffle: e = (p0, p0, p2, p2, ..), o =
 * (p1, p1, p3, p3, ..), and fma(o, +-1, e) gives lane 2i p[2i] + p[2i+1]
 * and lane 2i+1 p[2i] - p[2i+1], the same bits. On Intel cores a vmovsldup/vmovshdup from memory is a
 * load-port uop only, so the stage leaves the two vector ports (p0, p5),
 * which bound the transform, one shuffle less: n = 256 ... 65536 in L2
 * 3-7% faster (Xeon, one thread, interleaved A/B; from memory unchanged).
 * HX_DUP_LOAD=0 takes the shuffle: fwht_avx512_shuffle.c compiles this
 * file so, and the tuning profile picks one copy per call (on Zen 5 the
 * shuffle read 4-6% faster, docs/results/session64). */
#ifndef HX_DUP_LOAD
#define HX_DUP_LOAD 1
#endif
#define HX_SIGNS(h) /* +1 in lanes with bit h clear, -1 where set */ \
  _mm512_set_ps((15 & h) ? -1 : 1, (14 & h) ? -1 : 1, (13 & h) ? -1 : 1, (12 & h) ? -1 : 1, \
                (11 & h) ? -1 : 1, (10 & h) ? -1 : 1, (9 & h) ? -1 : 1, (8 & h) ? -1 : 1,   \
                (7 & h) ? -1 : 1, (6 & h) ? -1 : 1, (5 & h) ? -1 : 1, (4 & h) ? -1 : 1,     \
                (3 & h) ? -1 : 1, (2 & h) ? -1 : 1, (1 & h) ? -1 : 1, 1)
static inline __attribute__((always_inline)) hx_v hx_stride1_at(const float *p) {
#if HX_DUP_LOAD
  const __m512 e = _mm512_moveldup_ps(_mm512_loadu_ps(p));
  const __m512 o = _mm512_movehdup_ps(_mm512_loadu_ps(p));
  return _mm512_fmadd_ps(o, HX_SIGNS(1), e);
#else
  const hx_v v = _mm512_loadu_ps(p);
  return _mm512_fmadd_ps(v, HX_SIGNS(1), _mm512_permute_ps(v, 0xB1));
#endif
}
/* strides 2, 4, 8 after stride 1 */
static inline __attribute__((always_inline)) hx_v hx_intra_rest(hx_v v) {
  v = _mm512_fmadd_ps(v, HX_SIGNS(2), _mm512_permute_ps(v, 0x4E));       /* stride 2 */
  v = _mm512_fmadd_ps(v, HX_SIGNS(4), _mm512_shuffle_f32x4(v, v, 0xB1)); /* stride 4 */
  v = _mm512_fmadd_ps(v, HX_SIGNS(8), _mm512_shuffle_f32x4(v, v, 0x4E)); /* stride 8 */
  return v;
}
static inline __attribute__((always_inline)) hx_v hx_intra_at(const float *p) {
  return hx_intra_rest(hx_stride1_at(p));
}

/* The edge column of a radix pass over an output `a` floats past a 64-byte
 * line (fwht_x86.h, hx_radix_impl): of each run of h floats, the first
 * HX_W - a sit in lanes a .. 15 of the line that starts a floats before the
 * run, and the last a in lanes 0 .. a-1 of the line that starts a floats
 * before the run's end. Both halves go into one register by masked loads
 * (lanes masked off are not read and cannot fault) and come back by masked
 * stores, each inside one line. The addresses are formed as integers: the
 * line before a run may start before the array. */
#ifndef HX_EDGE
#define HX_EDGE 1
#endif
#if HX_EDGE
static inline const float *hx_edge_addr(const float *p, int64_t back) {
  return (const float *)((uintptr_t)p - (uintptr_t)back * sizeof(float));
}
static inline hx_v hx_load_edge(const float *run, int64_t h, int a) {
  const __mmask16 head = (__mmask16)(0xFFFFu << a);
  const hx_v v = _mm512_maskz_loadu_ps(head, hx_edge_addr(run, a));
  return _mm512_mask_loadu_ps(v, (__mmask16)~head, run + h - a);
}
static inline void hx_store_edge(float *run, int64_t h, int a, hx_v v) {
  const __mmask16 head = (__mmask16)(0xFFFFu << a);
  _mm512_mask_storeu_ps((float *)hx_edge_addr(run, a), head, v);
  _mm512_mask_storeu_ps(run + h - a, (__mmask16)~head, v);
}
#endif

#include "../x86/fwht_x86.h"
