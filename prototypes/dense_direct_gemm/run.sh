#!/bin/bash
# Builds and runs the dense conv prototype sweep on the GPU machine.
#   OUT=dir bash prototypes/dense_direct_gemm/run.sh [MAXN] [ROW-REGEX]
# Phase 1: every dense.csv row (and tests.csv with TESTS=1), MAXN schedules each,
#          row's epilogue, checked + timed, cuDNN beside.
# Phase 2: the best schedule of each row in 3 modes (plain, epilogue, epilogue+residual).
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/dense_out}; mkdir -p "$OUT"
B=${BUILD:-/tmp/dense_build}
MAXN=${1:-20}; ONLY=${2:-.}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
t0=$(date +%s)
python3 gen.py sweep $B/sweep $MAXN "$ONLY" || exit 1
(cd $B/sweep && make -j16 -k > "$OUT/build_sweep.log" 2>&1); echo "build rc=$? $(( $(date +%s) - t0 ))s"
(cd $B/sweep && grep -H "spill stores" */*.ptxas | grep -v " 0 bytes spill stores" > "$OUT/spills.txt"; grep -H "stack frame" */*.ptxas | grep -v " 0 bytes stack" >> "$OUT/spills.txt"; grep -H "registers" */*.ptxas > "$OUT/regs.txt")
echo "spilling variants: $(wc -l < "$OUT/spills.txt")"
first=1
while read name args; do
  [ -x $B/sweep/$name/bench ] || { echo "MISSING $name"; continue; }
  if [ $first = 1 ]; then COPYBW=1 timeout 120 $B/sweep/$name/bench $args; first=0; else timeout 120 $B/sweep/$name/bench $args; fi
done < $B/sweep/rows.txt > "$OUT/sweep.txt" 2> "$OUT/sweep.err"
echo "sweep done $(( $(date +%s) - t0 ))s"
python3 gen.py fused $B/fused "$OUT/sweep.txt" "$OUT/spills.txt"
(cd $B/fused && make -j16 -k > "$OUT/build_fused.log" 2>&1); echo "fused build rc=$?"
while read name args; do
  [ -x $B/fused/$name/bench ] && NO_CUDNN=1 timeout 60 $B/fused/$name/bench $args
done < $B/fused/rows.txt > "$OUT/fused.txt" 2> "$OUT/fused.err"
echo "all done $(( $(date +%s) - t0 ))s"
python3 gen.py summary "$OUT/sweep.txt" "$OUT/fused.txt" "$OUT/spills.txt" | tee "$OUT/summary.txt"
grep COPYBW "$OUT/sweep.txt"; grep -c "ok=0" "$OUT/sweep.txt"; head -c 1500 "$OUT/sweep.err"
cd "$OUT" && tar czf logs.tgz sweep.txt sweep.err fused.txt fused.err build_sweep.log build_fused.log spills.txt regs.txt gpu.txt && rm -f sweep.txt sweep.err fused.txt fused.err build_sweep.log build_fused.log spills.txt regs.txt gpu.txt
