/* Whether a GPU's memory is fast for its SMs: the one device property that
 * some fwht kernels are chosen by (cuda/fwht_impl.cuh, pow2_log_e).
 *
 * A row that moves few bytes per instruction runs at the copy bandwidth on a
 * GPU whose memory is slow for its SMs, and there the kernel that keeps the
 * most threads resident (to hide memory latency) wins. On a GPU whose memory
 * is fast for its SMs the same row waits on the instruction issue, and the
 * kernel with the fewest instructions an element wins. The H100 (3.35 TB/s,
 * 132 SMs at 1.98 GHz: 12.8 bytes per SM clock by its datasheet) is of the
 * first kind, the H200 (4.8 TB/s, the same SMs: 18.4 from its attributes,
 * `hmx info`) of the second (docs/CUDA.md;
 * docs/results/h200/knobs/). Both kernels of each such choice keep
 * NUMERICS' order, so the choice changes no bit. */
#include <cuda_runtime.h>

#include <atomic>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"
#include "device_slots.cuh"

namespace {

/* Bytes per SM clock at and above which memory counts as fast. */
constexpr double kFastBytesPerSmClock = 16.0;

/* Peak bytes a second over SM clocks a second (all SMs), from the device's
 * attributes: the memory clock is DDR (two transfers a clock). 0 when an
 * attribute is missing. */
double bytes_per_sm_clock(int device) {
  int mem_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError(); /* an unanswered attribute is not the caller's error */
    return 0.0;
  }
  if (mem_khz <= 0 || bus_bits <= 0 || sm_khz <= 0 || sms <= 0) return 0.0;
  return 2.0 * mem_khz * (bus_bits / 8.0) / ((double)sm_khz * sms);
}

} // namespace

extern "C" int hmx_cuda_fast_memory_override(void) {
  const char *e = getenv("HMX_CUDA_FWHT_FAST_MEMORY"); /* read per call, for tests */
  if (e && strcmp(e, "0") == 0) return 0;
  if (e && strcmp(e, "1") == 0) return 1;
  return -1;
}

extern "C" int hmx_cuda_fast_memory(int device, double *bytes_per_clock) {
  /* the attributes of a device do not change: read once per device
   * (cuda/device_slots.cuh's slots; zero-initialised statics: known[d] = 1
   * once ratio[d] holds the answer; two racing first calls both compute the
   * same value) */
  static std::atomic<int> known[kDeviceSlots];
  static std::atomic<double> ratio[kDeviceSlots];
  const bool cacheable = device >= 0 && device < kDeviceSlots;
  double b;
  if (cacheable && known[device].load(std::memory_order_acquire)) {
    b = ratio[device].load(std::memory_order_relaxed);
  } else {
    b = bytes_per_sm_clock(device);
    if (cacheable) {
      ratio[device].store(b, std::memory_order_relaxed);
      known[device].store(1, std::memory_order_release);
    }
  }
  if (bytes_per_clock) *bytes_per_clock = b;
  const int forced = hmx_cuda_fast_memory_override();
  return forced >= 0 ? forced : b >= kFastBytesPerSmClock;
}
