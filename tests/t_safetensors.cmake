# Strict safetensors reader/writer (src/safetensors.c). Like the library
# source, it needs cJSON.
if(HMX_HAVE_CJSON)
  hmx_add_test(NAME test_safetensors
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_safetensors.c
               LABELS unit)
endif()
