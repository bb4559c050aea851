hmx_add_test(NAME test_dispatch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dispatch.c
             LABELS unit ref)
# The kept scratch block of the SIMD backends (src/scratch_cache.h) and the
# x86 gemm that takes its pack buffers from it, call after call
hmx_add_test(NAME test_scratch_cache SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_scratch_cache.c
             LABELS unit)
