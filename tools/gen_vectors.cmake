# The golden vector generator and the `vectors` target that rewrites
# vectors/ and vectors/MANIFEST in the source tree from the reference.
if(HMX_HAVE_CJSON)
  add_executable(hmx-gen-vectors ${CMAKE_CURRENT_LIST_DIR}/gen/gen_vectors.c
                                 ${CMAKE_CURRENT_LIST_DIR}/gen/cases.c)
  target_include_directories(hmx-gen-vectors PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                     ${CMAKE_CURRENT_LIST_DIR}/gen)
  target_link_libraries(hmx-gen-vectors PRIVATE hadamix)
  add_custom_target(vectors
    COMMAND ${CMAKE_COMMAND} -E rm -f ${PROJECT_SOURCE_DIR}/vectors/*.safetensors
    COMMAND hmx-gen-vectors ${PROJECT_SOURCE_DIR}/vectors
    COMMAND ${CMAKE_COMMAND} -DDIR=${PROJECT_SOURCE_DIR}/vectors
            -P ${PROJECT_SOURCE_DIR}/cmake/write_manifest.cmake
    COMMENT "Regenerating the golden vectors and vectors/MANIFEST from the reference"
    VERBATIM)
endif()
