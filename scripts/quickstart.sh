#!/usr/bin/env bash
# Sets up and runs the main job: installs what is missing, builds the
# generator, generates and compiles the shipped specs into static libraries,
# and prints the kernel table.
#   scripts/quickstart.sh [BUILD_DIR]   (default: build)
# CUDA_ARCHS="75;90" builds for those GPUs (default: 90).
set -euo pipefail
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "scripts/quickstart.sh: unknown option '$1' (--help says what it takes)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
build=${1:-build}
bash scripts/install_deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}"
cmake --build "$build" --target convgen_seeds convgen_mobilenet_v2 kernel_table
echo
echo "libraries: $build/libconvgen_seeds.a $build/libconvgen_mobilenet_v2.a"
echo "headers:   $build/convgen_seeds.convgen/seeds.h $build/convgen_mobilenet_v2.convgen/mobilenet_v2.h"
