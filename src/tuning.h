/* Tuning profiles of the x86 kernels: choices of schedule that measured
 * faster on one family of CPUs and slower on another (scratch rows,
 * prefetch distances, how chunks are interleaved). A profile only decides
 * how independent work is ordered and where intermediate values are kept,
 * never which operations a value goes through, so no bit of any result
 * depends on it (docs/NUMERICS.md, "What a backend may and may not do";
 * tests/test_differential.c runs the fwht under every profile). */
#ifndef HMX_TUNING_H
#define HMX_TUNING_H

#include <stddef.h>

typedef struct hmx_x86_tuning {
  const char *name;           /* "zen", "intel", "zen4" or "zen3" */
  const char *measured_on;    /* the machine the numbers behind it come from */
  /* fwht / hadamard_mix (simd/x86/fwht_x86.h) */
  int fwht_split_chunks;      /* cache-resident rows that take passes: two short in-register
                                 chunks side by side instead of one long one (HX_SPLIT_LR) */
  int fwht_unaligned_scratch; /* rows not on a cache line that take passes in L2: those
                                 passes in a 64-byte aligned scratch row instead of in place */
  /* the next two per backend, [0] avx2 and [1] avx512 (they differ on Zen 4) */
  int fwht_pf_min_p[2];       /* batches from memory: prefetch the next row during the passes
                                 of blocks of at least this many elements (hx_pf) */
  int fwht_pf_mpoint_rows[2]; /* batches from memory, m > 1 rows whose blocks fit one chunk
                                 (768, 1536, ...): prefetch the next row during the first pass */
  int fwht_pf_spread;         /* hx_pf: one line of the next row per (vector loads of a row /
                                 its lines), counted on the first row, instead of per two loads */
  int fwht_pf_l2_min_p;       /* hx_pf into L2 only (prefetcht1) for blocks of at least this
                                 many elements; 0: all levels (prefetcht0) always */
  int fwht_two_pass_rows;     /* m = 1 rows, L1 sub-blocks and m > 1 blocks of a chunk pass
                                 and one radix pass: the stages split evenly between the
                                 two, no per-row dispatch (hx_two_pass_rows / _row; not for
                                 streamed outputs) */
  int fwht_two_pass_chunk_extra; /* those rows, when their stages split unevenly (avx512
                                 2048, avx2 256): the chunk pass takes the extra stage
                                 (1) instead of the radix pass (0) */
  int fwht_mp_pad[2];         /* [0] avx2, [1] avx512: m >= 20 rows of blocks 4 KiB or more
                                 apart take their passes in a scratch padded by a line a
                                 block (hx_row_padded): 0 never, 1 batches below
                                 HX_PF_BYTES, 2 also batches from memory */
  int fwht_dup_load_avx512;   /* avx512: §fwht's stride-1 stage from two duplicating loads
                                 (1: a load-port uop each on Intel) or from one load and an
                                 in-lane shuffle (0: Zen 5, where that read 4-6% faster); two
                                 compiled copies of the kernel, picked per call */
  /* one-token GEMVs over G16 weights (simd/x86/gemm_g16_x86.h, swiglu_x86.h) */
  int gemv_pf_lines;          /* G16 matrices of at least XW_PF_MIN_BYTES: each group's
                                 stream prefetches (prefetcht0) this many cache lines ahead;
                                 0: the hardware prefetchers alone (and the block types one
                                 line 8 blocks ahead) */
  int gemv_next_kib;          /* one-token G16 GEMVs: while a pass reads its groups, each
                                 stream also prefetches (prefetcht0) the same lines of the
                                 group the next pass reads, when a pass's groups take at
                                 most this many KiB (small K); 0: never. intel and zen3
                                 64 (session 52); zen and zen4 0, not measured there */
} hmx_x86_tuning;

/* The profile in force: the one HMX_X86_TUNING names ("zen", "intel",
 * "zen4" or "zen3", or a name with changes as hmx_x86_tuning_parse takes
 * them, "zen+fwht_two_pass_rows=0"), else "intel" on a GenuineIntel CPU,
 * "zen4" on an AMD Zen 4 (family 19h with AVX-512), "zen3" on an AMD Zen 3
 * (family 19h with AVX2 but not AVX-512) and "zen" on any other (other AMD,
 * and the default). Decided on the first call. */
const hmx_x86_tuning *hmx_x86_tuning_current(void);

/* Where the current profile came from: "cpu vendor", "HMX_X86_TUNING",
 * "HMX_X86_TUNING=<spec>" (a name with changes), "cpu vendor (HMX_X86_TUNING=
 * <value> is not a profile)" or "cpu vendor (HMX_X86_TUNING ignored: <why>)"
 * (a spec hmx_x86_tuning_parse refused): a bad value is ignored, and `hmx
 * info` and `hmx bench` show this line. Not thread-safe (a static buffer):
 * for those two. */
const char *hmx_x86_tuning_source(void);

/* The profile called `name`, or NULL. */
const hmx_x86_tuning *hmx_x86_tuning_find(const char *name);

/* Tests and experiments: make `t` the current profile (NULL: back to the
 * automatic choice). Not for use while kernels run on other threads. */
void hmx_x86_tuning_force(const hmx_x86_tuning *t);

/* Whether the backend called `name` reads the profile (avx2, avx512): the
 * backends whose tests must run under every profile. */
int hmx_x86_tuning_read_by(const char *backend_name);

/* The profiles there are, for iteration: index 0 .. count-1. */
int hmx_x86_tuning_count(void);
const hmx_x86_tuning *hmx_x86_tuning_at(int i);

/* A profile with fields changed, for A/B runs on a new machine
 * (tools/x86/fwht_ab.sh's `name@spec` variants, HMX_X86_TUNING=spec for `hmx
 * bench` and any program): `spec` is a profile's name,
 * then any number of "+field=value" with a field's name from the struct
 * above (the per-backend arrays as fwht_pf_min_p_avx2, fwht_pf_min_p_avx512,
 * fwht_pf_mpoint_rows_avx2, fwht_pf_mpoint_rows_avx512, fwht_mp_pad_avx2,
 * fwht_mp_pad_avx512), e.g.
 * "zen+fwht_two_pass_rows=1+fwht_pf_min_p_avx512=1024". Fills *out and
 * returns 1, or returns 0 with why in err (an unknown profile or field, a
 * value that is not an integer in the field's range: flags 0 or 1,
 * fwht_mp_pad 0 ... 2, counts 0 ... 2^30). No field changes a bit of any
 * result. */
int hmx_x86_tuning_parse(const char *spec, hmx_x86_tuning *out, char *err, size_t err_len);

/* The fields hmx_x86_tuning_parse knows, by index 0 .. count-1 (names as
 * it takes them) and a field's value in a profile (-1: no such index). */
int hmx_x86_tuning_field_count(void);
const char *hmx_x86_tuning_field_name(int i);
int hmx_x86_tuning_field_get(const hmx_x86_tuning *t, int i);

#endif
