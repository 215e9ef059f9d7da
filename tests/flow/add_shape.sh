#!/usr/bin/env bash
# cmake_flow_add_shape: the "add a shape and rebuild" promise, end to end.
#
#   add_shape.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR CMAKE NINJA CUDA_COMPILER CXX_COMPILER
#
# Installs BUILD_DIR (a convgen build) to SCRATCH_DIR/prefix, copies
# examples/consumer to SCRATCH_DIR and configures it against that install
# (find_package, as a user with an installed convgen does; the
# add_subdirectory way is cmake_flow_tuning's), builds it and runs it.
# Then it adds a workload to the spec, above the others, builds again, prints what Ninja
# rebuilt and checks that
#   - the generator ran again,
#   - it wrote exactly the new kernel's .cu and the registry: the header,
#     which names no kernel, keeps its mtime,
#   - the new kernel and the registry compiled, and no other kernel did,
#   - the consumer's own main.cpp (which includes the header) did not,
# and that a third build does nothing. SCRATCH_DIR is removed at the end
# (kept when CONVGEN_KEEP_SCRATCH=1). Exit 77: skipped (no Ninja).
set -u
export LC_ALL=C
if [[ $# -lt 7 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
src=$1 main_build=$2 scratch=$3 cmake=$4 ninja=$5 cuda=$6 cxx=$7

if [[ -z "$ninja" || ! -x "$ninja" ]]; then
  echo "SKIP: this test reads Ninja's output and needs ninja (got '$ninja')"
  exit 77
fi

source "$(dirname "$0")/lib.sh"
# "name mtime" for each file of a folder, sorted.
snapshot() {  # snapshot DIR PATTERN
  find "$1" -maxdepth 1 -type f -name "$2" -printf '%P %T@\n' | sort
}
# Names in snapshot B that are new or whose mtime differs from snapshot A.
changed() {  # changed A B
  join -a 2 -e MISSING -o 1.2,2.1,2.2 "$1" "$2" | awk '$1 != $3 { print $2 }'
}

rm -rf "$scratch"
mkdir -p "$scratch"
trap cleanup EXIT
prefix=$scratch/prefix
cp -r "$src/examples/consumer" "$scratch/consumer"
app=$scratch/consumer
build=$scratch/build
gen=$build/my_layers.convgen
objs=$build/CMakeFiles/my_layers.dir/my_layers.convgen
main_obj=$build/CMakeFiles/consumer.dir/main.cpp.o
t_start=$SECONDS

# ---- 1. install convgen; configure, build and run the consumer
logged "$scratch/install.log" "$cmake" --install "$main_build" --prefix "$prefix"
t0=$SECONDS
logged "$scratch/configure.log" "$cmake" -S "$app" -B "$build" -G Ninja "-DCMAKE_MAKE_PROGRAM=$ninja" \
  "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_PREFIX_PATH=$prefix"
t_configure=$((SECONDS - t0))
t0=$SECONDS
logged "$scratch/build1.log" "$cmake" --build "$build"
t_build1=$((SECONDS - t0))
logged "$scratch/run.log" "$build/consumer"
grep -q "kernel: .*(specialized)" "$scratch/run.log" || fail "the consumer found no specialized kernel:
$(cat "$scratch/run.log")"
grep -q "kernel: .*(generic)" "$scratch/run.log" || fail "the consumer's off-spec problem did not go to the generic kernel:
$(cat "$scratch/run.log")"
echo "first build: configure ${t_configure}s, build ${t_build1}s; the consumer ran:"
sed 's/^/  | /' "$scratch/run.log"

snapshot "$gen" '*' >"$scratch/gen.before"
snapshot "$objs" '*.o' >"$scratch/obj.before"
[[ -f "$main_obj" ]] || fail "no object of the consumer's main.cpp at $main_obj"
main_before=$(find "$main_obj" -printf '%T@')
n_kernels=$(grep -c '^dw_.*\.cu ' "$scratch/gen.before")
[[ $n_kernels -ge 2 ]] || fail "expected the spec's kernels in $gen, found $n_kernels"

# ---- 2. add a workload and rebuild
# Coarse file systems: make sure the spec's new mtime is later than the build's.
sleep 1
# First in the list, above the others: their kernels' sources name the spec,
# not their lines in it, so they stay as they were.
new_workload='  - {c: 96, h: 14, w: 14, stride: 1}   # added by cmake_flow_add_shape'
sed -i "/^workloads:/a\\$new_workload" "$app/my_layers.yaml"
grep -qxF "$new_workload" "$app/my_layers.yaml" || fail "could not add the workload to my_layers.yaml"
echo
echo "added first to my_layers.yaml's workloads: $new_workload"
t0=$SECONDS
# -d explain: Ninja says why each step runs (kept in build2.log).
logged "$scratch/build2.log" "$cmake" --build "$build" -- -d explain
t_build2=$((SECONDS - t0))
snapshot "$gen" '*' >"$scratch/gen.after"
snapshot "$objs" '*.o' >"$scratch/obj.after"
main_after=$(find "$main_obj" -printf '%T@')

grep -q "convgen: generating my_layers" "$scratch/build2.log" ||
  fail "the generator did not run after the spec changed (no 'convgen: generating my_layers' in the build output)"
new_files=$(join -v 2 "$scratch/gen.before" "$scratch/gen.after" | awk '{print $1}')
written=$(changed "$scratch/gen.before" "$scratch/gen.after" | sort)
recompiled=$(changed "$scratch/obj.before" "$scratch/obj.after" | sort)
gone=$(join -v 1 "$scratch/gen.before" "$scratch/gen.after" | awk '{print $1}')

echo "second build (${t_build2}s):"
echo "  generator ran:    $(grep -m1 -o 'convgen: library my_layers: .*' "$scratch/build2.log" || echo '(no summary line)')"
echo "  files written:    $(echo $written)   (new, or mtime changed)"
echo "  my_layers objects compiled: $(echo $recompiled)"
echo "  what ninja rebuilt, step by step:"
grep -E '^\[[0-9]+/[0-9]+\]' "$scratch/build2.log" | sed -e "s|$scratch/||g" -e 's/^/    /'
echo "  why the generator ran (ninja -d explain):"
grep -E '^ninja explain: .*older than most recent input' "$scratch/build2.log" | sed -e "s|$scratch/||g" \
  -e 's/ ([0-9]* vs [0-9]*)$//' -e 's/^/    /'

[[ -z "$gone" ]] || fail "files disappeared from $gen: $gone"
[[ $(echo "$new_files" | grep -c .) -eq 1 && "$new_files" == dw_*.cu ]] ||
  fail "expected exactly one new kernel .cu in $gen, got: '$(echo $new_files)'"
new_kernel=${new_files%.cu}
# The manifest lists every file's hash, so it changes with the new kernel.
expected=$(printf '%s\n' "$new_kernel.cu" my_layers.manifest my_layers_registry.cu | sort)
[[ "$written" == "$expected" ]] ||
  fail "the build should have written exactly: $(echo $expected) (the header names no kernel: untouched)
  new or rewritten: $(echo $written)"
[[ "$main_after" == "$main_before" ]] || fail "the consumer's main.cpp was recompiled ($main_obj changed)"
echo "$recompiled" | grep -qx "$new_kernel.cu.o" || fail "the new kernel $new_kernel.cu was not compiled"
echo "$recompiled" | grep -qx "my_layers_registry.cu.o" || fail "the registry was not recompiled"
old_recompiled=$(echo "$recompiled" | grep '^dw_' | grep -vx "$new_kernel.cu.o")
[[ -z "$old_recompiled" ]] || fail "untouched kernels were recompiled: $(echo $old_recompiled)"
n_other=$(grep -c '^dw_.*\.o ' "$scratch/obj.before")
echo "  ok: 1 new kernel and the registry compiled; the header, main.cpp.o and the $n_other other kernel object(s) untouched"

# ---- 3. nothing to do
t0=$SECONDS
logged "$scratch/build3.log" "$cmake" --build "$build" -- -d explain
t_build3=$((SECONDS - t0))
snapshot "$gen" '*' >"$scratch/gen.third"
snapshot "$objs" '*.o' >"$scratch/obj.third"
if ! grep -q "ninja: no work to do" "$scratch/build3.log"; then
  echo "---- third build:"
  cat "$scratch/build3.log"
  fail "a third build with nothing changed still did work"
fi
[[ -z "$(changed "$scratch/gen.after" "$scratch/gen.third")$(changed "$scratch/obj.after" "$scratch/obj.third")" ]] ||
  fail "a third build with nothing changed touched files"
echo "third build (${t_build3}s): ninja: no work to do"
echo
echo "PASS: cmake_flow_add_shape in $((SECONDS - t_start))s"
