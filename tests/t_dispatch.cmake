hmx_add_test(NAME test_dispatch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dispatch.c
             LABELS unit ref)
