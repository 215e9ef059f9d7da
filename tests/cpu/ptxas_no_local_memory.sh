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
compile() {  # kernel index
  local f=${kernels[$1]}
  "$nvcc" -arch=sm_90 -I"$runtime_include" -Xptxas -v -cubin "$f" -o "$work/$1.cubin" >"$work/$1.log" 2>&1
  echo $? >"$work/$1.rc"
}

jobs_max=$(nproc 2>/dev/null || echo 2)
for i in "${!kernels[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
  compile "$i" &
done
wait

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
  clean=$(grep -c "$expected" "$log")
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

echo "$(( ${#kernels[@]} - failed )) of ${#kernels[@]} kernels use no local memory"
(( failed == 0 ))
