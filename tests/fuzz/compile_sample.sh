#!/usr/bin/env bash
# Valid-but-extreme specs the fuzzer found must produce CUDA that compiles:
# takes every input of CORPUS_DIR... that `convgen check` accepts, generates
# it, and compiles a seeded random sample of COUNT kernels with nvcc (no GPU
# needed), as the build would.
#   tests/fuzz/compile_sample.sh CONVGEN NVCC COUNT CORPUS_DIR...
# Prints one line per compiled kernel and a summary; exits 1 if any fails.
set -euo pipefail
if [[ $# -lt 4 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 4 ]] && exit 0 || exit 2
fi
convgen=$1 nvcc=$2 count=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
valid=0 inputs=0
for dir in "$@"; do
  for spec in "$dir"/*; do
    [[ -f $spec ]] || continue
    inputs=$((inputs + 1))
    out="$scratch/$(basename "$spec")"
    if "$convgen" generate "$spec" --name fuzz --templates "$root/templates" --out "$out" > /dev/null 2>&1; then
      valid=$((valid + 1))
    else
      rm -rf "$out"
    fi
  done
done
mapfile -t kernels < <(find "$scratch" -name '*.cu' ! -name '*_registry.cu' | sort)
echo "compile_sample: $inputs inputs, $valid valid, ${#kernels[@]} kernels; compiling $count of them"
mapfile -t sample < <(printf '%s\n' "${kernels[@]}" | shuf -n "$count" --random-source=<(yes))
failed=0
for cu in "${sample[@]}"; do
  if "$nvcc" -std=c++17 -arch=sm_90 -O3 -I "$(dirname "$cu")" -I "$root/runtime/include" -c "$cu" \
       -o "$scratch/k.o" 2> "$scratch/err.txt"; then
    echo "ok      $(basename "$cu")"
  else
    echo "FAILED  $cu"; head -20 "$scratch/err.txt"
    failed=$((failed + 1))
  fi
done
echo "compile_sample: ${#sample[@]} compiled, $failed failed"
[[ $failed == 0 ]]
