#!/usr/bin/env bash
# run.sh BENCH_BINARY OUT_DIR: the ResNet, ResNet-34 and deep rows of
# bench/dense.csv (3x3 stride 1), non-fused Winograd F(4x4) beside cuDNN.
set -u
here=$(dirname "$0")
rows="32,64,64,56 32,128,128,28 32,256,256,14 32,512,512,7 8,64,64,56 8,128,128,28 8,256,256,14 8,512,512,7 1,1024,1024,7 1,384,384,13"
for r in $rows; do "$1" ${r//,/ }; done | tee "$2/winograd_nonfused.txt"
python3 "$here/torch_baseline.py" $rows | tee "$2/cudnn.txt"
