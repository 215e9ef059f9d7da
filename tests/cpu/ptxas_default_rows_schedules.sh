#!/usr/bin/env bash
# Generates the kernels of a spec with their default schedules and checks, with
# ptxas_no_local_memory.sh, that every one the default rule gave the rows
# algorithm compiles with no stack frame and no spills: the rule's register
# bound holds. Needs nvcc only, no GPU.
#
# usage: ptxas_default_rows_schedules.sh CONVGEN NVCC SPEC
set -euo pipefail

if (( $# != 3 )); then
  echo "usage: $0 CONVGEN NVCC SPEC" >&2
  exit 2
fi
convgen=$1 nvcc=$2 spec=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$convgen" generate "$spec" --out "$work" --quiet
# Only the rows kernels: the tiles ones are not bounded by this rule.
grep -L '^// Schedule: rows:' "$work"/dw_*.cu | xargs -r rm --
rows=$(find "$work" -name 'dw_*.cu' | wc -l)
echo "$rows kernels of $spec have the rows algorithm by default"
if (( rows == 0 )); then
  echo "FAIL: no rows kernels to check" >&2
  exit 1
fi
bash "$here/ptxas_no_local_memory.sh" "$nvcc" "$work"
