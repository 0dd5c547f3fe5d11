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
if(NOT PARTITA_HANA_TARGET)
  message(FATAL_ERROR "Partita needs Boost.Hana: install libboost-dev (Debian) or Hana itself")
endif()

find_package(xsimd 8 REQUIRED CONFIG)

# Debian's xsimd 8.1 lists xtl as a link dependency without finding it; xsimd needs xtl only
# with XSIMD_ENABLE_XTL_COMPLEX, so an empty stand-in is enough when xtl is absent.
if(NOT TARGET xtl)
  find_package(xtl QUIET CONFIG)
  if(NOT TARGET xtl)
    add_library(xtl INTERFACE IMPORTED)
  endif()
endif()
