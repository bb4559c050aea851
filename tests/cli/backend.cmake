# Backend selection: --backend and HMX_BACKEND.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(out "${WORK}/out.safetensors")
hmx_fixture(vec vector)

hmx_expect(NAME "run --backend unknown" CODE 2 STDERR "unknown backend 'bogus' \\(known: ref"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend bogus)
hmx_expect(NAME "run --backend ref" CODE 0 STDOUT "rmsnorm on ref"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend ref)
hmx_expect(NAME "run --backend best" CODE 0 STDOUT "rmsnorm on "
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend best)

set(ENV{HMX_BACKEND} bogus)
hmx_expect(NAME "HMX_BACKEND=bogus info" CODE 2 STDERR "HMX_BACKEND=bogus: no such backend"
           STDOUT "default: +ERROR: HMX_BACKEND=bogus"
           COMMAND ${HMX} info)
hmx_expect(NAME "HMX_BACKEND=bogus run" CODE 2 STDERR "HMX_BACKEND=bogus: no such backend"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out})
hmx_expect(NAME "HMX_BACKEND=bogus, explicit --backend ref" CODE 0 STDOUT "rmsnorm on ref"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend ref)
set(ENV{HMX_BACKEND} ref)
hmx_expect(NAME "HMX_BACKEND=ref info" CODE 0 STDOUT "default: +ref \\(from HMX_BACKEND\\)"
           COMMAND ${HMX} info)
hmx_expect(NAME "HMX_BACKEND=ref run" CODE 0 STDOUT "rmsnorm on ref"
           COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out})
unset(ENV{HMX_BACKEND})

# Every compiled-in backend that this machine cannot run is a clean failure
# with an explicit --backend; conform reports it and exits 77 when it is all
# that was asked for.
execute_process(COMMAND ${HMX} info OUTPUT_VARIABLE info)
string(REGEX MATCHALL "\n  [a-z0-9_]+ +no +" unavailable "${info}")
foreach(line IN LISTS unavailable)
  string(REGEX REPLACE "^\n  ([a-z0-9_]+) .*" "\\1" b "${line}")
  hmx_expect(NAME "run on unavailable ${b}" CODE 1 STDERR "backend '${b}' cannot run on this machine"
             COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend ${b})
  hmx_expect(NAME "conform on unavailable ${b}" CODE 77 STDOUT "unavailable"
             COMMAND ${HMX} conform --backend ${b} --vectors ${vec})
endforeach()

# The cuda backend's section of `hmx info` (cuda/probe.cu): what it was built
# for, each device, and a verdict that agrees with the backends table, with
# the reason when it is no; that reason also ends the error of a run on it.
if(info MATCHES "\n  cuda +(yes|no) ")
  if(CMAKE_MATCH_1 STREQUAL "yes")
    hmx_expect(NAME "info cuda section, available" CODE 0
               STDOUT "\ncuda:\n  compiled for:  sm_[0-9][^\n]*\n  driver:        supports CUDA [0-9][^\n]*\n  devices:       [1-9][^\n]*\n  [^\n]+\\(current: hadamix runs here\\)\n.*  available:     yes\n"
               COMMAND ${HMX} info)
  else()
    hmx_expect(NAME "info cuda section, unavailable" CODE 0
               STDOUT "\ncuda:\n  compiled for:  sm_[0-9][^\n]*\n  driver:        [^\n]+\n  devices:       [0-9][^\n]*\n(  [^\n]*\n)*  available:     no: [A-Za-z][^\n]+\n"
               COMMAND ${HMX} info)
    string(REGEX MATCH "\n  available:     no: ([^\n]+)\n" _m "${info}")
    string(REGEX REPLACE "([][.*+?^$()|\\])" "\\\\\\1" why "${CMAKE_MATCH_1}")
    hmx_expect(NAME "run on unavailable cuda says why" CODE 1
               STDERR "backend 'cuda' cannot run on this machine: ${why} \\(see `hmx info`\\)"
               COMMAND ${HMX} run rmsnorm --in ${vec} --out ${out} --backend cuda)
    set(ENV{HMX_BACKEND} cuda)
    hmx_expect(NAME "HMX_BACKEND=cuda unavailable says why" CODE 2
               STDERR "HMX_BACKEND=cuda: this machine cannot run it: ${why}"
               COMMAND ${HMX} info)
    unset(ENV{HMX_BACKEND})
  endif()
endif()

# HMX_X86_TUNING (x86 builds: `hmx info` has a tuning line): a profile's name,
# or a name with changes (src/tuning.h); a spec that does not parse is
# ignored with the parser's reason, and the profile stays the CPU's. A
# profile changes no bit: conform under a changed one.
if(info MATCHES "\n  tuning: +([a-z0-9]+) ")
  set(cpu_profile "${CMAKE_MATCH_1}")
  set(ENV{HMX_X86_TUNING} intel+fwht_two_pass_chunk_extra=1+fwht_pf_min_p_avx512=1024+fwht_mp_pad_avx512=1)
  hmx_expect(NAME "HMX_X86_TUNING spec info" CODE 0
             STDOUT "tuning: +intel \\(HMX_X86_TUNING=intel\\+fwht_two_pass_chunk_extra=1\\+fwht_pf_min_p_avx512=1024\\+fwht_mp_pad_avx512=1;[^\n]*next-row prefetch from 1024 elements avx512[^\n]*two-pass rows without dispatch yes \\(an odd split's extra stage in the chunk pass yes\\), m >= 20 rows of blocks 4 KiB apart in a padded scratch avx512 in caches, avx2 yes,"
             COMMAND ${HMX} info)
  hmx_expect(NAME "HMX_X86_TUNING spec conform fwht" CODE 0 STDOUT "fwht"
             COMMAND ${HMX} conform --op fwht --vectors ${VECTORS})
  set(ENV{HMX_X86_TUNING} zen+fwht_bogus=1)
  hmx_expect(NAME "HMX_X86_TUNING bad field" CODE 0
             STDOUT "tuning: +${cpu_profile} \\(cpu vendor \\(HMX_X86_TUNING ignored: 'fwht_bogus' is not a tuning field"
             COMMAND ${HMX} info)
  set(ENV{HMX_X86_TUNING} zen+fwht_two_pass_rows=2)
  hmx_expect(NAME "HMX_X86_TUNING bad value" CODE 0
             STDOUT "HMX_X86_TUNING ignored: fwht_two_pass_rows: the value must be an integer 0 ... 1"
             COMMAND ${HMX} info)
  set(ENV{HMX_X86_TUNING} bogus)
  hmx_expect(NAME "HMX_X86_TUNING bad name" CODE 0
             STDOUT "tuning: +${cpu_profile} \\(cpu vendor \\(HMX_X86_TUNING=bogus is not a profile\\)"
             COMMAND ${HMX} info)
  unset(ENV{HMX_X86_TUNING})
endif()
