# --param: bad values are usage errors (exit 2); good ones are applied and
# written to the output's metadata.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(out "${WORK}/out.safetensors")
hmx_fixture(vec vector)

foreach(bad nan NaN inf -inf abc 1e-5x "" 1e999)
  hmx_expect(NAME "--param eps=${bad}" CODE 2 STDERR "eps = '${bad}' is not a finite number"
             COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --param eps=${bad})
endforeach()
hmx_expect(NAME "--param unknown name" CODE 2 STDERR "rmsnorm has no parameter 'frob'"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --param frob=1)
hmx_expect(NAME "--param without =" CODE 2 STDERR "--param 'eps' is not NAME=VALUE"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --param eps)
hmx_expect(NAME "--param with empty name" CODE 2 STDERR "--param '=1' is not NAME=VALUE"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --param =1)
hmx_expect(NAME "--param integer with a fraction" CODE 2 STDERR "trans_b = '0.5' must be an integer"
           COMMAND ${HMX} run gemm --in ${vec} --out ${out} --param trans_b=0.5)
hmx_expect(NAME "diff --param unknown" CODE 2 STDERR "no parameter 'frob'"
           COMMAND ${HMX} diff --backend ref --vs ref --in ${vec} --param frob=2)

# A good override is used and recorded.
hmx_expect(NAME "--param eps=0.25" CODE 0 STDOUT "rmsnorm on [a-z0-9]+: y f32 \\[3, 8\\]"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --param eps=0.25)
file(STRINGS "${out}" header REGEX "param\\.eps")
if(NOT header MATCHES "\"param\\.eps\": *\"0\\.25\"")
  message(SEND_ERROR "FAILED: the output's metadata does not record param.eps = 0.25: ${header}")
endif()
# ... and so the result differs from the vector's expected output (eps 1e-5),
hmx_expect(NAME "diff with a different eps" CODE 1 STDOUT "result: DIFFERENT"
           COMMAND ${HMX} diff --backend ref --vs expected --in ${vec} --param eps=0.25)
# while the file's own parameters reproduce it.
hmx_expect(NAME "diff with the file's eps" CODE 0 STDOUT "result: identical"
           COMMAND ${HMX} diff --backend ref --vs expected --in ${vec})
# --dtype changes the output dtype.
hmx_expect(NAME "--dtype bf16" CODE 0 STDOUT "y bf16 \\[3, 8\\]"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --dtype bf16)
