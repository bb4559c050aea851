# exact_tier_flags: no fast-math style flag in any build file outside the fast
# tier's own kernel files (tests/check_exact_flags.cmake, docs/NUMERICS.md).
add_test(NAME exact_tier_flags
         COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -P
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_exact_flags.cmake)
set_tests_properties(exact_tier_flags PROPERTIES LABELS "unit" TIMEOUT 60)
