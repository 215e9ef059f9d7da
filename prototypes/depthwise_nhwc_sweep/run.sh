#!/usr/bin/env bash
# run.sh BUILD_DIR OUT_DIR: the sweep of results/h200_f32_nhwc_sweep.txt. BUILD_DIR is a
# convgen build configured with -DCONVGEN_BUILD_BENCH=ON -DCONVGEN_BENCH_DENSE=OFF
# -DCONVGEN_BENCH_TUNING=OFF (each variant rebuilds the one depthwise benchmark library);
# the default rule unforced ("head") runs first and again last ("head2": run-to-run noise).
set -u
if [[ $# -ne 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/variants.sh"
bash "$here/dwsweep.sh" "$1" "$2" "${VARIANTS[@]}" head2 2>&1 | tee "$2/sweep.txt"
