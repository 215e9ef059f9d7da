#!/usr/bin/env bash
# Compiles every rows kernel that writes whole vectors (its source says
# `constexpr bool kVectorStore = true;`, and its header the bytes of a store)
# in the given directories to PTX for sm_90 and checks that its global stores
# all have that width (st.global.v4 / .v2 of 32-bit words, or one 32-bit word
# holding two 2-byte elements): a store the compiler split into narrower ones
# writes each vector as partial sectors, and costs several store instructions.
# Needs nvcc only, no GPU.
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
    grep -q '^constexpr bool kVectorStore = true;' "$f" || continue
    bytes=$(sed -n 's/.* in one \([0-9]*\)-byte store\.$/\1/p' "$f" | head -n 1)
    case $bytes in
      16) width='\.v4\.[bfu]32|\.v2\.[bfu]64' ;;
      8) width='\.v2\.[bfu]32|\.[bu]64' ;;
      4) width='\.[bfu]32|\.v2\.[bfu]16' ;;
      *)
        echo "FAIL: $(basename "$f") declares vector stores but names no 4-, 8- or 16-byte store" >&2
        failed=$((failed + 1))
        continue
        ;;
    esac
    ptx="$work/$(basename "$f" .cu).ptx"
    if ! "$nvcc" -arch=sm_90 -I"$runtime_include" -ptx "$f" -o "$ptx" 2>"$work/log"; then
      echo "FAIL: $f does not compile:" >&2
      cat "$work/log" >&2
      failed=$((failed + 1))
      continue
    fi
    checked=$((checked + 1))
    stores=$(grep -cE 'st\.global' "$ptx")
    whole=$(grep -cE "st\\.global(\\.[a-z]+)*($width)\\b" "$ptx")
    if (( whole == 0 || whole != stores )); then
      echo "FAIL: $(basename "$f"): $whole of $stores global stores in its PTX are whole $bytes-byte vectors" >&2
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
