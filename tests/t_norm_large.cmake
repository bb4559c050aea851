# rmsnorm/layernorm with 32 MiB outputs, every backend but ref against ref
# and 1 vs 2 threads (tests/test_norm_large.c): the streamed-output path.
add_executable(test_norm_large ${CMAKE_CURRENT_SOURCE_DIR}/test_norm_large.c)
target_include_directories(test_norm_large PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(test_norm_large PRIVATE hadamix)
foreach(b IN LISTS HMX_BACKEND_NAMES)
  if(NOT b STREQUAL "ref")
    add_test(NAME norm_large_${b} COMMAND test_norm_large ${b})
    set_tests_properties(norm_large_${b} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${b};differential"
                         TIMEOUT 600)
  endif()
endforeach()
