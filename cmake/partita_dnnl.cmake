# The oneDNN backend (include/partita/backends/dnnl/dnnl.hpp) as the INTERFACE target
# partita_dnnl / partita::dnnl: partita::partita, oneDNN (DNNL::dnnl) and OpenMP, whose runtime
# this oneDNN uses (Debian's libdnnl-dev; its CMake package also needs OpenCL's loader,
# ocl-icd-opencl-dev). Include it after partita::partita exists; without oneDNN or OpenMP it
# defines nothing and says so.
include_guard(GLOBAL)

find_package(dnnl CONFIG QUIET)
find_package(OpenMP QUIET COMPONENTS CXX)

if(TARGET DNNL::dnnl AND TARGET OpenMP::OpenMP_CXX AND TARGET partita::partita)
  add_library(partita_dnnl INTERFACE)
  add_library(partita::dnnl ALIAS partita_dnnl)
  target_link_libraries(partita_dnnl INTERFACE partita::partita DNNL::dnnl OpenMP::OpenMP_CXX)
elseif(NOT TARGET partita::partita)
  message(STATUS "Partita: include partita_dnnl after defining partita::partita; no oneDNN backend target")
else()
  message(STATUS "Partita: oneDNN (dnnl) or OpenMP not found, no oneDNN backend (partita::dnnl)")
endif()
