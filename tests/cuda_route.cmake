# Runs `test_cuda_device MODE` with HMX_CUDA_TRACE=1 (cmake -P, from
# tests/t_cuda.cmake) and checks that it passed and that the launches it
# traced include KERNEL (or each kernel of a comma-separated list): the
# cases meant for a kernel really ran on it (a change of the size rules, or a
# refused shared-memory opt-in, would move them to another kernel with the
# same bits). Prints "skipped" (ctest's
# SKIP_REGULAR_EXPRESSION) when the program skips (exit 77: no GPU).
#   cmake -DEXE=<test_cuda_device> -DMODE=colsplit -DKERNEL=fwht_colsplit,fwht_colsplit_cl -P cuda_route.cmake
foreach(v EXE MODE KERNEL)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "pass -D${v}=...")
  endif()
endforeach()
set(ENV{HMX_CUDA_TRACE} 1)
execute_process(COMMAND ${EXE} ${MODE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 300)
if(rc STREQUAL "77")
  message(STATUS "skipped: ${out}")
  return()
endif()
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "test_cuda_device ${MODE} failed (exit ${rc}):\n${out}\n${err}")
endif()
# KERNEL: one kernel name or several, separated by commas; each must have run
string(REPLACE "," ";" kernels "${KERNEL}")
set(seen "")
foreach(k IN LISTS kernels)
  string(REGEX MATCHALL "hmx cuda: [a-z_]+: ${k}\n" hits "${err}")
  list(LENGTH hits n)
  if(n EQUAL 0)
    message(FATAL_ERROR "test_cuda_device ${MODE} passed, but no launch of ${k} was traced:\n${err}")
  endif()
  string(APPEND seen "${n} launches of ${k}; ")
endforeach()
message(STATUS "ok: ${seen}${out}")
