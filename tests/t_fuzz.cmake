# Fuzzing of the safetensors reader (tests/fuzz/README.md).
#
# Always: fuzz_safetensors_replay runs the fuzz entry point over the committed
# seed corpus as a normal unit test.
# With -DHMX_FUZZ=ON and clang: the libFuzzer binary fuzz_safetensors, and the
# ctest fuzz_safetensors_run (label fuzz) that fuzzes for a bounded time.
if(NOT HMX_HAVE_CJSON)
  return()
endif()

set(HMX_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz)
set(HMX_FUZZ_SECONDS 20 CACHE STRING "Seconds that the fuzz-labelled ctests fuzz for")

hmx_add_test(NAME fuzz_safetensors_replay
             SOURCES ${HMX_FUZZ_DIR}/fuzz_replay.c ${HMX_FUZZ_DIR}/fuzz_safetensors.c
             ARGS ${HMX_FUZZ_DIR}/corpus_safetensors
             LABELS unit)

if(HMX_FUZZ)
  # libFuzzer ships with clang's runtime (Debian: libclang-rt-14-dev); check
  # that it links before relying on it.
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_c_source_compiles("#include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
    HMX_LIBFUZZER_LINKS)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT HMX_LIBFUZZER_LINKS)
    message(STATUS "hadamix: libFuzzer NOT found (clang's runtime): fuzz_safetensors disabled")
  elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
    # The code under test is compiled into the target itself so that libFuzzer
    # gets coverage feedback from it (the hadamix library is not instrumented).
    set(HMX_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
                       -fno-omit-frame-pointer -g)
    add_executable(fuzz_safetensors
                   ${HMX_FUZZ_DIR}/fuzz_safetensors.c
                   ${PROJECT_SOURCE_DIR}/src/safetensors.c
                   ${PROJECT_SOURCE_DIR}/src/status.c
                   ${PROJECT_SOURCE_DIR}/src/tensor.c)
    target_include_directories(fuzz_safetensors PRIVATE ${PROJECT_SOURCE_DIR}/include
                                                        ${PROJECT_SOURCE_DIR}/src)
    target_compile_options(fuzz_safetensors PRIVATE ${HMX_FUZZ_FLAGS})
    target_link_options(fuzz_safetensors PRIVATE ${HMX_FUZZ_FLAGS})
    target_link_libraries(fuzz_safetensors PRIVATE HMX::cjson ${HMX_LIBM})

    # New inputs go to a corpus in the build tree; the committed seeds are
    # only read.
    set(HMX_FUZZ_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz_safetensors_corpus)
    file(MAKE_DIRECTORY ${HMX_FUZZ_WORK})
    add_test(NAME fuzz_safetensors_run
             COMMAND fuzz_safetensors -max_total_time=${HMX_FUZZ_SECONDS} -max_len=4096
                     -timeout=10 -print_final_stats=1
                     -dict=${HMX_FUZZ_DIR}/safetensors.dict
                     -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_safetensors-
                     ${HMX_FUZZ_WORK} ${HMX_FUZZ_DIR}/corpus_safetensors)
    math(EXPR HMX_FUZZ_TIMEOUT "${HMX_FUZZ_SECONDS} + 120")
    set_tests_properties(fuzz_safetensors_run PROPERTIES LABELS fuzz
                         TIMEOUT ${HMX_FUZZ_TIMEOUT})
  else()
    message(WARNING "HMX_FUZZ=ON needs clang with libFuzzer; ${CMAKE_C_COMPILER_ID} found: "
                    "fuzz_safetensors is not built")
  endif()
endif()
