# partita_import_onnx: an ONNX model imported at build time into a target's C++ types.
#
#   partita_import_onnx(TARGET app MODEL model.onnx NAMESPACE ns
#                       [INPUT_SHAPES x=1,3,224,224 ...] [EMBED_WEIGHTS | WEIGHT_ARRAYS] [OUTPUT_DIR dir])
#
# runs tools/partita_import.py on MODEL when `app` is built (again whenever MODEL or the importer
# changes), writing OUTPUT_DIR/ns.hpp and OUTPUT_DIR/ns.safetensors, and puts OUTPUT_DIR on
# app's include path: `#include "ns.hpp"` declares `ns::net`. OUTPUT_DIR defaults to
# ${CMAKE_CURRENT_BINARY_DIR}/partita_onnx; a relative MODEL is read from the current source
# directory, and MODEL may be the output of another custom command of this directory.
# INPUT_SHAPES fixes dynamic input dimensions (--input-shape); EMBED_WEIGHTS compiles the weights
# into the program (`ns::weights()`), WEIGHT_ARRAYS writes them into the header as constexpr
# arrays (`ns::weights::tensors`, for `static_executable`: --embed-weights=arrays). docs/onnx.md
# describes the header.
#
# The importer runs under PARTITA_IMPORT_PYTHON when set, else under the first Python 3 that
# imports onnx and numpy (cmake/partita_model_python.cmake); with none, configuring fails.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/partita_model_python.cmake")

# The importer's directory: tools/ of the source tree, or where the package installed it (the
# installed partitaConfig.cmake sets PARTITA_IMPORT_ONNX_TOOL_DIR before including this file).
# Kept as a global property: functions run in their caller's scope, which may not see ours.
if(NOT DEFINED PARTITA_IMPORT_ONNX_TOOL_DIR)
  set(PARTITA_IMPORT_ONNX_TOOL_DIR "${CMAKE_CURRENT_LIST_DIR}/../tools")
endif()
get_filename_component(_partita_tool_dir "${PARTITA_IMPORT_ONNX_TOOL_DIR}" ABSOLUTE)
file(GLOB _partita_tool_package "${_partita_tool_dir}/partita_onnx/*.py")
set_property(GLOBAL PROPERTY PARTITA_IMPORT_ONNX_TOOL "${_partita_tool_dir}/partita_import.py")
set_property(GLOBAL PROPERTY PARTITA_IMPORT_ONNX_TOOL_FILES "${_partita_tool_dir}/partita_import.py" ${_partita_tool_package})
unset(_partita_tool_dir)
unset(_partita_tool_package)

set(PARTITA_IMPORT_PYTHON "" CACHE FILEPATH
    "The Python 3 that runs the ONNX importer (needs onnx and numpy); empty: the first that imports them")

# The importer's interpreter, chosen once per configure; fails configuring when there is none.
function(_partita_import_onnx_python result)
  get_property(chosen GLOBAL PROPERTY PARTITA_IMPORT_ONNX_PYTHON)
  if(chosen)
    set(${result} "${chosen}" PARENT_SCOPE)
    return()
  endif()
  if(PARTITA_IMPORT_PYTHON)
    set(chosen "${PARTITA_IMPORT_PYTHON}")
    set(tried "PARTITA_IMPORT_PYTHON=${PARTITA_IMPORT_PYTHON}")
  else()
    partita_find_model_python(MODULES numpy onnx RESULT chosen WHAT "Partita ONNX importer")
    set(tried "python3 on PATH and /usr/bin/python3")
  endif()
  set(works 1)
  if(NOT chosen STREQUAL "")
    execute_process(COMMAND "${chosen}" -c "import numpy, onnx" RESULT_VARIABLE works OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(NOT works EQUAL 0)
    message(FATAL_ERROR "partita_import_onnx: no Python 3 interpreter that imports onnx and numpy (tried ${tried}). "
                        "Install them (Debian: apt install python3-onnx python3-numpy; pip: onnx numpy), or name "
                        "an interpreter that has them with -DPARTITA_IMPORT_PYTHON=/path/to/python3.")
  endif()
  set_property(GLOBAL PROPERTY PARTITA_IMPORT_ONNX_PYTHON "${chosen}")
  set(${result} "${chosen}" PARENT_SCOPE)
endfunction()

function(partita_import_onnx)
  cmake_parse_arguments(PARSE_ARGV 0 arg "EMBED_WEIGHTS;WEIGHT_ARRAYS" "TARGET;MODEL;NAMESPACE;OUTPUT_DIR" "INPUT_SHAPES")
  if(arg_EMBED_WEIGHTS AND arg_WEIGHT_ARRAYS)
    message(FATAL_ERROR "partita_import_onnx: EMBED_WEIGHTS or WEIGHT_ARRAYS, not both")
  endif()
  foreach(required IN ITEMS TARGET MODEL NAMESPACE)
    if(NOT arg_${required})
      message(FATAL_ERROR "partita_import_onnx: ${required} is required "
                          "(partita_import_onnx(TARGET app MODEL model.onnx NAMESPACE ns ...))")
    endif()
  endforeach()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "partita_import_onnx: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "partita_import_onnx: ${arg_TARGET} is not a target (create it before importing into it)")
  endif()
  if(NOT arg_NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "partita_import_onnx: NAMESPACE '${arg_NAMESPACE}' is not a C++ identifier")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/partita_onnx")
  endif()
  get_filename_component(model "${arg_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(out "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  _partita_import_onnx_python(python)
  get_property(tool GLOBAL PROPERTY PARTITA_IMPORT_ONNX_TOOL)
  get_property(tool_files GLOBAL PROPERTY PARTITA_IMPORT_ONNX_TOOL_FILES)
  set(options "")
  foreach(shape IN LISTS arg_INPUT_SHAPES)
    list(APPEND options --input-shape "${shape}")
  endforeach()
  if(arg_EMBED_WEIGHTS)
    list(APPEND options --embed-weights)
  elseif(arg_WEIGHT_ARRAYS)
    list(APPEND options --embed-weights=arrays)
  endif()

  set(header "${out}/${arg_NAMESPACE}.hpp")
  set(weights "${out}/${arg_NAMESPACE}.safetensors")
  add_custom_command(
    OUTPUT "${header}" "${weights}"
    COMMAND "${python}" "${tool}" "${model}" --out "${out}" --namespace "${arg_NAMESPACE}" ${options}
    DEPENDS "${model}" ${tool_files}
    COMMENT "Importing ${arg_MODEL} as ${arg_NAMESPACE}::net"
    VERBATIM)
  # A target of its own, so that targets of other directories can depend on the import too.
  set(generate "${arg_TARGET}_onnx_${arg_NAMESPACE}")
  add_custom_target(${generate} DEPENDS "${header}" "${weights}")
  add_dependencies(${arg_TARGET} ${generate})
  target_include_directories(${arg_TARGET} PRIVATE "${out}")
endfunction()
