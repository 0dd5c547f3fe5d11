# Finds Partita's header-only dependencies and names the Hana target in PARTITA_HANA_TARGET.
include_guard(GLOBAL)

# Hana ships inside Boost's headers on Debian (Boost::headers); a standalone Hana install
# provides hana or Boost::hana.
set(PARTITA_HANA_TARGET "")
find_package(Boost 1.70 QUIET CONFIG COMPONENTS headers)
if(TARGET Boost::hana)
  set(PARTITA_HANA_TARGET Boost::hana)
elseif(TARGET Boost::headers)
  set(PARTITA_HANA_TARGET Boost::headers)
else()
  find_package(Hana QUIET CONFIG)
  if(TARGET hana)
    set(PARTITA_HANA_TARGET hana)
  endif()
endif()

# A bare-metal cross build that found Hana in the build machine's /usr/include must not put that
# folder on the include path: its C library headers would shadow the target's (newlib's). Hana
# is headers only, so a folder holding just a link to boost/ serves instead.
if(CMAKE_SYSTEM_NAME STREQUAL "Generic" AND CMAKE_CROSSCOMPILING)
  find_path(PARTITA_HANA_INCLUDE boost/hana.hpp PATHS /usr/include /usr/local/include NO_CMAKE_FIND_ROOT_PATH)
  if(PARTITA_HANA_INCLUDE)
    set(hana_only "${CMAKE_BINARY_DIR}/partita_hana_include")
    file(MAKE_DIRECTORY "${hana_only}")
    file(CREATE_LINK "${PARTITA_HANA_INCLUDE}/boost" "${hana_only}/boost" SYMBOLIC)
    add_library(partita_hana_only INTERFACE)
    target_include_directories(partita_hana_only SYSTEM INTERFACE "${hana_only}")
    set(PARTITA_HANA_TARGET partita_hana_only)
  endif()
endif()
if(NOT PARTITA_HANA_TARGET)
  message(FATAL_ERROR "Partita needs Boost.Hana: install libboost-dev (Debian) or Hana itself")
endif()

# xsimd is the cpu backend's: a bare-metal build (CMAKE_SYSTEM_NAME Generic, a microcontroller)
# may have none, and then uses partita/embedded.hpp alone (docs/embedded.md).
if(CMAKE_SYSTEM_NAME STREQUAL "Generic")
  find_package(xsimd 8 QUIET CONFIG)
  if(NOT xsimd_FOUND)
    message(STATUS "Partita: no xsimd for this bare-metal target; include partita/embedded.hpp (no cpu backend)")
  endif()
else()
  find_package(xsimd 8 REQUIRED CONFIG)
endif()

# Debian's xsimd 8.1 lists xtl as a link dependency without finding it; xsimd needs xtl only
# with XSIMD_ENABLE_XTL_COMPLEX, so an empty stand-in is enough when xtl is absent.
if(xsimd_FOUND AND NOT TARGET xtl)
  find_package(xtl QUIET CONFIG)
  if(NOT TARGET xtl)
    add_library(xtl INTERFACE IMPORTED)
  endif()
endif()
