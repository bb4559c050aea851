/* Answers kept per device. A kernel's attributes (its shared-memory limit),
 * its occupancy and a device's own attributes belong to one device, so the
 * CUDA backend keeps them in one slot per device (gemv_slab's limit,
 * att_smem_limit, occupancy_once, hmx_cuda_fast_memory): slot d for device d below
 * kDeviceSlots. A device past the last slot, or a call that cannot read the
 * current device, keeps nothing and asks every time. */
#ifndef HMX_CUDA_DEVICE_SLOTS_CUH
#define HMX_CUDA_DEVICE_SLOTS_CUH

#include <cuda_runtime.h>

constexpr int kDeviceSlots = 64;

/* The current device's slot, or -1; *dev gets the device (-1 if it cannot
 * be read; the runtime's error is then cleared: it is not the caller's). */
inline int current_device_slot(int *dev) {
  if (cudaGetDevice(dev) != cudaSuccess) {
    (void)cudaGetLastError();
    *dev = -1;
    return -1;
  }
  return *dev >= 0 && *dev < kDeviceSlots ? *dev : -1;
}

#endif
