hmx_add_test(NAME test_dispatch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dispatch.c
             LABELS unit ref)
# The kept scratch block of the SIMD backends (src/scratch_cache.h) and the
# x86 gemm that takes its pack buffers from it, call after call
hmx_add_test(NAME test_scratch_cache SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_scratch_cache.c
             LABELS unit)
# The same with the path of a compiler without C11 atomics (no block kept):
# src/scratch_cache.c built into the test with HMX_SCRATCH_NO_KEEP, its
# definitions taking the place of the library's (libhadamix is static, and
# an archive's member is only linked for symbols still undefined).
hmx_add_test(NAME test_scratch_cache_nokeep
             SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_scratch_cache.c
                     ${PROJECT_SOURCE_DIR}/src/scratch_cache.c
             ARGS nokeep LABELS unit)
target_compile_definitions(test_scratch_cache_nokeep PRIVATE HMX_SCRATCH_NO_KEEP=1)
# The x86 tuning profiles' "profile+field=value" specs (src/tuning.h), which
# tools/x86/fwht_ab.sh's variants run under
hmx_add_test(NAME test_tuning SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tuning.c LABELS unit)
# The CPUID / XCR0 decision (src/cpu_decide.c) on made-up CPUs: AVX-512
# hardware under an OS without ZMM state, Zen 3/4/5, no leaf 7
hmx_add_test(NAME test_cpu_decide SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_decide.c
             LABELS unit)
# Every op in each full backend's table (ref, the SIMD and CUDA backends),
# whether or not this machine can run it: a NULL kernel fails here instead of
# showing only as skipped conformance tests. The arguments are the backends
# CMake compiled in, which the registry must all have.
hmx_add_test(NAME test_backend_complete
             SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_backend_complete.c
             ARGS ${HMX_BACKEND_NAMES} LABELS unit)
