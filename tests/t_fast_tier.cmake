# The fast tier against its documented bounds: random shapes, the golden
# vectors and the float64 oracle, a planted error (tests/test_fast_tier.c).
if(HMX_HAVE_CJSON)
  hmx_add_test(NAME test_fast_tier SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fast_tier.c
               ARGS ${PROJECT_SOURCE_DIR}/vectors LABELS unit fast TIMEOUT 300)
  if(HMX_HAVE_DNNL)
    target_compile_definitions(test_fast_tier PRIVATE HMX_HAVE_DNNL=1)
  endif()
endif()
