# Cross-compile hadamix for AArch64 Linux with Debian's gcc-aarch64-linux-gnu,
# and run the tests under qemu-user (tools/test-arm64.sh):
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
#   cmake --build build-arm64 && ctest --test-dir build-arm64
# Needs: gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user, and for the hmx
# tool / vectors / conformance the arm64 cJSON (dpkg --add-architecture arm64;
# apt-get install libcjson-dev:arm64). libgomp for arm64 comes with the cross gcc.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(HMX_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${HMX_CROSS_TRIPLE}-gcc)

# Target root: the cross libc, plus the multiarch directories where
# libcjson-dev:arm64 installs (/usr/lib/aarch64-linux-gnu, /usr/include).
set(CMAKE_FIND_ROOT_PATH /usr/${HMX_CROSS_TRIPLE})
set(CMAKE_LIBRARY_PATH /usr/lib/${HMX_CROSS_TRIPLE})
set(CMAKE_INCLUDE_PATH /usr/include)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# BOTH: search the target root first, then the host paths given above. Only
# /usr/lib/aarch64-linux-gnu is added for libraries, so no x86 library is found.
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
list(APPEND CMAKE_FIND_ROOT_PATH /)
set(CMAKE_LIBRARY_ARCHITECTURE ${HMX_CROSS_TRIPLE})

# ctest (and add_custom_command) run target binaries through qemu. The library
# path puts the cross libc and libgomp (/usr/aarch64-linux-gnu/lib, the same
# glibc build as the cross loader) before the multiarch directory that holds
# libcjson.so.1. Without it the cross loader takes libc.so.6 from the host's
# ld.so.cache (libc6:arm64, pulled in by libcjson-dev:arm64): a loader/libc
# mismatch under which libgomp hangs in its first parallel region.
find_program(HMX_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR
    ${HMX_QEMU_AARCH64} -L /usr/${HMX_CROSS_TRIPLE}
    -E LD_LIBRARY_PATH=/usr/${HMX_CROSS_TRIPLE}/lib:/usr/lib/${HMX_CROSS_TRIPLE})
