# Batches far larger than the caches, every backend but ref against ref and 1
# vs 2 threads: fwht/hadamard_mix on 32 MiB (tests/test_fwht_large.c: the
# streaming and prefetch paths) and rmsnorm/layernorm with 32 MiB outputs
# (tests/test_norm_large.c: the streamed-output path). Shared helpers:
# tests/large_batch.h.
foreach(t IN ITEMS fwht_large norm_large)
  add_executable(test_${t} ${CMAKE_CURRENT_SOURCE_DIR}/test_${t}.c)
  target_include_directories(test_${t} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(test_${t} PRIVATE hadamix)
  foreach(b IN LISTS HMX_BACKEND_NAMES)
    if(NOT b STREQUAL "ref")
      add_test(NAME ${t}_${b} COMMAND test_${t} ${b})
      set_tests_properties(${t}_${b} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${b};differential"
                           TIMEOUT 600)
    endif()
  endforeach()
endforeach()
