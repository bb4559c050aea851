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

/* Detected on the first call, then cached (CPUID is slow under a hypervisor). */
hmx_cpu_features hmx_cpu_detect(void);

/* Why the avx2 / avx512 backend cannot run here, for hmx_backend_unavailable_reason
 * and so every "cannot run it" error: the CPU lacks the instructions, or the
 * operating system does not save their registers. "" when it can run. Not
 * cached: asked only when a backend cannot run. */
const char *hmx_cpu_why_no_avx2(void);
const char *hmx_cpu_why_no_avx512(void);

#endif
