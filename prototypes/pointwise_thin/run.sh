#!/usr/bin/env bash
# Device: builds and runs the thin pointwise prototype, then cuDNN on the same shapes.
set -u
cd "$(dirname "$0")"
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o /tmp/pw pw.cu 2> /tmp/ptxas.txt || { tail -30 /tmp/ptxas.txt; exit 1; }
grep -E "spill|Used" /tmp/ptxas.txt | sort | uniq -c | sort -rn | head -8
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
/tmp/pw 2>&1 | tee ${OUT:-/tmp}/pw.txt
python3 pw_torch.py 2>&1 | tee ${OUT:-/tmp}/pw_torch.txt
