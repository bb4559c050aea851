# Installing hadamix for use by other programs (README "Using it as a library").
#
#   cmake --install build --prefix /usr/local
#
# installs the public headers, the static library (libhadamix.a), the shared
# library (libhadamix.so.<major>.<minor>, with -DHMX_SHARED=ON), the hmx tool,
# the golden vectors (share/hadamix/vectors: `hmx conform`'s default once the
# source tree is gone), a CMake package (find_package(hadamix): hadamix::hadamix
# is the shared library when built, else the static one; hadamix::hadamix_static
# is always the static one) and a pkg-config file (hadamix.pc; --static adds the
# archive's dependencies). tests/install/ builds a program against all three
# ways in the test install_package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include(CheckLinkerFlag)

# ---------------------------------------------------------------- the shared library
# Off by default: it needs the archive compiled position-independent, and
# that costs the kernels a little: the same avx2 fwht calls (rows of 256 ...
# 4096 in L2) ran 4.5% more instructions from a PIC archive (1.758e9 against
# 1.682e9, `perf stat -e instructions:u`, one program linked to each;
# register allocation and stack realignment, not TLS, which a static link
# relaxes). -DHMX_SHARED=ON builds it: made from the static archive whole,
# so no source is compiled twice. Its dependencies (cJSON, OpenMP, oneDNN,
# SLEEF, the static CUDA runtime) are linked into it, so a program needs
# only -lhadamix. It exports the public API and nothing else: hidden
# visibility everywhere else (CMakeLists.txt), and on ELF a version script
# that keeps the static CUDA runtime's symbols local. CI builds it in
# tools/test.sh --sanitize and --minimal.
option(HMX_SHARED "Also build the shared library libhadamix (public API only; compiles the archive -fPIC)" OFF)
if(HMX_SHARED AND (WIN32 OR NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang"))
  message(STATUS "hadamix: the shared library is built only with gcc or clang off Windows")
  set(HMX_SHARED OFF)
endif()
if(HMX_SHARED)
  set_property(TARGET hadamix PROPERTY POSITION_INDEPENDENT_CODE ON)
  add_library(hadamix_shared SHARED ${PROJECT_SOURCE_DIR}/src/shared/libhadamix.c)
  target_link_libraries(hadamix_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,hadamix>")
  target_include_directories(hadamix_shared INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # 0.x: the ABI may change with each minor version, so the SONAME has both.
  set_target_properties(hadamix_shared PROPERTIES OUTPUT_NAME hadamix
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    EXPORT_NAME hadamix C_VISIBILITY_PRESET hidden)
  set(_map ${PROJECT_SOURCE_DIR}/cmake/hadamix.map)
  check_linker_flag(C "LINKER:--version-script=${_map}" HMX_LD_VERSION_SCRIPT)
  if(HMX_LD_VERSION_SCRIPT)
    target_link_options(hadamix_shared PRIVATE "LINKER:--version-script=${_map}")
    set_property(TARGET hadamix_shared APPEND PROPERTY LINK_DEPENDS ${_map})
  endif()
  # Every symbol resolved when the library is made, not when a program
  # loads it. Sanitizer runtimes are supplied by the program, so not there.
  check_linker_flag(C "LINKER:--no-undefined" HMX_LD_NO_UNDEFINED)
  if(HMX_LD_NO_UNDEFINED AND NOT HMX_SANITIZE AND NOT HMX_FUZZ)
    target_link_options(hadamix_shared PRIVATE "LINKER:--no-undefined")
  endif()
  unset(_map)
endif()

# The names a program links, the same whether hadamix was installed
# (find_package) or built inside its project (add_subdirectory, FetchContent).
add_library(hadamix::hadamix_static ALIAS hadamix)
if(HMX_SHARED)
  add_library(hadamix::hadamix ALIAS hadamix_shared)
else()
  add_library(hadamix::hadamix ALIAS hadamix)
endif()

# ---------------------------------------------------------------- install
if(NOT HMX_INSTALL)
  return()
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
set_property(TARGET hadamix PROPERTY EXPORT_NAME hadamix_static)
target_include_directories(hadamix INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set(_targets hadamix)
if(HMX_SHARED)
  list(APPEND _targets hadamix_shared)
endif()
install(TARGETS ${_targets} EXPORT hadamixTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET hmx)
  install(TARGETS hmx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/vectors/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hadamix/vectors
          FILES_MATCHING PATTERN "*.safetensors")
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/NUMERICS.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The CMake package. The static target's link interface names imported
# targets of this build (HMX::cjson, HMX::dnnl, OpenMP::OpenMP_C, CUDA::...):
# hadamixConfig.cmake makes them again from what was found here.
set(_cfgdir ${CMAKE_INSTALL_LIBDIR}/cmake/hadamix)
install(EXPORT hadamixTargets NAMESPACE hadamix:: DESTINATION ${_cfgdir})
set(HMX_CFG_OPENMP ${HMX_HAVE_OPENMP})
set(HMX_CFG_CUDA OFF)
if(cuda IN_LIST HMX_BACKEND_NAMES)
  set(HMX_CFG_CUDA ON)
endif()
set(HMX_CFG_CJSON "")
if(TARGET HMX::cjson)
  set(HMX_CFG_CJSON "${HMX_CJSON_LIBRARY};${HMX_CJSON_INCLUDE}")
endif()
set(HMX_CFG_DNNL "")
if(TARGET HMX::dnnl AND HMX_FAST_DNNL)
  set(HMX_CFG_DNNL "${HMX_DNNL_LIBRARY};${HMX_DNNL_INCLUDE}")
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hadamixConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hadamixConfig.cmake INSTALL_DESTINATION ${_cfgdir})
# 0.x: a package is compatible only within one minor version.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hadamixConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hadamixConfig.cmake
              ${PROJECT_BINARY_DIR}/hadamixConfigVersion.cmake DESTINATION ${_cfgdir})

# pkg-config. Libs.private lists what a program linking the static archive
# also needs, read from the archive's link interface.
function(hmx_pkg_libs item out)
  set(flags "")
  if(item MATCHES "^\\$<(LINK_ONLY|INSTALL_INTERFACE):(.*)>$")
    set(item "${CMAKE_MATCH_2}")
  elseif(item MATCHES "^\\$<BUILD_INTERFACE:")
    set(item "")
  endif()
  if(item STREQUAL "OpenMP::OpenMP_C")
    list(APPEND flags ${OpenMP_C_FLAGS})
  elseif(TARGET ${item})
    get_target_property(loc ${item} IMPORTED_LOCATION)
    if(loc)
      list(APPEND flags "${loc}")
    endif()
    get_target_property(deps ${item} INTERFACE_LINK_LIBRARIES)
    foreach(d IN LISTS deps)
      hmx_pkg_libs("${d}" sub)
      list(APPEND flags ${sub})
    endforeach()
  elseif(IS_ABSOLUTE "${item}")
    list(APPEND flags "${item}")
  elseif(item MATCHES "^-")
    list(APPEND flags "${item}")
  elseif(item)
    list(APPEND flags "-l${item}")
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
get_target_property(_deps hadamix INTERFACE_LINK_LIBRARIES)
set(_private "")
foreach(_d IN LISTS _deps)
  hmx_pkg_libs("${_d}" _flags)
  list(APPEND _private ${_flags})
endforeach()
list(REMOVE_DUPLICATES _private)
list(JOIN _private " " HMX_PC_LIBS_PRIVATE)
# relocatable: the prefix is found from where the .pc file lies
file(RELATIVE_PATH HMX_PC_TO_PREFIX /r/${CMAKE_INSTALL_LIBDIR}/pkgconfig /r)
string(REGEX REPLACE "/$" "" HMX_PC_TO_PREFIX "${HMX_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hadamix.pc.in ${PROJECT_BINARY_DIR}/hadamix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hadamix.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
unset(_cfgdir)
unset(_targets)
unset(_deps)
unset(_private)
