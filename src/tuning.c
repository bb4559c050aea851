/* The x86 tuning profiles (src/tuning.h) and the choice between them. */
#include "tuning.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

static const hmx_x86_tuning profiles[] = {
    /* AMD EPYC Zen 5 (family 1Ah). Sessions 16-17 (docs/results/session16,
     * session17) chose split chunks (hiding the 5-cycle latency of
     * cross-128-bit shuffles) and the aligned scratch row (n = 16384 from
     * memory 24-26 -> 35-37 GB/s) for the kernels of that time; rows of 2^12
     * or more prefetch the next row. Session 64 (docs/results/session64/,
     * tools/x86/fwht_ab.sh with a variant per profile, interleaved in one
     * process, 7-9 rounds, 16 bytes past a line as hmx bench) measured the
     * kernels of now, which gained the two-pass rows (session 23) and the
     * edge columns (session 62) on Intel: the old fields against these, in
     * L2, avx512 x FFHT at 1024 / 2048 / 4096 / 16384 1.77 / 1.43 / 1.75 /
     * 1.75 -> 2.29 / 2.31 / 2.36 / 2.07 (zen4's fields read the same), avx2
     * at 256 / 512 1.04 / 1.40 -> 1.55 / 1.61; from memory avx512 4096 /
     * 16384 / 65536 +32% / +20% / +19% in rows a second. The split chunks
     * now cost 16384 and 32768 in L2 20-23%, the scratch row 16384 in L2
     * 15%; the next-row prefetch stays at all levels and per two loads
     * (zen4's spread and L2-only hint: 16384 / 32768 / 65536 from memory
     * 8-9% slower). avx512's stride-1 stage by a shuffle, not two duplicating
     * loads (fwht_dup_load_avx512 = 0; -DHX_DUP_LOAD=0 in two A/B runs of 7
     * and 9 rounds): in L2 256 / 1024 / 2048 / 4096 4-7% faster, 768 3%
     * slower, 512 / 1536 / 8192 and from memory within the noise. Session
     * 65: an odd split's extra stage in the chunk pass
     * (fwht_two_pass_chunk_extra, -D variants of the split in 7 A/B runs of
     * 11-21 rounds, then the field itself in one run of 15): avx512 2048 in
     * L2 1-9% faster (median 3%), from memory 6-60% (the rounds' spread
     * wide); avx2 256 in L2 3-5%, from memory 0-7%. The one-token G16 GEMV
     * prefetch as intel's, 16 lines (gemv_pf_lines): hmx bench-model --config
     * small --decode 64 under zen and zen+gemv_pf_lines=16 alternating (the
     * spec through HMX_X86_TUNING), one thread: bf16 decode 37.9-40.1 ->
     * 42.3-43.1 and 33.1-38.3 -> 38.7-41.0 tokens/s, f16 35.1-36.7 ->
     * 38.1-40.4, f32 -2% (medians 24.8 / 24.2, the rounds overlapping); two
     * threads, paired rounds' medians bf16 +5%, f16 +7%, f32 -1%. A third
     * bf16 run once the VM had turned noisier, the committed default against
     * zen+gemv_pf_lines=0, 9 rounds: median of the paired ratios +3%
     * (0.85-1.25). Session 66 (docs/results/session66): m >= 20 rows of
     * blocks 4 KiB or more apart through the padded scratch (fwht_mp_pad),
     * -D variants in fwht_ab.sh, 7-9 rounds: avx512 20480 / 28672 / 40960 /
     * 57344 in L2 1.3x faster in three runs, from memory 3-22% slower (so
     * 1: in caches only); avx2 2.1-2.5x in L2 and 1.7-2.1x from memory
     * (2). */
    {.name = "zen",
     .measured_on = "AMD EPYC Zen 5, 2 vCPUs",
     .fwht_split_chunks = 0,
     .fwht_unaligned_scratch = 0,
     .fwht_pf_min_p = {4096, 4096},
     .fwht_pf_mpoint_rows = {0, 0},
     .fwht_pf_spread = 0,
     .fwht_pf_l2_min_p = 0,
     .fwht_two_pass_rows = 1,
     .fwht_two_pass_chunk_extra = 1,
     .fwht_mp_pad = {2, 1},
     .fwht_dup_load_avx512 = 0,
     .gemv_pf_lines = 16,
     .gemv_next_kib = 0},
    /* Intel Xeon, family 6 model 207 (Emerald Rapids; docs/results/session19):
     * the scratch row made n = 16384 40% slower in L2 and from memory (in
     * place: 11.6 -> 17-18 GB/s in L2; avx2 0.96x -> 1.26x FFHT); prefetching
     * the next row from 2^10 made n = 1024 / 2048 from memory 16.5 -> 24-25 and
     * 17.9 -> 23.4 GB/s (avx2 14 -> 19); split chunks no better (4096 in L2
     * 10% slower with them); m > 1 rows of one-chunk blocks prefetching the
     * next row: 768 / 1536 from memory 14.0-14.4 -> 19.1-19.4 / 14.2-14.8 ->
     * 17.4-17.5 GB/s (avx2 768 13.1 -> 16.7). Session 21
     * (docs/results/session21): the next row spread over all of a row's
     * passes (the m-point pass included) and, for blocks of 8192+, into L2
     * only: from memory 16384 ... 65536 +15% (avx512; +13-17% avx2), 8192
     * +6-11% (T1; 4096 +0-2%, 1024 -5% to +1%), 768 / 1536 / 3072 / 6144
     * +17% / +22% / +24% / +20%, 12288 ... 40960 (m = 12 ... 40) +11-18%.
     * Session 23 (docs/results/session23): rows of a chunk pass and one radix
     * pass without per-row dispatch, the stages split evenly between them
     * (fwht_two_pass_rows), batch in L2, one thread, interleaved A/B, 9 rounds:
     * avx512 16 bytes past a line n = 1024 / 2048 / 4096 +9% / +9% / +9%,
     * aligned and out of place +9% / +5% / +3% (8192 +4%); avx2 n = 128 /
     * 256 / 512 +56% / +23% / +14%; from memory, in place: avx512 1024 ...
     * 4096 +5-9%, avx2 128 ... 512 +5-21%; the same for hx_block's L1
     * sub-blocks and m > 1 blocks: 16384 +12% in L2, +8% from memory,
     * 12 * 2^k +3-5% (simd/x86/fwht_x86.h). The zen profile keeps its split
     * chunks (not measured there). Session 44 (docs/results/session44, the
     * H200's host, family 6 model 207, hmx-gemv-prefetch-ab: distances
     * interleaved in one process, five rounds, medians): the one-token G16
     * GEMV's streams prefetched 16 lines ahead (gemv_pf_lines), matrices of
     * 16-18 MiB from memory, avx512 on one thread (two vCPUs): bf16 +18 /
     * +22%, Q8_0 +21 / +20%, Q4_0 +35 / +47%, f32 +1 / +1%; two threads
     * (three runs) bf16 / Q8_0 / Q4_0 +11-34%, f32 -7 / -2 / +3% from
     * memory and +9-20% from L3; avx2 +9-22%. 8 and 32 lines within 3%
     * of 16. A synthetic 355M model's decode (hmx bench-model --config
     * small, this profile against zen4, alternating): bf16 +10-15% on one
     * thread, +6-20% on four, f32 +1-6%. The AMD profiles keep 0: on the
     * Zen 3 VM the same A/B (avx2, seven rounds) read slower with 16
     * lines, f32 from memory 15.1 -> 13.0 GB/s, Q8_0 8.5 -> 7.1, f32 4 MiB
     * warm 36.9 -> 29.5 (bf16 and Q4_0 within the noise); one Zen 4 thread
     * already reads G16 in order above the copy (session 30; not measured
     * with the prefetch). Session 52 (docs/results/session52/, the H200's
     * host): the next pass's groups prefetched where a pass takes at most 64
     * KiB (gemv_next_kib), hmx-gemv-prefetch-ab --next 0,64,256, SmolLM2's
     * one-token shapes cold, seven rounds: Q4_1 gate / up and down avx512
     * one thread 4.3 -> 6.7 and 4.2 -> 6.5 GB/s, two threads 7.7 -> 12.0
     * and 7.8 -> 10.7, avx2 one thread 2.7 -> 3.4 and 2.8 -> 3.2; the Q8_0
     * LM head (which takes gemv_pf_lines instead) and f32 at K = 576 (passes
     * of 144 KiB, none) within the rounds' spread. 256 KiB read as 64.
     * Session 65 (docs/results/session65/h200host, fwht_ab.sh, 11 rounds):
     * fwht_two_pass_chunk_extra = 1 made avx512 2048 4% slower in L2 and 2%
     * from memory, 12 * 2048 5% / 3%: kept 0. Session 66 (h200host/ there,
     * 7 rounds): the padded scratch for m >= 20 rows (fwht_mp_pad) made
     * avx512 20480 / 28672 in L2 20% / 33% slower (0: never), and avx2 faster,
     * in L2 1.2-1.3x and from memory 1.1-1.3x (2). */
    {.name = "intel",
     .measured_on = "Intel Xeon (Emerald Rapids), 2 vCPUs",
     .fwht_split_chunks = 0,
     .fwht_unaligned_scratch = 0,
     .fwht_pf_min_p = {1024, 1024},
     .fwht_pf_mpoint_rows = {1, 1},
     .fwht_pf_spread = 1,
     .fwht_pf_l2_min_p = 8192,
     .fwht_two_pass_rows = 1,
     .fwht_two_pass_chunk_extra = 0,
     .fwht_mp_pad = {2, 0},
     .fwht_dup_load_avx512 = 1,
     .gemv_pf_lines = 16,
     .gemv_next_kib = 64},
    /* AMD EPYC Zen 4 (family 19h model 11h; session 29, docs/results/session29):
     * `hmx bench fwht --backend avx512 --threads 1 --ffht ...` under each
     * profile in turn, then under intel with one field changed at a time (two
     * rounds), then this one against intel and zen (three rounds). Against
     * zen: in L2, x FFHT at 1024 / 2048 / 4096 1.69-1.74 / 1.67-1.69 /
     * 1.46-1.47 -> 1.85-1.86 / 1.79-1.80 / 1.68-1.69 (two-pass rows; without
     * them intel's fields lose 0.1-0.25x there), 16384 / 65536 from memory
     * 65-71% / 60-65% of the copy -> 97-99% / 76-80% (no scratch row: 85-92%
     * with it; no split chunks: 16384 in L2 1.42x with them); against intel:
     * prefetching the next row from 4096 elements, not 1024, from memory
     * 1024 / 2048 124-128% / 114-121% -> 144-148% / 143-147%, and none for
     * m > 1 one-chunk rows, 768 / 1536 110-114% / 103-108% -> 127-138% /
     * 111-128%; every other case within a round's spread. Those two are
     * avx512's: avx2 (`--backend avx2`, zen4 / intel / zen, two rounds)
     * wants intel's, from memory x FFHT at 1024 / 2048 0.95-0.96 / 0.88-0.89
     * -> 1.18-1.19 / 1.17-1.19 and 768 / 1536 83-86% / 69-72% -> 111-114% /
     * 94-98% of the copy. */
    {.name = "zen4",
     .measured_on = "AMD EPYC Zen 4, 2 vCPUs",
     .fwht_split_chunks = 0,
     .fwht_unaligned_scratch = 0,
     .fwht_pf_min_p = {1024, 4096},
     .fwht_pf_mpoint_rows = {1, 0},
     .fwht_pf_spread = 1,
     .fwht_pf_l2_min_p = 8192,
     .fwht_two_pass_rows = 1,
     .fwht_two_pass_chunk_extra = 0,
     .fwht_mp_pad = {0, 0},
     .fwht_dup_load_avx512 = 1,
     .gemv_pf_lines = 0,
     .gemv_next_kib = 0},
    /* AMD EPYC Zen 3 (family 19h model 01h, AVX2 only; session 41,
     * docs/results/session41/): `hmx bench fwht --backend avx2 --threads 1
     * --ffht ...` under each profile in turn, one round each, three times,
     * twice (tuning/). Under `zen`, n = 256 in L2 read 0.89-1.07x FFHT and
     * 2048 from memory 0.95-1.02x (issue 3 asks >= 1x). The two-pass rows
     * (zen + two-pass: z3a) took 256 / 512 in L2 to 1.40-1.45x / 1.33-1.39x;
     * intel's avx2 prefetch fields on top (this profile, z3c in the files)
     * took 2048 from memory to 1.16-1.24x (z3a 0.90-0.99x). Adding the
     * spread prefetch and the L2-only hint as well (z3b) read 65536 from
     * memory 0.93-0.99x (0.98-1.02x here); zen4's fields (no split chunks,
     * no scratch row) read 16384 in L2 1.15-1.20x (1.19-1.23x here). The
     * avx512 fields are zen's; Zen 3 has no AVX-512. Session 52
     * (docs/results/session52/): the one-token G16 GEMV prefetching the next
     * pass's groups (gemv_next_kib), SmolLM2-135M Q4_1 decode at depth 512,
     * 2 threads, the limits interleaved step by step in one process (150
     * steps each): 0 / 32 / 64 / 128 / 256 / 1024 KiB 18.43 / 17.49 / 17.31
     * / 17.08 / 16.99 / 17.02 ms a token (+6-8% from 32 KiB: every pass of
     * that model is 23-61 KiB; the FFN's gemms 8.28 -> 7.46 ms, the Q/K/V
     * gemm 2.01 -> 1.79). hmx-gemv-prefetch-ab --next (cold, interleaved):
     * Q4_1 gate / up and down +10-26%, Q8_0 LM head 0 to +12%, but f32 at
     * K = 576 (passes of 144 KiB) -15% on one thread, so 64 KiB. */
    {.name = "zen3",
     .measured_on = "AMD EPYC Zen 3, 2 vCPUs",
     .fwht_split_chunks = 1,
     .fwht_unaligned_scratch = 1,
     .fwht_pf_min_p = {1024, 4096},
     .fwht_pf_mpoint_rows = {1, 0},
     .fwht_pf_spread = 0,
     .fwht_pf_l2_min_p = 0,
     .fwht_two_pass_rows = 1,
     .fwht_two_pass_chunk_extra = 0,
     .fwht_mp_pad = {0, 0},
     .fwht_dup_load_avx512 = 1,
     .gemv_pf_lines = 0,
     .gemv_next_kib = 64},
};
enum { NPROFILES = (int)(sizeof profiles / sizeof profiles[0]) };

/* The automatic choice is made once and kept, with where it came from, as
 * 1 + index + 16 * source (0: not yet): concurrent first calls compute the
 * same value, and the atomic makes that race well defined (as in src/cpu.c). */
enum { SRC_VENDOR, SRC_ENV, SRC_VENDOR_BAD_ENV, SRC_ENV_SPEC };
#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
static atomic_int chosen;
#define CHOSEN_LOAD() atomic_load_explicit(&chosen, memory_order_relaxed)
#define CHOSEN_STORE(v) atomic_store_explicit(&chosen, (v), memory_order_relaxed)
#else
static volatile int chosen;
#define CHOSEN_LOAD() (chosen)
#define CHOSEN_STORE(v) (chosen = (v))
#endif
static const hmx_x86_tuning *forced;

/* HMX_X86_TUNING as a specification ("zen+fwht_two_pass_rows=0",
 * hmx_x86_tuning_parse): parsed once into env_spec, by the first caller
 * (spec_state 0 -> 1 -> 2 done or 3 refused, with why in spec_err); a
 * concurrent first caller waits for the parse (a few microseconds) rather
 * than read a half-written profile. Index NPROFILES in `chosen`. */
static hmx_x86_tuning env_spec;
static char spec_err[160];
#if !defined(__STDC_NO_ATOMICS__)
static atomic_int spec_state;
static int spec_parse_once(const char *env) {
  int s = 0;
  if (atomic_compare_exchange_strong_explicit(&spec_state, &s, 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
    s = hmx_x86_tuning_parse(env, &env_spec, spec_err, sizeof spec_err) ? 2 : 3;
    atomic_store_explicit(&spec_state, s, memory_order_release);
  }
  while (s == 1) s = atomic_load_explicit(&spec_state, memory_order_acquire);
  return s == 2;
}
/* env_spec for a caller that learnt of it through `chosen` (a relaxed load):
 * the acquire orders the read of the profile after the parse's writes. */
static const hmx_x86_tuning *spec_ready(void) {
  (void)atomic_load_explicit(&spec_state, memory_order_acquire);
  return &env_spec;
}
#else
static int spec_parse_once(const char *env) {
  return hmx_x86_tuning_parse(env, &env_spec, spec_err, sizeof spec_err);
}
static const hmx_x86_tuning *spec_ready(void) { return &env_spec; }
#endif

const hmx_x86_tuning *hmx_x86_tuning_find(const char *name) {
  for (int i = 0; name && i < NPROFILES; i++)
    if (!strcmp(profiles[i].name, name)) return &profiles[i];
  return NULL;
}

static int choose(void) {
  int c = CHOSEN_LOAD();
  if (!c) {
    const char *env = getenv("HMX_X86_TUNING");
    const hmx_x86_tuning *t = hmx_x86_tuning_find(env);
    int src = t ? SRC_ENV : env && *env ? SRC_VENDOR_BAD_ENV : SRC_VENDOR;
    /* a name with changes: a profile of its own (a bad one: as a bad name) */
    if (!t && env && strchr(env, '+') && spec_parse_once(env)) {
      c = 1 + NPROFILES + 16 * SRC_ENV_SPEC;
      CHOSEN_STORE(c);
      return c;
    }
    if (!t) {
      const hmx_cpu_features f = hmx_cpu_detect();
      t = hmx_x86_tuning_find(f.intel ? "intel" : f.zen4 ? "zen4" : f.zen3 ? "zen3" : "zen");
    }
    c = 1 + (int)(t - profiles) + 16 * src;
    CHOSEN_STORE(c);
  }
  return c;
}

const hmx_x86_tuning *hmx_x86_tuning_current(void) {
  if (forced) return forced;
  const int i = (choose() - 1) % 16;
  return i == NPROFILES ? spec_ready() : &profiles[i];
}

const char *hmx_x86_tuning_source(void) {
  static char text[256];
  if (forced) return "forced (tests)";
  switch ((choose() - 1) / 16) {
  case SRC_ENV: return "HMX_X86_TUNING";
  case SRC_ENV_SPEC:
    snprintf(text, sizeof text, "HMX_X86_TUNING=%.200s",
             getenv("HMX_X86_TUNING") ? getenv("HMX_X86_TUNING") : "");
    return text;
  case SRC_VENDOR_BAD_ENV:
    if (spec_err[0])
      snprintf(text, sizeof text, "cpu vendor (HMX_X86_TUNING ignored: %s)", spec_err);
    else
      snprintf(text, sizeof text, "cpu vendor (HMX_X86_TUNING=%.40s is not a profile)",
               getenv("HMX_X86_TUNING") ? getenv("HMX_X86_TUNING") : "");
    return text;
  default: return "cpu vendor";
  }
}

int hmx_x86_tuning_read_by(const char *backend_name) {
  return backend_name && (!strcmp(backend_name, "avx2") || !strcmp(backend_name, "avx512"));
}

void hmx_x86_tuning_force(const hmx_x86_tuning *t) { forced = t; }

int hmx_x86_tuning_count(void) { return NPROFILES; }

const hmx_x86_tuning *hmx_x86_tuning_at(int i) {
  return i >= 0 && i < NPROFILES ? &profiles[i] : NULL;
}

/* hmx_x86_tuning_parse's field names: each an int of the struct, with the
 * range it may take (flags 0 or 1; element counts, lines and KiB up to 2^30,
 * far past any row or matrix the kernels see). */
typedef struct tuning_field {
  const char *name;
  size_t offset;
  int max;
} tuning_field;
#define TF(field, max) {#field, offsetof(hmx_x86_tuning, field), max}
#define TF_ISA(field, isa, i, max)                                                                 \
  {#field "_" isa, offsetof(hmx_x86_tuning, field) + (i) * sizeof(int), max}
static const tuning_field fields[] = {
    TF(fwht_split_chunks, 1),
    TF(fwht_unaligned_scratch, 1),
    TF_ISA(fwht_pf_min_p, "avx2", 0, 1 << 30),
    TF_ISA(fwht_pf_min_p, "avx512", 1, 1 << 30),
    TF_ISA(fwht_pf_mpoint_rows, "avx2", 0, 1),
    TF_ISA(fwht_pf_mpoint_rows, "avx512", 1, 1),
    TF(fwht_pf_spread, 1),
    TF(fwht_pf_l2_min_p, 1 << 30),
    TF(fwht_two_pass_rows, 1),
    TF(fwht_two_pass_chunk_extra, 1),
    TF_ISA(fwht_mp_pad, "avx2", 0, 2),
    TF_ISA(fwht_mp_pad, "avx512", 1, 2),
    TF(fwht_dup_load_avx512, 1),
    TF(gemv_pf_lines, 1 << 30),
    TF(gemv_next_kib, 1 << 30),
};
#undef TF
#undef TF_ISA
enum { NFIELDS = (int)(sizeof fields / sizeof fields[0]) };

int hmx_x86_tuning_field_count(void) { return NFIELDS; }

const char *hmx_x86_tuning_field_name(int i) {
  return i >= 0 && i < NFIELDS ? fields[i].name : NULL;
}

static int *field_at(hmx_x86_tuning *t, int i) {
  return (int *)(void *)((char *)t + fields[i].offset);
}

int hmx_x86_tuning_field_get(const hmx_x86_tuning *t, int i) {
  return t && i >= 0 && i < NFIELDS
             ? *(const int *)(const void *)((const char *)t + fields[i].offset)
             : -1;
}

int hmx_x86_tuning_parse(const char *spec, hmx_x86_tuning *out, char *err, size_t err_len) {
  char dummy[1];
  if (!err || err_len == 0) {
    err = dummy;
    err_len = sizeof dummy;
  }
  err[0] = '\0';
  if (!spec || !out) {
    snprintf(err, err_len, "no tuning specification given");
    return 0;
  }
  /* the profile's name: up to the first '+' */
  const char *plus = strchr(spec, '+');
  const size_t name_len = plus ? (size_t)(plus - spec) : strlen(spec);
  const hmx_x86_tuning *base = NULL;
  for (int i = 0; i < NPROFILES; i++)
    if (strlen(profiles[i].name) == name_len && !strncmp(profiles[i].name, spec, name_len))
      base = &profiles[i];
  if (!base) {
    char names[64] = "";
    for (int i = 0; i < NPROFILES; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
               profiles[i].name);
    snprintf(err, err_len, "'%.*s' is not a tuning profile (%s)",
             (int)(name_len > 40 ? 40 : name_len), spec, names);
    return 0;
  }
  hmx_x86_tuning t = *base;
  /* then "+field=value" items */
  for (const char *p = plus; p && *p;) {
    p++; /* past '+' */
    const char *eq = strchr(p, '='), *next = strchr(p, '+');
    const size_t item_len = next ? (size_t)(next - p) : strlen(p);
    if (!eq || (next && eq > next)) {
      snprintf(err, err_len, "'%.*s': a change is +field=value",
               (int)(item_len > 40 ? 40 : item_len), p);
      return 0;
    }
    const size_t key_len = (size_t)(eq - p);
    int which = -1;
    for (int i = 0; i < NFIELDS; i++)
      if (strlen(fields[i].name) == key_len && !strncmp(fields[i].name, p, key_len)) which = i;
    if (which < 0) {
      snprintf(err, err_len, "'%.*s' is not a tuning field (src/tuning.h lists them)",
               (int)(key_len > 40 ? 40 : key_len), p);
      return 0;
    }
    /* digits only: strtol alone would take leading blanks and a sign */
    char *end = (char *)(uintptr_t)(eq + 1);
    const long v = eq[1] >= '0' && eq[1] <= '9' ? strtol(eq + 1, &end, 10) : -1;
    if (end == eq + 1 || (*end && *end != '+') || v < 0 || v > fields[which].max) {
      snprintf(err, err_len, "%s: the value must be an integer 0 ... %d", fields[which].name,
               fields[which].max);
      return 0;
    }
    *field_at(&t, which) = (int)v;
    p = *end ? end : NULL;
  }
  *out = t;
  return 1;
}
