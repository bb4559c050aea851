# install_package: `cmake --install` into a scratch prefix, then a program
# outside the project built against it through the CMake package and
# pkg-config (tests/install/check_install.cmake). A cross build would need
# the consumer cross-built and emulated too: not registered there.
if(CMAKE_CROSSCOMPILING)
  message(STATUS "hadamix: cross-compiling: the test install_package is not registered")
  return()
endif()
if(NOT HMX_INSTALL)
  message(STATUS "hadamix: HMX_INSTALL=OFF: the test install_package is not registered")
  return()
endif()
# HMX_TEST_SUBPROJECT: also build hadamix inside the consumer's project (a
# second library build, without CUDA; tools/test.sh --minimal turns it on)
option(HMX_TEST_SUBPROJECT "install_package also builds hadamix by add_subdirectory" OFF)
find_program(HMX_PKG_CONFIG NAMES pkg-config pkgconf)
find_program(HMX_CXX_FOR_HEADERS NAMES c++ g++ clang++) # the headers' C++ check
set(_san "")
if(HMX_SANITIZE)
  set(_san "-fsanitize=${HMX_SANITIZE}")
endif()
add_test(NAME install_package
         COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR} -DSRC=${PROJECT_SOURCE_DIR}
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/install_package -DCC=${CMAKE_C_COMPILER} -DCXX=${HMX_CXX_FOR_HEADERS}
                 -DSHARED=${HMX_SHARED} -DNM=${CMAKE_NM} -DPKG_CONFIG=${HMX_PKG_CONFIG}
                 -DSAN_FLAGS=${_san} -DVERSION=${PROJECT_VERSION}
                 -DSUBPROJECT=${HMX_TEST_SUBPROJECT}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.cmake)
set_tests_properties(install_package PROPERTIES LABELS "unit" TIMEOUT 600)
unset(_san)
