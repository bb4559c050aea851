/* Which instruction sets may run, from the raw CPUID and XCR0 values
 * (src/cpu.h). No CPUID here: src/cpu.c reads the registers, and
 * tests/test_cpu_decide.c feeds made-up ones. */
#include "cpu.h"

#include <string.h>

/* Bit positions, Intel SDM vol. 2A "CPUID" and vol. 1 13.3 (XCR0). */
enum {
  L1_ECX_FMA = 12, L1_ECX_OSXSAVE = 27, L1_ECX_AVX = 28, L1_ECX_F16C = 29,
  L7_EBX_AVX2 = 5, L7_EBX_AVX512F = 16, L7_EBX_AVX512DQ = 17, L7_EBX_AVX512BW = 30,
  L7_EBX_AVX512VL = 31,
  L71_EAX_AVX512_BF16 = 5
};
/* XCR0: bit 1 SSE (XMM) and 2 AVX (upper YMM) state; bits 5-7 the opmask,
 * the upper halves of ZMM0-15 and ZMM16-31. AVX needs 1-2, AVX-512 all five. */
#define XCR0_YMM 0x6ull
#define XCR0_ZMM 0xe6ull

static int bit(unsigned reg, int pos) { return (int)((reg >> pos) & 1u); }

/* Whether leaf 0's vendor string (EBX, EDX, ECX, in that order) is the 12
 * characters v. */
static int vendor_is(const unsigned l0[4], const char *v) {
  return !memcmp(&l0[1], v, 4) && !memcmp(&l0[3], v + 4, 4) && !memcmp(&l0[2], v + 8, 4);
}

int hmx_cpu_osxsave(unsigned leaf1_ecx) { return bit(leaf1_ecx, L1_ECX_OSXSAVE); }

hmx_cpu_decision hmx_cpu_decide(const hmx_cpu_regs *r) {
  hmx_cpu_decision d;
  memset(&d, 0, sizeof d);
  if (!r) return d; /* nothing known: nothing may run */
  const unsigned *l0 = r->leaf0, *l1 = r->leaf1;
  /* a CPU whose highest basic leaf is below 7 has no leaf-7 features (on
   * Intel, CPUID of a higher leaf returns the highest leaf's data, not 0) */
  const unsigned zero[4] = {0, 0, 0, 0};
  const unsigned *l7 = r->has_leaf7 ? r->leaf7 : zero;
  /* subleaf 1 exists only when subleaf 0's EAX (the highest subleaf) says so */
  const unsigned *l71 = r->has_leaf7 && r->leaf7[0] >= 1 ? r->leaf7_1 : zero;
  d.f.intel = vendor_is(l0, "GenuineIntel");
  const int amd = vendor_is(l0, "AuthenticAMD");
  /* family: the base family (EAX bits 8-11), plus the extended family
   * (bits 20-27) when the base is 0xF */
  const unsigned base_family = (l1[0] >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((l1[0] >> 20) & 0xff) : base_family;
  /* XGETBV faults unless the OS set OSXSAVE; without it no wider state is saved */
  const unsigned long long xcr0 = hmx_cpu_osxsave(l1[2]) ? r->xcr0 : 0;
  const int ymm_os = (xcr0 & XCR0_YMM) == XCR0_YMM;
  const int zmm_os = (xcr0 & XCR0_ZMM) == XCR0_ZMM;
  d.avx2_isa = bit(l1[2], L1_ECX_AVX) && bit(l7[1], L7_EBX_AVX2) && bit(l1[2], L1_ECX_FMA) &&
               bit(l1[2], L1_ECX_F16C);
  d.avx512_isa = d.avx2_isa && bit(l7[1], L7_EBX_AVX512F) && bit(l7[1], L7_EBX_AVX512DQ) &&
                 bit(l7[1], L7_EBX_AVX512BW) && bit(l7[1], L7_EBX_AVX512VL);
  d.f.avx2_fma = d.avx2_isa && ymm_os;
  d.f.avx512 = d.avx512_isa && ymm_os && zmm_os;
  d.f.avx512_bf16 = d.f.avx512 && bit(l71[0], L71_EAX_AVX512_BF16);
  /* family 19h is Zen 3 and Zen 4, told apart by AVX-512; Zen 5 is 1Ah */
  d.f.zen4 = amd && family == 0x19 && d.f.avx512;
  d.f.zen3 = amd && family == 0x19 && d.f.avx2_fma && !d.f.avx512;
  return d;
}
