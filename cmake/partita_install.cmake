# Install rules and the package config behind `find_package(partita)` / `partita::partita`.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

# A project that vendors Partita with add_subdirectory installs its own artefacts, not Partita's.
option(PARTITA_INSTALL "Generate Partita's install rules" ${PARTITA_TOP_LEVEL})
if(NOT PARTITA_INSTALL)
  return()
endif()

# Header-only, so the package files are architecture-independent and belong under share/.
set(PARTITA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/partita"
    CACHE STRING "Where partitaConfig.cmake is installed, relative to the prefix")

install(DIRECTORY "${partita_SOURCE_DIR}/include/partita"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.hpp")

# The ONNX importer and the CMake function that runs it (partita_import_onnx), which the
# installed config includes with the importer's installed path.
set(PARTITA_INSTALL_TOOLSDIR "${CMAKE_INSTALL_DATADIR}/partita/tools"
    CACHE STRING "Where the ONNX importer (partita_import.py) is installed, relative to the prefix")
install(FILES "${partita_SOURCE_DIR}/tools/partita_import.py" DESTINATION "${PARTITA_INSTALL_TOOLSDIR}")
install(DIRECTORY "${partita_SOURCE_DIR}/tools/partita_onnx"
        DESTINATION "${PARTITA_INSTALL_TOOLSDIR}"
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES "${partita_SOURCE_DIR}/cmake/partita_import_onnx.cmake"
              "${partita_SOURCE_DIR}/cmake/partita_model_python.cmake"
        DESTINATION "${PARTITA_INSTALL_CMAKEDIR}")

# The Hana-only folder of a bare-metal cross build (partita_dependencies.cmake) lives in this
# build tree: such a build installs the headers and tools, and no CMake package.
if(PARTITA_HANA_TARGET STREQUAL "partita_hana_only")
  message(STATUS "Partita: bare-metal build, its CMake package is not installed (use add_subdirectory)")
  return()
endif()

install(TARGETS partita EXPORT partitaTargets)
install(EXPORT partitaTargets
        NAMESPACE partita::
        FILE partitaTargets.cmake
        DESTINATION "${PARTITA_INSTALL_CMAKEDIR}")

# The config re-finds whichever Hana target partita was linked against at configure time.
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/partitaConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/partitaConfig.cmake"
  INSTALL_DESTINATION "${PARTITA_INSTALL_CMAKEDIR}"
  PATH_VARS PARTITA_INSTALL_TOOLSDIR)
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/partitaConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion
  ARCH_INDEPENDENT)

install(FILES
          "${CMAKE_CURRENT_BINARY_DIR}/partitaConfig.cmake"
          "${CMAKE_CURRENT_BINARY_DIR}/partitaConfigVersion.cmake"
        DESTINATION "${PARTITA_INSTALL_CMAKEDIR}")
