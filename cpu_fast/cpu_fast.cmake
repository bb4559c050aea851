# The CPU fast tier (docs/NUMERICS.md, "Fast tier"): cpu_fast/, used by the
# avx2, avx512 and neon backends. oneDNN (gemm, swiglu) and SLEEF (exp) are
# each optional: without one, the ops that need it stay exact in the fast
# tier and `hmx ops` says why. The exact tier never calls into this folder.
option(HMX_FAST_TIER "Build the CPU fast tier (cpu_fast/)" ON)
if(HMX_FAST_TIER AND (HMX_BACKEND_NAMES MATCHES "avx2|avx512|neon"))
  set(_fast_dir ${CMAKE_CURRENT_LIST_DIR})
  set(_fast_sources ${_fast_dir}/fast_table.c ${_fast_dir}/fast_kernels_base.c)
  if(HMX_HAVE_DNNL)
    list(APPEND _fast_sources ${_fast_dir}/fast_gemm_dnnl.c ${_fast_dir}/fast_swiglu.c
                              ${_fast_dir}/fast_attention_dnnl.c)
    target_link_libraries(hadamix PUBLIC HMX::dnnl)
    target_compile_definitions(hadamix PRIVATE HMX_HAVE_DNNL=1)
    set(HMX_FAST_DNNL ON) # the fast tier's gemm is oneDNN's (tools/hmx.cmake)
  endif()
  if(HMX_HAVE_SLEEF)
    target_link_libraries(hadamix PUBLIC ${HMX_SLEEF_LIBRARY})
    target_include_directories(hadamix PRIVATE ${HMX_SLEEF_INCLUDE})
    target_compile_definitions(hadamix PRIVATE HMX_HAVE_SLEEF=1)
    if(HMX_BACKEND_NAMES MATCHES "avx2")
      set_source_files_properties(${_fast_dir}/fast_kernels_avx2.c PROPERTIES COMPILE_OPTIONS
        "${HMX_AVX2_FLAGS};-ffp-contract=fast")
      list(APPEND _fast_sources ${_fast_dir}/fast_kernels_avx2.c)
      target_compile_definitions(hadamix PRIVATE HMX_WITH_CPU_FAST_AVX2=1)
    endif()
    if(HMX_BACKEND_NAMES MATCHES "avx512")
      # the same portable C compiled for AVX-512; fma contraction is allowed
      # here (fast tier only: its bounds cover it)
      set_source_files_properties(${_fast_dir}/fast_kernels_avx512.c PROPERTIES COMPILE_OPTIONS
        "${HMX_AVX512_FLAGS};-ffp-contract=fast")
      list(APPEND _fast_sources ${_fast_dir}/fast_kernels_avx512.c)
      target_compile_definitions(hadamix PRIVATE HMX_WITH_CPU_FAST_AVX512=1)
    endif()
  endif()
  # the bf16 gemm on G16 weights (AVX512_BF16's vdpbf16ps; run only where
  # the CPU has it, src/cpu.c): needs neither oneDNN nor SLEEF
  include(CheckCCompilerFlag)
  check_c_compiler_flag(-mavx512bf16 HMX_CC_HAS_AVX512BF16)
  if(HMX_BACKEND_NAMES MATCHES "avx512" AND HMX_CC_HAS_AVX512BF16)
    set_source_files_properties(${_fast_dir}/fast_bf16_g16.c PROPERTIES COMPILE_OPTIONS
      "${HMX_AVX512_FLAGS};-mavx512bf16")
    list(APPEND _fast_sources ${_fast_dir}/fast_bf16_g16.c)
    target_compile_definitions(hadamix PRIVATE HMX_WITH_FAST_BF16=1)
  endif()
  target_sources(hadamix PRIVATE ${_fast_sources})
  target_include_directories(hadamix PRIVATE ${_fast_dir})
  target_compile_definitions(hadamix PRIVATE HMX_WITH_CPU_FAST=1)
  unset(_fast_dir)
  unset(_fast_sources)
else()
  message(STATUS "hadamix: CPU fast tier not built (no CPU SIMD backend, or HMX_FAST_TIER=OFF)")
endif()
