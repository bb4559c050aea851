# The model runtime (docs/MODEL.md): invariances bit for bit, float64 oracle,
# weights files, and hmx_model_diff catching a planted one-ulp change.
hmx_add_test(NAME test_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model.c
             ARGS ${CMAKE_CURRENT_BINARY_DIR} LABELS unit model LIBS m)
# aarch64-linux-gnu-gcc 12.2 crashes (ICE in vect_transform_reduction) on the
# float64 oracle's reductions; the test's own loops need no vectorizing.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/test_model.c PROPERTIES
                              COMPILE_OPTIONS -fno-tree-vectorize)
endif()
hmx_add_test(NAME test_model_diff SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_diff.c
             LABELS unit model LIBS m)
if(HMX_HAVE_CJSON AND TARGET hmx)
  hmx_target_command(hmx hmx_model_cmd)
  add_test(NAME cli_model
           COMMAND ${CMAKE_COMMAND} -DHMX=${hmx_model_cmd} -DHELPER=unused
                   -DVECTORS=${PROJECT_SOURCE_DIR}/vectors
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_work/model
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/model.cmake)
  set_tests_properties(cli_model PROPERTIES LABELS "cli;model" TIMEOUT 300)
endif()
# hmx_model_prepare: the G16 layout of the projections changes no bit.
hmx_add_test(NAME test_model_prepare SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_prepare.c
             ARGS ${CMAKE_CURRENT_BINARY_DIR} LABELS unit model)
# The same on the cuda backend, whose prepare also copies the weights to the
# GPU; skipped (77) without a GPU.
if("cuda" IN_LIST HMX_BACKEND_NAMES)
  add_test(NAME test_model_prepare_cuda
           COMMAND test_model_prepare --backend cuda ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(test_model_prepare_cuda PROPERTIES SKIP_RETURN_CODE 77
                       LABELS "cuda;model" TIMEOUT 300)
  # The forward pass on the GPU against ref, bit for bit, and where the KV
  # caches are after each kind of step: synthetic models and the fuzz
  # corpus's small GGUF models (block types in both layouts); skipped (77)
  # without a GPU.
  file(GLOB HMX_GPU_PASS_GGUF ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_model_gguf/ok_*.gguf)
  list(FILTER HMX_GPU_PASS_GGUF EXCLUDE REGEX "ok_context_1\\.gguf$") # too short a context
  hmx_add_test(NAME test_model_gpu_pass SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_gpu_pass.c
               ARGS ${HMX_GPU_PASS_GGUF} LABELS cuda model TIMEOUT 300)
endif()
# Without cJSON (tools/test.sh --minimal): the JSON-headed formats are refused
# as unsupported, GGUF models and tokenizers still load and run.
if(NOT HMX_HAVE_CJSON)
  hmx_add_test(NAME test_no_cjson SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_no_cjson.c
               ARGS ${CMAKE_CURRENT_BINARY_DIR}
                    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_model_gguf/ok_q8_0.gguf
                    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_tokenizer/ok_gpt2_smollm.gguf
               LABELS unit model)
endif()
