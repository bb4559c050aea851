# Oracle tests: the reference against independent float64 computations with
# derived error bounds (docs/ORACLE.md). Each area is its own executable so
# that ctest runs them in parallel and a failure names its area.
foreach(area fwht linalg norm_rope attention dtype args strassen mhf sketch args_ext)
  hmx_add_test(NAME test_oracle_${area} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/oracle_${area}.c
               LABELS unit oracle TIMEOUT 120)
endforeach()
