#!/usr/bin/env bash
# Compiles every rows kernel that writes whole vectors (its source declares
# `using OutputVector`) in the given directories to PTX for sm_90 and checks
# that its global stores are all vector stores (st.global.v2 / .v4): a store
# the compiler split into scalars writes each 16-byte vector as 4 partial
# sectors, and costs 4 store instructions. Needs nvcc only, no GPU.
#
# usage: ptx_vector_stores.sh NVCC DIR...
set -uo pipefail

if (( $# < 2 )); then
  echo "usage: $0 NVCC DIR..." >&2
  exit 2
fi
nvcc=$1
shift
# The kernels include convgen/epilogue.h, as a library build finds it.
runtime_include="$(cd "$(dirname "$0")/../.." && pwd)/runtime/include"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

checked=0
failed=0
for dir in "$@"; do
  for f in "$dir"/dw_*.cu; do
    [[ -e $f ]] || continue
    grep -q '^using OutputVector' "$f" || continue
    ptx="$work/$(basename "$f" .cu).ptx"
    if ! "$nvcc" -arch=sm_90 -I"$runtime_include" -ptx "$f" -o "$ptx" 2>"$work/log"; then
      echo "FAIL: $f does not compile:" >&2
      cat "$work/log" >&2
      failed=$((failed + 1))
      continue
    fi
    checked=$((checked + 1))
    vector=$(grep -cE 'st\.global(\.[a-z]+)*\.v[24]\.f32' "$ptx")
    scalar=$(grep -cE 'st\.global(\.[a-z]+)*\.f32' "$ptx")
    if (( vector == 0 || scalar > 0 )); then
      echo "FAIL: $(basename "$f"): $vector vector and $scalar scalar global stores in its PTX" >&2
      failed=$((failed + 1))
    fi
  done
done
if (( checked == 0 && failed == 0 )); then
  echo "FAIL: no kernel with vector stores in $*" >&2
  exit 1
fi
echo "$checked kernel(s) with vector stores checked, $failed failed"
(( failed == 0 ))
