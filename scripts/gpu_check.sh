#!/usr/bin/env bash
# gpu_check.sh BUILD_DIR OUT_DIR
#
# The one entry point run on the GPU machine, from an existing build folder.
# Steps, in order:
#   tests     ctest --test-dir BUILD_DIR -L gpu          -> OUT_DIR/gpu_tests.log
#   sanitize  scripts/sanitize.sh (when it exists)       -> OUT_DIR/sanitize.log
#   bench     convgen_bench_depthwise on bench/depthwise.csv -> OUT_DIR/bench.json
#             (every row in its dtype and layout: float32 NCHW, float16,
#             bfloat16 and float32 NHWC)
#             (a build with a tuning database, CMake CONVGEN_BENCH_TUNING, also
#             times the tuned library: tuned_* keys in each row, which torch,
#             plot and report carry on; a tuned kernel with a wrong result
#             fails the step, its times still written)
#   dense     convgen_bench_dense on bench/dense.csv     -> OUT_DIR/bench.json, key "dense"
#             (its whole JSON document, merged into bench.json; bench.json is
#             created holding only it when the depthwise step left none)
#   torch     bench/torch_compare.py (depthwise and dense rows) -> OUT_DIR/merged.json
#   plot      bench/plot.py                              -> OUT_DIR/benchmarks.png
#   report    bench/report.py                            -> OUT_DIR/benchmarks.md, benchmarks.json
#             (the targets; float32 NCHW compared with the committed
#             docs/benchmarks.json, the previous run, where it ran on the same GPU)
# and OUT_DIR/summary.txt: the step table, then everything printed on the way.
#
# OUT_DIR stays flat and holds at most those 8 files, because only 8 files come
# back from the GPU machine.  Other outputs (the benchmark's CSV, the files the
# sanitizer writes) go to a scratch folder; the sanitizer's files are folded
# into sanitize.log.
#
# A failed step does not stop the later ones; the script exits 1 if any failed.
#
# Environment:
#   SKIP_TESTS=1 SKIP_SANITIZE=1 SKIP_BENCH=1 SKIP_DENSE=1 SKIP_TORCH=1 SKIP_PLOT=1
#   SKIP_REPORT=1      skip that step (plot/report then use whatever JSON is in OUT_DIR)
#   STEP_TIMEOUT=S     time limit in seconds for every step (default: none);
#   TIMEOUT_TESTS, TIMEOUT_SANITIZE, TIMEOUT_BENCH, TIMEOUT_DENSE, TIMEOUT_TORCH,
#   TIMEOUT_PLOT, TIMEOUT_REPORT=S   override it for one step
#   BENCH_CSV=path     workload list (default: bench/depthwise.csv)
#   DENSE_CSV=path     dense workload list (default: bench/dense.csv)
#   DENSE_ARGS="..."   extra options for convgen_bench_dense (e.g. "--sgemm-math pedantic")
#   KEEP_BENCH_CSV=1   also write the benchmark's CSV to OUT_DIR/bench.csv (a 9th file)
#   PYTHON=python3     interpreter holding torch, triton and matplotlib
#   CONVGEN_COMMIT     used as is when set; otherwise taken from git, else BUILD_DIR/commit.txt
#
# A benchmark too long to build in one go (every dense row's CUTLASS kernels)
# runs in parts: each part a build of subset CSVs (BENCH_CSV, DENSE_CSV, and
# make_bench_spec.py's specs of them), each with its own OUT_DIR; then
# bench/merge_runs.py puts the parts' merged.json together (same commit and
# GPU model, rows in the CSVs' order) for bench/plot.py and bench/report.py.

set -u
export PYTHONUNBUFFERED=1

usage() {
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

if [[ $# -lt 2 || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    usage
    exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

if [[ ! -d "$1" ]]; then
    echo "gpu_check: build folder '$1' does not exist" >&2
    exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
mkdir -p "$2" || exit 2
OUT_DIR=$(cd "$2" && pwd)

PYTHON=${PYTHON:-python3}
BENCH_CSV=${BENCH_CSV:-bench/depthwise.csv}
BENCH_BIN="$BUILD_DIR/bench/convgen_bench_depthwise"
DENSE_CSV=${DENSE_CSV:-bench/dense.csv}
DENSE_BIN="$BUILD_DIR/bench/convgen_bench_dense"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
CONSOLE="$SCRATCH/console.log"

# Everything printed from here on is also kept for summary.txt.
exec > >(tee "$CONSOLE") 2>&1
TEE_PID=$!

# ---------------------------------------------------------------------------
# Bookkeeping of step results.
# ---------------------------------------------------------------------------
STEP_NAMES=()
STEP_RESULTS=()
STEP_NOTES=()
FAILED=()

record() {  # record NAME pass|FAIL|skip NOTE
    STEP_NAMES+=("$1")
    STEP_RESULTS+=("$2")
    STEP_NOTES+=("$3")
    if [[ "$2" == FAIL ]]; then FAILED+=("$1"); fi
}

banner() {
    echo
    echo "=================================================================="
    echo "== $*"
    echo "=================================================================="
}

# step NAME SKIP_VAR TIMEOUT_VAR FUNCTION: run FUNCTION unless $SKIP_VAR is 1,
# under the step's time limit, and record the outcome.
step() {
    local name=$1 skip_var=$2 timeout_var=$3 fn=$4
    if [[ "${!skip_var:-0}" == 1 ]]; then
        record "$name" skip "$skip_var=1"
        return
    fi
    STEP_LIMIT=${!timeout_var:-${STEP_TIMEOUT:-0}}
    banner "$name"
    STEP_NOTE=""
    local t0=$SECONDS rc=0
    "$fn" || rc=$?
    local note="$((SECONDS - t0))s"
    if [[ $rc -eq 124 || $rc -eq 137 ]] && [[ "$STEP_LIMIT" != 0 ]]; then
        note+=", timed out after ${STEP_LIMIT}s"
    elif [[ $rc -ne 0 ]]; then
        note+=", exit $rc"
    fi
    [[ -n "$STEP_NOTE" ]] && note+=", $STEP_NOTE"
    if [[ $rc -eq 0 ]]; then record "$name" pass "$note"; else record "$name" FAIL "$note"; fi
}

# limited CMD...: run CMD under the current step's time limit (none when 0).
limited() {
    if [[ "${STEP_LIMIT:-0}" != 0 ]] && command -v timeout >/dev/null; then
        timeout --kill-after=15 "$STEP_LIMIT" "$@"
    else
        "$@"
    fi
}

# The JSON plot and report read: merged when torch_compare wrote it, else the raw bench JSON.
results_json() {
    if [[ -s "$OUT_DIR/merged.json" ]]; then
        echo "$OUT_DIR/merged.json"
    elif [[ -s "$OUT_DIR/bench.json" ]]; then
        echo "$OUT_DIR/bench.json"
    fi
}

# ---------------------------------------------------------------------------
# The steps.
# ---------------------------------------------------------------------------
run_tests() {
    # --no-tests=error: a build with no gpu-labelled tests must not pass silently.
    limited ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --no-tests=error 2>&1 \
        | tee "$OUT_DIR/gpu_tests.log"
    return "${PIPESTATUS[0]}"
}

run_sanitize() {
    local script="$ROOT/scripts/sanitize.sh"
    # The sanitizer writes into a scratch folder so that OUT_DIR keeps to 8 files;
    # its console and every text file it wrote end up in sanitize.log.
    local sdir="$SCRATCH/sanitize"
    mkdir -p "$sdir"
    local rc=0
    limited bash "$script" "$BUILD_DIR" "$sdir" 2>&1 | tee "$SCRATCH/sanitize_console.log"
    rc=${PIPESTATUS[0]}
    collect_sanitize_log "$sdir" > "$OUT_DIR/sanitize.log"
    return "$rc"
}

collect_sanitize_log() {  # collect_sanitize_log DIR: console, then each file DIR holds
    local sdir=$1 f
    echo "#### console of scripts/sanitize.sh $BUILD_DIR <dir>"
    cat "$SCRATCH/sanitize_console.log"
    while IFS= read -r f; do
        echo
        echo "#### file ${f#"$sdir"/}"
        if grep -Iq . "$f" 2>/dev/null || [[ ! -s "$f" ]]; then
            head -c 4000000 "$f"   # each well under the 16 MiB a returned file may hold
        else
            echo "(binary, $(wc -c < "$f") bytes, not copied)"
        fi
    done < <(find "$sdir" -type f | sort)
}

run_bench() {
    if [[ ! -x "$BENCH_BIN" ]]; then
        echo "benchmark program not found: $BENCH_BIN"
        STEP_NOTE="no $BENCH_BIN"
        return 1
    fi
    local csv_out="$SCRATCH/bench.csv"
    [[ "${KEEP_BENCH_CSV:-0}" == 1 ]] && csv_out="$OUT_DIR/bench.csv"
    # Results of an earlier run would otherwise be plotted as if they were new.
    rm -f "$OUT_DIR/bench.json" "$OUT_DIR/merged.json"
    limited "$BENCH_BIN" --csv "$BENCH_CSV" --json "$OUT_DIR/bench.json" --csv-out "$csv_out"
    local rc=$?
    if [[ $rc -eq 0 && ! -s "$OUT_DIR/bench.json" ]]; then
        STEP_NOTE="exit 0 but no bench.json"
        return 1
    fi
    if [[ -s "$OUT_DIR/bench.json" ]] && grep -q '"tuning_db"' "$OUT_DIR/bench.json"; then
        STEP_NOTE="tuned library timed too"
    fi
    return "$rc"
}

# with_cuda_libs CMD...: run CMD; when the loader cannot find a library CMD
# needs (libcublas.so.13 where the toolkit is not in the loader's path), add
# the toolkit's library folders to LD_LIBRARY_PATH first.
with_cuda_libs() {
    local bin=$1 dirs="" d nvcc_dir
    if command -v ldd >/dev/null && ldd "$bin" 2>/dev/null | grep -q "not found"; then
        nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
        for d in "$nvcc_dir/../lib64" "$nvcc_dir/../lib" "$nvcc_dir/../targets/x86_64-linux/lib" /usr/local/cuda/lib64 \
                 /usr/local/cuda-13*/lib64 /usr/lib/x86_64-linux-gnu; do
            [[ -d "$d" ]] && dirs+="${dirs:+:}$d"
        done
        echo "some libraries of $bin are not in the loader's path; adding $dirs"
        LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" limited "$@"
        return
    fi
    limited "$@"
}

run_dense() {
    if [[ ! -x "$DENSE_BIN" ]]; then
        echo "dense benchmark program not found: $DENSE_BIN"
        STEP_NOTE="no $DENSE_BIN"
        return 1
    fi
    local json="$SCRATCH/dense.json"
    rm -f "$json" "$OUT_DIR/merged.json"
    # shellcheck disable=SC2086  # DENSE_ARGS is a list of options
    with_cuda_libs "$DENSE_BIN" --csv "$DENSE_CSV" --json "$json" --csv-out "$SCRATCH/dense.csv" ${DENSE_ARGS:-}
    local rc=$?
    if [[ ! -s "$json" ]]; then
        [[ $rc -eq 0 ]] && STEP_NOTE="exit 0 but no dense JSON"
        return 1
    fi
    grep -q '"tuning_db"' "$json" && STEP_NOTE="tuned library timed too"
    # bench.json gets the dense document under "dense"; OUT_DIR keeps its 8 files.
    "$PYTHON" - "$OUT_DIR/bench.json" "$json" <<'PY' || return 1
import json, os, sys
bench_path, dense_path = sys.argv[1], sys.argv[2]
with open(dense_path) as f:
    dense = json.load(f)
bench = {}
if os.path.exists(bench_path) and os.path.getsize(bench_path) > 0:
    with open(bench_path) as f:
        bench = json.load(f)
else:  # no depthwise results: the page and figure still need where and when
    bench = {k: dense.get(k) for k in ("gpu", "date", "commit", "copy_ceiling_tbps")}
    bench["rows"] = []
bench["dense"] = dense
with open(bench_path + ".tmp", "w") as f:
    json.dump(bench, f, indent=2)
    f.write("\n")
os.replace(bench_path + ".tmp", bench_path)
print(f"merged {len(dense.get('rows', []))} dense rows into {bench_path} (key 'dense')")
PY
    return "$rc"
}

run_torch() {
    if [[ ! -s "$OUT_DIR/bench.json" ]]; then
        echo "no $OUT_DIR/bench.json to compare against"
        STEP_NOTE="no bench.json"
        return 1
    fi
    rm -f "$OUT_DIR/merged.json"
    limited "$PYTHON" "$ROOT/bench/torch_compare.py" --json "$OUT_DIR/bench.json" \
        --out "$OUT_DIR/merged.json" --csv "$BENCH_CSV"
}

run_plot() {
    local in
    in=$(results_json)
    if [[ -z "$in" ]]; then
        STEP_NOTE="no merged.json or bench.json"
        return 1
    fi
    [[ "$in" == */bench.json ]] && STEP_NOTE="from bench.json (no PyTorch numbers)"
    limited "$PYTHON" "$ROOT/bench/plot.py" --json "$in" --out "$OUT_DIR/benchmarks.png"
}

run_report() {
    local in
    in=$(results_json)
    if [[ -z "$in" ]]; then
        STEP_NOTE="no merged.json or bench.json"
        return 1
    fi
    [[ "$in" == */bench.json ]] && STEP_NOTE="from bench.json (no PyTorch numbers)"
    limited "$PYTHON" "$ROOT/bench/report.py" --json "$in" --md "$OUT_DIR/benchmarks.md" \
        --out-json "$OUT_DIR/benchmarks.json" --png-name benchmarks.png --baseline "$ROOT/docs/benchmarks.json"
}

# ---------------------------------------------------------------------------
# Main.
# ---------------------------------------------------------------------------
find_commit() {
    local c=""
    if [[ -n "${CONVGEN_COMMIT:-}" ]]; then
        c=$CONVGEN_COMMIT
    elif c=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) && [[ -n "$c" ]]; then
        :
    elif [[ -s "$BUILD_DIR/commit.txt" ]]; then
        c=$(head -n1 "$BUILD_DIR/commit.txt" | tr -d '[:space:]')
    fi
    echo "$c"
}

CONVGEN_COMMIT=$(find_commit)
if [[ -n "$CONVGEN_COMMIT" ]]; then export CONVGEN_COMMIT; else unset CONVGEN_COMMIT; fi

banner "gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "repo:    $ROOT"
echo "build:   $BUILD_DIR"
echo "out:     $OUT_DIR"
echo "scratch: $SCRATCH"
echo "commit:  ${CONVGEN_COMMIT:-unknown}"
nvidia-smi -L || echo "nvidia-smi -L failed"

step tests    SKIP_TESTS    TIMEOUT_TESTS    run_tests
if [[ -f "$ROOT/scripts/sanitize.sh" ]]; then
    step sanitize SKIP_SANITIZE TIMEOUT_SANITIZE run_sanitize
else
    record sanitize skip "scripts/sanitize.sh missing"
fi
step bench    SKIP_BENCH    TIMEOUT_BENCH    run_bench
step dense    SKIP_DENSE    TIMEOUT_DENSE    run_dense
step torch    SKIP_TORCH    TIMEOUT_TORCH    run_torch
step plot     SKIP_PLOT     TIMEOUT_PLOT     run_plot
step report   SKIP_REPORT   TIMEOUT_REPORT   run_report

# The table goes last on the console (only the tail of the output may be seen)
# and first in summary.txt.
TABLE="$SCRATCH/table.txt"
{
    echo "gpu_check summary (commit ${CONVGEN_COMMIT:-unknown}, $(date -u +%Y-%m-%dT%H:%M:%SZ))"
    printf '%-9s %-5s %s\n' step result note
    for i in "${!STEP_NAMES[@]}"; do
        printf '%-9s %-5s %s\n' "${STEP_NAMES[$i]}" "${STEP_RESULTS[$i]}" "${STEP_NOTES[$i]}"
    done
    if [[ ${#FAILED[@]} -eq 0 ]]; then
        echo "RESULT: all steps passed or were skipped"
    else
        echo "RESULT: FAILED: ${FAILED[*]}"
    fi
    # summary.txt is written after this count, so count it too.
    n_files=$(find "$OUT_DIR" -mindepth 1 -maxdepth 1 ! -name summary.txt | wc -l)
    n_files=$((n_files + 1))
    echo "files in $OUT_DIR (with summary.txt): $n_files"
    if [[ $n_files -gt 8 ]]; then
        echo "WARNING: more than 8 files in $OUT_DIR; only 8 come back"
    fi
} > "$TABLE"
banner "summary"
ls -la "$OUT_DIR"
echo
cat "$TABLE"

# Close the tee so the console log is complete before it is copied.
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null || sleep 1
{
    cat "$TABLE"
    echo
    echo "#################### full console ####################"
    cat "$CONSOLE"
} > "$OUT_DIR/summary.txt"

[[ ${#FAILED[@]} -eq 0 ]]
