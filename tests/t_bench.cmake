# hmx bench: a quick CLI smoke test only (it runs, parses its options and exits
# 0). Performance is never a timed unit test: ctest never runs the benchmark.
if(HMX_HAVE_CJSON AND TARGET hmx)
  add_test(NAME cli_bench_smoke COMMAND hmx bench rmsnorm --reps 1 --size small)
  set_tests_properties(cli_bench_smoke PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
# The issue-7 studies (tools/hmx/bench_study.h) at toy sizes on ref: every
# measurement must run (the command exits 1 when one fails).
if(HMX_HAVE_CJSON AND TARGET hmx)
  add_test(NAME cli_bench_studies_smoke
           COMMAND hmx bench ffn sketch strassen --reps 1 --size small --backend ref)
  set_tests_properties(cli_bench_studies_smoke PROPERTIES LABELS "cli" TIMEOUT 300)
endif()
# The targets section's verdicts (tools/hmx/bench_targets.c) on made-up
# results: met, missed by how much, not measured and why.
hmx_add_test(NAME test_bench_targets
             SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_targets.c
                     ${PROJECT_SOURCE_DIR}/tools/hmx/bench_targets.c
             LABELS unit TIMEOUT 60)
target_include_directories(test_bench_targets PRIVATE ${PROJECT_SOURCE_DIR}/tools/hmx
                                                      ${PROJECT_SOURCE_DIR}/ref)
# --rounds: each case's rows measured in turn (exp has a peer, whose x peer
# comes from paired runs, --reps of them); out of range: usage error.
if(HMX_HAVE_CJSON AND TARGET hmx)
  add_test(NAME cli_bench_rounds_smoke COMMAND hmx bench exp rmsnorm --reps 1 --rounds 2 --size small)
  set_tests_properties(cli_bench_rounds_smoke PROPERTIES LABELS "cli" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "2 rounds")
  add_test(NAME cli_bench_rounds_bad COMMAND hmx bench exp --rounds 10)
  set_tests_properties(cli_bench_rounds_bad PROPERTIES LABELS "cli" TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "--rounds '10' is not an integer in 1..9")
endif()
# --fwht-scale: the fwht rows at 1 / sqrt(n) when asked (the header says which
# scale was timed); anything but 1 or inv-sqrt-n: usage error.
if(HMX_HAVE_CJSON AND TARGET hmx)
  add_test(NAME cli_bench_fwht_scale
           COMMAND hmx bench fwht --reps 1 --size small --backend ref --fwht-scale inv-sqrt-n)
  set_tests_properties(cli_bench_fwht_scale PROPERTIES LABELS "cli" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "fwht rows: scale 1/sqrt\\(n\\)")
  add_test(NAME cli_bench_fwht_scale_bad COMMAND hmx bench fwht --fwht-scale 0.5)
  set_tests_properties(cli_bench_fwht_scale_bad PROPERTIES LABELS "cli" TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "--fwht-scale '0.5' is not 1 or inv-sqrt-n")
endif()
# The GEMV read orders hmx bench times beside the copy (tools/read_bandwidth.h):
# every weight read exactly once at any shape.
hmx_add_test(NAME test_read_orders
             SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_read_orders.c
                     ${PROJECT_SOURCE_DIR}/tools/read_bandwidth.c
             LABELS unit TIMEOUT 60)
target_include_directories(test_read_orders PRIVATE ${PROJECT_SOURCE_DIR}/tools)
# tools/cuda/bench_table.py (the CUDA benchmark's tables, docs/CUDA.md) on
# made-up results: its fwht verdicts, the issue cap, the tally, and the
# m-point addition counts it derives from src/hadamard_factors.c.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME bench_table_cuda
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_table.py
                   ${PROJECT_SOURCE_DIR}/tools/cuda/bench_table.py)
  set_tests_properties(bench_table_cuda PROPERTIES LABELS "unit;python" TIMEOUT 60)
  # tools/cuda/fwht_ab_table.py (tools/cuda/fwht_ab.sh's side-by-side table),
  # both of its forms, on made-up runs
  add_test(NAME fwht_ab_table_cuda
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_fwht_ab_table.py
                   ${PROJECT_SOURCE_DIR}/tools/cuda/fwht_ab_table.py)
  set_tests_properties(fwht_ab_table_cuda PROPERTIES LABELS "unit;python" TIMEOUT 60)
endif()
# hmx bench --json from a real run at toy sizes (tests/test_bench_json.py): one
# JSON array, a "measurement" record for every row of the table (a note on the
# rows that did not run), the targets' record last. The judged target records
# are checked on made-up results by test_bench_targets.
# (The script starts hmx itself: cross-compiled, through hmx_target_command's
# emulator wrapper.)
if(HMX_HAVE_CJSON AND TARGET hmx AND Python3_FOUND)
  hmx_target_command(hmx hmx_json_cmd)
  add_test(NAME cli_bench_json
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_json.py
                   ${hmx_json_cmd})
  set_tests_properties(cli_bench_json PROPERTIES LABELS "cli;python" TIMEOUT 300)
endif()
