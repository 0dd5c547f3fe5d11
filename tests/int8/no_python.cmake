# int8_models where CMake found no Python interpreter: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "int8_models: Python 3 with onnxruntime, PyTorch, torchvision, scikit-learn, onnx and numpy "
                      "is required under CI=true (.ci/run installs them)")
endif()
message("int8_models: skipped: no Python 3 interpreter (run .ci/run, which makes .venv with onnxruntime)")
