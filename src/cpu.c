/* CPU feature detection: CPUID for the instruction sets, XGETBV for whether
 * the operating system saves the wider registers (a CPU with AVX-512 under
 * an OS that does not enable ZMM state must not run AVX-512 code). */
#include "cpu.h"

#include <string.h>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define HMX_X86 1
#if defined(_MSC_VER)
#include <immintrin.h>
#include <intrin.h>
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  int v[4];
  __cpuidex(v, (int)leaf, (int)sub);
  for (int i = 0; i < 4; i++) r[i] = (unsigned)v[i];
}
static unsigned long long xgetbv0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  if ((unsigned)__get_cpuid_max(leaf & 0x80000000u, 0) < leaf) {
    r[0] = r[1] = r[2] = r[3] = 0;
    return;
  }
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static unsigned long long xgetbv0(void) {
  unsigned lo, hi;
  /* xgetbv with ecx = 0, as bytes so that no -mxsave flag is needed */
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}
#endif
#endif

/* Reads the registers and leaves the decision to hmx_cpu_decide
 * (src/cpu_decide.c). The "why" functions need the CPUID-only flags that
 * the decision also returns (the reasons below tell the two apart). */
static hmx_cpu_decision detect_uncached(void) {
  hmx_cpu_regs r;
  memset(&r, 0, sizeof r);
#if defined(HMX_X86)
  cpuid(0, 0, r.leaf0);
  cpuid(1, 0, r.leaf1);
  r.has_leaf7 = r.leaf0[0] >= 7; /* leaf0[0]: the highest basic leaf */
  if (r.has_leaf7) {
    cpuid(7, 0, r.leaf7);
    /* leaf7[0]: the highest subleaf of leaf 7 */
    if (r.leaf7[0] >= 1) cpuid(7, 1, r.leaf7_1);
  }
  /* XGETBV faults unless the OS has set OSXSAVE */
  if (hmx_cpu_osxsave(r.leaf1[2])) r.xcr0 = xgetbv0();
  return hmx_cpu_decide(&r);
#else
  hmx_cpu_decision d = hmx_cpu_decide(&r); /* no x86 registers: no x86 features */
#if defined(__aarch64__) || defined(_M_ARM64)
  d.f.neon = 1;
#endif
  return d;
#endif
}

/* CPUID traps to the hypervisor in a virtual machine (tens of microseconds),
 * and every op call asks whether its backend can run: detect once. The cache
 * holds the seven flags plus a "known" bit; concurrent first calls compute
 * the same value, and the atomic makes that race well defined. */
#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
static atomic_int cache;
#define CACHE_LOAD() atomic_load_explicit(&cache, memory_order_relaxed)
#define CACHE_STORE(v) atomic_store_explicit(&cache, (v), memory_order_relaxed)
#else
static volatile int cache;
#define CACHE_LOAD() (cache)
#define CACHE_STORE(v) (cache = (v))
#endif

hmx_cpu_features hmx_cpu_detect(void) {
  int c = CACHE_LOAD();
  if (!c) {
    hmx_cpu_features f = detect_uncached().f;
    c = 8 | (f.avx2_fma ? 1 : 0) | (f.avx512 ? 2 : 0) | (f.neon ? 4 : 0) |
        (f.avx512_bf16 ? 16 : 0) | (f.intel ? 32 : 0) | (f.zen4 ? 64 : 0) |
        (f.zen3 ? 128 : 0);
    CACHE_STORE(c);
  }
  hmx_cpu_features f;
  f.avx2_fma = (c & 1) != 0;
  f.avx512 = (c & 2) != 0;
  f.neon = (c & 4) != 0;
  f.avx512_bf16 = (c & 16) != 0;
  f.intel = (c & 32) != 0;
  f.zen4 = (c & 64) != 0;
  f.zen3 = (c & 128) != 0;
  return f;
}

const char *hmx_cpu_why_no_avx2(void) {
  hmx_cpu_decision d = detect_uncached();
  if (d.f.avx2_fma) return "";
#if defined(HMX_X86)
  if (!d.avx2_isa) return "the CPU lacks AVX2, FMA or F16C (CPUID)";
  return "the operating system does not save AVX (YMM) registers (XCR0 bits 1-2)";
#else
  return "not an x86 CPU";
#endif
}

const char *hmx_cpu_why_no_avx512(void) {
  hmx_cpu_decision d = detect_uncached();
  if (d.f.avx512) return "";
#if defined(HMX_X86)
  if (!d.avx512_isa) return "the CPU lacks AVX-512 F, DQ, BW or VL (CPUID leaf 7)";
  return "the operating system does not save AVX-512 (ZMM and opmask) registers (XCR0 bits 5-7)";
#else
  return "not an x86 CPU";
#endif
}
