if(HMX_HAVE_CJSON)
  hmx_add_test(NAME test_op_io SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_op_io.c LABELS unit)
endif()
