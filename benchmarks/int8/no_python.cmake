# bench_int8_smoke where CMake found no Python with onnxruntime, PyTorch, torchvision,
# scikit-learn, onnx and numpy: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "bench_int8_smoke: Python 3 with onnxruntime, PyTorch, torchvision, scikit-learn, onnx and "
                      "numpy is required under CI=true (.ci/run installs them)")
endif()
message("bench_int8_smoke: skipped: no Python 3 with onnxruntime, PyTorch, torchvision, scikit-learn, onnx and numpy "
        "(run .ci/run, which makes .venv with them)")
