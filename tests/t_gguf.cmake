# The GGUF reader (src/gguf.h, docs/GGUF.md) and dequantization (docs/NUMERICS.md).
#   gguf_reader: hand-built files, truncations, corruptions, hand-computed blocks
#   gguf_pip:    files written by the gguf pip package (llama.cpp's own writer) with
#                random blocks of every type, dequantized by hadamix and by
#                gguf.quants.dequantize, compared bit for bit; a tiny Llama GGUF
#                against a float64 numpy forward pass (exit 77 = skipped without the
#                gguf and numpy packages)
hmx_add_test(NAME gguf_reader SOURCES test_gguf.c LABELS unit)

find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND AND TARGET hmx AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME gguf_pip
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_gguf.py
                   $<TARGET_FILE:gguf_reader> $<TARGET_FILE:hmx>
                   ${CMAKE_CURRENT_BINARY_DIR}/gguf_work)
  set_tests_properties(gguf_pip PROPERTIES SKIP_RETURN_CODE 77 LABELS "model;python"
                       TIMEOUT 300)
endif()
