# The oneDNN backend (include/partita/backends/onednn/onednn.hpp) as the INTERFACE target
# partita_onednn / partita::onednn: partita::partita, oneDNN (DNNL::dnnl) and OpenMP, whose runtime
# this oneDNN uses (Debian's libdnnl-dev; its CMake package also needs OpenCL's loader,
# ocl-icd-opencl-dev). Include it after partita::partita exists; without oneDNN or OpenMP it
# defines nothing and says so.
include_guard(GLOBAL)

find_package(dnnl CONFIG QUIET)
find_package(OpenMP QUIET COMPONENTS CXX)

if(TARGET DNNL::dnnl AND TARGET OpenMP::OpenMP_CXX AND TARGET partita::partita)
  add_library(partita_onednn INTERFACE)
  add_library(partita::onednn ALIAS partita_onednn)
  set_target_properties(partita_onednn PROPERTIES EXPORT_NAME onednn)
  target_link_libraries(partita_onednn INTERFACE partita::partita DNNL::dnnl OpenMP::OpenMP_CXX)
elseif(NOT TARGET partita::partita)
  message(STATUS "Partita: include partita_onednn after defining partita::partita; no oneDNN backend target")
else()
  message(STATUS "Partita: oneDNN (dnnl) or OpenMP not found, no oneDNN backend (partita::onednn)")
endif()

# Installed in an export file of its own, which partitaConfig.cmake loads only where the consumer
# finds oneDNN and OpenMP: find_package(partita) works without them.
if(PARTITA_INSTALL AND TARGET partita_onednn)
  install(TARGETS partita_onednn EXPORT partitaOnednnTargets)
  install(EXPORT partitaOnednnTargets
          NAMESPACE partita::
          FILE partitaOnednnTargets.cmake
          DESTINATION "${PARTITA_INSTALL_CMAKEDIR}")
endif()
