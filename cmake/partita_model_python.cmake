# The Python interpreter of the model tests, which compare Partita with PyTorch (and later run the
# ONNX importer). A machine can have several interpreters on PATH, and the one found first (say a
# pyenv build) often lacks the packages Debian installs for /usr/bin/python3 (python3-torch,
# python3-numpy). So PARTITA_MODEL_PYTHON is the first candidate that imports every module in
# PARTITA_MODEL_PYTHON_MODULES, else the first candidate that runs at all, in which case the tests
# report the missing package (a skip, or a failure under CI=true).
# Candidates, in order: PARTITA_MODEL_PYTHON when set, Python3_EXECUTABLE when set, every python3
# on PATH, /usr/bin/python3, then PARTITA_PYTHON_VENV's python3 when it exists: the environment
# .ci/run makes for ONNX Runtime (.venv of the source tree), last so that only the tests that need
# onnxruntime pick it, and the others keep Debian's packages (its onnx is newer than Debian's).
#
#   partita_find_model_python()                          PyTorch's tests: PARTITA_MODEL_PYTHON_MODULES,
#                                                        into PARTITA_MODEL_PYTHON_FOUND_EXECUTABLE
#   partita_find_model_python(MODULES numpy onnx RESULT var)   other tests: their modules, their variable
#   ... WHAT "Partita ONNX importer"                      who is looking, in the status message
#   ... FOUND var                                         var: TRUE if the interpreter chosen has them all
include_guard(GLOBAL)

set(PARTITA_MODEL_PYTHON_MODULES "numpy;torch" CACHE STRING
    "Python modules the model tests need; the interpreter chosen is the first that imports them")

# The modules every caller asks about, looked up in one run of each interpreter per configure:
# importlib's find_spec finds a module without importing it, where importing PyTorch alone takes
# seconds. A module found but broken fails its tests when they run, with Python's own message.
set(_PARTITA_PYTHON_PROBED_MODULES numpy onnx torch torchvision onnxruntime openvino sklearn)

set(PARTITA_PYTHON_VENV "${CMAKE_CURRENT_LIST_DIR}/../.venv" CACHE PATH
    "A Python virtual environment whose python3 is the last candidate (.ci/run makes it with ONNX Runtime)")

# _partita_python_modules(<interpreter> <var>): sets <var> to the list of probed modules the
# interpreter finds, or to NOTFOUND if it does not run; remembered for the rest of the configure.
function(_partita_python_modules interpreter var)
  string(MAKE_C_IDENTIFIER "${interpreter}" key)
  get_property(known GLOBAL PROPERTY _partita_python_${key} SET)
  if(NOT known)
    set(modules ${_PARTITA_PYTHON_PROBED_MODULES} ${PARTITA_MODEL_PYTHON_MODULES})
    list(REMOVE_DUPLICATES modules)
    execute_process(COMMAND "${interpreter}" -c
                            "import importlib.util, sys; print(';'.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))"
                            ${modules}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 60)
    if(NOT rc EQUAL 0)
      set(out NOTFOUND)
    endif()
    set_property(GLOBAL PROPERTY _partita_python_${key} "${out}")
  endif()
  get_property(found GLOBAL PROPERTY _partita_python_${key})
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

function(partita_find_model_python)
  cmake_parse_arguments(arg "" "RESULT;WHAT;FOUND" "MODULES" ${ARGN})
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
    if(NOT PARTITA_PYTHON_VENV STREQUAL "" AND EXISTS "${PARTITA_PYTHON_VENV}/bin/python3")
      get_filename_component(venv_python "${PARTITA_PYTHON_VENV}/bin/python3" ABSOLUTE)
      list(APPEND candidates "${venv_python}")
    endif()
    list(REMOVE_DUPLICATES candidates)
  endif()

  list(JOIN arg_MODULES ", " imports)
  set(runs "")
  set(chosen "")
  set(all_found FALSE)
  foreach(candidate IN LISTS candidates)
    _partita_python_modules("${candidate}" found)
    if(found STREQUAL "NOTFOUND")
      continue()
    endif()
    if(runs STREQUAL "")
      set(runs "${candidate}")
    endif()
    set(has_all TRUE)
    foreach(module IN LISTS arg_MODULES)
      if(NOT module IN_LIST found)
        set(has_all FALSE)
      endif()
    endforeach()
    if(has_all)
      set(chosen "${candidate}")
      set(all_found TRUE)
      break()
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
  if(arg_FOUND)
    set(${arg_FOUND} ${all_found} PARENT_SCOPE)
  endif()
endfunction()
