# Detect optional dependencies and say what each one enables. Absence is
# reported at configure time and never fails the build.

include(CheckLibraryExists)
include(CheckLanguage)

# libm: sqrtf is the only libm function of the exact tier (docs/NUMERICS.md).
check_library_exists(m sqrtf "" HMX_HAVE_LIBM)
set(HMX_LIBM "")
if(HMX_HAVE_LIBM)
  set(HMX_LIBM m)
endif()

# hmx_report(name found-var what [switch-var]): a dependency whose switch
# (HMX_WITH_...) is OFF is reported as left out, not as missing.
function(hmx_report name found what)
  if(${found})
    message(STATUS "hadamix: ${name} found: ${what}")
  elseif(ARGC GREATER 3 AND NOT ${ARGV3})
    message(STATUS "hadamix: ${name} left out (${ARGV3}=OFF): ${what} disabled")
  else()
    message(STATUS "hadamix: ${name} NOT found: ${what} disabled")
  endif()
endfunction()

# cJSON: parses safetensors headers (vectors, weights, the hmx tool), a
# Hugging Face checkpoint's config.json and its tokenizer.json. Without it the
# library is built with src/json_absent.c, which refuses those formats, and
# cmake/no_cjson/ comes first on the include path: its cjson/cJSON.h is an
# #error, so a source that still includes cJSON fails to compile even where
# the system has the header. HMX_WITH_CJSON=OFF builds that way on a machine
# that has cJSON (tools/test.sh --minimal, in CI).
option(HMX_WITH_CJSON "Use cJSON when found (OFF: build as if it were absent)" ON)
set(HMX_HAVE_CJSON OFF)
if(HMX_WITH_CJSON)
  find_path(HMX_CJSON_INCLUDE cjson/cJSON.h)
  find_library(HMX_CJSON_LIBRARY cjson)
endif()
if(HMX_WITH_CJSON AND HMX_CJSON_INCLUDE AND HMX_CJSON_LIBRARY)
  set(HMX_HAVE_CJSON ON)
  add_library(HMX::cjson UNKNOWN IMPORTED)
  set_target_properties(HMX::cjson PROPERTIES IMPORTED_LOCATION "${HMX_CJSON_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${HMX_CJSON_INCLUDE}")
endif()
hmx_report("cJSON (libcjson-dev)" HMX_HAVE_CJSON
           "safetensors and Hugging Face files, the hmx tool, golden vectors, conformance tests"
           HMX_WITH_CJSON)
if(NOT HMX_HAVE_CJSON)
  include_directories(BEFORE ${CMAKE_CURRENT_LIST_DIR}/no_cjson)
endif()

# SLEEF: the peer expf that tools/exp_check compares against.
set(HMX_HAVE_SLEEF OFF)
find_path(HMX_SLEEF_INCLUDE sleef.h)
find_library(HMX_SLEEF_LIBRARY sleef)
if(HMX_SLEEF_INCLUDE AND HMX_SLEEF_LIBRARY)
  set(HMX_HAVE_SLEEF ON)
endif()
hmx_report("SLEEF (libsleef-dev)" HMX_HAVE_SLEEF
           "the exp comparison with Sleef_expf_u10 and the fast tier's vector exp")

# oneDNN: the fast tier's CPU GEMM (cpu_fast/, docs/NUMERICS.md "Fast tier").
set(HMX_HAVE_DNNL OFF)
find_path(HMX_DNNL_INCLUDE dnnl.h PATH_SUFFIXES oneapi/dnnl)
find_library(HMX_DNNL_LIBRARY dnnl)
if(HMX_DNNL_INCLUDE AND HMX_DNNL_LIBRARY)
  set(HMX_HAVE_DNNL ON)
  add_library(HMX::dnnl UNKNOWN IMPORTED)
  set_target_properties(HMX::dnnl PROPERTIES IMPORTED_LOCATION "${HMX_DNNL_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${HMX_DNNL_INCLUDE}")
endif()
hmx_report("oneDNN (libdnnl-dev)" HMX_HAVE_DNNL "the fast tier's CPU gemm and swiglu")

# MPFR: the correctly rounded exp that tools/exp_check measures against.
set(HMX_HAVE_MPFR OFF)
find_path(HMX_MPFR_INCLUDE mpfr.h)
find_library(HMX_MPFR_LIBRARY mpfr)
find_library(HMX_GMP_LIBRARY gmp)
if(HMX_MPFR_INCLUDE AND HMX_MPFR_LIBRARY AND HMX_GMP_LIBRARY)
  set(HMX_HAVE_MPFR ON)
endif()
hmx_report("MPFR (libmpfr-dev)" HMX_HAVE_MPFR "the correctly rounded exp reference")

# OpenMP: threading of the SIMD backends (never of the reference).
find_package(OpenMP QUIET COMPONENTS C)
set(HMX_HAVE_OPENMP ${OpenMP_C_FOUND})
hmx_report("OpenMP" HMX_HAVE_OPENMP "multithreaded backends")

# CUDA: the H100 backend (cuda/), compiled whenever nvcc is found, unless
# HMX_WITH_CUDA=OFF (a build that does not need it, e.g. tools/test.sh
# --minimal, saves its minutes of nvcc).
option(HMX_WITH_CUDA "Build the CUDA backend when nvcc is found" ON)
set(HMX_HAVE_CUDA OFF)
if(HMX_WITH_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(HMX_HAVE_CUDA ON)
  endif()
endif()
hmx_report("CUDA compiler" HMX_HAVE_CUDA "the CUDA backend" HMX_WITH_CUDA)
