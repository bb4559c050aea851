# The SIMD backends' vector exp/sigmoid/SiLU against hmx_expf/hmx_sigmoidf/
# hmx_siluf, bit for bit, on a strided sample of all 2^32 inputs plus dense
# sweeps of the subnormal-result range and the special values
# (tests/test_vexp.c). One ctest per ISA compiled in; skipped (77) where the
# CPU lacks it.
set(_hmx_vexp_isas "")
foreach(_isa IN ITEMS avx512 avx2)
  if(_isa IN_LIST HMX_BACKEND_NAMES)
    list(APPEND _hmx_vexp_isas ${_isa})
  endif()
endforeach()
if(_hmx_vexp_isas)
  add_executable(test_vexp ${CMAKE_CURRENT_SOURCE_DIR}/test_vexp.c)
  target_include_directories(test_vexp PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(test_vexp PRIVATE hadamix)
  foreach(_isa IN LISTS _hmx_vexp_isas)
    string(TOUPPER ${_isa} _ISA)
    target_compile_definitions(test_vexp PRIVATE HMX_TEST_${_ISA}=1)
    add_test(NAME vexp_${_isa} COMMAND test_vexp ${_isa})
    set_tests_properties(vexp_${_isa} PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;${_isa}" TIMEOUT 300)
  endforeach()
endif()
unset(_hmx_vexp_isas)
