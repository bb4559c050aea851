/* hmx_cuda_fast_memory (cuda/device_balance.cu): whether a GPU's memory is
 * fast for its SMs, which picks some fwht kernels (docs/CUDA.md, "On the
 * H200"). Runs with or without a GPU:
 *   - HMX_CUDA_FWHT_FAST_MEMORY=0 / 1 forces the answer; any other value, or
 *     none, leaves it to the device;
 *   - the ratio it reports is recomputed here from the device's attributes
 *     (memory clock x 2 x bus width / 8 over SM clock x SMs), and the answer
 *     is ratio >= 16; without a device (or for a device number that does
 *     not exist) the ratio is 0 and the answer "not fast". */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "../cuda/cuda_kernels.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *kVar = "HMX_CUDA_FWHT_FAST_MEMORY";

/* The ratio from the attributes, independently of the library; 0 when a
 * device or an attribute is missing. */
static double expected_ratio(int dev) {
  int mem = 0, bus = 0, clk = 0, sms = 0;
  if (cudaDeviceGetAttribute(&mem, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0.0;
  }
  if (mem <= 0 || bus <= 0 || clk <= 0 || sms <= 0) return 0.0;
  return 2.0 * mem * (bus / 8.0) / ((double)clk * sms);
}

int main(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  unsetenv(kVar);
  for (int dev = 0; dev <= count; dev++) { /* dev == count: a device that does not exist */
    const double want = dev < count ? expected_ratio(dev) : 0.0;
    double got = -1.0;
    const int fast = hmx_cuda_fast_memory(dev, &got);
    CHECK(fabs(got - want) <= 1e-9 * (want > 1 ? want : 1),
          "device %d: %.6f bytes per SM clock, expected %.6f", dev, got, want);
    CHECK(fast == (want >= 16.0), "device %d (%.1f bytes per SM clock): fast = %d", dev, want, fast);
    printf("device %d: %.1f bytes of memory bandwidth per SM clock: %s\n", dev, got,
           fast ? "fast" : "not fast");
    /* the override, whatever the device */
    setenv(kVar, "1", 1);
    CHECK(hmx_cuda_fast_memory(dev, NULL) == 1, "device %d: %s=1 ignored", dev, kVar);
    setenv(kVar, "0", 1);
    CHECK(hmx_cuda_fast_memory(dev, NULL) == 0, "device %d: %s=0 ignored", dev, kVar);
    /* other values leave the device's answer (and the ratio) as they were */
    static const char *const other[] = {"", "2", "yes", "10", "01"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
      setenv(kVar, other[i], 1);
      double again = -1.0;
      CHECK(hmx_cuda_fast_memory(dev, &again) == fast && again == got,
            "device %d: %s='%s' changed the answer", dev, kVar, other[i]);
    }
    unsetenv(kVar);
  }
  CHECK(hmx_cuda_fast_memory(-1, NULL) == 0, "device -1 counts as fast");
  return check_finish("test_cuda_balance");
}
