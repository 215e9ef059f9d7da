#!/usr/bin/env bash
# The CPU test suite with the host C++ code (generator, its core, the CPU
# tests, the fuzzer's corpus replay) built under AddressSanitizer and
# UndefinedBehaviorSanitizer: any report fails the test that triggered it.
#   scripts/test_sanitized.sh [BUILD_DIR]   (default: build-sanitize)
# Leaves out the tests labelled `nvcc`, whose work is nvcc's or a nested CMake
# build's (the ptxas/PTX checks and the consumer-project flows): they run no
# host code of ours that the other tests do not, and take most of the time.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
build=${1:-build-sanitize}
bash scripts/install_deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCONVGEN_SANITIZE=ON -DCONVGEN_BUILD_SHIPPED=OFF
cmake --build "$build"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" --output-on-failure -j 2 -L cpu -LE nvcc
