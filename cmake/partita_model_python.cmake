# The Python interpreter of the model tests, which compare Partita with PyTorch (and later run the
# ONNX importer). A machine can have several interpreters on PATH, and the one found first (say a
# pyenv build) often lacks the packages Debian installs for /usr/bin/python3 (python3-torch,
# python3-numpy). So PARTITA_MODEL_PYTHON is the first candidate that imports every module in
# PARTITA_MODEL_PYTHON_MODULES, else the first candidate that runs at all, in which case the tests
# report the missing package (a skip, or a failure under CI=true).
# Candidates, in order: PARTITA_MODEL_PYTHON when set, Python3_EXECUTABLE when set, every python3
# on PATH, /usr/bin/python3.
#
#   partita_find_model_python()                          PyTorch's tests: PARTITA_MODEL_PYTHON_MODULES,
#                                                        into PARTITA_MODEL_PYTHON_FOUND_EXECUTABLE
#   partita_find_model_python(MODULES numpy onnx RESULT var)   other tests: their modules, their variable
#   ... WHAT "Partita ONNX importer"                      who is looking, in the status message
include_guard(GLOBAL)

set(PARTITA_MODEL_PYTHON_MODULES "numpy;torch" CACHE STRING
    "Python modules the model tests need; the interpreter chosen is the first that imports them")

function(partita_find_model_python)
  cmake_parse_arguments(arg "" "RESULT;WHAT" "MODULES" ${ARGN})
  if(NOT arg_MODULES)
    set(arg_MODULES ${PARTITA_MODEL_PYTHON_MODULES})
  endif()
  if(NOT arg_RESULT)
    set(arg_RESULT PARTITA_MODEL_PYTHON_FOUND_EXECUTABLE)
  endif()
  if(NOT arg_WHAT)
    set(arg_WHAT "Partita model tests")
  endif()
  if(DEFINED PARTITA_MODEL_PYTHON AND NOT PARTITA_MODEL_PYTHON STREQUAL "")
    set(candidates "${PARTITA_MODEL_PYTHON}")
  else()
    set(candidates "")
    if(DEFINED Python3_EXECUTABLE AND NOT Python3_EXECUTABLE STREQUAL "")
      list(APPEND candidates "${Python3_EXECUTABLE}")
    endif()
    # Every python3 on PATH, not just the first: find_program stops at one.
    string(REPLACE ":" ";" path_dirs "$ENV{PATH}")
    foreach(dir IN LISTS path_dirs)
      if(NOT dir STREQUAL "" AND EXISTS "${dir}/python3" AND NOT IS_DIRECTORY "${dir}/python3")
        list(APPEND candidates "${dir}/python3")
      endif()
    endforeach()
    if(EXISTS /usr/bin/python3)
      list(APPEND candidates /usr/bin/python3)
    endif()
    list(REMOVE_DUPLICATES candidates)
  endif()

  list(JOIN arg_MODULES ", " imports)
  set(runs "")
  set(chosen "")
  foreach(candidate IN LISTS candidates)
    execute_process(COMMAND "${candidate}" -c "import ${imports}"
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
    if(rc EQUAL 0)
      set(chosen "${candidate}")
      break()
    endif()
    execute_process(COMMAND "${candidate}" -c "pass" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 30)
    if(rc EQUAL 0 AND runs STREQUAL "")
      set(runs "${candidate}")
    endif()
  endforeach()

  if(NOT chosen STREQUAL "")
    message(STATUS "${arg_WHAT}: ${chosen} (imports ${imports})")
  elseif(NOT runs STREQUAL "")
    set(chosen "${runs}")
    message(STATUS "${arg_WHAT}: ${chosen}, which cannot import ${imports}: those tests will "
                   "skip, or fail under CI=true (tried: ${candidates})")
  else()
    message(STATUS "${arg_WHAT}: no Python 3 interpreter found")
  endif()
  set(${arg_RESULT} "${chosen}" PARENT_SCOPE)
endfunction()
