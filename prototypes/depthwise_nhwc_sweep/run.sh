#!/usr/bin/env bash
# run.sh BUILD_DIR OUT_DIR: a sweep of VARIANTS from $DW_VARIANTS (default variants.sh, the sweep of
# results/h200_f32_nhwc_sweep.txt; variants_h200_half.sh, that of results/h200_half_sweep.txt: the
# half-type rows under 0.95 of a copy on the H200, which also sets the rows, dtype and cuDNN check it
# needs). BUILD_DIR is a convgen build configured with -DCONVGEN_BUILD_BENCH=ON -DCONVGEN_BENCH_DENSE=OFF -DCONVGEN_BENCH_TUNING=OFF
# (each variant rebuilds the one depthwise benchmark library); the default rule unforced ("head")
# runs first and again last ("head2": run-to-run noise).
set -u
if [[ $# -ne 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,/^set/p' "$0" | grep -v '^set' | sed 's/^# \{0,1\}//'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/${DW_VARIANTS:-variants.sh}"
bash "$here/dwsweep.sh" "$1" "$2" "${VARIANTS[@]}" head2 2>&1 | tee "$2/sweep.txt"
