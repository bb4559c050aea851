# Usage errors: exit status 2 and one clear "hmx: ..." line; --help exits 0.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

hmx_expect(NAME "no command" CODE 2 MULTILINE STDERR "usage: hmx COMMAND" COMMAND ${HMX})
hmx_expect(NAME "unknown command" CODE 2 STDERR "unknown command 'frobnicate'"
           COMMAND ${HMX} frobnicate)
hmx_expect(NAME "--help" CODE 0 STDOUT "usage: hmx COMMAND.*conform" COMMAND ${HMX} --help)
hmx_expect(NAME "help run" CODE 0 STDOUT "usage: hmx run" COMMAND ${HMX} help run)
hmx_expect(NAME "--version" CODE 0 STDOUT "^hmx [0-9]+\\.[0-9]+\\.[0-9]+\n$" COMMAND ${HMX} --version)
foreach(cmd info ops run conform diff)
  hmx_expect(NAME "${cmd} --help" CODE 0 STDOUT "usage: hmx ${cmd}" COMMAND ${HMX} ${cmd} --help)
endforeach()
hmx_expect(NAME "info with an argument" CODE 2 STDERR "unexpected argument 'x'" COMMAND ${HMX} info x)
hmx_expect(NAME "info" CODE 0 STDOUT "backends:.*ref" COMMAND ${HMX} info)
hmx_expect(NAME "ops" CODE 0 STDOUT "rmsnorm" COMMAND ${HMX} ops)
hmx_expect(NAME "ops rope" CODE 0 STDOUT "positions +in +1 +i32.*rot_dim +int" COMMAND ${HMX} ops rope)
hmx_expect(NAME "ops unknown op" CODE 2 STDERR "unknown op 'frobnicate'" COMMAND ${HMX} ops frobnicate)
hmx_expect(NAME "ops two ops" CODE 2 STDERR "one OP at most" COMMAND ${HMX} ops fwht gemm)
hmx_expect(NAME "ops unknown option" CODE 2 STDERR "unknown option '--x'" COMMAND ${HMX} ops --x)

# run
hmx_expect(NAME "run without --in" CODE 2 STDERR "--in FILE is required"
           COMMAND ${HMX} run rmsnorm --out ${WORK}/o.safetensors)
hmx_expect(NAME "run without --out" CODE 2 STDERR "--out FILE is required"
           COMMAND ${HMX} run rmsnorm --in ${WORK}/i.safetensors)
hmx_expect(NAME "run unknown op" CODE 2 STDERR "unknown op 'frobnicate'"
           COMMAND ${HMX} run frobnicate --in ${WORK}/i.safetensors --out ${WORK}/o.safetensors)
hmx_expect(NAME "run option without value" CODE 2 STDERR "option --in needs a value"
           COMMAND ${HMX} run rmsnorm --in)
hmx_expect(NAME "run unknown option" CODE 2 STDERR "unknown option '--frob'"
           COMMAND ${HMX} run rmsnorm --frob)
hmx_expect(NAME "run two ops" CODE 2 STDERR "unexpected argument 'gemm'"
           COMMAND ${HMX} run rmsnorm gemm)
hmx_expect(NAME "run negative threads" CODE 2 STDERR "--threads '-1'"
           COMMAND ${HMX} run rmsnorm --threads -1 --in a --out b)
hmx_expect(NAME "run text threads" CODE 2 STDERR "--threads 'many'"
           COMMAND ${HMX} run rmsnorm --threads=many --in a --out b)
hmx_expect(NAME "run bad dtype" CODE 2 STDERR "--dtype 'f64'"
           COMMAND ${HMX} run rmsnorm --dtype f64 --in a --out b)

# conform
hmx_expect(NAME "conform unknown op" CODE 2 STDERR "unknown op 'frobnicate'"
           COMMAND ${HMX} conform --op frobnicate)
hmx_expect(NAME "conform unknown backend" CODE 2 STDERR "unknown backend 'bogus'"
           COMMAND ${HMX} conform --backend bogus)
hmx_expect(NAME "conform unknown argument" CODE 2 STDERR "unexpected argument 'x'"
           COMMAND ${HMX} conform x)

# diff
hmx_expect(NAME "diff without --vs" CODE 2 STDERR "--vs B\\|expected is required"
           COMMAND ${HMX} diff --backend ref --in a)
hmx_expect(NAME "diff without --backend" CODE 2 STDERR "--backend A is required"
           COMMAND ${HMX} diff --vs ref --in a)
hmx_expect(NAME "diff without --in" CODE 2 STDERR "--in FILE is required"
           COMMAND ${HMX} diff --backend ref --vs ref)
hmx_expect(NAME "diff unknown backend" CODE 2 STDERR "unknown backend 'bogus'"
           COMMAND ${HMX} diff --backend ref --vs bogus --in a)
