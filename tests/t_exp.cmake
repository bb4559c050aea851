# Canonical math: hmx_expf (sampled), sigmoid/silu, and the RoPE table's
# libm-free double functions (src/canon_exp.c, src/canon_rope.c).
hmx_add_test(NAME test_exp SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_exp.c LABELS unit TIMEOUT 120)
# The exhaustive tool on a strided sample of the 2^32 inputs: fails if any
# result is over 1 ulp from the correctly rounded exp (MPFR decides near-ties)
# or a special value is wrong; also prints the disagreement with SLEEF's u10.
add_test(NAME exp_check_sampled COMMAND hmx-exp-check --sample 16000000)
set_tests_properties(exp_check_sampled PROPERTIES LABELS unit TIMEOUT 300)
