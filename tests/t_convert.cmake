# tools/convert_nanogpt.py end to end (docs/MODEL.md, "Converting a nanoGPT checkpoint"):
# random nanoGPT-style state dicts -> converter -> hmx generate --logits-out, against a
# float64 numpy forward pass. Needs Python 3 with numpy (exit 77 = skipped without numpy)
# and the hmx tool; not registered when cross-compiling (hmx would run under an emulator,
# and the test starts it itself).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND AND TARGET hmx AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME convert_nanogpt
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_convert.py
                   $<TARGET_FILE:hmx> ${PROJECT_SOURCE_DIR}/tools/convert_nanogpt.py
                   ${CMAKE_CURRENT_BINARY_DIR}/convert_work)
  set_tests_properties(convert_nanogpt PROPERTIES SKIP_RETURN_CODE 77 LABELS "model;python"
                       TIMEOUT 300)
endif()
