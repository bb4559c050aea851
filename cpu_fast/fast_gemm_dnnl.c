/* Fast-tier GEMM through oneDNN's matmul primitive (docs/NUMERICS.md, "Fast
 * tier", gemm). oneDNN picks its own blocking and reduction order (and so its
 * rounding); the bound is that of any f32 dot product, |c - c*| <= gamma_K
 * |a||b| + u|c|, checked by tests/test_fast_tier.c.
 *
 * A primitive is created once per (M, N, K, trans_b, bias) and cached:
 * creating one costs far more than running a small GEMM. The cache is a
 * mutex-protected list. Each entry also keeps a pool of execution sets (a
 * stream and the memory objects, whose data pointers are set per call):
 * a call takes one out of the pool under the lock and puts it back after,
 * so concurrent callers never share one, and a decode-sized GEMM does not
 * pay for creating them (about 5 us a call on this machine). Primitives run
 * with a user scratchpad, so they hold no mutable state either.
 *
 * BF16 weights (docs/NUMERICS.md "Fast tier", gemm with bf16 weights): where
 * oneDNN runs AVX512_BF16 code (hmx_fast_gemm_bf16_ok), a is rounded to bf16
 * into the execution set's buffer and the matmul is bf16 x bf16 with f32
 * accumulation (vdpbf16ps: two products per lane, at twice the f32 fma rate)
 * on the weights as they are stored; elsewhere src/ops.c stages them to f32. */
#include "cpu_fast.h"
#include "internal.h"
#include "parallel.h"

#include <dnnl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

typedef struct gemm_key {
  int64_t m, n, k;
  int trans_b, has_bias;
  int bf16; /* a (rounded here) and b in bf16, else both f32 */
} gemm_key;

/* One caller's stream and memory objects for an entry (handles set per call). */
typedef struct exec_set {
  dnnl_stream_t stream;
  dnnl_memory_t mem[5]; /* a, b, c, bias (or NULL), scratchpad (or NULL) */
  void *scratch;
  uint16_t *a16; /* a rounded to bf16 ([M, K], bf16 entries only) */
  struct exec_set *next;
} exec_set;

typedef struct gemm_entry {
  gemm_key key;
  exec_set *pool;       /* free sets, under cache_lock */
  dnnl_primitive_t prim;
  dnnl_memory_desc_t a_md, b_md, bias_md, c_md, scratch_md;
  size_t scratch_bytes;
  struct gemm_entry *next;
} gemm_entry;

/* Past this many shapes new ones run uncached (created and destroyed per
 * call) rather than grow without bound. */
#define CACHE_MAX 512

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static gemm_entry *cache_head;
static int cache_count;
static dnnl_engine_t engine;
static int engine_failed;

static hmx_status engine_get(dnnl_engine_t *out) {
  /* under cache_lock */
  if (!engine && !engine_failed) {
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
      engine = NULL;
      engine_failed = 1;
    }
  }
  if (!engine) return hmx_fail(HMX_ERR_INTERNAL, "gemm (fast): oneDNN CPU engine unavailable");
  *out = engine;
  return HMX_OK;
}

static void set_free(exec_set *x) {
  for (int i = 0; i < 5; i++)
    if (x->mem[i]) dnnl_memory_destroy(x->mem[i]);
  if (x->stream) dnnl_stream_destroy(x->stream);
  free(x->scratch);
  free(x->a16);
  free(x);
}

static void entry_free(gemm_entry *e) {
  while (e->pool) {
    exec_set *x = e->pool;
    e->pool = x->next;
    set_free(x);
  }
  dnnl_primitive_destroy(e->prim);
  free(e);
}

/* A new execution set for e (handles NULL until the call sets them). */
static exec_set *set_new(const gemm_entry *e, dnnl_engine_t eng) {
  exec_set *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  dnnl_status_t st = dnnl_stream_create(&x->stream, eng, dnnl_stream_default_flags);
  if (st == dnnl_success) st = dnnl_memory_create(&x->mem[0], &e->a_md, eng, DNNL_MEMORY_NONE);
  if (st == dnnl_success) st = dnnl_memory_create(&x->mem[1], &e->b_md, eng, DNNL_MEMORY_NONE);
  if (st == dnnl_success) st = dnnl_memory_create(&x->mem[2], &e->c_md, eng, DNNL_MEMORY_NONE);
  if (st == dnnl_success && e->key.has_bias)
    st = dnnl_memory_create(&x->mem[3], &e->bias_md, eng, DNNL_MEMORY_NONE);
  if (st == dnnl_success && e->scratch_bytes) {
    x->scratch = malloc(e->scratch_bytes);
    st = x->scratch ? dnnl_memory_create(&x->mem[4], &e->scratch_md, eng, x->scratch)
                    : dnnl_out_of_memory;
  }
  if (st == dnnl_success && e->key.bf16) {
    x->a16 = hmx_alloc_array((size_t)e->key.m * (size_t)e->key.k, sizeof *x->a16);
    if (!x->a16) st = dnnl_out_of_memory;
  }
  if (st != dnnl_success) {
    set_free(x);
    return NULL;
  }
  return x;
}

static void free_cache(void) {
  pthread_mutex_lock(&cache_lock);
  while (cache_head) {
    gemm_entry *e = cache_head;
    cache_head = e->next;
    entry_free(e);
  }
  cache_count = 0;
  if (engine) dnnl_engine_destroy(engine);
  engine = NULL;
  pthread_mutex_unlock(&cache_lock);
}

static int key_eq(const gemm_key *x, const gemm_key *y) {
  return x->m == y->m && x->n == y->n && x->k == y->k && x->trans_b == y->trans_b &&
         x->has_bias == y->has_bias && x->bf16 == y->bf16;
}

/* A new primitive for key (not cached); NULL on failure (message set). */
static gemm_entry *create_entry(const gemm_key *key, dnnl_engine_t eng) {
  gemm_entry *e = calloc(1, sizeof *e);
  if (!e) {
    hmx_fail(HMX_ERR_NO_MEMORY, "gemm (fast): out of memory");
    return NULL;
  }
  e->key = *key;
  dnnl_dims_t a_dims = {key->m, key->k}, b_dims = {key->k, key->n};
  dnnl_dims_t bias_dims = {1, key->n}, c_dims = {key->m, key->n};
  const dnnl_data_type_t in_dt = key->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_status_t st = dnnl_memory_desc_init_by_tag(&e->a_md, 2, a_dims, in_dt, dnnl_ab);
  /* b as [K, N] row-major (ab), or [N, K] row-major seen as [K, N] (ba) */
  if (st == dnnl_success)
    st = dnnl_memory_desc_init_by_tag(&e->b_md, 2, b_dims, in_dt,
                                      key->trans_b ? dnnl_ba : dnnl_ab);
  if (st == dnnl_success && key->has_bias)
    st = dnnl_memory_desc_init_by_tag(&e->bias_md, 2, bias_dims, dnnl_f32, dnnl_ab);
  if (st == dnnl_success)
    st = dnnl_memory_desc_init_by_tag(&e->c_md, 2, c_dims, dnnl_f32, dnnl_ab);
  dnnl_matmul_desc_t desc;
  if (st == dnnl_success)
    st = dnnl_matmul_desc_init(&desc, &e->a_md, &e->b_md, key->has_bias ? &e->bias_md : NULL,
                               &e->c_md);
  dnnl_primitive_attr_t attr = NULL;
  if (st == dnnl_success) st = dnnl_primitive_attr_create(&attr);
  if (st == dnnl_success)
    st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd = NULL;
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &desc, attr, eng, NULL);
  if (st == dnnl_success) {
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (smd) e->scratch_md = *smd;
    e->scratch_bytes = smd ? dnnl_memory_desc_get_size(smd) : 0;
    st = dnnl_primitive_create(&e->prim, pd);
  }
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) {
    free(e);
    hmx_fail(HMX_ERR_INTERNAL, "gemm (fast): oneDNN could not create a %s matmul for "
             "%lldx%lldx%lld (dnnl status %d)", key->bf16 ? "bf16" : "f32", (long long)key->m,
             (long long)key->n, (long long)key->k, (int)st);
    return NULL;
  }
  return e;
}

/* The cached entry for key (created on a miss); *owned = 1 when the cache is
 * full and the caller must destroy it after use. */
static hmx_status lookup(const gemm_key *key, gemm_entry **out, int *owned) {
  static int registered;
  *owned = 0;
  pthread_mutex_lock(&cache_lock);
  dnnl_engine_t eng = NULL;
  hmx_status s = engine_get(&eng);
  if (s != HMX_OK) {
    pthread_mutex_unlock(&cache_lock);
    return s;
  }
  if (!registered) {
    registered = 1;
    atexit(free_cache);
  }
  for (gemm_entry *e = cache_head; e; e = e->next)
    if (key_eq(&e->key, key)) {
      pthread_mutex_unlock(&cache_lock);
      *out = e;
      return HMX_OK;
    }
  /* created under the lock: two threads missing on one shape build it once */
  gemm_entry *e = create_entry(key, eng);
  if (!e) {
    pthread_mutex_unlock(&cache_lock);
    return HMX_ERR_INTERNAL; /* message set by create_entry */
  }
  if (cache_count < CACHE_MAX) {
    e->next = cache_head;
    cache_head = e;
    cache_count++;
  } else {
    *owned = 1;
  }
  pthread_mutex_unlock(&cache_lock);
  *out = e;
  return HMX_OK;
}

int hmx_fast_gemm_cache_size(void) {
  pthread_mutex_lock(&cache_lock);
  int n = cache_count;
  pthread_mutex_unlock(&cache_lock);
  return n;
}

/* oneDNN's OpenMP runtime uses omp_get_max_threads() of the caller: set it
 * to `threads` (> 0) for one call; returns the value to restore. */
static int threads_enter(int threads) {
#if defined(_OPENMP)
  const int saved = omp_get_max_threads();
  if (threads > 0) omp_set_num_threads(threads);
  return saved;
#else
  (void)threads;
  return 0;
#endif
}

static void threads_leave(int saved, int threads) {
#if defined(_OPENMP)
  if (threads > 0) omp_set_num_threads(saved);
#else
  (void)saved, (void)threads;
#endif
}

/* M = 1 through oneDNN's dnnl_sgemm (reached by fast_swiglu.c's one-token
 * last chunk; a decode gemm with M = 1 runs the exact kernel instead,
 * src/fast.h exact_rows): its matmul primitive runs
 * this product at 24-39% of dnnl_sgemm's speed (oneDNN 2.6, avx512, Zen 4;
 * 18-21% when posed as [N, K] x [K, 1]), where dnnl_sgemm has a GEMV kernel.
 * The bias is the initial c (beta = 1): the same bound (NUMERICS "Fast
 * tier": c = bias + a b, one sum per output, any order). */
static hmx_status run_gemv(const float *a, const float *b, const float *bias, float *c,
                           int64_t n, int64_t k, int trans_b, int threads) {
  for (int64_t j = 0; j < n; j++) c[j] = bias ? bias[j] : 0.0f;
  const int saved = threads_enter(threads);
  dnnl_status_t st = dnnl_sgemm('N', trans_b ? 'T' : 'N', 1, n, k, 1.0f, a, k, b,
                                trans_b ? k : n, bias ? 1.0f : 0.0f, c, n);
  threads_leave(saved, threads);
  if (st != dnnl_success)
    return hmx_fail(HMX_ERR_INTERNAL, "gemm (fast): dnnl_sgemm failed (dnnl status %d)", (int)st);
  return HMX_OK;
}

/* dst <- a rounded to bf16 (M K elements, 1/(2N) of the matmul's operations),
 * rows split over the threads from 16384 elements on. */
static void round_rows(uint16_t *dst, const float *a, int64_t m, int64_t k, int threads) {
  const hmx_fast_kernels *fk = hmx_fast_kernels_pick();
  const int nt = hmx_thread_count(threads, m * k / 16384);
  if (nt <= 1) {
    fk->to_bf16(dst, a, m * k);
    return;
  }
  HMX_OMP_FOR(nt)
  for (int64_t i = 0; i < m; i++) fk->to_bf16(dst + i * k, a + i * k, k);
}

/* c = a b + bias; b is f32, or bf16 when `bf16` (then a is rounded to bf16). */
static hmx_status run(const float *a, const void *b, int bf16, const float *bias, float *c,
                      int64_t m, int64_t n, int64_t k, int trans_b, int threads) {
  if (m == 0 || n == 0) return HMX_OK;
  if (k == 0) { /* an empty sum: c = bias, or 0 */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c[i * n + j] = bias ? bias[j] : 0.0f;
    return HMX_OK;
  }
  /* dnnl_sgemm is f32 only: a bf16 row goes through the matmul primitive */
  if (m == 1 && !bf16) return run_gemv(a, b, bias, c, n, k, trans_b, threads);
  gemm_key key = {m, n, k, trans_b ? 1 : 0, bias ? 1 : 0, bf16 ? 1 : 0};
  gemm_entry *e;
  int owned;
  hmx_status s = lookup(&key, &e, &owned);
  if (s != HMX_OK) return s;
  /* an execution set from the entry's pool, or a new one */
  pthread_mutex_lock(&cache_lock);
  exec_set *x = e->pool;
  if (x) e->pool = x->next;
  pthread_mutex_unlock(&cache_lock);
  if (!x) x = set_new(e, engine);
  dnnl_status_t st = x ? dnnl_success : dnnl_out_of_memory;
  if (st == dnnl_success && bf16) round_rows(x->a16, a, m, k, threads);
  if (st == dnnl_success)
    st = dnnl_memory_set_data_handle(x->mem[0], bf16 ? (void *)x->a16 : (void *)a);
  if (st == dnnl_success) st = dnnl_memory_set_data_handle(x->mem[1], (void *)b);
  if (st == dnnl_success) st = dnnl_memory_set_data_handle(x->mem[2], c);
  if (st == dnnl_success && bias) st = dnnl_memory_set_data_handle(x->mem[3], (void *)bias);
  if (st == dnnl_success) {
    dnnl_exec_arg_t args[5];
    int na = 0;
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, x->mem[0]};
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, x->mem[1]};
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, x->mem[2]};
    if (x->mem[3]) args[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, x->mem[3]};
    if (x->mem[4]) args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, x->mem[4]};
    const int saved = threads_enter(threads);
    st = dnnl_primitive_execute(e->prim, x->stream, na, args);
    if (st == dnnl_success) st = dnnl_stream_wait(x->stream);
    threads_leave(saved, threads);
  }
  if (owned) {
    if (x) set_free(x);
    entry_free(e);
  } else if (x) {
    pthread_mutex_lock(&cache_lock);
    x->next = e->pool;
    e->pool = x;
    pthread_mutex_unlock(&cache_lock);
  }
  if (st != dnnl_success)
    return hmx_fail(st == dnnl_out_of_memory ? HMX_ERR_NO_MEMORY : HMX_ERR_INTERNAL,
                    "gemm (fast): oneDNN matmul failed (dnnl status %d)", (int)st);
  return HMX_OK;
}

static pthread_once_t bf16_once = PTHREAD_ONCE_INIT;
static int bf16_native;

static void bf16_probe(void) {
  /* the ISA oneDNN dispatches to (it honours ONEDNN_MAX_CPU_ISA): its
   * avx512_core_bf16 level has every bit of the ones below it */
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  bf16_native = ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) ==
                (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}

int hmx_fast_gemm_bf16_ok(void) {
  pthread_once(&bf16_once, bf16_probe);
  return bf16_native;
}

hmx_status hmx_fast_gemm_dnnl(const hmx_gemm_args *g) {
  if (g->wdt == HMX_BF16 && g->b16 && hmx_fast_gemm_bf16_ok())
    return run(g->a, g->b16, 1, g->bias, g->c, g->m, g->n, g->k, g->trans_b, g->threads);
  if (g->wdt != HMX_F32 || !g->b)
    return hmx_fail(HMX_ERR_INTERNAL, "gemm (fast): weights must be f32, or bf16 on a CPU "
                    "with AVX512_BF16");
  return run(g->a, g->b, 0, g->bias, g->c, g->m, g->n, g->k, g->trans_b, g->threads);
}

hmx_status hmx_fast_matmul(const float *a, const void *b, hmx_dtype wdt, float *c, int64_t m,
                           int64_t n, int64_t k, int trans_b, int threads) {
  if (wdt != HMX_F32 && !(wdt == HMX_BF16 && hmx_fast_gemm_bf16_ok()))
    return hmx_fail(HMX_ERR_INTERNAL, "matmul (fast): weights of dtype %s not taken here",
                    hmx_dtype_name(wdt));
  return run(a, b, wdt == HMX_BF16, NULL, c, m, n, k, trans_b, threads);
}
