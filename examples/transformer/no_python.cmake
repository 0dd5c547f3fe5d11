# transformer_vs_torch where CMake found no Python interpreter: fails under CI=true, else skipped.
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "transformer_vs_torch: Python 3 with PyTorch is required under CI=true (Debian packages python3 and python3-torch)")
endif()
message("transformer_vs_torch: skipped: no Python 3 interpreter (install python3 and python3-torch)")
