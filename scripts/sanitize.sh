#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck and initcheck over every kernel
# of the shipped specs (and of tests/gpu/tensor_core.yaml and the other test
# specs sanitize_shipped links, where the build made them), then checks their machine code, and that of
# the torchvision library where the build made it (no local memory, no loop left over filter taps).
# Exits non-zero on any error.
#   scripts/sanitize.sh BUILD_DIR OUT_DIR
# CONVGEN_SANITIZE_ONLY=TEXT runs only the kernels whose names hold TEXT under
# the sanitizers (the machine-code check still reads every kernel).
# CONVGEN_SANITIZE_DRAWS="NAME..." runs the random draws' tests of those names
# too (BUILD_DIR/tests/gpu/test_NAME, e.g. random_pointwise_f16), each under
# the three tools with only the draw's generated kernels instrumented: those
# whose names begin as its kernel sources' do (conv_ or dw_, from the
# generated folder BUILD_DIR/tests/gpu/convgen_NAME.convgen). A draw's tiles
# past the batch, ragged tiles and the like come in shapes the shipped specs
# lack.
set -u
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
build=${1:?usage: scripts/sanitize.sh BUILD_DIR OUT_DIR}
out=${2:?usage: scripts/sanitize.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
exe="$build/tests/gpu/sanitize_shipped"
status=0
summary=()
# sanitize LABEL TOOL LOG COMMAND...: one compute-sanitizer run of COMMAND,
# its log in LOG, a line of the summary; a failure sets status.
sanitize() {
  local label=$1 tool=$2 log=$3
  shift 3
  echo "== compute-sanitizer --tool $tool ($label)"
  compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$@" >"$log" 2>&1
  local rc=$?
  # racecheck reports "RACECHECK SUMMARY: N hazards displayed", the others "ERROR SUMMARY: N errors".
  local errors
  errors=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || echo "?")
  # sanitize_shipped prints "ok KERNEL" for each kernel it ran (a draw's test prints GoogleTest's lines).
  local kernels
  kernels=$(grep -c '^ok ' "$log")
  tail -3 "$log"
  summary+=("$label, $tool: ${errors} errors or hazards, exit $rc$([ "$kernels" -gt 0 ] && echo ", $kernels kernels run")")
  [ "$rc" -eq 0 ] || status=1
}
for tool in memcheck racecheck initcheck; do
  sanitize shipped "$tool" "$out/sanitize_$tool.log" "$exe"
done
for draw in ${CONVGEN_SANITIZE_DRAWS:-}; do
  draw_exe="$build/tests/gpu/test_$draw"
  # The prefix of the draw's kernel names: that of its first kernel source.
  first=$(ls "$build/tests/gpu/convgen_$draw.convgen" 2>/dev/null | grep -m1 -E '^(conv|dw)_')
  if [ ! -x "$draw_exe" ] || [ -z "$first" ]; then
    echo "$draw_exe and its kernels: not built (CONVGEN_BUILD_RANDOM_TESTS=ON builds the draws)" >&2
    summary+=("$draw: not built")
    status=1
    continue
  fi
  for tool in memcheck racecheck initcheck; do
    sanitize "$draw" "$tool" "$out/sanitize_${draw}_$tool.log" --kernel-name "kns=${first%%_*}_" "$draw_exe"
  done
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
