# Conformance can fail: a golden vector passes, the same vector with one bit
# of its expected output flipped fails (conform exit 1, diff exit 1), and
# `hmx run` on the vector writes exactly the expected bits.
#
# Uses the first committed vector (vectors/*.safetensors, name order) whose
# metadata says tier "exact"; with none committed yet, a small rmsnorm vector
# written by the helper.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

# out = the first committed vector (name order) matching VECTORS/pattern whose
# metadata says tier "exact", or "" when there is none.
function(first_exact_vector out pattern)
  set(found "")
  if(DEFINED VECTORS AND IS_DIRECTORY "${VECTORS}")
    file(GLOB candidates "${VECTORS}/${pattern}")
    list(SORT candidates)
    foreach(c IN LISTS candidates)
      file(STRINGS "${c}" header LIMIT_COUNT 1 REGEX "\"tier\": *\"exact\"")
      if(header)
        set(found "${c}")
        break()
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

first_exact_vector(src "*.safetensors")
if(src STREQUAL "")
  message(STATUS "no committed exact-tier vector in '${VECTORS}': using the helper's rmsnorm vector")
  hmx_fixture(src vector)
endif()
message(STATUS "vector: ${src}")
get_filename_component(name "${src}" NAME)

file(MAKE_DIRECTORY "${WORK}/orig" "${WORK}/mut")
file(COPY_FILE "${src}" "${WORK}/orig/${name}")
execute_process(COMMAND "${HELPER}" mutate "${src}" "${WORK}/mut/${name}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE msg ERROR_VARIABLE msg)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "cannot mutate ${src}: ${rc}\n${msg}")
endif()
message(STATUS "${msg}")

# hmx run writes the expected bits (and the vector's op and params).
set(out "${WORK}/run_out.safetensors")
hmx_expect(NAME "run on the vector" CODE 0 STDOUT " on ref: "
           COMMAND ${HMX} run --in ${WORK}/orig/${name} --out ${out} --backend ref)
hmx_expect(NAME "run output equals the vector's expected output" CODE 0
           COMMAND ${HELPER} same-outputs ${out} ${WORK}/orig/${name})
hmx_expect(NAME "run output differs from the mutated vector" CODE 1 MULTILINE
           STDERR "differs from"
           COMMAND ${HELPER} same-outputs ${out} ${WORK}/mut/${name})

# conform: 0 on the original, 1 on the mutated copy, with the first differing index.
hmx_expect(NAME "conform passes the original" CODE 0 STDOUT "pass 1/1.*result: ok"
           COMMAND ${HMX} conform --backend ref --vectors ${WORK}/orig -v)
hmx_expect(NAME "conform fails the mutated vector" CODE 1
           STDOUT "FAIL +ref .*1 of [0-9]+ elements differ; first differing index [0-9]+ .*got 0x[0-9a-f]+ \\(.*expected 0x[0-9a-f]+ \\(.*max ulp 1[,;].*FAIL 1/1.*result: FAILED"
           COMMAND ${HMX} conform --backend ref --vectors ${WORK}/mut)
hmx_expect(NAME "conform all backends fails the mutated vector" CODE 1 STDOUT "FAIL 1/1"
           COMMAND ${HMX} conform --vectors ${WORK}/mut)

# diff against the stored expected output: identical, then one element apart.
hmx_expect(NAME "diff vs expected: identical" CODE 0 STDOUT "result: identical"
           COMMAND ${HMX} diff --backend ref --vs expected --in ${WORK}/orig/${name})
hmx_expect(NAME "diff vs expected: mutated" CODE 1
           STDOUT "first difference: A = 0x[0-9a-f]+ .*B = 0x[0-9a-f]+.*result: DIFFERENT"
           COMMAND ${HMX} diff --backend ref --vs expected --in ${WORK}/mut/${name})
hmx_expect(NAME "diff ref vs ref" CODE 0 STDOUT "result: identical"
           COMMAND ${HMX} diff --backend ref --vs ref --in ${WORK}/orig/${name})

# The issue-7 ops (composed kernels in the SIMD backends): for each, the first
# committed exact-tier vector with one bit of its expected output flipped must
# fail on EVERY backend this machine runs (ref and each available SIMD
# backend), not only on ref: "K of K cases failed", K >= 1.
foreach(op strassen mhffn flashmhf linformer levattention lewis priority)
  first_exact_vector(vec "${op}_*.safetensors")
  if(vec STREQUAL "")
    message(STATUS "no committed exact-tier ${op} vector: planted-error check for ${op} not run")
    continue()
  endif()
  get_filename_component(vname "${vec}" NAME)
  file(MAKE_DIRECTORY "${WORK}/mut_${op}")
  execute_process(COMMAND "${HELPER}" mutate "${vec}" "${WORK}/mut_${op}/${vname}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE msg ERROR_VARIABLE msg)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "cannot mutate ${vec}: ${rc}\n${msg}")
  endif()
  execute_process(COMMAND ${HMX} conform --vectors ${WORK}/mut_${op}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "1" OR NOT out MATCHES "result: FAILED \\(([0-9]+) of ([0-9]+) cases failed")
    message(FATAL_ERROR "conform on the mutated ${op} vector: exit ${rc} (want 1)\n${out}\n${err}")
  endif()
  if(NOT CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_2)
    message(FATAL_ERROR "mutated ${op} vector: only ${CMAKE_MATCH_1} of ${CMAKE_MATCH_2} backend "
                        "cases failed: a backend passed a wrong expected output\n${out}")
  endif()
  message(STATUS "mutated ${op} vector ${vname}: ${CMAKE_MATCH_1} of ${CMAKE_MATCH_2} backend cases failed")
endforeach()
