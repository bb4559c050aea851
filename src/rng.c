/* SplitMix64 streams (see rng.h). */
#include "rng.h"

uint64_t hmx_splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hmx_rng_u64(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t key = hmx_splitmix64_mix(seed + (stream + 1) * HMX_GOLDEN_GAMMA);
  return hmx_splitmix64_mix(key + (i + 1) * HMX_GOLDEN_GAMMA);
}

float hmx_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i) {
  uint32_t k = (uint32_t)(hmx_rng_u64(seed, stream, i) >> 40); /* 24 bits */
  return (float)k * 0x1p-23f - 1.0f;
}
