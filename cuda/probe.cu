/* Whether this machine can run the cuda backend, why not, and what it found
 * (`hmx info`'s cuda section, docs/CUDA.md "Which GPUs").
 *
 * The backend is available when the CUDA driver answers, it has at least one
 * device, and the current device (the one every call runs on: device 0
 * unless the process chose another before the first hadamix call) has
 * compute capability 9.0 or newer. This build's kernels are compiled for
 * HMX_CUDA_ARCHS (sm_90 by default, SASS and PTX) and need sm_90 hardware:
 * thread-block clusters with distributed shared memory (fwht_cluster),
 * cp.async and mma.sync. Nothing here creates a CUDA context (attribute
 * queries only), so probing costs a driver load and no device memory.
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"

#ifndef HMX_CUDA_ARCHS
#define HMX_CUDA_ARCHS "unknown"
#endif

namespace {

constexpr int kMinMajor = 9; /* sm_90: clusters, cp.async, mma.sync (above) */

struct Probe {
  int ok;            /* the backend can run here */
  int count;         /* devices the runtime sees */
  int device;        /* the current device */
  char reason[256];  /* why not ("" when ok) */
};

void say(char *buf, size_t cap, size_t *at, const char *fmt, ...) {
  if (*at + 1 >= cap) return; /* full: buf[cap - 1] is the terminator */
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
  va_end(ap);
  if (n > 0) *at = *at + (size_t)n < cap ? *at + (size_t)n : cap - 1;
}

void run_probe(Probe *p) {
  memset(p, 0, sizeof *p);
  int drv = 0;
  if (cudaDriverGetVersion(&drv) != cudaSuccess || drv <= 0) {
    (void)cudaGetLastError();
    snprintf(p->reason, sizeof p->reason, "no CUDA driver (libcuda) on this machine");
    return;
  }
  cudaError_t e = cudaGetDeviceCount(&p->count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* no usable device is an answer, not an error */
    p->count = 0;
    snprintf(p->reason, sizeof p->reason, "no usable CUDA device (%s: %s)", cudaGetErrorName(e),
             cudaGetErrorString(e));
    return;
  }
  if (p->count <= 0) {
    snprintf(p->reason, sizeof p->reason, "the CUDA driver reports no device");
    return;
  }
  e = cudaGetDevice(&p->device);
  int major = 0, minor = 0;
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, p->device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, p->device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(p->reason, sizeof p->reason, "device %d: compute capability unknown (%s: %s)",
             p->device, cudaGetErrorName(e), cudaGetErrorString(e));
    return;
  }
  if (major < kMinMajor) {
    snprintf(p->reason, sizeof p->reason,
             "device %d has compute capability %d.%d; this build's kernels (%s) need %d.0 "
             "or newer (thread-block clusters)",
             p->device, major, minor, HMX_CUDA_ARCHS, kMinMajor);
    return;
  }
  p->ok = 1;
}

/* The answer, computed once per process (a function-local static: its
 * initialization is thread-safe, so racing first calls wait for one). */
const Probe *probe(void) {
  static const Probe state = [] {
    Probe p;
    run_probe(&p);
    return p;
  }();
  return &state;
}

} // namespace

extern "C" int hmx_cuda_probe(void) { return probe()->ok; }

extern "C" const char *hmx_cuda_unavailable_reason(void) { return probe()->reason; }

/* `hmx info`'s cuda section: the build, the driver, each device, the verdict. */
extern "C" int hmx_cuda_describe(char *buf, size_t cap) {
  if (!buf || cap == 0) return 0;
  buf[0] = '\0';
  size_t at = 0;
  const Probe *p = probe();
  int rt = 0, drv = 0;
  (void)cudaRuntimeGetVersion(&rt);
  say(buf, cap, &at, "compiled for:  %s (nvcc %d.%d; CUDA runtime %d.%d, linked statically)\n",
      HMX_CUDA_ARCHS, __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, rt / 1000, rt % 1000 / 10);
  if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0)
    say(buf, cap, &at, "driver:        supports CUDA %d.%d\n", drv / 1000, drv % 1000 / 10);
  else {
    (void)cudaGetLastError();
    say(buf, cap, &at, "driver:        none (libcuda not found)\n");
  }
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  say(buf, cap, &at, "devices:       %d%s%s%s\n", p->count, vis ? " (CUDA_VISIBLE_DEVICES=" : "",
      vis ? vis : "", vis ? ")" : "");
  for (int d = 0; d < p->count && d < 16; d++) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      (void)cudaGetLastError();
      say(buf, cap, &at, "  device %d:    (properties unreadable)\n", d);
      continue;
    }
    say(buf, cap, &at, "  device %d:    %s, compute %d.%d, %d SMs, %.1f GiB%s%s\n", d, prop.name,
        prop.major, prop.minor, prop.multiProcessorCount,
        (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
        prop.major >= kMinMajor ? "" : " (too old for this build)",
        d == p->device ? " (current: hadamix runs here)" : "");
    /* the balance that picks some fwht kernels (cuda/device_balance.cu) */
    double bpc = 0.0;
    const int fast = hmx_cuda_fast_memory(d, &bpc);
    say(buf, cap, &at, "               %.1f bytes of memory bandwidth per SM clock: fwht kernels for %s "
        "memory%s\n", bpc, fast ? "fast" : "slower",
        hmx_cuda_fast_memory_override() >= 0 ? " (HMX_CUDA_FWHT_FAST_MEMORY)" : "");
  }
  if (p->ok) say(buf, cap, &at, "available:     yes\n");
  else say(buf, cap, &at, "available:     no: %s\n", p->reason);
  return (int)at;
}
