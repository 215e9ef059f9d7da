#!/usr/bin/env bash
# tune_end_to_end.sh CONVGEN
#
# `convgen tune` on a GPU, end to end, on tests/gpu/tune_small.yaml (three
# small workloads: two depthwise, one dense):
#   1. one kernel tuned with a candidate made wrong on purpose
#      (--break-candidate): it must be rejected and listed, never chosen;
#   2. a run interrupted (SIGINT) once the database holds an entry: exit 130,
#      the finished kernels kept in a database that parses;
#   3. the same command again: goes on where it stopped (the finished kernels
#      kept, not tuned again) and ends with every kernel in the database;
#   4. the build applies the database: `convgen list --tuning` says "tuned"
#      for each kernel and a generated kernel's header says where its
#      schedule came from;
#   5. an entry edited by hand: check refuses it (checksum), tune drops it,
#      tunes that kernel again and keeps the others;
#   6. two tune runs at once into one database (other kernels each): both
#      runs' entries are kept.
# Exits 77 (skipped) without a GPU.
set -u
CONVGEN=$1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SPEC=$ROOT/tests/gpu/tune_small.yaml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: no GPU"; exit 77
fi

# 1. A wrong candidate is rejected.
"$CONVGEN" tune "$SPEC" --kernels dw_f32_nchw_n1_c32 --db "$WORK/broken.yaml" --budget-s 3 \
    --break-candidate 2 --report "$WORK/broken.json" >"$WORK/1.log" 2>&1
RC=$?
if grep -q "built without the CUDA toolkit" "$WORK/1.log"; then echo "SKIPPED: convgen has no tuner"; exit 77; fi
[[ $RC -eq 0 ]] || { cat "$WORK/1.log"; fail "tune with a broken candidate"; }
grep -q "rejected: " "$WORK/1.log" || { cat "$WORK/1.log"; fail "the broken candidate was not reported as rejected"; }
grep -q "rejected: 1," "$WORK/broken.yaml" || { cat "$WORK/broken.yaml"; fail "the database does not count 1 rejected candidate"; }
python3 - "$WORK/broken.json" <<'PY' || fail "the report"
import json, sys
(kernel,) = json.load(open(sys.argv[1]))
states = [c["state"] for c in kernel["candidates"]]
assert states.count("rejected (wrong output)") == 1, states
rejected = next(c for c in kernel["candidates"] if c["state"].startswith("rejected"))
assert rejected["schedule"] != kernel["best"]["schedule"], "the wrong candidate won"
assert "outputs wrong" in rejected["note"] or "no block" in rejected["note"], rejected["note"]
print("rejected:", rejected["schedule"], "-", rejected["note"])
PY

# 2. Interrupted once the first kernel is in the database.
DB=$WORK/tuning.yaml
"$CONVGEN" tune "$SPEC" --db "$DB" --budget-s 4 >"$WORK/2.log" 2>&1 &
PID=$!
for _ in $(seq 1 600); do
    grep -q "kernel:" "$DB" 2>/dev/null && break
    sleep 0.1
done
kill -INT "$PID"
wait "$PID"
RC=$?
cat "$WORK/2.log"
[[ $RC -eq 130 ]] || fail "an interrupted run exits 130, got $RC"
FIRST=$(grep -c "kernel:" "$DB")
[[ $FIRST -ge 1 && $FIRST -lt 3 ]] || fail "expected 1 or 2 finished kernels in the database, found $FIRST"
"$CONVGEN" check "$SPEC" --tuning "$DB" >/dev/null || fail "the interrupted run's database does not parse"
compgen -G "$(dirname "$DB")/.convgen-tmp-*" >/dev/null && fail "a temporary database was left behind"

# 3. The same command goes on.
"$CONVGEN" tune "$SPEC" --db "$DB" --budget-s 4 >"$WORK/3.log" 2>&1 || { cat "$WORK/3.log"; fail "the resumed run"; }
cat "$WORK/3.log"
[[ $(grep -c "^kept " "$WORK/3.log") -eq $FIRST ]] || fail "the resumed run should keep the $FIRST finished kernel(s)"
[[ $(grep -c "kernel:" "$DB") -eq 3 ]] || fail "the database should hold 3 kernels"

# 4. The build applies it.
"$CONVGEN" list "$SPEC" --tuning "$DB" >"$WORK/list.txt" || fail "list --tuning"
cat "$WORK/list.txt"
[[ $(grep -c " tuned [0-9.]*x " "$WORK/list.txt") -eq 3 ]] || fail "every kernel's origin should be 'tuned'"
"$CONVGEN" generate "$SPEC" --tuning "$DB" --out "$WORK/gen" -q || fail "generate --tuning"
grep -l "^// Schedule (tuned on " "$WORK"/gen/*.cu | wc -l | grep -qx 3 || fail "kernel headers should say 'Schedule (tuned on ...'"

# 5. An entry edited by hand: every reader refuses it; tune drops it, tunes
#    that kernel again and signs only what it measured.
python3 - "$DB" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
text, n = re.subn(r"(\n    time_us: )([0-9.]+)", lambda m: m.group(1) + "0.001", text, count=1)
assert n == 1, "no time_us to edit"
open(path, "w").write(text)
PY
"$CONVGEN" check "$SPEC" --tuning "$DB" >"$WORK/check5.log" 2>&1 && fail "check accepted an edited entry"
grep -q "checksum" "$WORK/check5.log" || { cat "$WORK/check5.log"; fail "the refusal should name the checksum"; }
"$CONVGEN" tune "$SPEC" --db "$DB" --budget-s 4 >"$WORK/5.log" 2>&1 || { cat "$WORK/5.log"; fail "tune over an edited entry"; }
cat "$WORK/5.log"
[[ $(grep -c "^dropped .*checksum fails" "$WORK/5.log") -eq 1 ]] || fail "tune should drop the edited entry, with a line"
[[ $(grep -c "^kept " "$WORK/5.log") -eq 2 ]] || fail "tune should keep the 2 other kernels"
"$CONVGEN" check "$SPEC" --tuning "$DB" >/dev/null || fail "the database tune rewrote does not verify"
[[ $(grep -c "kernel:" "$DB") -eq 3 ]] || fail "the database should hold 3 kernels again"

# 6. Two tune runs at once into one database, each tuning other kernels:
#    read-merge-write under the folder's lock keeps both runs' entries.
DB2=$WORK/concurrent.yaml
"$CONVGEN" tune "$SPEC" --kernels dw_ --db "$DB2" --budget-s 3 >"$WORK/6a.log" 2>&1 &
PID_A=$!
"$CONVGEN" tune "$SPEC" --kernels conv_ --db "$DB2" --budget-s 3 >"$WORK/6b.log" 2>&1 || { cat "$WORK/6b.log"; fail "concurrent tune b"; }
wait "$PID_A" || { cat "$WORK/6a.log"; fail "concurrent tune a"; }
[[ $(grep -c "kernel:" "$DB2") -eq 3 ]] || { cat "$DB2"; fail "two concurrent tune runs should leave all 3 kernels"; }
"$CONVGEN" check "$SPEC" --tuning "$DB2" >/dev/null || fail "the concurrently written database does not verify"
echo "concurrent tune runs: $(grep -c "kernel:" "$DB2") entries kept"
echo "PASS"
