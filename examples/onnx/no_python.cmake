# example_onnx_vs_torch where CMake found no Python with PyTorch, onnx and numpy: fails under
# CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "example_onnx_vs_torch: Python 3 with PyTorch, onnx and numpy is required under CI=true (Debian packages python3-torch python3-onnx python3-numpy)")
endif()
message("example_onnx_vs_torch: skipped: no Python 3 with PyTorch, onnx and numpy (install python3-torch, python3-onnx and python3-numpy)")
