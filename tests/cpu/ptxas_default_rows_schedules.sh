#!/usr/bin/env bash
# Generates the kernels of a spec with their default schedules and checks, with
# ptxas_no_local_memory.sh, that every one with the given algorithm (default
# rows; several as an alternation, e.g. 'tiles|planes') compiles with no stack
# frame and no spills: the algorithm's register bound holds. Needs nvcc only,
# no GPU.
#
# usage: ptxas_default_rows_schedules.sh CONVGEN NVCC SPEC [ALGORITHM]
set -euo pipefail

if (( $# != 3 && $# != 4 )); then
  echo "usage: $0 CONVGEN NVCC SPEC [ALGORITHM]" >&2
  exit 2
fi
convgen=$1 nvcc=$2 spec=$3 algorithm=${4:-rows}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$convgen" generate "$spec" --out "$work" --quiet
# Only that algorithm's kernels: the others are not bounded by its rule.
# The header line is "// Schedule (<origin>): <algorithm>: <knobs>"; the
# origin may hold a colon (tuned on <gpu>: ...), so match up to "): ".
shopt -s nullglob
grep -L -E "^// Schedule \(.*\): ($algorithm):" "$work"/dw_*.cu "$work"/conv_*.cu | xargs -r rm --
rows=$(find "$work" -name 'dw_*.cu' -o -name 'conv_*.cu' | wc -l)
echo "$rows kernels of $spec have the $algorithm algorithm"
if (( rows == 0 )); then
  echo "FAIL: no $algorithm kernels to check" >&2
  exit 1
fi
bash "$here/ptxas_no_local_memory.sh" "$nvcc" "$work"
