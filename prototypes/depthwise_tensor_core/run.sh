#!/usr/bin/env bash
# Builds dw_mma for sm_90 and runs every row and tile; the log goes to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$here/dw_mma" "$here/dw_mma.cu"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader || true
"$here/dw_mma"
