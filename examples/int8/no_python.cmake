# example_int8 where CMake found no Python with onnxruntime, PyTorch, torchvision, scikit-learn,
# onnx and numpy: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "example_int8: Python 3 with onnxruntime, PyTorch, torchvision, scikit-learn, onnx and numpy "
                      "is required under CI=true (.ci/run installs them)")
endif()
message("example_int8: skipped: no Python 3 with onnxruntime, PyTorch, torchvision, scikit-learn, onnx and numpy "
        "(run .ci/run, which makes .venv with them)")
