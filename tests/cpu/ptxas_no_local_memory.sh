#!/usr/bin/env bash
# Compiles every kernel (dw_*.cu, conv_*.cu) in the given directories for sm_90 with
# `ptxas -v` and checks that each function reports
#   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
# i.e. no local memory: every accumulator, tap and index stays in registers.
# Needs nvcc only, no GPU.
#
# usage: ptxas_no_local_memory.sh NVCC DIR...
set -uo pipefail

if (( $# < 2 )); then
  echo "usage: $0 NVCC DIR..." >&2
  exit 2
fi
nvcc=$1
shift
# The kernels include convgen/epilogue.h, as a library build finds it.
runtime_include="$(cd "$(dirname "$0")/../.." && pwd)/runtime/include"

kernels=()
for dir in "$@"; do
  if [[ ! -d $dir ]]; then
    echo "FAIL: no directory $dir" >&2
    exit 1
  fi
  for f in "$dir"/dw_*.cu "$dir"/conv_*.cu; do
    [[ -e $f ]] && kernels+=("$f")
  done
done
if (( ${#kernels[@]} == 0 )); then
  echo "FAIL: no kernels (dw_*.cu, conv_*.cu) in $*" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Device code only (-cubin): ptxas's report is all this check reads, and the
# host side of each file would add about 70% to its compile time.
#
# The kernels compile in a few batches, one translation unit each
# (tests/kernel_batches.sh); ptxas's report names a kernel's namespace,
# kernel_<i>_, in every function it compiled for it. ptxas compiles every
# function on its own: the registers and local memory it reports are those
# of a lone compile. A batch that does not compile is compiled again a
# kernel at a time, to say which one fails.
source "$(dirname "$0")/../kernel_batches.sh"
jobs_max=$(nproc 2>/dev/null || echo 2)
mapfile -t batch_files < <(write_kernel_batches "$work" "$jobs_max" "${kernels[@]}")
batches=${#batch_files[@]}

compile() {  # SOURCE OUTPUT_STEM: the cubin, ptxas's report and nvcc's status
  "$nvcc" -arch=sm_90 -I"$runtime_include" -Xptxas -v -cubin "$1" -o "$2.cubin" >"$2.log" 2>&1
  echo $? >"$2.rc"
}

for ((b = 0; b < batches; b++)); do
  compile "$work/batch_$b.cu" "$work/batch_$b" &
done
wait
for ((b = 0; b < batches; b++)); do
  rc=$(cat "$work/batch_$b.rc" 2>/dev/null || echo missing)
  if [[ $rc == 0 ]]; then
    # Each kernel's share of the batch's report: the functions whose names
    # hold its namespace (a report is "Function properties for NAME", then
    # the local memory line, then "Used N registers").
    for ((i = b; i < ${#kernels[@]}; i += batches)); do
      awk -v ns="kernel_${i}_" '
        /Function properties for / { mine = index($0, ns) > 0 }
        /Compiling entry function/ { mine = index($0, ns) > 0 }
        mine' "$work/batch_$b.log" >"$work/$i.log"
      echo 0 >"$work/$i.rc"
    done
  else
    for ((i = b; i < ${#kernels[@]}; i += batches)); do
      while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
      compile "${kernels[$i]}" "$work/$i" &
    done
    wait
  fi
done

failed=0
expected='0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads'
for i in "${!kernels[@]}"; do
  f=${kernels[$i]}
  name=$(basename "$f")
  log=$work/$i.log
  rc=$(cat "$work/$i.rc" 2>/dev/null || echo missing)
  if [[ $rc != 0 ]]; then
    echo "FAIL $name: nvcc exited with $rc"
    cat "$log"
    failed=$((failed + 1))
    continue
  fi
  functions=$(grep -c 'Function properties for' "$log")
  clean=$(grep -A1 'Function properties for' "$log" | grep -c "$expected")
  if (( functions == 0 )); then
    echo "FAIL $name: ptxas printed no function properties"
    cat "$log"
    failed=$((failed + 1))
  elif (( clean != functions )); then
    echo "FAIL $name: $((functions - clean)) of $functions function(s) use local memory"
    grep -A1 'Function properties for' "$log" | grep -v -- "$expected" | grep -v '^--$'
    failed=$((failed + 1))
  else
    echo "ok   $name: $(grep -m1 'Used [0-9]* registers' "$log" | sed 's/.*: //')"
  fi
done
# A function of a batch that belongs to no kernel (a helper outside the
# kernels' namespaces) is checked too.
for ((b = 0; b < batches; b++)); do
  [[ $(cat "$work/batch_$b.rc" 2>/dev/null) == 0 ]] || continue
  stray=$(awk '/Function properties for / { name = $NF; getline; if (name !~ /kernel_[0-9]+_/ && $0 !~ /0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads/) print name ": " $0 }' "$work/batch_$b.log")
  if [[ -n $stray ]]; then
    echo "FAIL: functions outside every kernel use local memory:"
    echo "$stray"
    failed=$((failed + 1))
  fi
done

echo "$(( ${#kernels[@]} - failed )) of ${#kernels[@]} kernels use no local memory"
(( failed == 0 ))
