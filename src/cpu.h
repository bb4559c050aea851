/* CPU features that decide which SIMD backends can run (their probes). */
#ifndef HMX_CPU_H
#define HMX_CPU_H

typedef struct hmx_cpu_features {
  int avx2_fma;    /* AVX2 + FMA + F16C (every AVX2 CPU has it), and the OS saves YMM state (XCR0 bits 1, 2) */
  int avx512;      /* AVX-512 F/BW/DQ/VL + FMA, and the OS saves ZMM/opmask state (XCR0 5-7) */
  int avx512_bf16; /* avx512 and AVX512_BF16 (vdpbf16ps; CPUID 7.1 EAX bit 5): the fast tier's
                      bf16 gemm (cpu_fast/fast_bf16_g16.c) */
  int neon;        /* AArch64 Advanced SIMD (always present on AArch64) */
  int intel;       /* x86 vendor string "GenuineIntel" (picks the kernels' tuning, src/tuning.h) */
  int zen4;        /* "AuthenticAMD", family 19h and avx512: Zen 4 (Zen 3, also 19h, has no
                      AVX-512; Zen 5 is 1Ah) (picks the kernels' tuning) */
  int zen3;        /* "AuthenticAMD", family 19h, avx2_fma but not avx512: Zen 3 (picks the
                      kernels' tuning) */
} hmx_cpu_features;

/* The raw x86 registers the decision reads, as CPUID and XGETBV return them
 * (each leaf as EAX, EBX, ECX, EDX). Kept apart from reading them so that the
 * decision can be tested with made-up CPUs (tests/test_cpu_decide.c): the
 * combinations that matter (AVX-512 hardware under an OS that does not save
 * ZMM state, a Zen 5) are not on the machines the tests run on. */
typedef struct hmx_cpu_regs {
  unsigned leaf0[4];     /* EAX: the highest basic leaf; EBX, EDX, ECX: the vendor string */
  unsigned leaf1[4];     /* EAX: family; ECX: FMA, OSXSAVE, AVX, F16C */
  unsigned leaf7[4];     /* subleaf 0. EAX: its highest subleaf; EBX: AVX2, AVX-512 F/DQ/BW/VL */
  unsigned leaf7_1[4];   /* subleaf 1. EAX: AVX512_BF16 */
  int has_leaf7;         /* the highest basic leaf is >= 7; else leaf7 and leaf7_1 are ignored */
  unsigned long long xcr0; /* XGETBV(0); ignored unless leaf 1 says OSXSAVE */
} hmx_cpu_regs;

typedef struct hmx_cpu_decision {
  hmx_cpu_features f; /* what may run: the instructions, and the OS saves their registers */
  int avx2_isa;       /* CPUID alone: AVX, AVX2, FMA, F16C (whatever XCR0 says) */
  int avx512_isa;     /* CPUID alone: avx2_isa and AVX-512 F, DQ, BW, VL */
} hmx_cpu_decision;

/* The decision from the registers: a pure function (src/cpu_decide.c), the
 * same on every platform; hmx_cpu_detect calls it on the real registers. */
hmx_cpu_decision hmx_cpu_decide(const hmx_cpu_regs *r);
/* Whether leaf 1's ECX says OSXSAVE: the OS has enabled XGETBV, which
 * faults otherwise, so the reader asks this before it reads XCR0. */
int hmx_cpu_osxsave(unsigned leaf1_ecx);

/* Detected on the first call, then cached (CPUID is slow under a hypervisor). */
hmx_cpu_features hmx_cpu_detect(void);

/* Why the avx2 / avx512 backend cannot run here, for hmx_backend_unavailable_reason
 * and so every "cannot run it" error: the CPU lacks the instructions, or the
 * operating system does not save their registers. "" when it can run. Not
 * cached: asked only when a backend cannot run. */
const char *hmx_cpu_why_no_avx2(void);
const char *hmx_cpu_why_no_avx512(void);

#endif
