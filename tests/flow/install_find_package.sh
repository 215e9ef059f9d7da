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
ctest_bin="$(dirname "$cmake")/ctest"
logged "$scratch/ctest.log" "$ctest_bin" --test-dir "$build" --output-on-failure
grep -q "100% tests passed" "$scratch/ctest.log" || fail "ctest in the consumer's build did not pass: $(cat "$scratch/ctest.log")"

# ---- 4. a project that lists its inputs in variables, asks for C++14, and
# installs its generated library for another project to link
lib_app=$scratch/layers
mkdir -p "$lib_app"
printf 'library: layers\nworkloads:\n  - {op: depthwise_conv2d, n: 1, c: 32, h: 16, w: 16, filter: 3, padding: same}\n' \
  >"$lib_app/a.yaml"
printf 'library: layers\nworkloads:\n  - {op: depthwise_conv2d, n: 1, c: 64, h: 8, w: 8, filter: 3, padding: same}\n' \
  >"$lib_app/b.yaml"
cat >"$lib_app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(layers LANGUAGES CXX CUDA)
set(CMAKE_CXX_STANDARD 14)  # less than convgen's 17: the generated target asks for 17 itself
find_package(convgen 0.2 CONFIG REQUIRED)
set(specs a.yaml b.yaml)
set(archs 90-real 90-virtual)
convgen_add_library(layers SPECS "${specs}" ARCHS "${archs}")  # quoted lists, as CUDA_ARCHITECTURES are written
install(TARGETS layers EXPORT layersTargets ARCHIVE DESTINATION lib)
install(FILES "$<TARGET_PROPERTY:layers,CONVGEN_HEADER>" DESTINATION include)
install(EXPORT layersTargets NAMESPACE layers:: DESTINATION lib/cmake/layers)
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/layersConfig.cmake"
     "include(CMakeFindDependencyMacro)\nfind_dependency(convgen)\ninclude(\"\${CMAKE_CURRENT_LIST_DIR}/layersTargets.cmake\")\n")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/layersConfig.cmake" DESTINATION lib/cmake/layers)
CMAKE
logged "$scratch/layers_configure.log" "$cmake" -S "$lib_app" -B "$scratch/layers_build" "${gen_args[@]}" \
  "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix"
logged "$scratch/layers_build.log" "$cmake" --build "$scratch/layers_build"
n=$(grep -c '  dw_.*\.cu$' "$scratch/layers_build/layers.convgen/layers.manifest" || true)
[[ "$n" -eq 2 ]] || fail "SPECS \"\${specs}\" gave $n kernels, not the two specs' 2"
logged "$scratch/layers_install.log" "$cmake" --install "$scratch/layers_build" --prefix "$scratch/layers_prefix"
[[ -f "$scratch/layers_prefix/include/layers.h" ]] || fail "the generated header was not installed from CONVGEN_HEADER"
down=$scratch/downstream
mkdir -p "$down"
cat >"$down/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(downstream LANGUAGES CXX CUDA)
find_package(layers CONFIG REQUIRED)
add_executable(downstream main.cpp)
target_link_libraries(downstream PRIVATE layers::layers)
CMAKE
printf '#include "layers.h"\nint main() { return convgen::layers::depthwise_kernels().size() == 2 ? 0 : 1; }\n' >"$down/main.cpp"
logged "$scratch/down_configure.log" "$cmake" -S "$down" -B "$scratch/down_build" "${gen_args[@]}" \
  "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_CUDA_ARCHITECTURES=90 \
  "-DCMAKE_PREFIX_PATH=$scratch/layers_prefix;$prefix"
logged "$scratch/down_build.log" "$cmake" --build "$scratch/down_build"
echo "an installed generated library (quoted SPECS and ARCHS lists, C++14 project) linked by another project"

# ---- 5. mistakes a project makes are named at configure time
bad=$scratch/bad
mkdir -p "$bad"
cp "$lib_app/a.yaml" "$bad/"
expect_configure_error() {  # expect_configure_error LANGUAGES ARCHS TEXT
  printf 'cmake_minimum_required(VERSION 3.22)\nproject(bad LANGUAGES %s)\nfind_package(convgen 0.2 CONFIG REQUIRED)\nconvgen_add_library(bad SPECS a.yaml ARCHS %s)\n' \
    "$1" "$2" >"$bad/CMakeLists.txt"
  rm -rf "$scratch/bad_build"
  if "$cmake" -S "$bad" -B "$scratch/bad_build" "${gen_args[@]}" "-DCMAKE_CUDA_COMPILER=$cuda" \
       "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$prefix" >"$scratch/bad.log" 2>&1; then
    fail "a project with LANGUAGES $1 and ARCHS $2 configured"
  fi
  tr -s ' \n' ' ' <"$scratch/bad.log" | grep -qF "$3" || { cat "$scratch/bad.log"; fail "no '$3' in the configure's error"; }
}
expect_configure_error "CXX" "90" "enable the CUDA language first"
expect_configure_error "CXX CUDA" '"75,90"' "is a CMake list, as CUDA_ARCHITECTURES is"
expect_configure_error "CXX CUDA" 99 "does not compile for sm_99"
echo "a project without CUDA, ARCHS with commas, an arch nvcc does not compile: named at configure time"
echo
echo "PASS: cmake_install_find_package in $((SECONDS - t_start))s"
