# A benchmark's smoke test where CMake found no Python with the packages it needs: fails under
# CI=true, else skipped. cmake -DWHAT=test_name "-DNEEDS=package, package" -P no_python.cmake
if("$ENV{CI}" STREQUAL "true")
  message(FATAL_ERROR "${WHAT}: Python 3 with ${NEEDS} is required under CI=true (.ci/run installs them)")
endif()
message("${WHAT}: skipped: no Python 3 with ${NEEDS} (run .ci/run, which makes .venv with them)")
