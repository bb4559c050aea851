/* A libFuzzer mutation for the fuzz targets whose inputs carry a block of
 * numbers at a known offset (tensor data): mutate only those bytes, so that
 * the file around them stays valid and the code under test sees new values.
 * Only for libFuzzer builds (HMX_LIBFUZZER, set by hmx_add_fuzz_target). */
#ifndef HMX_FUZZ_MUTATE_VALUES_H
#define HMX_FUZZ_MUTATE_VALUES_H

#ifdef HMX_LIBFUZZER
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* libFuzzer's own mutation of data[0..size), at most max_size bytes. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Values at the edges of f32 and f16 (NaN with payloads, infinities,
 * subnormals, -0, the largest finite), written over a value or a block scale. */
static const uint32_t FUZZ_EDGE32[] = {0x7fc00001u, 0xffc12345u, 0x7f800000u, 0xff800000u,
                                       0x00000001u, 0x807fffffu, 0x80000000u, 0x7f7fffffu};
static const uint16_t FUZZ_EDGE16[] = {0x7e01u, 0xfc00u, 0x7c00u, 0x0001u, 0x8000u, 0x7bffu,
                                       0x7f81u, 0x0040u};

/* Mutates data[start..size) in place, keeping the size: an f32 or an f16 edge
 * value at a position picked by seed, or libFuzzer's own mutations of those
 * bytes. The files are little-endian, like the hosts we fuzz on. */
static void fuzz_mutate_values(uint8_t *data, size_t size, size_t start, unsigned seed) {
  const size_t n = size - start;
  if ((seed & 6) == 0 && n >= 4) {
    const uint32_t v = FUZZ_EDGE32[(seed >> 8) % 8];
    memcpy(data + start + (seed >> 3) % (n - 3), &v, 4);
  } else if ((seed & 6) == 2 && n >= 2) {
    const uint16_t v = FUZZ_EDGE16[(seed >> 8) % 8];
    memcpy(data + start + (seed >> 3) % (n - 1), &v, 2);
  } else {
    LLVMFuzzerMutate(data + start, n, n); /* bytes past a shrunk result keep their values */
  }
}
#endif
#endif
