# The neon backend (AArch64 Advanced SIMD): every .c file of this folder.
# Advanced SIMD, FMA (fmla), IEEE division and sqrt are baseline on AArch64,
# so no ISA flag is needed and the probe always says yes there. ARMv7 NEON is
# not supported: its float arithmetic flushes subnormals (docs/NUMERICS.md §E).
include(CheckCSourceCompiles)
check_c_source_compiles("
#include <arm_neon.h>
#if !defined(__aarch64__)
#error not AArch64
#endif
int main(void) { float32x4_t v = vdupq_n_f32(1.0f); v = vfmaq_f32(v, v, v); return (int)vgetq_lane_f32(vdivq_f32(v, v), 0); }
" HMX_CC_HAS_AARCH64_NEON)
if(HMX_CC_HAS_AARCH64_NEON)
  file(GLOB HMX_NEON_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
  target_sources(hadamix PRIVATE ${HMX_NEON_SOURCES})
  target_include_directories(hadamix PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_compile_definitions(hadamix PRIVATE HMX_WITH_NEON=1)
  list(APPEND HMX_BACKEND_NAMES neon)
else()
  message(STATUS "hadamix: the compiler cannot build AArch64 Advanced SIMD: neon backend not built")
endif()
