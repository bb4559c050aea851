# Bad input files: every one is a clean failure (exit 1, one "hmx: ..." line),
# never a crash.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(out "${WORK}/out.safetensors")
hmx_fixture(vec vector)

hmx_expect(NAME "nonexistent file" CODE 1 STDERR "no/such/file\\.safetensors"
           COMMAND ${HMX} run rmsnorm --in ${WORK}/no/such/file.safetensors --out ${out})
hmx_expect(NAME "directory as --in" CODE 1 STDERR "hmx: "
           COMMAND ${HMX} run rmsnorm --in ${WORK} --out ${out})

file(WRITE "${WORK}/garbage.safetensors" "this is not a safetensors file, just text\n")
hmx_expect(NAME "garbage file" CODE 1 STDERR "garbage\\.safetensors"
           COMMAND ${HMX} run rmsnorm --in ${WORK}/garbage.safetensors --out ${out})
file(WRITE "${WORK}/empty.safetensors" "")
hmx_expect(NAME "empty file" CODE 1 STDERR "empty\\.safetensors"
           COMMAND ${HMX} run rmsnorm --in ${WORK}/empty.safetensors --out ${out})
file(WRITE "${WORK}/short.safetensors" "abc")
hmx_expect(NAME "file shorter than 8 bytes" CODE 1 STDERR "short\\.safetensors"
           COMMAND ${HMX} run rmsnorm --in ${WORK}/short.safetensors --out ${out})

hmx_fixture(f truncated)
hmx_expect(NAME "truncated file" CODE 1 STDERR "truncated\\.safetensors"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f missing_weight)
hmx_expect(NAME "missing required tensor" CODE 1 STDERR "input tensor 'weight'.*missing"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f wrong_rank)
hmx_expect(NAME "wrong-rank tensor" CODE 1 STDERR "'x' has 3 dims, expected 2"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f unknown_tensor)
hmx_expect(NAME "tensor the op does not take" CODE 1 STDERR "'bogus'"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f int_dtype)
hmx_expect(NAME "i32 where a float is needed" CODE 1 STDERR "'x'.*i32"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f bad_param)
hmx_expect(NAME "param.eps = nan in the file" CODE 1 STDERR "eps = 'nan' is not a finite number"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f unknown_param)
hmx_expect(NAME "unknown param in the file" CODE 1 STDERR "no parameter 'frob'"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f no_op)
hmx_expect(NAME "no OP and no op metadata" CODE 2 STDERR "no OP given"
           COMMAND ${HMX} run --in ${f} --out ${out})
hmx_expect(NAME "no op metadata, OP given" CODE 0 STDOUT "rmsnorm on [a-z0-9]+"
           COMMAND ${HMX} run rmsnorm --in ${f} --out ${out})
hmx_fixture(f unknown_op)
hmx_expect(NAME "unknown op in the metadata" CODE 1 STDERR "unknown op 'frobnicate'"
           COMMAND ${HMX} run --in ${f} --out ${out})
hmx_expect(NAME "run a file as another op" CODE 1 STDERR "fwht: file has a tensor"
           COMMAND ${HMX} run fwht --in ${vec} --out ${out})
hmx_expect(NAME "unwritable --out" CODE 1 STDERR "no/such/dir/o\\.safetensors"
           COMMAND ${HMX} run --in ${vec} --out ${WORK}/no/such/dir/o.safetensors)
hmx_fixture(f no_expected)
hmx_expect(NAME "diff vs expected, file lacks it" CODE 1 STDERR "no output tensor 'y'"
           COMMAND ${HMX} diff --backend ref --vs expected --in ${f})
hmx_expect(NAME "diff on garbage" CODE 1 STDERR "garbage\\.safetensors"
           COMMAND ${HMX} diff --backend ref --vs ref --in ${WORK}/garbage.safetensors)

# conform: bad files in the vectors directory are failures, with their message.
file(MAKE_DIRECTORY "${WORK}/c_garbage" "${WORK}/c_empty" "${WORK}/c_mixed")
file(COPY_FILE "${WORK}/garbage.safetensors" "${WORK}/c_garbage/a.safetensors")
hmx_expect(NAME "conform: garbage vector" CODE 1 MULTILINE STDERR "hmx: conform: ERROR .*a\\.safetensors"
           STDOUT "FAILED" COMMAND ${HMX} conform --vectors ${WORK}/c_garbage)
file(COPY_FILE "${WORK}/truncated.safetensors" "${WORK}/c_mixed/a_truncated.safetensors")
file(COPY_FILE "${WORK}/unknown_op.safetensors" "${WORK}/c_mixed/b_unknown_op.safetensors")
file(COPY_FILE "${WORK}/no_op.safetensors" "${WORK}/c_mixed/c_no_op.safetensors")
file(COPY_FILE "${WORK}/no_expected.safetensors" "${WORK}/c_mixed/d_no_expected.safetensors")
file(COPY_FILE "${vec}" "${WORK}/c_mixed/e_good.safetensors")
file(WRITE "${WORK}/c_mixed/MANIFEST" "not a vector, ignored\n")
hmx_expect(NAME "conform: mixed bad vectors" CODE 1 MULTILINE
           STDERR "a_truncated.*b_unknown_op.*unknown op 'frobnicate'.*c_no_op.*no \"op\" metadata"
           STDOUT "FAIL +ref +rmsnorm +d_no_expected.safetensors: the vector has no expected output 'y'.*FAIL 1/2.*1 of 2 cases failed, 3 file errors"
           COMMAND ${HMX} conform --backend ref --op rmsnorm --vectors ${WORK}/c_mixed)
hmx_expect(NAME "conform: empty directory" CODE 77 STDOUT "nothing executed"
           COMMAND ${HMX} conform --backend ref --vectors ${WORK}/c_empty)
hmx_expect(NAME "conform: nonexistent directory" CODE 1 STDERR "no/such/dir"
           COMMAND ${HMX} conform --vectors ${WORK}/no/such/dir)
hmx_expect(NAME "conform: one valid file" CODE 0 STDOUT "pass 1/1"
           COMMAND ${HMX} conform --backend ref --vectors ${vec})
hmx_expect(NAME "conform: no vectors for the op" CODE 77 STDOUT "no vectors"
           COMMAND ${HMX} conform --backend ref --op gemm --vectors ${vec})
