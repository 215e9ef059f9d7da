#!/usr/bin/env bash
# On a GPU machine: installs convgen from this checkout (the generator, the
# runtime, convgen_add_library), builds the sweep that make.py wrote for the
# rows of $ROWS (rows1 to rows22: run `ROWS=rowsN python3 make.py` first),
# times every variant, then PyTorch's plain and fused conv on the same rows.
# The generator's build dependencies (scripts/install_deps.sh) must be there,
# or in a prefix named by CMAKE_PREFIX_PATH (and OPENSSL_ROOT_DIR) in the
# environment.
#   ROWS=rows2 bash prototypes/schedule_sweep/run.sh OUT_DIR [CUTLASS_INCLUDE_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR [CUTLASS_INCLUDE_DIR]}
cutlass=${2:+-DCONVGEN_CUTLASS_INCLUDE_DIR=$2}
export ROWS=${ROWS:-rows1}
mkdir -p "$out"
cmake -S "$here/../.." -B /tmp/sweep-install -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCONVGEN_RUNTIME_ARCHS=90 \
  -DCONVGEN_BUILD_TESTS=OFF -DCONVGEN_BUILD_SHIPPED=OFF $cutlass > /tmp/sweep-c1.log 2>&1 &&
  ninja -C /tmp/sweep-install > /tmp/sweep-b1.log 2>&1 && cmake --install /tmp/sweep-install --prefix /tmp/sweep-prefix > /dev/null ||
  { tail -n 20 /tmp/sweep-c1.log /tmp/sweep-b1.log; exit 1; }
cmake -S "$here" -B /tmp/sweep-build -G Ninja -DCMAKE_PREFIX_PATH=/tmp/sweep-prefix -DCMAKE_CUDA_ARCHITECTURES=90 $cutlass \
  > /tmp/sweep-c2.log 2>&1 && ninja -C /tmp/sweep-build > /tmp/sweep-b2.log 2>&1 ||
  { tail -n 20 /tmp/sweep-c2.log; grep -m3 -B2 -A12 error /tmp/sweep-b2.log; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/sweep.txt"
/tmp/sweep-build/sweep | tee -a "$out/sweep.txt"
python3 "$here/torch_deep.py" | tee "$out/torch.txt"
