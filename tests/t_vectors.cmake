# The golden vectors reproduce: regenerating them from this build's reference
# gives vectors/MANIFEST byte for byte, and the committed files match it.
if(HMX_HAVE_CJSON)
  hmx_target_command(hmx-gen-vectors gen_cmd)
  add_test(NAME vectors_regenerate
           COMMAND ${CMAKE_COMMAND} -DGEN=${gen_cmd}
                   -DSRC=${PROJECT_SOURCE_DIR}/vectors -DOUT=${CMAKE_CURRENT_BINARY_DIR}/regen
                   -DMANIFEST_SCRIPT=${PROJECT_SOURCE_DIR}/cmake/write_manifest.cmake
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/vectors/regenerate.cmake)
  set_tests_properties(vectors_regenerate PROPERTIES LABELS "vectors;ref" TIMEOUT 600)
endif()
