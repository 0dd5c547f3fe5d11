#!/usr/bin/env bash
# Partita's single test entry point: checks the single header, configures, builds, runs CTest.
# BUILD_DIR (default: build) picks the build directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"

# Prints a command, shell-quoted, then runs it.
run() {
  printf '+'
  printf ' %q' "$@"
  printf '\n'
  "$@"
}

# A stale single header fails in seconds here rather than after a full build.
run python3 tools/amalgamate.py --check

configure=(cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release)
# The generator is fixed when a build directory is first configured; naming it again could clash.
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  if command -v ninja >/dev/null 2>&1; then
    configure+=(-G Ninja)
  else
    configure+=(-G "Unix Makefiles")
  fi
fi
if command -v ccache >/dev/null 2>&1; then
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

run "${configure[@]}"
run cmake --build "$build_dir" -j "$jobs"
run ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --no-tests=error
