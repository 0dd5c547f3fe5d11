# Bare-metal Cortex-M builds with Debian's arm-none-eabi toolchain (gcc-arm-none-eabi and
# libstdc++-arm-none-eabi-newlib): no operating system, newlib's C library. The CPU and FPU flags
# are the project's to set per target (-mcpu=cortex-m7 -mfpu=fpv5-sp-d16 -mfloat-abi=hard, say).
#   cmake -S tests/embedded/firmware -B build-firmware -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi.cmake
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(PARTITA_CROSS_PREFIX arm-none-eabi- CACHE STRING "Prefix of the cross toolchain's programs")
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER ${PARTITA_CROSS_PREFIX}g++)
endif()
if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER ${PARTITA_CROSS_PREFIX}gcc)
endif()
find_program(PARTITA_CROSS_SIZE ${PARTITA_CROSS_PREFIX}size)

# A program cannot link without the board's startup code and memory map: CMake's checks build
# static libraries instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
