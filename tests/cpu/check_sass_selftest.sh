#!/usr/bin/env bash
# check_sass_selftest: scripts/check_sass.py finds what it is for, on
# kernels made to have it (check_sass_selftest.cu), in a fat binary for an
# arch without cp.async (sm_75) and one with (sm_90). Needs nvcc, no GPU.
#   - a loop over memory and local memory fail, a clean kernel passes;
#   - --designed-loops, or a stem kernel's generated source in --sources,
#     allows the loop but not local memory;
#   - every kernel is read for every arch of the binary.
#
#   check_sass_selftest.sh NVCC SCRATCH_DIR
set -uo pipefail
if (( $# != 2 )); then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
nvcc=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
check_sass=$here/../../scripts/check_sass.py
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$scratch"
mkdir -p "$scratch/sources"
"$nvcc" -fatbin -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
  -o "$scratch/selftest.fatbin" "$here/check_sass_selftest.cu" || fail "nvcc failed"

# expect STATUS PATTERN... -- ARGS...: check_sass.py ARGS exits STATUS and
# prints a line matching each PATTERN.
expect() {
  local status=$1 patterns=() out rc
  shift
  while [[ $1 != -- ]]; do patterns+=("$1"); shift; done
  shift
  out=$(python3 "$check_sass" "$@" 2>&1)
  rc=$?
  echo "$out"
  (( rc == status )) || fail "check_sass.py $* exited $rc, not $status"
  for p in "${patterns[@]}"; do
    grep -qE "$p" <<<"$out" || fail "check_sass.py $* printed no line matching: $p"
  done
}

echo "== the kernels as they are"
expect 1 '^FAIL conv_looping_kernel' 'backward branch \(loop\)' '^FAIL local_memory_kernel' 'local memory at' \
  '^ok   clean_kernel' '^6 kernels checked, 4 with local memory or loops$' -- "$scratch/selftest.fatbin"
echo "== the loop by design (--designed-loops)"
expect 1 '^ok   conv_looping_kernel' '^FAIL local_memory_kernel' '^6 kernels checked, 2 with' \
  -- "$scratch/selftest.fatbin" --designed-loops conv_looping_kernel
echo "== the loop by design (a stem kernel's generated source)"
printf '// Schedule (default): stem: block_outputs 32x4x112\n' > "$scratch/sources/conv_looping_kernel.cu"
expect 1 '^ok   conv_looping_kernel' '^FAIL local_memory_kernel' '^6 kernels checked, 2 with' \
  -- "$scratch/selftest.fatbin" --sources "$scratch/sources"
rm -rf "$scratch"
echo "PASS"
