#!/usr/bin/env bash
# Builds everything and runs the tests. Without a GPU the GPU tests report
# themselves skipped; on a GPU machine they run.
#   scripts/test.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bash scripts/install_deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}"
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j 2
# The same CPU tests with the host code under AddressSanitizer and
# UndefinedBehaviorSanitizer (CONVGEN_SANITIZE_TESTS=0 skips them).
if [[ "${CONVGEN_SANITIZE_TESTS:-1}" != 0 ]]; then
  bash scripts/test_sanitized.sh "${build}-sanitize"
fi
