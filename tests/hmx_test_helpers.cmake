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
