/* hmx info: version, build, CPU features, backends, thread hints. */
#define _POSIX_C_SOURCE 200809L
#include "hmx.h"
#include "tuning.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <unistd.h>
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HMX_CPUID_GNU 1
#include <cpuid.h>
#elif defined(_M_X64) || defined(_M_IX86)
#define HMX_CPUID_MSVC 1
#include <immintrin.h>
#include <intrin.h>
#endif

#ifndef HMX_CLI_BUILD_TYPE
#define HMX_CLI_BUILD_TYPE "unknown"
#endif
#ifndef HMX_CLI_COMPILE_OPTIONS
#define HMX_CLI_COMPILE_OPTIONS ""
#endif
#ifndef HMX_CLI_C_FLAGS
#define HMX_CLI_C_FLAGS ""
#endif
#ifndef HMX_CLI_SYSTEM
#define HMX_CLI_SYSTEM "unknown"
#endif

static void help(FILE *out) {
  fputs("usage: hmx info\n\n"
        "Prints the version, the compiler and build flags, this CPU's features (those the\n"
        "SIMD backends need, including whether the OS enabled the AVX/AVX-512 register\n"
        "state), every compiled-in backend (available here or not, which is the default),\n"
        "what the cuda backend found (its build, the driver, each GPU, and why it cannot\n"
        "run when it cannot), and thread hints.\n\n"
        "The default backend is HMX_BACKEND if set, else the best available one; an\n"
        "unknown or unavailable HMX_BACKEND is reported and makes the exit status 2.\n",
        out);
}

static const char *yn(int b) { return b ? "yes" : "no"; }

/* ---------------------------------------------------------------- build */

static void print_build(void) {
  printf("build:\n");
#if defined(__clang__)
  printf("  compiler:      clang %d.%d.%d\n", __clang_major__, __clang_minor__,
         __clang_patchlevel__);
#elif defined(__GNUC__)
  printf("  compiler:      gcc %d.%d.%d\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
  printf("  compiler:      MSVC %d\n", _MSC_VER);
#else
  printf("  compiler:      unknown\n");
#endif
  printf("  build type:    %s\n", HMX_CLI_BUILD_TYPE);
  printf("  target system: %s\n", HMX_CLI_SYSTEM);
  printf("  C flags:       %s%s%s\n", HMX_CLI_C_FLAGS, *HMX_CLI_C_FLAGS ? " " : "",
         HMX_CLI_COMPILE_OPTIONS);
  printf("  C standard:    %ld\n", (long)__STDC_VERSION__);
#if defined(__OPTIMIZE__)
  printf("  optimized:     yes\n");
#elif defined(__GNUC__) || defined(__clang__)
  printf("  optimized:     no\n");
#endif
#if defined(NDEBUG)
  printf("  assertions:    off\n");
#else
  printf("  assertions:    on\n");
#endif
  printf("  float eval:    FLT_EVAL_METHOD %d%s\n", (int)FLT_EVAL_METHOD,
         FLT_EVAL_METHOD == 0 ? " (float arithmetic in float: required by the exact tier)"
                              : " (WARNING: excess precision; the exact tier needs 0)");
#if defined(__FAST_MATH__)
  printf("  fast-math:     WARNING: built with -ffast-math; the exact tier is not valid\n");
#endif
#if defined(__SANITIZE_ADDRESS__)
  printf("  sanitizers:    address\n");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  printf("  sanitizers:    address\n");
#endif
#endif
  /* ISA extensions the tool itself (and, with the same flags, the core) was compiled for */
  printf("  compiled for: ");
#if defined(__x86_64__) || defined(_M_X64)
  printf(" x86-64");
#elif defined(__i386__) || defined(_M_IX86)
  printf(" x86");
#elif defined(__aarch64__) || defined(_M_ARM64)
  printf(" aarch64");
#else
  printf(" other");
#endif
#if defined(__AVX512F__)
  printf(" avx512f");
#endif
#if defined(__AVX2__)
  printf(" avx2");
#endif
#if defined(__FMA__)
  printf(" fma");
#endif
#if defined(__ARM_NEON)
  printf(" neon");
#endif
  printf(" (baseline; SIMD backends enable their ISA per file)\n");
}

/* ---------------------------------------------------------------- CPU */

#if defined(HMX_CPUID_GNU) || defined(HMX_CPUID_MSVC)
/* r = {eax, ebx, ecx, edx}; zeros when the leaf is beyond the maximum. */
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  r[0] = r[1] = r[2] = r[3] = 0;
#if defined(HMX_CPUID_GNU)
  unsigned max = __get_cpuid_max(leaf & 0x80000000u, NULL);
  if (max == 0 || leaf > max) return;
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
#else
  int v[4];
  __cpuid(v, (int)(leaf & 0x80000000u));
  if ((unsigned)v[0] < leaf) return;
  __cpuidex(v, (int)leaf, (int)sub);
  for (int i = 0; i < 4; i++) r[i] = (unsigned)v[i];
#endif
}

/* XCR0 (which register state the OS saves); call only when OSXSAVE is set. */
static unsigned long long xgetbv0(void) {
#if defined(HMX_CPUID_GNU)
  unsigned eax, edx;
  /* xgetbv, encoded so that no -mxsave is needed */
  __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
#else
  return (unsigned long long)_xgetbv(0);
#endif
}

/* src/tuning.h's fwht_mp_pad */
static const char *mp_pad_word(int v) { return v >= 2 ? "yes" : v == 1 ? "in caches" : "no"; }

static void print_cpu(void) {
  unsigned r[4];
  char vendor[13] = {0};
  char brand[49] = {0};
  cpuid(0, 0, r);
  memcpy(vendor, &r[1], 4);
  memcpy(vendor + 4, &r[3], 4);
  memcpy(vendor + 8, &r[2], 4);
  cpuid(0x80000000u, 0, r);
  if (r[0] >= 0x80000004u) {
    for (unsigned i = 0; i < 3; i++) {
      cpuid(0x80000002u + i, 0, r);
      memcpy(brand + 16 * i, r, 16);
    }
  }
  const char *b = brand;
  while (*b == ' ') b++;

  unsigned l1[4], l7[4], l71[4];
  cpuid(1, 0, l1);
  cpuid(7, 0, l7);
  cpuid(7, 1, l71);
  int sse42 = (l1[2] >> 20) & 1, avx = (l1[2] >> 28) & 1, fma = (l1[2] >> 12) & 1;
  int f16c = (l1[2] >> 29) & 1, osxsave = (l1[2] >> 27) & 1;
  int avx2 = (l7[1] >> 5) & 1, bmi2 = (l7[1] >> 8) & 1;
  int avx512f = (l7[1] >> 16) & 1, avx512dq = (l7[1] >> 17) & 1;
  int avx512bw = (l7[1] >> 30) & 1, avx512vl = (l7[1] >> 31) & 1;
  int avx512bf16 = (l71[0] >> 5) & 1, avx512fp16 = (l7[3] >> 23) & 1;
  unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  int os_ymm = osxsave && (xcr0 & 0x6) == 0x6;
  int os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;

  printf("cpu:\n");
#if defined(__x86_64__) || defined(_M_X64)
  printf("  architecture:  x86-64\n");
#else
  printf("  architecture:  x86 (32-bit)\n");
#endif
  printf("  vendor:        %s\n", vendor);
  printf("  brand:         %s\n", *b ? b : "(not reported)");
  printf("  features:     ");
  struct { const char *name; int on; } feats[] = {
      {"sse4.2", sse42},       {"avx", avx},           {"avx2", avx2},
      {"fma", fma},            {"f16c", f16c},         {"bmi2", bmi2},
      {"avx512f", avx512f},    {"avx512bw", avx512bw}, {"avx512dq", avx512dq},
      {"avx512vl", avx512vl},  {"avx512_bf16", avx512bf16}, {"avx512_fp16", avx512fp16},
  };
  int any = 0;
  for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++)
    if (feats[i].on) {
      printf(" %s", feats[i].name);
      any = 1;
    }
  printf("%s\n", any ? "" : " (none of interest)");
  printf("  missing:      ");
  any = 0;
  for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++)
    if (!feats[i].on) {
      printf(" %s", feats[i].name);
      any = 1;
    }
  printf("%s\n", any ? "" : " (none)");
  printf("  OS state:      osxsave %s, XCR0 0x%llx, YMM (AVX) %s, ZMM/opmask (AVX-512) %s\n",
         yn(osxsave), xcr0, osxsave ? (os_ymm ? "enabled" : "disabled") : "unknown",
         osxsave ? (os_zmm ? "enabled" : "disabled") : "unknown");
  const int avx512_ok = avx512f && avx512bw && avx512dq && avx512vl && os_zmm;
  printf("  usable:        avx2+fma %s, avx512 f/bw/dq/vl %s, avx512_bf16 %s (the fast tier's "
         "bf16 gemm)\n", yn(avx2 && fma && avx && os_ymm), yn(avx512_ok),
         yn(avx512_ok && avx512bf16));
  /* schedule choices of the x86 kernels for this CPU family (src/tuning.h) */
  const hmx_x86_tuning *t = hmx_x86_tuning_current();
  printf("  tuning:        %s (%s; measured on %s): fwht split chunks %s, aligned scratch for "
         "unaligned rows %s, next-row prefetch from %d elements avx512, %d avx2 (m > 1 "
         "one-chunk rows %s avx512, %s avx2; spread over all passes %s; into L2 only from %d "
         "elements, 0: never), two-pass rows without dispatch %s (an odd split's extra stage "
         "in the chunk pass %s), m >= 20 rows of blocks 4 KiB apart in a padded scratch "
         "avx512 %s, avx2 %s, avx512 stride 1 by %s; "
         "one-token G16 GEMV "
         "prefetch %d lines ahead (0: none), and of the next pass's groups up to %d KiB a pass "
         "(0: never)\n",
         t->name, hmx_x86_tuning_source(), t->measured_on, yn(t->fwht_split_chunks),
         yn(t->fwht_unaligned_scratch), t->fwht_pf_min_p[1], t->fwht_pf_min_p[0],
         yn(t->fwht_pf_mpoint_rows[1]), yn(t->fwht_pf_mpoint_rows[0]), yn(t->fwht_pf_spread),
         t->fwht_pf_l2_min_p, yn(t->fwht_two_pass_rows), yn(t->fwht_two_pass_chunk_extra),
         mp_pad_word(t->fwht_mp_pad[1]), mp_pad_word(t->fwht_mp_pad[0]),
         t->fwht_dup_load_avx512 ? "duplicating loads" : "a shuffle", t->gemv_pf_lines,
         t->gemv_next_kib);
}
#else
static void print_cpu(void) {
  printf("cpu:\n");
#if defined(__aarch64__) || defined(_M_ARM64)
  printf("  architecture:  aarch64 (NEON)\n");
#elif defined(__arm__) || defined(_M_ARM)
#if defined(__ARM_NEON)
  printf("  architecture:  arm (32-bit, NEON)\n");
#else
  printf("  architecture:  arm (32-bit, no NEON)\n");
#endif
#elif defined(__riscv)
  printf("  architecture:  riscv\n");
#elif defined(__powerpc64__)
  printf("  architecture:  powerpc64\n");
#else
  printf("  architecture:  unknown (no SIMD backend targets it)\n");
#endif
}
#endif

/* ---------------------------------------------------------------- backends, threads */

static int print_backends(void) {
  const char *env = getenv("HMX_BACKEND");
  const hmx_backend *best = hmx_backend_best();
  const hmx_backend *def = hmx_backend_default();
  int rc = HMX_EXIT_OK;
  char deferr[600] = "";
  if (!def) {
    snprintf(deferr, sizeof deferr, "%s", hmx_cli_status_message(HMX_ERR_NOT_FOUND));
    rc = HMX_EXIT_USAGE;
  }
  printf("backends:\n");
  printf("  %-10s %-9s %-7s %-7s %s\n", "name", "available", "default", "ops", "description");
  for (int i = 0; i < hmx_backend_count(); i++) {
    const hmx_backend *be = hmx_backend_at(i);
    int impl = 0;
    for (int k = 0; k < hmx_op_count(); k++) impl += hmx_op_implemented(hmx_op_at(k), be);
    char ops[32];
    snprintf(ops, sizeof ops, "%d/%d", impl, hmx_op_count());
    const char *mark = be == def ? "*" : "";
    printf("  %-10s %-9s %-7s %-7s %s\n", hmx_backend_name(be), yn(hmx_backend_available(be)),
           mark, ops, hmx_backend_description(be));
    const char *why = hmx_backend_unavailable_reason(be);
    if (*why) printf("  %-10s not here: %s\n", "", why);
  }
  printf("  best available: %s\n", hmx_backend_name(best));
  if (env && *env)
    printf("  HMX_BACKEND:    %s\n", env);
  else
    printf("  HMX_BACKEND:    (unset)\n");
  if (def)
    printf("  default:        %s%s\n", hmx_backend_name(def),
           env && *env ? " (from HMX_BACKEND)" : " (best available)");
  else
    printf("  default:        ERROR: %s\n", deferr);
  if (!def) hmx_cli_error(rc, "info: %s", deferr);
  return rc;
}

/* A section per backend that describes what it found (cuda: the GPUs). */
static void print_backend_details(void) {
  char text[4096];
  for (int i = 0; i < hmx_backend_count(); i++) {
    const hmx_backend *be = hmx_backend_at(i);
    if (hmx_backend_describe(be, text, sizeof text) <= 0) continue;
    printf("%s:\n", hmx_backend_name(be));
    for (const char *line = text; *line;) {
      const char *end = strchr(line, '\n');
      const int len = end ? (int)(end - line) : (int)strlen(line);
      printf("  %.*s\n", len, line);
      line += len + (end ? 1 : 0);
    }
  }
}

static void print_threads(void) {
  long n = -1;
#if defined(_SC_NPROCESSORS_ONLN)
  n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  printf("threads:\n");
  if (n > 0) printf("  online CPUs:   %ld\n", n);
  else printf("  online CPUs:   unknown\n");
  const char *omp = getenv("OMP_NUM_THREADS");
  printf("  environment:   OMP_NUM_THREADS=%s\n", omp && *omp ? omp : "(unset)");
  if (hmx_has_threads())
    printf("  threading:     OpenMP (rows, heads, output tiles; the same bits on any count)\n");
  else
    printf("  threading:     none: built without OpenMP, every call runs on one thread\n");
  printf("  --threads N:   0 = the backend's default; ref is always single-threaded\n");
}

int hmx_cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (hmx_is_help(argv[i])) {
      help(stdout);
      return HMX_EXIT_OK;
    }
    return hmx_cli_error(HMX_EXIT_USAGE, "info: unexpected argument '%s' (see `hmx info --help`)",
                         argv[i]);
  }
  printf("hadamix %s\n", hmx_version_string());
  print_build();
  print_cpu();
  int rc = print_backends();
  print_backend_details();
  print_threads();
  fflush(stdout);
  return rc;
}
