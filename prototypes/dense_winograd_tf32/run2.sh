#!/bin/bash
# Builds and runs the dense2 prototypes on the GPU machine: OUT=dir bash prototypes/dense_winograd_tf32/run2.sh [ROW-REGEX]
set -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/dense2_out}; mkdir -p "$OUT"
B=${BUILD:-/tmp/dense2_build}; ONLY=${1:-.}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
t0=$(date +%s)
python3 gen2.py $B || exit 1
(cd $B && make -j16 -k > "$OUT/build.log" 2>&1); echo "build rc=$? $(( $(date +%s) - t0 ))s"
(cd $B && grep -H "spill stores" */*.ptxas | grep -v " 0 bytes spill stores" > "$OUT/spills.txt"; grep -H "stack frame" */*.ptxas | grep -v " 0 bytes stack" >> "$OUT/spills.txt"; grep -H "registers" */*.ptxas > "$OUT/regs.txt")
first=1
while read line; do
  name=$(echo "$line" | awk '{for(i=1;i<=NF;i++) if ($i ~ /\/bench$/) print $i}')
  echo "$line" | grep -qE "$ONLY" || continue
  [ -x $B/$name ] || { echo "MISSING $name"; continue; }
  if [ $first = 1 ]; then (cd $B && COPYBW=1 timeout 150 $line); first=0; else (cd $B && timeout 150 $line); fi
  echo "row done $(( $(date +%s) - t0 ))s" >&2
done < $B/rows.txt > "$OUT/results.txt" 2> "$OUT/results.err"
echo "all done $(( $(date +%s) - t0 ))s"
python3 gen2.py summary "$OUT/results.txt" "$OUT/spills.txt" | tee "$OUT/summary.txt"
grep COPYBW "$OUT/results.txt"; grep -v "row done" "$OUT/results.err" | head -c 1500
# opcode histograms of a few kernels (SASS), for the notes
for o in 15_resnet_c128_128_28/w15_2.o 16_resnet_c256_256_14/w16_3.o 15_resnet_c128_128_28/x15_0.o 13_mnv2_c320_1280_7/t13_0.o; do
  echo "== $o"; cuobjdump -sass $B/$o 2>&1 | awk '/\/\*[0-9a-f]+\*\//{for(i=1;i<=NF;i++) if ($i ~ /^\/\*[0-9a-f]+\*\/$/) {op=$(i+1); if (op ~ /^@/) op=$(i+2); sub(/\..*/,"",op); print op; break}}' | sort | uniq -c | sort -rn | head -14 | tr '\n' ' '; echo
done > "$OUT/sass.txt" 2>&1; cat "$OUT/sass.txt" | cut -c1-400
