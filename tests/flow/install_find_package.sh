#!/usr/bin/env bash
# cmake_install_find_package: install a convgen build and use it from a
# separate project through find_package(convgen).
#
#   install_find_package.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR CMAKE NINJA CUDA_COMPILER CXX_COMPILER
#
# Installs BUILD_DIR to SCRATCH_DIR/prefix, checks the installed files, then
# configures examples/consumer with CMAKE_PREFIX_PATH=SCRATCH_DIR/prefix,
# builds it and runs it (exit 0 without a GPU). SCRATCH_DIR is removed at
# the end (kept when CONVGEN_KEEP_SCRATCH=1).
set -u
export LC_ALL=C
if [[ $# -lt 7 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
src=$1 main_build=$2 scratch=$3 cmake=$4 ninja=$5 cuda=$6 cxx=$7

source "$(dirname "$0")/lib.sh"

rm -rf "$scratch"
mkdir -p "$scratch"
trap cleanup EXIT
prefix=$scratch/prefix
t_start=$SECONDS

# ---- 1. install
t0=$SECONDS
logged "$scratch/install.log" "$cmake" --install "$main_build" --prefix "$prefix"
echo "installed to $prefix in $((SECONDS - t0))s:"
(cd "$prefix" && find . -type f | sort | sed 's|^\./|  |')
config=$(find "$prefix" -path '*/cmake/convgen/convgenConfig.cmake' | head -n 1)
[[ -n "$config" ]] || fail "no convgenConfig.cmake under $prefix"
cmakedir=$(dirname "$config")
for f in bin/convgen include/convgen/convgen.h share/convgen/templates/depthwise_nchw.cu.mustache \
         share/convgen/templates/registry.cu.mustache share/convgen/templates/library.h.mustache; do
  [[ -f "$prefix/$f" ]] || fail "not installed: $f"
done
[[ -x "$prefix/bin/convgen" ]] || fail "bin/convgen is not executable"
ls "$prefix"/lib*/libconvgen_runtime.a >/dev/null 2>&1 || fail "not installed: lib/libconvgen_runtime.a"
for f in convgenConfig.cmake convgenConfigVersion.cmake convgenTargets.cmake Convgen.cmake; do
  [[ -f "$cmakedir/$f" ]] || fail "not installed: ${cmakedir#"$prefix"/}/$f"
done
"$prefix/bin/convgen" --version >/dev/null || fail "the installed convgen does not run"

# ---- 2. a separate project finds it
app=$scratch/consumer
build=$scratch/build
cp -r "$src/examples/consumer" "$app"
gen_args=()  # Ninja when there is one, else CMake's default generator
[[ -n "$ninja" && -x "$ninja" ]] && gen_args=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$ninja")
t0=$SECONDS
# Only the prefix: the consumer must not see the source or build tree.
logged "$scratch/configure.log" "$cmake" -S "$app" -B "$build" "${gen_args[@]}" \
  "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_PREFIX_PATH=$prefix"
t_configure=$((SECONDS - t0))
found=$(sed -n 's/^convgen_DIR:PATH=//p' "$build/CMakeCache.txt")
[[ "$found" -ef "$cmakedir" ]] || fail "find_package(convgen) found '$found', not the installed $cmakedir"
grep -q "^CONVGEN_SOURCE_DIR:PATH=$" "$build/CMakeCache.txt" || fail "the consumer was not configured the find_package way"
t0=$SECONDS
logged "$scratch/build.log" "$cmake" --build "$build" --verbose
t_build=$((SECONDS - t0))
# The build ran the installed generator, with the installed templates.
line=$(grep -F "$prefix/bin/convgen generate " "$scratch/build.log" | head -n 1)
[[ "$line" == *"--templates $prefix/share/convgen/templates "* ]] || {
  grep -n "generate" "$scratch/build.log" | head -n 5
  fail "the build did not run the installed generator with the installed templates"
}
echo "consumer: found convgen in ${found#"$scratch"/}; configured in ${t_configure}s, built in ${t_build}s"

# ---- 3. run it
logged "$scratch/run.log" "$build/consumer"
sed 's/^/  | /' "$scratch/run.log"
grep -q "kernel: .*(specialized)" "$scratch/run.log" || fail "the consumer found no specialized kernel"
grep -q "kernel: .*(generic)" "$scratch/run.log" || fail "the off-spec problem did not go to the generic kernel"
echo
echo "PASS: cmake_install_find_package in $((SECONDS - t_start))s"
