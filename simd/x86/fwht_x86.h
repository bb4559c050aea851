/* fwht and hadamard_mix for the x86 SIMD backends (docs/NUMERICS.md §fwht,
 * §hadamard_mix), shared by simd/avx512/fwht_avx512.c (16 lanes) and
 * simd/avx2/fwht_avx2.c (8 lanes). Header only: the including file defines
 * the vector type and primitives first:
 *
 *   HX_W, HX_LOG2W      lanes per register and log2
 *   hx_v                the register type
 *   hx_load/hx_store    unaligned 32-bit-aligned loads and stores
 *   hx_add/hx_sub/hx_mul/hx_set1, hx_fma(a, b, c) = fma(a, b, c),
 *   hx_fnma(a, b, c) = fma(-a, b, c), hx_neg (flip the sign bit)
 *   hx_intra_at(p)      the butterfly stages of strides 1 .. HX_W/2 inside
 *                       the register of the HX_W floats at p, in increasing
 *                       stride order
 *   HX_CHUNK_LOG2       log2 of the registers one in-register chunk holds
 *   HX_RADIX_LOG2       butterfly stages per pass over memory (at most)
 *   HX_L1_LOG2          log2 of the elements of one L1-resident block
 *   HX_BLOCK_LOG2       log2 of the elements of one L2-resident block
 *   hx_stream(p, v)     non-temporal store to a vector-aligned p; hx_fence()
 *   HX_STREAM_BYTES     outputs at least this large are streamed, when
 *   HX_STREAM_MAX_N     n is at most this (longer rows measured slower) and
 *   HX_STREAM_MPOINT    m = 1 or this is 1 (the m-point pass's m output
 *                       streams of half lines measured slower with AVX2)
 *   HX_FWHT_FN, HX_MIX_FN  the names of the two kernels
 *
 * Plan of one row (n = m * p, p = 2^k), which only regroups §fwht's work and
 * never reorders any value's own sequence of operations:
 *   1. butterflies of each of the m blocks (§fwht step 1), stage by stage in
 *      increasing stride for every element: strides 1 .. HX_W/2 inside a
 *      register, then strides up to the chunk (HX_W << HX_CHUNK_LOG2) across
 *      registers, both without touching memory; then the larger strides, up to
 *      HX_RADIX_LOG2 stages per pass, first inside blocks of 2^HX_BLOCK_LOG2
 *      elements (cache resident), then over the whole block;
 *   2. the m-point transform (§fwht step 2), 16 (8) consecutive j per vector;
 *   3. the multiply by scale (§fwht step 3) and, for hadamard_mix, the fma with
 *      alpha and beta (§hadamard_mix), fused into the last pass over the row.
 * Butterfly pairs of one stage are independent, so a stage may be split over
 * chunks, blocks and passes in any order once every element has had all
 * smaller strides.
 *
 * Threads: rows over threads (contiguous ranges); a batch smaller than the
 * threads with rows of 2^16 or more splits each row's independent blocks,
 * pass columns and m-point columns instead (hx_row_par). Outputs of 32 MiB or
 * more (x != y, aligned) are written with non-temporal stores in the last
 * pass, earlier passes going to a per-thread scratch row. None of this
 * changes any value's operations. */
#ifndef HMX_FWHT_X86_H
#define HMX_FWHT_X86_H

#include "unroll.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "canon.h"
#include "parallel.h"
#include "tuning.h"

#define HX_INL static inline __attribute__((always_inline))
_Static_assert(HX_L1_LOG2 > HX_LOG2W + HX_CHUNK_LOG2, "an L1 block holds several chunks");
_Static_assert(HX_BLOCK_LOG2 > HX_L1_LOG2, "an L2 block holds several L1 blocks");
_Static_assert(HX_BLOCK_LOG2 <= 16, "hx_row_par: rows of 2^16 or more span blocks");
#define HX_MAX_M 40

/* One butterfly (a, b) -> (a + b, a - b) of §fwht step 1. (The same bits on
 * the FMA pipes, the products by 1 being exact, measured no better: the
 * difference as fnma(b, 1, a) 2-9% slower on Zen 5, where the in-register
 * stages already keep those pipes busy, and on Zen 4 -2 .. +5% by size,
 * within the rounds' spread; both as fma / fnma 12-17% slower on Zen 4.
 * Session 30, docs/results/session30/bfly_fnma.diff.) */
HX_INL void hx_bfly(hx_v *x, hx_v *y) {
  const hx_v a = *x, b = *y;
  *x = hx_add(a, b);
  *y = hx_sub(a, b);
}

/* §fwht step 1 across registers: stages s = 0 .. stages-1 in increasing
 * order on v[0..count), register t paired with t + 2^s, (a, b) -> (a + b,
 * a - b); count a multiple of 2^stages (several independent groups then).
 * The chunk and radix passes' register stages, fully unrolled (compile-time
 * bounds). */
HX_INL void hx_bfly_stages(hx_v *v, const int count, const int stages) {
  HMX_UNROLL(5)
  for (int s = 0; s < stages; s++) {
    HMX_UNROLL(32)
    for (int t = 0; t < count; t++) {
      const int h = 1 << s;
      if (t & h) continue;
      hx_bfly(&v[t], &v[t + h]);
    }
  }
}

enum { HX_FIN_NONE, HX_FIN_SCALE, HX_FIN_MIX };

/* What the last pass over a row applies after the transform. */
typedef struct hx_fin {
  int mode;               /* HX_FIN_* */
  float scale;
  const float *alpha, *beta; /* [n], hadamard_mix only */
  int stream;             /* final stores non-temporal (aligned output, large) */
} hx_fin;

static const hx_fin hx_fin_none = {HX_FIN_NONE, 1.0f, NULL, NULL, 0};

#ifndef HX_FAR_LOG2
#define HX_FAR_LOG2 10 /* passes with strides of 2^this floats or more: at most 3 stages */
#endif

#ifndef HX_EDGE
#define HX_EDGE 0 /* the ISA file has hx_load_edge / hx_store_edge (masked) */
#endif
/* The m-point pass takes its columns on the output's alignment from blocks
 * of this many floats: Intel Xeon, avx512, 16 bytes off, in place, in L2,
 * interleaved A/B: p = 1024 (12 * 1024) 9-15% faster; p = 64 ... 512
 * (768 ... 6144), whose m-point sums keep the vector pipes busier than the
 * stores, 0-8% slower (the edge column's merging loads). */
#ifndef HX_MP_EDGE_MIN_P
#define HX_MP_EDGE_MIN_P 1024
#endif

/* Which floats a vector of a lane-by-lane pass holds: HX_W consecutive ones
 * at its address, or with edge the edge column of the runs of L floats that
 * start there (hx_load_edge: a pass over an output a floats past its vector
 * alignment, hx_radix_impl). */
typedef struct hx_col {
  int edge;  /* the edge column: each run's first HX_W - a and last a floats */
  int a;     /* the output's floats past its vector alignment (edge only) */
  int64_t L; /* the runs' length (edge only) */
} hx_col;
static const hx_col hx_plain = {0, 0, 0};

HX_INL hx_v hx_col_load(const float *p, const hx_col *k) {
#if HX_EDGE
  if (k->edge) return hx_load_edge(p, k->L, k->a);
#else
  (void)k;
#endif
  return hx_load(p);
}

/* §fwht step 3: one multiply by scale; §hadamard_mix: then one fma with
 * alpha[idx], beta[idx] (idx = index of the vector's first element in the
 * row; k: which floats the vector holds, alpha and beta read alike). */
/* fm, fs: f->mode and f->stream when known at compile time (the loop bodies
 * are specialised per mode, so non-final passes test nothing per store), or
 * -1 to read them from f. */
HX_INL hx_v hx_finish_col(hx_v v, const hx_fin *f, int64_t idx, const int fm, const hx_col *k) {
  const int mode = fm >= 0 ? fm : f->mode;
  if (mode == HX_FIN_NONE) return v;
  v = hx_mul(v, hx_set1(f->scale));
  if (mode == HX_FIN_MIX)
    v = hx_fma(v, hx_col_load(f->alpha + idx, k), hx_col_load(f->beta + idx, k));
  return v;
}
HX_INL hx_v hx_finish(hx_v v, const hx_fin *f, int64_t idx, const int fm) {
  return hx_finish_col(v, f, idx, fm, &hx_plain);
}

/* The store of a pass: streaming for the last pass of a large output. */
HX_INL void hx_put(float *p, hx_v v, const hx_fin *f, const int fs) {
  if (fs >= 0 ? fs : f->stream) hx_stream(p, v);
  else hx_store(p, v);
}

/* hx_put of a vector that holds the floats k says (hx_col). */
HX_INL void hx_col_put(float *p, hx_v v, const hx_fin *f, const int fs, const hx_col *k) {
#if HX_EDGE
  if (k->edge) {
    hx_store_edge(p, k->L, k->a, v);
    return;
  }
#else
  (void)k;
#endif
  hx_put(p, v, f, fs);
}

/* Software prefetch of the next row. A row that needs more than one pass
 * reads memory only in its first pass; the later passes run in L1/L2 and
 * leave the memory bus idle (measured: rows of 4096+ floats at 47% of the
 * copy bandwidth, rows of <= 2048 at 130%). So while a row's passes run, each
 * pass iteration also prefetches a share of the next row's cache lines,
 * spread over the row's passes (one line per `every` vector loads). The
 * hint is T0 (all levels): on Zen 5 it measured 6-14% faster than T1 for
 * avx512 n = 4096 ... 65536 from memory and 2-4% for avx2 (T2: as T1 or
 * worse; two rows ahead: no gain), each in three interleaved rounds. On the
 * Intel Xeon, rows of 8192+ take T1 (L2 only, `l2`; the tuning profile's
 * fwht_pf_l2_min_p): their next row (32 KiB+, most of a 48 KiB L1) no
 * longer evicts the current row's L1 blocks, and the prefetches wait for
 * memory in the L2's queue rather than in the L1's few fill buffers. A
 * prefetch changes no value. Per thread: every thread walks its own rows. */
typedef struct hx_pf {
  const char *p, *e; /* next line to prefetch, end of the next row */
  int credit, every; /* vector loads since the last prefetch, loads per prefetch */
  int l2;            /* prefetch into L2 only (T1) instead of all levels (T0) */
  int64_t loads;     /* vector loads counted since the row began (hx_run's spread) */
} hx_pf;
static _Thread_local hx_pf hx_pf_cur;

/* `loads` vector loads were just issued: prefetch the lines they pay for. */
HX_INL void hx_pf_tick(hx_pf *c, int loads) {
  c->loads += loads;
  if (c->p >= c->e) return;
  c->credit += loads;
  while (c->credit >= c->every && c->p < c->e) {
    if (c->l2) _mm_prefetch(c->p, _MM_HINT_T1);
    else _mm_prefetch(c->p, _MM_HINT_T0);
    c->p += 64;
    c->credit -= c->every;
  }
}

#ifndef HX_FUSE_LAST
#define HX_FUSE_LAST 0 /* m > 1 blocks of two chunks: last stage in the m-point pass */
#endif
#ifndef HX_PF_BYTES
#define HX_PF_BYTES ((int64_t)8 << 20) /* batches of 8 MiB or more: prefetch the next row */
#endif
/* Which blocks prefetch the next row: the tuning profile's fwht_pf_min_p
 * (src/tuning.h), per backend: Zen 5 from 4096 elements (smaller rows
 * measured >= 100% of copy without), Intel from 1024 (1024 / 2048 from memory
 * 66-72% -> 95-100%), Zen 4 avx512 from 4096 and avx2 from 1024. */
#ifndef HX_PF_LOADS
#define HX_PF_LOADS 2 /* 64-byte vector loads per prefetched line */
#endif

/* Rows of one chunk pass (hx_small_rows) from a batch of HX_PF_BYTES or
 * more: before each row, prefetch the bytes HX_PF_AHEAD further on into L1
 * (about latency x bandwidth: ~100 ns x 55 GB/s). With the hardware
 * prefetchers alone, avx512 n = 512 (one 32-register chunk per row) read and
 * wrote 23-28 GB/s from memory, and n = 256 50-56 in some processes and 21-24
 * in others; with this both 53-65 (Zen 5, one thread, A/B interleaved). The
 * same before rows that take passes in L1 (HX_PF_AHEAD_ROWS) was mixed: avx512
 * 768/1536 +15% but 2048 53 -> 42 GB/s, so avx512 leaves those rows to the
 * hardware prefetchers (and hx_pf from p >= 4096). avx2 takes it: 2048
 * 24 -> 31, and in the processes where the hardware prefetchers stay slow
 * (right after the reference ran, in some runs) n = 1024 24 -> 38 GB/s,
 * for 1-5% at 512/768/1024 otherwise and 11% at 1536. */
#ifndef HX_PF_AHEAD
#define HX_PF_AHEAD 6144
#endif
#ifndef HX_PF_AHEAD_ROWS
#define HX_PF_AHEAD_ROWS 0 /* also before rows of several passes that hx_pf does not cover */
#endif

HX_INL void hx_pf_ahead(const float *row, int64_t n, const float *end) {
  const char *r = (const char *)row;
  const int64_t left = (const char *)end - r; /* bytes from row to the end of this thread's rows */
  for (int64_t i = HX_PF_AHEAD; i < HX_PF_AHEAD + n * (int64_t)sizeof(float) && i < left; i += 64)
    _mm_prefetch(r + i, _MM_HINT_T0);
}
#ifndef HX_SPLIT_LR
#define HX_SPLIT_LR 0 /* log2 registers of the split chunks of hx_block (0: no split) */
#endif
_Static_assert(HX_SPLIT_LR == 0 || (HX_SPLIT_LR >= 1 && HX_SPLIT_LR + 1 <= HX_CHUNK_LOG2),
               "hx_block: two split chunks fit the chunk's registers");
#ifndef HX_RADIX_UNROLL
#define HX_RADIX_UNROLL 2 /* columns per iteration of a radix pass */
#endif
#define HX_PRAGMA_X(x) HMX_PRAGMA(x) /* a pragma whose text has macros to expand */
#ifndef HX_MULTI_LOG2
#define HX_MULTI_LOG2 4 /* registers per iteration of hx_chunk_multi (at most) */
#endif
_Static_assert(HX_MULTI_LOG2 >= 3, "hx_chunk_multi: chunks of up to 8 registers");
#define HX_CHUNK_REGS (HX_CHUNK_LOG2 > HX_MULTI_LOG2 ? 1 << HX_CHUNK_LOG2 : 1 << HX_MULTI_LOG2)

/* One chunk pass: for each group of 2^lu chunks of R = 2^lr registers (len a
 * multiple of 2^(lr+lu)*HX_W), load, all strides 1 .. R*HX_W/2 inside each
 * chunk, finish, store. lu > 0 puts several short chunks in flight at once. */
HX_INL void hx_chunk_impl(const float *src, float *dst, int64_t len, int64_t base,
                          const hx_fin *f, const int lr, const int lu, const int fm,
                          const int fs, const int pfon) {
  const int K = 1 << (lr + lu);
  hx_pf pf = pfon ? hx_pf_cur : (hx_pf){0};
  /* chunks are independent (§fwht step 1: pairs of a stage) */
  for (int64_t o = 0; o < len; o += (int64_t)K * HX_W) {
    hx_v v[HX_CHUNK_REGS];
    if (pfon) hx_pf_tick(&pf, K);
    /* §fwht step 1, strides 1 .. HX_W/2 in increasing order, inside each register */
    HMX_UNROLL(32)
    for (int k = 0; k < K; k++) v[k] = hx_intra_at(src + o + (int64_t)k * HX_W);
    /* §fwht step 1, strides HX_W .. R*HX_W/2 in increasing order: register k
     * pairs with k + h (h < R: the same chunk) */
    hx_bfly_stages(v, K, lr);
    /* §fwht step 3 / §hadamard_mix when this is the row's last pass */
    HMX_UNROLL(32)
    for (int k = 0; k < K; k++)
      hx_put(dst + o + (int64_t)k * HX_W, hx_finish(v[k], f, base + o + (int64_t)k * HX_W, fm), f,
             fs);
  }
  if (pfon) hx_pf_cur = pf;
}

HX_INL void hx_chunk_fin(const float *src, float *dst, int64_t len, int64_t base,
                         const hx_fin *f, int lr, const int fm, const int fs, const int pfon) {
  switch (lr) {
  case 0: hx_chunk_impl(src, dst, len, base, f, 0, 0, fm, fs, pfon); break;
  case 1: hx_chunk_impl(src, dst, len, base, f, 1, 0, fm, fs, pfon); break;
  case 2: hx_chunk_impl(src, dst, len, base, f, 2, 0, fm, fs, pfon); break;
  case 3: hx_chunk_impl(src, dst, len, base, f, 3, 0, fm, fs, pfon); break;
#if HX_CHUNK_LOG2 >= 4
  case 4: hx_chunk_impl(src, dst, len, base, f, 4, 0, fm, fs, pfon); break;
#endif
#if HX_CHUNK_LOG2 >= 5
  case 5: hx_chunk_impl(src, dst, len, base, f, 5, 0, fm, fs, pfon); break;
#endif
  default: break;
  }
}

#define HX_MULTI_LU(lr) (HX_MULTI_LOG2 - (lr) > 2 ? 2 : HX_MULTI_LOG2 - (lr))

/* The butterflies of all m blocks of a row, p = 2^lr registers each: chunks
 * of p, 2^HX_MULTI_LU(lr) <= 4 of them per iteration (m is a multiple of 4,
 * so they tile the row). Blocks of more than 2^HX_MULTI_LOG2 registers: hx_chunk. */
HX_INL void hx_chunk_multi_pf(const float *src, float *dst, int64_t len, int lr,
                              const int pfon) {
  switch (lr) {
  case 0: hx_chunk_impl(src, dst, len, 0, &hx_fin_none, 0, HX_MULTI_LU(0), HX_FIN_NONE, 0, pfon); break;
  case 1: hx_chunk_impl(src, dst, len, 0, &hx_fin_none, 1, HX_MULTI_LU(1), HX_FIN_NONE, 0, pfon); break;
  case 2: hx_chunk_impl(src, dst, len, 0, &hx_fin_none, 2, HX_MULTI_LU(2), HX_FIN_NONE, 0, pfon); break;
  case 3: hx_chunk_impl(src, dst, len, 0, &hx_fin_none, 3, HX_MULTI_LU(3), HX_FIN_NONE, 0, pfon); break;
  default: hx_chunk_fin(src, dst, len, 0, &hx_fin_none, lr, HX_FIN_NONE, 0, pfon); break;
  }
}

static void hx_chunk_multi(const float *src, float *dst, int64_t len, int lr) {
  /* prefetching the next row or not: decided per call (hx_run), compiled apart (hx_pf) */
  if (hx_pf_cur.p) hx_chunk_multi_pf(src, dst, len, lr, 1);
  else hx_chunk_multi_pf(src, dst, len, lr, 0);
}

/* Whether hx_block splits its chunks (set per thread by hx_run for the call). */
static _Thread_local int hx_split_cur;
/* Whether hx_block's sub-blocks of two passes take hx_two_pass_row (set per
 * thread by hx_run: the profile's fwht_two_pass_rows; 0 no, 1 yes, 2 yes and
 * the chunk pass takes an odd split's extra stage, fwht_two_pass_chunk_extra). */
static _Thread_local int hx_two_pass_cur;

/* hx_block's split chunk pass (nothing to apply; never with a prefetch: batches
 * below HX_PF_BYTES only). Not inlined into hx_block: inlined there it measured
 * slower (2.39x FFHT at n = 1024 against 2.48x). */
__attribute__((noinline)) static void hx_chunk_split(const float *src, float *dst, int64_t len,
                                                   int64_t base) {
#if HX_SPLIT_LR > 0
  hx_chunk_impl(src, dst, len, base, &hx_fin_none, HX_SPLIT_LR, 1, HX_FIN_NONE, 0, 0);
#else
  (void)src, (void)dst, (void)len, (void)base;
#endif
}

/* A chunk pass; the non-final ones (nothing to apply) without per-store tests. */
static void hx_chunk(const float *src, float *dst, int64_t len, int64_t base, const hx_fin *f,
                     int lr) {
  /* prefetching or not: decided per pass, compiled apart (hx_pf) */
  const int pf = hx_pf_cur.p != NULL;
  if (f->mode == HX_FIN_NONE && !f->stream) {
    if (pf) hx_chunk_fin(src, dst, len, base, f, lr, HX_FIN_NONE, 0, 1);
    else hx_chunk_fin(src, dst, len, base, f, lr, HX_FIN_NONE, 0, 0);
  } else {
    hx_chunk_fin(src, dst, len, base, f, lr, -1, -1, pf);
  }
}

/* One column of a radix pass: the 2^r registers at j, j + h, .. (k: which
 * floats each holds, hx_col), strides h .. h*2^(r-1), then `f` if last. */
HX_INL void hx_radix_col(const float *src, float *d, int64_t j, int64_t h, int64_t base,
                         const hx_fin *f, const int r, const int fm, const int fs, hx_pf *pf,
                         const int pfon, const hx_col *k) {
  const int T = 1 << r;
  hx_v v[1 << HX_RADIX_LOG2];
  if (pfon) hx_pf_tick(pf, T);
  HMX_UNROLL(16)
  for (int t = 0; t < T; t++) v[t] = hx_col_load(src + j + t * h, k);
  /* §fwht step 1, strides h .. h*2^(r-1) in increasing order */
  hx_bfly_stages(v, T, r);
  /* §fwht step 3 / §hadamard_mix when this is the row's last pass */
  HMX_UNROLL(16)
  for (int t = 0; t < T; t++)
    hx_col_put(d + j + t * h, hx_finish_col(v[t], f, base + j + t * h, fm, k), f, fs, k);
}

/* One radix pass, src -> d (the same positions; src may equal d): strides
 * h, 2h, .., h*2^(r-1) (h a multiple of HX_W), 2^r registers at distance h,
 * for every group and column. */
HX_INL void hx_radix_impl(const float *src, float *d, int64_t len, int64_t h, int64_t base,
                          const hx_fin *f, const int r, const int fm, const int fs,
                          const int pfon) {
  const int T = 1 << r;
  hx_pf pf = pfon ? hx_pf_cur : (hx_pf){0};
  if (fs == 1 && HX_W * (int)sizeof(float) < 64) {
    /* Streamed stores of half lines (avx2): the two columns that share the
     * output's lines (j, j + HX_W; y is line-aligned when streamed, h a
     * multiple of 2 HX_W) go together and their stores alternate, so that
     * each line is whole after two consecutive stores. Column by column, a
     * pass of 8 rows left 8 lines half written until the next column's
     * stores, and the core's write-combining buffers gave up on them: n = 512
     * and 4096 out of place from memory ran at 4.5 and 2.8 GB/s (Intel Xeon
     * VM), 2.4x and 3x slower than with plain stores; now 3-4.6x faster than
     * that (docs/results/session23). Only the order of the stores changes. */
    for (int64_t g = 0; g < len; g += h << r) {
      for (int64_t j = g; j < g + h; j += 2 * HX_W) {
        hx_v v[1 << HX_RADIX_LOG2], w[1 << HX_RADIX_LOG2];
        if (pfon) hx_pf_tick(&pf, 2 * T);
        HMX_UNROLL(16)
        for (int t = 0; t < T; t++) {
          v[t] = hx_load(src + j + t * h);
          w[t] = hx_load(src + j + HX_W + t * h);
        }
        /* §fwht step 1, strides h .. h*2^(r-1) in increasing order, both columns */
        hx_bfly_stages(v, T, r);
        hx_bfly_stages(w, T, r);
        /* §fwht step 3 / §hadamard_mix: this is the row's last pass */
        HMX_UNROLL(16)
        for (int t = 0; t < T; t++) {
          hx_stream(d + j + t * h, hx_finish(v[t], f, base + j + t * h, fm));
          hx_stream(d + j + HX_W + t * h, hx_finish(w[t], f, base + j + HX_W + t * h, fm));
        }
      }
    }
    if (pfon) hx_pf_cur = pf;
    return;
  }
#if HX_EDGE
  /* An output off its vector alignment (a malloc'd batch: 16 bytes past a
   * line): the columns are taken a floats earlier, so that every store but
   * the edge column's covers one whole line. A radix pass's operations are
   * lane by lane (register t pairs with t + 2^s, lane i with lane i), so
   * which 16 consecutive floats of a run share a register changes no value;
   * the floats of each run that the shifted columns leave out (its first
   * HX_W - a and last a) make one more column, the edge (hx_load_edge). */
  const int a = (int)((uintptr_t)d / sizeof(float) % HX_W);
  if (fs == 0 && a != 0 && (uintptr_t)d % sizeof(float) == 0) {
    const hx_col edge = {1, a, h};
    for (int64_t g = 0; g < len; g += h << r) {
      hx_radix_col(src, d, g, h, base, f, r, fm, 0, &pf, pfon, &edge);
      HX_PRAGMA_X(GCC unroll HX_RADIX_UNROLL)
      for (int64_t j = g + HX_W - a; j < g + h - a; j += HX_W)
        hx_radix_col(src, d, j, h, base, f, r, fm, 0, &pf, pfon, &hx_plain);
    }
    if (pfon) hx_pf_cur = pf;
    return;
  }
#endif
  /* groups and columns are independent (§fwht step 1: pairs of a stage) */
  for (int64_t g = 0; g < len; g += h << r) {
    /* two columns per iteration (measured on Zen 5: n = 1024 ... 16384 in L2
     * 3-6% faster than one) */
    HX_PRAGMA_X(GCC unroll HX_RADIX_UNROLL)
    for (int64_t j = g; j < g + h; j += HX_W)
      hx_radix_col(src, d, j, h, base, f, r, fm, fs, &pf, pfon, &hx_plain);
  }
  if (pfon) hx_pf_cur = pf;
}

HX_INL void hx_radix_fin(const float *src, float *d, int64_t len, int64_t h, int64_t base,
                         const hx_fin *f, int r, const int fm, const int fs, const int pfon) {
  switch (r) {
  case 1: hx_radix_impl(src, d, len, h, base, f, 1, fm, fs, pfon); break;
  case 2: hx_radix_impl(src, d, len, h, base, f, 2, fm, fs, pfon); break;
  case 3: hx_radix_impl(src, d, len, h, base, f, 3, fm, fs, pfon); break;
#if HX_RADIX_LOG2 >= 4
  case 4: hx_radix_impl(src, d, len, h, base, f, 4, fm, fs, pfon); break;
#endif
  default: break;
  }
}

/* A radix pass; the non-final ones (nothing to apply) without per-store tests. */
HX_INL void hx_radix_modes(const float *src, float *d, int64_t len, int64_t h, int64_t base,
                           const hx_fin *f, int r, const int pf) {
#ifndef HX_RADIX_GENERIC
  if (f->mode == HX_FIN_NONE && !f->stream) hx_radix_fin(src, d, len, h, base, f, r, HX_FIN_NONE, 0, pf);
  else if (f->mode == HX_FIN_SCALE && !f->stream)
    hx_radix_fin(src, d, len, h, base, f, r, HX_FIN_SCALE, 0, pf);
#ifndef HX_NO_STREAM_SPEC
  else if (f->mode == HX_FIN_SCALE)
    hx_radix_fin(src, d, len, h, base, f, r, HX_FIN_SCALE, 1, pf);
#endif
  else if (f->mode == HX_FIN_MIX && !f->stream)
    hx_radix_fin(src, d, len, h, base, f, r, HX_FIN_MIX, 0, pf);
  else hx_radix_fin(src, d, len, h, base, f, r, -1, -1, pf);
#else
  if (f->mode == HX_FIN_NONE && !f->stream) hx_radix_fin(src, d, len, h, base, f, r, HX_FIN_NONE, 0, pf);
  else hx_radix_fin(src, d, len, h, base, f, r, -1, -1, pf);
#endif
}

#ifndef HX_RADIX_ATTR
#define HX_RADIX_ATTR
#endif
HX_RADIX_ATTR static void hx_radix(const float *src, float *d, int64_t len, int64_t h, int64_t base,
                     const hx_fin *f, int r) {
  /* prefetching or not: decided per pass, compiled apart (hx_pf) */
  if (hx_pf_cur.p) hx_radix_modes(src, d, len, h, base, f, r, 1);
  else hx_radix_modes(src, d, len, h, base, f, r, 0);
}

/* Stages of strides 2^s0 .. 2^(s1-1) on t[0..len), in passes of at most
 * HX_RADIX_LOG2 stages, increasing, in place on t except the last pass, which
 * writes d (may equal t) and applies `f`. Passes with
 * strides of 1024 floats (4 KiB) or more take at most 3 stages: 16 streams
 * 4 KiB apart would share one set of a 12-way L1 (set conflicts). */
static void hx_stages(float *t, float *d, int64_t len, int s0, int s1, int64_t base,
                      const hx_fin *f) {
  /* §fwht step 1: the stages in increasing stride, one pass after the other */
  while (s0 < s1) {
    int left = s1 - s0;
    int most = s0 >= HX_FAR_LOG2 && HX_RADIX_LOG2 > 3 ? 3 : HX_RADIX_LOG2;
    int passes = (left + most - 1) / most;
    int r = (left + passes - 1) / passes;
    hx_radix(t, r == left ? d : t, len, (int64_t)1 << s0, base, r == left ? f : &hx_fin_none, r);
    s0 += r;
  }
}

/* Rows of m = 1 that take exactly two passes, a chunk pass and one radix
 * pass (HX_CHUNK_LOG2 < lp - HX_LOG2W <= HX_CHUNK_LOG2 + HX_RADIX_LOG2:
 * avx512 n = 1024 ... 8192, avx2 128 ... 512), where the tuning profile says
 * so (fwht_two_pass_rows): the stages beyond the register's own split evenly
 * between the two passes (the radix pass up to HX_RADIX_LOG2 of them), both
 * passes' shapes fixed at compile time, and no per-row dispatch through
 * hx_row / hx_block / hx_stages. A batch that the caches hold takes a loop of
 * its own (hx_two_pass_rows: avx2 128 / 256 4-6% faster than a call per row);
 * one from memory, one call per row in hx_run's loop (hx_two_pass_row), which
 * keeps the next-row prefetch (in place, 16 bytes off: avx512 1024 ... 4096
 * +5-9%, 8192 +2%; avx2 128 / 256 / 512 +17-21% / +7-8% / +5-7%) but not
 * streamed outputs (their scratch row and last pass stay as they were: the
 * 3-stage last pass measured 3-5% slower there at 1024 / 2048). Intel Xeon, avx512,
 * one thread, batch in L2, 16 bytes past a line, interleaved A/B against the
 * general path (one chunk of 2^4 / 2^5 registers and a pass of 2 / 3 stages):
 * n = 1024 / 2048 / 4096 9% faster each (avx2 n = 128 ... 512: 14-56%; more
 * in src/tuning.c). Both halves count: with the general path's split but no
 * dispatch, 1024 / 2048 / 4096 gained 7 / 5 / 0% (a row of 1024 takes ~600
 * cycles, of which the general path's calls and switches are a few dozen);
 * the even split adds the rest (a 2-stage pass is store-bound: one store per
 * two additions). An odd number of stages leaves one over: the radix pass
 * takes it (ce = 0), or the chunk pass, where the profile says so
 * (fwht_two_pass_chunk_extra, ce = 1: avx512 2048 as 16-register chunks and
 * a 3-stage radix pass instead of 8 and 4, avx2 256 as 8 and 2 instead of 4
 * and 3; Zen 5, in place, 16 bytes off, interleaved A/B, 7 runs of 11-21
 * rounds: avx512 2048 in L2 1-9% faster (median 3%), from memory 6-60%;
 * avx2 256 in L2 3-5%, from memory 0-7%; on the H200's Xeon host 2048 4%
 * slower in L2, 2% from memory, so intel keeps ce = 0). The same stages in
 * the same order for every element: only the grouping into passes changes. */
/* the radix pass's stages: half of rest, rounded up (ce = 0) or down (ce =
 * 1), at most HX_RADIX_LOG2; the chunk pass takes the rest */
#define HX_TWO_PASS_R(rest, ce)                                                                \
  (((rest) + 1 - (ce)) / 2 < HX_RADIX_LOG2 ? ((rest) + 1 - (ce)) / 2 : HX_RADIX_LOG2)
_Static_assert((HX_CHUNK_LOG2 + HX_RADIX_LOG2 + 1) / 2 <= HX_CHUNK_LOG2,
               "the chunk pass can take the extra stage of an odd split");
#ifndef HX_TWO_PASS
#define HX_TWO_PASS 1 /* 0: rows of two passes take the general path (experiments) */
#endif
#ifndef HX_TWO_PASS_MEM
#define HX_TWO_PASS_MEM 1 /* 0: whole rows from memory take the general path (experiments) */
#endif

HX_INL void hx_two_pass_rows_impl(const float *x, float *y, int64_t b0, int64_t b1, int64_t n,
                                  const hx_fin *f, const int lr, const int r, const int fm) {
  /* rows independent (§fwht, per row) */
  for (int64_t b = b0; b < b1; b++) {
    /* §fwht step 1, strides 1 .. 2^(HX_LOG2W + lr - 1): x -> y */
    hx_chunk_impl(x + b * n, y + b * n, n, 0, &hx_fin_none, lr, 0, HX_FIN_NONE, 0, 0);
    /* strides 2^(HX_LOG2W + lr) .. n/2, then step 3 (§hadamard_mix), in place on y */
    hx_radix_impl(y + b * n, y + b * n, n, (int64_t)HX_W << lr, 0, f, r, fm, 0, 0);
  }
}

/* One row of the same shape from a batch far larger than the caches: the
 * chunk pass x -> tmp (tmp: y, or the scratch row of a streamed output), the
 * radix pass tmp -> y, both prefetching the next row when hx_pf_cur says so. */
HX_INL void hx_two_pass_row_impl(const float *x, float *tmp, float *y, int64_t n, int64_t base,
                                 const hx_fin *f, const int lr, const int r, const int fm,
                                 const int fs, const int pfon) {
  hx_chunk_impl(x, tmp, n, base, &hx_fin_none, lr, 0, HX_FIN_NONE, 0, pfon);
  hx_radix_impl(tmp, y, n, (int64_t)HX_W << lr, base, f, r, fm, fs, pfon);
}

/* rest = lp - HX_LOG2W: the stages after the register's own; ce: the odd
 * split's extra stage to the chunk pass (a second copy only where that
 * changes the split). */
#define HX_TP_ROWS(rest, ce, fm)                                                              \
  hx_two_pass_rows_impl(x, y, b0, b1, n, f, (rest) - HX_TWO_PASS_R(rest, ce),                 \
                        HX_TWO_PASS_R(rest, ce), fm)
#define HX_TP_CE(rest) (chunk_extra && HX_TWO_PASS_R(rest, 1) != HX_TWO_PASS_R(rest, 0))
#define HX_TP_ROWS_CE(rest, fm)                                                               \
  if (HX_TP_CE(rest))                                                                         \
    HX_TP_ROWS(rest, 1, fm);                                                                  \
  else                                                                                        \
    HX_TP_ROWS(rest, 0, fm);
#define HX_TWO_PASS_CASE(rest)                                                                \
  case rest:                                                                                  \
    if (f->mode == HX_FIN_NONE) {                                                             \
      HX_TP_ROWS_CE(rest, HX_FIN_NONE)                                                        \
    } else if (f->mode == HX_FIN_SCALE) {                                                     \
      HX_TP_ROWS_CE(rest, HX_FIN_SCALE)                                                       \
    } else {                                                                                  \
      HX_TP_ROWS_CE(rest, HX_FIN_MIX)                                                         \
    }                                                                                         \
    break;
/* (the mode, the store kind and the prefetch hoisted out of the loops) */
#define HX_TPR(lr, r, fm, fs, pfon) \
  hx_two_pass_row_impl(x, tmp, y, n, base, f, lr, r, fm, fs, pfon)
#define HX_TP_ROW_MODES(lr, r)                                                                \
  if (f->mode == HX_FIN_NONE && !f->stream) {                                                 \
    if (pf) HX_TPR(lr, r, HX_FIN_NONE, 0, 1);                                                 \
    else HX_TPR(lr, r, HX_FIN_NONE, 0, 0);                                                    \
  } else if (f->mode == HX_FIN_SCALE && !f->stream) {                                         \
    if (pf) HX_TPR(lr, r, HX_FIN_SCALE, 0, 1);                                                \
    else HX_TPR(lr, r, HX_FIN_SCALE, 0, 0);                                                   \
  } else if (f->mode == HX_FIN_SCALE) {                                                       \
    if (pf) HX_TPR(lr, r, HX_FIN_SCALE, 1, 1);                                                \
    else HX_TPR(lr, r, HX_FIN_SCALE, 1, 0);                                                   \
  } else {                                                                                    \
    if (pf) HX_TPR(lr, r, -1, -1, 1);                                                         \
    else HX_TPR(lr, r, -1, -1, 0);                                                            \
  }
#define HX_TWO_PASS_ROW_CASE(rest)                                                            \
  case rest:                                                                                  \
    if (HX_TP_CE(rest)) {                                                                     \
      HX_TP_ROW_MODES((rest) - HX_TWO_PASS_R(rest, 1), HX_TWO_PASS_R(rest, 1))                \
    } else {                                                                                  \
      HX_TP_ROW_MODES((rest) - HX_TWO_PASS_R(rest, 0), HX_TWO_PASS_R(rest, 0))                \
    }                                                                                         \
    break;

static int hx_two_pass_fits(int lp) {
  return lp - HX_LOG2W > HX_CHUNK_LOG2 && lp - HX_LOG2W <= HX_CHUNK_LOG2 + HX_RADIX_LOG2;
}

/* The cases rest = 4 ... 9 that hx_two_pass_fits admits for this ISA. */
#if HX_CHUNK_LOG2 < 4
#define HX_TP_C4(CASE) CASE(4)
#else
#define HX_TP_C4(CASE)
#endif
#if HX_CHUNK_LOG2 < 5
#define HX_TP_C5(CASE) CASE(5)
#else
#define HX_TP_C5(CASE)
#endif
#if HX_CHUNK_LOG2 + HX_RADIX_LOG2 >= 7
#define HX_TP_C7(CASE) CASE(7)
#else
#define HX_TP_C7(CASE)
#endif
#if HX_CHUNK_LOG2 + HX_RADIX_LOG2 >= 8
#define HX_TP_C8(CASE) CASE(8)
#else
#define HX_TP_C8(CASE)
#endif
#if HX_CHUNK_LOG2 + HX_RADIX_LOG2 >= 9
#define HX_TP_C9(CASE) CASE(9)
#else
#define HX_TP_C9(CASE)
#endif
_Static_assert(HX_RADIX_LOG2 >= 3 && HX_RADIX_LOG2 <= 4 && HX_CHUNK_LOG2 >= 3 && HX_CHUNK_LOG2 <= 5,
               "the two-pass cases cover rest = 4 ... 9");
#define HX_TWO_PASS_CASES(CASE)                                                               \
  switch (lp - HX_LOG2W) {                                                                    \
    HX_TP_C4(CASE) HX_TP_C5(CASE) CASE(6) HX_TP_C7(CASE) HX_TP_C8(CASE) HX_TP_C9(CASE)        \
  default: break;                                                                             \
  }

/* Rows [b0, b1) of hx_two_pass_fits(lp), fwht (scale 1 or not) or hadamard_mix, not
 * streamed; chunk_extra: the profile's fwht_two_pass_chunk_extra. */
static void hx_two_pass_rows(const float *x, float *y, int64_t b0, int64_t b1, int64_t n,
                             const hx_fin *f, int lp, int chunk_extra) {
  HX_TWO_PASS_CASES(HX_TWO_PASS_CASE)
}

/* One row of hx_two_pass_fits(lp) (hx_two_pass_row_impl). */
static void hx_two_pass_row(const float *x, float *tmp, float *y, int64_t n, int64_t base,
                            const hx_fin *f, int lp) {
  const int pf = hx_pf_cur.p != NULL;
  const int chunk_extra = hx_two_pass_cur == 2;
  HX_TWO_PASS_CASES(HX_TWO_PASS_ROW_CASE)
}
#undef HX_TWO_PASS_CASE
#undef HX_TWO_PASS_ROW_CASE
#undef HX_TPR
#undef HX_TP_ROW_MODES
#undef HX_TP_ROWS
#undef HX_TP_ROWS_CE
#undef HX_TP_CE
#undef HX_TWO_PASS_CASES

static int hx_log2(int64_t p) {
  int l = 0;
  while (((int64_t)1 << l) < p) l++;
  return l;
}

/* §fwht step 1, all strides < 2^lb (lb > the chunk's), on a block of 2^lb
 * elements: src -> dst, earlier passes in tmp (may equal dst), `f` in the
 * last pass. Sub-blocks of 2^HX_L1_LOG2 first get all their strides while
 * they sit in L1, then the block gets the larger ones. */
static void hx_block(const float *src, float *tmp, float *dst, int lb, int64_t base,
                     const hx_fin *f) {
  int l1 = lb < HX_L1_LOG2 ? lb : HX_L1_LOG2;
#ifdef HX_L1_MIN_LOG2
  /* sub-blocks of 2^HX_L1_MIN_LOG2 .. 2^HX_L1_LOG2 elements: the size that
   * leaves the block's larger strides no pass of a single stage */
  if (lb > HX_L1_LOG2 && (lb - HX_L1_LOG2) % 3 != 0 && (lb - HX_L1_MIN_LOG2) % 3 != 1)
    l1 = HX_L1_MIN_LOG2;
#endif
  /* the chunk: half as many registers when the rest would be one pass of
   * only one or two stages (a 3- or 4-stage pass measured faster) */
  int lr = HX_CHUNK_LOG2;
  if (HX_CHUNK_LOG2 > 4 && l1 - HX_LOG2W - lr > 0 && l1 - HX_LOG2W - lr < 3) lr--;
  /* A block that takes passes after its chunks anyway: chunks of
   * 2^HX_SPLIT_LR registers, two side by side (hx_chunk_impl's lu = 1). The
   * in-register stages of one register are a chain of 8 dependent operations
   * (~30 cycles on Zen 5: cross-128-bit shuffles have a latency of 5), and two
   * short chunks give the core independent chains to overlap where one long
   * chunk makes it wait; the passes then take a stage or two more. Measured
   * on Zen 5 with the batch in L2: n = 1024 2.38 -> 2.51x FFHT, 4096 2.45 ->
   * 2.52x, 65536 2.33 -> 2.45x; but from memory n = 1024 and 65536 lost 15-20%
   * (16384 gained), so only batches below HX_PF_BYTES split (hx_split_cur). */
  const int split = HX_SPLIT_LR > 0 && hx_split_cur && l1 > HX_LOG2W + HX_CHUNK_LOG2;
  if (split) lr = HX_SPLIT_LR;
  const int lc = HX_LOG2W + lr;
  const int64_t b1 = (int64_t)1 << l1;
  /* Sub-blocks (and blocks of m > 1 rows) of a chunk pass and one radix
   * pass (avx512 1024 ... 8192: in n = 16384 ... 65536 and 12 / 20 / 40 *
   * 2^k; avx2 128 ... 512) take both at once, the stages split evenly and no
   * dispatch (hx_two_pass_row), where the profile says so (hx_two_pass_cur).
   * Intel Xeon, avx512, one thread, 16 bytes off, in place, interleaved A/B:
   * in L2 16384 / 32768 / 65536 +12 / +4 / +1-3%, 12 * 1024 ... 12 * 4096
   * +3-5%, 20 * 1024 and 40 * 1024 +1-2%; from memory +7-8 / +6-7 / +2%, m > 1
   * +3-6%. avx2 (m > 1 blocks only): 0-3%. */
  const int two_pass = !split && hx_two_pass_cur && hx_two_pass_fits(l1);
  /* §fwht step 1, strides < 2^l1: sub-block by sub-block (L1 resident) */
  for (int64_t s = 0; s < ((int64_t)1 << lb); s += b1) {
    if (two_pass) {
      hx_two_pass_row(src + s, tmp + s, l1 == lb ? dst + s : tmp + s, b1, base + s,
                      l1 == lb ? f : &hx_fin_none, l1);
      continue;
    }
    if (split)
      hx_chunk_split(src + s, tmp + s, b1, base + s);
    else
      hx_chunk(src + s, tmp + s, b1, base + s, &hx_fin_none, lr);
    hx_stages(tmp + s, l1 == lb ? dst + s : tmp + s, b1, lc, l1, base + s,
              l1 == lb ? f : &hx_fin_none);
  }
  /* §fwht step 1, strides 2^l1 .. 2^(lb-1) (none when l1 == lb) */
  hx_stages(tmp, dst, (int64_t)1 << lb, l1, lb, base, f);
}

/* §fwht step 1 on one block of p = 2^lp >= HX_W elements, src -> dst (may be
 * equal), the passes before the last one in tmp (dst, or scratch that keeps
 * the output's cache lines out of the intermediate passes); `f` applied in
 * the last pass. `base` is the block's row offset. */
static void hx_butterflies(const float *src, float *tmp, float *dst, int lp, int64_t base,
                           const hx_fin *f) {
  const int lc = HX_LOG2W + HX_CHUNK_LOG2;
  const int64_t p = (int64_t)1 << lp;
  if (lp <= lc) {
    hx_chunk(src, dst, p, base, f, lp - HX_LOG2W);
    return;
  }
  /* HX_BLOCK_LOG2 > HX_L1_LOG2 > lc, so each stage range below that gets `f`
   * is non-empty. */
  int lb = lp < HX_BLOCK_LOG2 ? lp : HX_BLOCK_LOG2;
#ifdef HX_L1_MIN_LOG2
  /* one block size smaller when that leaves the row passes of 3 stages */
  if (lp > lb && (lp - lb) % 3 != 0 && (lp - lb + 1) % 3 == 0) lb--;
#endif
  const int64_t blk = (int64_t)1 << lb;
  /* §fwht step 1, strides < 2^lb: block by block (L2 resident) */
  for (int64_t s = 0; s < p; s += blk)
    hx_block(src + s, tmp + s, lb == lp ? dst + s : tmp + s, lb, base + s,
             lb == lp ? f : &hx_fin_none);
  /* §fwht step 1, strides >= 2^lb (none when lb == lp) */
  hx_stages(tmp, dst, p, lb, lp, base, f);
}

/* The factors H_m of src/hadamard_factors.c as sign masks, bit c of row r set
 * when H_m[r][c] = -1 (generated from that file's strings; every m is
 * exercised bit for bit by the conformance vectors and tests/test_differential.c).
 * Compile-time signs let §fwht step 2 use plain adds and subtracts. */
static const uint64_t hx_neg12[12] = {
    0x2ull, 0xaabull, 0x3c8ull, 0x96eull, 0xf20ull, 0x5baull, 0xc8cull, 0x6e6ull, 0x23cull,
    0xb96ull, 0x8f0ull, 0xe5aull,};
static const uint64_t hx_neg20[20] = {
    0x933deull, 0x2e3bdull, 0x5477bull, 0xa0ef7ull, 0x499efull, 0x637c1ull, 0xc6ba2ull,
    0x8d764ull, 0x1aee8ull, 0x359f0ull, 0xfa53ull, 0x174a7ull, 0x26d4eull, 0x45e9cull, 0x83d39ull,
    0xf7a6dull, 0xef4faull, 0xdedd5ull, 0xbdf8bull, 0x7bf36ull,};
static const uint64_t hx_neg28[28] = {
    0xcd69e7eull, 0x9ad7c7dull, 0x37ab8fbull, 0x6d571f7ull, 0xd8ae3efull, 0xb3587dfull,
    0x66b4f3full, 0xb467f43ull, 0x6acbe87ull, 0xd593d8eull, 0xab27b9cull, 0x564f7b8ull,
    0xac9aff0ull, 0x5b31fe1ull, 0x87fb325ull, 0xff66caull, 0x1decd95ull, 0x39ddb2aull,
    0x71bf654ull, 0xe17eca9ull, 0xc2fd9d2ull, 0xfcf1299ull, 0xfbe2532ull, 0xf7c4ae4ull,
    0xef8d549ull, 0xdf1ea13ull, 0xbe3d4a6ull, 0x7e7a94cull,};
static const uint64_t hx_neg40[40] = {
    0xffffeffffeull, 0x615e4615e4ull, 0xc2bc8c2bc8ull, 0x8579285792ull, 0xaf260af26ull,
    0x15e4c15e4cull, 0x2bc982bc98ull, 0x5793057930ull, 0xaf260af260ull, 0x5e4c25e4c2ull,
    0xbc984bc984ull, 0x7930a7930aull, 0xf2614f2614ull, 0xe4c2ae4c2aull, 0xc9856c9856ull,
    0x930ae930aeull, 0x2615e2615eull, 0x4c2bc4c2bcull, 0x9857898578ull, 0x30af230af2ull,
    0x1ffffeull, 0x9ea1b615e4ull, 0x3d437c2bc8ull, 0x7a86d85792ull, 0xf50d90af26ull,
    0xea1b315e4cull, 0xd43672bc98ull, 0xa86cf57930ull, 0x50d9faf260ull, 0xa1b3d5e4c2ull,
    0x4367bbc984ull, 0x86cf57930aull, 0xd9ebf2614ull, 0x1b3d5e4c2aull, 0x367a9c9856ull,
    0x6cf51930aeull, 0xd9ea12615eull, 0xb3d434c2bcull, 0x67a8798578ull, 0xcf50d30af2ull,};

static const uint64_t *hx_neg_table(int m) {
  switch (m) {
  case 12: return hx_neg12;
  case 20: return hx_neg20;
  case 28: return hx_neg28;
  case 40: return hx_neg40;
  default: return NULL;
  }
}

/* The m-point pass's input u[c] at column j (at = c * p + j). half = 0:
 * v[at] as the blocks' butterflies left it. half = 1 / 2: the blocks' last
 * stage (stride h = p / 2, §fwht step 1) is still to do and is done here, as
 * the value is loaded: columns j < h take a + b, columns j >= h take a - b,
 * with a = v[c*p + (j mod h)], b = v[c*p + (j mod h) + h], the butterfly's
 * two outputs computed once each, as the stage's own pass would have. */
HX_INL hx_v hx_mp_u(const float *src, int64_t at, int64_t h, const int half, const hx_col *k) {
  if (half == 1) return hx_add(hx_col_load(src + at, k), hx_col_load(src + at + h, k));
  if (half == 2) return hx_sub(hx_col_load(src + at - h, k), hx_col_load(src + at, k));
  return hx_col_load(src + at, k);
}

#ifndef HX_MPOINT_MAXG
#define HX_MPOINT_MAXG 28 /* accumulators held in registers at once */
#endif

/* §fwht step 2 for p >= HX_W (in place on the row, or in hx_row_padded's
 * scratch), then `f` (§fwht step 3, §hadamard_mix). HX_W consecutive j per
 * vector; m and the signs are compile-time constants, so each output row r is
 * a straight chain: acc = +-u[0] (exact negation), then for c = 1 .. m-1 in
 * order acc = acc +- u[c]. About half the terms (hx_mp_adder) are written as
 * fma(u[c], 1, acc) / fnma(u[c], 1, acc) = acc + u[c] / acc - u[c] (exact
 * product, one rounding: the same bits) so that the adder and the FMA pipes
 * share the work. c is outermost: the m outputs (in groups of at most
 * HX_MPOINT_MAXG accumulators, all in registers) each take u[c] in turn, so
 * each input is loaded once per group and only the accumulators and the
 * current u[c] are live (no spills). Every output's own chain is unchanged:
 * acc = +-u[0] (or u[1] - u[0]), then acc +- u[c] for c in increasing order,
 * the multiply, the fma. With several groups (or a fused stage, whose
 * columns j and j + p/2 read the same inputs) the finished outputs wait in
 * `out` until all inputs they depend on are read (in place).
 *
 * Which terms take the FMA pipes (hx_mp_adder 0) and which the adder (1):
 * in groups of fewer than HX_MP_MIX_GROUP outputs, every other column, all
 * rows alike; in larger groups, by the parity of row r's signs in columns
 * 0 .. c, so that each column's terms split between the two kinds of pipe
 * instead of all waiting for one (fwht_<isa>.c says where that measured
 * faster). Either way the choice is a function of the row's signs so far:
 * rows whose signs start alike compute the same operations on the same
 * partial sums, which the compiler then computes once (hmx bench's
 * operation count, tools/hmx/bench_targets.c, relies on it). */
#ifndef HX_MP_MIX_GROUP
#define HX_MP_MIX_GROUP 0 /* 0: never */
#endif
/* Term c of the row whose -1 signs are the bits of s, in a group of `outs`
 * outputs: 1 adder, 0 FMA pipes (constant-folded: all arguments are
 * compile-time constants in the unrolled loops). */
HX_INL int hx_mp_adder(uint64_t s, int c, int outs) {
  if (!(HX_MP_MIX_GROUP > 0 && outs >= HX_MP_MIX_GROUP)) return c & 1;
  s &= (2ull << c) - 1; /* the parity of the signs of columns 0 .. c */
  s ^= s >> 32, s ^= s >> 16, s ^= s >> 8, s ^= s >> 4, s ^= s >> 2, s ^= s >> 1;
  return (int)(s & 1);
}
/* One group of outputs g <= r < ge (compile-time bounds) of column j. */
HX_INL void hx_mpoint_grp(const float *src, float *y, int64_t p, int64_t sp, int64_t j,
                          const hx_fin *f, const int m, const uint64_t *neg, const int fm,
                          const int fs, const int g, const int ge, const int direct, hx_v *out,
                          const int half, const hx_col *k) {
  const hx_v one = hx_set1(1.0f), sc = hx_set1(f->scale);
  hx_v acc[HX_MPOINT_MAXG];
  const int64_t h = p >> 1;
  const hx_v u0 = hx_mp_u(src, j, h, half, k), u1 = hx_mp_u(src, sp + j, h, half, k);
  /* c = 0 (and c = 1 where -u[0] + u[1] is written u[1] - u[0], the same rounding) */
  HMX_UNROLL(40)
  for (int r = g; r < ge; r++) {
    const uint64_t s = neg[r];
    if ((s & 3) == 1) acc[r - g] = hx_sub(u1, u0);
    else acc[r - g] = (s & 1) ? hx_neg(u0) : u0;
  }
  /* c = 1 for the other rows */
  HMX_UNROLL(40)
  for (int r = g; r < ge; r++) {
    const uint64_t s = neg[r];
    if ((s & 3) == 1) continue;
    const int minus = (int)((s >> 1) & 1);
    hx_v *a = &acc[r - g];
    if (hx_mp_adder(s, 1, ge - g)) *a = minus ? hx_sub(*a, u1) : hx_add(*a, u1);
    else *a = minus ? hx_fnma(u1, one, *a) : hx_fma(u1, one, *a);
  }
  /* §fwht step 2: acc = acc +- u[c], c = 2 .. m-1 in increasing order */
  HMX_UNROLL(40)
  for (int c = 2; c < m; c++) {
    const hx_v u = hx_mp_u(src, c * sp + j, h, half, k);
    HMX_UNROLL(40)
    for (int r = g; r < ge; r++) {
      const int minus = (int)((neg[r] >> c) & 1);
      hx_v *a = &acc[r - g];
      if (hx_mp_adder(neg[r], c, ge - g)) *a = minus ? hx_sub(*a, u) : hx_add(*a, u);
      else *a = minus ? hx_fnma(u, one, *a) : hx_fma(u, one, *a);
    }
  }
  /* §fwht step 3: one multiply; §hadamard_mix: one fma */
  HMX_UNROLL(40)
  for (int r = g; r < ge; r++) {
    hx_v v = hx_mul(acc[r - g], sc);
    const int64_t idx = r * p + j; /* the element's index in the row */
    if (fm == HX_FIN_MIX)
      v = hx_fma(v, hx_col_load(f->alpha + idx, k), hx_col_load(f->beta + idx, k));
    if (direct) hx_col_put(y + r * sp + j, v, f, fs, k);
    else out[r] = v;
  }
}

#define HX_MP_GROUPS_MAX 4
_Static_assert((HX_MAX_M + HX_MPOINT_MAXG - 1) / HX_MPOINT_MAXG <= HX_MP_GROUPS_MAX,
               "hx_mpoint_acc: at most 4 groups");

/* All m outputs of column j into out[0..m) (groups written out: compile-time bounds). */
HX_INL void hx_mpoint_col(const float *src, int64_t p, int64_t sp, int64_t j, const hx_fin *f,
                          const int m, const uint64_t *neg, const int fm, const int half,
                          hx_v *out, const hx_col *k) {
  const int ng = (m + HX_MPOINT_MAXG - 1) / HX_MPOINT_MAXG, G = (m + ng - 1) / ng;
  hx_mpoint_grp(src, NULL, p, sp, j, f, m, neg, fm, 0, 0, G, 0, out, half, k);
  if (ng > 1)
    hx_mpoint_grp(src, NULL, p, sp, j, f, m, neg, fm, 0, G, 2 * G < m ? 2 * G : m, 0, out, half,
                  k);
  if (ng > 2)
    hx_mpoint_grp(src, NULL, p, sp, j, f, m, neg, fm, 0, 2 * G, 3 * G < m ? 3 * G : m, 0, out,
                  half, k);
  if (ng > 3) hx_mpoint_grp(src, NULL, p, sp, j, f, m, neg, fm, 0, 3 * G, m, 0, out, half, k);
}

/* One column of hx_mpoint_acc: j (its first element; with k->edge, the
 * runs' start) and, fused, j + p / 2. */
HX_INL void hx_mpoint_one(const float *src, float *y, int64_t p, int64_t sp, int64_t j,
                          const hx_fin *f, const int m, const uint64_t *neg, const int fm,
                          const int fs, const int fused, const hx_col *k) {
  const int ng = (m + HX_MPOINT_MAXG - 1) / HX_MPOINT_MAXG;
  hx_v out[HX_MAX_M], out2[HX_MAX_M];
  if (!fused && ng == 1) {
    hx_mpoint_grp(src, y, p, sp, j, f, m, neg, fm, fs, 0, m, 1, out, 0, k);
    return;
  }
  hx_mpoint_col(src, p, sp, j, f, m, neg, fm, fused ? 1 : 0, out, k);
  if (fused) hx_mpoint_col(src, p, sp, j + (p >> 1), f, m, neg, fm, 2, out2, k);
  HMX_UNROLL(40)
  for (int r = 0; r < m; r++) hx_col_put(y + r * sp + j, out[r], f, fs, k);
  if (fused) {
    HMX_UNROLL(40)
    for (int r = 0; r < m; r++) hx_col_put(y + r * sp + j + (p >> 1), out2[r], f, fs, k);
  }
}

/* Columns j0 <= j < j1; fused: the blocks' last stage done here (hx_mp_u),
 * j1 <= p / 2, and each iteration also does column j + p / 2. */
HX_INL void hx_mpoint_acc(const float *src, float *y, int64_t p, int64_t sp, int64_t j0,
                          int64_t j1, const hx_fin *f, const int m, const uint64_t *neg,
                          const int fm, const int fs, const int fused) {
  /* the next row's prefetch goes on here too (hx_pf): m vector loads per
   * column, 4m per iteration when fused (two columns, two loads per input) */
  hx_pf pf = hx_pf_cur;
  const int pfon = pf.p != NULL;
#if HX_EDGE
  /* y off its vector alignment: the columns a floats earlier, and the edge
   * column for the first one (hx_radix_impl says why; the m-point sums are
   * lane by lane too). Column t (j = t * HX_W) stays this call's. */
  const int a = (int)((uintptr_t)y / sizeof(float) % HX_W);
  if (fs == 0 && a != 0 && (uintptr_t)y % sizeof(float) == 0 && p >= HX_MP_EDGE_MIN_P) {
    const hx_col edge = {1, a, fused ? p >> 1 : p};
    for (int64_t j = j0; j < j1; j += HX_W) {
      if (pfon) hx_pf_tick(&pf, fused ? 4 * m : m);
      if (j == 0) hx_mpoint_one(src, y, p, sp, 0, f, m, neg, fm, 0, fused, &edge);
      else hx_mpoint_one(src, y, p, sp, j - a, f, m, neg, fm, 0, fused, &hx_plain);
    }
    if (pfon) hx_pf_cur = pf;
    return;
  }
#endif
  /* §fwht step 2: each j independently, HX_W of them per vector */
  for (int64_t j = j0; j < j1; j += HX_W) {
    if (pfon) hx_pf_tick(&pf, fused ? 4 * m : m);
    hx_mpoint_one(src, y, p, sp, j, f, m, neg, fm, fs, fused, &hx_plain);
  }
  if (pfon) hx_pf_cur = pf;
}

/* hx_mpoint_acc for the columns j0 <= j < j1 (multiples of HX_W), reading
 * src (may equal y); fused: j0 = 0, j1 = p / 2 (hx_mpoint_acc). */
HX_INL void hx_mpoint_fin(const float *src, float *y, int m, int64_t p, int64_t sp, int64_t j0,
                          int64_t j1, const hx_fin *f, const int fm, const int fs,
                          const int fused) {
  switch (m) {
  case 12: hx_mpoint_acc(src, y, p, sp, j0, j1, f, 12, hx_neg12, fm, fs, fused); break;
  case 20: hx_mpoint_acc(src, y, p, sp, j0, j1, f, 20, hx_neg20, fm, fs, fused); break;
  case 28: hx_mpoint_acc(src, y, p, sp, j0, j1, f, 28, hx_neg28, fm, fs, fused); break;
  case 40: hx_mpoint_acc(src, y, p, sp, j0, j1, f, 40, hx_neg40, fm, fs, fused); break;
  default: break;
  }
}

/* The mode (none, scale or mix) and the store kind hoisted out of the loop
 * (a streamed output with nothing to apply multiplies by scale = 1);
 * fused: a compile-time constant (hx_mpoint_fin). */
HX_INL void hx_mpoint_modes(const float *src, float *y, int m, int64_t p, int64_t sp, int64_t j0,
                            int64_t j1, const hx_fin *f, const int fused) {
  if (f->mode == HX_FIN_MIX) {
    if (f->stream) hx_mpoint_fin(src, y, m, p, sp, j0, j1, f, HX_FIN_MIX, 1, fused);
    else hx_mpoint_fin(src, y, m, p, sp, j0, j1, f, HX_FIN_MIX, 0, fused);
  } else if (f->mode == HX_FIN_NONE && !f->stream) {
    hx_mpoint_fin(src, y, m, p, sp, j0, j1, f, HX_FIN_NONE, 0, fused);
  } else {
    if (f->stream) hx_mpoint_fin(src, y, m, p, sp, j0, j1, f, HX_FIN_SCALE, 1, fused);
    else hx_mpoint_fin(src, y, m, p, sp, j0, j1, f, HX_FIN_SCALE, 0, fused);
  }
}

/* §fwht step 2 (+ step 3, §hadamard_mix) for columns j0 <= j < j1 of a row
 * whose block c starts at src + c * sp (y + c * sp); sp = p, or more in the
 * padded scratch of hx_row_padded. */
static void hx_mpoint(const float *src, float *y, int m, int64_t p, int64_t sp, int64_t j0,
                      int64_t j1, const hx_fin *f) {
  hx_mpoint_modes(src, y, m, p, sp, j0, j1, f, 0);
}

#if HX_FUSE_LAST
/* hx_mpoint of a whole row whose blocks still lack their last stage. */
static void hx_mpoint_fused(const float *src, float *y, int m, int64_t p, const hx_fin *f) {
  hx_mpoint_modes(src, y, m, p, p, 0, p >> 1, f, 1);
}
#endif

/* Rows of m > 1 blocks that are one chunk each (768, 1536, ...) or two (avx2
 * 1536, avx512 12288, ...): all blocks take one chunk pass (hx_chunk_multi),
 * then the m-point pass, which for blocks of two chunks also does their last
 * butterfly stage (hx_mpoint_fused; hx_row). */
static int hx_mpoint_row_one_pass(int m, int lp) {
  /* HX_FUSE_LAST: per ISA (fwht_<isa>.c) */
  return m > 1 && lp <= HX_LOG2W + HX_CHUNK_LOG2 + HX_FUSE_LAST;
}

/* One row; tmp: y, or n floats of scratch for the passes before the last. */
static void hx_row(const float *x, float *y, float *tmp, int64_t n, int m, int64_t p,
                   const hx_fin *f) {
  const int lp = hx_log2(p); /* p >= HX_W (hx_run takes smaller blocks elsewhere) */
  if (hx_mpoint_row_one_pass(m, lp)) {
    /* §fwht step 1 for all m blocks in one chunk pass (one chunk = one block,
     * or half a block whose last stage the m-point pass does; the blocks are
     * contiguous), then step 2 (+ step 3, §hadamard_mix). */
    const int fused = lp > HX_LOG2W + HX_CHUNK_LOG2;
    hx_chunk_multi(x, tmp, n, lp - fused - HX_LOG2W);
#if HX_FUSE_LAST
    if (fused) {
      hx_mpoint_fused(tmp, y, m, p, f);
      return;
    }
#endif
    hx_mpoint(tmp, y, m, p, p, 0, p, f);
    return;
  }
  /* §fwht step 1 for each of the m blocks; with m = 1 the last pass also does step 3 */
  for (int c = 0; c < m; c++)
    hx_butterflies(x + c * p, tmp + c * p, m == 1 ? y + c * p : tmp + c * p, lp, c * p,
                   m == 1 ? f : &hx_fin_none);
  /* §fwht step 2 (+ step 3, §hadamard_mix), tmp -> y */
  if (m > 1) hx_mpoint(tmp, y, m, p, p, 0, p, f);
}

/* m > 1 rows whose blocks lie 4 KiB or more apart (p >= HX_MP_PAD_MIN_P,
 * not one-pass rows) and that have more blocks than the L1 has ways (m >=
 * HX_MP_PAD_MIN_M) take their passes in a scratch whose blocks lie
 * HX_MP_PAD floats further apart, then are copied to y. In the row's own
 * layout the m-point pass's column j reads and writes one line in each of
 * the m blocks, all in one set of the L1 (12 ways on Zen 5 and on Intel's
 * recent cores): with m = 20 or 28 the first lines are evicted before their
 * outputs are stored and come back from L2. One line of padding per block
 * spreads them over m sets. Zen 5, one thread, batch in L2, in place, 16
 * bytes off: avx512 20480 / 28672 / 40960 / 57344 1.3x faster, avx2 2.1-2.5x;
 * m = 12, whose 12 lines fit the ways, 1.0-1.1x slower (so not taken).
 * Where the tuning profile says so (fwht_mp_pad: on Intel avx512 read
 * 20-33% slower this way, and from memory only avx2 gains). The m-point
 * pass runs in place in the scratch and the blocks are copied after it:
 * reading the scratch while writing y's unpadded blocks left the stores'
 * lines in one set, and measured as slow as no padding. The copy and the
 * scratch change no value. */
#ifndef HX_MP_PAD_MIN_P
#define HX_MP_PAD_MIN_P 1024
#endif
#ifndef HX_MP_PAD_MIN_M
#define HX_MP_PAD_MIN_M 20
#endif
#define HX_MP_PAD 16 /* floats: one cache line; keeps each block on a line */
static void hx_row_padded(const float *x, float *y, float *pad, int m, int64_t p,
                          const hx_fin *f) {
  const int lp = hx_log2(p);
  const int64_t sp = p + HX_MP_PAD;
  /* §fwht step 1 for each of the m blocks, into the scratch */
  for (int c = 0; c < m; c++)
    hx_butterflies(x + c * p, pad + c * sp, pad + c * sp, lp, c * p, &hx_fin_none);
  /* §fwht step 2 (+ step 3, §hadamard_mix), in place in the scratch */
  hx_mpoint(pad, pad, m, p, sp, 0, p, f);
  for (int c = 0; c < m; c++) memcpy(y + c * p, pad + c * sp, (size_t)p * sizeof(float));
}

/* ---- One long row over several threads (batch smaller than the threads).
 * Every unit of work below (a block, a column of a radix pass, a column j of
 * the m-point transform) is independent of the others within its stage, and
 * the stages are separated by the parallel loops' barriers, so the bits do
 * not depend on the thread count. */

/* Columns q0 <= q < q1 of one radix pass (hx_radix_impl's (g, j) pairs, in
 * that order). */
HX_INL void hx_radix_cols_impl(float *d, int64_t h, int64_t base, const hx_fin *f, int64_t q0,
                               int64_t q1, const int r, const int fm, const int fs) {
  const int T = 1 << r;
  const int64_t cols = h / HX_W;
  /* columns are independent (§fwht step 1: pairs of a stage) */
  for (int64_t q = q0; q < q1; q++) {
    const int64_t g = q / cols;
    const int64_t j = g * (h << r) + (q - g * cols) * HX_W;
    hx_v v[1 << HX_RADIX_LOG2];
    HMX_UNROLL(16)
    for (int t = 0; t < T; t++) v[t] = hx_load(d + j + t * h);
    /* §fwht step 1, strides h .. h*2^(r-1) in increasing order */
    hx_bfly_stages(v, T, r);
    /* §fwht step 3 / §hadamard_mix when this is the row's last pass */
    HMX_UNROLL(16)
    for (int t = 0; t < T; t++)
      hx_put(d + j + t * h, hx_finish(v[t], f, base + j + t * h, fm), f, fs);
  }
}

static void hx_radix_cols(float *d, int64_t h, int64_t base, const hx_fin *f, int64_t q0,
                          int64_t q1, int r) {
  switch (r) {
  case 1: hx_radix_cols_impl(d, h, base, f, q0, q1, 1, -1, -1); break;
  case 2: hx_radix_cols_impl(d, h, base, f, q0, q1, 2, -1, -1); break;
  case 3: hx_radix_cols_impl(d, h, base, f, q0, q1, 3, -1, -1); break;
#if HX_RADIX_LOG2 >= 4
  case 4: hx_radix_cols_impl(d, h, base, f, q0, q1, 4, -1, -1); break;
#endif
  default: break;
  }
}

/* hx_stages with each pass's columns split over nt threads. */
static void hx_stages_par(float *d, int64_t len, int s0, int s1, const hx_fin *f, int nt) {
  while (s0 < s1) {
    int left = s1 - s0;
    int most = s0 >= HX_FAR_LOG2 && HX_RADIX_LOG2 > 3 ? 3 : HX_RADIX_LOG2;
    int passes = (left + most - 1) / most;
    int r = (left + passes - 1) / passes;
    const hx_fin *pf = r == left ? f : &hx_fin_none;
    const int64_t h = (int64_t)1 << s0, q = len >> (r + HX_LOG2W);
    /* §fwht step 1: one pass of stages, columns independent */
    HMX_OMP_FOR(nt)
    for (int t = 0; t < nt; t++) hx_radix_cols(d, h, 0, pf, q * t / nt, q * (t + 1) / nt, r);
    s0 += r;
  }
}

/* One row, p >= 2^16 > one chunk (so lp > HX_BLOCK_LOG2 or the blocks of m > 1). */
static void hx_row_par(const float *x, float *y, int m, int64_t p, const hx_fin *f, int nt) {
  const int lp = hx_log2(p);
  if (m == 1) {
    const int lb = lp < HX_BLOCK_LOG2 ? lp : HX_BLOCK_LOG2;
    const int64_t nb = p >> lb;
    /* §fwht step 1, strides < 2^lb: blocks independent */
    HMX_OMP_FOR(nt)
    for (int64_t b = 0; b < nb; b++) {
      const int64_t s = b << lb;
      hx_block(x + s, y + s, y + s, lb, s, lb == lp ? f : &hx_fin_none);
    }
    /* §fwht step 1, strides >= 2^lb, then step 3 in the last pass */
    hx_stages_par(y, p, lb, lp, f, nt);
    return;
  }
  /* §fwht step 1: the m blocks independent */
  HMX_OMP_FOR(nt)
  for (int c = 0; c < m; c++)
    hx_butterflies(x + c * p, y + c * p, y + c * p, lp, c * p, &hx_fin_none);
  /* §fwht step 2 (+ step 3, §hadamard_mix): columns j independent */
  const int64_t cols = p / HX_W;
  HMX_OMP_FOR(nt)
  for (int t = 0; t < nt; t++)
    hx_mpoint(y, y, m, p, p, cols * t / nt * HX_W, cols * (t + 1) / nt * HX_W, f);
}

/* Rows of m = 1 and n <= one chunk, rows [b0, b1): one chunk pass per row. */
HX_INL void hx_small_rows_impl(const float *x, float *y, int64_t b0, int64_t b1, int64_t n,
                               const hx_fin *f, const int lr, const int fm, const int fs,
                               int ahead) {
  /* rows independent (§fwht, per row) */
  for (int64_t b = b0; b < b1; b++) {
    if (ahead) hx_pf_ahead(x + b * n, n, x + b1 * n);
    hx_chunk_impl(x + b * n, y + b * n, n, 0, f, lr, 0, fm, fs, 0);
  }
}

HX_INL void hx_small_rows_fin(const float *x, float *y, int64_t b0, int64_t b1, int64_t n,
                              const hx_fin *f, int lr, const int fm, const int fs, int ahead) {
  switch (lr) {
  case 0: hx_small_rows_impl(x, y, b0, b1, n, f, 0, fm, fs, ahead); break;
  case 1: hx_small_rows_impl(x, y, b0, b1, n, f, 1, fm, fs, ahead); break;
  case 2: hx_small_rows_impl(x, y, b0, b1, n, f, 2, fm, fs, ahead); break;
  case 3: hx_small_rows_impl(x, y, b0, b1, n, f, 3, fm, fs, ahead); break;
#if HX_CHUNK_LOG2 >= 4
  case 4: hx_small_rows_impl(x, y, b0, b1, n, f, 4, fm, fs, ahead); break;
#endif
#if HX_CHUNK_LOG2 >= 5
  case 5: hx_small_rows_impl(x, y, b0, b1, n, f, 5, fm, fs, ahead); break;
#endif
  default: break;
  }
}

/* The mode and the store kind hoisted out of the loops (fwht's cases). */
static void hx_small_rows(const float *x, float *y, int64_t b0, int64_t b1, int64_t n,
                          const hx_fin *f, int lr, int ahead) {
  if (f->mode == HX_FIN_NONE && !f->stream)
    hx_small_rows_fin(x, y, b0, b1, n, f, lr, HX_FIN_NONE, 0, ahead);
  else if (f->mode == HX_FIN_SCALE && !f->stream)
    hx_small_rows_fin(x, y, b0, b1, n, f, lr, HX_FIN_SCALE, 0, ahead);
  else if (f->mode == HX_FIN_SCALE)
    hx_small_rows_fin(x, y, b0, b1, n, f, lr, HX_FIN_SCALE, 1, ahead);
  else hx_small_rows_fin(x, y, b0, b1, n, f, lr, -1, -1, ahead);
}

/* Rows [b0, b1) with p < HX_W (a block fills no register: n = 2, 4, 8 (avx2
 * 2, 4), m * 1 ... m * HX_W/2), HX_W rows at a time, transposed: scr[e][r] =
 * row r's element e, so that each element of HX_W rows is one vector and
 * every stride of §fwht step 1 is one between vectors. Then step 1 and
 * step 2 (hx_mpoint on blocks of p vectors) run on whole vectors, lane r
 * doing row r's operations in §fwht's order, and step 3 (and §hadamard_mix's
 * fma) as the rows go back. Lanes past the batch hold zeros and are dropped.
 * Zen 5, one thread, 256 KiB in L2, against the element loop this replaced:
 * n = 48 / 80 / 112 / 40 / 160 (m = 40) 9.4 / 11.8 / 10.1 / 13.0 / 15.7x
 * faster (avx2; avx512 the same, its p = 8 rows going to avx2). The
 * transposition is scalar moves: at p = 8 the avx2 kernel's own blocks beat
 * it (n = 96: 0.022 ms against 0.038 for n = 48 of the same bytes). */
#define HX_VERT_MAX (HX_MAX_M * HX_W / 2) /* the longest such row */
static void hx_rows_vertical(const float *x, float *y, int64_t b0, int64_t b1, int64_t n, int m,
                             int64_t p, const hx_fin *f) {
  _Alignas(64) float scr[HX_VERT_MAX * HX_W];
  for (int64_t g = b0; g < b1; g += HX_W) {
    const int64_t nr = b1 - g < HX_W ? b1 - g : HX_W;
    for (int64_t e = 0; e < n; e++)
      for (int64_t r = 0; r < HX_W; r++) scr[e * HX_W + r] = r < nr ? x[(g + r) * n + e] : 0.0f;
    /* §fwht step 1: strides 1, 2, .. p/2 (in elements) in order, in each block */
    for (int64_t h = 1; h < p; h *= 2)
      for (int64_t c = 0; c < m; c++)
        for (int64_t i = 0; i < p; i += 2 * h)
          for (int64_t j = i; j < i + h; j++) {
            float *a = scr + (c * p + j) * HX_W, *b = a + h * HX_W;
            const hx_v va = hx_load(a), vb = hx_load(b);
            hx_store(a, hx_add(va, vb));
            hx_store(b, hx_sub(va, vb));
          }
    /* §fwht step 2: element (c, j) of the blocks is vector c * p + j: blocks
     * of p vectors, columns j * HX_W */
    if (m > 1) hx_mpoint(scr, scr, m, p * HX_W, p * HX_W, 0, p * HX_W, &hx_fin_none);
    /* §fwht step 3 (and §hadamard_mix), back into the rows */
    for (int64_t r = 0; r < nr; r++) {
      float *yr = y + (g + r) * n;
      for (int64_t e = 0; e < n; e++) {
        float v = scr[e * HX_W + r];
        if (f->mode != HX_FIN_NONE) v = v * f->scale;
        if (f->mode == HX_FIN_MIX) v = fmaf(v, f->alpha[e], f->beta[e]);
        yr[e] = v;
      }
    }
  }
}

static hmx_status hx_run(const float *x, float *y, int64_t batch, int64_t n, int m, hx_fin fin,
                         int threads) {
  if (m < 1 || n < 1 || batch < 0 || n % m != 0) return HMX_ERR_UNSUPPORTED;
  if (m > 1 && !hx_neg_table(m)) return HMX_ERR_UNSUPPORTED;
  const int64_t p = n / m;
  if (p & (p - 1)) return HMX_ERR_UNSUPPORTED;
  if (p < HX_W) {
    /* HX_W rows at a time (hx_rows_vertical); row groups over threads */
    const int64_t groups = (batch + HX_W - 1) / HX_W;
    const int ntg = hmx_thread_count(threads, groups);
    HMX_FOR_THREADS(ntg, t, {
      const int64_t g0 = groups * t / ntg * HX_W, g1 = groups * (t + 1) / ntg * HX_W;
      hx_rows_vertical(x, y, g0, g1 < batch ? g1 : batch, n, m, p, &fin);
    });
    return HMX_OK;
  }
  const int nt = hmx_thread_count(threads, batch);
  const int lp = hx_log2(p);
  const int ntl = n >= ((int64_t)1 << 16) ? hmx_thread_count(threads, n >> 15) : 1;
  if (batch < ntl) {
    /* Few long rows: one row at a time, its independent parts over threads. */
    for (int64_t b = 0; b < batch; b++) hx_row_par(x + b * n, y + b * n, m, p, &fin, ntl);
    return HMX_OK;
  }
  /* An output much larger than the caches is written with non-temporal
   * stores in the last pass (it will not be read back from cache anyway), the
   * earlier passes of a row going to a per-thread scratch row, so that memory
   * sees one read of x and one write of y, as a copy does. Needs every row
   * aligned to the vector size (and y on a cache line, for hx_radix_impl's
   * paired half-line stores). Which store instruction writes a value does
   * not change it. */
  fin.stream = lp >= HX_LOG2W && x != y && (uintptr_t)y % 64 == 0 &&
               batch * n * (int64_t)sizeof(float) >= HX_STREAM_BYTES &&
               n <= HX_STREAM_MAX_N && (m == 1 || HX_STREAM_MPOINT);
  /* Schedule choices that differ by CPU family (src/tuning.h); none changes
   * a value's operations. */
  const hmx_x86_tuning *tune = hmx_x86_tuning_current();
  /* A batch far larger than the caches: rows are prefetched (hx_pf_ahead,
   * hx_pf) and blocks do not split their chunks (hx_split_cur). */
  const int from_memory = batch * n * (int64_t)sizeof(float) >= HX_PF_BYTES;
  /* rows, sub-blocks and blocks of two passes in one call (hx_two_pass_rows) */
  const int two_pass_on = HX_TWO_PASS && tune->fwht_two_pass_rows;
  const int chunk_extra = tune->fwht_two_pass_chunk_extra;
  if (m == 1 && lp >= HX_LOG2W && lp <= HX_LOG2W + HX_CHUNK_LOG2) {
    /* Short rows: contiguous ranges of rows per thread, one chunk pass per
     * row. Rows are independent (§fwht, per row): any thread count gives
     * the same bits. */
    HMX_FOR_THREADS(nt, t, {
      hx_small_rows(x, y, batch * t / nt, batch * (t + 1) / nt, n, &fin, lp - HX_LOG2W,
                    from_memory);
      if (fin.stream) hx_fence();
    });
    return HMX_OK;
  }
  if (two_pass_on && m == 1 && !from_memory && !fin.stream && hx_two_pass_fits(lp)) {
    /* Rows are independent (§fwht, per row): any thread count gives the same bits. */
    HMX_FOR_THREADS(nt, t, {
      hx_two_pass_rows(x, y, batch * t / nt, batch * (t + 1) / nt, n, &fin, lp, chunk_extra);
    });
    return HMX_OK;
  }
  /* Prefetch the next row while a row's passes run (hx_pf) when the batch
   * is far larger than the caches and a row takes more than one pass: one
   * line per HX_PF_LOADS 64-byte loads (measured on Zen 5 for n = 4096 ..
   * 65536: 2 beats 1, 3, 4 and 6, which finish the next row too early or
   * too late). */
  int pf_every = 0;
  const int isa = HX_W == 16; /* the profile's per-backend fields: [0] avx2, [1] avx512 */
  if (from_memory && p >= tune->fwht_pf_min_p[isa])
    pf_every = HX_PF_LOADS * (64 / (HX_W * (int)sizeof(float)));
  /* m > 1 rows whose blocks are one chunk each (768, 1536, ...): their one
   * pass over memory (hx_chunk_multi) prefetches the whole next row, a line
   * per line it loads (the m-point pass after it stays in L1), where the
   * profile says so (fwht_pf_mpoint_rows). */
  else if (from_memory && hx_mpoint_row_one_pass(m, lp) && tune->fwht_pf_mpoint_rows[isa])
    pf_every = 64 / (HX_W * (int)sizeof(float));
  /* Where the profile says so, rows whose blocks take three passes (16384,
   * 65536) prefetch one line per three loads instead of two, so that the
   * next row arrives over all of the passes, not the first two thirds
   * (fwht_pf_spread), and into L2 only (fwht_pf_l2_min_p). Intel
   * Xeon, avx512, from memory, in place, interleaved A/B, 5-9 rounds: both
   * together n = 16384 / 32768 / 65536 +15% (avx2 +13-17%); T1 alone +6%
   * there and 8192 +6-11% (4096 +0-2%, 1024 -5% to +1%: so from 8192); the
   * spread alone +10-11% (a fixed one line per three loads made 4096, whose
   * blocks take two passes, 8% slower: hence counted per row). The m-point
   * pass counts its loads too, so m > 1 rows spread the next row over it:
   * 768 / 1536 / 3072 / 6144 +17% / +22% / +24% / +20%, whose one chunk
   * pass had issued a whole row of prefetches at once (more than the L1's
   * fill buffers), and 12288 ... 40960 +11-18%. */
  const int pf_spread = tune->fwht_pf_spread;
  const int pf_l2 = tune->fwht_pf_l2_min_p > 0 && p >= tune->fwht_pf_l2_min_p;
  /* Rows that do not start on a cache line (a malloc'd batch is 16 bytes
   * past one) and take passes in L2 take their intermediate passes in a
   * scratch row that does: an unaligned vector access touches two lines,
   * and in place every pass would pay it (the first pass still reads x and
   * the last writes y where they are). Zen 5, avx512, in place, 16 bytes
   * off, three interleaved rounds: n = 16384 from memory 24-26 -> 35-36 GB/s
   * (aligned: 45), 32768 25-26 -> 33-34, in L2 16384 40-47 -> 51; avx2 the
   * same within 3%. Not for rows that stay in L1 (n = 1024, 2048, 8192:
   * 6-12% slower with the scratch) nor for rows of 2^HX_BLOCK_LOG2 (65536:
   * the row, the scratch and the prefetched next row crowd the L2; -5%).
   * Only where the tuning profile says so: on Intel (Emerald Rapids) the
   * scratch made n = 16384 40% slower than in place. */
  const int unaligned =
      tune->fwht_unaligned_scratch &&
      ((uintptr_t)x | (uintptr_t)y | (uintptr_t)(n * (int64_t)sizeof(float))) % 64 != 0 &&
      p > ((int64_t)1 << HX_L1_LOG2) && n < ((int64_t)1 << HX_BLOCK_LOG2);
  const int with_scratch = (fin.stream && (x != y || m > 1)) || unaligned;
  const int two_pass = two_pass_on && HX_TWO_PASS_MEM && m == 1 && !fin.stream && !unaligned &&
                       hx_two_pass_fits(lp);
  const size_t scratch_bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
  /* m > 1 rows of blocks 4 KiB or more apart: hx_row_padded (never streamed:
   * HX_STREAM_MAX_N is far below m * HX_MP_PAD_MIN_P) */
  const int padded = m >= HX_MP_PAD_MIN_M && p >= HX_MP_PAD_MIN_P &&
                     tune->fwht_mp_pad[isa] >= (from_memory ? 2 : 1) && !fin.stream &&
                     !hx_mpoint_row_one_pass(m, lp);
  const size_t pad_bytes = (size_t)m * (size_t)(p + HX_MP_PAD) * sizeof(float);
  /* Rows are independent (§fwht, per row): any thread count gives the same
   * bits. Contiguous ranges of rows per thread, each thread with its scratch
   * row (without one, or if it cannot be had, y itself). */
  HMX_FOR_THREADS(nt, t, {
    hx_split_cur = !from_memory && tune->fwht_split_chunks;
    hx_two_pass_cur = two_pass_on ? 1 + chunk_extra : 0;
    float *scratch = with_scratch ? aligned_alloc(64, scratch_bytes) : NULL;
    float *mpad = padded ? aligned_alloc(64, pad_bytes) : NULL; /* NULL: hx_row */
    /* rows independent (§fwht, per row) */
    const int64_t b_end = batch * (t + 1) / nt;
    /* the vector loads of this thread's first row (hx_pf.loads), 0 before */
    int64_t row_loads = 0;
    for (int64_t b = batch * t / nt; b < b_end; b++) {
      if (pf_every > 0 && b + 1 < batch) {
        hx_pf_cur.p = (const char *)(x + (b + 1) * n);
        hx_pf_cur.e = hx_pf_cur.p + n * (int64_t)sizeof(float);
        hx_pf_cur.credit = 0;
        hx_pf_cur.every = pf_every;
        /* spread over all of the row's passes: one line per (loads of a
         * row / lines of a row) loads, as counted on the first row */
        if (pf_spread && row_loads > 0) {
          const int64_t every = row_loads / (n * (int64_t)sizeof(float) / 64);
          hx_pf_cur.every = every > 1 ? (int)every : 1;
        }
        hx_pf_cur.l2 = pf_l2;
        hx_pf_cur.loads = 0;
      }
      if (HX_PF_AHEAD_ROWS && from_memory && pf_every == 0)
        hx_pf_ahead(x + b * n, n, x + b_end * n);
      if (mpad)
        hx_row_padded(x + b * n, y + b * n, mpad, m, p, &fin);
      else if (two_pass)
        hx_two_pass_row(x + b * n, scratch ? scratch : y + b * n, y + b * n, n, 0, &fin, lp);
      else
        hx_row(x + b * n, y + b * n, scratch ? scratch : y + b * n, n, m, p, &fin);
      if (row_loads == 0 && pf_every > 0) row_loads = hx_pf_cur.loads;
    }
    hx_pf_cur.p = hx_pf_cur.e = NULL;
    hx_split_cur = 0;
    hx_two_pass_cur = 0;
    free(scratch);
    free(mpad);
    if (fin.stream) hx_fence();
  });
  return HMX_OK;
}

/* scale = 1 (the unnormalised transform, as FFHT computes it) skips §fwht
 * step 3's multiply (docs/NUMERICS.md, "What a backend may and may not do"),
 * the same bits: for n >= 2 every output is the result of
 * an addition or subtraction, so never a signalling NaN, and x * 1 = x for
 * every other float (signed zeros, subnormals, infinities, quiet NaNs with
 * their payload). n = 1 keeps the multiply, which quiets a signalling NaN
 * input. One vector operation less per vector: n = 256 in L2 has 11, not 12
 * (docs/results/session63). HX_UNIT_SCALE_SKIP=0 keeps the multiply, for A/B. */
#ifndef HX_UNIT_SCALE_SKIP
#define HX_UNIT_SCALE_SKIP 1
#endif
hmx_status HX_FWHT_FN(const hmx_fwht_args *a) {
  const int skip = HX_UNIT_SCALE_SKIP && a->scale == 1.0f && a->n >= 2;
  hx_fin fin = {skip ? HX_FIN_NONE : HX_FIN_SCALE, a->scale, NULL, NULL, 0};
  return hx_run(a->x, a->y, a->batch, a->n, a->m, fin, a->threads);
}

hmx_status HX_MIX_FN(const hmx_hadamard_mix_args *a) {
  /* §hadamard_mix: scale = hmx_inv_sqrt_n(n), as the reference */
  hx_fin fin = {HX_FIN_MIX, hmx_inv_sqrt_n(a->n), a->alpha, a->beta, 0};
  return hx_run(a->x, a->y, a->batch, a->n, a->m, fin, a->threads);
}

#endif
