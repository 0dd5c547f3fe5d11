# An ONNX model test where CMake found no Python interpreter: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "${TEST}: Python 3 with PyTorch, torchvision, onnx and numpy is required under CI=true "
                      "(Debian packages python3-torch python3-torchvision python3-onnx python3-numpy)")
endif()
message("${TEST}: skipped: no Python 3 interpreter (install python3-torch, python3-torchvision, python3-onnx and python3-numpy)")
