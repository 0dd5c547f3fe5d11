# onnx_importer where CMake found no Python interpreter: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "onnx_importer: Python 3 with onnx and numpy is required under CI=true (Debian packages python3-onnx and python3-numpy)")
endif()
message("onnx_importer: skipped: no Python 3 interpreter (install python3-onnx and python3-numpy)")
