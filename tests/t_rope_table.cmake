# The SIMD backends' RoPE angle tables (hmx_backend.rope_table) against the
# scalar definition, bit for bit, with the same refusals (tests/test_rope_table.c).
# One ctest per x86 ISA compiled in; skipped (77) where the CPU lacks it.
foreach(_isa IN ITEMS avx512 avx2)
  if(_isa IN_LIST HMX_BACKEND_NAMES)
    if(NOT TARGET test_rope_table)
      add_executable(test_rope_table ${CMAKE_CURRENT_SOURCE_DIR}/test_rope_table.c)
      target_include_directories(test_rope_table PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                         ${PROJECT_SOURCE_DIR}/tests)
      target_link_libraries(test_rope_table PRIVATE hadamix)
    endif()
    add_test(NAME rope_table_${_isa} COMMAND test_rope_table ${_isa})
    set_tests_properties(rope_table_${_isa} PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;${_isa}"
                                                       TIMEOUT 120)
  endif()
endforeach()
