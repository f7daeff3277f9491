# aarch64-linux-gnu.cmake — CMake toolchain file: build libenormoustext and
# its tests for aarch64 (glibc) with Debian's cross compiler.
#
#   cmake -S . -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64
#
# Debian packages: gcc-aarch64-linux-gnu libc6-dev-arm64-cross (compiler,
# headers, libc to link against); qemu-user to run what is built (the
# emulator is the caller's choice: set CMAKE_CROSSCOMPILING_EMULATOR).
# tests/aarch64/run.sh configures, builds and runs everything this way.
#
# The target's libraries outside the cross root (e.g. the arm64 Criterion
# runtime from `dpkg --add-architecture arm64`) live in the host's multiarch
# directory /usr/lib/aarch64-linux-gnu: both are searched, the host's own
# x86-64 directories never are (CMAKE_LIBRARY_ARCHITECTURE picks the
# aarch64-linux-gnu subdirectories).
#
# ET_AARCH64_TRIPLE / ET_AARCH64_GCC may be set (-D or the environment) for
# another cross compiler of the same target, e.g. a versioned one.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT ET_AARCH64_TRIPLE)
  if(DEFINED ENV{ET_AARCH64_TRIPLE})
    set(ET_AARCH64_TRIPLE $ENV{ET_AARCH64_TRIPLE})
  else()
    set(ET_AARCH64_TRIPLE aarch64-linux-gnu)
  endif()
endif()
if(NOT ET_AARCH64_GCC)
  if(DEFINED ENV{ET_AARCH64_GCC})
    set(ET_AARCH64_GCC $ENV{ET_AARCH64_GCC})
  else()
    set(ET_AARCH64_GCC ${ET_AARCH64_TRIPLE}-gcc)
  endif()
endif()
# try_compile projects re-read this file: pass the choice on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ET_AARCH64_TRIPLE ET_AARCH64_GCC)

set(CMAKE_C_COMPILER ${ET_AARCH64_GCC})
# The cross g++ where it is installed, else NOTFOUND: a check for C++
# (tests/integration's optional C++ program) then finds none, never the
# host's c++.
find_program(ET_AARCH64_GXX ${ET_AARCH64_TRIPLE}-g++)
set(CMAKE_CXX_COMPILER ${ET_AARCH64_GXX})
set(CMAKE_LIBRARY_ARCHITECTURE ${ET_AARCH64_TRIPLE})

# Programs (cc, bash, readelf) from the host; libraries, headers and
# packages from the cross root and the multiarch directories only.
set(CMAKE_FIND_ROOT_PATH /usr/${ET_AARCH64_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config: the target's .pc files only, never the host's (a host
# libunwind.pc or libelf.pc would otherwise put x86-64 libraries into an
# aarch64 link).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${ET_AARCH64_TRIPLE}/pkgconfig:/usr/${ET_AARCH64_TRIPLE}/lib/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
