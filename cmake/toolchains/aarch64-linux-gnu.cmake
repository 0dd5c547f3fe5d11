# Cross build for 64-bit ARM Linux with Debian's aarch64-linux-gnu toolchain
# (g++-aarch64-linux-gnu); CTest runs the programs through qemu-aarch64 (qemu-user) with the
# target's libraries. Partita's dependencies are headers only, so their CMake packages are taken
# from the build machine: Boost.Hana, xsimd and doctest are the same files for every target.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(PARTITA_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Prefix of the cross toolchain's programs")
set(PARTITA_CROSS_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Where the target's C and C++ libraries live")
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER ${PARTITA_CROSS_PREFIX}g++)
endif()
if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER ${PARTITA_CROSS_PREFIX}gcc)
endif()

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${PARTITA_CROSS_SYSROOT})

# Programs (Python, qemu) from the build machine, libraries and packages from the target's
# sysroot, headers from both.
set(CMAKE_FIND_ROOT_PATH ${PARTITA_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The header-only dependencies' package files, from the build machine's multiarch folder where
# Debian puts them; only these: a compiled library found there (oneDNN) is the build machine's.
foreach(package_glob IN ITEMS "Boost-*" "boost_headers-*" "xsimd" "doctest")
  file(GLOB package_dirs /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake/${package_glob}
                         /usr/lib/cmake/${package_glob} /usr/share/cmake/${package_glob})
  if(package_dirs)
    list(GET package_dirs 0 package_dir)
    string(REGEX REPLACE "-.*" "" package "${package_glob}")
    if(NOT DEFINED ${package}_DIR)
      set(${package}_DIR ${package_dir} CACHE PATH "")
    endif()
  endif()
endforeach()
