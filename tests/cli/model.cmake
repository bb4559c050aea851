# The model subcommands: params, generate, init-weights, diff --model, bench-model.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

# params reproduces the paper's counts (the test asserts the printed numbers
# against the paper's, not against our own output)
hmx_expect(NAME "params tiny" CODE 0 STDOUT "paper \\(Hadamard output projection\\): 124M -> 117M; here 123.6M -> 116.5M"
           COMMAND ${HMX} params --config tiny)
hmx_expect(NAME "params small" CODE 0 STDOUT "354M -> 329M; here 355.1M -> 330.0M"
           COMMAND ${HMX} params --config small)
hmx_expect(NAME "params base" CODE 0 STDOUT "757M -> 701M; here 756.8M -> 700.3M"
           COMMAND ${HMX} params --config base)
hmx_expect(NAME "params custom" CODE 0 STDOUT "config tiny: 4 layers, d_model 768, 12 heads x 64 \\(4 KV heads\\)"
           COMMAND ${HMX} params --config tiny --set n_layer=4 --set n_kv_head=4)
hmx_expect(NAME "params unknown preset" CODE 2 STDERR "unknown model preset 'huge'"
           COMMAND ${HMX} params --config huge)
hmx_expect(NAME "params bad set" CODE 2 STDERR "n_head = 12 is not a multiple of n_kv_head = 5"
           COMMAND ${HMX} params --set n_kv_head=5)
hmx_expect(NAME "params unknown key" CODE 2 STDERR "unknown config key"
           COMMAND ${HMX} params --set layers=3)

# generate: the same ids on ref and on the best backend, 1 and 2 threads
hmx_expect(NAME "generate ref" CODE 0 STDOUT "[0-9]"
           COMMAND ${HMX} generate --config test --prompt "hadamix" -n 12 --print-ids --backend ref)
execute_process(COMMAND ${HMX} generate --config test --prompt "hadamix" -n 12 --print-ids --backend ref
                OUTPUT_VARIABLE ids_ref RESULT_VARIABLE rc1)
execute_process(COMMAND ${HMX} generate --config test --prompt "hadamix" -n 12 --print-ids --backend best --threads 2
                OUTPUT_VARIABLE ids_best RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT ids_ref STREQUAL ids_best)
  message(SEND_ERROR "FAILED: generate ref vs best: '${ids_ref}' vs '${ids_best}'")
endif()
# a bf16 KV cache: said on stderr, and the same ids on ref and on the best backend
hmx_expect(NAME "generate kv bf16" CODE 0 STDERR "bf16 KV cache"
           COMMAND ${HMX} generate --config test --prompt "hadamix" -n 4 --kv-dtype bf16)
execute_process(COMMAND ${HMX} generate --config test --prompt "hadamix" -n 12 --print-ids --backend ref --kv-dtype bf16
                OUTPUT_VARIABLE kv_ref RESULT_VARIABLE rc1)
execute_process(COMMAND ${HMX} generate --config test --prompt "hadamix" -n 12 --print-ids --backend best --threads 2 --kv-dtype bf16
                OUTPUT_VARIABLE kv_best RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT kv_ref STREQUAL kv_best OR kv_ref STREQUAL "")
  message(SEND_ERROR "FAILED: generate --kv-dtype bf16 ref vs best: '${kv_ref}' vs '${kv_best}'")
endif()
hmx_expect(NAME "generate bad kv dtype" CODE 2 STDERR "--kv-dtype 'i8' is not one of f32, bf16, f16"
           COMMAND ${HMX} generate --config test --kv-dtype i8)
# seeded sampling is reproducible, and another seed gives other tokens
foreach(seed 5 5 6)
  execute_process(COMMAND ${HMX} generate --config test --prompt "x" -n 24 --print-ids
                          --temperature 1.5 --top-k 50 --top-p 0.95 --seed ${seed}
                  OUTPUT_VARIABLE s_${seed}_out RESULT_VARIABLE rc)
  list(APPEND samples "${s_${seed}_out}")
endforeach()
list(GET samples 0 a)
list(GET samples 1 b)
list(GET samples 2 c)
if(NOT a STREQUAL b OR a STREQUAL c)
  message(SEND_ERROR "FAILED: seeded sampling: '${a}' '${b}' '${c}'")
endif()
hmx_expect(NAME "generate token outside vocab" CODE 1 STDERR "id 999 is outside the vocabulary .0, 256."
           COMMAND ${HMX} generate --config test --tokens 1,999)
hmx_expect(NAME "generate bad token list" CODE 2 STDERR "not a comma-separated list"
           COMMAND ${HMX} generate --config test --tokens 1,,2)
hmx_expect(NAME "generate beyond context" CODE 2 STDERR "exceed the context \\(64\\)"
           COMMAND ${HMX} generate --config test --prompt "x" -n 100)
hmx_expect(NAME "generate missing weights" CODE 1 STDERR "cannot open"
           COMMAND ${HMX} generate --weights ${WORK}/none.safetensors)
hmx_expect(NAME "generate not a model" CODE 1 STDERR "not a hadamix model"
           COMMAND ${HMX} generate --weights ${VECTORS}/rmsnorm_n1.safetensors)

# init-weights + --weights: the file gives the same tokens as the synthetic model
set(w "${WORK}/test_bf16.safetensors")
hmx_expect(NAME "init-weights" CODE 0 STDOUT "wrote .* bf16 weights"
           COMMAND ${HMX} init-weights --config test --outproj hadamard --dtype bf16 --out ${w})
execute_process(COMMAND ${HMX} generate --weights ${w} --prompt "bits" -n 10 --print-ids
                OUTPUT_VARIABLE from_file RESULT_VARIABLE rc1)
execute_process(COMMAND ${HMX} generate --config test --outproj hadamard --dtype bf16 --prompt "bits" -n 10 --print-ids
                OUTPUT_VARIABLE synthetic RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT from_file STREQUAL synthetic)
  message(SEND_ERROR "FAILED: weights file vs synthetic: '${from_file}' vs '${synthetic}'")
endif()
hmx_expect(NAME "weights with --config" CODE 2 STDERR "takes its config and dtype from the file"
           COMMAND ${HMX} generate --weights ${w} --config small)

# diff --model
hmx_expect(NAME "diff --model ref vs best" CODE 0 STDOUT "result: identical"
           COMMAND ${HMX} diff --model --backend ref --vs best --weights ${w})
hmx_expect(NAME "diff --model needs two backends" CODE 2 STDERR "needs --backend A and --vs B"
           COMMAND ${HMX} diff --model --backend ref)

# bench-model runs both variants and prints their ratios
hmx_expect(NAME "bench-model smoke" CODE 0 STDOUT "had/dense"
           COMMAND ${HMX} bench-model --config test --prompt-len 8 --decode 4)
hmx_expect(NAME "bench-model repeat" CODE 0 STDOUT "3 rounds .medians; decode range."
           COMMAND ${HMX} bench-model --config test --outproj dense --prompt-len 4 --decode 2 --repeat 3)
hmx_expect(NAME "bench-model ops" CODE 0
           STDOUT "prefill by step, hadamard .*attn_out +[0-9.]+ ms +[0-9.]+% +hadamard_mix.*ffn +[0-9.]+ ms +[0-9.]+% +swiglu"
           COMMAND ${HMX} bench-model --config test --outproj hadamard --prompt-len 8 --decode 2 --ops)
hmx_expect(NAME "bench-model repeat too many" CODE 2 STDERR "at most 50"
           COMMAND ${HMX} bench-model --config test --repeat 51)
hmx_expect(NAME "bench-model llama without gguf" CODE 2 STDERR "--llama-bench and --gguf go together"
           COMMAND ${HMX} bench-model --config test --llama-bench /bin/true)
hmx_expect(NAME "bench-model llama-bench fails" CODE 1 STDERR "failed"
           COMMAND ${HMX} bench-model --config test --prompt-len 4 --decode 2 --llama-bench /bin/false --gguf x.gguf)
