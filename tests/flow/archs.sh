#!/usr/bin/env bash
# cmake_flow_archs: which GPUs convgen_add_library builds for, and the
# CUTLASS it builds with, as a project sees them at configure time.
#
#   archs.sh SOURCE_DIR SCRATCH_DIR CMAKE CUDA_COMPILER CXX_COMPILER HOST_CONVGEN
#
# Configures a one-spec project (add_subdirectory of SOURCE_DIR; HOST_CONVGEN
# answers the configure-time queries) and checks that
#   - without ARCHS and CMAKE_CUDA_ARCHITECTURES, the configure log states
#     the list it took and where it came from (the machine's GPUs, or
#     convgen's default list without one), and the target carries it;
#   - with CMAKE_CUDA_ARCHITECTURES set, the library takes that;
#   - ARCHS 60 (below the oldest), ARCHS 7x (malformed) and, with CUDA 13,
#     ARCHS 70 fail the configure with a message saying what is allowed;
#   - CUTLASS headers older than CONVGEN_CUTLASS_VERSION (cmake/Convgen.cmake)
#     and a folder without cutlass/version.h fail the configure, saying which
#     CUTLASS the kernels are tested with; newer headers configure with a
#     warning; an older nvidia-cutlass Python package is not taken (a
#     warning); headers without CUTLASS's utilities in or beside them
#     configure with a warning naming them;
#   - a manifest of another library name in the target's folder (the
#     library was renamed) is removed at configure time, with a line.
# SCRATCH_DIR is removed at the end (kept when CONVGEN_KEEP_SCRATCH=1).
set -u
export LC_ALL=C
if [[ $# -lt 6 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
src=$1 scratch=$2 cmake=$3 cuda=$4 cxx=$5 host=$6
source "$(dirname "$0")/lib.sh"
rm -rf "$scratch"
mkdir -p "$scratch/app"
trap cleanup EXIT

cat >"$scratch/app/layers.yaml" <<'YAML'
library: layers
defaults: {op: depthwise_conv2d, n: 1, padding: same}
workloads:
  - {c: 32, h: 16, w: 16, filter: 3}
YAML
# The project, with convgen_add_library's extra arguments ("ARCHS ..." or none).
write_project() {  # write_project EXTRA
  cat >"$scratch/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(archs_flow LANGUAGES CXX CUDA)
add_subdirectory("$src" convgen)
convgen_add_library(layers SPECS layers.yaml $1)
get_target_property(archs layers CUDA_ARCHITECTURES)
message(STATUS "layers CUDA_ARCHITECTURES: \${archs}")
CMAKE
}
configure() {  # configure NAME [cmake args...]: the log in $scratch/NAME.log; returns cmake's status
  local name=$1
  shift
  rm -rf "$scratch/build"
  "$cmake" -S "$scratch/app" -B "$scratch/build" "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" \
    "-DCONVGEN_HOST_EXECUTABLE=$host" -DCONVGEN_BUILD_TESTS=OFF -DCONVGEN_BUILD_SHIPPED=OFF "$@" >"$scratch/$name.log" 2>&1
}
expect_in() {  # expect_in LOG TEXT: TEXT in LOG, where CMake may have wrapped it across lines
  tr -s ' \n' '  ' <"$1" | grep -qF -- "$2" || { echo "---- $1"; cat "$1"; fail "no '$2' in the configure output above"; }
}

default=$("$host" archs --default)
cuda_major=$("$cuda" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')

# 1. Nothing names the GPUs.
write_project ""
configure default || { cat "$scratch/default.log"; fail "the configure without ARCHS failed"; }
if grep -q "from the GPUs of this machine" "$scratch/default.log"; then
  expect_in "$scratch/default.log" "convgen_add_library(layers): CUDA architectures "
  echo "ok: no ARCHS, a GPU here: $(grep -o 'CUDA architectures .* (from the GPUs of this machine)' "$scratch/default.log")"
else
  expect_in "$scratch/default.log" "convgen_add_library(layers): CUDA architectures $default (from convgen's default list"
  expect_in "$scratch/default.log" "layers CUDA_ARCHITECTURES: $default"
  echo "ok: no ARCHS, no GPU: $default, stated in the configure log"
fi

# 2. The project's CMAKE_CUDA_ARCHITECTURES.
configure project -DCMAKE_CUDA_ARCHITECTURES=86 || { cat "$scratch/project.log"; fail "configure failed"; }
expect_in "$scratch/project.log" "convgen_add_library(layers): CUDA architectures 86 (from CMAKE_CUDA_ARCHITECTURES)"
expect_in "$scratch/project.log" "layers CUDA_ARCHITECTURES: 86"
echo "ok: CMAKE_CUDA_ARCHITECTURES=86 gives 86"

# 3. Lists convgen refuses.
refused() {  # refused ARCHS_VALUE TEXT
  write_project "ARCHS $1"
  if configure "refused_$1" -DCMAKE_CUDA_ARCHITECTURES=90; then
    fail "ARCHS $1 configured; it must fail"
  fi
  expect_in "$scratch/refused_$1.log" "convgen_add_library(layers): CUDA architectures \"$1\" (from ARCHS)"
  expect_in "$scratch/refused_$1.log" "$2"
  echo "ok: ARCHS $1 refused: $(grep -o "$2.*" "$scratch/refused_$1.log" | head -1)"
}
refused 60 "is below sm_70, the oldest GPU convgen builds for"
refused 7x "is not one CMake's CUDA_ARCHITECTURES accepts"
if (( cuda_major >= 13 )); then
  refused 70 "is not supported by CUDA $cuda_major"
fi
# 4. CUTLASS's headers other than those convgen is tested with (a folder
#    holding cutlass/cutlass.h and a cutlass/version.h of that version).
write_project "ARCHS 90"
fake_cutlass() {  # fake_cutlass DIR MAJOR MINOR PATCH: a CUTLASS include folder
  mkdir -p "$1/cutlass"
  touch "$1/cutlass/cutlass.h"
  printf '#pragma once\n#define CUTLASS_MAJOR %s\n#define CUTLASS_MINOR %s\n#define CUTLASS_PATCH %s\n' "$2" "$3" "$4" \
    >"$1/cutlass/version.h"
}
fake_cutlass "$scratch/cutlass_old" 3 5 1
if configure cutlass_old "-DCONVGEN_CUTLASS_INCLUDE_DIR=$scratch/cutlass_old"; then
  fail "CUTLASS 3.5.1 configured; it must fail"
fi
expect_in "$scratch/cutlass_old.log" "holds CUTLASS 3.5.1; convgen's kernels are built and tested with CUTLASS"
echo "ok: CUTLASS 3.5.1 refused"
fake_cutlass "$scratch/cutlass_new" 99 0 0
configure cutlass_new "-DCONVGEN_CUTLASS_INCLUDE_DIR=$scratch/cutlass_new" ||
  { cat "$scratch/cutlass_new.log"; fail "CUTLASS 99.0.0 failed the configure; it must warn"; }
expect_in "$scratch/cutlass_new.log" "holds CUTLASS 99.0.0, newer than the"
echo "ok: CUTLASS 99.0.0 configured with a warning"
# Without CUTLASS's utilities (packed_stride.hpp) in it or in
# ../tools/util/include beside it: a warning naming them; with them beside
# it (a source tree, the wheel), none.
expect_in "$scratch/cutlass_new.log" "CUTLASS's utilities (cutlass/util/packed_stride.hpp) are neither in"
fake_cutlass "$scratch/cutlass_tree/include" 99 0 0
mkdir -p "$scratch/cutlass_tree/tools/util/include/cutlass/util"
touch "$scratch/cutlass_tree/tools/util/include/cutlass/util/packed_stride.hpp"
configure cutlass_tree "-DCONVGEN_CUTLASS_INCLUDE_DIR=$scratch/cutlass_tree/include" ||
  { cat "$scratch/cutlass_tree.log"; fail "a CUTLASS source tree failed the configure"; }
if grep -q "CUTLASS's utilities" "$scratch/cutlass_tree.log"; then
  cat "$scratch/cutlass_tree.log"; fail "CUTLASS's utilities beside its include folder were not found"
fi
echo "ok: CUTLASS's utilities missing warned of, found beside include/"
mkdir -p "$scratch/cutlass_none/cutlass"
if configure cutlass_none "-DCONVGEN_CUTLASS_INCLUDE_DIR=$scratch/cutlass_none"; then
  fail "a folder without cutlass/version.h configured; it must fail"
fi
expect_in "$scratch/cutlass_none.log" "has no cutlass/version.h stating CUTLASS_MAJOR"
echo "ok: a folder without cutlass/version.h refused"
# An older nvidia-cutlass Python package (first on PYTHONPATH) is not taken,
# with a warning; the configure goes on without CUTLASS.
mkdir -p "$scratch/python/cutlass_library"
touch "$scratch/python/cutlass_library/__init__.py"
fake_cutlass "$scratch/python/cutlass_library/source/include" 3 5 1
PYTHONPATH="$scratch/python" configure cutlass_package ||
  { cat "$scratch/cutlass_package.log"; fail "an older CUTLASS Python package failed the configure; it must warn"; }
expect_in "$scratch/cutlass_package.log" "headers ($scratch/python/cutlass_library/source/include) are CUTLASS '3.5.1', older than"
echo "ok: an older CUTLASS Python package not taken, with a warning"

# 5. A renamed library: the target's folder holds the manifest of its old
#    name, which the configure removes (else generate would refuse to
#    replace the kernel files it lists).
write_project "ARCHS 90"
configure renamed_first || { cat "$scratch/renamed_first.log"; fail "the configure before the rename failed"; }
mkdir -p "$scratch/build/layers.convgen"
printf '%064d  dw_f32_nchw_n1_c32_h16_w16_k3x3_s1_p1_m1.cu\n' 0 >"$scratch/build/layers.convgen/old_layers.manifest"
"$cmake" "$scratch/build" >"$scratch/renamed.log" 2>&1 || { cat "$scratch/renamed.log"; fail "the reconfigure failed"; }
[[ -e "$scratch/build/layers.convgen/old_layers.manifest" ]] && fail "the old library's manifest is still there"
expect_in "$scratch/renamed.log" "convgen_add_library(layers): removing old_layers.manifest, the manifest of the library this target made before (now layers.manifest)"
echo "ok: a renamed library's old manifest is removed at configure time"
echo "PASS: cmake_flow_archs"
