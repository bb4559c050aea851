# The device-memory API (include/hadamix.h, "device memory"). Its rules are
# checked by the dispatcher and need no GPU (test_cuda_api, every build);
# the results on a GPU against ref, bit for bit, need the cuda backend
# (test_cuda_device: skipped without a GPU; `quick` is the short run that
# cuda/h100_check.sh puts under compute-sanitizer).
hmx_add_test(NAME test_cuda_api SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_api.c LABELS unit)
if("cuda" IN_LIST HMX_BACKEND_NAMES)
  hmx_add_test(NAME test_cuda_device SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_device.c
               LABELS cuda TIMEOUT 600)
  # scratch from the device's default pool, given back at every
  # synchronization (cuda/scratch_pool.cu): test_scratch_pool only
  add_test(NAME test_cuda_device_default_pool COMMAND test_cuda_device pool)
  set_tests_properties(test_cuda_device_default_pool PROPERTIES SKIP_RETURN_CODE 77 LABELS cuda
                       TIMEOUT 600 ENVIRONMENT HMX_CUDA_SCRATCH_KEEP_MIB=0)
  # the fwht_colsplit cases of test_cuda_device, alone, and that they ran on
  # fwht_colsplit and fwht_colsplit_cl (HMX_CUDA_TRACE; tests/cuda_route.cmake)
  add_test(NAME test_cuda_device_colsplit_route
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:test_cuda_device> -DMODE=colsplit
                   -DKERNEL=fwht_colsplit,fwht_colsplit_cl
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda_route.cmake)
  set_tests_properties(test_cuda_device_colsplit_route PROPERTIES LABELS cuda TIMEOUT 300
                       SKIP_REGULAR_EXPRESSION "-- skipped: ")
  # fwht_pow2's warp-synchronised p-blocks (test_fwht_pow2_warp) and its
  # elements a thread by the device's balance (test_fwht_fast_memory), alone,
  # and that they ran on fwht_pow2
  add_test(NAME test_cuda_device_pow2_route
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:test_cuda_device> -DMODE=pow2
                   -DKERNEL=fwht_pow2 -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda_route.cmake)
  set_tests_properties(test_cuda_device_pow2_route PROPERTIES LABELS cuda TIMEOUT 300
                       SKIP_REGULAR_EXPRESSION "-- skipped: ")
  # a GPU copy made by upload (hmx_model_prepare's weights) is whole for the
  # next host call on its own stream (tests/test_cuda_upload.c)
  hmx_add_test(NAME test_cuda_upload SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_upload.c
               LABELS cuda TIMEOUT 120)
  # whether the GPU's memory is fast for its SMs (cuda/device_balance.cu) and
  # its override, against the device's attributes; runs without a GPU too
  hmx_add_test(NAME test_cuda_balance SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_balance.c
               LABELS unit cuda TIMEOUT 60)
  target_link_libraries(test_cuda_balance PRIVATE m)
  # every golden vector of the eight device ops on device memory, in its own
  # dtypes (hmx conform passes host memory, widened to f32); the vectors are
  # safetensors, read with cJSON
  if(HMX_HAVE_CJSON)
    hmx_add_test(NAME test_cuda_vectors SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_vectors.c
                 LABELS cuda TIMEOUT 300 ARGS ${PROJECT_SOURCE_DIR}/vectors)
  endif()
  # fwht_cluster's m-point rows with block barriers (test_fwht_cluster_blocks),
  # alone, and that they ran on fwht_cluster
  add_test(NAME test_cuda_device_cluster_route
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:test_cuda_device> -DMODE=cluster
                   -DKERNEL=fwht_cluster -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda_route.cmake)
  set_tests_properties(test_cuda_device_cluster_route PROPERTIES LABELS cuda TIMEOUT 300
                       SKIP_REGULAR_EXPRESSION "-- skipped: ")
endif()
# The cuda fast tier's gemm on device memory (f32/TF32, bf16, f16) against
# its tensor-core bound (tests/test_fast_cuda_device.c); skipped without a GPU.
if(HMX_HAVE_CUDA_FAST)
  hmx_add_test(NAME test_fast_cuda_device SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fast_cuda_device.c
               LABELS cuda fast TIMEOUT 300)
endif()
