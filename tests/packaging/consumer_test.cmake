# Builds and runs a consumer project the way a downstream user would, in a fresh build tree.
#   cmake -DMODE=find_package|add_subdirectory|fetchcontent -DSETTINGS=<file> -DCONSUMER_DIR=<dir>
#         -DWORK_DIR=<dir> [-DCONFIG=<config>] [-DONEDNN=ON|OFF] [-DONNX=ON|OFF]
#         [-DIMPORT_PYTHON=<python>] -P consumer_test.cmake
# ONEDNN (find_package only): whether the enclosing build has partita::onednn, so that the
# installed package must provide it too. ONNX: whether the consumer also imports an ONNX model
# with partita_import_onnx, under IMPORT_PYTHON when given (else the interpreter it finds).
# SETTINGS sets the toolchain of the enclosing build (see tests/packaging/CMakeLists.txt), so
# that the consumer is compiled as Partita's own tests are, and nothing is downloaded.
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS MODE SETTINGS CONSUMER_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()
include("${SETTINGS}")

# Runs one command, echoing it, and stops the test with `what` if it fails.
function(step what)
  list(JOIN ARGN " " shown)
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

# Runs one command that must fail with output matching `regex`, and stops the test otherwise.
function(step_must_fail what regex)
  list(JOIN ARGN " " shown)
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${what}: succeeded, but it must fail\n${out}${err}")
  endif()
  # CMake wraps long messages: compare with the line breaks and indentation taken out.
  string(REGEX REPLACE "\n +" " " flat "${out}${err}")
  if(NOT flat MATCHES "${regex}")
    message(FATAL_ERROR "${what}: failed without /${regex}/\n${out}${err}")
  endif()
endfunction()

set(config_args)
set(build_config)
set(test_config)
if(CONFIG)
  set(config_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
  set(build_config --config "${CONFIG}")
  set(test_config -C "${CONFIG}")
endif()
set(toolchain_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" ${config_args})
if(MAKE_PROGRAM)
  list(APPEND toolchain_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER_LAUNCHER)
  list(APPEND toolchain_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}")
endif()

set(onnx_args)
if(ONNX)
  set(onnx_args -DCONSUMER_ONNX=ON)
  if(IMPORT_PYTHON)
    list(APPEND onnx_args "-DPARTITA_IMPORT_PYTHON=${IMPORT_PYTHON}")
  endif()
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
set(consumer_build "${WORK_DIR}/consumer-build")

if(MODE STREQUAL "find_package")
  set(partita_build "${WORK_DIR}/partita-build")
  set(prefix "${WORK_DIR}/prefix")
  step("Configure Partita for installation"
       "${CMAKE_COMMAND}" -S "${PARTITA_SOURCE_DIR}" -B "${partita_build}" ${toolchain_args}
       "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}" "-DCMAKE_INSTALL_PREFIX=${prefix}"
       -DPARTITA_BUILD_TESTS=OFF -DPARTITA_BUILD_EXAMPLES=OFF -DPARTITA_BUILD_BENCHMARKS=OFF)
  step("Install Partita" "${CMAKE_COMMAND}" --install "${partita_build}" ${build_config})
  if(NOT EXISTS "${prefix}/include/partita/partita.hpp")
    message(FATAL_ERROR "the install did not put partita/partita.hpp under ${prefix}/include")
  endif()

  if(ONEDNN AND NOT EXISTS "${prefix}/share/cmake/partita/partitaOnednnTargets.cmake")
    message(FATAL_ERROR "the install did not export partita::onednn (partitaOnednnTargets.cmake)")
  endif()

  # The fresh prefix comes first, so a Partita installed elsewhere on the system cannot answer.
  set(consumer_args ${toolchain_args} "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
  if(ONEDNN)
    set(with_onednn ON)
  else()
    set(with_onednn OFF)
  endif()
  step("Configure the find_package consumer"
       "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${consumer_build}" ${consumer_args}
       "-DCONSUMER_ONEDNN=${with_onednn}" ${onnx_args})
  file(STRINGS "${consumer_build}/CMakeCache.txt" found REGEX "^partita_DIR:")
  string(FIND "${found}" "${prefix}/" at)
  if(NOT at GREATER -1)
    message(FATAL_ERROR "the consumer found Partita outside the test prefix: ${found}")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  step("Configure the add_subdirectory consumer"
       "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${consumer_build}" ${toolchain_args}
       "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}" "-DPARTITA_SOURCE_DIR=${PARTITA_SOURCE_DIR}" ${onnx_args})
  if(EXISTS "${consumer_build}/partita/tests")
    message(FATAL_ERROR "Partita's tests were configured inside the consumer's build")
  endif()
elseif(MODE STREQUAL "fetchcontent")
  # A git repository holding one commit of the source tree as it is now (tracked files and new
  # ones that git does not ignore), so that the test sees uncommitted changes too.
  set(snapshot "${WORK_DIR}/partita-snapshot")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${PARTITA_SOURCE_DIR}" -c core.quotePath=false
                          ls-files --cached --others --exclude-standard
                  OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ls-files failed in ${PARTITA_SOURCE_DIR} (${rc})")
  endif()
  string(REPLACE "\n" ";" listed "${listed}")
  foreach(file IN LISTS listed)
    # Deleted but not yet staged: absent from the tree as it is now.
    if(file AND EXISTS "${PARTITA_SOURCE_DIR}/${file}")
      configure_file("${PARTITA_SOURCE_DIR}/${file}" "${snapshot}/${file}" COPYONLY)
    endif()
  endforeach()
  set(git "${GIT_EXECUTABLE}" -C "${snapshot}" -c user.name=partita -c user.email=partita@localhost
          -c commit.gpgsign=false -c init.defaultBranch=main)
  step("Snapshot the source tree" ${git} init -q)
  step("Stage the snapshot" ${git} add -A)
  step("Commit the snapshot" ${git} commit -q -m snapshot)
  execute_process(COMMAND ${git} rev-parse HEAD OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE)

  step("Configure the FetchContent consumer"
       "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${consumer_build}" ${toolchain_args}
       "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}" "-DPARTITA_GIT_REPOSITORY=file://${snapshot}"
       "-DPARTITA_GIT_TAG=${commit}")
  if(NOT EXISTS "${consumer_build}/_deps/partita-src/include/partita/partita.hpp")
    message(FATAL_ERROR "FetchContent did not check Partita out under ${consumer_build}/_deps/partita-src")
  endif()
  if(EXISTS "${consumer_build}/_deps/partita-build/tests")
    message(FATAL_ERROR "Partita's tests were configured inside the consumer's build")
  endif()
else()
  message(FATAL_ERROR "consumer_test.cmake: unknown MODE '${MODE}'")
endif()

step("Build the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" ${build_config})
step("Run the consumer"
     "${CTEST_COMMAND}" --test-dir "${consumer_build}" ${test_config}
     --output-on-failure --no-tests=error)

if(MODE STREQUAL "find_package")
  # The component onednn is optional: without oneDNN (hidden here from the consumer when it is
  # installed), find_package(partita) still works and COMPONENTS onednn fails, saying why.
  set(no_onednn_args)
  set(reason "this Partita was installed without it")
  if(ONEDNN)
    set(no_onednn_args -DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON)
    set(reason "oneDNN was not found")
  endif()
  step("Configure the find_package consumer without oneDNN"
       "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/without-onednn" ${consumer_args}
       ${no_onednn_args} -DCONSUMER_ONEDNN=OFF)
  step_must_fail("Require the component onednn without oneDNN"
       "the component onednn \\(partita::onednn\\) is not available: ${reason}"
       "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/onednn-missing" ${consumer_args}
       ${no_onednn_args} -DCONSUMER_ONEDNN=ON)
endif()
