# Every backend but ref against ref on fresh random shapes, and 1 vs 2 threads
# (tests/test_differential.c). Skipped where the backend cannot run.
add_executable(test_differential ${CMAKE_CURRENT_SOURCE_DIR}/test_differential.c)
target_include_directories(test_differential PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(test_differential PRIVATE hadamix)
foreach(b IN LISTS HMX_BACKEND_NAMES)
  if(NOT b STREQUAL "ref")
    add_test(NAME differential_${b} COMMAND test_differential ${b})
    set_tests_properties(differential_${b} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${b};differential"
                         TIMEOUT 600)
  endif()
endforeach()
