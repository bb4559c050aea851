# The model runtime (docs/MODEL.md): invariances bit for bit, float64 oracle,
# weights files, and hmx_model_diff catching a planted one-ulp change.
hmx_add_test(NAME test_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model.c
             ARGS ${CMAKE_CURRENT_BINARY_DIR} LABELS unit model LIBS m)
hmx_add_test(NAME test_model_diff SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_diff.c
             LABELS unit model LIBS m)
