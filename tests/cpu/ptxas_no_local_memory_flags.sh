#!/usr/bin/env bash
# The flags convgen_add_library(... NO_LOCAL_MEMORY) compiles with fail a
# kernel that uses local memory (a 1 KiB array indexed at run time: a stack
# frame) and pass the same kernel with its array in registers. Needs nvcc
# only, no GPU.
#
# usage: ptxas_no_local_memory_flags.sh NVCC FLAGS
set -uo pipefail
if (( $# != 2 )); then
  echo "usage: $0 NVCC FLAGS" >&2
  exit 2
fi
nvcc=$1 flags=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# INDEX picks the element each thread writes back: a run-time index keeps
# the array in local memory, a constant one lets it live in registers.
kernel() {  # kernel INDEX
  cat <<CUDA
__global__ void staged(const float* in, float* out, int k) {
  float a[256];
#pragma unroll
  for (int j = 0; j < 256; ++j) a[j] = in[j * k];
  for (int j = 0; j < 8; ++j) out[j] = a[$1];
}
CUDA
}
kernel '(k * j) & 255' >"$work/local.cu"
kernel 'j' >"$work/registers.cu"

for arch in sm_75 sm_90; do
  if "$nvcc" -arch="$arch" $flags -cubin "$work/local.cu" -o "$work/local.cubin" >"$work/local.log" 2>&1; then
    echo "FAIL: $arch: a kernel with a stack frame compiled with $flags"
    exit 1
  fi
  grep -q "Local memory used" "$work/local.log" ||
    { echo "FAIL: $arch: the failure names no local memory:"; cat "$work/local.log"; exit 1; }
  "$nvcc" -arch="$arch" $flags -cubin "$work/registers.cu" -o "$work/registers.cubin" >"$work/registers.log" 2>&1 ||
    { echo "FAIL: $arch: a kernel without local memory failed with $flags:"; cat "$work/registers.log"; exit 1; }
  echo "ok: $arch: $flags fails a stack frame ($(grep -o 'Local memory used.*' "$work/local.log" | head -1)), passes registers"
done
