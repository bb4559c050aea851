# Fuzzing of the file readers (tests/fuzz/README.md; hmx_add_fuzz_target in
# hmx_test_helpers.cmake): each target's replay over its committed seed corpus
# is a unit test in every build; with -DHMX_FUZZ=ON and clang, each is also a
# libFuzzer binary with a bounded ctest (label fuzz).
set(HMX_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz)
set(HMX_SRC ${PROJECT_SOURCE_DIR}/src)

# GGUF: the reader and its dequantization
hmx_add_fuzz_target(NAME fuzz_gguf SOURCE ${HMX_FUZZ_DIR}/fuzz_gguf.c
                    CORPUS ${HMX_FUZZ_DIR}/corpus_gguf DICT ${HMX_FUZZ_DIR}/gguf.dict
                    UNDER_TEST ${HMX_SRC}/gguf.c ${HMX_SRC}/gguf_dequant.c
                               ${HMX_SRC}/status.c ${HMX_SRC}/tensor.c)

# the Llama GGUF model loader, then forward passes on ref and the best backend;
# the GGUF reader is fuzz_gguf's, and not instrumented here (tests/fuzz/README.md)
hmx_add_fuzz_target(NAME fuzz_model_gguf SOURCE ${HMX_FUZZ_DIR}/fuzz_model_gguf.c
                    CORPUS ${HMX_FUZZ_DIR}/corpus_model_gguf
                    DICT ${HMX_FUZZ_DIR}/model_gguf.dict MAX_LEN 24576
                    UNDER_TEST ${HMX_SRC}/model_gguf.c ${HMX_SRC}/model_config.c
                    LIBS hadamix)

# the structure-aware GGUF mutation of fuzz_model_gguf and fuzz_tokenizer
# (fuzz_gguf_rewrite.h) writes what it means to, over their GGUF seeds
file(GLOB _hmx_model_seeds ${HMX_FUZZ_DIR}/corpus_model_gguf/*.gguf
                           ${HMX_FUZZ_DIR}/corpus_tokenizer/*.gguf)
hmx_add_test(NAME test_gguf_rewrite SOURCES ${HMX_FUZZ_DIR}/test_gguf_rewrite.c
             ARGS ${_hmx_model_seeds} LABELS unit)
unset(_hmx_model_seeds)

# the rest read JSON (safetensors headers, tokenizer.json)
if(NOT HMX_HAVE_CJSON)
  return()
endif()

# safetensors: the strict reader and the writer
hmx_add_fuzz_target(NAME fuzz_safetensors SOURCE ${HMX_FUZZ_DIR}/fuzz_safetensors.c
                    CORPUS ${HMX_FUZZ_DIR}/corpus_safetensors
                    DICT ${HMX_FUZZ_DIR}/safetensors.dict
                    UNDER_TEST ${HMX_SRC}/safetensors.c ${HMX_SRC}/status.c
                               ${HMX_SRC}/tensor.c
                    LIBS HMX::cjson)

# tokenizers: GGUF metadata and tokenizer.json, the pre-tokenizers, the encoder
hmx_add_fuzz_target(NAME fuzz_tokenizer SOURCE ${HMX_FUZZ_DIR}/fuzz_tokenizer.c
                    CORPUS ${HMX_FUZZ_DIR}/corpus_tokenizer
                    DICT ${HMX_FUZZ_DIR}/tokenizer.dict MAX_LEN 8192
                    UNDER_TEST ${HMX_SRC}/tokenizer.c ${HMX_SRC}/tokenizer_hf.c
                               ${HMX_SRC}/tokenizer_spm.c ${HMX_SRC}/tok_pretok.c
                               ${HMX_SRC}/unicode_class.c ${HMX_SRC}/gguf.c
                               ${HMX_SRC}/gguf_dequant.c ${HMX_SRC}/status.c
                               ${HMX_SRC}/tensor.c
                    LIBS HMX::cjson)

# running an op on a file's tensors, on ref and on the best backend; the seeds
# are the golden vectors. Only op_io.c is instrumented: the reader's parse
# errors (fuzz_safetensors' job) would fill the corpus with files that do not
# parse (tests/fuzz/README.md)
hmx_add_fuzz_target(NAME fuzz_op_file SOURCE ${HMX_FUZZ_DIR}/fuzz_op_file.c
                    CORPUS ${PROJECT_SOURCE_DIR}/vectors MAX_LEN 8192
                    DICT ${HMX_FUZZ_DIR}/safetensors.dict
                    UNDER_TEST ${HMX_SRC}/op_io.c
                    LIBS hadamix)
