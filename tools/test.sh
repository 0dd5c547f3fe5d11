#!/usr/bin/env bash
# Partita's single test entry point: checks the generated headers, then configures, builds and runs
# CTest once per supported compiler: GCC in build/ and Clang 19 in build-clang/; then the tests
# labelled portable cross-built for AArch64 Linux in build-aarch64/, run under qemu-aarch64 (the
# firmware for Cortex-M, label embedded, runs in GCC's build).
#   tools/test.sh            the whole suite, both compilers and AArch64 (what CI runs)
#   tools/test.sh --quick    the quick tier: GCC only, in build/, builds and runs only the tests
#                            labelled fast (IR, passes, plans, executables, the manual, the importer)
# BUILD_DIR (default: build) picks GCC's build directory, CLANG_BUILD_DIR (default: build-clang)
# Clang's, AARCH64_BUILD_DIR (default: build-aarch64) the cross build's; COMPILERS (default:
# "g++ clang++-19") which compilers run; CROSS (default: aarch64; empty: none) which cross builds
# run; MEASUREMENT_TOOLS=ON also builds the programs that only measure. Without CI=true a
# compiler or emulator that is not installed is skipped with a note; with CI=true it fails the run.
set -euo pipefail

quick=false
for arg in "$@"; do
  case "$arg" in
    --quick) quick=true ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $arg (tools/test.sh [--quick])" >&2; exit 2 ;;
  esac
done

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

# A stale single header, or a GELU table that its generator would not write, fails in seconds
# here rather than after a full build.
run python3 tools/amalgamate.py --check
run python3 tools/gelu_table.py --check

# Configures `dir` (the first argument) with the arguments after the third, adding the generator
# and ccache; builds the target named second (everything when empty); runs the tests whose labels
# match the third (all when empty).
build_and_test() {
  local dir="$1" target="$2" label="$3"
  shift 3
  local configure=(cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@")
  # The generator is fixed when a build directory is first configured; naming it again could clash.
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
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
  local build=(cmake --build "$dir" -j "$jobs") tests=(ctest --test-dir "$dir" --output-on-failure -j "$jobs" --no-tests=error)
  if [[ -n "$target" ]]; then build+=(--target "$target"); fi
  if [[ -n "$label" ]]; then tests+=(-L "$label"); fi
  run "${build[@]}"
  run "${tests[@]}"
}

# Configures, builds and tests one compiler's build directory; the third argument turns the
# measurement-only programs (PARTITA_BUILD_MEASUREMENT_TOOLS) on or off, the fourth what the
# first compiler alone checks: the tests that run no C++ compiler
# (PARTITA_COMPILER_INDEPENDENT_TESTS: the importer's fuzz smoke), the benchmarks and their
# smoke runs (PARTITA_BUILD_BENCHMARKS), and the packaging tests (PARTITA_PACKAGING_TESTS),
# whose subject is the CMake package rather than the compiler.
suite() {
  local compiler="$1" dir="$2" tools="$3" first="$4"
  local args=("-DCMAKE_CXX_COMPILER=$compiler" "-DPARTITA_BUILD_MEASUREMENT_TOOLS=$tools"
              "-DPARTITA_COMPILER_INDEPENDENT_TESTS=$first" "-DPARTITA_BUILD_BENCHMARKS=$first"
              "-DPARTITA_PACKAGING_TESTS=$first")
  if [[ "$quick" == true ]]; then
    build_and_test "$dir" partita_quick '^fast$' "${args[@]}"
  else
    build_and_test "$dir" "" "" "${args[@]}"
  fi
}

if [[ "$quick" == true ]]; then
  compiler="${QUICK_COMPILER:-g++}"
  echo "=== quick tier: $compiler ($build_dir) ==="
  suite "$compiler" "$build_dir" "${MEASUREMENT_TOOLS:-OFF}" ON
  exit 0
fi

# The measurement-only programs (profile_steps, bench_runtime_openmp, example_tune on ResNet-18)
# are left out unless MEASUREMENT_TOOLS=ON, which builds them with the first compiler that runs:
# their code paths are compiled by tests with every compiler (bench_runtime, test_cpu_openmp,
# example_tune_mlp), and they took 430 s of GCC's time, a seventh of its build on 2 cores.
tools="${MEASUREMENT_TOOLS:-OFF}"
first=ON
for compiler in ${COMPILERS:-g++ clang++-19}; do
  case "$compiler" in
    clang*) dir="${CLANG_BUILD_DIR:-build-clang}" ;;
    *) dir="$build_dir" ;;
  esac
  if ! command -v "$compiler" >/dev/null 2>&1; then
    if [[ "${CI:-}" == "true" ]]; then
      echo "error: $compiler is not installed (CI must test every supported compiler)" >&2
      exit 1
    fi
    echo "note: $compiler is not installed; skipping its build (apt-get install clang-19 libclang-rt-19-dev)" >&2
    continue
  fi
  echo "=== $compiler ($dir) ==="
  suite "$compiler" "$dir" "$tools" "$first"
  tools=OFF
  first=OFF
done

# AArch64 Linux: the tests labelled portable (the laws of the reference and cpu backends, the
# executable and safety tests, the examples without Python), cross-built with Debian's
# aarch64-linux-gnu toolchain and run by CTest through qemu-aarch64 (docs/embedded.md).
for target in ${CROSS-aarch64}; do
  case "$target" in
    aarch64) ;;
    *) echo "error: unknown cross build $target (CROSS=aarch64)" >&2; exit 2 ;;
  esac
  missing=()
  for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if (( ${#missing[@]} > 0 )); then
    if [[ "${CI:-}" == "true" ]]; then
      echo "error: ${missing[*]} not installed (CI must run the AArch64 tests)" >&2
      exit 1
    fi
    echo "note: ${missing[*]} not installed; skipping the AArch64 tests (apt-get install g++-aarch64-linux-gnu qemu-user)" >&2
    continue
  fi
  dir="${AARCH64_BUILD_DIR:-build-aarch64}"
  echo "=== aarch64-linux-gnu-g++ under qemu-aarch64 ($dir) ==="
  build_and_test "$dir" partita_portable '^portable$' -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
                 -DPARTITA_BUILD_MEASUREMENT_TOOLS=OFF -DPARTITA_COMPILER_INDEPENDENT_TESTS=OFF \
                 -DPARTITA_BUILD_BENCHMARKS=OFF -DPARTITA_PACKAGING_TESTS=OFF
done
