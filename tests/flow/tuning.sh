#!/usr/bin/env bash
# cmake_flow_tuning: convgen_add_library(... TUNING db.yaml TUNING_GPU gpu),
# and the "retune one kernel, recompile one kernel" promise, end to end.
#
#   tuning.sh SOURCE_DIR SCRATCH_DIR CMAKE NINJA CUDA_COMPILER CXX_COMPILER CONVGEN
#
# Checks that TUNING_GPU, ALLOW_UNTUNED or ALLOW_UNVERIFIED_TUNING without
# TUNING stops the configure. Then copies tests/flow/tuning_consumer to
# SCRATCH_DIR (three kernels; a database that tunes two of them on the H100
# and one on an A100), makes the database's fingerprints current (read from
# the generator's stale notes; `convgen vouch` re-signs the edited entries),
# configures it against SOURCE_DIR (add_subdirectory; CONVGEN, an already
# built generator, answers the configure-time queries and generates at build
# time) and
# compiles the library: no GPU needed. It checks the tuned schedules in
# `convgen list` and in the kernels' headers. Then it edits the database: a
# new schedule for one H100 kernel, and one for the A100 entry (which
# TUNING_GPU leaves out), vouched for; builds again and checks that
#   - CMake re-configured and the generator ran again,
#   - it rewrote that kernel's .cu and no other kernel's,
#   - that kernel compiled and no other kernel did,
# and that a third build does nothing. Last, it names a GPU the database
# holds no entry for: the configure stops, naming the GPUs it holds; with
# ALLOW_UNTUNED it goes on (a note) and every kernel gets the default rule's
# schedule. SCRATCH_DIR is removed at the end
# (kept when CONVGEN_KEEP_SCRATCH=1). Exit 77: skipped (no Ninja).
set -u
export LC_ALL=C
if [[ $# -lt 7 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
src=$1 scratch=$2 cmake=$3 ninja=$4 cuda=$5 cxx=$6 convgen=$7

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
# Replaces the one line of FILE that is exactly OLD (after indentation) by NEW.
replace_line() {  # replace_line FILE OLD NEW
  local n
  n=$(grep -cxF "    $2" "$1")
  [[ $n -eq 1 ]] || fail "expected one line '$2' in $1, found $n"
  awk -v old="    $2" -v new="    $3" '$0 == old { $0 = new } { print }' "$1" >"$1.new" && mv "$1.new" "$1"
}
# The row of kernel K in a `convgen list` table.
list_row() {  # list_row TABLE K
  awk -v k="$2" '$1 == k' "$1"
}

rm -rf "$scratch"
mkdir -p "$scratch"
trap cleanup EXIT
[[ -x "$convgen" ]] || fail "no generator at '$convgen'"
cp -r "$src/tests/flow/tuning_consumer" "$scratch/consumer"
app=$scratch/consumer
db=$app/tuning.yaml
build=$scratch/build
gen=$build/tuned_layers.convgen
objs=$build/CMakeFiles/tuned_layers.dir/tuned_layers.convgen
h100="NVIDIA H100 80GB HBM3"
tuned_a=dw_f32_nchw_n1_c8_h8_w8_k3x3_s1_p1_m1    # tuned; its A100 entry changes
retuned=dw_f32_nchw_n1_c16_h8_w8_k3x3_s1_p1_m1   # tuned; its H100 entry changes
untuned=dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1  # no entry: the default rule
list_args=("$app/tuned_layers.yaml" --templates "$src/templates" --tuning "$db" --tuning-gpu "$h100")
t_start=$SECONDS

# ---- 0. TUNING_GPU, ALLOW_UNTUNED or ALLOW_UNVERIFIED_TUNING without TUNING
# is an error (script mode: nothing to compile)
needs_tuning() {  # needs_tuning ARGS...: convgen_add_library(no_db SPECS ... ARGS) must fail, saying why
  printf '%s\n' "set(CONVGEN_EXECUTABLE convgen)" "set(CONVGEN_QUERY_EXECUTABLE convgen)" \
    "set(CONVGEN_TEMPLATE_DIR \"$src/templates\")" "include(\"$src/cmake/Convgen.cmake\")" \
    "convgen_add_library(no_db SPECS \"$app/tuned_layers.yaml\" $*)" >"$scratch/no_db.cmake"
  if "$cmake" -P "$scratch/no_db.cmake" >"$scratch/no_db.log" 2>&1; then
    fail "convgen_add_library accepted $1 without TUNING"
  fi
  # CMake wraps the message: join its lines.
  local message
  message=$(tr -s ' \n' '  ' <"$scratch/no_db.log" | grep -o 'convgen_add_library(no_db): [^<]*<db.yaml>')
  [[ "$message" == *"$1 "*"give the database with TUNING <db.yaml>" ]] ||
    fail "$1 without TUNING failed without saying why:
$(cat "$scratch/no_db.log")"
  echo "$1 without TUNING: $message"
}
needs_tuning TUNING_GPU "\"$h100\""
needs_tuning ALLOW_UNTUNED
needs_tuning ALLOW_UNVERIFIED_TUNING

# ---- 1. make the database current: its placeholder fingerprints are stale,
# and the generator's notes say which fingerprint its rows template has.
"$convgen" list "${list_args[@]}" >/dev/null 2>"$scratch/stale.log" ||
  fail "convgen list failed on the database:
$(cat "$scratch/stale.log")"
fingerprint=$(sed -n 's/.* give \([0-9a-f]\{16\}\) (stale: tune it again)$/\1/p' "$scratch/stale.log" | sort -u)
[[ $(echo "$fingerprint" | grep -c .) -eq 1 ]] ||
  fail "expected one current fingerprint in the stale notes, got '$(echo $fingerprint)':
$(cat "$scratch/stale.log")"
sed -i "s/fingerprint: \"0000000000000000\"$/fingerprint: \"$fingerprint\"/" "$db"
# The edit breaks the entries' checksums: the test vouches for them.
"$convgen" vouch "$db" >"$scratch/vouch1.log" 2>&1 || fail "convgen vouch failed: $(cat "$scratch/vouch1.log")"
"$convgen" list "${list_args[@]}" >"$scratch/list1.txt" 2>"$scratch/list1.err" || fail "convgen list failed"
[[ ! -s "$scratch/list1.err" ]] || fail "the database is not current after the rewrite:
$(cat "$scratch/list1.err")"
echo "database made current: fingerprint $fingerprint"

# ---- 2. configure and build the library (compile only: no GPU needed)
# The runtime for sm_90 only: its default list (five GPUs) is not what this
# test is about, and would double the first build's time.
t0=$SECONDS
logged "$scratch/configure.log" "$cmake" -S "$app" -B "$build" -G Ninja "-DCMAKE_MAKE_PROGRAM=$ninja" \
  "-DCMAKE_CUDA_COMPILER=$cuda" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCONVGEN_RUNTIME_ARCHS=90 "-DCONVGEN_SOURCE_DIR=$src" "-DCONVGEN_HOST_EXECUTABLE=$convgen"
t_configure=$((SECONDS - t0))
# Under add_subdirectory, convgen's own tests and shipped libraries default
# OFF, with nothing set by the consumer.
for option in CONVGEN_BUILD_TESTS CONVGEN_BUILD_SHIPPED; do
  grep -qx "$option:BOOL=OFF" "$build/CMakeCache.txt" ||
    fail "add_subdirectory(convgen) left $option on: $(grep "^$option:" "$build/CMakeCache.txt")"
done
t0=$SECONDS
logged "$scratch/build1.log" "$cmake" --build "$build" --target tuned_layers
t_build1=$((SECONDS - t0))
echo "first build: configure ${t_configure}s, build ${t_build1}s"

# The schedules: tuned on the H100 (not the A100) where an entry exists.
# The table's origin cell reads "tuned 1.08x" or "default".
expect_schedule() {  # expect_schedule KERNEL tuned|default [SCHEDULE]
  local row header origin_re
  row=$(list_row "$scratch/list.txt" "$1")
  origin_re="  $2( [0-9.]+x)?  "
  [[ $row =~ $origin_re && ( -z "${3:-}" || "$row" == *"  $3 "* ) ]] ||
    fail "convgen list should show $1 as '$2' ${3:+with '$3'}:
$(cat "$scratch/list.txt")"
  header=$(grep -m1 '^// Schedule (' "$gen/$1.cu")
  if [[ $2 == tuned ]]; then
    [[ "$header" == "// Schedule (tuned on $h100: "*"): $3" ]] ||
      fail "$1.cu should say it was tuned on $h100 with '$3'; its header says: $header"
  else
    [[ "$header" == "// Schedule (the default rule): "* ]] ||
      fail "$1.cu should have the default rule's schedule; its header says: $header"
  fi
}
cp "$scratch/list1.txt" "$scratch/list.txt"
expect_schedule "$tuned_a" tuned "rows: rows_per_thread 4, vector_width 2, threads_per_block 128"
expect_schedule "$retuned" tuned "rows: rows_per_thread 1, vector_width 4, threads_per_block 64"
expect_schedule "$untuned" default
echo "  ok: $tuned_a and $retuned tuned on $h100 (list and .cu headers), $untuned the default rule"

snapshot "$gen" '*' >"$scratch/gen.before"
snapshot "$objs" '*.o' >"$scratch/obj.before"
n_kernels=$(grep -c '^dw_.*\.cu\.o ' "$scratch/obj.before")
[[ $n_kernels -eq 3 ]] || fail "expected 3 kernel objects in $objs, found $n_kernels"

# ---- 3. retune one kernel (and change the other GPU's entry) and rebuild
# Coarse file systems: make sure the database's new mtime is later than the build's.
sleep 1
new_schedule="rows: rows_per_thread 2, vector_width 2, threads_per_block 64"
replace_line "$db" "schedule: {algorithm: rows, rows_per_thread: 1, vector_width: 4, threads_per_block: 64}" \
                   "schedule: {algorithm: rows, rows_per_thread: 2, vector_width: 2, threads_per_block: 64}"
replace_line "$db" "schedule: {algorithm: rows, rows_per_thread: 1, vector_width: 1, threads_per_block: 32}" \
                   "schedule: {algorithm: rows, rows_per_thread: 2, vector_width: 1, threads_per_block: 32}"
# An entry edited by hand fails its checksum: the configure would stop
# (checked by the bad-tuning corpus); the test vouches for its edits.
"$convgen" vouch "$db" >"$scratch/vouch2.log" 2>&1 || fail "convgen vouch failed: $(cat "$scratch/vouch2.log")"
grep -q "2 of them signed on your word" "$scratch/vouch2.log" ||
  fail "convgen vouch should have signed the 2 edited entries: $(cat "$scratch/vouch2.log")"
echo
echo "edited tuning.yaml: $retuned on $h100 -> $new_schedule; $tuned_a on the A100 -> another schedule"
t0=$SECONDS
# -d explain: Ninja says why each step runs (kept in build2.log).
logged "$scratch/build2.log" "$cmake" --build "$build" --target tuned_layers -- -d explain
t_build2=$((SECONDS - t0))
snapshot "$gen" '*' >"$scratch/gen.after"
snapshot "$objs" '*.o' >"$scratch/obj.after"
written=$(changed "$scratch/gen.before" "$scratch/gen.after" | sort)
recompiled=$(changed "$scratch/obj.before" "$scratch/obj.after" | sort)

echo "second build (${t_build2}s):"
echo "  generator ran:    $(grep -m1 -o 'convgen: library tuned_layers: .*' "$scratch/build2.log" || echo '(no summary line)')"
echo "  files written:    $(echo $written)   (mtime changed)"
echo "  tuned_layers objects compiled: $(echo $recompiled)"
echo "  build steps:"
grep -E '^\[[0-9]+/[0-9]+\]' "$scratch/build2.log" | sed 's/^/    /'

grep -q "Re-running CMake" "$scratch/build2.log" ||
  fail "CMake did not re-configure after the database changed (it is in CMAKE_CONFIGURE_DEPENDS)"
grep -q "convgen: generating tuned_layers" "$scratch/build2.log" ||
  fail "the generator did not run after the database changed (no 'convgen: generating tuned_layers' in the build output)"
[[ "$(snapshot "$gen" '*' | awk '{print $1}')" == "$(awk '{print $1}' "$scratch/gen.before")" ]] ||
  fail "the generated files changed names: $(echo $(snapshot "$gen" '*' | awk '{print $1}'))"
echo "$written" | grep -qx "$retuned.cu" || fail "the retuned kernel's $retuned.cu was not rewritten"
other_written=$(echo "$written" | grep '^dw_' | grep -vx "$retuned.cu")
[[ -z "$other_written" ]] || fail "kernels whose schedule did not change were rewritten: $(echo $other_written)"
echo "$recompiled" | grep -qx "$retuned.cu.o" || fail "the retuned kernel $retuned.cu was not compiled"
other_recompiled=$(echo "$recompiled" | grep '^dw_' | grep -vx "$retuned.cu.o")
[[ -z "$other_recompiled" ]] || fail "kernels whose schedule did not change were recompiled: $(echo $other_recompiled)"
"$convgen" list "${list_args[@]}" >"$scratch/list.txt" 2>"$scratch/list2.err" || fail "convgen list failed"
[[ ! -s "$scratch/list2.err" ]] || fail "convgen list complained: $(cat "$scratch/list2.err")"
expect_schedule "$retuned" tuned "$new_schedule"
expect_schedule "$tuned_a" tuned "rows: rows_per_thread 4, vector_width 2, threads_per_block 128"
echo "  ok: only $retuned was rewritten and recompiled (the registry, which lists the schedules,"
echo "      may recompile too); the other $((n_kernels - 1)) kernel objects untouched"

# ---- 4. nothing to do
t0=$SECONDS
logged "$scratch/build3.log" "$cmake" --build "$build" --target tuned_layers -- -d explain
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

# ---- 5. a GPU the database holds no entry for
t4="Tesla T4"
echo
if "$cmake" -S "$app" -B "$build" "-DTUNED_GPU=$t4" >"$scratch/unmatched.log" 2>&1; then
  fail "the configure accepted TUNING_GPU \"$t4\", which the database holds no entry for"
fi
unmatched_message=$(tr -s ' \n' '  ' <"$scratch/unmatched.log" | grep -o "convgen_add_library(tuned_layers): .*schedules")
held="'NVIDIA A100-SXM4-80GB', 'NVIDIA H100 80GB HBM3'"
[[ "$unmatched_message" == *"--tuning-gpu '$t4' (CMake: TUNING_GPU) matches no entry"*"entries are for $held;"*"ALLOW_UNTUNED"* ]] ||
  fail "TUNING_GPU \"$t4\" failed without naming the GPUs the database holds:
$(cat "$scratch/unmatched.log")"
echo "TUNING_GPU \"$t4\" stops the configure: $unmatched_message"
logged "$scratch/untuned.log" "$cmake" -S "$app" -B "$build" -DTUNED_ALLOW_UNTUNED=ON
grep -q "note: no entry is for GPU '$t4'" "$scratch/untuned.log" ||
  fail "with ALLOW_UNTUNED the configure should note that no entry is for $t4:
$(cat "$scratch/untuned.log")"
# The build-time generator gets the flag too: run it alone.
logged "$scratch/untuned_build.log" "$ninja" -C "$build" tuned_layers.convgen/tuned_layers_registry.cu
for kernel in "$tuned_a" "$retuned" "$untuned"; do
  header=$(grep -m1 '^// Schedule (' "$gen/$kernel.cu")
  [[ "$header" == "// Schedule (the default rule): "* ]] ||
    fail "with ALLOW_UNTUNED for $t4, $kernel.cu should have the default rule's schedule; its header says: $header"
done
echo "with ALLOW_UNTUNED: a note, and the 3 kernels generated with the default rule's schedules"
echo
echo "PASS: cmake_flow_tuning in $((SECONDS - t_start))s"
