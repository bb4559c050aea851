/* The counter-based random numbers of the golden vectors (docs/VECTORS.md).
 * SplitMix64 (Steele, Lea, Flood 2014): any language can regenerate a
 * vector's inputs from its seed. */
#ifndef HMX_RNG_H
#define HMX_RNG_H

#include <stdint.h>

#define HMX_GOLDEN_GAMMA 0x9E3779B97F4A7C15ull

/* The SplitMix64 output function. */
uint64_t hmx_splitmix64_mix(uint64_t z);
/* Draw i (0-based) of stream `stream` under `seed`:
 *   key  = mix(seed + (stream + 1) * GAMMA)
 *   draw = mix(key + (i + 1) * GAMMA)       (all arithmetic mod 2^64) */
uint64_t hmx_rng_u64(uint64_t seed, uint64_t stream, uint64_t i);
/* (draw >> 40) * 2^-23 - 1: a multiple of 2^-23 in [-1, 1), exact in f32. */
float hmx_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i);

#endif
