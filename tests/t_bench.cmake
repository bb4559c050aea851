# hmx bench: a quick CLI smoke test only (it runs, parses its options and exits
# 0). Performance is never a timed unit test: ctest never runs the benchmark.
if(HMX_HAVE_CJSON AND TARGET hmx)
  add_test(NAME cli_bench_smoke COMMAND hmx bench rmsnorm --reps 1 --size small)
  set_tests_properties(cli_bench_smoke PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
