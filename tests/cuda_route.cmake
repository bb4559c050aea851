# Runs `test_cuda_device MODE` with HMX_CUDA_TRACE=1 (cmake -P, from
# tests/t_cuda.cmake) and checks that it passed and that the launches it
# traced include KERNEL: the cases meant for a kernel really ran on it (a
# change of the size rules, or a refused shared-memory opt-in, would move
# them to another kernel with the same bits). Prints "skipped" (ctest's
# SKIP_REGULAR_EXPRESSION) when the program skips (exit 77: no GPU).
#   cmake -DEXE=<test_cuda_device> -DMODE=colsplit -DKERNEL=fwht_colsplit -P cuda_route.cmake
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
string(REGEX MATCHALL "hmx cuda: [a-z_]+: ${KERNEL}\n" hits "${err}")
list(LENGTH hits n)
if(n EQUAL 0)
  message(FATAL_ERROR "test_cuda_device ${MODE} passed, but no launch of ${KERNEL} was traced:\n${err}")
endif()
message(STATUS "ok: ${n} launches of ${KERNEL}; ${out}")
