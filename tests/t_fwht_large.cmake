# fwht/hadamard_mix on 32 MiB batches, every backend but ref against ref and
# 1 vs 2 threads (tests/test_fwht_large.c): the streaming and prefetch paths.
add_executable(test_fwht_large ${CMAKE_CURRENT_SOURCE_DIR}/test_fwht_large.c)
target_include_directories(test_fwht_large PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(test_fwht_large PRIVATE hadamix)
foreach(b IN LISTS HMX_BACKEND_NAMES)
  if(NOT b STREQUAL "ref")
    add_test(NAME fwht_large_${b} COMMAND test_fwht_large ${b})
    set_tests_properties(fwht_large_${b} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${b};differential"
                         TIMEOUT 600)
  endif()
endforeach()
