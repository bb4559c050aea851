# Shared by the CLI test scripts (run with cmake -P). The caller passes
# -DHMX=<hmx> -DHELPER=<test_conform_detects> -DVECTORS=<dir> -DWORK=<scratch dir>.
foreach(v HMX HELPER WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "pass -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Tests must not depend on the caller's environment.
unset(ENV{HMX_BACKEND})
unset(ENV{HMX_X86_TUNING})

# hmx_expect(NAME <what> CODE <exit status> [STDERR <regex>] [STDOUT <regex>]
#            [MULTILINE] COMMAND <program> <args>...)
# Runs the command and checks that it exited normally with exactly CODE (a
# crash or signal gives a text result, never equal to CODE), that stderr and
# stdout match the regexes, and, for exit codes 1 and 2 with STDERR given and
# without MULTILINE, that stderr is exactly one line starting with "hmx: ". Failures are
# reported with SEND_ERROR, so every check runs and the script then fails.
function(hmx_expect)
  cmake_parse_arguments(E "MULTILINE" "NAME;CODE;STDERR;STDOUT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${E_COMMAND}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  set(problems "")
  if(NOT "${rc}" STREQUAL "${E_CODE}")
    string(APPEND problems "  exit status '${rc}', expected ${E_CODE}\n")
  endif()
  if(DEFINED E_STDERR AND NOT err MATCHES "${E_STDERR}")
    string(APPEND problems "  stderr does not match '${E_STDERR}'\n")
  endif()
  if(DEFINED E_STDOUT AND NOT out MATCHES "${E_STDOUT}")
    string(APPEND problems "  stdout does not match '${E_STDOUT}'\n")
  endif()
  if((E_CODE STREQUAL "1" OR E_CODE STREQUAL "2") AND DEFINED E_STDERR AND NOT E_MULTILINE
     AND NOT err MATCHES "^hmx: [^\n]+\n$")
    string(APPEND problems "  stderr is not one line starting with 'hmx: '\n")
  endif()
  if(problems)
    string(REPLACE ";" " " cmd "${E_COMMAND}")
    message(SEND_ERROR "FAILED: ${E_NAME}\n${problems}  command: ${cmd}\n"
                       "  --- stdout:\n${out}  --- stderr:\n${err}")
  else()
    message(STATUS "ok: ${E_NAME}")
  endif()
endfunction()

# hmx_fixture(<out var> KIND) writes a fixture with the helper.
function(hmx_fixture var kind)
  set(path "${WORK}/${kind}.safetensors")
  if(kind STREQUAL "vector")
    execute_process(COMMAND "${HELPER}" vector "${path}" RESULT_VARIABLE rc)
  else()
    execute_process(COMMAND "${HELPER}" bad ${kind} "${path}" RESULT_VARIABLE rc)
  endif()
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "cannot write fixture ${kind}: ${rc}")
  endif()
  set(${var} "${path}" PARENT_SCOPE)
endfunction()
