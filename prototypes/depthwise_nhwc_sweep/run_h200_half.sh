#!/usr/bin/env bash
# run_h200_half.sh BUILD_DIR OUT_DIR: the sweep of variants_h200_half.sh (prepared, not yet run) on the
# six half-type MobileNetV2 rows of rows_h200_half.csv. BUILD_DIR is configured as for run.sh
# (-DCONVGEN_BUILD_BENCH=ON -DCONVGEN_BENCH_DENSE=OFF -DCONVGEN_BENCH_TUNING=OFF). The benchmark runs
# with cuDNN, which checks every row's output; float16's schedules are listed (bfloat16 gets the same).
# "head" runs first and "head2" last: the run-to-run noise.
set -u
if [[ $# -ne 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/variants_h200_half.sh"
DW_CUDNN=1 DW_DTYPE=float16 DW_ROWS="$here/rows_h200_half.csv" \
  bash "$here/dwsweep.sh" "$1" "$2" "${VARIANTS[@]}" 2>&1 | tee "$2/sweep.txt"
