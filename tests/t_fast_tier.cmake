# The fast tier against its documented bounds: random shapes, the golden
# vectors and the float64 oracle, a planted error (tests/test_fast_tier.c).
if(HMX_HAVE_CJSON)
  hmx_add_test(NAME test_fast_tier SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fast_tier.c
               ARGS ${PROJECT_SOURCE_DIR}/vectors LABELS unit fast TIMEOUT 300)
  if(HMX_HAVE_DNNL)
    target_compile_definitions(test_fast_tier PRIVATE HMX_HAVE_DNNL=1)
  endif()
  # The cuda fast tier (cuBLASLt, cuda/fast_gemm.cu) on host buffers against
  # its tensor-core bound; skipped (77) without a GPU. The same binary.
  if(HMX_HAVE_CUDA_FAST)
    add_test(NAME test_fast_tier_cuda COMMAND test_fast_tier --backend cuda
             ${PROJECT_SOURCE_DIR}/vectors)
    set_tests_properties(test_fast_tier_cuda PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "cuda;fast" TIMEOUT 300)
  endif()
endif()

# The CLI side: `hmx ops` lists the fast tier, `--tier` is accepted by every
# command and refused when unknown, `hmx diff --tier exact --vs fast` prints
# the distribution and writes the SVG (tests/cli/fast_tier.cmake).
if(HMX_HAVE_CJSON AND TARGET hmx)
  hmx_target_command(hmx hmx_fast_cmd)
  add_test(NAME cli_fast_tier
           COMMAND ${CMAKE_COMMAND} -DHMX=${hmx_fast_cmd} -DVECTORS=${PROJECT_SOURCE_DIR}/vectors
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_work/fast_tier
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/fast_tier.cmake)
  set_tests_properties(cli_fast_tier PROPERTIES LABELS "cli;fast" TIMEOUT 300)
endif()
