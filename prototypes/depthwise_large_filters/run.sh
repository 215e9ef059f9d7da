#!/bin/bash
# Build every variant of gen.py on the GPU machine, check and time each. OUT=dir bash prototypes/depthwise_large_filters/run.sh [REGEX]
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/dwl_out}; mkdir -p "$OUT"; B=/tmp/dwl_build; mkdir -p $B
ONLY=${1:-.}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
t0=$(date +%s)
python3 gen.py | grep -E "$ONLY" > $B/jobs.txt
while read v row n cp defs; do echo "nvcc -arch=sm_90 -O3 -Xptxas -v -o $B/$v bench.cu $defs > $B/$v.log 2>&1 || echo BUILDFAIL $v"; done < $B/jobs.txt > $B/cmds.sh
cat $B/cmds.sh | xargs -P 16 -I{} sh -c "{}"
echo "build $(( $(date +%s) - t0 ))s"
for f in $B/*.log; do v=$(basename $f .log); echo "$v $(grep -A2 dwlarge_kernel $f | grep -o 'Used [0-9]* registers') $(grep -A2 dwlarge_kernel $f | grep -o '[0-9]* bytes spill stores') $(grep -A2 dwlarge_kernel $f | grep -o '[0-9]* bytes stack frame')"; done > "$OUT/ptxas.txt"
while read v row n cp defs; do
  [ -x $B/$v ] || { echo "MISSING $v"; continue; }
  echo "VARIANT $v $(grep "^$v " $OUT/ptxas.txt | cut -d' ' -f2-)"
  timeout 60 $B/$v $row $n $cp || echo "FAILED rc=$? $v"
done < $B/jobs.txt > "$OUT/results.txt" 2>&1
echo "runs $(( $(date +%s) - t0 ))s"
if [ "${TORCH:-1}" = 1 ]; then timeout 120 python3 torch_ref.py > "$OUT/torch.txt" 2>&1; else cp ${TORCH_FILE:-results/run1/torch.txt} "$OUT/torch.txt"; fi
for v in $NCU; do
  args=$(grep "^$v " $B/jobs.txt | cut -d' ' -f2,3)
  timeout 90 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis -k regex:dwlarge --launch-count 1 $B/$v $args 0 1 > "$OUT/ncu_$v.txt" 2>&1
  cuobjdump -sass $B/$v | grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+[A-Z0-9_.]+" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 > "$OUT/sass_$v.txt"
done
echo "ncu $(( $(date +%s) - t0 ))s"
echo "all $(( $(date +%s) - t0 ))s"
python3 summarize.py "$OUT/results.txt" "$OUT/torch.txt" > "$OUT/summary.txt"
python3 summarize.py "$OUT/results.txt" "$OUT/torch.txt" best
cd "$OUT" && tar czf extra.tgz ncu_* sass_* gpu.txt ptxas.txt 2>/dev/null && rm -f ncu_* sass_* gpu.txt ptxas.txt; ls "$OUT"
