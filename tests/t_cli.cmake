# The hmx tool: conformance (backend x op against the golden vectors) and CLI
# robustness. Needs the hmx target (built only with cJSON).
if(HMX_HAVE_CJSON AND TARGET hmx)
  # ---- conformance: one test per backend x op. Exit 77 (nothing executed:
  # backend unavailable here, kernel missing, or no vectors) is "skipped".
  foreach(b IN LISTS HMX_BACKEND_NAMES)
    foreach(op IN LISTS HMX_OP_NAMES)
      add_test(NAME conform_${b}_${op}
               COMMAND hmx conform --backend ${b} --op ${op} --vectors ${PROJECT_SOURCE_DIR}/vectors)
      set_tests_properties(conform_${b}_${op} PROPERTIES LABELS "${b};conformance"
                           SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()

  # ---- CLI tests: CMake scripts that run hmx and check exit codes and messages.
  # test_conform_detects writes the binary fixtures the scripts need.
  add_executable(test_conform_detects ${CMAKE_CURRENT_SOURCE_DIR}/test_conform_detects.c)
  target_include_directories(test_conform_detects PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(test_conform_detects PRIVATE hadamix)

  hmx_target_command(hmx hmx_cmd)
  hmx_target_command(test_conform_detects helper_cmd)
  foreach(script usage files params backend conform_detects)
    add_test(NAME cli_${script}
             COMMAND ${CMAKE_COMMAND}
                     -DHMX=${hmx_cmd}
                     -DHELPER=${helper_cmd}
                     -DVECTORS=${PROJECT_SOURCE_DIR}/vectors
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_work/${script}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/${script}.cmake)
    set_tests_properties(cli_${script} PROPERTIES LABELS "cli" TIMEOUT 120)
  endforeach()
endif()
