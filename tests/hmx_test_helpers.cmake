# hmx_add_test(NAME name SOURCES a.c b.c [LABELS l1 l2] [ARGS ...] [LIBS ...])
# Builds one test executable linked to hadamix and registers it with ctest.
# A test that cannot run here exits with 77; ctest then reports it as skipped.
function(hmx_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LABELS;ARGS;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${T_NAME} PRIVATE hadamix ${T_LIBS})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${T_LABELS}")
  if(T_TIMEOUT)
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
endfunction()

# hmx_target_command(<target> <out-var>): how a CMake -P test script runs
# <target>. Natively, the executable itself; when cross-compiling, a
# generated shell wrapper that runs it through CMAKE_CROSSCOMPILING_EMULATOR
# (ctest adds the emulator only to a test's own command, not to programs
# that a script starts).
function(hmx_target_command target out)
  if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
    list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emu)
    set(wrapper ${CMAKE_BINARY_DIR}/emulated/${target})
    # once per target: several test fragments may ask for the same wrapper
    get_property(done GLOBAL PROPERTY HMX_EMULATED_${target})
    if(NOT done)
      file(GENERATE OUTPUT ${wrapper}
           CONTENT "#!/bin/sh\nexec ${emu} \"$<TARGET_FILE:${target}>\" \"$@\"\n"
           FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                            WORLD_READ WORLD_EXECUTE)
      set_property(GLOBAL PROPERTY HMX_EMULATED_${target} 1)
    endif()
    set(${out} ${wrapper} PARENT_SCOPE)
  else()
    set(${out} $<TARGET_FILE:${target}> PARENT_SCOPE)
  endif()
endfunction()

# hmx_add_fuzz_target(NAME name SOURCE target.c CORPUS dir [DICT file] [MAX_LEN bytes]
#                     [UNDER_TEST a.c b.c] [LIBS ...])   (tests/fuzz/README.md)
# Always: the ctest <name>_replay (label unit) runs the target's entry point,
# through tests/fuzz/fuzz_replay.c and linked to hadamix, over the seed corpus.
# With -DHMX_FUZZ=ON and clang with libFuzzer: the libFuzzer binary <name>,
# which compiles the code under test (UNDER_TEST) into itself with ASan and
# UBSan so that libFuzzer gets coverage from it, and the ctest <name>_run
# (label fuzz) that fuzzes for HMX_FUZZ_SECONDS seconds with inputs of at most
# MAX_LEN bytes (default 4096; libFuzzer cuts longer seeds). New inputs go to
# <build>/tests/<name>_corpus and crash artifacts to <build>/tests/<name>-*,
# never into the source tree.
set(HMX_FUZZ_SECONDS 20 CACHE STRING "Seconds that the fuzz-labelled ctests fuzz for")
function(hmx_add_fuzz_target)
  cmake_parse_arguments(F "" "NAME;SOURCE;CORPUS;DICT;MAX_LEN" "UNDER_TEST;LIBS" ${ARGN})
  if(NOT F_MAX_LEN)
    set(F_MAX_LEN 4096)
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/tests/fuzz)
  hmx_add_test(NAME ${F_NAME}_replay SOURCES ${dir}/fuzz_replay.c ${F_SOURCE} ARGS ${F_CORPUS}
               LABELS unit)
  if(NOT HMX_FUZZ)
    return()
  endif()
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(WARNING "HMX_FUZZ=ON needs clang with libFuzzer; ${CMAKE_C_COMPILER_ID} found: "
                    "${F_NAME} is not built")
    return()
  endif()
  # libFuzzer ships with clang's runtime (Debian: libclang-rt-14-dev); check
  # once that it links before relying on it.
  if(NOT DEFINED HMX_LIBFUZZER_LINKS)
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
    set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
    check_c_source_compiles("#include <stddef.h>
      #include <stdint.h>
      int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
      HMX_LIBFUZZER_LINKS)
  endif()
  if(NOT HMX_LIBFUZZER_LINKS)
    message(STATUS "hadamix: libFuzzer NOT found (clang's runtime): ${F_NAME} disabled")
    return()
  endif()
  set(flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
            -fno-omit-frame-pointer -g)
  add_executable(${F_NAME} ${F_SOURCE} ${F_UNDER_TEST})
  target_include_directories(${F_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                               ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${F_NAME} PRIVATE ${flags})
  # a target may define libFuzzer hooks (LLVMFuzzerCustomMutator) under this macro
  target_compile_definitions(${F_NAME} PRIVATE HMX_LIBFUZZER=1)
  target_link_options(${F_NAME} PRIVATE ${flags})
  target_link_libraries(${F_NAME} PRIVATE ${F_LIBS} ${HMX_LIBM})
  # clang links it (-fsanitize=fuzzer), also when hadamix holds CUDA objects,
  # for which CMake would otherwise pick the host C++ compiler (g++ knows no
  # libFuzzer); libFuzzer brings the C++ runtime that the CUDA runtime needs
  set_target_properties(${F_NAME} PROPERTIES LINKER_LANGUAGE C)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${F_NAME}_corpus)
  file(MAKE_DIRECTORY ${work})
  set(dict)
  if(F_DICT)
    set(dict -dict=${F_DICT})
  endif()
  add_test(NAME ${F_NAME}_run
           COMMAND ${F_NAME} -max_total_time=${HMX_FUZZ_SECONDS} -max_len=${F_MAX_LEN} -timeout=10
                   -print_final_stats=1 ${dict}
                   -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${F_NAME}-
                   ${work} ${F_CORPUS})
  math(EXPR timeout "${HMX_FUZZ_SECONDS} + 120")
  set_tests_properties(${F_NAME}_run PROPERTIES LABELS fuzz TIMEOUT ${timeout})
endfunction()
