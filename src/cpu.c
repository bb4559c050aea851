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

#if defined(HMX_X86)
/* Whether leaf 0's vendor string (EBX, EDX, ECX) is the 12 characters v. */
static int vendor_is(const unsigned l0[4], const char *v) {
  return !memcmp(&l0[1], v, 4) && !memcmp(&l0[3], v + 4, 4) && !memcmp(&l0[2], v + 8, 4);
}
#endif

/* What CPUID says the CPU has, before XCR0 says whether the OS lets it run
 * (the reasons below tell the two apart). */
typedef struct cpu_raw {
  int avx2_isa;   /* AVX, AVX2, FMA, F16C */
  int avx512_isa; /* and AVX-512 F, DQ, BW, VL */
} cpu_raw;

static hmx_cpu_features detect_uncached(cpu_raw *raw) {
  hmx_cpu_features f;
  memset(&f, 0, sizeof f);
  memset(raw, 0, sizeof *raw);
#if defined(HMX_X86)
  unsigned l0[4], l1[4], l7[4];
  cpuid(0, 0, l0);
  f.intel = vendor_is(l0, "GenuineIntel");
  const int amd = vendor_is(l0, "AuthenticAMD");
  cpuid(1, 0, l1);
  cpuid(7, 0, l7);
  /* family: the base family (EAX bits 8-11), plus the extended family
   * (bits 20-27) when the base is 0xF */
  const unsigned base_family = (l1[0] >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((l1[0] >> 20) & 0xff) : base_family;
  int osxsave = (l1[2] >> 27) & 1, avx = (l1[2] >> 28) & 1, fma = (l1[2] >> 12) & 1;
  int f16c = (l1[2] >> 29) & 1;
  unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  int ymm_os = (xcr0 & 0x6) == 0x6;
  int zmm_os = (xcr0 & 0xe6) == 0xe6;
  int avx2 = (l7[1] >> 5) & 1;
  int avx512f = (l7[1] >> 16) & 1, avx512dq = (l7[1] >> 17) & 1;
  int avx512bw = (l7[1] >> 30) & 1, avx512vl = (l7[1] >> 31) & 1;
  raw->avx2_isa = avx && avx2 && fma && f16c;
  raw->avx512_isa = raw->avx2_isa && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx2_fma = raw->avx2_isa && ymm_os;
  f.avx512 = raw->avx512_isa && ymm_os && zmm_os;
  unsigned l71[4] = {0, 0, 0, 0};
  if (l7[0] >= 1) cpuid(7, 1, l71); /* l7[0]: the highest subleaf of leaf 7 */
  f.avx512_bf16 = f.avx512 && ((l71[0] >> 5) & 1);
  f.zen4 = amd && family == 0x19 && f.avx512;
  f.zen3 = amd && family == 0x19 && f.avx2_fma && !f.avx512;
#elif defined(__aarch64__) || defined(_M_ARM64)
  f.neon = 1;
#endif
  return f;
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
    cpu_raw raw;
    hmx_cpu_features f = detect_uncached(&raw);
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
  cpu_raw raw;
  if (detect_uncached(&raw).avx2_fma) return "";
#if defined(HMX_X86)
  if (!raw.avx2_isa) return "the CPU lacks AVX2, FMA or F16C (CPUID)";
  return "the operating system does not save AVX (YMM) registers (XCR0 bits 1-2)";
#else
  return "not an x86 CPU";
#endif
}

const char *hmx_cpu_why_no_avx512(void) {
  cpu_raw raw;
  if (detect_uncached(&raw).avx512) return "";
#if defined(HMX_X86)
  if (!raw.avx512_isa) return "the CPU lacks AVX-512 F, DQ, BW or VL (CPUID leaf 7)";
  return "the operating system does not save AVX-512 (ZMM and opmask) registers (XCR0 bits 5-7)";
#else
  return "not an x86 CPU";
#endif
}
