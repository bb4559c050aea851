/* hmx_cpu_decide (src/cpu_decide.c) on made-up CPUs: which instruction sets
 * may run given CPUID and XCR0. The machines the tests run on show one
 * combination each; the ones that matter most (AVX-512 hardware under an OS
 * that does not save ZMM state, a Zen 5, a CPU without leaf 7) are built
 * here from the bit positions of the Intel SDM, written out below on their
 * own rather than taken from the implementation. */
#include "check.h"
#include "cpu.h"

#include <stdint.h>
#include <string.h>

/* CPUID leaf 1 ECX (SDM vol. 2A, table 3-10) */
#define L1_FMA (1u << 12)
#define L1_OSXSAVE (1u << 27) /* the OS has enabled XGETBV */
#define L1_AVX (1u << 28)
#define L1_F16C (1u << 29)
/* CPUID leaf 7 subleaf 0 EBX (table 3-8) */
#define L7_AVX2 (1u << 5)
#define L7_AVX512F (1u << 16)
#define L7_AVX512DQ (1u << 17)
#define L7_AVX512BW (1u << 30)
#define L7_AVX512VL (1u << 31)
/* CPUID leaf 7 subleaf 1 EAX */
#define L71_AVX512_BF16 (1u << 5)
/* XCR0 state components (SDM vol. 1, 13.1) */
#define X_X87 (1ull << 0)
#define X_SSE (1ull << 1)    /* XMM */
#define X_AVX (1ull << 2)    /* upper halves of YMM */
#define X_OPMASK (1ull << 5) /* k0-k7 */
#define X_ZMM_HI256 (1ull << 6) /* upper halves of ZMM0-15 */
#define X_HI16_ZMM (1ull << 7)  /* ZMM16-31 */
#define XCR0_ALL (X_X87 | X_SSE | X_AVX | X_OPMASK | X_ZMM_HI256 | X_HI16_ZMM) /* 0xe7 */
#define XCR0_YMM_ONLY (X_X87 | X_SSE | X_AVX)                                /* 0x7 */
#define XCR0_XMM_ONLY (X_X87 | X_SSE)                                        /* 0x3 */

/* Leaf 0 returns the vendor string's 12 characters in EBX, EDX, ECX. */
static void set_vendor(hmx_cpu_regs *r, const char *v) {
  memcpy(&r->leaf0[1], v, 4);
  memcpy(&r->leaf0[3], v + 4, 4);
  memcpy(&r->leaf0[2], v + 8, 4);
}

/* Leaf 1 EAX for a family: the base family in bits 8-11; families above 0xF
 * are base 0xF plus the extended family in bits 20-27. */
static unsigned family_eax(unsigned family) {
  return family < 0xf ? family << 8 : (0xfu << 8) | ((family - 0xf) << 20);
}

/* A CPU with everything: AVX2, FMA, F16C, AVX-512 F/DQ/BW/VL and BF16, an OS
 * that saves all of it (XCR0 0xe7); vendor and family as given. */
static hmx_cpu_regs full_cpu(const char *vendor, unsigned family) {
  hmx_cpu_regs r;
  memset(&r, 0, sizeof r);
  r.leaf0[0] = 0x10; /* highest basic leaf */
  set_vendor(&r, vendor);
  r.leaf1[0] = family_eax(family);
  r.leaf1[2] = L1_FMA | L1_OSXSAVE | L1_AVX | L1_F16C;
  r.has_leaf7 = 1;
  r.leaf7[0] = 1; /* leaf 7's highest subleaf: subleaf 1 exists */
  r.leaf7[1] = L7_AVX2 | L7_AVX512F | L7_AVX512DQ | L7_AVX512BW | L7_AVX512VL;
  r.leaf7_1[0] = L71_AVX512_BF16;
  r.xcr0 = XCR0_ALL;
  return r;
}

static void expect(const char *what, hmx_cpu_regs r, int avx2, int avx512) {
  hmx_cpu_decision d = hmx_cpu_decide(&r);
  CHECK(d.f.avx2_fma == avx2, "%s: avx2_fma %d, expected %d", what, d.f.avx2_fma, avx2);
  CHECK(d.f.avx512 == avx512, "%s: avx512 %d, expected %d", what, d.f.avx512, avx512);
  CHECK(!d.f.neon, "%s: neon set from x86 registers", what);
}

static void test_xcr0(void) {
  const char *amd = "AuthenticAMD";
  hmx_cpu_regs r = full_cpu(amd, 0x19);
  expect("all state saved", r, 1, 1);
  hmx_cpu_decision d = hmx_cpu_decide(&r);
  CHECK(d.avx2_isa && d.avx512_isa, "CPUID-only flags of a full CPU");

  r.xcr0 = XCR0_YMM_ONLY; /* the OS saves YMM but not ZMM and the opmask */
  expect("XCR0 without ZMM", r, 1, 0);
  d = hmx_cpu_decide(&r);
  /* the hardware has it: hmx_cpu_why_no_avx512 then blames the OS */
  CHECK(d.avx512_isa, "XCR0 without ZMM: CPUID-only avx512 flag cleared");

  /* each one of the three AVX-512 state components missing */
  const unsigned long long zmm_parts[3] = {X_OPMASK, X_ZMM_HI256, X_HI16_ZMM};
  for (int i = 0; i < 3; i++) {
    r.xcr0 = XCR0_ALL & ~zmm_parts[i];
    expect("XCR0 missing one AVX-512 component", r, 1, 0);
  }

  r.xcr0 = XCR0_XMM_ONLY;
  expect("XCR0 without YMM", r, 0, 0);
  d = hmx_cpu_decide(&r);
  CHECK(d.avx2_isa && d.avx512_isa, "XCR0 without YMM: CPUID-only flags cleared");
  /* AVX without SSE state (XSETBV refuses it, but the check must read both
   * bits: YMM's lower halves are the XMM registers) */
  r.xcr0 = XCR0_ALL & ~X_SSE;
  expect("XCR0 without XMM", r, 0, 0);

  /* without OSXSAVE the OS has not enabled XGETBV: whatever the XCR0 field holds is not
   * the OS's word */
  r = full_cpu(amd, 0x19);
  r.leaf1[2] &= ~L1_OSXSAVE;
  expect("OSXSAVE clear", r, 0, 0);
}

static void test_cpuid_bits(void) {
  const uint32_t avx512_bits[4] = {L7_AVX512F, L7_AVX512DQ, L7_AVX512BW, L7_AVX512VL};
  const char *avx512_names[4] = {"F", "DQ", "BW", "VL"};
  for (int i = 0; i < 4; i++) {
    hmx_cpu_regs r = full_cpu("GenuineIntel", 6);
    r.leaf7[1] &= ~avx512_bits[i];
    char what[48];
    snprintf(what, sizeof what, "no AVX-512 %s", avx512_names[i]);
    expect(what, r, 1, 0);
    CHECK(!hmx_cpu_decide(&r).avx512_isa, "%s: CPUID-only avx512 flag set", what);
  }
  /* leaf 1 ECX bits, then leaf 7's AVX2: each one missing leaves no AVX2, and
   * so no AVX-512 (its kernels use the AVX2 ones too) */
  const uint32_t l1_bits[3] = {L1_FMA, L1_F16C, L1_AVX};
  const char *l1_names[3] = {"no FMA", "no F16C", "no AVX"};
  for (int i = 0; i < 3; i++) {
    hmx_cpu_regs r = full_cpu("GenuineIntel", 6);
    r.leaf1[2] &= ~l1_bits[i];
    expect(l1_names[i], r, 0, 0);
    CHECK(!hmx_cpu_decide(&r).avx2_isa, "%s: CPUID-only avx2 flag set", l1_names[i]);
  }
  hmx_cpu_regs r = full_cpu("GenuineIntel", 6);
  r.leaf7[1] &= ~L7_AVX2;
  expect("no AVX2", r, 0, 0);

  /* a highest basic leaf below 7: leaf 7's registers are not leaf 7's (Intel
   * returns the highest leaf's data), so they must be ignored */
  r = full_cpu("GenuineIntel", 6);
  r.leaf0[0] = 6;
  r.has_leaf7 = 0;
  expect("no leaf 7", r, 0, 0);

  hmx_cpu_regs zero;
  memset(&zero, 0, sizeof zero);
  expect("all registers 0", zero, 0, 0);
  hmx_cpu_decision d = hmx_cpu_decide(NULL);
  CHECK(!d.f.avx2_fma && !d.f.avx512 && !d.f.intel && !d.avx2_isa, "NULL registers: features set");
}

static void test_bf16(void) {
  hmx_cpu_regs r = full_cpu("GenuineIntel", 6);
  CHECK(hmx_cpu_decide(&r).f.avx512_bf16, "BF16 reported by subleaf 1 not taken");
  r.leaf7_1[0] = 0;
  CHECK(!hmx_cpu_decide(&r).f.avx512_bf16, "BF16 set though subleaf 1 lacks it");
  /* subleaf 1 does not exist when leaf 7's EAX (highest subleaf) is 0 */
  r = full_cpu("GenuineIntel", 6);
  r.leaf7[0] = 0;
  CHECK(!hmx_cpu_decide(&r).f.avx512_bf16, "BF16 read from a subleaf 1 that does not exist");
  CHECK(hmx_cpu_decide(&r).f.avx512, "leaf 7 EAX 0 cleared avx512");
  /* BF16 is an AVX-512 instruction: not without usable AVX-512 */
  r = full_cpu("GenuineIntel", 6);
  r.xcr0 = XCR0_YMM_ONLY;
  CHECK(!hmx_cpu_decide(&r).f.avx512_bf16, "BF16 set while the OS does not save ZMM");
  r = full_cpu("GenuineIntel", 6);
  r.leaf7[1] &= ~L7_AVX512BW;
  CHECK(!hmx_cpu_decide(&r).f.avx512_bf16, "BF16 set without AVX-512 BW");
}

/* vendor and family: intel, zen4, zen3 (the kernels' tuning, src/tuning.h) */
static void test_vendor(void) {
  struct {
    const char *what, *vendor;
    unsigned family;
    int strip_avx512; /* the CPU has AVX2 but no AVX-512 */
    int intel, zen4, zen3;
  } cases[] = {
      {"Zen 4", "AuthenticAMD", 0x19, 0, 0, 1, 0},
      {"Zen 3", "AuthenticAMD", 0x19, 1, 0, 0, 1},
      {"Zen 5", "AuthenticAMD", 0x1a, 0, 0, 0, 0},
      {"Zen 5 without AVX-512", "AuthenticAMD", 0x1a, 1, 0, 0, 0},
      {"Zen 2", "AuthenticAMD", 0x17, 1, 0, 0, 0},
      {"Intel family 6", "GenuineIntel", 6, 0, 1, 0, 0},
      {"Intel family 6, AVX2 only", "GenuineIntel", 6, 1, 1, 0, 0},
      {"Intel vendor, family 19h", "GenuineIntel", 0x19, 0, 1, 0, 0},
      {"Hygon", "HygonGenuine", 0x18, 1, 0, 0, 0},
      /* all three registers count: only EDX's four characters differ */
      {"not quite Intel", "GenuXXXXntel", 6, 0, 0, 0, 0},
      {"not quite AMD", "AuthXXXXcAMD", 0x19, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hmx_cpu_regs r = full_cpu(cases[i].vendor, cases[i].family);
    if (cases[i].strip_avx512) r.leaf7[1] &= ~(L7_AVX512F | L7_AVX512DQ | L7_AVX512BW | L7_AVX512VL);
    hmx_cpu_decision d = hmx_cpu_decide(&r);
    CHECK(d.f.intel == cases[i].intel, "%s: intel %d", cases[i].what, d.f.intel);
    CHECK(d.f.zen4 == cases[i].zen4, "%s: zen4 %d", cases[i].what, d.f.zen4);
    CHECK(d.f.zen3 == cases[i].zen3, "%s: zen3 %d", cases[i].what, d.f.zen3);
  }
  /* the extended family counts only under base family 0xF: base 9 with
   * extended 0x10 is family 9, not 19h */
  hmx_cpu_regs r = full_cpu("AuthenticAMD", 0x19);
  r.leaf1[0] = (0x9u << 8) | (0x10u << 20);
  CHECK(!hmx_cpu_decide(&r).f.zen4, "base family 9 read as 19h");
  /* Zen 4 with the OS not saving ZMM state cannot run AVX-512: not zen4 */
  r = full_cpu("AuthenticAMD", 0x19);
  r.xcr0 = XCR0_YMM_ONLY;
  CHECK(!hmx_cpu_decide(&r).f.zen4, "zen4 without usable AVX-512");
}

/* This machine's detection: whatever it found must be self-consistent. */
static void test_this_machine(void) {
  hmx_cpu_features f = hmx_cpu_detect();
  CHECK(!f.avx512 || f.avx2_fma, "avx512 without avx2_fma");
  CHECK(!f.avx512_bf16 || f.avx512, "avx512_bf16 without avx512");
  CHECK(!f.zen4 || f.avx512, "zen4 without avx512");
  CHECK(!(f.zen3 && f.zen4) && !(f.intel && (f.zen3 || f.zen4)), "two vendors' tunings at once");
  CHECK((hmx_cpu_why_no_avx2()[0] == '\0') == (f.avx2_fma != 0), "avx2 reason disagrees");
  CHECK((hmx_cpu_why_no_avx512()[0] == '\0') == (f.avx512 != 0), "avx512 reason disagrees");
}

int main(void) {
  test_xcr0();
  test_cpuid_bits();
  test_bf16();
  test_vendor();
  test_this_machine();
  return check_finish("test_cpu_decide");
}
