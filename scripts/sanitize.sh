#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck and initcheck over every kernel
# of the shipped specs (and of tests/gpu/tensor_core.yaml and the other test
# specs sanitize_shipped links, where the build made them), then checks their machine code, and that of
# the torchvision library where the build made it (no local memory, no loop left over filter taps).
# Exits non-zero on any error.
#   scripts/sanitize.sh BUILD_DIR OUT_DIR
# CONVGEN_SANITIZE_ONLY=TEXT runs only the kernels whose names hold TEXT under
# the sanitizers (the machine-code check still reads every kernel).
set -u
build=${1:?usage: scripts/sanitize.sh BUILD_DIR OUT_DIR}
out=${2:?usage: scripts/sanitize.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
exe="$build/tests/gpu/sanitize_shipped"
status=0
summary=()
for tool in memcheck racecheck initcheck; do
  log="$out/sanitize_$tool.log"
  echo "== compute-sanitizer --tool $tool"
  compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$exe" >"$log" 2>&1
  rc=$?
  # racecheck reports "RACECHECK SUMMARY: N hazards displayed", the others "ERROR SUMMARY: N errors".
  errors=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || echo "?")
  kernels=$(grep -c '^ok ' "$log" || true)
  tail -3 "$log"
  summary+=("$tool: $kernels kernels run, ${errors} errors or hazards, exit $rc")
  [ "$rc" -eq 0 ] || status=1
done
echo "== machine code: local memory and loops over taps"
libs=("$build"/libconvgen_seeds.a "$build"/libconvgen_mobilenet_v2.a)
# The tensor-core kernels, where the build made them (tests/gpu/CMakeLists.txt).
[ -f "$build"/tests/gpu/libconvgen_tensor_core.a ] && libs+=("$build"/tests/gpu/libconvgen_tensor_core.a)
[ -f "$build"/tests/gpu/libconvgen_sm90_float32.a ] && libs+=("$build"/tests/gpu/libconvgen_sm90_float32.a)
[ -f "$build"/tests/gpu/libconvgen_tensor_core_sm90.a ] && libs+=("$build"/tests/gpu/libconvgen_tensor_core_sm90.a)
[ -f "$build"/tests/gpu/libconvgen_winograd_nonfused.a ] && libs+=("$build"/tests/gpu/libconvgen_winograd_nonfused.a)
# The torchvision models' kernels, where the build made them (CONVGEN_BUILD_TORCH_MODELS; machine code
# only: sanitize_shipped does not run them).
[ -f "$build"/libconvgen_torchvision.a ] && libs+=("$build"/libconvgen_torchvision.a)
# The stem algorithm's kernels loop by design (scripts/check_sass.py finds
# them among each library's generated sources).
sources=()
for lib in "${libs[@]}"; do
  sources+=("$(dirname "$lib")/$(basename "$lib" .a | sed 's/^lib//').convgen")
done
python3 "$here/check_sass.py" "${libs[@]}" --sources "${sources[@]}" | tee "$out/sass_check.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
summary+=("sass: $(tail -1 "$out/sass_check.log")")
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
