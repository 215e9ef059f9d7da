#!/usr/bin/env bash
# tune_tensor_core.sh CONVGEN [CUTLASS_INCLUDE]
#
# `convgen tune` on the tensor-core algorithms (implicit_gemm; on sm_90,
# implicit_gemm_sm90 too), whose candidates nvcc builds with their host
# launchers as shared objects (tests/gpu/tune_tensor_core.yaml):
#   1. one batch of candidates of each kernel, one of them made wrong on
#      purpose (--break-candidate): it is rejected, never chosen; the others
#      are verified and timed, and the database gets an entry for each kernel;
#   2. the build applies the database (`convgen list --tuning`);
#   3. without CUTLASS's headers, such a kernel is kept with a note naming
#      what is missing, and the run succeeds;
#   4. with headers that do not compile, every candidate fails alike: each
#      kernel stops after its first batch with an error naming the default's
#      failure, nothing is recorded, and the run exits 1 (not a crash).
# Exits 77 (skipped) without a GPU of sm_80 or newer, without the tuner or
# without CUTLASS's headers.
set -u
CONVGEN=$1
CUTLASS=${2:-}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SPEC=$ROOT/tests/gpu/tune_tensor_core.yaml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: no GPU"; exit 77
fi
CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d '. ')
[[ $CC -ge 80 ]] || { echo "SKIPPED: the tensor-core algorithms need sm_80 or newer (this GPU: sm_$CC)"; exit 77; }
# sm_90a on Hopper, so that the default rule gives implicit_gemm_sm90 its kernels.
ARCHS=$CC; ALGORITHM=implicit_gemm
[[ $CC -eq 90 ]] && { ARCHS=90a; ALGORITHM=implicit_gemm_sm90; }
[[ -n $CUTLASS ]] && CUTLASS_OPTION=(--cutlass-include "$CUTLASS") || CUTLASS_OPTION=()

# 1. One batch a kernel (--budget-s 1) of the default's algorithm, the
#    second candidate of each made wrong.
"$CONVGEN" tune "$SPEC" --archs "$ARCHS" "${CUTLASS_OPTION[@]}" --db "$WORK/db.yaml" --budget-s 1 \
    --algorithm "$ALGORITHM" --break-candidate 2 --report "$WORK/report.json" >"$WORK/1.log" 2>&1
RC=$?
cat "$WORK/1.log"
if grep -q "built without the CUDA toolkit" "$WORK/1.log"; then echo "SKIPPED: convgen has no tuner"; exit 77; fi
if grep -q "CUTLASS's headers were not found" "$WORK/1.log"; then echo "SKIPPED: no CUTLASS headers"; exit 77; fi
[[ $RC -eq 0 ]] || fail "tune exited $RC"
python3 - "$WORK/report.json" <<'PY' || fail "the report"
import json, sys
kernels = json.load(open(sys.argv[1]))
assert len(kernels) == 2, [k["kernel"] for k in kernels]
rejected = 0
for k in kernels:
    states = [c["state"] for c in k["candidates"]]
    nvcc = [c for c in k["candidates"] if c["schedule"].startswith("implicit_gemm")]
    timed = [c for c in nvcc if c["state"] == "timed" or c["state"].startswith("stopped early")]
    print(k["kernel"], "-", len(nvcc), "tensor-core candidates,", len(timed), "verified and timed; best:",
          k["best"]["schedule"])
    assert len(timed) >= 3, states
    assert all(c["state"] != "compile failed" for c in nvcc), [c["note"] for c in nvcc]
    rejected += states.count("rejected (wrong output)")
    for c in k["candidates"]:
        assert c["schedule"].startswith("implicit_gemm"), c["schedule"]
        if c["state"].startswith("rejected"):
            assert "outputs wrong" in c["note"] or "no block" in c["note"], c["note"]
            assert c["schedule"] != k["best"]["schedule"], "the wrong candidate won"
assert rejected == 2, f"one broken candidate a kernel, {rejected} rejected"
PY
[[ $(grep -c "kernel:" "$WORK/db.yaml") -eq 2 ]] || { cat "$WORK/db.yaml"; fail "the database should hold 2 kernels"; }

# 2. The build applies it.
"$CONVGEN" list "$SPEC" --archs "$ARCHS" --tuning "$WORK/db.yaml" >"$WORK/list.txt" || fail "list --tuning"
cat "$WORK/list.txt"
[[ $(grep -c " tuned [0-9.]*x " "$WORK/list.txt") -eq 2 ]] || fail "every kernel's origin should be 'tuned'"

# 3. Without CUTLASS's headers: kept, with the reason.
"$CONVGEN" tune "$SPEC" --archs "$ARCHS" --cutlass-include "$WORK/no-cutlass" --db "$WORK/none.yaml" \
    --budget-s 1 >"$WORK/3.log" 2>&1 || { cat "$WORK/3.log"; fail "tune without CUTLASS should succeed"; }
cat "$WORK/3.log"
[[ $(grep -c "^kept .*built with nvcc, and CUTLASS's headers were not found" "$WORK/3.log") -eq 2 ]] ||
    fail "both kernels should be kept, naming the missing headers"
# 4. Headers that do not compile (a folder that holds cutlass/cutlass.h, which
#    stops the compiler): a budget of 600 s a kernel, which the run must not
#    spend.
mkdir -p "$WORK/broken-cutlass/cutlass"
echo '#error this CUTLASS does not compile' >"$WORK/broken-cutlass/cutlass/cutlass.h"
START=$SECONDS
"$CONVGEN" tune "$SPEC" --archs "$ARCHS" --cutlass-include "$WORK/broken-cutlass" --db "$WORK/broken.yaml" \
    --budget-s 600 --algorithm "$ALGORITHM" >"$WORK/4.log" 2>&1
RC=$?
cat "$WORK/4.log"
[[ $RC -eq 1 ]] || fail "tune with headers that do not compile should exit 1, not $RC"
[[ $(grep -c "error: the default schedule did not pass" "$WORK/4.log") -eq 2 ]] ||
    fail "each kernel should stop on its default's failure"
FAILED=$(grep -c "compile failed:" "$WORK/4.log")
(( FAILED >= 2 )) || fail "the candidates' compile errors should be shown"
# One batch a kernel (16 candidates at most), not a search.
(( FAILED <= 32 )) || fail "$FAILED candidates failed to compile: each kernel should stop after its first batch"
(( SECONDS - START < 600 )) || fail "the run spent the budget on candidates that cannot compile"
[[ ! -s "$WORK/broken.yaml" ]] || ! grep -q "kernel:" "$WORK/broken.yaml" || fail "nothing should be recorded"
echo "PASS"
