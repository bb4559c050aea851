# The `hmx` command-line tool (docs/CLI.md). It reads and writes safetensors,
# so it needs cJSON (HMX_HAVE_CJSON).
if(HMX_HAVE_CJSON)
  file(GLOB HMX_CLI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/hmx/*.c)
  add_executable(hmx ${HMX_CLI_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/read_bandwidth.c)
  target_include_directories(hmx PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/ref
                                         ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(hmx PRIVATE hadamix)

  # What `hmx info` reports about the build.
  get_directory_property(_hmx_cli_opts DIRECTORY ${PROJECT_SOURCE_DIR} COMPILE_OPTIONS)
  list(JOIN _hmx_cli_opts " " _hmx_cli_opts)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _hmx_cli_bt)
  string(STRIP "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_hmx_cli_bt}}" _hmx_cli_flags)
  # bin/ -> share/hadamix, so that an installed hmx finds its vectors after the
  # prefix is moved (tools/hmx/data_dir.c)
  file(RELATIVE_PATH _hmx_data_from_bin "${CMAKE_INSTALL_FULL_BINDIR}"
       "${CMAKE_INSTALL_FULL_DATADIR}/hadamix")
  target_compile_definitions(hmx PRIVATE
    HMX_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    HMX_DATA_DIR="${CMAKE_INSTALL_FULL_DATADIR}/hadamix"
    HMX_DATA_FROM_BIN="${_hmx_data_from_bin}"
    HMX_CLI_BUILD_TYPE="${CMAKE_BUILD_TYPE}"
    HMX_CLI_C_FLAGS="${_hmx_cli_flags}"
    HMX_CLI_COMPILE_OPTIONS="${_hmx_cli_opts}"
    HMX_CLI_SYSTEM="${CMAKE_SYSTEM_NAME} ${CMAKE_SYSTEM_PROCESSOR}")
  unset(_hmx_cli_opts)
  unset(_hmx_cli_bt)
  unset(_hmx_cli_flags)
  unset(_hmx_data_from_bin)
else()
  message(STATUS "hadamix: the hmx tool is not built (it needs cJSON)")
endif()

# hmx bench (tools/hmx/bench.c): SLEEF's expf as the peer of hmx_expf when
# found; dlopen (FFHT, oneDNN loaded from paths given on the command line).
if(TARGET hmx)
  target_link_libraries(hmx PRIVATE ${CMAKE_DL_LIBS})
  if(HMX_HAVE_SLEEF)
    target_include_directories(hmx PRIVATE ${HMX_SLEEF_INCLUDE})
    target_link_libraries(hmx PRIVATE ${HMX_SLEEF_LIBRARY})
    target_compile_definitions(hmx PRIVATE HMX_BENCH_SLEEF=1)
    # SLEEF's vector expf next to each x86 backend's vector exp: one file per
    # ISA, compiled with that backend's flags (tools/hmx/isa/).
    foreach(_isa avx512 avx2)
      string(TOUPPER ${_isa} _ISA)
      if(${_isa} IN_LIST HMX_BACKEND_NAMES)
        set(_src ${CMAKE_CURRENT_LIST_DIR}/hmx/isa/sleef_vexp_${_isa}.c)
        set_source_files_properties(${_src} PROPERTIES COMPILE_OPTIONS "${HMX_${_ISA}_FLAGS}")
        target_sources(hmx PRIVATE ${_src})
        target_compile_definitions(hmx PRIVATE HMX_BENCH_VEXP_${_ISA}=1)
      endif()
    endforeach()
  endif()
endif()

# hmx-bench-fast-gemm (tools/bench_fast_gemm.c): the fast tier's gemm against
# oneDNN's standalone dnnl_sgemm, interleaved (docs/results/fast-tier/).
if(HMX_FAST_DNNL)
  add_executable(hmx-bench-fast-gemm ${CMAKE_CURRENT_LIST_DIR}/bench_fast_gemm.c)
  target_link_libraries(hmx-bench-fast-gemm PRIVATE hadamix)
endif()

# hmx-bench-layout (tools/bench_layout.c): decode with the projections as
# stored vs in G16 (hmx_model_prepare), alternating in one process.
add_executable(hmx-bench-layout ${CMAKE_CURRENT_LIST_DIR}/bench_layout.c)
target_link_libraries(hmx-bench-layout PRIVATE hadamix)

# hmx-bench-decode-ops (tools/bench_decode_ops.c): a decode step's time op by
# op (trace callback), each op's GB/s next to a same-process read-bandwidth probe.
add_executable(hmx-bench-decode-ops ${CMAKE_CURRENT_LIST_DIR}/bench_decode_ops.c
                                    ${CMAKE_CURRENT_LIST_DIR}/read_bandwidth.c)
target_link_libraries(hmx-bench-decode-ops PRIVATE hadamix)

# hmx-gemv-prefetch-ab (tools/x86/gemv_prefetch_ab.c): the x86 one-token G16
# GEMV with its software-prefetch distance (src/tuning.h, gemv_pf_lines) varied
# in one process, interleaved (docs/results/session44/).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64)$")
  add_executable(hmx-gemv-prefetch-ab ${CMAKE_CURRENT_LIST_DIR}/x86/gemv_prefetch_ab.c)
  target_include_directories(hmx-gemv-prefetch-ab PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hmx-gemv-prefetch-ab PRIVATE hadamix)
  # hmx-decode-next-ab (tools/x86/decode_next_ab.c): a model's decode with the
  # GEMV's next-pass prefetch (gemv_next_kib) varied step by step in one
  # process, op by op (docs/results/session52/).
  add_executable(hmx-decode-next-ab ${CMAKE_CURRENT_LIST_DIR}/x86/decode_next_ab.c)
  target_include_directories(hmx-decode-next-ab PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hmx-decode-next-ab PRIVATE hadamix)
endif()

# hmx-read-order-probe (tools/x86/read_order_probe.c): one thread's read rate
# from memory in the GEMV orders (G16, rows), with and without software
# prefetch; AVX-512 code behind a runtime check (docs/results/session44/).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64)$" AND
   CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  add_executable(hmx-read-order-probe ${CMAKE_CURRENT_LIST_DIR}/x86/read_order_probe.c)
  # hmx-store-probe (tools/x86/store_probe.c): what one 64-byte load or store
  # costs the core in L1, aligned and 16 bytes past a line (docs/results/session61/).
  add_executable(hmx-store-probe ${CMAKE_CURRENT_LIST_DIR}/x86/store_probe.c)
endif()
