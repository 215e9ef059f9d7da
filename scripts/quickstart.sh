#!/usr/bin/env bash
# Sets up and runs the main job: installs what is missing, builds the
# generator, generates and compiles the shipped specs into static libraries,
# and prints the kernel table.
#   scripts/quickstart.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bash scripts/install_deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}"
cmake --build "$build" --target convgen_seeds convgen_mobilenet_v2 kernel_table
echo
echo "libraries: $build/libconvgen_seeds.a $build/libconvgen_mobilenet_v2.a"
echo "headers:   $build/convgen_seeds.convgen/seeds.h $build/convgen_mobilenet_v2.convgen/mobilenet_v2.h"
