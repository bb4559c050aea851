# The test install_package (tests/t_install.cmake): install this build into a
# scratch prefix and use it as a newcomer would.
#   1. `cmake --install` puts the headers, libraries, hmx, vectors, the CMake
#      package and hadamix.pc where README "Using it as a library" says;
#   2. libhadamix.so exports exactly the functions the public headers declare
#      (ELF only, with nm);
#   3. tests/install/consumer.c, built against the CMake package (both
#      targets) and through pkg-config (the archive with Libs.private, and the
#      shared library where HMX_SHARED built it), runs and passes its checks
#      each time;
#   4. the installed headers compile as C++ (when a C++ compiler is there);
#   5. the installed hmx passes `conform` on the installed vectors (ref), found
#      beside it with no --vectors, also once the prefix is moved;
#   6. with SUBPROJECT, hadamix built inside the consumer's project by
#      add_subdirectory links the same way (a whole library build: minutes).
# Arguments (-D): BUILD, SRC, WORK, CC, CXX, SHARED, NM, PKG_CONFIG, SAN_FLAGS, VERSION,
# SUBPROJECT.
cmake_minimum_required(VERSION 3.25)
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

function(expect_passed what)
  if(NOT run_out MATCHES "consumer: all checks passed")
    message(FATAL_ERROR "${what}: the consumer did not pass:\n${run_out}")
  endif()
  string(REGEX REPLACE "\n$" "" lines "${run_out}")
  string(REPLACE "\n" "\n     " lines "${lines}")
  message(STATUS "${what}: consumer passed\n     ${lines}")
endfunction()

# 1. install
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
file(GLOB libdir_cfg ${prefix}/lib*/cmake/hadamix/hadamixConfig.cmake
                     ${prefix}/lib*/*/cmake/hadamix/hadamixConfig.cmake)
if(NOT libdir_cfg)
  message(FATAL_ERROR "no hadamixConfig.cmake under ${prefix}")
endif()
get_filename_component(libdir ${libdir_cfg} DIRECTORY)
get_filename_component(libdir ${libdir}/../.. ABSOLUTE)
foreach(f include/hadamix.h include/hadamix_model.h include/hadamix_tokenizer.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
foreach(f ${libdir}/libhadamix.a ${libdir}/pkgconfig/hadamix.pc)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
set(so "")
if(SHARED)
  file(GLOB so ${libdir}/libhadamix.so.*.*.*)
  if(NOT so OR NOT EXISTS ${libdir}/libhadamix.so)
    message(FATAL_ERROR "HMX_SHARED is ON but no libhadamix.so.x.y.z and libhadamix.so in ${libdir}")
  endif()
endif()

# 2. what the shared library exports, against what the headers declare
if(so AND NM)
  set(declared "")
  foreach(h hadamix.h hadamix_model.h hadamix_tokenizer.h)
    # a declaration starts in column 0 with its type; comments, macros and
    # typedefs do not declare functions. (file(STRINGS) would split the
    # headers at brackets in comments: CMake list syntax.)
    file(READ ${SRC}/include/${h} text)
    string(REGEX MATCHALL "\n[A-Za-z][^\n(;\\[]*[ *]hmx_[a-z0-9_]+\\(" decls "${text}")
    foreach(d IN LISTS decls)
      if(NOT d MATCHES "^\n(typedef|#)" AND d MATCHES "(hmx_[a-z0-9_]+)\\($")
        list(APPEND declared ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES declared)
  list(SORT declared)
  run("nm" ${NM} -D --defined-only ${so})
  string(REPLACE "\n" ";" nm_lines "${run_out}")
  set(exported "")
  foreach(line IN LISTS nm_lines)
    if(line MATCHES "^[0-9a-fA-F]+ [A-Za-z] ([^ @]+)")
      list(APPEND exported ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES exported)
  list(SORT exported)
  set(extra ${exported})
  list(REMOVE_ITEM extra ${declared})
  set(missing ${declared})
  list(REMOVE_ITEM missing ${exported})
  list(LENGTH declared n_declared)
  if(extra OR missing OR n_declared LESS 50)
    message(FATAL_ERROR "libhadamix.so exports what the headers do not declare: [${extra}]\n"
                        "the headers declare what it does not export: [${missing}]\n"
                        "(${n_declared} declared)")
  endif()
  message(STATUS "libhadamix.so exports exactly the ${n_declared} functions the headers declare")
endif()

# 3a. the CMake package
set(flags "")
if(SAN_FLAGS)
  set(flags -DCMAKE_C_FLAGS=${SAN_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${SAN_FLAGS})
endif()
# hadamix::hadamix is the shared library where it was built, else the archive
foreach(t hadamix::hadamix_static hadamix::hadamix)
  string(REPLACE "::" "_" tag ${t})
  set(bdir ${WORK}/cmake_${tag})
  set(expect OFF)
  if(t STREQUAL "hadamix::hadamix" AND SHARED)
    set(expect ON)
  endif()
  run("configure against ${t}" ${CMAKE_COMMAND} -S ${SRC}/tests/install -B ${bdir}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${prefix}
      -DHMX_LINK=${t} -DHMX_WANT_VERSION=${VERSION} -DHMX_EXPECT_SHARED=${expect} ${flags})
  run("build against ${t}" ${CMAKE_COMMAND} --build ${bdir})
  run("consumer (${t})" ${bdir}/consumer)
  expect_passed("find_package, ${t}")
endforeach()

# 3b. pkg-config
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
  run("pkg-config --modversion" ${PKG_CONFIG} --modversion hadamix)
  string(STRIP "${run_out}" v)
  if(NOT v STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config says version '${v}', the project is ${VERSION}")
  endif()
  run("pkg-config --cflags" ${PKG_CONFIG} --cflags hadamix)
  separate_arguments(cflags UNIX_COMMAND "${run_out}")
  separate_arguments(san UNIX_COMMAND "${SAN_FLAGS}")
  if(SHARED)
    run("pkg-config --libs" ${PKG_CONFIG} --libs hadamix)
    separate_arguments(libs UNIX_COMMAND "${run_out}")
    run("cc via pkg-config" ${CC} -std=c11 ${san} -DHMX_EXPECT_SHARED=1 ${cflags}
        ${SRC}/tests/install/consumer.c -o ${WORK}/pc_shared ${libs} -ldl -Wl,-rpath,${libdir})
    run("consumer (pkg-config, shared)" ${WORK}/pc_shared)
    expect_passed("pkg-config, shared")
  endif()
  # the archive: its own path in place of -lhadamix, then Libs.private
  run("pkg-config --static --libs" ${PKG_CONFIG} --static --libs hadamix)
  separate_arguments(libs UNIX_COMMAND "${run_out}")
  list(TRANSFORM libs REPLACE "^-lhadamix$" ${libdir}/libhadamix.a)
  run("cc via pkg-config --static" ${CC} -std=c11 ${san} ${cflags}
      ${SRC}/tests/install/consumer.c -o ${WORK}/pc_static ${libs} -ldl)
  run("consumer (pkg-config, static)" ${WORK}/pc_static)
  expect_passed("pkg-config --static")
else()
  message(STATUS "pkg-config not found: the .pc file was installed but not used")
endif()

# 4. the installed headers compile in a C++ program (extern "C", no C-only syntax)
if(CXX)
  file(WRITE ${WORK}/headers.cpp "#include <hadamix.h>\n#include <hadamix_model.h>\n"
       "#include <hadamix_tokenizer.h>\nint main() { return hmx_version_string()[0] == 0; }\n")
  run("the headers in C++" ${CXX} -std=c++11 -Wall -Wextra -Werror -fsyntax-only
      -I${prefix}/include ${WORK}/headers.cpp)
  message(STATUS "the installed headers compile as C++11")
endif()

# 5. the installed hmx on the installed vectors, found with no --vectors: they
#    lie beside the executable (tools/hmx/data_dir.c), not at the prefix it was
#    configured for (CMAKE_INSTALL_PREFIX, not this scratch prefix), nor in the
#    source tree, which still exists here. Then once more from a copy of bin/
#    and share/ elsewhere: a moved prefix.
function(expect_installed_conform hmx data)
  run("installed hmx conform" ${hmx} conform --backend ref)
  if(NOT run_out MATCHES "vector files? in ([^\n]*)\\):")
    message(FATAL_ERROR "${hmx} conform printed no coverage line:\n${run_out}")
  endif()
  set(read "${CMAKE_MATCH_1}")
  file(REAL_PATH "${data}" data)
  if(NOT read STREQUAL data)
    message(FATAL_ERROR "${hmx} conform read ${read}, not the vectors installed "
            "with it (${data})")
  endif()
  if(NOT run_out MATCHES "result: ok")
    message(FATAL_ERROR "${hmx} conform did not pass:\n${run_out}")
  endif()
  message(STATUS "${hmx}: conform passed on ${data}")
endfunction()
if(EXISTS ${prefix}/bin/hmx)
  expect_installed_conform(${prefix}/bin/hmx ${prefix}/share/hadamix/vectors)
  file(COPY ${prefix}/bin ${prefix}/share DESTINATION ${WORK}/moved)
  expect_installed_conform(${WORK}/moved/bin/hmx ${WORK}/moved/share/hadamix/vectors)
endif()

# 6. (SUBPROJECT) hadamix built inside the consumer's project, as
# add_subdirectory or FetchContent does: the same target names, no tests,
# tools or install rules of hadamix's own
if(SUBPROJECT)
  set(bdir ${WORK}/subproject)
  run("configure with add_subdirectory" ${CMAKE_COMMAND} -S ${SRC}/tests/install -B ${bdir}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${CC} -DHMX_SOURCE=${SRC}
      -DHMX_LINK=hadamix::hadamix -DHMX_WITH_CUDA=OFF -DHMX_FAST_TIER=OFF ${flags})
  if(EXISTS ${bdir}/hadamix/tests OR EXISTS ${bdir}/hadamix/tools/CMakeFiles/hmx.dir)
    message(FATAL_ERROR "hadamix as a subproject configured its tests or tools")
  endif()
  file(READ ${bdir}/hadamix/cmake_install.cmake sub_install)
  if(sub_install MATCHES "hadamixConfig|include/hadamix")
    message(FATAL_ERROR "hadamix as a subproject added install rules to its parent's")
  endif()
  run("build with add_subdirectory" ${CMAKE_COMMAND} --build ${bdir} -j 2)
  run("consumer (add_subdirectory)" ${bdir}/consumer)
  expect_passed("add_subdirectory")
endif()

file(REMOVE_RECURSE ${WORK})
