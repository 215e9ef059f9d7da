#!/usr/bin/env bash
# The CPU test suite with the host C++ code (generator, its core, the CPU
# tests, the fuzzer's corpus replay) built under AddressSanitizer and
# UndefinedBehaviorSanitizer: any report fails the test that triggered it.
#   scripts/test_sanitized.sh [BUILD_DIR]   (default: build-sanitize)
# Leaves out the tests labelled `nvcc`, whose work is nvcc's or a nested CMake
# build's (the ptxas/PTX checks and the consumer-project flows): they run no
# host code of ours that the other tests do not, and take most of the time.
# Builds no CUDA code but the runtime's (the CPU tests of validate() link
# it), for one GPU only: none of the tests it runs launches a kernel. Writes
# the results to BUILD_DIR/junit.xml. CONVGEN_HOST_EXECUTABLE, a generator
# already built (e.g. build/convgen-host/convgen), saves building one at
# configure time.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
build=${1:-build-sanitize}
bash scripts/install_deps.sh
# -Og: the instrumented code optimized enough for the stress tests to run
# as fast as at -O1 (381 against 425 test-seconds on a 2-core machine),
# and quicker to build (main.cpp 27 s against 47; the stage's build 141 s
# against 206). The sanitizers check no less at a lower level (fewer
# accesses are optimized away). The tests' own code compiles at -O0
# (tests/CMakeLists.txt). -g1: the line tables the reports need, no more.
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1 -DNDEBUG" \
  -DCONVGEN_SANITIZE=ON -DCONVGEN_BUILD_SHIPPED=OFF -DCONVGEN_HOST_EXECUTABLE="${CONVGEN_HOST_EXECUTABLE:-}" \
  -DCONVGEN_RUNTIME_ARCHS="${CUDA_ARCHS:-90}"
cmake --build "$build"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" --output-on-failure -j 2 -L cpu -LE nvcc --output-junit junit.xml
